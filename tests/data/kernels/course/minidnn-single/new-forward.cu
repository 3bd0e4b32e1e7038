// Test file in the first Fall 2020 mini-dnn form, written for profconv's tests: GPUInterface has only
// conv_forward_gpu, which takes host pointers and does its own allocation and copies (Op Time = the call).
#include <cmath>
#include <iostream>
#include "gpu-new-forward.h"

#define TILE_WIDTH 16

__global__ void conv_forward_kernel(float *y, const float *x, const float *k, const int B, const int M, const int C,
                                    const int H, const int W, const int K) {
    const int H_out = H - K + 1, W_out = W - K + 1;
    const int W_grid = (W_out + TILE_WIDTH - 1) / TILE_WIDTH;
    const int b = blockIdx.z, m = blockIdx.x;
    const int h = (blockIdx.y / W_grid) * TILE_WIDTH + threadIdx.y;
    const int w = (blockIdx.y % W_grid) * TILE_WIDTH + threadIdx.x;
    if (h < H_out && w < W_out) {
        float acc = 0.0f;
        for (int c = 0; c < C; ++c)
            for (int p = 0; p < K; ++p)
                for (int q = 0; q < K; ++q)
                    acc += x[((b * C + c) * H + h + p) * W + w + q] * k[((m * C + c) * K + p) * K + q];
        y[((b * M + m) * H_out + h) * W_out + w] = acc;
    }
}

__host__ void GPUInterface::conv_forward_gpu(float *host_y, const float *host_x, const float *host_k, const int B,
                                             const int M, const int C, const int H, const int W, const int K) {
    const int H_out = H - K + 1, W_out = W - K + 1;
    float *y, *x, *k;
    cudaMalloc((void **)&y, sizeof(float) * B * M * H_out * W_out);
    cudaMalloc((void **)&x, sizeof(float) * B * C * H * W);
    cudaMalloc((void **)&k, sizeof(float) * M * C * K * K);
    cudaMemcpy(x, host_x, sizeof(float) * B * C * H * W, cudaMemcpyHostToDevice);
    cudaMemcpy(k, host_k, sizeof(float) * M * C * K * K, cudaMemcpyHostToDevice);
    const int W_grid = (W_out + TILE_WIDTH - 1) / TILE_WIDTH, H_grid = (H_out + TILE_WIDTH - 1) / TILE_WIDTH;
    dim3 grid(M, W_grid * H_grid, B), block(TILE_WIDTH, TILE_WIDTH, 1);
    conv_forward_kernel<<<grid, block>>>(y, x, k, B, M, C, H, W, K);
    cudaMemcpy(host_y, y, sizeof(float) * B * M * H_out * W_out, cudaMemcpyDeviceToHost);
    cudaFree(y);
    cudaFree(x);
    cudaFree(k);
}
