/* profconv
name = "modifies-input"
args = ["x", "w", "bias", "y", "B", "M", "C", "H", "W", "K", "pad"]
grid = ["min(ceil(B * M * H_out * W_out / 256), 65535)"]
block = [256]
*/
// Computes the right output, then overwrites one input element (inputs must be left unchanged). The write is
// made by the last block to finish, once every block has read x (the classic threadfence-and-counter pattern):
// written by any block before the others were done, it raced with their reads and made the output wrong too
// (window s9c, H200: FAILED for conv2's relative error 5.4 instead of the modified input).
__device__ unsigned int finished_blocks = 0;

extern "C" __global__ void conv(float* x, const float* w, const float* bias, float* y,
                                int B, int M, int C, int H, int W, int K, int pad) {
    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1;
    const long long total = (long long)B * M * Ho * Wo;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x) {
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
        y[i] = acc;
    }
    __syncthreads();  // this block's reads of x are over
    if (threadIdx.x == 0) {
        __threadfence();
        if (atomicAdd(&finished_blocks, 1u) == gridDim.x - 1) {  // every other block is done with x
            x[(long long)B * C * H * W - 1] = 12345.0f;
            finished_blocks = 0;  // for the next call
        }
    }
}
