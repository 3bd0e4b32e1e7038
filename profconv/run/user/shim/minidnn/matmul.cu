// profconv's implementation of the course-provided matrixMultiplyShared (see matmul.h).
#include "matmul.h"

__global__ void matrixMultiplyShared(const float *A, const float *B, float *C, int numARows, int numAColumns,
                                     int numBRows, int numBColumns, int numCRows, int numCColumns) {
    __shared__ float a_tile[MATMUL_TILE_WIDTH][MATMUL_TILE_WIDTH];
    __shared__ float b_tile[MATMUL_TILE_WIDTH][MATMUL_TILE_WIDTH];
    const int r = blockIdx.y * MATMUL_TILE_WIDTH + threadIdx.y;
    const int c = blockIdx.x * MATMUL_TILE_WIDTH + threadIdx.x;
    float sum = 0.0f;
    for (int k0 = 0; k0 < numAColumns; k0 += MATMUL_TILE_WIDTH) {
        const int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        a_tile[threadIdx.y][threadIdx.x] = (r < numARows && ka < numAColumns) ? A[(size_t)r * numAColumns + ka] : 0.0f;
        b_tile[threadIdx.y][threadIdx.x] = (kb < numBRows && c < numBColumns) ? B[(size_t)kb * numBColumns + c] : 0.0f;
        __syncthreads();
        for (int i = 0; i < MATMUL_TILE_WIDTH; ++i) sum += a_tile[threadIdx.y][i] * b_tile[i][threadIdx.x];
        __syncthreads();
    }
    if (r < numCRows && c < numCColumns) C[(size_t)r * numCColumns + c] = sum;
}
