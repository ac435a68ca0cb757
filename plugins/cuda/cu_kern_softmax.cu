/*
 * cuda plugin: the GPU kernels of softmax, log_softmax and SoftmaxActivation
 * (cu_ops_softmax.c): one block per row (a thread per row for rows of at most
 * CU_SM_THREAD_ROW_MAX elements), numerically stable (the row's maximum
 * subtracted before exponentiation), sums and the log-sum-exp in double as
 * cpu-blas computes them.
 *
 * Semantics: MXNet src/operator/nn/softmax-inl.h (softmax_compute_kernel,
 * masked_softmax_kernel, softmax_grad_kernel with softmax_bwd / log_softmax_bwd)
 * and src/operator/nn/softmax_activation-inl.h. The thread writing element j
 * reads it first, and all reads of a row's reductions finish before its writes,
 * so the output may be the input (and dx may be dy).
 */
#include "cu_kern_layer.h"
#include "cu_launch.cuh"
#include "cu_req.cuh"
#include "mxk_abi_base.h"

#include <cuda_fp16.h>

/** Element e of an array of float dtype `dt` (float16, float32 or float64). */
static __device__ double cu_sm_load(const void *p, int32_t dt, uint64_t e) {
    if (dt == MXK_FLOAT64)
        return ((const double *)p)[e];
    if (dt == MXK_FLOAT16)
        return (double)__half2float(((const __half *)p)[e]);
    return ((const float *)p)[e];
}

/** Stores v (rounded to dtype dt) into element e by the request req (ADD: added to it). */
static __device__ void cu_sm_store(void *p, int32_t dt, uint64_t e, double v, int32_t req) {
    if (req == MXK_REQ_ADD)
        v += cu_sm_load(p, dt, e);
    if (dt == MXK_FLOAT64)
        ((double *)p)[e] = v;
    else if (dt == MXK_FLOAT16)
        ((__half *)p)[e] = __float2half_rn((float)v);
    else
        ((float *)p)[e] = (float)v;
}

/** Row length: length[row] clipped to [0, k] (NaN-free integers), or k without lengths. */
static __device__ uint64_t cu_sm_len(const cu_softmax_view &v, uint64_t row) {
    if (v.length == NULL)
        return v.k;
    int64_t l;
    switch (v.length_dtype) {
    case MXK_INT64:
        l = ((const int64_t *)v.length)[row];
        break;
    case MXK_INT8:
        l = ((const int8_t *)v.length)[row];
        break;
    case MXK_UINT8:
        l = ((const uint8_t *)v.length)[row];
        break;
    default:
        l = ((const int32_t *)v.length)[row];
        break;
    }
    return l <= 0 ? 0 : ((uint64_t)l >= v.k ? v.k : (uint64_t)l);
}

/** The block's reduction of v (sum, or max when `max`) in shared memory; every thread gets it. */
static __device__ double cu_sm_reduce(double v, int max) {
    __shared__ double part[CU_THREADS];
    return max ? cu_block_reduce(v, part, cu_max_op()) : cu_block_reduce(v, part, cu_sum_op());
}

/**
 * How a launch's threads share the rows. BLOCK: a block per row, its threads
 * taking the row's elements in turn and reducing in shared memory (long rows).
 * Otherwise a thread per row, taking every element in cpu-blas's order (short
 * rows: many of them, few elements each).
 */
template <bool BLOCK> struct cu_sm_lanes {
    /** The first row of the calling thread. */
    static __device__ uint64_t first_row() {
        return BLOCK ? blockIdx.x : (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    }
    /** The distance to its next row. */
    static __device__ uint64_t row_step() {
        return BLOCK ? gridDim.x : (uint64_t)gridDim.x * blockDim.x;
    }
    /** The first element of a row the calling thread takes. */
    static __device__ uint64_t first() {
        return BLOCK ? threadIdx.x : 0;
    }
    /** The distance to its next element. */
    static __device__ uint64_t step() {
        return BLOCK ? blockDim.x : 1;
    }
    /** The row's reduction of the threads' partial values v (sum, or max when `max`). */
    static __device__ double reduce(double v, int max) {
        return BLOCK ? cu_sm_reduce(v, max) : v;
    }
};

/** Forward: y = (log_)softmax(x / T) of each row, 0 past its length. */
template <bool BLOCK>
static __global__ void cu_softmax_fwd_kernel(cu_softmax_view v, const float *x, void *y,
                                             int32_t req) {
    typedef cu_sm_lanes<BLOCK> L;
    const double t = v.temperature;
    for (uint64_t row = L::first_row(); row < v.outer * v.inner; row += L::row_step()) {
        const uint64_t base = row / v.inner * v.k * v.inner + row % v.inner;
        const uint64_t len = cu_sm_len(v, row);
        double mx = -INFINITY;
        for (uint64_t j = L::first(); j < len; j += L::step())
            mx = fmax(mx, (double)x[base + j * v.inner] / t);
        mx = L::reduce(mx, 1);
        double sum = 0.0;
        for (uint64_t j = L::first(); j < len; j += L::step())
            sum += exp((double)x[base + j * v.inner] / t - mx);
        const double lse = mx + log(L::reduce(sum, 0));
        for (uint64_t j = L::first(); j < v.k; j += L::step()) {
            const uint64_t e = base + j * v.inner;
            const double z = (double)x[e] / t - lse;
            cu_sm_store(y, v.y_dtype, e, j >= len ? 0.0 : (v.log ? z : exp(z)), req);
        }
    }
}

/** Backward: softmax dx = y (dy - sum(dy y)) / T; log_softmax dx = (dy - e^y sum(dy)) / T. */
template <bool BLOCK>
static __global__ void cu_softmax_bwd_kernel(cu_softmax_view v, const void *dy, const void *y,
                                             float *dx, int32_t req) {
    typedef cu_sm_lanes<BLOCK> L;
    for (uint64_t row = L::first_row(); row < v.outer * v.inner; row += L::row_step()) {
        const uint64_t base = row / v.inner * v.k * v.inner + row % v.inner;
        const uint64_t len = cu_sm_len(v, row);
        double s = 0.0;
        for (uint64_t j = L::first(); j < len; j += L::step()) {
            const uint64_t e = base + j * v.inner;
            const double g = cu_sm_load(dy, v.y_dtype, e);
            s += v.log ? g : g * cu_sm_load(y, v.y_dtype, e);
        }
        s = L::reduce(s, 0);
        for (uint64_t j = L::first(); j < v.k; j += L::step()) {
            const uint64_t e = base + j * v.inner;
            const double g = cu_sm_load(dy, v.y_dtype, e), yv = cu_sm_load(y, v.y_dtype, e);
            const double r = j >= len ? 0.0 : (v.log ? g - exp(yv) * s : yv * (g - s));
            const float f = (float)(r / v.temperature);
            cu_store(&dx[e], f, req);
        }
    }
}

/** Longest rows a thread takes alone (longer ones get a block each). */
#define CU_SM_THREAD_ROW_MAX 32

/** Blocks for a launch over `rows` rows: one per row, at most CU_MAX_BLOCKS. */
static unsigned cu_sm_blocks(uint64_t rows) {
    return rows == 0 ? 1u : (rows > CU_MAX_BLOCKS ? (unsigned)CU_MAX_BLOCKS : (unsigned)rows);
}

extern "C" cudaError_t cu_launch_softmax_forward(cu_softmax_view v, const float *x, void *y,
                                                 int32_t req, cudaStream_t stream) {
    const uint64_t rows = v.outer * v.inner;
    if (v.k <= CU_SM_THREAD_ROW_MAX)
        cu_softmax_fwd_kernel<false><<<cu_blocks(rows), CU_THREADS, 0, stream>>>(v, x, y, req);
    else
        cu_softmax_fwd_kernel<true><<<cu_sm_blocks(rows), CU_THREADS, 0, stream>>>(v, x, y, req);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_softmax_backward(cu_softmax_view v, const void *dy, const void *y,
                                                  float *dx, int32_t req, cudaStream_t stream) {
    const uint64_t rows = v.outer * v.inner;
    if (v.k <= CU_SM_THREAD_ROW_MAX)
        cu_softmax_bwd_kernel<false><<<cu_blocks(rows), CU_THREADS, 0, stream>>>(v, dy, y, dx, req);
    else
        cu_softmax_bwd_kernel<true>
            <<<cu_sm_blocks(rows), CU_THREADS, 0, stream>>>(v, dy, y, dx, req);
    return cu_launched();
}
