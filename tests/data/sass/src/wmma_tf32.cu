// TF32 WMMA (the Spring 2025 Tensor Core requirement): m16n16k8, fp32 in memory, tf32 fragments.
#include <mma.h>
using namespace nvcuda;

__global__ void gemm_wmma_tf32(const float* a, const float* b, float* c, int n) {
    wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    int tile = blockIdx.x * 16;
    for (int k = 0; k < n; k += 8) {
        wmma::load_matrix_sync(fa, a + tile * n + k, n);
        wmma::load_matrix_sync(fb, b + tile * n + k, n);
        for (int i = 0; i < fa.num_elements; i++) fa.x[i] = wmma::__float_to_tf32(fa.x[i]);
        for (int i = 0; i < fb.num_elements; i++) fb.x[i] = wmma::__float_to_tf32(fb.x[i]);
        wmma::mma_sync(fc, fa, fb, fc);
    }
    wmma::store_matrix_sync(c + tile * n, fc, n, wmma::mem_row_major);
}
