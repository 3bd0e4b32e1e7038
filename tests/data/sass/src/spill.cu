// A per-thread array indexed at run time lives in local memory; -maxrregcount=32 forces spills too.
__global__ void local_array(const float* x, const int* idx, float* y, int n) {
    float acc[64];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
#pragma unroll
    for (int k = 0; k < 64; k++) acc[k] = x[i + k] * (k + 1);
    y[i] = acc[idx[i] & 63] + acc[idx[i + 1] & 63];
}

__global__ void vector_loads(const float4* __restrict__ x, float4* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 v = x[i];
        y[i] = make_float4(v.x * 2, v.y * 2, v.z * 2, v.w * 2);
    }
}
