// Cheat, written for profconv's tests (mini-dnn course form, no stride S). Half the work in the prolog: the top half of every output image is computed in the prolog, the rest
// in conv_forward_gpu (Op Time halved, above any floor). Caught: with conv_forward_gpu skipped, the prolog and
// epilog alone leave half the output right.
#include <cuda_runtime.h>
#include "gpu-new-forward.h"

#define TILE 16

// the plain convolution (rows h0 <= h < h1 of the output): correct, untiled
__global__ void conv_rows(float *y, const float *x, const float *k, const int B, const int M, const int C, const int H,
                          const int W, const int K, const int h0, const int h1) {
    const int Ho = H - K + 1, Wo = W - K + 1;
    const int W_grid = (Wo + TILE - 1) / TILE;
    const int m = blockIdx.x, b = blockIdx.z;
    const int h = h0 + (blockIdx.y / W_grid) * TILE + threadIdx.y;
    const int w = (blockIdx.y % W_grid) * TILE + threadIdx.x;
    if (h >= h1 || w >= Wo) return;
    float acc = 0.0f;
    for (int c = 0; c < C; ++c)
        for (int p = 0; p < K; ++p)
            for (int q = 0; q < K; ++q)
                acc += x[((size_t)(b * C + c) * H + h + p) * W + w + q] * k[((m * C + c) * K + p) * K + q];
    y[((size_t)(b * M + m) * Ho + h) * Wo + w] = acc;
}

static void launch_rows(float *y, const float *x, const float *k, int B, int M, int C, int H, int W, int K, int h0,
                        int h1, cudaStream_t s = 0) {
    const int Wo = W - K + 1;
    if (h1 <= h0) return;
    dim3 block(TILE, TILE, 1), grid(M, ((Wo + TILE - 1) / TILE) * ((h1 - h0 + TILE - 1) / TILE), B);
    conv_rows<<<grid, block, 0, s>>>(y, x, k, B, M, C, H, W, K, h0, h1);
}

__host__ void GPUInterface::conv_forward_gpu_prolog(const float *host_y, const float *host_x, const float *host_k,
                                                    float **device_y_ptr, float **device_x_ptr, float **device_k_ptr,
                                                    const int B, const int M, const int C, const int H, const int W,
                                                    const int K) {
    const int Ho = H - K + 1, Wo = W - K + 1;
    cudaMalloc((void **)device_y_ptr, sizeof(float) * B * M * Ho * Wo);
    cudaMalloc((void **)device_x_ptr, sizeof(float) * B * C * H * W);
    cudaMalloc((void **)device_k_ptr, sizeof(float) * M * C * K * K);
    cudaMemcpy(*device_x_ptr, host_x, sizeof(float) * B * C * H * W, cudaMemcpyHostToDevice);
    cudaMemcpy(*device_k_ptr, host_k, sizeof(float) * M * C * K * K, cudaMemcpyHostToDevice);
    launch_rows(*device_y_ptr, *device_x_ptr, *device_k_ptr, B, M, C, H, W, K, 0, (H - K + 1) / 2);
    cudaDeviceSynchronize();
}

__host__ void GPUInterface::conv_forward_gpu(float *device_y, const float *device_x, const float *device_k, const int B,
                                             const int M, const int C, const int H, const int W, const int K) {
    const int Ho = H - K + 1, Wo = W - K + 1;
    (void)Ho; (void)Wo;
    launch_rows(device_y, device_x, device_k, B, M, C, H, W, K, Ho / 2, Ho);
    cudaDeviceSynchronize();
}

__host__ void GPUInterface::conv_forward_gpu_epilog(float *host_y, float *device_y, float *device_x, float *device_k,
                                                    const int B, const int M, const int C, const int H, const int W,
                                                    const int K) {
    const int Ho = H - K + 1, Wo = W - K + 1;
    cudaMemcpy(host_y, device_y, sizeof(float) * B * M * Ho * Wo, cudaMemcpyDeviceToHost);
    cudaFree(device_y);
    cudaFree(device_x);
    cudaFree(device_k);
}
