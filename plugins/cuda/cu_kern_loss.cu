/*
 * cuda plugin: the loss-layer kernels (cu_kern_loss.h): softmax over strided
 * groups (SoftmaxOutput's forward), SoftmaxOutput's gradients, the regression
 * outputs, SVMOutput's hinge gradient and softmax_cross_entropy.
 *
 * Semantics: MXNet src/operator/softmax_output-inl.h (and mshadow's Softmax /
 * SoftmaxGrad on the GPU, 3rdparty/mshadow/mshadow/cuda/tensor_gpu-inl.cuh),
 * regression_output-inl.h, svm_output-inl.h and loss_binary_op-inl.h, computed as
 * cpu-blas does: per-element gradients are plugins/common/mxk_loss.h's. Row
 * reductions run one warp per softmax group (sums in double, as cpu-blas, in
 * another order); softmax_cross_entropy's batch sum uses double atomics. Labels
 * are read as floats and truncated; a label outside [0, k) selects no class
 * (SoftmaxOutput, SVMOutput) or gives NaN (softmax_cross_entropy, which cpu-blas
 * reports as an error).
 */
#include <math.h>

#include "cu_kern_loss.h"
#include "cu_launch.cuh"
#include "cu_req.cuh"
#include "mxk_loss.h"

/** Threads of a warp. */
#define CU_WARP 32

/** The maximum of v over the W lanes of a group (every lane gets it; W 1 or 32). */
template <int W> static __device__ inline float cu_group_max(float v) {
    for (int o = W / 2; o > 0; o /= 2)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/** The sum of v over the W lanes of a group (every lane gets it; W 1 or 32). */
template <int W> static __device__ inline double cu_group_sum(double v) {
    for (int o = W / 2; o > 0; o /= 2)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

/**
 * for (w over [0, n) groups): W threads per group (a warp, or one thread),
 * grid-stride; declares `w` and `lane`. A warp's lanes share w, so the loop stays
 * converged for the shuffles.
 */
#define CU_GROUP_LOOP(W, w, lane, n)                                                               \
    const unsigned lane = threadIdx.x % (W);                                                       \
    for (uint64_t w = ((uint64_t)blockIdx.x * blockDim.x + threadIdx.x) / (W); w < (uint64_t)(n);  \
         w += (uint64_t)gridDim.x * blockDim.x / (W))

/** Blocks for n warp-sized groups at CU_THREADS threads per block. */
static unsigned cu_warp_blocks(uint64_t n) {
    return cu_blocks(n * CU_WARP);
}

/**
 * Softmax of group w = (o, r) into y by W threads; every lane reads x[i] before
 * writing y[i]. W = 32 (a warp per group) for contiguous groups, W = 1 for strided
 * ones (inner > 1), whose neighbouring threads then read neighbouring elements.
 */
template <int W>
__global__ void cu_softmax_groups_kernel(const float *x, float *y, int32_t req, uint64_t outer,
                                         uint64_t k, uint64_t inner) {
    CU_GROUP_LOOP(W, w, lane, outer * inner) {
        const uint64_t st = inner, base = (w / inner) * k * inner + w % inner;
        float mx = -INFINITY;
        for (uint64_t j = lane; j < k; j += W)
            mx = fmaxf(mx, x[base + j * st]);
        mx = cu_group_max<W>(mx);
        double sum = 0.0;
        for (uint64_t j = lane; j < k; j += W)
            sum += (double)expf(x[base + j * st] - mx);
        float inv = (float)(1.0 / cu_group_sum<W>(sum));
        for (uint64_t j = lane; j < k; j += W)
            cu_store(&y[base + j * st], expf(x[base + j * st] - mx) * inv, req);
    }
}

extern "C" cudaError_t cu_launch_softmax_groups(const float *x, float *y, int32_t req,
                                                uint64_t outer, uint64_t k, uint64_t inner,
                                                cudaStream_t stream) {
    if (inner > 1)
        cu_softmax_groups_kernel<1>
            <<<cu_blocks(outer * inner), CU_THREADS, 0, stream>>>(x, y, req, outer, k, inner);
    else
        cu_softmax_groups_kernel<CU_WARP>
            <<<cu_warp_blocks(outer), CU_THREADS, 0, stream>>>(x, y, req, outer, k, inner);
    return cu_launched();
}

/** One block counts the labels that are not ignore_label. */
__global__ void cu_count_valid_kernel(const float *lab, uint64_t n, double ignore,
                                      uint64_t *count) {
    __shared__ uint64_t part[CU_THREADS];
    uint64_t c = 0;
    for (uint64_t i = threadIdx.x; i < n; i += blockDim.x)
        c += !mxk_loss_ignored(lab[i], ignore);
    uint64_t total = cu_block_reduce(c, part, cu_sum_op());
    if (threadIdx.x == 0)
        *count = total;
}

extern "C" cudaError_t cu_launch_count_valid(const float *lab, uint64_t n, double ignore,
                                             uint64_t *count, cudaStream_t stream) {
    cu_count_valid_kernel<<<1, CU_THREADS, 0, stream>>>(lab, n, ignore, count);
    return cu_launched();
}

/** Element i of SoftmaxOutput's class-label gradient. */
__global__ void cu_softmax_output_grad_kernel(const float *y, const float *lab, float *g,
                                              int32_t req, cu_smo_grad_args a) {
    double div = a.div;
    if (a.valid_count != NULL)
        div = *a.valid_count == 0 ? 1.0 : (double)*a.valid_count;
    const float scale = (float)(a.grad_scale / div);
    CU_KERNEL_LOOP(i, a.outer * a.k * a.inner) {
        uint64_t o = i / (a.k * a.inner), rem = i % (a.k * a.inner);
        uint64_t j = rem / a.inner, li = o * a.inner + rem % a.inner;
        float l = lab[li];
        int ignored = a.use_ignore && mxk_loss_ignored(l, a.ignore_label);
        int64_t cls = mxk_loss_class(l, a.k);
        float yi = y[i];
        float v = mxk_loss_softmax_grad(yi, (int64_t)j == cls, ignored, a.alpha, a.off, scale);
        cu_store(&g[i], a.times_output ? v * yi : v, req);
    }
}

extern "C" cudaError_t cu_launch_softmax_output_grad(const float *y, const float *lab, float *g,
                                                     int32_t req, cu_smo_grad_args a,
                                                     cudaStream_t stream) {
    cu_softmax_output_grad_kernel<<<cu_blocks(a.outer * a.k * a.inner), CU_THREADS, 0, stream>>>(
        y, lab, g, req, a);
    return cu_launched();
}

/** out = (a - b) s (b NULL: a s), times a when times_a. */
__global__ void cu_loss_diff_kernel(const float *a, const float *b, float s, int32_t times_a,
                                    float *out, int32_t req, uint64_t n) {
    CU_KERNEL_LOOP(i, n) {
        float ai = a[i];
        float v = b != NULL ? (ai - b[i]) * s : ai * s;
        cu_store(&out[i], times_a ? v * ai : v, req);
    }
}

extern "C" cudaError_t cu_launch_loss_diff(const float *a, const float *b, float s, int32_t times_a,
                                           float *out, int32_t req, uint64_t n,
                                           cudaStream_t stream) {
    cu_loss_diff_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(a, b, s, times_a, out, req, n);
    return cu_launched();
}

/** y = sigmoid(x). */
__global__ void cu_sigmoid_kernel(const float *x, float *y, int32_t req, uint64_t n) {
    CU_KERNEL_LOOP(i, n) {
        cu_store(&y[i], mxk_loss_sigmoid(x[i]), req);
    }
}

extern "C" cudaError_t cu_launch_sigmoid(const float *x, float *y, int32_t req, uint64_t n,
                                         cudaStream_t stream) {
    cu_sigmoid_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(x, y, req, n);
    return cu_launched();
}

/** dx = the regression gradient. */
__global__ void cu_regression_grad_kernel(const float *y, const float *l, float *dx, int32_t req,
                                          uint64_t n, float scale, int32_t mae) {
    CU_KERNEL_LOOP(i, n) {
        cu_store(&dx[i], mxk_loss_regression_grad(y[i], l[i], mae, scale), req);
    }
}

extern "C" cudaError_t cu_launch_regression_grad(const float *y, const float *l, float *dx,
                                                 int32_t req, uint64_t n, float scale, int32_t mae,
                                                 cudaStream_t stream) {
    cu_regression_grad_kernel<<<cu_blocks(n), CU_THREADS, 0, stream>>>(y, l, dx, req, n, scale,
                                                                       mae);
    return cu_launched();
}

/** Element i = (r, j) of SVMOutput's gradient. */
__global__ void cu_svm_grad_kernel(const float *y, const float *lab, float *g, int32_t req,
                                   uint64_t rows, uint64_t k, float margin, float coef,
                                   int32_t linear) {
    CU_KERNEL_LOOP(i, rows * k) {
        int64_t c = mxk_loss_class(lab[i / k], k);
        cu_store(&g[i], mxk_loss_svm_grad(y[i], (int64_t)(i % k) == c, margin, coef, linear), req);
    }
}

extern "C" cudaError_t cu_launch_svm_grad(const float *y, const float *lab, float *g, int32_t req,
                                          uint64_t rows, uint64_t k, float margin, float coef,
                                          int32_t linear, cudaStream_t stream) {
    cu_svm_grad_kernel<<<cu_blocks(rows * k), CU_THREADS, 0, stream>>>(y, lab, g, req, rows, k,
                                                                       margin, coef, linear);
    return cu_launched();
}

/**
 * The max and the sum of exp(x_j - max) (double) of row x of k, over the warp
 * (every lane gets both).
 */
static __device__ inline void cu_row_softmax_stats(const float *x, uint64_t k, unsigned lane,
                                                   float *mx, double *sum) {
    float m = -INFINITY;
    for (uint64_t j = lane; j < k; j += CU_WARP)
        m = fmaxf(m, x[j]);
    m = cu_group_max<CU_WARP>(m);
    double s = 0.0;
    for (uint64_t j = lane; j < k; j += CU_WARP)
        s += exp((double)x[j] - m);
    *mx = m;
    *sum = cu_group_sum<CU_WARP>(s);
}

/** One warp per row: *acc += -log(max(p_label, 1e-8)). */
__global__ void cu_sce_rows_kernel(const float *x, const float *lab, uint64_t n, uint64_t k,
                                   double *acc) {
    CU_GROUP_LOOP(CU_WARP, r, lane, n) {
        const float *xr = x + r * k;
        float mx;
        double sum;
        cu_row_softmax_stats(xr, k, lane, &mx, &sum);
        if (lane == 0) {
            int64_t c = mxk_loss_class(lab[r], k);
            double p = c < 0 ? NAN : (double)(float)(exp((double)xr[c] - mx) / sum);
            atomicAdd(acc, -log(fmax(p, 1e-8)));
        }
    }
}

extern "C" cudaError_t cu_launch_sce_rows(const float *x, const float *lab, uint64_t n, uint64_t k,
                                          double *acc, cudaStream_t stream) {
    cu_sce_rows_kernel<<<cu_warp_blocks(n), CU_THREADS, 0, stream>>>(x, lab, n, k, acc);
    return cu_launched();
}

/** out[0] = (float)*acc by req. */
__global__ void cu_sce_store_kernel(const double *acc, float *out, int32_t req) {
    cu_store(out, (float)*acc, req);
}

extern "C" cudaError_t cu_launch_sce_store(const double *acc, float *out, int32_t req,
                                           cudaStream_t stream) {
    cu_sce_store_kernel<<<1, 1, 0, stream>>>(acc, out, req);
    return cu_launched();
}

/** One warp per row: g = dy[0] (softmax - onehot). */
__global__ void cu_sce_grad_kernel(const float *x, const float *lab, const float *dy, float *g,
                                   int32_t req, uint64_t n, uint64_t k) {
    const double s = dy[0];
    CU_GROUP_LOOP(CU_WARP, r, lane, n) {
        const float *xr = x + r * k;
        float mx;
        double sum;
        cu_row_softmax_stats(xr, k, lane, &mx, &sum);
        int64_t c = mxk_loss_class(lab[r], k);
        for (uint64_t j = lane; j < k; j += CU_WARP) {
            double p = exp((double)xr[j] - mx) / sum;
            double v = c < 0 ? NAN : s * (p - ((int64_t)j == c));
            cu_store(&g[r * k + j], (float)v, req);
        }
    }
}

extern "C" cudaError_t cu_launch_sce_grad(const float *x, const float *lab, const float *dy,
                                          float *g, int32_t req, uint64_t n, uint64_t k,
                                          cudaStream_t stream) {
    cu_sce_grad_kernel<<<cu_warp_blocks(n), CU_THREADS, 0, stream>>>(x, lab, dy, g, req, n, k);
    return cu_launched();
}
