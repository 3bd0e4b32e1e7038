// Test file in the MXNet (2017-2019) form, written for profconv's tests: macros named like common
// variables (tx, ty, bx, H, W, min), `using namespace mshadow`, Stream<gpu>::GetStream and CHECK_* streams.
#ifndef MXNET_OPERATOR_NEW_FORWARD_CUH_
#define MXNET_OPERATOR_NEW_FORWARD_CUH_

#include <mxnet/base.h>

#define TILE 16
#define tx threadIdx.x
#define ty threadIdx.y
#define bx blockIdx.x
#define min(a, b) ((a) < (b) ? (a) : (b))

namespace mxnet
{
namespace op
{
using namespace mshadow;

__global__ void forward_kernel(float *y, const float *x, const float *k, const int B, const int M, const int C,
                               const int Hin, const int Win, const int K)
{
    const int Hout = Hin - K + 1, Wout = Win - K + 1;
    const int W_grid = (Wout + TILE - 1) / TILE;
    const int b = bx, m = blockIdx.y;
    const int h = (blockIdx.z / W_grid) * TILE + ty, w = (blockIdx.z % W_grid) * TILE + tx;
    if (h < Hout && w < Wout) {
        float acc = 0;
        for (int c = 0; c < C; ++c)
            for (int p = 0; p < K; ++p)
                for (int q = 0; q < K; ++q)
                    acc += x[((b * C + c) * Hin + h + p) * Win + w + q] * k[((m * C + c) * K + p) * K + q];
        y[((b * M + m) * Hout + h) * Wout + w] = acc;
    }
}

template <>
void forward<gpu, float>(mshadow::Tensor<gpu, 4, float> &y, const mshadow::Tensor<gpu, 4, float> &x,
                         const mshadow::Tensor<gpu, 4, float> &w)
{
    CHECK_EQ(x.shape_[1], w.shape_[1]) << "channels differ";
    cudaStream_t s = Stream<gpu>::GetStream(y.stream_);
    const int B = x.shape_[0], M = y.shape_[1], C = x.shape_[1], K = w.shape_[3];
    const int Hin = x.shape_[2], Win = x.shape_[3];
    const int W_grid = (Win - K + 1 + TILE - 1) / TILE, H_grid = (Hin - K + 1 + TILE - 1) / TILE;
    dim3 grid(B, M, W_grid * H_grid), block(TILE, TILE, 1);
    forward_kernel<<<grid, block, 0, s>>>(y.dptr_, x.dptr_, w.dptr_, B, M, C, Hin, Win, min(K, 7));
    MSHADOW_CUDA_CALL(cudaDeviceSynchronize());
}

template <typename gpu, typename DType>
void forward(mshadow::Tensor<gpu, 4, DType> &y, const mshadow::Tensor<gpu, 4, DType> &x, const mshadow::Tensor<gpu, 4, DType> &w)
{
    CHECK_EQ(0, 1) << "not used";
}
}
}

#endif
