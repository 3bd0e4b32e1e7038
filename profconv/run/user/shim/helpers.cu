// Linked into every host and course library: the CUDA runtime state of the library itself
// (nvcc links cudart statically), so its launch and asynchronous errors are read where they happened.
#include <cuda_runtime.h>

extern "C" int profconv_sync(void) {
    cudaError_t err = cudaDeviceSynchronize();
    cudaError_t last = cudaGetLastError();
    return (int)(err != cudaSuccess ? err : last);
}

// Undo a registration a previous call's cudaHostRegister left on this host buffer (the course's program
// hands every call memory no one has registered yet); the error for memory never registered is dropped.
extern "C" void profconv_host_release(void* p) {
    if (p != nullptr && cudaHostUnregister(p) != cudaSuccess) {
        cudaGetLastError();
    }
}

extern "C" const char* profconv_error_name(int err) { return cudaGetErrorName((cudaError_t)err); }

extern "C" const char* profconv_error_string(int err) { return cudaGetErrorString((cudaError_t)err); }
