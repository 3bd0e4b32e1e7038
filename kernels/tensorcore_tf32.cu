// tensorcore-tf32 and tensorcore-3xtf32: implicit GEMM on Tensor Cores with fp32 data in and out,
// mma.sync.m16n8k8 with TF32 operands and fp32 accumulation.
// GEMM view: rows = output positions of an image (16 per MMA), columns = output channels (8 per MMA),
// reduction = the K x K x C filter window. Images are staged in shared memory channel-last (NHWC),
// zero-padded, so the reduction can run over memory that is contiguous:
//   RED = 0 (row-contiguous, small C): for each filter row p the K*C values (q, c) of an output
//     position are K*C consecutive floats of the staged row; each row's run is padded to a multiple of
//     8 (the padding reads the next pixels and meets zero weights). C = 1 wastes K*8 - K*K... nothing
//     like the 7/8 of padding every pixel to 8 channels.
//   RED = 1 (tap-major, C a multiple of 4 after padding to CP4): for each tap (p, q), CP4 channels.
// Every A register is then one 32-bit shared load at a per-lane base plus a compile-time offset.
// SPLIT = 1 (TF32): the staged image is rounded to TF32 once; one MMA per tile.
// SPLIT = 3 (3xTF32, fp32-accurate): every operand x = big + small with big = tf32(x) and
//   small = tf32(x - big), both rounded to nearest; acc += a_small*b_big + a_big*b_small + a_big*b_big
//   (the small*small term, ~2^-22 relative, is dropped): three MMAs per tile, error near fp32's.
//   The big*big products of CH steps go to a fresh accumulator that is then added to the total in fp32
//   (the tensor cores' accumulation rounds toward zero: one long chain drifted to 4e-6 at 588 terms).
// A operands are rounded to TF32 in registers (bits + half a TF32 ulp; the MMA ignores the low 13 bits).
// Filters are rearranged once per block into the B-fragment order (one 64-bit load per MMA column).
// Blocks are persistent; each holds IMGS images. The next group of images is fetched while the current
// one computes: ASYNC = 1 with cp.async into a second buffer (no registers held, as many loads in
// flight as elements), else into registers when few (PREFETCH), else in batches of 8 loads per thread.
// Macros (all required): M C H W K P  SPLIT RED CS RT WARPS IMGS   (ASYNC optional, default 0)
//   CS: floats per staged pixel (C for RED = 0; >= CP4, 4 mod 8 for conflict-free fragment loads, for RED = 1)
#define HP (H + 2 * P)
#define WP (W + 2 * P)
#define HO (HP - K + 1)
#define WO (WP - K + 1)
#define HOWO (HO * WO)
#define NT ((M + 7) / 8)                 // 8-channel MMA columns
#define NPW (16 * RT)                    // positions per warp tile
#define TPI ((HOWO + NPW - 1) / NPW)     // warp tiles per image
#define THREADS (32 * WARPS)
#if RED == 0
#define RPR (((K * C + 7) / 8) * 8)      // reduction elements per filter row
#define KRED (K * RPR)
#else
#define CP4 (((C + 3) / 4) * 4)
#define KRED (((K * K * CP4 + 7) / 8) * 8)
#endif
#define KSTEPS (KRED / 8)
#define RS_MIN (WP * CS + 8)             // floats per staged row: 8 of slack for the row-contiguous over-read,
#define RS (RS_MIN + ((WO * CS - RS_MIN) % 32 + 32) % 32)  // then up to RS = WO*CS mod 32: the fragment loads
                                         // of a tile that wraps to the next output row keep the banks of one row
#define SIMG (HP * RS)                   // floats per staged image
#ifndef ASYNC
#define ASYNC 0
#endif
#define XS_FLOATS ((ASYNC ? 2 : 1) * IMGS * SIMG + 8)
#define CH 8                             // 3xTF32: steps per partial accumulator
#define WF_WORDS (KSTEPS * NT * 64 * (SPLIT == 3 ? 2 : 1))  // B fragments: [step][column][lane][2 or 4]
#define PF ((IMGS * C * H * W + THREADS - 1) / THREADS)  // pixels per thread and image group
#define PREFETCH (!ASYNC && PF <= 32)

// Round to the nearest TF32 value (ties away from zero) with integer operations: the tensor cores read
// the upper 19 bits of an operand, so big = bits + half an ulp of TF32 with the low 13 bits cleared.
// (cvt.rna.tf32.f32 is emulated by ~5 instructions with NaN/Inf handling on sm_90; data here is finite.)
__device__ __forceinline__ unsigned to_tf32(float x) { return (__float_as_uint(x) + 0x1000u) & 0xffffe000u; }

// x = big + small exactly (small computed in fp32), small then rounded like big: |error| <= 2^-22 |x|.
__device__ __forceinline__ void split_tf32(unsigned xb, unsigned& big, unsigned& small) {
    big = (xb + 0x1000u) & 0xffffe000u;
    small = __float_as_uint(__uint_as_float(xb) - __uint_as_float(big)) + 0x1000u;
}

__device__ __forceinline__ void cp_async4(float* dst, const float* src) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;" ::"r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src));
}

__device__ __forceinline__ void mma1688(float* d, const unsigned* a, unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Offset (floats) of the 4-element group g = 2 * step + half of the reduction, from a lane's base.
// Groups past the filter (padding steps) point at the base: finite data that meets zero weights.
__device__ __forceinline__ constexpr int group_offset(int g) {
#if RED == 0
    return (g / (RPR / 4)) * RS + 4 * (g % (RPR / 4));
#else
    return (g / (CP4 / 4) < K * K)
               ? ((g / (CP4 / 4)) / K * RS + (g / (CP4 / 4)) % K * CS + 4 * (g % (CP4 / 4)))
               : 0;
#endif
}

// The filter value at reduction index k of output channel n (zero past the filter or past M).
__device__ __forceinline__ float filter_at(const float* __restrict__ w, int n, int k) {
    if (n >= M || k >= KRED) return 0.0f;
#if RED == 0
    const int p = k / RPR, j = k % RPR;
    if (j >= K * C) return 0.0f;
    const int q = j / C, c = j % C;
#else
    const int tap = k / CP4, c = k % CP4;
    if (tap >= K * K || c >= C) return 0.0f;
    const int p = tap / K, q = tap % K;
#endif
    return w[((n * C + c) * K + p) * K + q];
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)  // 1: no register cap for a second block
conv_tensorcore_tf32(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                     float* __restrict__ y, int B) {
    extern __shared__ uint4 smem_tf32[];
    unsigned* wf = reinterpret_cast<unsigned*>(smem_tf32);  // [s][nt][lane][2]
    float* xs = reinterpret_cast<float*>(wf + WF_WORDS);    // [img][HP][RS]
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int g = lane / 4, t = lane % 4;

    for (int i = threadIdx.x; i < KSTEPS * NT * 64; i += THREADS) {
        const int f = i % 2, l = (i / 2) % 32, j = (i / 64) % NT, s = i / (64 * NT);
        const float v = filter_at(w, j * 8 + l / 4, 8 * s + 4 * f + l % 4);
#if SPLIT == 3  // split once here: (big b0, big b1, small b0, small b1) per lane, one 128-bit load per MMA column
        unsigned big, small;
        split_tf32(__float_as_uint(v), big, small);
        wf[2 * (i - f) + f] = big;
        wf[2 * (i - f) + 2 + f] = small;
#else
        wf[i] = to_tf32(v);
#endif
    }
    for (int i = threadIdx.x; i < XS_FLOATS; i += THREADS) xs[i] = 0.0f;
    float bias_lo[NT], bias_hi[NT];
#pragma unroll
    for (int j = 0; j < NT; ++j) {
        const int n = j * 8 + 2 * t;
        bias_lo[j] = n < M ? bias[n] : 0.0f;
        bias_hi[j] = n + 1 < M ? bias[n + 1] : 0.0f;
    }
    const int groups = (B + IMGS - 1) / IMGS;
    const size_t total = (size_t)B * C * H * W;
    [[maybe_unused]] auto place = [&](int i, float v) {  // pixel i (NCHW order within the group) into its NHWC place
        const int img = i / (C * H * W), r = i % (C * H * W);
        const int c = r / (H * W), hw = r % (H * W);
        xs[img * SIMG + (hw / W + P) * RS + (hw % W + P) * CS + c] = v;
    };
#if ASYNC
    auto issue = [&](int grp, int buf) {  // the group's pixels into buffer buf, asynchronously
        const size_t first = (size_t)grp * IMGS * C * H * W;
        for (int i = threadIdx.x; i < IMGS * C * H * W; i += THREADS) {
            if (first + i >= total) break;
            const int img = i / (C * H * W), r = i % (C * H * W);
            const int c = r / (H * W), hw = r % (H * W);
            cp_async4(xs + (buf * IMGS + img) * SIMG + (hw / W + P) * RS + (hw % W + P) * CS + c, x + first + i);
        }
        asm volatile("cp.async.commit_group;");
    };
    __syncthreads();  // the zero fill is complete before any cp.async lands (a later zero store would erase it)
    if (blockIdx.x < groups) issue(blockIdx.x, 0);
    int it = 0;
#elif PREFETCH
    float pre[PF];
    auto fetch = [&](int grp) {
        const size_t first = (size_t)grp * IMGS * C * H * W;
#pragma unroll
        for (int k = 0; k < PF; ++k) {
            const int i = threadIdx.x + k * THREADS;
            pre[k] = (i < IMGS * C * H * W && first + i < total) ? x[first + i] : 0.0f;
        }
    };
    if (blockIdx.x < groups) fetch(blockIdx.x);
#endif

    for (int grp = blockIdx.x; grp < groups; grp += gridDim.x) {
        const int b0 = grp * IMGS;
        __syncthreads();  // the previous group is done with xs (and the zero fill is complete)
#if ASYNC
        const int buf = it++ & 1;  // this group's buffer; the next group goes to the other one
        if (grp + gridDim.x < groups) {
            issue(grp + gridDim.x, buf ^ 1);
            asm volatile("cp.async.wait_group 1;" ::: "memory");  // all but the group just issued
        } else {
            asm volatile("cp.async.wait_group 0;" ::: "memory");
        }
        __syncthreads();
        const float* xg = xs + buf * IMGS * SIMG;
#elif PREFETCH
#pragma unroll
        for (int k = 0; k < PF; ++k)
            if (threadIdx.x + k * THREADS < IMGS * C * H * W) place(threadIdx.x + k * THREADS, pre[k]);
        __syncthreads();
        if (grp + gridDim.x < groups) fetch(grp + gridDim.x);
#else
        const size_t first = (size_t)b0 * C * H * W;
        for (int i0 = threadIdx.x; i0 < IMGS * C * H * W; i0 += 8 * THREADS) {  // 8 loads in flight per thread
            float v[8];
#pragma unroll
            for (int k = 0; k < 8; ++k) {
                const int i = i0 + k * THREADS;
                v[k] = (i < IMGS * C * H * W && first + i < total) ? x[first + i] : 0.0f;
            }
#pragma unroll
            for (int k = 0; k < 8; ++k)
                if (i0 + k * THREADS < IMGS * C * H * W) place(i0 + k * THREADS, v[k]);
        }
        __syncthreads();
#endif
#if !ASYNC
        const float* xg = xs;
#endif
        for (int tile = warp; tile < IMGS * TPI; tile += WARPS) {
            const int img = tile / TPI, n0 = (tile % TPI) * NPW;
            const int b = b0 + img;
            if (b >= B) break;
            int base_lo[RT], base_hi[RT];
#pragma unroll
            for (int rt = 0; rt < RT; ++rt) {
                const int p_lo = min(n0 + rt * 16 + g, HOWO - 1), p_hi = min(n0 + rt * 16 + g + 8, HOWO - 1);
                base_lo[rt] = img * SIMG + (p_lo / WO) * RS + (p_lo % WO) * CS + t;
                base_hi[rt] = img * SIMG + (p_hi / WO) * RS + (p_hi % WO) * CS + t;
            }
            float acc[RT][NT][4];
#pragma unroll
            for (int rt = 0; rt < RT; ++rt)
#pragma unroll
                for (int j = 0; j < NT; ++j) {
                    acc[rt][j][0] = acc[rt][j][2] = bias_lo[j];
                    acc[rt][j][1] = acc[rt][j][3] = bias_hi[j];
                }
#if SPLIT == 3
            float part[RT][NT][4];
#pragma unroll
            for (int rt = 0; rt < RT; ++rt)
#pragma unroll
                for (int j = 0; j < NT; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) part[rt][j][e] = 0.0f;
#endif
#pragma unroll
            for (int s = 0; s < KSTEPS; ++s) {
                const int off0 = group_offset(2 * s), off1 = group_offset(2 * s + 1);
                unsigned a[RT][4];
#pragma unroll
                for (int rt = 0; rt < RT; ++rt) {
                    a[rt][0] = __float_as_uint(xg[base_lo[rt] + off0]);
                    a[rt][1] = __float_as_uint(xg[base_hi[rt] + off0]);
                    a[rt][2] = __float_as_uint(xg[base_lo[rt] + off1]);
                    a[rt][3] = __float_as_uint(xg[base_hi[rt] + off1]);
#if SPLIT == 1
#pragma unroll
                    for (int e = 0; e < 4; ++e) a[rt][e] += 0x1000u;  // round to nearest TF32 (the MMA truncates)
#endif
                }
#if SPLIT == 3
                unsigned as[RT][4];
#pragma unroll
                for (int rt = 0; rt < RT; ++rt)
#pragma unroll
                    for (int e = 0; e < 4; ++e) split_tf32(a[rt][e], a[rt][e], as[rt][e]);
#endif
#pragma unroll
                for (int j = 0; j < NT; ++j) {
#if SPLIT == 3
                    const uint4 bq = reinterpret_cast<const uint4*>(wf)[(s * NT + j) * 32 + lane];
                    const unsigned bb0 = bq.x, bb1 = bq.y, bs0 = bq.z, bs1 = bq.w;
#pragma unroll
                    for (int rt = 0; rt < RT; ++rt) {
                        mma1688(acc[rt][j], as[rt], bb0, bb1);
                        mma1688(acc[rt][j], a[rt], bs0, bs1);
                        mma1688(part[rt][j], a[rt], bb0, bb1);
                    }
#else
                    const uint2 bf = reinterpret_cast<const uint2*>(wf)[(s * NT + j) * 32 + lane];
#pragma unroll
                    for (int rt = 0; rt < RT; ++rt) mma1688(acc[rt][j], a[rt], bf.x, bf.y);
#endif
                }
#if SPLIT == 3
                if (s % CH == CH - 1 || s == KSTEPS - 1) {  // fold the partial sums in fp32, round to nearest
#pragma unroll
                    for (int rt = 0; rt < RT; ++rt)
#pragma unroll
                        for (int j = 0; j < NT; ++j)
#pragma unroll
                            for (int e = 0; e < 4; ++e) {
                                acc[rt][j][e] += part[rt][j][e];
                                part[rt][j][e] = 0.0f;
                            }
                }
#endif
            }
            // c0, c1: position g, channels 2t, 2t+1; c2, c3: position g + 8. Each store instruction
            // writes 8 consecutive positions of 4 channels: whole 32-byte sectors.
            float* out = y + (size_t)b * M * HOWO;
#pragma unroll
            for (int rt = 0; rt < RT; ++rt) {
                const int p_lo = n0 + rt * 16 + g, p_hi = p_lo + 8;
#pragma unroll
                for (int j = 0; j < NT; ++j) {
                    const int n = j * 8 + 2 * t;
                    if (n < M) {
                        if (p_lo < HOWO) out[(size_t)n * HOWO + p_lo] = acc[rt][j][0];
                        if (p_hi < HOWO) out[(size_t)n * HOWO + p_hi] = acc[rt][j][2];
                    }
                    if (n + 1 < M) {
                        if (p_lo < HOWO) out[(size_t)(n + 1) * HOWO + p_lo] = acc[rt][j][1];
                        if (p_hi < HOWO) out[(size_t)(n + 1) * HOWO + p_hi] = acc[rt][j][3];
                    }
                }
            }
        }
    }
}
