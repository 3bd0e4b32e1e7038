// FP16 WMMA with fp32 accumulation (the course's partial-credit Tensor Core form).
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

__global__ void gemm_wmma_fp16(const __half* a, const __half* b, float* c, int n) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
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

// FP16 accumulation: the MMA's result is half too.
__global__ void gemm_wmma_fp16_acc(const __half* a, const __half* b, __half* c, int n) {
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, __half> fc;
    wmma::fill_fragment(fc, __float2half(0.0f));
    int tile = blockIdx.x * 16;
    for (int k = 0; k < n; k += 16) {
        wmma::load_matrix_sync(fa, a + tile * n + k, n);
        wmma::load_matrix_sync(fb, b + tile * n + k, n);
        wmma::mma_sync(fc, fa, fb, fc);
    }
    wmma::store_matrix_sync(c + tile * n, fc, n, wmma::mem_row_major);
}
