// Linked into every host and course library: the CUDA runtime state of the library itself
// (nvcc links cudart statically), so its launch and asynchronous errors are read where they happened.
#include <cuda_runtime.h>

extern "C" int profconv_sync(void) {
    cudaError_t err = cudaDeviceSynchronize();
    cudaError_t last = cudaGetLastError();
    return (int)(err != cudaSuccess ? err : last);
}

extern "C" const char* profconv_error_name(int err) { return cudaGetErrorName((cudaError_t)err); }

extern "C" const char* profconv_error_string(int err) { return cudaGetErrorString((cudaError_t)err); }
