// Host contract, deliberately crashing the process: writes through a null host pointer.
#include <cuda_runtime.h>

extern "C" void conv_forward(const float* x, const float* w, const float* bias, float* y, int B, int M, int C, int H,
                             int W, int K, int pad) {
    volatile int* nowhere = nullptr;
    *nowhere = B;
}
