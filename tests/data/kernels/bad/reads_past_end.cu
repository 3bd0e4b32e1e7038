/* profconv
name = "reads-past-end"
args = ["x", "w", "bias", "y", "B", "M", "C", "H", "W", "K", "pad"]
grid = ["ceil(B * M * H_out * W_out / 256) + 1"]
block = [256]
*/
// Right output, but every thread also reads a little past the end of x (no write): the checks pass,
// compute-sanitizer memcheck reports the invalid reads with this file's line (14).
extern "C" __global__ void conv(const float* x, const float* w, const float* bias, float* y,
                                int B, int M, int C, int H, int W, int K, int pad) {
    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1;
    const long long total = (long long)B * M * Ho * Wo;
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const float past = x[(long long)B * C * H * W + (i % 64)];  // line 14: up to 64 floats past the end
    if (i >= total) return;
    const int wo = i % Wo, h = (i / Wo) % Ho, m = (i / ((long long)Wo * Ho)) % M;
    const long long b = i / ((long long)Wo * Ho * M);
    float acc = bias[m];
    for (int c = 0; c < C; ++c)
        for (int p = 0; p < K; ++p)
            for (int q = 0; q < K; ++q) {
                const int ih = h + p - pad, iw = wo + q - pad;
                if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                    acc += x[((b * C + c) * H + ih) * W + iw] * w[((m * C + c) * K + p) * K + q];
            }
    y[i] = acc + (past == 1.2345e-30f ? 1e-30f : 0.0f);
}
