// constant: naive indexing, but the filter bank lives in constant memory (broadcast reads:
// every thread of a warp reads the same weight at the same time).
// Host copies the weights into `kc` before the launch; MAX_WEIGHTS bounds M*C*K*K.
#define MAX_WEIGHTS 15360
__constant__ float kc[MAX_WEIGHTS];

extern "C" __global__ void conv_forward(const float* x, const float* bias, float* y,
                                        int B, int M, int C, int H, int W, int K, int P) {
    const int Ho = H + 2 * P - K + 1, Wo = W + 2 * P - K + 1;
    const long long total = (long long)B * M * Ho * Wo;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const int w = idx % Wo;
        const int h = (idx / Wo) % Ho;
        const int m = (idx / ((long long)Wo * Ho)) % M;
        const long long b = idx / ((long long)Wo * Ho * M);
        float acc = bias ? bias[m] : 0.0f;
        for (int c = 0; c < C; ++c)
            for (int p = 0; p < K; ++p) {
                const int ih = h + p - P;
                if (ih < 0 || ih >= H) continue;
                for (int q = 0; q < K; ++q) {
                    const int iw = w + q - P;
                    if (iw < 0 || iw >= W) continue;
                    acc += x[((b * C + c) * H + ih) * W + iw] * kc[((m * C + c) * K + p) * K + q];
                }
            }
        y[idx] = acc;
    }
}
