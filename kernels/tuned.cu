// tuned: direct convolution specialised per layer and per group of output channels at compile time.
// One launch computes output channels M0 .. M0+MB-1. A block takes IMGS whole images (zero-padded
// into shared memory once); each thread computes TW consecutive outputs of a row for the MB
// channels in registers, so every input value read from shared memory feeds K*MB multiply-adds.
// The MB filters sit in constant memory and, with every loop unrolled, each weight's address is a
// compile-time constant: it becomes an operand of the FFMA itself, with no load instruction.
// Outputs go out as 16- or 8-byte vector stores when the row allows it.
// With PERSIST = 1 the grid covers the SMs once and each block loops over groups of images, loading the
// next group into registers while computing the current one (the load latency of a 1,024-thread block
// was exposed: one such block fills an SM).
// Macros (all required): M C H W K P  M0 MB TW IMGS THREADS CUNROLL  (PERSIST optional, default 0)
#define HP (H + 2 * P)
#define WP (W + 2 * P)
#define HO (H + 2 * P - K + 1)
#define WO (W + 2 * P - K + 1)
#define WG ((WO + TW - 1) / TW)
#define NPOS (HO * WG)
#define IMG_FLOATS (C * HP * WP)
#define ROW (TW + K - 1)

#ifndef PERSIST
#define PERSIST 0
#endif

__constant__ float wc[MB * C * K * K];  // filters of channels M0 .. M0+MB-1

extern "C" __global__ void __launch_bounds__(THREADS)
conv_tuned(const float* __restrict__ x, const float* __restrict__ bias, float* __restrict__ y, int B) {
    extern __shared__ float xs[];  // IMGS images, C x HP x (WP + TW) each (TW columns of slack)
    constexpr int SW = WP + TW;    // row stride with slack so the last group can over-read zeros
    constexpr int SIMG = C * HP * SW;
    constexpr int LOADS = (IMGS * SIMG + THREADS - 1) / THREADS;
    float v[LOADS];  // all of a thread's global loads are issued before the first shared store
    auto load = [&](int b0) {  // images b0 .. b0+IMGS-1, zero-padded, in xs order
#pragma unroll
        for (int k = 0; k < LOADS; ++k) {
            const int i = threadIdx.x + k * THREADS;
            const int img = i / SIMG, r = i % SIMG;
            const int c = r / (HP * SW), hw = r % (HP * SW);
            const int hh = hw / SW - P, ww = hw % SW - P;
            v[k] = (i < IMGS * SIMG && b0 + img < B && hh >= 0 && hh < H && ww >= 0 && ww < W)
                       ? x[((size_t)(b0 + img) * C + c) * (H * W) + hh * W + ww] : 0.0f;
        }
    };
    auto store = [&]() {
#pragma unroll
        for (int k = 0; k < LOADS; ++k)
            if (threadIdx.x + k * THREADS < IMGS * SIMG) xs[threadIdx.x + k * THREADS] = v[k];
    };
    auto compute = [&](int b0) {
        for (int t = threadIdx.x; t < IMGS * NPOS; t += THREADS) {
            const int img = t / NPOS, pos = t % NPOS;
            const int b = b0 + img;
            if (b >= B) break;
            const int h = pos / WG, w0 = (pos % WG) * TW;
            float acc[MB][TW];
#pragma unroll
            for (int mb = 0; mb < MB; ++mb) {
                const float bv = bias[M0 + mb];
#pragma unroll
                for (int j = 0; j < TW; ++j) acc[mb][j] = bv;
            }
            const float* xi = xs + img * SIMG;
#pragma unroll CUNROLL
            for (int c = 0; c < C; ++c) {
#pragma unroll
                for (int p = 0; p < K; ++p) {
                    float row[ROW];
                    const float* src = xi + (c * HP + h + p) * SW + w0;
#pragma unroll
                    for (int j = 0; j < ROW; ++j) row[j] = src[j];
#pragma unroll
                    for (int mb = 0; mb < MB; ++mb) {
                        const int wbase = ((mb * C + c) * K + p) * K;
#pragma unroll
                        for (int q = 0; q < K; ++q) {
                            const float wv = wc[wbase + q];
#pragma unroll
                            for (int j = 0; j < TW; ++j) acc[mb][j] = fmaf(row[j + q], wv, acc[mb][j]);
                        }
                    }
                }
            }
#pragma unroll
            for (int mb = 0; mb < MB; ++mb) {
                float* out = y + (((size_t)b * M + M0 + mb) * HO + h) * WO + w0;
                if (TW == 4 && WO % 4 == 0) {
                    *reinterpret_cast<float4*>(out) = make_float4(acc[mb][0], acc[mb][TW > 1 ? 1 : 0],
                                                                  acc[mb][TW > 2 ? 2 : 0], acc[mb][TW > 3 ? 3 : 0]);
                } else if (TW == 2 && WO % 2 == 0) {
                    *reinterpret_cast<float2*>(out) = make_float2(acc[mb][0], acc[mb][TW > 1 ? 1 : 0]);
                } else {
#pragma unroll
                    for (int j = 0; j < TW; ++j)
                        if (w0 + j < WO) out[j] = acc[mb][j];
                }
            }
        }
    };
#if PERSIST  // persistent blocks: the next images load into registers while these compute
    const int groups = (B + IMGS - 1) / IMGS;
    if (blockIdx.x < groups) load(blockIdx.x * IMGS);
    for (int grp = blockIdx.x; grp < groups; grp += gridDim.x) {
        __syncthreads();  // the previous group is computed: xs may be overwritten
        store();
        __syncthreads();
        if (grp + gridDim.x < groups) load((grp + gridDim.x) * IMGS);
        compute(grp * IMGS);
    }
#else
    load(blockIdx.x * IMGS);
    store();
    __syncthreads();
    compute(blockIdx.x * IMGS);
#endif
}
