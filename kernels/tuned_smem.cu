// tuned (shared-filter design): direct convolution for layers with several input channels.
// Why not constant memory here: with C > 1 a group's filters (MB*C*K*K floats) outgrow the SM's
// small immediate-constant cache, and FFMAs that read a missed constant stall the warp.
// One block takes IMGS whole images (zero-padded in shared memory once) and NG groups of MB output
// channels; the filters of those channels sit in shared memory as [group][c][p][q][mb] so each
// thread reads MB weights with float4 broadcasts. A thread computes TW consecutive outputs of a row
// in each of TH consecutive output rows for its MB channels: every weight it loads feeds TH*TW
// multiply-adds, every input row K*MB*TW.
// Blocks are persistent (the grid covers the SMs once): each loops over groups of IMGS images and
// loads the next group's pixels into registers before computing the current one, so the global-load
// latency of one group hides behind the arithmetic of the previous one, and the filters are staged
// once per block instead of once per image.
// Macros (all required): M C H W K P  TW TH MB NG IMGS THREADS PT
//   PT: threads per channel group (IMGS*NPOS rounded up to a warp), THREADS = NG*PT
// Optional, for the fused layer (conv + bias + activation + max-pool in one kernel): POOL (window and
// stride; needs TH == POOL and TW % POOL == 0, so a thread owns whole windows) and ACT (0 none,
// 1 tanh, 2 ReLU). y is then B x M x (HO/POOL) x (WO/POOL): the full conv output never leaves the SM.
#ifndef POOL
#define POOL 1
#endif
#ifndef ACT
#define ACT 0
#endif
#define HP (H + 2 * P)
#define WP (W + 2 * P)
#define HO (H + 2 * P - K + 1)
#define WO (W + 2 * P - K + 1)
#define WG ((WO + TW - 1) / TW)
#define HG ((HO + TH - 1) / TH)
#define NPOS (HG * WG)
#define CKK (C * K * K)
#define MBP ((MB + 3) / 4 * 4)
#define ROW (TW + K - 1)
#define VEC ((TW % 4 == 0) ? 4 : (TW % 2 == 0) ? 2 : 1)
#define ROWV ((ROW + VEC - 1) / VEC * VEC)
#define SW_MIN (((WG - 1) * TW + ROWV) > WP ? ((WG - 1) * TW + ROWV) : WP)
#define SW ((SW_MIN + 3) / 4 * 4)
#define SIMG (C * HP * SW)
#define WFLOATS (NG * CKK * MBP)
#include "staging.cuh"

extern "C" __global__ void __launch_bounds__(THREADS)
conv_tuned_smem(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                float* __restrict__ y, int B) {
    extern __shared__ float4 smem4[];
    float* ws = reinterpret_cast<float*>(smem4);  // filters, [group][c][p][q][mb], zero past M
    float* xs = ws + WFLOATS;                     // IMGS padded images, C x HP x SW each
    const int m_block = blockIdx.y * NG * MB;
    for (int i = threadIdx.x; i < WFLOATS; i += THREADS) {
        const int g = i / (CKK * MBP), r = i % (CKK * MBP);
        const int k = r / MBP, mb = r % MBP, m = m_block + g * MB + mb;
        ws[i] = (mb < MB && m < M) ? w[(size_t)m * CKK + k] : 0.0f;
    }
    float4* xs4 = reinterpret_cast<float4*>(xs);
    for (int i = threadIdx.x; i < IMGS * SIMG / 4; i += THREADS) xs4[i] = make_float4(0.f, 0.f, 0.f, 0.f);

    const int groups = (B + IMGS - 1) / IMGS;
    NextImages<float> next;
    if (blockIdx.x < groups) next.load(x, blockIdx.x, B);

    const int g = threadIdx.x / PT, t = threadIdx.x % PT;
    const int m0 = m_block + g * MB;
    const int img = t / NPOS, pos = t % NPOS;
    const bool active = t < IMGS * NPOS && m0 < M;
    const int h0 = (pos / WG) * TH, w0 = (pos % WG) * TW;
    const float* wg = ws + g * CKK * MBP;
    const float* xi = xs + img * SIMG;

    for (int grp = blockIdx.x; grp < groups; grp += gridDim.x) {
        __syncthreads();  // the previous group is no longer being read (and the zero fill is done)
        next.store(xs);
        __syncthreads();
        if (grp + gridDim.x < groups) next.load(x, grp + gridDim.x, B);  // in flight while this group computes
        const int b = grp * IMGS + img;
        if (!active || b >= B) continue;
        float acc[TH][MB][TW];
#pragma unroll
        for (int mb = 0; mb < MB; ++mb) {
            const float bv = (m0 + mb < M) ? bias[m0 + mb] : 0.0f;
#pragma unroll
            for (int i = 0; i < TH; ++i)
#pragma unroll
                for (int j = 0; j < TW; ++j) acc[i][mb][j] = bv;
        }
#pragma unroll 1
        for (int c = 0; c < C; ++c) {
#pragma unroll
            for (int p = 0; p < K; ++p) {
                float row[TH][ROWV];  // input row h0+i+p for each of the TH output rows
#pragma unroll
                for (int i = 0; i < TH; ++i) {
                    const int hr = h0 + i < HO ? h0 + i : HO - 1;  // a row past the map is computed, never stored
                    const float* src = xi + (c * HP + hr + p) * SW + w0;
#if VEC == 4
#pragma unroll
                    for (int v = 0; v < ROWV / 4; ++v) {
                        const float4 f = reinterpret_cast<const float4*>(src)[v];
                        row[i][4 * v] = f.x; row[i][4 * v + 1] = f.y; row[i][4 * v + 2] = f.z; row[i][4 * v + 3] = f.w;
                    }
#elif VEC == 2
#pragma unroll
                    for (int v = 0; v < ROWV / 2; ++v) {
                        const float2 f = reinterpret_cast<const float2*>(src)[v];
                        row[i][2 * v] = f.x; row[i][2 * v + 1] = f.y;
                    }
#else
#pragma unroll
                    for (int j = 0; j < ROWV; ++j) row[i][j] = src[j];
#endif
                }
#pragma unroll
                for (int q = 0; q < K; ++q) {
                    float wr[MBP];  // one filter tap of the MB channels: float4 broadcasts, used TH*TW times each
                    const float4* wv = reinterpret_cast<const float4*>(wg + ((c * K + p) * K + q) * MBP);
#pragma unroll
                    for (int v = 0; v < MBP / 4; ++v) {
                        const float4 f = wv[v];
                        wr[4 * v] = f.x; wr[4 * v + 1] = f.y; wr[4 * v + 2] = f.z; wr[4 * v + 3] = f.w;
                    }
#pragma unroll
                    for (int i = 0; i < TH; ++i)
#pragma unroll
                        for (int mb = 0; mb < MB; ++mb)
#pragma unroll
                            for (int j = 0; j < TW; ++j) acc[i][mb][j] = fmaf(row[i][j + q], wr[mb], acc[i][mb][j]);
                }
            }
        }
#if POOL > 1
        constexpr int HQ = HO / POOL, WQ = WO / POOL;  // floor, as the course's pooling layer
        if (h0 / POOL < HQ) {
#pragma unroll
            for (int mb = 0; mb < MB; ++mb) {
                if (m0 + mb >= M) break;
                float* out = y + (((size_t)b * M + m0 + mb) * HQ + h0 / POOL) * WQ + w0 / POOL;
#pragma unroll
                for (int jq = 0; jq < TW / POOL; ++jq) {
                    if (w0 / POOL + jq >= WQ) break;
                    float v = acc[0][mb][jq * POOL];
#pragma unroll
                    for (int i = 0; i < POOL; ++i)
#pragma unroll
                        for (int j = 0; j < POOL; ++j) v = fmaxf(v, acc[i][mb][jq * POOL + j]);
                    // tanh and ReLU are monotonic: the activation of the max is the max of the activations
                    out[jq] = ACT == 1 ? tanhf(v) : ACT == 2 ? fmaxf(v, 0.0f) : v;
                }
            }
        }
#else
#pragma unroll
        for (int i = 0; i < TH; ++i) {
#pragma unroll
            for (int mb = 0; mb < MB; ++mb) {
                if (m0 + mb >= M || h0 + i >= HO) break;
                float* out = y + (((size_t)b * M + m0 + mb) * HO + h0 + i) * WO + w0;
                const float* a = acc[i][mb];
                if (TW % 4 == 0 && WO % 4 == 0) {
#pragma unroll
                    for (int j = 0; j < TW; j += 4)
                        if (w0 + j < WO)
                            *reinterpret_cast<float4*>(out + j) = make_float4(a[j % TW], a[(j + 1) % TW], a[(j + 2) % TW], a[(j + 3) % TW]);
                } else if (TW % 2 == 0 && WO % 2 == 0) {
#pragma unroll
                    for (int j = 0; j < TW; j += 2)
                        if (w0 + j < WO) *reinterpret_cast<float2*>(out + j) = make_float2(a[j % TW], a[(j + 1) % TW]);
                } else {
#pragma unroll
                    for (int j = 0; j < TW; ++j)
                        if (w0 + j < WO) out[j] = a[j];
                }
            }
        }
#endif
    }
}
