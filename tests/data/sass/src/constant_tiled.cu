// Filters in __constant__ memory and input tiles in shared memory, the course's classic pair.
#define TILE 16
#define KMAX 7
__constant__ float filt[16 * 4 * KMAX * KMAX];

__global__ void conv_const_tiled(const float* x, float* y, int C, int H, int W, int K) {
    __shared__ float tile[TILE + KMAX - 1][TILE + KMAX - 1];
    int m = blockIdx.z, ho = blockIdx.y * TILE + threadIdx.y, wo = blockIdx.x * TILE + threadIdx.x;
    int Ho = H - K + 1, Wo = W - K + 1;
    float acc = 0.0f;
    for (int c = 0; c < C; c++) {
        for (int i = threadIdx.y; i < TILE + K - 1; i += TILE)
            for (int j = threadIdx.x; j < TILE + K - 1; j += TILE) {
                int h = blockIdx.y * TILE + i, w = blockIdx.x * TILE + j;
                tile[i][j] = (h < H && w < W) ? x[(c * H + h) * W + w] : 0.0f;
            }
        __syncthreads();
        for (int p = 0; p < K; p++)
            for (int q = 0; q < K; q++)
                acc += tile[threadIdx.y + p][threadIdx.x + q] * filt[((m * C + c) * K + p) * K + q];
        __syncthreads();
    }
    if (ho < Ho && wo < Wo) y[(m * Ho + ho) * Wo + wo] = acc;
}
