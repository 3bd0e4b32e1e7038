// half_prolog: the first half of the batch in the prolog, the rest in conv_forward_gpu (a course-form file written for profconv's attribution tests: mini-dnn, Fall 2020 form).
#include <cuda_runtime.h>
#include "gpu-new-forward.h"

__global__ void conv_forward_kernel(float *y, const float *x, const float *k, const int B, const int M, const int C,
                                    const int H, const int W, const int K, const int b0) {
    const int Ho = H - K + 1, Wo = W - K + 1;
    const int b = b0 + blockIdx.z, m = blockIdx.y, p = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= B || p >= Ho * Wo) return;
    const int h = p / Wo, w = p % Wo;
    float acc = 0.0f;
    for (int c = 0; c < C; ++c)
        for (int i = 0; i < K; ++i)
            for (int j = 0; j < K; ++j)
                acc += x[((b * C + c) * H + h + i) * W + w + j] * k[((m * C + c) * K + i) * K + j];
    y[((b * M + m) * Ho + h) * Wo + w] = acc;
}

static void launch(float *y, const float *x, const float *k, int B, int M, int C, int H, int W, int K, int b0, int nb,
                   cudaStream_t s) {
    dim3 grid(((H - K + 1) * (W - K + 1) + 255) / 256, M, nb);
    conv_forward_kernel<<<grid, 256, 0, s>>>(y, x, k, B, M, C, H, W, K, b0);
}

#define OUT_BYTES (sizeof(float) * B * M * (H - K + 1) * (W - K + 1))

__host__ void GPUInterface::conv_forward_gpu_prolog(const float *host_y, const float *host_x, const float *host_k,
                                                    float **device_y_ptr, float **device_x_ptr, float **device_k_ptr,
                                                    const int B, const int M, const int C, const int H, const int W,
                                                    const int K) {
    cudaMalloc((void **)device_y_ptr, OUT_BYTES);
    cudaMalloc((void **)device_x_ptr, sizeof(float) * B * C * H * W);
    cudaMalloc((void **)device_k_ptr, sizeof(float) * M * C * K * K);
    cudaMemcpy(*device_x_ptr, host_x, sizeof(float) * B * C * H * W, cudaMemcpyHostToDevice);
    cudaMemcpy(*device_k_ptr, host_k, sizeof(float) * M * C * K * K, cudaMemcpyHostToDevice);
    launch(*device_y_ptr, *device_x_ptr, *device_k_ptr, B, M, C, H, W, K, 0, B / 2, 0);
}

__host__ void GPUInterface::conv_forward_gpu(float *device_y, const float *device_x, const float *device_k, const int B,
                                             const int M, const int C, const int H, const int W, const int K) {
    launch(device_y, device_x, device_k, B, M, C, H, W, K, B / 2, B - B / 2, 0);
    cudaDeviceSynchronize();
}

__host__ void GPUInterface::conv_forward_gpu_epilog(float *host_y, float *device_y, float *device_x, float *device_k,
                                                    const int B, const int M, const int C, const int H, const int W,
                                                    const int K) {
    cudaMemcpy(host_y, device_y, OUT_BYTES, cudaMemcpyDeviceToHost);
    cudaFree(device_y);
    cudaFree(device_x);
    cudaFree(device_k);
}

