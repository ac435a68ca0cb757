/*
 * cuda plugin: the GPU kernels of LRN (cu_ops_lrn.c), one thread per element
 * summing its channel window in increasing channel order in float, as cpu-blas
 * does (compiled without fused multiply-add, sources.cmake, so every product is
 * rounded as cpu-blas rounds it).
 *
 * Semantics: MXNet src/operator/nn/lrn-inl.h (LRNOp: norm = knorm + alpha/n *
 * sum of x^2 over the window, y = x norm^-beta) with cpu-blas op_lrn.c's window
 * [c - half, c + half] clipped to the channels (half = (nsize - 1) / 2).
 */
#include "cu_kern_layer.h"
#include "cu_launch.cuh"
#include "cu_req.cuh"

/** The clipped window [*c0, *c1] of channel c. */
static __device__ __forceinline__ void cu_lrn_window(const cu_lrn_geom &g, int64_t c, int64_t *c0,
                                                     int64_t *c1) {
    *c0 = c - g.half < 0 ? 0 : c - g.half;
    *c1 = c + g.half >= g.C ? g.C - 1 : c + g.half;
}

/** Forward: tmp_norm and y of element i = (n, c, s). */
static __global__ void cu_lrn_fwd_kernel(cu_lrn_geom g, const float *x, float *y, float *tn,
                                         int32_t req_y, int32_t req_tn) {
    CU_KERNEL_LOOP(i, (uint64_t)(g.N * g.C * g.S)) {
        const int64_t s = (int64_t)i % g.S, c = (int64_t)i / g.S % g.C,
                      n = (int64_t)i / (g.S * g.C);
        int64_t c0, c1;
        cu_lrn_window(g, c, &c0, &c1);
        float acc = 0.0f;
        for (int64_t cc = c0; cc <= c1; cc++) {
            const float v = x[(n * g.C + cc) * g.S + s];
            acc += v * v;
        }
        const float nm = g.k + g.a * acc;
        if (tn != NULL)
            cu_store(&tn[i], nm, req_tn);
        if (y != NULL)
            cu_store(&y[i], x[i] * powf(nm, g.nbeta), req_y);
    }
}

/** Backward: dx of element i = (n, c, s). */
static __global__ void cu_lrn_bwd_kernel(cu_lrn_geom g, const float *x, const float *dy,
                                         const float *nm, float *dx, int32_t req) {
    CU_KERNEL_LOOP(i, (uint64_t)(g.N * g.C * g.S)) {
        const int64_t s = (int64_t)i % g.S, c = (int64_t)i / g.S % g.C,
                      n = (int64_t)i / (g.S * g.C);
        int64_t c0, c1;
        cu_lrn_window(g, c, &c0, &c1);
        float acc = 0.0f;
        for (int64_t cc = c0; cc <= c1; cc++) {
            const int64_t e = (n * g.C + cc) * g.S + s;
            acc += dy[e] * x[e] * powf(nm[e], g.nbeta1);
        }
        const float v = dy[i] * powf(nm[i], g.nbeta) - g.coef * x[i] * acc;
        cu_store(&dx[i], v, req);
    }
}

extern "C" cudaError_t cu_launch_lrn_forward(cu_lrn_geom g, const float *x, float *y,
                                             float *tmp_norm, const int32_t req[2],
                                             cudaStream_t stream) {
    cu_lrn_fwd_kernel<<<cu_blocks((uint64_t)(g.N * g.C * g.S)), CU_THREADS, 0, stream>>>(
        g, x, y, tmp_norm, req[0], req[1]);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_lrn_backward(cu_lrn_geom g, const float *x, const float *dy,
                                              const float *norm, float *dx, int32_t req,
                                              cudaStream_t stream) {
    cu_lrn_bwd_kernel<<<cu_blocks((uint64_t)(g.N * g.C * g.S)), CU_THREADS, 0, stream>>>(
        g, x, dy, norm, dx, req);
    return cu_launched();
}
