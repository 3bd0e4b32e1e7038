// Shared by tuned_smem.cu and fp16.cu: persistent blocks stage groups of IMGS images, zero-padded, into
// shared memory (C x HP x SW elements each) and hold the next group's pixels in registers meanwhile, so
// the global-load latency of one group hides behind the arithmetic of the previous one.
// Uses the including kernel's macros: C H W P HP SW SIMG IMGS THREADS.
#define IMG_PIXELS (C * H * W)
#define PF ((IMGS * IMG_PIXELS + THREADS - 1) / THREADS)  // pixels each thread holds per group

template <typename T>
struct NextImages {
    T pixel[PF];

    __device__ void load(const T* __restrict__ x, int grp, int B) {
        const size_t first = (size_t)grp * IMGS * IMG_PIXELS, total = (size_t)B * IMG_PIXELS;
#pragma unroll
        for (int k = 0; k < PF; ++k) {
            const int i = threadIdx.x + k * THREADS;
            pixel[k] = (i < IMGS * IMG_PIXELS && first + i < total) ? x[first + i] : T(0.0f);
        }
    }

    __device__ void store(T* xs) const {
#pragma unroll
        for (int k = 0; k < PF; ++k) {
            const int i = threadIdx.x + k * THREADS;
            if (i < IMGS * IMG_PIXELS) {
                const int im = i / IMG_PIXELS, r = i % IMG_PIXELS;
                const int c = r / (H * W), hw = r % (H * W);
                xs[im * SIMG + (c * HP + hw / W + P) * SW + hw % W + P] = pixel[k];
            }
        }
    }
};
