/*
 * cuda plugin: the GPU kernels of softmax, log_softmax and SoftmaxActivation
 * (cu_ops_softmax.c): one block per row, numerically stable (the row's maximum
 * subtracted before exponentiation), sums and the log-sum-exp in double as
 * cpu-blas computes them.
 *
 * Semantics: MXNet src/operator/nn/softmax-inl.h (softmax_compute_kernel,
 * masked_softmax_kernel, softmax_grad_kernel with softmax_bwd / log_softmax_bwd)
 * and src/operator/nn/softmax_activation-inl.h. Each thread of a row's block
 * reads element j before writing element j, and all reads of a row's reductions
 * finish before its writes, so the output may be the input (and dx may be dy).
 */
#include "cu_kern_layer.h"
#include "cu_launch.cuh"
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

/** Stores v (rounded to dtype dt) into element e, or adds it to the element (add). */
static __device__ void cu_sm_store(void *p, int32_t dt, uint64_t e, double v, int add) {
    if (add)
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
    part[threadIdx.x] = v;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (threadIdx.x < s)
            part[threadIdx.x] = max ? fmax(part[threadIdx.x], part[threadIdx.x + s])
                                    : part[threadIdx.x] + part[threadIdx.x + s];
        __syncthreads();
    }
    double r = part[0];
    __syncthreads(); /* part is reused by the next reduction */
    return r;
}

/** Forward: blocks take rows in turn (grid-stride over the outer * inner rows). */
static __global__ void cu_softmax_fwd_kernel(cu_softmax_view v, const float *x, void *y, int add) {
    const double t = v.temperature;
    for (uint64_t row = blockIdx.x; row < v.outer * v.inner; row += gridDim.x) {
        const uint64_t base = row / v.inner * v.k * v.inner + row % v.inner;
        const uint64_t len = cu_sm_len(v, row);
        double mx = -INFINITY;
        for (uint64_t j = threadIdx.x; j < len; j += blockDim.x)
            mx = fmax(mx, (double)x[base + j * v.inner] / t);
        mx = cu_sm_reduce(mx, 1);
        double sum = 0.0;
        for (uint64_t j = threadIdx.x; j < len; j += blockDim.x)
            sum += exp((double)x[base + j * v.inner] / t - mx);
        const double lse = mx + log(cu_sm_reduce(sum, 0));
        for (uint64_t j = threadIdx.x; j < v.k; j += blockDim.x) {
            const uint64_t e = base + j * v.inner;
            const double z = (double)x[e] / t - lse;
            cu_sm_store(y, v.y_dtype, e, j >= len ? 0.0 : (v.log ? z : exp(z)), add);
        }
    }
}

/** Backward: softmax dx = y (dy - sum(dy y)) / T; log_softmax dx = (dy - e^y sum(dy)) / T. */
static __global__ void cu_softmax_bwd_kernel(cu_softmax_view v, const void *dy, const void *y,
                                             float *dx, int add) {
    for (uint64_t row = blockIdx.x; row < v.outer * v.inner; row += gridDim.x) {
        const uint64_t base = row / v.inner * v.k * v.inner + row % v.inner;
        const uint64_t len = cu_sm_len(v, row);
        double s = 0.0;
        for (uint64_t j = threadIdx.x; j < len; j += blockDim.x) {
            const uint64_t e = base + j * v.inner;
            const double g = cu_sm_load(dy, v.y_dtype, e);
            s += v.log ? g : g * cu_sm_load(y, v.y_dtype, e);
        }
        s = cu_sm_reduce(s, 0);
        for (uint64_t j = threadIdx.x; j < v.k; j += blockDim.x) {
            const uint64_t e = base + j * v.inner;
            const double g = cu_sm_load(dy, v.y_dtype, e), yv = cu_sm_load(y, v.y_dtype, e);
            const double r = j >= len ? 0.0 : (v.log ? g - exp(yv) * s : yv * (g - s));
            const float f = (float)(r / v.temperature);
            dx[e] = add ? dx[e] + f : f;
        }
    }
}

/** Blocks for a launch over `rows` rows: one per row, at most CU_MAX_BLOCKS. */
static unsigned cu_sm_blocks(uint64_t rows) {
    return rows == 0 ? 1u : (rows > CU_MAX_BLOCKS ? (unsigned)CU_MAX_BLOCKS : (unsigned)rows);
}

extern "C" cudaError_t cu_launch_softmax_forward(cu_softmax_view v, const float *x, void *y,
                                                 int add, cudaStream_t stream) {
    cu_softmax_fwd_kernel<<<cu_sm_blocks(v.outer * v.inner), CU_THREADS, 0, stream>>>(v, x, y, add);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_softmax_backward(cu_softmax_view v, const void *dy, const void *y,
                                                  float *dx, int add, cudaStream_t stream) {
    cu_softmax_bwd_kernel<<<cu_sm_blocks(v.outer * v.inner), CU_THREADS, 0, stream>>>(v, dy, y, dx,
                                                                                      add);
    return cu_launched();
}
