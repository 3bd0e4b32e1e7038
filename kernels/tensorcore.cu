// tensorcore: implicit GEMM on Tensor Cores, mma.sync.m16n8k16 with fp16 inputs and fp32 accumulation.
// GEMM view: rows = output positions of an image (16 per MMA), columns = output channels (8 per MMA),
// reduction = (filter tap, input channel). Images are staged in shared memory channel-last (NHWC) with
// the channels padded to CP (a multiple of 8), so the reduction index of every A-fragment register is a
// pair of neighbouring channels at one tap: each register is one 32-bit shared load whose offset is
// a compile-time constant added to a per-lane base. Filters are rearranged once per block into the
// B-fragment order (one 64-bit shared load per MMA). Results go through a per-warp staging tile so
// every channel's outputs leave as contiguous half2 stores. Blocks are persistent and load the next
// group of images into registers while the current one computes (when that takes few registers).
// With UNFOLD = 1 the K column shifts of each input channel are staged as channels of their own
// (channel c*K+q at (h, w) holds x[c][h][w+q]), so the filter taps run over rows only: shallow layers
// (C = 1-3, where CP padding would waste most of every MMA) need K instead of K*K*CP/16 steps' worth.
// With RUNS = 1 (small C, UNFOLD = 0) an image is staged as NHWC rows of exactly C channels (no padding
// per pixel) and the reduction runs, for each filter row p, over the K*C consecutive halves (q, c) of
// an output position's window in that row, padded to a multiple of 8 (the pad reads the next pixels and
// meets zero weights): C = 4, K = 7 takes 7 x 32 halves instead of 49 taps x 8 padded channels. A pair
// load needs an even offset, so for odd C a second copy of each row shifted by one half is staged and
// a lane whose window starts at an odd offset reads that copy.
// Macros (all required): M C H W K P  CP RT WARPS IMGS UNFOLD  (RUNS optional, default 0)
//   RT: 16-position tiles per warp (each B fragment feeds RT MMAs); a block holds IMGS images.
#include <cuda_fp16.h>

#define HP (H + 2 * P)
#define WP (W + 2 * P)
#define HO (H + 2 * P - K + 1)
#define WO (W + 2 * P - K + 1)
#define HOWO (HO * WO)
#ifndef RUNS
#define RUNS 0
#endif
#define KW (UNFOLD ? 1 : K)                // filter taps along a staged row
#define CE (UNFOLD ? C * K : C)            // staged channels
#define KK (K * KW)                        // filter taps over the staged image
#define CPH (CP / 2)                       // channel pairs per tap
#if RUNS
#define RPR (((K * C + 7) / 8) * 8)        // halves of one filter row's run, padded to a group of 8
#define RS_MIN ((WP * C + 1) / 2 * 2 + 16)  // staged row stride in halves: even, with slack for the padded run,
#define RS (RS_MIN + (((WO * C + 1) / 2 * 2 - RS_MIN) % 64 + 64) % 64)  // then = WO*C mod 64 (banks of a wrapped tile)
#define COPIES (C % 2 ? 2 : 1)             // odd C: a second copy shifted by one half
#define SIMG (COPIES * HP * RS)            // halves per staged image (copy 0 rows, then copy 1 rows)
#define KSTEPS ((K * RPR / 8 + 1) / 2)     // 16-deep reduction steps: two groups of 8 halves each
#else
#define KSTEPS ((KK * CPH + 7) / 8)        // 16-deep reduction steps (8 channel pairs each)
#endif
#define NT ((M + 7) / 8)                   // 8-channel MMA columns
#define NPW (16 * RT)                      // positions per warp tile
#define TPI ((HOWO + NPW - 1) / NPW)       // warp tiles per image
#define THREADS (32 * WARPS)
#define SP (NPW + 8)                       // staging row stride in halves
#define WF_WORDS (KSTEPS * NT * 32 * 2)    // B fragments, 32-bit words
#if RUNS
#define XS_HALVES ((IMGS * SIMG + 7) / 8 * 8)
#else
#define XS_HALVES (IMGS * HP * WP * CP)
#endif
#define PF ((IMGS * C * H * W + THREADS - 1) / THREADS)  // pixels per thread and image group
#define PREFETCH (PF <= 24)  // hold the next group in registers while computing (when few enough)

__device__ __forceinline__ void mma16816(float* d, const unsigned* a, unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Shared-memory offset (halves) of reduction step s, half f, relative to a lane's base: the tap's
// displacement plus the first channel pair of the 4-pair group. Padding steps past the last tap
// point at tap 0 (finite data) and meet zero weights.
__device__ __forceinline__ constexpr int step_offset(int s, int f) {
#if RUNS
    return (2 * s + f < K * RPR / 8) ? ((2 * s + f) / (RPR / 8)) * RS + 8 * ((2 * s + f) % (RPR / 8)) : 0;
#else
    return ((8 * s + 4 * f) / CPH < KK)
               ? ((((8 * s + 4 * f) / CPH) / KW * WP + ((8 * s + 4 * f) / CPH) % KW) * CP + 2 * ((8 * s + 4 * f) % CPH))
               : 0;
#endif
}

extern "C" __global__ void __launch_bounds__(THREADS)
conv_tensorcore(const __half* __restrict__ x, const __half* __restrict__ w, const __half* __restrict__ bias,
                __half* __restrict__ y, int B) {
    extern __shared__ uint4 smem_tc[];
    unsigned* wf = reinterpret_cast<unsigned*>(smem_tc);   // [s][nt][lane][2]
    __half* xs = reinterpret_cast<__half*>(wf + WF_WORDS);  // [img][hp][wp][cp]
    __half* stage = xs + XS_HALVES;                          // [warp][NT*8][SP]
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int g = lane / 4, t = lane % 4;

    for (int i = threadIdx.x; i < WF_WORDS; i += THREADS) {
        const int f = i % 2, l = (i / 2) % 32, j = (i / 64) % NT, s = i / (64 * NT);
        const int n = j * 8 + l / 4, pair = 8 * s + 4 * f + l % 4;
        __half lo = __float2half(0.0f), hi = __float2half(0.0f);
#if RUNS
        // halves 2*pair, 2*pair+1 of the reduction: filter row p, position j in its run of K*C (q, c) values
        const int p = (2 * pair) / RPR, jr = (2 * pair) % RPR;
        if (n < M && p < K) {
            if (jr < K * C) lo = w[((size_t)n * C + jr % C) * K * K + p * K + jr / C];
            if (jr + 1 < K * C) hi = w[((size_t)n * C + (jr + 1) % C) * K * K + p * K + (jr + 1) / C];
        }
#else
        const int tap = pair / CPH, c = 2 * (pair % CPH);
        if (n < M && tap < KK) {  // staged channel ce is (input channel, column shift) when unfolded
            const int row = (tap / KW) * K + tap % KW;  // filter row p, column (tap % KW) + shift
            if (c < CE) lo = w[((size_t)n * C + c / (K / KW)) * K * K + row + c % (K / KW)];
            if (c + 1 < CE) hi = w[((size_t)n * C + (c + 1) / (K / KW)) * K * K + row + (c + 1) % (K / KW)];
        }
#endif
        const __half2 v = __halves2half2(lo, hi);
        wf[i] = *reinterpret_cast<const unsigned*>(&v);
    }
    for (int i = threadIdx.x; i < XS_HALVES / 8; i += THREADS) reinterpret_cast<uint4*>(xs)[i] = make_uint4(0, 0, 0, 0);
    float bias_lo[NT], bias_hi[NT];
#pragma unroll
    for (int j = 0; j < NT; ++j) {
        const int n = j * 8 + 2 * t;
        bias_lo[j] = n < M ? __half2float(bias[n]) : 0.0f;
        bias_hi[j] = n + 1 < M ? __half2float(bias[n + 1]) : 0.0f;
    }
    __half* st = stage + warp * (NT * 8) * SP;
    const int groups = (B + IMGS - 1) / IMGS;

    const size_t total = (size_t)B * C * H * W;
    auto place_pixel = [&](int i, __half v) {  // pixel i of the group into its place(s) in xs
        const int img = i / (C * H * W), r = i % (C * H * W);
        const int c = r / (H * W), hw = r % (H * W);
#if RUNS
        const int at = img * SIMG + (hw / W + P) * RS + (hw % W + P) * C + c;
        xs[at] = v;
        if (COPIES == 2 && at % SIMG >= 1) xs[at + HP * RS - 1] = v;  // copy 1: shifted left by one half
#else
#pragma unroll
        for (int q = 0; q < K / KW; ++q)  // one store, or K shifted copies when unfolded
            if (hw % W + P - q >= 0)
                xs[((img * HP + hw / W + P) * WP + hw % W + P - q) * CP + c * (K / KW) + q] = v;
#endif
    };
#if PREFETCH
    __half pre[PF];  // the next group's pixels, loaded while this group computes
    auto fetch = [&](int grp) {
        const size_t first = (size_t)grp * IMGS * C * H * W;
#pragma unroll
        for (int k = 0; k < PF; ++k) {
            const int i = threadIdx.x + k * THREADS;
            pre[k] = (i < IMGS * C * H * W && first + i < total) ? x[first + i] : __float2half(0.0f);
        }
    };
    if (blockIdx.x < groups) fetch(blockIdx.x);
#endif

    for (int grp = blockIdx.x; grp < groups; grp += gridDim.x) {
        const int b0 = grp * IMGS;
        __syncthreads();  // the previous group's tiles are done with xs (and the zero fill is complete)
#if PREFETCH
#pragma unroll
        for (int k = 0; k < PF; ++k)
            if (threadIdx.x + k * THREADS < IMGS * C * H * W) place_pixel(threadIdx.x + k * THREADS, pre[k]);
        __syncthreads();
        if (grp + gridDim.x < groups) fetch(grp + gridDim.x);
#else
        const size_t first = (size_t)b0 * C * H * W;
        for (int i0 = threadIdx.x; i0 < IMGS * C * H * W; i0 += 8 * THREADS) {  // 8 loads in flight per thread
            __half v[8];
#pragma unroll
            for (int k = 0; k < 8; ++k) {
                const int i = i0 + k * THREADS;
                v[k] = (i < IMGS * C * H * W && first + i < total) ? x[first + i] : __float2half(0.0f);
            }
#pragma unroll
            for (int k = 0; k < 8; ++k)
                if (i0 + k * THREADS < IMGS * C * H * W) place_pixel(i0 + k * THREADS, v[k]);
        }
        __syncthreads();
#endif
        for (int tile = warp; tile < IMGS * TPI; tile += WARPS) {
            const int img = tile / TPI, n0 = (tile % TPI) * NPW;
            const int b = b0 + img;
            if (b >= B) break;
            int base_lo[RT], base_hi[RT];
#pragma unroll
            for (int rt = 0; rt < RT; ++rt) {
                const int p_lo = min(n0 + rt * 16 + g, HOWO - 1), p_hi = min(n0 + rt * 16 + g + 8, HOWO - 1);
#if RUNS  // the window's run starts at an even offset of copy 0, or one past an even offset of copy 1
                const int s_lo = (p_lo / WO) * RS + (p_lo % WO) * C, s_hi = (p_hi / WO) * RS + (p_hi % WO) * C;
                base_lo[rt] = img * SIMG + (s_lo % 2 ? HP * RS + s_lo - 1 : s_lo) + 2 * t;
                base_hi[rt] = img * SIMG + (s_hi % 2 ? HP * RS + s_hi - 1 : s_hi) + 2 * t;
#else
                base_lo[rt] = ((img * HP + p_lo / WO) * WP + p_lo % WO) * CP + 2 * t;
                base_hi[rt] = ((img * HP + p_hi / WO) * WP + p_hi % WO) * CP + 2 * t;
#endif
            }
            float acc[RT][NT][4];
#pragma unroll
            for (int rt = 0; rt < RT; ++rt)
#pragma unroll
                for (int j = 0; j < NT; ++j) {
                    acc[rt][j][0] = acc[rt][j][2] = bias_lo[j];
                    acc[rt][j][1] = acc[rt][j][3] = bias_hi[j];
                }
#pragma unroll
            for (int s = 0; s < KSTEPS; ++s) {
                const int off0 = step_offset(s, 0), off1 = step_offset(s, 1);
                unsigned a[RT][4];
#pragma unroll
                for (int rt = 0; rt < RT; ++rt) {
                    a[rt][0] = *reinterpret_cast<const unsigned*>(xs + base_lo[rt] + off0);
                    a[rt][1] = *reinterpret_cast<const unsigned*>(xs + base_hi[rt] + off0);
                    a[rt][2] = *reinterpret_cast<const unsigned*>(xs + base_lo[rt] + off1);
                    a[rt][3] = *reinterpret_cast<const unsigned*>(xs + base_hi[rt] + off1);
                }
#pragma unroll
                for (int j = 0; j < NT; ++j) {
                    const uint2 bf = reinterpret_cast<const uint2*>(wf)[(s * NT + j) * 32 + lane];
#pragma unroll
                    for (int rt = 0; rt < RT; ++rt) mma16816(acc[rt][j], a[rt], bf.x, bf.y);
                }
            }
#pragma unroll
            for (int rt = 0; rt < RT; ++rt)
#pragma unroll
                for (int j = 0; j < NT; ++j) {
                    const int ch = j * 8 + 2 * t, col = rt * 16 + g;
                    st[ch * SP + col] = __float2half(acc[rt][j][0]);
                    st[(ch + 1) * SP + col] = __float2half(acc[rt][j][1]);
                    st[ch * SP + col + 8] = __float2half(acc[rt][j][2]);
                    st[(ch + 1) * SP + col + 8] = __float2half(acc[rt][j][3]);
                }
            __syncwarp();
            __half* out = y + (size_t)b * M * HOWO + n0;
            if (HOWO % 2 == 0) {
                for (int i = lane; i < M * (NPW / 2); i += 32) {
                    const int ch = i / (NPW / 2), pp = 2 * (i % (NPW / 2));
                    if (n0 + pp < HOWO)
                        *reinterpret_cast<__half2*>(out + (size_t)ch * HOWO + pp) =
                            *reinterpret_cast<const __half2*>(st + ch * SP + pp);
                }
            } else {
                for (int i = lane; i < M * NPW; i += 32) {
                    const int ch = i / NPW, pp = i % NPW;
                    if (n0 + pp < HOWO) out[(size_t)ch * HOWO + pp] = st[ch * SP + pp];
                }
            }
            __syncwarp();
        }
    }
}
