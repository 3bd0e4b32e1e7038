// tuned (shared-filter design): direct convolution for layers with several input channels.
// Why not constant memory here: with C > 1 a group's filters (MB*C*K*K floats) outgrow the SM's
// small immediate-constant cache, and FFMAs that read a missed constant stall the warp.
// One block takes IMGS whole images (zero-padded in shared memory once) and NG groups of MB output
// channels; the filters of those channels sit in shared memory as [group][c][p][q][mb] so each
// thread reads MB weights with float4 broadcasts. A thread computes TW consecutive outputs of a row
// in each of TH consecutive output rows for its MB channels: the K*MB weights of one filter row
// are loaded once and feed TH*TW*K*MB multiply-adds.
// Macros (all required): M C H W K P  TW TH MB NG IMGS THREADS PT
//   PT: threads per channel group (IMGS*NPOS rounded up to a warp), THREADS = NG*PT
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

extern "C" __global__ void __launch_bounds__(THREADS)
conv_tuned_smem(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
                float* __restrict__ y, int B) {
    extern __shared__ float4 smem4[];
    float* ws = reinterpret_cast<float*>(smem4);  // filters, [group][c][p][q][mb], zero past M
    float* xs = ws + WFLOATS;                     // IMGS padded images, C x HP x SW each
    const int m_block = blockIdx.y * NG * MB;
    const int b0 = blockIdx.x * IMGS;
    for (int i = threadIdx.x; i < WFLOATS; i += THREADS) {
        const int g = i / (CKK * MBP), r = i % (CKK * MBP);
        const int k = r / MBP, mb = r % MBP, m = m_block + g * MB + mb;
        ws[i] = (mb < MB && m < M) ? w[(size_t)m * CKK + k] : 0.0f;
    }
    float4* xs4 = reinterpret_cast<float4*>(xs);
    for (int i = threadIdx.x; i < IMGS * SIMG / 4; i += THREADS) xs4[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    __syncthreads();
    const size_t first = (size_t)b0 * C * H * W, total = (size_t)B * C * H * W;
#pragma unroll 8
    for (int i = threadIdx.x; i < IMGS * C * H * W; i += THREADS) {
        if (first + i < total) {
            const int img = i / (C * H * W), r = i % (C * H * W);
            const int c = r / (H * W), hw = r % (H * W);
            xs[img * SIMG + (c * HP + hw / W + P) * SW + hw % W + P] = x[first + i];
        }
    }
    __syncthreads();

    const int g = threadIdx.x / PT, t = threadIdx.x % PT;
    const int m0 = m_block + g * MB;
    if (t >= IMGS * NPOS || m0 >= M) return;
    const int img = t / NPOS, pos = t % NPOS;
    const int b = b0 + img;
    if (b >= B) return;
    const int h0 = (pos / WG) * TH, w0 = (pos % WG) * TW;

    float acc[TH][MB][TW];
#pragma unroll
    for (int mb = 0; mb < MB; ++mb) {
        const float bv = (m0 + mb < M) ? bias[m0 + mb] : 0.0f;
#pragma unroll
        for (int i = 0; i < TH; ++i)
#pragma unroll
            for (int j = 0; j < TW; ++j) acc[i][mb][j] = bv;
    }
    const float* wg = ws + g * CKK * MBP;
    const float* xi = xs + img * SIMG;
#pragma unroll 1
    for (int c = 0; c < C; ++c) {
#pragma unroll
        for (int p = 0; p < K; ++p) {
            float wr[K][MBP];  // this filter row's weights for the MB channels
#pragma unroll
            for (int q = 0; q < K; ++q) {
                const float4* wv = reinterpret_cast<const float4*>(wg + ((c * K + p) * K + q) * MBP);
#pragma unroll
                for (int v = 0; v < MBP / 4; ++v) {
                    const float4 f = wv[v];
                    wr[q][4 * v] = f.x; wr[q][4 * v + 1] = f.y; wr[q][4 * v + 2] = f.z; wr[q][4 * v + 3] = f.w;
                }
            }
#pragma unroll
            for (int i = 0; i < TH; ++i) {
                float row[ROWV];
                const int hr = h0 + i < HO ? h0 + i : HO - 1;  // a row past the map is computed, never stored
                const float* src = xi + (c * HP + hr + p) * SW + w0;
#if VEC == 4
#pragma unroll
                for (int v = 0; v < ROWV / 4; ++v) {
                    const float4 f = reinterpret_cast<const float4*>(src)[v];
                    row[4 * v] = f.x; row[4 * v + 1] = f.y; row[4 * v + 2] = f.z; row[4 * v + 3] = f.w;
                }
#elif VEC == 2
#pragma unroll
                for (int v = 0; v < ROWV / 2; ++v) {
                    const float2 f = reinterpret_cast<const float2*>(src)[v];
                    row[2 * v] = f.x; row[2 * v + 1] = f.y;
                }
#else
#pragma unroll
                for (int j = 0; j < ROWV; ++j) row[j] = src[j];
#endif
#pragma unroll
                for (int q = 0; q < K; ++q)
#pragma unroll
                    for (int mb = 0; mb < MB; ++mb)
#pragma unroll
                        for (int j = 0; j < TW; ++j) acc[i][mb][j] = fmaf(row[j + q], wr[q][mb], acc[i][mb][j]);
            }
        }
    }
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
}
