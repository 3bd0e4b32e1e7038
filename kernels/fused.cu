// fused: the unroll folded into the tiled matmul. Each B-tile element is gathered straight
// from x (implicit im2col), so the unrolled matrix never exists in global memory.
// Macros: TILE (tile edge, default 16).
#ifndef TILE
#define TILE 16
#endif
extern "C" __global__ void conv_forward(const float* x, const float* kmat, const float* bias, float* y,
                                        int B, int M, int C, int H, int W, int K, int P) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int Ho = H + 2 * P - K + 1, Wo = W + 2 * P - K + 1;
    const int HoWo = Ho * Wo, KK = K * K, Kd = C * KK;
    const long long N = (long long)B * HoWo;
    const int ty = threadIdx.y, tx = threadIdx.x;
    const int m = blockIdx.y * TILE + ty;
    const long long n = blockIdx.x * (long long)TILE + tx;
    // the column this thread gathers for the B tile is n (fixed); decode it once
    const long long b = n / HoWo;
    const int pos = n % HoWo, h = pos / Wo, w = pos % Wo;
    float acc = 0.0f;
    for (int t = 0; t < Kd; t += TILE) {
        As[ty][tx] = (m < M && t + tx < Kd) ? kmat[m * Kd + t + tx] : 0.0f;
        const int row = t + ty;
        float v = 0.0f;
        if (n < N && row < Kd) {
            const int c = row / KK, p = (row % KK) / K, q = row % K;
            const int ih = h + p - P, iw = w + q - P;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W) v = x[((b * C + c) * H + ih) * W + iw];
        }
        Bs[ty][tx] = v;
        __syncthreads();
        for (int i = 0; i < TILE; ++i) acc += As[ty][i] * Bs[i][tx];
        __syncthreads();
    }
    if (m < M && n < N) y[(b * M + m) * HoWo + pos] = acc + (bias ? bias[m] : 0.0f);
}
