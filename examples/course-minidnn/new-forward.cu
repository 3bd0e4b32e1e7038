// Course contract example: an ECE 408 (mini-dnn era) new-forward.cu, run by profconv unchanged.
// profconv compiles it with a gpu-new-forward.h generated from the methods below and calls
// prolog (allocate, copy in), conv_forward_gpu (the Op Time) and epilog (copy out, free).
// This one uses the later semesters' names and trailing stride S; the older (y, x, k, B, M, C, H, W, K)
// form without S is recognised the same way.
#include <cmath>
#include <iostream>
#include "gpu-new-forward.h"

#define TILE_WIDTH 16

__global__ void conv_forward_kernel(float *output, const float *input, const float *mask, const int Batch,
                                    const int Map_out, const int Channel, const int Height, const int Width,
                                    const int K, const int S) {
    const int Height_out = (Height - K) / S + 1;
    const int Width_out = (Width - K) / S + 1;
    #define out_4d(i3, i2, i1, i0) output[(i3) * (Map_out * Height_out * Width_out) + (i2) * (Height_out * Width_out) + (i1) * (Width_out) + i0]
    #define in_4d(i3, i2, i1, i0) input[(i3) * (Channel * Height * Width) + (i2) * (Height * Width) + (i1) * (Width) + i0]
    #define mask_4d(i3, i2, i1, i0) mask[(i3) * (Channel * K * K) + (i2) * (K * K) + (i1) * (K) + i0]
    const int W_grid = (Width_out + TILE_WIDTH - 1) / TILE_WIDTH;
    const int m = blockIdx.x;
    const int h = (blockIdx.y / W_grid) * TILE_WIDTH + threadIdx.y;
    const int w = (blockIdx.y % W_grid) * TILE_WIDTH + threadIdx.x;
    const int b = blockIdx.z;
    if (h < Height_out && w < Width_out) {
        float acc = 0.0f;
        for (int c = 0; c < Channel; c++)
            for (int p = 0; p < K; p++)
                for (int q = 0; q < K; q++)
                    acc += in_4d(b, c, h * S + p, w * S + q) * mask_4d(m, c, p, q);
        out_4d(b, m, h, w) = acc;
    }
    #undef out_4d
    #undef in_4d
    #undef mask_4d
}

__host__ void GPUInterface::conv_forward_gpu_prolog(const float *host_output, const float *host_input, const float *host_mask,
                                                    float **device_output_ptr, float **device_input_ptr, float **device_mask_ptr,
                                                    const int Batch, const int Map_out, const int Channel, const int Height,
                                                    const int Width, const int K, const int S) {
    const int Height_out = (Height - K) / S + 1;
    const int Width_out = (Width - K) / S + 1;
    cudaMalloc((void **)device_input_ptr, sizeof(float) * Batch * Channel * Height * Width);
    cudaMalloc((void **)device_output_ptr, sizeof(float) * Batch * Map_out * Height_out * Width_out);
    cudaMalloc((void **)device_mask_ptr, sizeof(float) * Map_out * Channel * K * K);
    cudaMemcpy(*device_input_ptr, host_input, sizeof(float) * Batch * Channel * Height * Width, cudaMemcpyHostToDevice);
    cudaMemcpy(*device_mask_ptr, host_mask, sizeof(float) * Map_out * Channel * K * K, cudaMemcpyHostToDevice);
}

__host__ void GPUInterface::conv_forward_gpu(float *device_output, const float *device_input, const float *device_mask,
                                             const int Batch, const int Map_out, const int Channel, const int Height,
                                             const int Width, const int K, const int S) {
    const int Height_out = (Height - K) / S + 1;
    const int Width_out = (Width - K) / S + 1;
    const int W_grid = (Width_out + TILE_WIDTH - 1) / TILE_WIDTH;
    const int H_grid = (Height_out + TILE_WIDTH - 1) / TILE_WIDTH;
    dim3 block(TILE_WIDTH, TILE_WIDTH, 1);
    dim3 grid(Map_out, W_grid * H_grid, Batch);
    conv_forward_kernel<<<grid, block>>>(device_output, device_input, device_mask, Batch, Map_out, Channel, Height, Width, K, S);
    cudaDeviceSynchronize();
}

__host__ void GPUInterface::conv_forward_gpu_epilog(float *host_output, float *device_output, float *device_input, float *device_mask,
                                                    const int Batch, const int Map_out, const int Channel, const int Height,
                                                    const int Width, const int K, const int S) {
    const int Height_out = (Height - K) / S + 1;
    const int Width_out = (Width - K) / S + 1;
    cudaMemcpy(host_output, device_output, sizeof(float) * Batch * Map_out * Height_out * Width_out, cudaMemcpyDeviceToHost);
    cudaFree(device_output);
    cudaFree(device_input);
    cudaFree(device_mask);
}

__host__ void GPUInterface::get_device_properties() {
    int deviceCount;
    cudaGetDeviceCount(&deviceCount);
    for (int dev = 0; dev < deviceCount; dev++) {
        cudaDeviceProp deviceProp;
        cudaGetDeviceProperties(&deviceProp, dev);
        std::cout << "Device " << dev << " name: " << deviceProp.name << std::endl;
    }
}
