/*
 * cuda plugin: the GPU kernels of Activation and LeakyReLU (cu_ops_act.c), on
 * the element functions cpu-blas uses too (plugins/common/mxk_act.h).
 *
 * Semantics: MXNet src/operator/nn/activation-inl.h, src/operator/leaky_relu-inl.h
 * and src/operator/mshadow_op.h; rrelu's training slopes are the host's uniform
 * draws (kernel/memory/resource.c random_uniform: element e takes lane e%4 of
 * Philox block e/4), so a seed gives the same slopes as cpu-blas. Every kernel
 * reads element i before writing it, so outputs may alias inputs.
 */
#define MXK_PHILOX_QUALIFIER static inline __host__ __device__

#include "cu_kern_layer.h"
#include "cu_launch.cuh"
#include "cu_req.cuh"
#include "mxk_act.h"
#include "mxk_philox.h"

/** y = f(x) of Activation. */
static __global__ void cu_act_fwd_kernel(int32_t act, float *y, const float *x, uint64_t n,
                                         int32_t req) {
    CU_KERNEL_LOOP(i, n) {
        cu_store(&y[i], mxk_act_f(act, x[i]), req);
    }
}

/** dx = dy f'(r) of Activation. */
static __global__ void cu_act_bwd_kernel(int32_t act, float *dx, const float *dy, const float *r,
                                         uint64_t n, int32_t req) {
    CU_KERNEL_LOOP(i, n) {
        cu_store(&dx[i], mxk_act_grad(act, dy[i], r[i]), req);
    }
}

/** y of leaky, elu, selu, gelu. */
static __global__ void cu_lrelu_fwd_kernel(int32_t act, float slope, float *y, const float *x,
                                           uint64_t n, int32_t req) {
    CU_KERNEL_LOOP(i, n) {
        cu_store(&y[i], mxk_lrelu_f(act, slope, x[i]), req);
    }
}

/** dx of leaky, elu, selu, gelu, or rrelu (mask given). */
static __global__ void cu_lrelu_bwd_kernel(int32_t act, float slope, float *dx, const float *dy,
                                           const float *r, const float *mask, uint64_t n,
                                           int32_t req) {
    CU_KERNEL_LOOP(i, n) {
        float d = mask != NULL ? (r[i] > 0.0f ? 1.0f : mask[i]) : mxk_lrelu_df(act, slope, r[i]);
        cu_store(&dx[i], d * dy[i], req);
    }
}

/** rrelu's slope of element e (see the file comment). */
static __device__ float cu_rrelu_slope(const cu_rrelu_draw &d, uint64_t e) {
    if (!d.train)
        return 0.5f * (d.lower + d.upper);
    mxk_philox_block b =
        mxk_philox4x32_10(mxk_philox_counter(d.pos.counter_lo, d.pos.counter_hi, e / 4), d.pos.key);
    return mxk_philox_uniform(b.v[e % 4], d.lower, d.upper);
}

/** rrelu forward (see cu_launch_rrelu_forward). */
static __global__ void cu_rrelu_fwd_kernel(float *y, float *mask, const float *x, uint64_t n,
                                           cu_rrelu_draw d, int32_t req) {
    CU_KERNEL_LOOP(i, n) {
        float s = cu_rrelu_slope(d, i), v = x[i];
        if (y != NULL)
            cu_store(&y[i], v > 0.0f ? v : s * v, req);
        if (mask != NULL)
            mask[i] = s;
    }
}

/** prelu forward on the (outer, c, inner) view. */
static __global__ void cu_prelu_fwd_kernel(float *y, const float *x, const float *gamma, uint64_t c,
                                           uint64_t inner, uint64_t gs, uint64_t n, int32_t req) {
    CU_KERNEL_LOOP(i, n) {
        float v = x[i];
        cu_store(&y[i], v > 0.0f ? v : gamma[(i / inner) % c * gs] * v, req);
    }
}

/** prelu's dx. */
static __global__ void cu_prelu_bwd_data_kernel(float *dx, const float *dy, const float *x,
                                                const float *gamma, uint64_t c, uint64_t inner,
                                                uint64_t gs, uint64_t n, int32_t req) {
    CU_KERNEL_LOOP(i, n) {
        float g = dy[i];
        cu_store(&dx[i], x[i] > 0.0f ? g : gamma[(i / inner) % c * gs] * g, req);
    }
}

/**
 * prelu's dgamma: block b sums dy x over x <= 0 of channel b (gs 1) or of every
 * channel (gs 0, one block) in double, then reduces in shared memory.
 */
static __global__ void cu_prelu_bwd_gamma_kernel(float *dg, const float *dy, const float *x,
                                                 uint64_t outer, uint64_t c, uint64_t inner,
                                                 uint64_t gs, int32_t req) {
    __shared__ double part[CU_THREADS];
    const uint64_t j = blockIdx.x, per = gs ? outer * inner : outer * c * inner;
    double acc = 0.0;
    for (uint64_t t = threadIdx.x; t < per; t += blockDim.x) {
        uint64_t e = gs ? (t / inner * c + j) * inner + t % inner : t;
        if (x[e] <= 0.0f)
            acc += (double)dy[e] * x[e];
    }
    double total = cu_block_reduce(acc, part, cu_sum_op());
    if (threadIdx.x == 0)
        cu_store(&dg[j], (float)total, req);
}

extern "C" cudaError_t cu_launch_act_forward(int32_t act, float *y, const float *x, uint64_t n,
                                             int32_t req, cudaStream_t stream) {
    cu_act_fwd_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(act, y, x, n, req);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_act_backward(int32_t act, float *dx, const float *dy,
                                              const float *r, uint64_t n, int32_t req,
                                              cudaStream_t stream) {
    cu_act_bwd_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(act, dx, dy, r, n, req);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_lrelu_forward(int32_t act, float slope, float *y, const float *x,
                                               uint64_t n, int32_t req, cudaStream_t stream) {
    cu_lrelu_fwd_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(act, slope, y, x, n, req);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_lrelu_backward(int32_t act, float slope, float *dx,
                                                const float *dy, const float *r, const float *mask,
                                                uint64_t n, int32_t req, cudaStream_t stream) {
    cu_lrelu_bwd_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(act, slope, dx, dy, r, mask, n,
                                                                 req);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_rrelu_forward(float *y, float *mask, const float *x, uint64_t n,
                                               cu_rrelu_draw draw, int32_t req,
                                               cudaStream_t stream) {
    cu_rrelu_fwd_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(y, mask, x, n, draw, req);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_prelu_forward(float *y, const float *x, const float *gamma,
                                               uint64_t c, uint64_t inner, uint64_t gs, uint64_t n,
                                               int32_t req, cudaStream_t stream) {
    cu_prelu_fwd_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(y, x, gamma, c, inner, gs, n, req);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_prelu_backward_data(float *dx, const float *dy, const float *x,
                                                     const float *gamma, uint64_t c, uint64_t inner,
                                                     uint64_t gs, uint64_t n, int32_t req,
                                                     cudaStream_t stream) {
    cu_prelu_bwd_data_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(dx, dy, x, gamma, c, inner,
                                                                      gs, n, req);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_prelu_backward_gamma(float *dgamma, const float *dy,
                                                      const float *x, uint64_t outer, uint64_t c,
                                                      uint64_t inner, uint64_t gs, int32_t req,
                                                      cudaStream_t stream) {
    unsigned blocks = gs ? (unsigned)c : 1u;
    if (blocks == 0) /* no channel, no gradient */
        return cudaSuccess;
    cu_prelu_bwd_gamma_kernel<<<blocks, CU_THREADS, 0, stream>>>(dgamma, dy, x, outer, c, inner, gs,
                                                                 req);
    return cu_launched();
}
