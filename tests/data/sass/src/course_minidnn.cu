// A course-form file (mini-dnn GPUInterface) of our own: a naive kernel, launched from conv_forward_gpu.
#include <cuda_runtime.h>

__global__ void conv_forward_kernel(float* y, const float* x, const float* k, int B, int M, int C, int H, int W, int K) {
    int Ho = H - K + 1, Wo = W - K + 1;
    int b = blockIdx.z, m = blockIdx.y, p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= Ho * Wo) return;
    int h = p / Wo, w = p % Wo;
    float acc = 0.0f;
    for (int c = 0; c < C; c++)
        for (int i = 0; i < K; i++)
            for (int j = 0; j < K; j++)
                acc += x[((b * C + c) * H + h + i) * W + w + j] * k[((m * C + c) * K + i) * K + j];
    y[((b * M + m) * Ho + h) * Wo + w] = acc;
}

extern "C" void conv_forward_gpu(float* y, const float* x, const float* k, int B, int M, int C, int H, int W, int K) {
    int Ho = H - K + 1, Wo = W - K + 1;
    dim3 grid((Ho * Wo + 255) / 256, M, B);
    conv_forward_kernel<<<grid, 256>>>(y, x, k, B, M, C, H, W, K);
}
