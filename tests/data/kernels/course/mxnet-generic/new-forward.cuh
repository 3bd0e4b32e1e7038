// Test file in the Fall 2017 MXNet form, written for profconv's tests: only the generic
// template<typename gpu, typename DType> forward (no forward<gpu, float> specialisation), a templated
// kernel, and partial sums over the input channels added into y with atomicAdd (right because MXNet
// hands forward a zeroed y). A CHECK that holds, as the skeleton's files had.
#ifndef MXNET_OPERATOR_NEW_FORWARD_CUH_
#define MXNET_OPERATOR_NEW_FORWARD_CUH_

#include <mxnet/base.h>

#define TILE_WIDTH 16

namespace mxnet
{
namespace op
{

template<typename gpu, typename DType>
__global__ void forward_kernel(DType *y, const DType *x, const DType *k, const int B, const int M, const int C,
                               const int H, const int W, const int K, const int W_grid)
{
    const int H_out = H - K + 1;
    const int W_out = W - K + 1;
#define y4d(i3, i2, i1, i0) y[(i3) * (M * H_out * W_out) + (i2) * (H_out * W_out) + (i1) * (W_out) + i0]
#define x4d(i3, i2, i1, i0) x[(i3) * (C * H * W) + (i2) * (H * W) + (i1) * (W) + i0]
#define k4d(i3, i2, i1, i0) k[(i3) * (C * K * K) + (i2) * (K * K) + (i1) * (K) + i0]
    const int b = blockIdx.x / C, c = blockIdx.x % C;  // one input channel per block: a partial sum
    const int m = blockIdx.y;
    const int h = (blockIdx.z / W_grid) * TILE_WIDTH + threadIdx.y;
    const int w = (blockIdx.z % W_grid) * TILE_WIDTH + threadIdx.x;
    if (h < H_out && w < W_out) {
        DType acc = 0;
        for (int p = 0; p < K; ++p)
            for (int q = 0; q < K; ++q)
                acc += x4d(b, c, h + p, w + q) * k4d(m, c, p, q);
        atomicAdd(&y4d(b, m, h, w), acc);
    }
#undef y4d
#undef x4d
#undef k4d
}

// This function is called by new-inl.h
template<typename gpu, typename DType>
void forward(mshadow::Tensor<gpu, 4, DType> &y, const mshadow::Tensor<gpu, 4, DType> &x, const mshadow::Tensor<gpu, 4, DType> &k)
{
    const int B = x.shape_[0], M = y.shape_[1], C = x.shape_[1], H = x.shape_[2], W = x.shape_[3], K = k.shape_[3];
    CHECK_EQ(C, k.shape_[1]) << "input and filter channels differ";
    const int W_grid = (W - K + 1 + TILE_WIDTH - 1) / TILE_WIDTH, H_grid = (H - K + 1 + TILE_WIDTH - 1) / TILE_WIDTH;
    dim3 gridDim(B * C, M, W_grid * H_grid), blockDim(TILE_WIDTH, TILE_WIDTH, 1);
    forward_kernel<gpu, DType><<<gridDim, blockDim, 0, y.stream_->stream_>>>(y.dptr_, x.dptr_, k.dptr_, B, M, C, H, W, K,
                                                                            W_grid);
    MSHADOW_CUDA_CALL(cudaDeviceSynchronize());
}

}
}

#endif
