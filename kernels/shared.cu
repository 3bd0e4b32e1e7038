// shared: the course's tiled convolution. A block computes a TILE x TILE patch of one output
// map; per input channel it stages the (TILE+K-1)^2 input patch in shared memory once, so each
// input value is read from global memory once per block instead of K*K times.
// Macros: TILE (block edge, default 16), KMAX (largest K, default 7).
#ifndef TILE
#define TILE 16
#endif
#ifndef KMAX
#define KMAX 7
#endif
extern "C" __global__ void conv_forward(const float* x, const float* k, const float* bias, float* y,
                                        int B, int M, int C, int H, int W, int K, int P) {
    __shared__ float tile[TILE + KMAX - 1][TILE + KMAX - 1];
    const int Ho = H + 2 * P - K + 1, Wo = W + 2 * P - K + 1;
    const int tilesW = (Wo + TILE - 1) / TILE;
    const int m = blockIdx.x;
    const int h0 = (blockIdx.y / tilesW) * TILE, w0 = (blockIdx.y % tilesW) * TILE;
    const long long b = blockIdx.z;
    const int ty = threadIdx.y, tx = threadIdx.x;
    const int h = h0 + ty, w = w0 + tx;
    const int span = TILE + K - 1;
    float acc = bias ? bias[m] : 0.0f;
    for (int c = 0; c < C; ++c) {
        const float* xc = x + (b * C + c) * H * W;
        for (int i = ty; i < span; i += TILE)
            for (int j = tx; j < span; j += TILE) {
                const int ih = h0 + i - P, iw = w0 + j - P;
                tile[i][j] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? xc[ih * W + iw] : 0.0f;
            }
        __syncthreads();
        const float* kk = k + (m * C + c) * K * K;
        for (int p = 0; p < K; ++p)
            for (int q = 0; q < K; ++q) acc += tile[ty + p][tx + q] * kk[p * K + q];
        __syncthreads();
    }
    if (h < Ho && w < Wo) y[((b * M + m) * Ho + h) * Wo + w] = acc;
}
