// BF16 WMMA with fp32 accumulation.
#include <mma.h>
#include <cuda_bf16.h>
using namespace nvcuda;

__global__ void gemm_wmma_bf16(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, int n) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    int tile = blockIdx.x * 16;
    for (int k = 0; k < n; k += 16) {
        wmma::load_matrix_sync(fa, a + tile * n + k, n);
        wmma::load_matrix_sync(fb, b + tile * n + k, n);
        wmma::mma_sync(fc, fa, fb, fc);
    }
    wmma::store_matrix_sync(c + tile * n, fc, n, wmma::mem_row_major);
}
