/* profconv
# Device contract: one __global__ function, launched by profconv as declared here.
name = "tiled"
description = "input tile and its halo in shared memory, one output per thread; TILE swept per layer"
function = "conv_tiled"
args = ["x", "w", "bias", "y", "B", "M", "C", "H", "W", "K", "pad"]
grid = ["ceil(W_out / TILE) * ceil(H_out / TILE)", "M", "B"]
block = ["TILE", "TILE"]
shared_bytes = "4 * ((TILE + K - 1) * (TILE + K - 1) + K * K)"
[defines]
TILE = 16
[sweep]
TILE = [8, 16, 32]
*/
// y[b,m,h,w] = bias[m] + sum_{c,p,q} x[b,c,h+p-pad,w+q-pad] * w[m,c,p,q]   (zero outside x)
// One block computes a TILE x TILE patch of one output map of one image; per input channel it
// stages the (TILE+K-1)^2 input patch and the K x K filter in shared memory.
extern "C" __global__ void conv_tiled(const float* __restrict__ x, const float* __restrict__ w,
                                      const float* __restrict__ bias, float* __restrict__ y, int B, int M,
                                      int C, int H, int W, int K, int pad) {
    extern __shared__ float smem[];
    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1;
    const int S = TILE + K - 1;
    float* xs = smem;
    float* ws = smem + S * S;
    const int tiles_w = (Wo + TILE - 1) / TILE;
    const int b = blockIdx.z, m = blockIdx.y;
    const int h0 = (blockIdx.x / tiles_w) * TILE, w0 = (blockIdx.x % tiles_w) * TILE;
    const int ty = threadIdx.y, tx = threadIdx.x;
    float acc = 0.0f;
    for (int c = 0; c < C; ++c) {
        for (int i = ty * TILE + tx; i < K * K; i += TILE * TILE)
            ws[i] = w[((size_t)m * C + c) * K * K + i];
        for (int i = ty; i < S; i += TILE)
            for (int j = tx; j < S; j += TILE) {
                const int ih = h0 + i - pad, iw = w0 + j - pad;
                xs[i * S + j] = (ih >= 0 && ih < H && iw >= 0 && iw < W)
                                    ? x[(((size_t)b * C + c) * H + ih) * W + iw] : 0.0f;
            }
        __syncthreads();
        for (int p = 0; p < K; ++p)
            for (int q = 0; q < K; ++q)
                acc += xs[(ty + p) * S + tx + q] * ws[p * K + q];
        __syncthreads();
    }
    const int h = h0 + ty, wo = w0 + tx;
    if (h < Ho && wo < Wo) y[(((size_t)b * M + m) * Ho + h) * Wo + wo] = acc + bias[m];
}
