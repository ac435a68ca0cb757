/*
 * cuda plugin: launchers of the loss-layer kernels (cu_kern_loss.cu) for
 * SoftmaxOutput, the regression outputs, SVMOutput and softmax_cross_entropy
 * (cu_ops_loss.c, cu_ops_regression.c). Float32 tensors; pointers are device
 * memory; `req` is the write request of the written tensor; the work is queued on
 * `stream`.
 */
#ifndef MXK_CU_KERN_LOSS_H
#define MXK_CU_KERN_LOSS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Softmax of each group of k elements of stride `inner` (outer x inner groups,
 * group (o, r) starting at o k inner + r) of x into y by req; y may be x. One warp
 * per group when inner is 1, else one thread; the sum of exponentials in double,
 * as cpu-blas.
 */
cudaError_t cu_launch_softmax_groups(const float *x, float *y, int32_t req, uint64_t outer,
                                     uint64_t k, uint64_t inner, cudaStream_t stream);

/** Counts the labels in lab[0 .. n) that are not ignore_label into *count (one block). */
cudaError_t cu_launch_count_valid(const float *lab, uint64_t n, double ignore, uint64_t *count,
                                  cudaStream_t stream);

/** SoftmaxOutput's class-label gradient (plugins/common/mxk_loss.h). */
typedef struct cu_smo_grad_args {
    uint64_t outer, k, inner; /**< the softmax groups, as cu_launch_softmax_groups */
    double ignore_label;
    int32_t use_ignore;
    float alpha, off; /**< smoothing of the label's class and of the others */
    /** scale = grad_scale / div, or grad_scale / max(*valid_count, 1) when valid_count is set */
    double grad_scale, div;
    const uint64_t *valid_count; /**< device count of cu_launch_count_valid, or NULL */
    int32_t times_output;        /**< out_grad=True: the gradient times the output */
} cu_smo_grad_args;

/** g = SoftmaxOutput's gradient of output y with class labels lab (one per group), by req. */
cudaError_t cu_launch_softmax_output_grad(const float *y, const float *lab, float *g, int32_t req,
                                          cu_smo_grad_args a, cudaStream_t stream);

/**
 * Elementwise over n: out = a - b (b NULL: a) scaled by s, times a when `times_a`,
 * by req. Probability-label SoftmaxOutput gradient ((y - label) s, times y with
 * out_grad=True) and identity forwards (b NULL, s 1).
 */
cudaError_t cu_launch_loss_diff(const float *a, const float *b, float s, int32_t times_a,
                                float *out, int32_t req, uint64_t n, cudaStream_t stream);

/** LogisticRegressionOutput's forward: y = sigmoid(x) by req over n (y may be x). */
cudaError_t cu_launch_sigmoid(const float *x, float *y, int32_t req, uint64_t n,
                              cudaStream_t stream);

/** The regression gradient dx = scale (y - l) (or its sign: mae) by req over n. */
cudaError_t cu_launch_regression_grad(const float *y, const float *l, float *dx, int32_t req,
                                      uint64_t n, float scale, int32_t mae, cudaStream_t stream);

/** SVMOutput's gradient over rows x k scores y with one label per row, by req. */
cudaError_t cu_launch_svm_grad(const float *y, const float *lab, float *g, int32_t req,
                               uint64_t rows, uint64_t k, float margin, float coef, int32_t linear,
                               cudaStream_t stream);

/**
 * softmax_cross_entropy's forward: *acc (a device double, zeroed by the caller)
 * accumulates -log(max(softmax(x_r)[label_r], 1e-8)) over the n rows of k; a label
 * outside [0, k) adds NaN. Then cu_launch_sce_store writes it to out[0] by req.
 */
cudaError_t cu_launch_sce_rows(const float *x, const float *lab, uint64_t n, uint64_t k,
                               double *acc, cudaStream_t stream);

/** Stores (float)*acc into out[0] by req. */
cudaError_t cu_launch_sce_store(const double *acc, float *out, int32_t req, cudaStream_t stream);

/**
 * softmax_cross_entropy's backward: g = dy[0] (softmax(x_r) - onehot(label_r)) by req
 * (a row with a label outside [0, k) gets NaN).
 */
cudaError_t cu_launch_sce_grad(const float *x, const float *lab, const float *dy, float *g,
                               int32_t req, uint64_t n, uint64_t k, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MXK_CU_KERN_LOSS_H */
