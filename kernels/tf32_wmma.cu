// tf32-wmma: the course's Tensor Core form (ECE408 Spring 2025, req_1: TF32 through the WMMA API), ours.
// An implicit GEMM: output positions x output channels, reduced over the K x K x C filter window,
// with nvcuda::wmma m16n16k8 fragments of precision::tf32 and fp32 accumulators.
// Each block stages IMGS whole images channel-last (NHWC, zero-padded, values rounded to TF32) and the
// filters as a [channel][reduction] matrix in shared memory. A warp takes 16 output positions at a
// time; for each filter row p it unrolls its 16 x (K*C) slice of the im2col matrix into its own tile
// in shared memory (the K*C values of one position and filter row are consecutive in an NHWC row),
// then loads 16 x 8 A fragments from that tile and multiplies them with every 16-channel B fragment.
// Results go through the warp's tile to the NCHW output, one channel's 16 positions per store run.
// Blocks are persistent and load the next group of images into registers while the current computes.
// The WMMA calls are written as the PTX `wmma` instructions that nvcuda::wmma's load_matrix_sync,
// mma_sync and store_matrix_sync compile to (same fragments, same m16n16k8 shape), for two reasons:
// NVRTC from CUDA's pip wheels has no crt/mma.h (`#include <mma.h>` fails there), and the API takes
// generic pointers, so its loads from shared memory compile to generic LD instructions; here they
// name the .shared state space. wmma_* below mirror the API one to one.
// Macros (all required): M C H W K P  WARPS IMGS

#define HP (H + 2 * P)
#define WP (W + 2 * P)
#define HO (HP - K + 1)
#define WO (WP - K + 1)
#define HOWO (HO * WO)
#define THREADS (32 * WARPS)
#define NF ((M + 15) / 16)               // 16-channel B fragments
#define RPR (((K * C + 7) / 8) * 8)      // reduction elements per filter row, a multiple of the k = 8 step
#define KRED (K * RPR)
#define LDW (KRED + 4)                   // filter matrix row stride (floats)
#define RS (WP * C + 8)                  // staged row stride: slack for the padded run of the last pixel
#define SIMG (HP * RS)
#define XS_FLOATS ((IMGS * SIMG + 15) / 8 * 8)  // 32-byte aligned tiles follow
#define LDA (RPR + 4)                    // a warp's unrolled tile: 16 rows of RPR (+4 against bank conflicts)
#define TILE_FLOATS (16 * LDA > 16 * NF * 16 + 16 ? 16 * LDA : 16 * NF * 16 + 16)
#define TILES ((HOWO + 15) / 16)         // 16-position tiles per image
#define PF ((IMGS * C * H * W + THREADS - 1) / THREADS)
#define PREFETCH (PF <= 32)

struct FragA { unsigned x[4]; };    // wmma::fragment<matrix_a, 16, 16, 8, precision::tf32, row_major>
struct FragB { unsigned x[4]; };    // wmma::fragment<matrix_b, 16, 16, 8, precision::tf32, col_major>
struct FragAcc { float x[8]; };     // wmma::fragment<accumulator, 16, 16, 8, float>

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// wmma::__float_to_tf32: round to nearest (ties away), low 13 bits cleared
__device__ __forceinline__ float float_to_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

// wmma::load_matrix_sync(a, p, ldm) for a row-major 16 x 8 tile in shared memory
__device__ __forceinline__ void wmma_load_a(FragA& a, const float* p, int ldm) {
    asm volatile("wmma.load.a.sync.aligned.row.m16n16k8.shared.tf32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(a.x[0]), "=r"(a.x[1]), "=r"(a.x[2]), "=r"(a.x[3]) : "r"(smem_addr(p)), "r"(ldm) : "memory");
}

// wmma::load_matrix_sync(b, p, ldm) for a column-major 8 x 16 tile in shared memory
__device__ __forceinline__ void wmma_load_b(FragB& b, const float* p, int ldm) {
    asm volatile("wmma.load.b.sync.aligned.col.m16n16k8.shared.tf32 {%0, %1, %2, %3}, [%4], %5;"
                 : "=r"(b.x[0]), "=r"(b.x[1]), "=r"(b.x[2]), "=r"(b.x[3]) : "r"(smem_addr(p)), "r"(ldm) : "memory");
}

// wmma::mma_sync(d, a, b, d)
__device__ __forceinline__ void wmma_mma(FragAcc& d, const FragA& a, const FragB& b) {
    asm volatile("wmma.mma.sync.aligned.row.col.m16n16k8.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3, %4, %5, %6, %7}, {%8, %9, %10, %11}, {%12, %13, %14, %15}, "
                 "{%0, %1, %2, %3, %4, %5, %6, %7};"
                 : "+f"(d.x[0]), "+f"(d.x[1]), "+f"(d.x[2]), "+f"(d.x[3]), "+f"(d.x[4]), "+f"(d.x[5]), "+f"(d.x[6]),
                   "+f"(d.x[7])
                 : "r"(a.x[0]), "r"(a.x[1]), "r"(a.x[2]), "r"(a.x[3]), "r"(b.x[0]), "r"(b.x[1]), "r"(b.x[2]), "r"(b.x[3]));
}

// wmma::store_matrix_sync(p, d, ldm, mem_col_major) into shared memory
__device__ __forceinline__ void wmma_store_col(float* p, const FragAcc& d, int ldm) {
    asm volatile("wmma.store.d.sync.aligned.col.m16n16k8.shared.f32 [%0], {%1, %2, %3, %4, %5, %6, %7, %8}, %9;"
                 :: "r"(smem_addr(p)), "f"(d.x[0]), "f"(d.x[1]), "f"(d.x[2]), "f"(d.x[3]), "f"(d.x[4]), "f"(d.x[5]),
                    "f"(d.x[6]), "f"(d.x[7]), "r"(ldm) : "memory");
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)  // 1: no register cap for a second block
conv_tf32_wmma(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ bias,
               float* __restrict__ y, int B) {
    extern __shared__ float4 smem_wmma[];
    float* wsm = reinterpret_cast<float*>(smem_wmma);  // [NF*16][LDW] filters, TF32-rounded, zero past M
    float* xs = wsm + NF * 16 * LDW;                   // [IMGS][HP][RS] staged images
    float* tiles = xs + XS_FLOATS;                     // [WARPS][TILE_FLOATS]
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float* tile = tiles + warp * TILE_FLOATS;

    for (int i = threadIdx.x; i < NF * 16 * LDW; i += THREADS) {
        const int n = i / LDW, k = i % LDW, p = k / RPR, j = k % RPR;
        const float v = (n < M && k < KRED && j < K * C) ? w[((n * C + j % C) * K + p) * K + j / C] : 0.0f;
        wsm[i] = float_to_tf32(v);
    }
    for (int i = threadIdx.x; i < XS_FLOATS; i += THREADS) xs[i] = 0.0f;
    const int groups = (B + IMGS - 1) / IMGS;
    const size_t total = (size_t)B * C * H * W;
    auto place = [&](int i, float v) {
        const int img = i / (C * H * W), r = i % (C * H * W);
        const int c = r / (H * W), hw = r % (H * W);
        xs[img * SIMG + (hw / W + P) * RS + (hw % W + P) * C + c] = float_to_tf32(v);
    };
#if PREFETCH
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
        __syncthreads();
#if PREFETCH
#pragma unroll
        for (int k = 0; k < PF; ++k)
            if (threadIdx.x + k * THREADS < IMGS * C * H * W) place(threadIdx.x + k * THREADS, pre[k]);
        __syncthreads();
        if (grp + gridDim.x < groups) fetch(grp + gridDim.x);
#else
        const size_t first = (size_t)b0 * C * H * W;
        for (int i = threadIdx.x; i < IMGS * C * H * W; i += THREADS)
            if (first + i < total) place(i, x[first + i]);
        __syncthreads();
#endif
        for (int job = warp; job < IMGS * TILES; job += WARPS) {
            const int img = job / TILES, n0 = (job % TILES) * 16;
            const int b = b0 + img;
            if (b >= B) break;
            FragAcc acc[NF];
#pragma unroll
            for (int f = 0; f < NF; ++f)  // wmma::fill_fragment(acc[f], 0.0f)
#pragma unroll
                for (int e = 0; e < 8; ++e) acc[f].x[e] = 0.0f;
            // the row of the im2col tile this lane copies (two lanes per position, half a row each)
            const int r = lane / 2, pos = min(n0 + r, HOWO - 1);
            const int src = img * SIMG + (pos / WO) * RS + (pos % WO) * C;  // offset in xs (kept an index: shared loads)
#pragma unroll 1
            for (int p = 0; p < K; ++p) {
                __syncwarp();  // the previous row's fragments are loaded
                const int j0 = (lane % 2) * (RPR / 2);
#pragma unroll
                for (int j = 0; j < RPR / 2; ++j)
                    tile[r * LDA + j0 + j] = reinterpret_cast<const float*>(smem_wmma)[NF * 16 * LDW + src + p * RS + j0 + j];
                __syncwarp();
#pragma unroll
                for (int s = 0; s < RPR / 8; ++s) {
                    FragA a;
                    wmma_load_a(a, tile + 8 * s, LDA);
#pragma unroll
                    for (int f = 0; f < NF; ++f) {
                        FragB bf;
                        wmma_load_b(bf, wsm + f * 16 * LDW + p * RPR + 8 * s, LDW);
                        wmma_mma(acc[f], a, bf);
                    }
                }
            }
            __syncwarp();
#pragma unroll
            for (int f = 0; f < NF; ++f)  // [channel][position] in the tile: 16 positions per channel run
                wmma_store_col(tile + f * 256, acc[f], 16);
            __syncwarp();
            float* out = y + (size_t)b * M * HOWO + n0;
            for (int i = lane; i < M * 16; i += 32) {
                const int n = i / 16, q = i % 16;
                if (n0 + q < HOWO) out[(size_t)n * HOWO + q] = tile[n * 16 + q] + bias[n];
            }
        }
    }
}
