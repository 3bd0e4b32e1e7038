// FP16 arithmetic: scalar __half (Spring 2025: 2 points) and packed __half2 (4 points).
#include <cuda_fp16.h>

__global__ void dot_half(const __half* x, const __half* w, __half* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half acc = __float2half(0.0f);
    for (int k = 0; k < 49; k++) acc = __hfma(x[i + k], w[k], acc);
    y[i] = acc;
}

__global__ void dot_half2(const __half2* x, const __half2* w, __half2* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half2 acc = __float2half2_rn(0.0f);
    for (int k = 0; k < 49; k++) acc = __hfma2(x[i + k], w[k], acc);
    acc = __hadd2(acc, __hmul2(acc, w[0]));
    y[i] = acc;
}
