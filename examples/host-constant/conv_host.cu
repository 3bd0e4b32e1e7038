// Host contract example: several launches and constant memory, which a single declared launch cannot do.
#include <cuda_runtime.h>

#define CONST_FLOATS 16384  // 64 KB of constant memory
#define THREADS 256

__constant__ float wc[CONST_FLOATS];

// Output maps m0 .. m0+mb-1 for every image; their filters sit in wc[0 .. mb*C*K*K).
__global__ void conv_group(const float* __restrict__ x, const float* __restrict__ bias, float* __restrict__ y,
                           int B, int M, int C, int H, int W, int K, int pad, int m0, int mb) {
    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1;
    const long long total = (long long)B * mb * Ho * Wo;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        const int wo = i % Wo, h = (i / Wo) % Ho, mm = (i / ((long long)Wo * Ho)) % mb;
        const long long b = i / ((long long)Wo * Ho * mb);
        float acc = bias[m0 + mm];
        for (int c = 0; c < C; ++c)
            for (int p = 0; p < K; ++p) {
                const int ih = h + p - pad;
                if (ih < 0 || ih >= H) continue;
                for (int q = 0; q < K; ++q) {
                    const int iw = wo + q - pad;
                    if (iw < 0 || iw >= W) continue;
                    acc += x[((b * C + c) * H + ih) * W + iw] * wc[((mm * C + c) * K + p) * K + q];
                }
            }
        y[((b * M + m0 + mm) * Ho + h) * Wo + wo] = acc;
    }
}

extern "C" void conv_forward(const float* x, const float* w, const float* bias, float* y, int B, int M, int C,
                             int H, int W, int K, int pad) {
    const int per_map = C * K * K;
    const int group = CONST_FLOATS / per_map > 0 ? CONST_FLOATS / per_map : 1;
    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1;
    for (int m0 = 0; m0 < M; m0 += group) {
        const int mb = M - m0 < group ? M - m0 : group;
        cudaMemcpyToSymbol(wc, w + (size_t)m0 * per_map, sizeof(float) * mb * per_map, 0, cudaMemcpyDeviceToDevice);
        const long long total = (long long)B * mb * Ho * Wo;
        long long blocks = (total + THREADS - 1) / THREADS;
        if (blocks > 1048576) blocks = 1048576;
        conv_group<<<(unsigned)blocks, THREADS>>>(x, bias, y, B, M, C, H, W, K, pad, m0, mb);
    }
}
