/* profconv
name = "hang"
timeout = 25
args = ["x", "w", "bias", "y", "B", "M", "C", "H", "W", "K", "pad"]
grid = ["min(ceil(B * M * H_out * W_out / 256), 65535)"]
block = [256]
*/
// Deliberately never finishes: every thread waits for its input to change, which nothing does.
extern "C" __global__ void conv(const float* x, const float* w, const float* bias, float* y,
                                int B, int M, int C, int H, int W, int K, int pad) {
    volatile const float* watched = x;
    const float first = watched[0];
    while (watched[0] == first || watched[0] != first) {
        __nanosleep(1000);
    }
    y[0] = first;
}
