// Test file in the Spring 2025 m3 form (m3/op_4/m3-forward.cu, written for profconv's tests): cuBLAS after an
// unroll, with the oddities of real files: the cuBLAS handle is created inside conv_forward_gpu (hundreds of
// milliseconds on the cold call the course timed, little warm), the prolog registers the host output with
// cudaHostRegister (it must be pageable memory, as the course's program allocates it) and the epilog
// unregisters it, the course header is included by the course tree's relative path, and a CUDA header by the
// course image's absolute path.
#include <iostream>
#include "/usr/local/cuda-8.0/targets/x86_64-linux/include/cuda_profiler_api.h"
#include <cublas_v2.h>
#include "../../src/layer/custom/gpu-new-forward.h"

#define CHUNK 256  // images unrolled at a time

__global__ void unroll(float *u, const float *x, const int nb, const int C, const int H, const int W, const int K) {
    // u: (C*K*K) x (nb*Ho*Wo), row-major
    const int Ho = H - K + 1, Wo = W - K + 1;
    const long long cols = (long long)nb * Ho * Wo;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= cols * C * K * K) return;
    const long long row = i / cols, col = i % cols;
    const int c = (int)(row / (K * K)), p = (int)(row % (K * K)) / K, q = (int)(row % K);
    const long long b = col / (Ho * Wo);
    const int hw = (int)(col % (Ho * Wo)), h = hw / Wo, w = hw % Wo;
    u[i] = x[((b * C + c) * H + h + p) * W + w + q];
}

__global__ void permute(float *y, const float *t, const int nb, const int M, const int HoWo) {
    // t: M x (nb*HoWo) -> y: nb x M x HoWo
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)nb * M * HoWo) return;
    const long long b = i / ((long long)M * HoWo);
    const int m = (int)((i / HoWo) % M), hw = (int)(i % HoWo);
    y[i] = t[(long long)m * nb * HoWo + b * HoWo + hw];
}

__host__ void GPUInterface::conv_forward_gpu_prolog(const float *host_output, const float *host_input,
                                                    const float *host_mask, float **device_output_ptr,
                                                    float **device_input_ptr, float **device_mask_ptr,
                                                    const int Batch, const int Map_out, const int Channel,
                                                    const int Height, const int Width, const int K) {
    const size_t out_bytes = sizeof(float) * Batch * Map_out * (Height - K + 1) * (Width - K + 1);
    cudaHostRegister((void *)host_output, out_bytes, cudaHostRegisterDefault);
    cudaMalloc((void **)device_output_ptr, out_bytes);
    cudaMalloc((void **)device_input_ptr, sizeof(float) * Batch * Channel * Height * Width);
    cudaMalloc((void **)device_mask_ptr, sizeof(float) * Map_out * Channel * K * K);
    cudaMemcpy(*device_input_ptr, host_input, sizeof(float) * Batch * Channel * Height * Width, cudaMemcpyHostToDevice);
    cudaMemcpy(*device_mask_ptr, host_mask, sizeof(float) * Map_out * Channel * K * K, cudaMemcpyHostToDevice);
}

__host__ void GPUInterface::conv_forward_gpu(float *device_output, const float *device_input, const float *device_mask,
                                             const int Batch, const int Map_out, const int Channel, const int Height,
                                             const int Width, const int K) {
    cublasHandle_t handle;
    cublasCreate(&handle);
    const int HoWo = (Height - K + 1) * (Width - K + 1), Kd = Channel * K * K;
    float *u, *t;
    cudaMalloc((void **)&u, sizeof(float) * Kd * CHUNK * HoWo);
    cudaMalloc((void **)&t, sizeof(float) * Map_out * CHUNK * HoWo);
    const float one = 1.0f, zero = 0.0f;
    for (int b0 = 0; b0 < Batch; b0 += CHUNK) {
        const int nb = Batch - b0 < CHUNK ? Batch - b0 : CHUNK;
        const long long n = (long long)nb * HoWo;
        unroll<<<(unsigned)((n * Kd + 255) / 256), 256>>>(u, device_input + (long long)b0 * Channel * Height * Width,
                                                          nb, Channel, Height, Width, K);
        // row-major t (M x n) = mask (M x Kd) * u (Kd x n): column-major t^T = u^T * mask^T
        cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, Map_out, Kd, &one, u, (int)n, device_mask, Kd, &zero,
                    t, (int)n);
        permute<<<(unsigned)((n * Map_out + 255) / 256), 256>>>(device_output + (long long)b0 * Map_out * HoWo, t, nb,
                                                                Map_out, HoWo);
    }
    cudaDeviceSynchronize();
    cudaFree(u);
    cudaFree(t);
    cublasDestroy(handle);
}

__host__ void GPUInterface::conv_forward_gpu_epilog(float *host_output, float *device_output, float *device_input,
                                                    float *device_mask, const int Batch, const int Map_out,
                                                    const int Channel, const int Height, const int Width,
                                                    const int K) {
    cudaMemcpy(host_output, device_output, sizeof(float) * Batch * Map_out * (Height - K + 1) * (Width - K + 1),
               cudaMemcpyDeviceToHost);
    cudaHostUnregister(host_output);
    cudaFree(device_output);
    cudaFree(device_input);
    cudaFree(device_mask);
}

__host__ void GPUInterface::get_device_properties() {
    cudaProfilerStart();
    cudaProfilerStop();
}
