// profconv's stand-in for the matmul.h the course's project tree provided beside gpu-new-forward.h (Spring 2025:
// a tiled matrix multiplication the students' unroll + matmul files call). Same declaration; our own code.
#ifndef LAYER_CUSTOM_MATMUL_H
#define LAYER_CUSTOM_MATMUL_H

#include <cuda_runtime.h>

#define MATMUL_TILE_WIDTH 16

// C (numCRows x numCColumns) = A (numARows x numAColumns) B (numBRows x numBColumns), row-major; a block of
// MATMUL_TILE_WIDTH x MATMUL_TILE_WIDTH threads per tile of C.
__global__ void matrixMultiplyShared(const float *A, const float *B, float *C, int numARows, int numAColumns,
                                     int numBRows, int numBColumns, int numCRows, int numCColumns);

#endif  // LAYER_CUSTOM_MATMUL_H
