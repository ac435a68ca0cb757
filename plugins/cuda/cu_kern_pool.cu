/*
 * cuda plugin: the GPU kernels of Pooling (cu_ops_pool.c), exact against
 * cpu-blas's: the same windows, divisors and lp terms (plugins/common/mxk_pool.h)
 * reduced in the same order.
 *
 * Semantics: MXNet src/operator/nn/pool.cuh (pool_max_*_gpu_kernel,
 * pool_sum_*_gpu_kernel, unpool_*_gpu_kernel) and pool.h, on three axes (d, h, w)
 * with channel-first (es 1) or channel-last (es C) planes. Forward: one thread
 * per output. Backward gathers instead of scattering: one thread per input
 * element visits the windows that cover it in increasing output order and sums
 * their contributions in that order, as cpu-blas's scatter adds them, so no
 * atomics and the same float sums; max pooling with disjoint windows scatters
 * from one thread per output instead (no element gets two contributions). Max routes a window's
 * gradient to the FIRST element of its row-major scan equal to the output (pool.h unpool_max; cuDNN
 * and upstream's GPU kernel pick by their own order, so this rule is applied by
 * these kernels rather than cuDNN's).
 */
#include <float.h>

#include "cu_kern_layer.h"
#include "cu_launch.cuh"
#include "cu_req.cuh"
#include "mxk_pool.h"

/** Offset of the first element of plane nc in a tensor of `size` elements per plane. */
static __device__ __forceinline__ int64_t cu_pool_base(const cu_pool_geom &g, int64_t nc,
                                                       int64_t size) {
    return g.es == 1 ? nc * size : (nc / g.C) * size * g.C + nc % g.C;
}

/** A window clipped to the input, with avg's divisor. */
struct cu_pool_win {
    int64_t d0, d1, h0, h1, w0, w1;
    float size;
};

/** The window of output (od, oh, ow) (pool.h; cpu-blas pl_window). */
static __device__ cu_pool_win cu_pool_window(const cu_pool_geom &g, int64_t od, int64_t oh,
                                             int64_t ow) {
    cu_pool_win w;
    int64_t padded = mxk_pool_axis(od, g.sd, g.pd, g.kd, g.D, &w.d0, &w.d1) *
                     mxk_pool_axis(oh, g.sh, g.ph, g.kh, g.H, &w.h0, &w.h1) *
                     mxk_pool_axis(ow, g.sw, g.pw, g.kw, g.W, &w.w0, &w.w1);
    int64_t real = (w.d1 - w.d0) * (w.h1 - w.h0) * (w.w1 - w.w0);
    w.size = (float)(g.include_pad ? padded : real);
    return w;
}

/** Splits output or input element i into its plane nc and its position in the plane. */
static __device__ void cu_pool_split(const cu_pool_geom &g, int64_t i, int64_t size, int64_t *nc,
                                     int64_t *pos) {
    if (g.es == 1) {
        *nc = i / size, *pos = i % size;
    } else {
        int64_t n = i / (size * g.C), r = i % (size * g.C);
        *nc = n * g.C + r % g.C, *pos = r / g.C;
    }
}

/** Forward: output i = the reduction of its window (cpu-blas pl_reduce). */
static __global__ void cu_pool_fwd_kernel(cu_pool_geom g, const float *x, float *y, int32_t req) {
    const int64_t S = g.D * g.H * g.W, OS = g.OD * g.OH * g.OW;
    CU_KERNEL_LOOP(i, (uint64_t)(g.N * g.C * OS)) {
        int64_t nc, o;
        cu_pool_split(g, (int64_t)i, OS, &nc, &o);
        const cu_pool_win w = cu_pool_window(g, o / (g.OH * g.OW), o / g.OW % g.OH, o % g.OW);
        const float *xp = x + cu_pool_base(g, nc, S);
        float v = g.type == MXK_POOL_MAX ? -FLT_MAX : 0.0f;
        for (int64_t d = w.d0; d < w.d1; d++)
            for (int64_t h = w.h0; h < w.h1; h++)
                for (int64_t c = w.w0; c < w.w1; c++) {
                    const float e = xp[((d * g.H + h) * g.W + c) * g.es];
                    if (g.type == MXK_POOL_MAX)
                        v = e > v ? e : v;
                    else if (g.type == MXK_POOL_LP)
                        v += mxk_pool_pow(g.p_value, e);
                    else
                        v += e;
                }
        if (g.type == MXK_POOL_AVG)
            v = w.size > 0 ? v / w.size : 0.0f;
        else if (g.type == MXK_POOL_LP)
            v = mxk_pool_root(g.p_value, v);
        cu_store(&y[i], v, req);
    }
}

/** The outputs [*lo, *hi] along one axis whose windows cover input position d. */
static __device__ void cu_pool_cover(int64_t d, int64_t s, int64_t pad, int64_t k, int64_t out,
                                     int64_t *lo, int64_t *hi) {
    int64_t a = d + pad - k;
    *lo = a < 0 ? 0 : a / s + 1;
    int64_t b = (d + pad) / s;
    *hi = b < out - 1 ? b : out - 1;
}

/** The position in its plane xp of the first element of window w (row-major) equal to m; -1. */
static __device__ int64_t cu_pool_first_max(const cu_pool_geom &g, const cu_pool_win &w,
                                            const float *xp, float m) {
    for (int64_t d = w.d0; d < w.d1; d++)
        for (int64_t h = w.h0; h < w.h1; h++)
            for (int64_t c = w.w0; c < w.w1; c++) {
                const int64_t q = (d * g.H + h) * g.W + c;
                if (xp[q * g.es] == m)
                    return q;
            }
    return -1;
}

/** Backward: input element i gathers the gradients its covering windows route to it. */
static __global__ void cu_pool_bwd_kernel(cu_pool_geom g, const float *x, const float *y,
                                          const float *dy, float *dx, int32_t req) {
    const int64_t S = g.D * g.H * g.W, OS = g.OD * g.OH * g.OW;
    CU_KERNEL_LOOP(i, (uint64_t)(g.N * g.C * S)) {
        int64_t nc, p;
        cu_pool_split(g, (int64_t)i, S, &nc, &p);
        const int64_t d = p / (g.H * g.W), h = p / g.W % g.H, c = p % g.W;
        int64_t od0, od1, oh0, oh1, ow0, ow1;
        cu_pool_cover(d, g.sd, g.pd, g.kd, g.OD, &od0, &od1);
        cu_pool_cover(h, g.sh, g.ph, g.kh, g.OH, &oh0, &oh1);
        cu_pool_cover(c, g.sw, g.pw, g.kw, g.OW, &ow0, &ow1);
        const int64_t xb = cu_pool_base(g, nc, S), yb = cu_pool_base(g, nc, OS);
        float acc = req == MXK_REQ_ADD ? dx[i] : 0.0f;
        for (int64_t od = od0; od <= od1; od++)
            for (int64_t oh = oh0; oh <= oh1; oh++)
                for (int64_t ow = ow0; ow <= ow1; ow++) {
                    const int64_t o = yb + ((od * g.OH + oh) * g.OW + ow) * g.es;
                    const float gv = dy[o];
                    if (g.type == MXK_POOL_SUM) {
                        acc += gv;
                        continue;
                    }
                    const cu_pool_win w = cu_pool_window(g, od, oh, ow);
                    if (g.type == MXK_POOL_AVG)
                        acc += w.size > 0 ? gv / w.size : 0.0f;
                    else if (g.type == MXK_POOL_LP)
                        acc += mxk_pool_lp_grad(g.p_value, gv, x[i], y[o]);
                    else if (cu_pool_first_max(g, w, x + xb, y[o]) == p)
                        acc += gv;
                }
        dx[i] = acc;
    }
}

/**
 * Max backward when no two windows overlap: output i adds its gradient to the
 * first element of its window equal to it; each input lies in one window at
 * most, so no two threads write one element and each gets cpu-blas's sum.
 */
static __global__ void cu_pool_max_scatter_kernel(cu_pool_geom g, const float *x, const float *y,
                                                  const float *dy, float *dx) {
    const int64_t S = g.D * g.H * g.W, OS = g.OD * g.OH * g.OW;
    CU_KERNEL_LOOP(i, (uint64_t)(g.N * g.C * OS)) {
        int64_t nc, o;
        cu_pool_split(g, (int64_t)i, OS, &nc, &o);
        const cu_pool_win w = cu_pool_window(g, o / (g.OH * g.OW), o / g.OW % g.OH, o % g.OW);
        const int64_t xb = cu_pool_base(g, nc, S), q = cu_pool_first_max(g, w, x + xb, y[i]);
        if (q >= 0)
            dx[xb + q * g.es] += dy[i];
    }
}

extern "C" cudaError_t cu_launch_pool_forward(cu_pool_geom g, const float *x, float *y, int32_t req,
                                              cudaStream_t stream) {
    uint64_t n = (uint64_t)(g.N * g.C * g.OD * g.OH * g.OW);
    cu_pool_fwd_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(g, x, y, req);
    return cu_launched();
}

extern "C" cudaError_t cu_launch_pool_backward(cu_pool_geom g, const float *x, const float *y,
                                               const float *dy, float *dx, int32_t req,
                                               cudaStream_t stream) {
    uint64_t n = (uint64_t)(g.N * g.C * g.D * g.H * g.W);
    if (g.type == MXK_POOL_MAX && (g.sd >= g.kd || g.OD == 1) && (g.sh >= g.kh || g.OH == 1) &&
        (g.sw >= g.kw || g.OW == 1)) {
        /* disjoint windows (an axis of one output among them, so global pooling): a
         * thread per output, not a scan of the window per input */
        uint64_t on = (uint64_t)(g.N * g.C * g.OD * g.OH * g.OW);
        if (req != MXK_REQ_ADD && n > 0) {
            cudaError_t st = cudaMemsetAsync(dx, 0, n * sizeof(float), stream);
            if (st != cudaSuccess)
                return st;
        }
        cu_pool_max_scatter_kernel<<<cu_blocks(on), CU_THREADS, 0, stream>>>(g, x, y, dy, dx);
        return cu_launched();
    }
    cu_pool_bwd_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(g, x, y, dy, dx, req);
    return cu_launched();
}
