/* profconv
name = "out-of-bounds"
args = ["x", "w", "bias", "y", "B", "M", "C", "H", "W", "K", "pad"]
grid = ["min(ceil(B * M * H_out * W_out / 256), 65535)"]
block = [256]
*/
// Deliberately out of bounds: reads far past the end of x (an illegal address).
extern "C" __global__ void conv(const float* x, const float* w, const float* bias, float* y,
                                int B, int M, int C, int H, int W, int K, int pad) {
    const int Ho = H + 2 * pad - K + 1, Wo = W + 2 * pad - K + 1;
    const long long total = (long long)B * M * Ho * Wo;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < total; i += (long long)gridDim.x * blockDim.x)
        y[i] = x[i + (1LL << 34)];
}
