// fp16: the tuned shared-filter design in half2 arithmetic. Input, filters, bias and output are
// half; one HFMA2 does two multiply-adds (two neighbouring outputs of a row against one weight
// duplicated into both halves), so the FMA rate and the bytes moved are both twice fp32's.
// Sums run in half2 over one input channel's K*K taps (at most 49 terms), then fold into fp32
// accumulators, so deep layers (C = 16-20) do not lose precision to a long half-precision sum.
// Blocks are persistent and prefetch the next group of images into registers while computing the
// current one (kernels/staging.cuh, shared with tuned_smem.cu).
// Macros (all required): M C H W K P  TW MB NG IMGS THREADS PT  (TW even)
#include <cuda_fp16.h>

#define HP (H + 2 * P)
#define WP (W + 2 * P)
#define HO (H + 2 * P - K + 1)
#define WO (W + 2 * P - K + 1)
#define WG ((WO + TW - 1) / TW)
#define NPOS (HO * WG)
#define CKK (C * K * K)
#define MBP ((MB + 3) / 4 * 4)
#define TW2 (TW / 2)
#define ROW2 ((TW + K) / 2 + 1)  // half2 pairs a thread reads per input row (one spare for odd shifts)
#define SW_MIN (((WG - 1) * TW + 2 * ROW2) > WP ? ((WG - 1) * TW + 2 * ROW2) : WP)
#define SW ((SW_MIN + 7) / 8 * 8)  // halves per shared row: even, so rows start 4-byte aligned
#define SIMG (C * HP * SW)
#define WPAIRS (NG * CKK * MBP)   // half2 (w, w) pairs of the block's filters
#include "staging.cuh"

extern "C" __global__ void __launch_bounds__(THREADS)
conv_fp16(const __half* __restrict__ x, const __half* __restrict__ w, const __half* __restrict__ bias,
          __half* __restrict__ y, int B) {
    extern __shared__ uint4 smem16[];
    __half2* ws = reinterpret_cast<__half2*>(smem16);  // [group][c][p][q][mb] duplicated weights
    __half* xs = reinterpret_cast<__half*>(ws + WPAIRS);
    const int m_block = blockIdx.y * NG * MB;
    for (int i = threadIdx.x; i < WPAIRS; i += THREADS) {
        const int g = i / (CKK * MBP), r = i % (CKK * MBP);
        const int k = r / MBP, mb = r % MBP, m = m_block + g * MB + mb;
        const __half v = (mb < MB && m < M) ? w[(size_t)m * CKK + k] : __float2half(0.0f);
        ws[i] = __halves2half2(v, v);
    }
    uint4* xs16 = reinterpret_cast<uint4*>(xs);
    for (int i = threadIdx.x; i < IMGS * SIMG / 8; i += THREADS) xs16[i] = make_uint4(0, 0, 0, 0);

    const int groups = (B + IMGS - 1) / IMGS;
    NextImages<__half> next;
    if (blockIdx.x < groups) next.load(x, blockIdx.x, B);

    const int g = threadIdx.x / PT, t = threadIdx.x % PT;
    const int m0 = m_block + g * MB;
    const int img = t / NPOS, pos = t % NPOS;
    const bool active = t < IMGS * NPOS && m0 < M;
    const int h = pos / WG, w0 = (pos % WG) * TW;
    const __half2* wg = ws + g * CKK * MBP;
    const __half* xi = xs + img * SIMG;

    for (int grp = blockIdx.x; grp < groups; grp += gridDim.x) {
        __syncthreads();  // the previous group is no longer being read (and the zero fill is done)
        next.store(xs);
        __syncthreads();
        if (grp + gridDim.x < groups) next.load(x, grp + gridDim.x, B);  // in flight while this group computes
        const int b = grp * IMGS + img;
        if (!active || b >= B) continue;
        float acc[MB][TW];
#pragma unroll
        for (int mb = 0; mb < MB; ++mb) {
            const float bv = (m0 + mb < M) ? __half2float(bias[m0 + mb]) : 0.0f;
#pragma unroll
            for (int j = 0; j < TW; ++j) acc[mb][j] = bv;
        }
#pragma unroll 1
        for (int c = 0; c < C; ++c) {
            __half2 part[MB][TW2];
#pragma unroll
            for (int mb = 0; mb < MB; ++mb)
#pragma unroll
                for (int j = 0; j < TW2; ++j) part[mb][j] = __float2half2_rn(0.0f);
#pragma unroll
            for (int p = 0; p < K; ++p) {
                // even[i] = (row[2i], row[2i+1]); odd[i] = (row[2i+1], row[2i+2]): the pairs for even and odd q
                __half2 even[ROW2], odd[ROW2 - 1];
                const __half2* src = reinterpret_cast<const __half2*>(xi + (c * HP + h + p) * SW + w0);
#pragma unroll
                for (int i = 0; i < ROW2; ++i) even[i] = src[i];
#pragma unroll
                for (int i = 0; i + 1 < ROW2; ++i) odd[i] = __halves2half2(__high2half(even[i]), __low2half(even[i + 1]));
#pragma unroll
                for (int q = 0; q < K; ++q) {
                    __half2 wr[MBP];
                    const uint4* wv = reinterpret_cast<const uint4*>(wg + ((c * K + p) * K + q) * MBP);
#pragma unroll
                    for (int v = 0; v < MBP / 4; ++v) {
                        const uint4 u = wv[v];
                        wr[4 * v] = *reinterpret_cast<const __half2*>(&u.x);
                        wr[4 * v + 1] = *reinterpret_cast<const __half2*>(&u.y);
                        wr[4 * v + 2] = *reinterpret_cast<const __half2*>(&u.z);
                        wr[4 * v + 3] = *reinterpret_cast<const __half2*>(&u.w);
                    }
#pragma unroll
                    for (int mb = 0; mb < MB; ++mb)
#pragma unroll
                        for (int j = 0; j < TW2; ++j)
                            part[mb][j] = __hfma2(q % 2 == 0 ? even[j + q / 2] : odd[j + q / 2], wr[mb], part[mb][j]);
                }
            }
#pragma unroll
            for (int mb = 0; mb < MB; ++mb)
#pragma unroll
                for (int j = 0; j < TW2; ++j) {
                    const float2 f = __half22float2(part[mb][j]);
                    acc[mb][2 * j] += f.x;
                    acc[mb][2 * j + 1] += f.y;
                }
        }
#pragma unroll
        for (int mb = 0; mb < MB; ++mb) {
            if (m0 + mb >= M) break;
            __half* out = y + (((size_t)b * M + m0 + mb) * HO + h) * WO + w0;
            if (WO % 2 == 0) {
#pragma unroll
                for (int j = 0; j < TW2; ++j)
                    if (w0 + 2 * j < WO)
                        reinterpret_cast<__half2*>(out)[j] = __floats2half2_rn(acc[mb][2 * j], acc[mb][2 * j + 1]);
            } else {
#pragma unroll
                for (int j = 0; j < TW; ++j)
                    if (w0 + j < WO) out[j] = __float2half(acc[mb][j]);
            }
        }
    }
}
