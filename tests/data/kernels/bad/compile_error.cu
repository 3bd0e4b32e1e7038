/* profconv
name = "compile-error"
args = ["x", "w", "bias", "y", "B", "M", "C", "H", "W", "K", "pad"]
grid = ["min(ceil(B * M * H_out * W_out / 256), 65535)"]
block = [256]
*/
extern "C" __global__ void conv(const float* x, const float* w, const float* bias, float* y,
                                int B, int M, int C, int H, int W, int K, int pad) {
    y[0] = x[0] * undeclared_scale;
}
