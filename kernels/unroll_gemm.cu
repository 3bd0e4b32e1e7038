// unroll-gemm: im2col ("unroll") into a [C*K*K, N] matrix (N = images * Ho * Wo), then a
// shared-memory tiled matrix multiply Y[M, N] = Kmat[M, C*K*K] x X_unroll. Two kernels.
// Macros: TILE (matmul tile edge, default 16).
#ifndef TILE
#define TILE 16
#endif
extern "C" __global__ void unroll(const float* x, float* xu, int Bc, int C, int H, int W, int K, int P) {
    const int Ho = H + 2 * P - K + 1, Wo = W + 2 * P - K + 1;
    const long long N = (long long)Bc * Ho * Wo;
    const long long total = N * C * K * K;
    for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < total;
         idx += (long long)gridDim.x * blockDim.x) {
        const long long n = idx % N;
        const int row = idx / N;  // c*K*K + p*K + q
        const int q = row % K, p = (row / K) % K, c = row / (K * K);
        const int w = n % Wo, h = (n / Wo) % Ho;
        const long long b = n / ((long long)Wo * Ho);
        const int ih = h + p - P, iw = w + q - P;
        xu[idx] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? x[((b * C + c) * H + ih) * W + iw] : 0.0f;
    }
}

// Y[m, n] written straight into NCHW layout: n = b*Ho*Wo + pos -> y[(b*M + m)*HoWo + pos].
extern "C" __global__ void matmul(const float* kmat, const float* xu, const float* bias, float* y,
                                  int M, int Kd, long long N, int HoWo) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int ty = threadIdx.y, tx = threadIdx.x;
    const int m = blockIdx.y * TILE + ty;
    const long long n = blockIdx.x * (long long)TILE + tx;
    float acc = 0.0f;
    for (int t = 0; t < Kd; t += TILE) {
        As[ty][tx] = (m < M && t + tx < Kd) ? kmat[m * Kd + t + tx] : 0.0f;
        Bs[ty][tx] = (n < N && t + ty < Kd) ? xu[(long long)(t + ty) * N + n] : 0.0f;
        __syncthreads();
        for (int i = 0; i < TILE; ++i) acc += As[ty][i] * Bs[i][tx];
        __syncthreads();
    }
    if (m < M && n < N) {
        const long long b = n / HoWo, pos = n % HoWo;
        y[(b * M + m) * HoWo + pos] = acc + (bias ? bias[m] : 0.0f);
    }
}
