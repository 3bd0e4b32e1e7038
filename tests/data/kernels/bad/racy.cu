/* profconv
name = "racy"
args = ["x", "w", "bias", "y", "B", "M", "C", "H", "W", "K", "pad"]
grid = ["ceil(W_out / 16) * ceil(H_out / 16)", "M", "B"]
block = [16, 16]
shared_bytes = "(16 + K - 1) * (16 + K - 1) * 4"
*/
// Deliberately racy: each block stages its input tile (with halo) in shared memory and reads its
// neighbours' elements without the __syncthreads() between the loads and the reads. Warps that run
// ahead may read elements another warp has not written yet, so the output is right or wrong by how the
// warps happen to be scheduled; compute-sanitizer racecheck reports the race with the lines of the
// write (line 30) and the read (line 35).
extern "C" __global__ void conv(const float* x, const float* w, const float* bias, float* y,
                                int B, int M, int C, int H, int W, int K, int pad) {
    extern __shared__ float tile[];
    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1;
    const int tiles_w = (Wo + 15) / 16;
    const int h0 = (blockIdx.x / tiles_w) * 16, w0 = (blockIdx.x % tiles_w) * 16;
    const int m = blockIdx.y, b = blockIdx.z;
    const int ty = threadIdx.y, tx = threadIdx.x;
    const int side = 16 + K - 1;
    const int h = h0 + ty, wo = w0 + tx;
    float acc = bias[m];
    for (int c = 0; c < C; ++c) {
        for (int i = ty; i < side; i += 16)
            for (int j = tx; j < side; j += 16) {
                const int ih = h0 + i - pad, iw = w0 + j - pad;
                const float v = (ih >= 0 && ih < H && iw >= 0 && iw < W)
                    ? x[((long long)(b * C + c) * H + ih) * W + iw] : 0.0f;
                tile[i * side + j] = v;  // line 30: the write
            }
        // missing: __syncthreads();
        for (int p = 0; p < K; ++p)
            for (int q = 0; q < K; ++q)
                acc += tile[(ty + p) * side + tx + q] * w[((m * C + c) * K + p) * K + q];  // line 35: the read
        __syncthreads();  // (the tile is not overwritten while others still read it: only the first sync is missing)
    }
    if (h < Ho && wo < Wo)
        y[((long long)(b * M + m) * Ho + h) * Wo + wo] = acc;
}
