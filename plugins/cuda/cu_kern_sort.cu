/*
 * cuda plugin: the ordering kernels (cu_kern_sort.h). argmax / argmin: one thread
 * per row scanning it (mxk_index.h's first-maximum rule, NaN winning). topk /
 * sort / argsort: one block per row, a bitonic sort of (value, position) items in
 * shared memory, padded to a power of two with items that sort last; the order
 * (mxk_idx_sort_before) is total, so the result equals cpu-blas's qsort. Upstream:
 * MXNet src/operator/tensor/broadcast_reduce_op.h (SearchAxisCompute) and
 * ordering_op-inl.h (TopKImpl, TopKBackwardImpl; MXNet sorts on the GPU with
 * cub / thrust segmented sorts).
 */
#include "cu_dtype.cuh"
#include "cu_kern_sort.h"
#include "cu_launch.cuh"
#include "mxk_index.h"

/** Threads of a sort block. */
#define CU_SORT_THREADS 512

/** argmax / argmin of row (o, ., i), one thread per row. */
__global__ void cu_arg_best_kernel(const float *x, float *y, uint64_t n, uint64_t inner,
                                   int32_t minimize, int add, uint64_t rows) {
    CU_KERNEL_LOOP(r, rows) {
        uint64_t o = r / inner, i = r % inner;
        float v = (float)mxk_idx_arg_best(x + o * n * inner + i, n, inner, minimize);
        y[r] = add ? y[r] + v : v;
    }
}

extern "C" cudaError_t cu_launch_arg_best(const float *x, float *y, uint64_t outer, uint64_t n,
                                          uint64_t inner, int32_t minimize, int add,
                                          cudaStream_t stream) {
    uint64_t rows = outer * inner;
    cu_arg_best_kernel<<<cu_blocks(rows), CU_THREADS, 0, stream>>>(x, y, n, inner, minimize, add,
                                                                   rows);
    return cu_launched();
}

/** Whether item (av, ai) sorts before (bv, bi); padding items (position -1) sort last. */
__device__ static int cu_sort_before(float av, int32_t ai, float bv, int32_t bi, int32_t ascend) {
    if (ai < 0)
        return 0;
    if (bi < 0)
        return 1;
    return mxk_idx_sort_before(av, ai, bv, bi, ascend);
}

/** Sorts rows (one per block, grid-stride) and writes the outputs of c. */
__global__ void cu_sort_kernel(const float *x, cu_sort_call c, uint32_t p2) {
    extern __shared__ float cu_sort_smem[];
    float *sv = cu_sort_smem;
    int32_t *si = (int32_t *)(sv + p2);
    for (uint64_t r = blockIdx.x; r < c.outer * c.inner; r += gridDim.x) {
        uint64_t o = r / c.inner, in = r % c.inner;
        for (uint32_t t = threadIdx.x; t < p2; t += blockDim.x) {
            sv[t] = t < c.n ? x[(o * c.n + t) * c.inner + in] : 0.0f;
            si[t] = t < c.n ? (int32_t)t : -1;
        }
        __syncthreads();
        for (uint32_t k = 2; k <= p2; k <<= 1)
            for (uint32_t j = k >> 1; j > 0; j >>= 1) {
                for (uint32_t t = threadIdx.x; t < p2; t += blockDim.x) {
                    uint32_t u = t ^ j;
                    if (u <= t)
                        continue;
                    int up = (t & k) == 0;
                    float a = sv[t], b = sv[u];
                    int32_t ai = si[t], bi = si[u];
                    if (up ? cu_sort_before(b, bi, a, ai, c.ascend)
                           : cu_sort_before(a, ai, b, bi, c.ascend)) {
                        sv[t] = b, sv[u] = a;
                        si[t] = bi, si[u] = ai;
                    }
                }
                __syncthreads();
            }
        if (c.ret == CU_SORT_MASK) {
            /* sv becomes the row's mask: 1 at the positions of the first k items */
            for (uint32_t t = threadIdx.x; t < p2; t += blockDim.x)
                sv[t] = 0.0f;
            __syncthreads();
            for (uint32_t t = threadIdx.x; t < c.k; t += blockDim.x)
                sv[si[t]] = 1.0f;
            __syncthreads();
            for (uint32_t t = threadIdx.x; t < c.n; t += blockDim.x)
                cu_store_small(c.out0, c.dtype0, (o * c.n + t) * c.inner + in, sv[t], c.add0);
        } else {
            for (uint32_t t = threadIdx.x; t < c.k; t += blockDim.x) {
                uint64_t e = (o * c.k + t) * c.inner + in;
                if (c.ret == CU_SORT_INDICES) {
                    cu_store_small(c.out0, c.dtype0, e, si[t], c.add0);
                    continue;
                }
                float *y = (float *)c.out0 + e;
                *y = c.add0 ? *y + sv[t] : sv[t];
                if (c.out1 != NULL)
                    cu_store_small(c.out1, c.dtype1, e, si[t], c.add1);
            }
        }
        __syncthreads(); /* the next row reuses the shared items */
    }
}

extern "C" cudaError_t cu_launch_sort(const float *x, const cu_sort_call *c, cudaStream_t stream) {
    if (c->n > CU_SORT_MAX)
        return cudaErrorInvalidValue;
    uint32_t p2 = 1;
    while (p2 < c->n)
        p2 <<= 1;
    uint64_t rows = c->outer * c->inner;
    unsigned grid = rows > CU_MAX_BLOCKS ? CU_MAX_BLOCKS : (unsigned)(rows == 0 ? 1 : rows);
    size_t smem = (size_t)p2 * (sizeof(float) + sizeof(int32_t));
    cu_sort_kernel<<<grid, CU_SORT_THREADS, smem, stream>>>(x, *c, p2);
    return cu_launched();
}

/** dx[o, idx, i] += dy[o, j, i], one thread per element of dy. */
template <typename I>
__global__ void cu_sort_grad_kernel(const float *dy, const void *idx, float *dx, uint64_t n,
                                    uint64_t inner, uint64_t k, uint64_t total) {
    CU_KERNEL_LOOP(e, total) {
        uint64_t o = e / (k * inner), in = e % inner;
        double pos = cu_load<I>(idx, e);
        if (pos >= 0.0 && pos < (double)n)
            dx[(o * n + (uint64_t)pos) * inner + in] += dy[e];
    }
}

/** Launches cu_sort_grad_kernel for index element type I. */
template <typename I>
static cudaError_t cu_sort_grad_as(const float *dy, const void *idx, float *dx, uint64_t outer,
                                   uint64_t n, uint64_t inner, uint64_t k, cudaStream_t stream) {
    uint64_t total = outer * k * inner;
    cu_sort_grad_kernel<I>
        <<<cu_blocks(total), CU_THREADS, 0, stream>>>(dy, idx, dx, n, inner, k, total);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_sort_grad(const float *dy, const void *idx, int32_t idx_dtype,
                                           float *dx, uint64_t outer, uint64_t n, uint64_t inner,
                                           uint64_t k, cudaStream_t stream) {
    CU_DTYPE_DISPATCH(idx_dtype, cu_sort_grad_as, dy, idx, dx, outer, n, inner, k, stream)
}
