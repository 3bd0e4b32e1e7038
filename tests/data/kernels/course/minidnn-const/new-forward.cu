// Test file in the later mini-dnn naming (Batch, Map_out, Channel, ...; no stride) with the filters in
// constant memory, copied by the prolog: state that conv_forward_gpu relies on, so profconv must call
// the prolog before it. Written for profconv's tests.
#include <cmath>
#include <iostream>
#include "gpu-new-forward.h"

#define TILE_WIDTH 16
#define MAX_MASK 8192

__constant__ float mask_c[MAX_MASK];

__global__ void conv_forward_kernel(float *output, const float *input, const int Batch, const int Map_out,
                                    const int Channel, const int Height, const int Width, const int K) {
    const int Height_out = Height - K + 1;
    const int Width_out = Width - K + 1;
    const int W_grid = (Width_out + TILE_WIDTH - 1) / TILE_WIDTH;
    const int m = blockIdx.x, b = blockIdx.z;
    const int h = (blockIdx.y / W_grid) * TILE_WIDTH + threadIdx.y;
    const int w = (blockIdx.y % W_grid) * TILE_WIDTH + threadIdx.x;
    if (h < Height_out && w < Width_out) {
        float acc = 0.0f;
        for (int c = 0; c < Channel; c++)
            for (int p = 0; p < K; p++)
                for (int q = 0; q < K; q++)
                    acc += input[((b * Channel + c) * Height + h + p) * Width + w + q] * mask_c[((m * Channel + c) * K + p) * K + q];
        output[((b * Map_out + m) * Height_out + h) * Width_out + w] = acc;
    }
}

__host__ void GPUInterface::conv_forward_gpu_prolog(const float *host_output, const float *host_input, const float *host_mask,
                                                    float **device_output_ptr, float **device_input_ptr, float **device_mask_ptr,
                                                    const int Batch, const int Map_out, const int Channel, const int Height,
                                                    const int Width, const int K) {
    cudaMalloc((void **)device_output_ptr, sizeof(float) * Batch * Map_out * (Height - K + 1) * (Width - K + 1));
    cudaMalloc((void **)device_input_ptr, sizeof(float) * Batch * Channel * Height * Width);
    *device_mask_ptr = (float *)host_mask;  // unused on the device: the filters live in constant memory
    cudaMemcpy(*device_input_ptr, host_input, sizeof(float) * Batch * Channel * Height * Width, cudaMemcpyHostToDevice);
    cudaMemcpyToSymbol(mask_c, host_mask, sizeof(float) * Map_out * Channel * K * K);
}

__host__ void GPUInterface::conv_forward_gpu(float *device_output, const float *device_input, const float *device_mask,
                                             const int Batch, const int Map_out, const int Channel, const int Height,
                                             const int Width, const int K) {
    const int W_grid = (Width - K + 1 + TILE_WIDTH - 1) / TILE_WIDTH;
    const int H_grid = (Height - K + 1 + TILE_WIDTH - 1) / TILE_WIDTH;
    dim3 grid(Map_out, W_grid * H_grid, Batch);
    dim3 block(TILE_WIDTH, TILE_WIDTH, 1);
    conv_forward_kernel<<<grid, block>>>(device_output, device_input, Batch, Map_out, Channel, Height, Width, K);
    cudaDeviceSynchronize();
}

__host__ void GPUInterface::conv_forward_gpu_epilog(float *host_output, float *device_output, float *device_input,
                                                    float *device_mask, const int Batch, const int Map_out,
                                                    const int Channel, const int Height, const int Width, const int K) {
    cudaMemcpy(host_output, device_output, sizeof(float) * Batch * Map_out * (Height - K + 1) * (Width - K + 1),
               cudaMemcpyDeviceToHost);
    cudaFree(device_output);
    cudaFree(device_input);
}
