// Force-included (nvcc -include) into a course file that reads cudaDeviceProp fields this CUDA toolkit no longer
// has (CUDA 13 removed clockRate, memoryClockRate, deviceOverlap, kernelExecTimeoutEnabled, computeMode): its
// `prop.clockRate` was rewritten to `profconv_device_attr(cudaDevAttrClockRate)`, the same value asked of the
// current device (the course's toolkit had the field; such files only print it).
#ifndef PROFCONV_COMPAT_H_
#define PROFCONV_COMPAT_H_
#include <cuda_runtime.h>
static inline int profconv_device_attr(cudaDeviceAttr attr) {
  int device = 0, value = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&value, attr, device);
  return value;
}
#endif  // PROFCONV_COMPAT_H_
