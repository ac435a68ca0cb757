/*
 * cuda plugin: launch geometry shared by the CUDA C kernels (cu_kern_*.cu).
 * Elementwise kernels use grid-stride loops over 64-bit indices, so one launch of
 * at most CU_MAX_BLOCKS blocks of CU_THREADS threads covers any size.
 */
#ifndef MXK_CU_LAUNCH_CUH
#define MXK_CU_LAUNCH_CUH

#include <stdint.h>

#include <cuda_runtime.h>

/** Threads per block of the elementwise kernels. */
#define CU_THREADS 256
/** Most blocks of one elementwise launch (the grid-stride loop covers the rest). */
#define CU_MAX_BLOCKS 65535

/** Blocks for n items at CU_THREADS per block, at least 1 and at most CU_MAX_BLOCKS. */
static inline unsigned cu_blocks(uint64_t n) {
    uint64_t b = (n + CU_THREADS - 1) / CU_THREADS;
    return b == 0 ? 1u : (b > CU_MAX_BLOCKS ? (unsigned)CU_MAX_BLOCKS : (unsigned)b);
}

/** for (i over [0, n)) as a grid-stride loop: declares the 64-bit index `i`. */
#define CU_KERNEL_LOOP(i, n)                                                                       \
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (uint64_t)(n);          \
         i += (uint64_t)blockDim.x * gridDim.x)

/** The launch status of the last kernel (clears non-sticky launch errors). */
static inline cudaError_t cu_launched(void) {
    return cudaGetLastError();
}

/** Sum, for cu_block_reduce. */
struct cu_sum_op {
    template <typename T> __device__ T operator()(T a, T b) const {
        return a + b;
    }
};

/** Maximum (fmax: a NaN operand is ignored), for cu_block_reduce. */
struct cu_max_op {
    template <typename T> __device__ T operator()(T a, T b) const {
        return fmax(a, b);
    }
};

/**
 * Tree reduction of each thread's `v` over the block with `combine`, through the
 * shared array `part` (blockDim.x entries; blockDim.x a power of two). Pairs are
 * combined in a fixed order, so the result is the same from run to run. Every
 * thread gets it, and `part` may be reused after the call. Call from every thread.
 */
template <typename T, typename F> __device__ T cu_block_reduce(T v, T *part, F combine) {
    part[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            part[threadIdx.x] = combine(part[threadIdx.x], part[threadIdx.x + s]);
        __syncthreads();
    }
    T r = part[0];
    __syncthreads();
    return r;
}

#endif /* MXK_CU_LAUNCH_CUH */
