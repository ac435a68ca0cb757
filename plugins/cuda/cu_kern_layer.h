/*
 * cuda plugin: launchers of the layer kernels (cu_kern_act.cu, cu_kern_softmax.cu,
 * cu_kern_pool.cu, cu_kern_bn.cu, cu_kern_lrn.cu), callable from the C11 host
 * sources (cu_ops_act.c, cu_ops_softmax.c, cu_ops_pool.c, cu_ops_bn.c,
 * cu_ops_lrn.c). Every launcher queues its kernels on `stream` and returns the
 * launch status. Pointers are device memory of float32 elements unless stated;
 * `req` is an output's write request (mxk_op_req: ADD accumulates, WRITE and
 * INPLACE store; a NULL request is never launched). Elementwise launchers allow
 * the output to be one of the inputs.
 */
#ifndef MXK_CU_KERN_LAYER_H
#define MXK_CU_KERN_LAYER_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "cu_kern_random.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- cu_kern_act.cu: Activation, LeakyReLU ------------------------------------- */

/** y = f(x) of Activation's act_type `act` (enum mxk_act_type). */
cudaError_t cu_launch_act_forward(int32_t act, float *y, const float *x, uint64_t n, int32_t req,
                                  cudaStream_t stream);

/** dx = dy f'(.) of Activation from r, the output (the input for softsign). */
cudaError_t cu_launch_act_backward(int32_t act, float *dx, const float *dy, const float *r,
                                   uint64_t n, int32_t req, cudaStream_t stream);

/** y of LeakyReLU's leaky, elu, selu or gelu (enum mxk_lrelu_type). */
cudaError_t cu_launch_lrelu_forward(int32_t act, float slope, float *y, const float *x, uint64_t n,
                                    int32_t req, cudaStream_t stream);

/**
 * dx = dy f'(.) of LeakyReLU's leaky, elu, selu (r: the output), gelu (r: the
 * input) or rrelu (r: the output, mask: the slopes; NULL for the others).
 */
cudaError_t cu_launch_lrelu_backward(int32_t act, float slope, float *dx, const float *dy,
                                     const float *r, const float *mask, uint64_t n, int32_t req,
                                     cudaStream_t stream);

/**
 * rrelu's slopes: uniform in [lower, upper) from the Philox blocks pos + e/4 in
 * training, as the host's random_uniform maps them; (lower + upper) / 2
 * otherwise.
 */
typedef struct cu_rrelu_draw {
    int32_t train;
    float lower, upper;
    cu_philox_pos pos;
} cu_rrelu_draw;

/** rrelu: y = x > 0 ? x : s x by `req` and the slopes s into mask, each unless NULL. */
cudaError_t cu_launch_rrelu_forward(float *y, float *mask, const float *x, uint64_t n,
                                    cu_rrelu_draw draw, int32_t req, cudaStream_t stream);

/**
 * prelu on the (outer, c, inner) view of n elements: y = x > 0 ? x : gamma[j*gs] x
 * for channel j (gs 0: one shared slope).
 */
cudaError_t cu_launch_prelu_forward(float *y, const float *x, const float *gamma, uint64_t c,
                                    uint64_t inner, uint64_t gs, uint64_t n, int32_t req,
                                    cudaStream_t stream);

/** prelu's dx = dy (x > 0 ? 1 : gamma[j*gs]). */
cudaError_t cu_launch_prelu_backward_data(float *dx, const float *dy, const float *x,
                                          const float *gamma, uint64_t c, uint64_t inner,
                                          uint64_t gs, uint64_t n, int32_t req,
                                          cudaStream_t stream);

/** prelu's dgamma[j] = sum over x <= 0 of dy x per channel (gs 0: one sum), in double. */
cudaError_t cu_launch_prelu_backward_gamma(float *dgamma, const float *dy, const float *x,
                                           uint64_t outer, uint64_t c, uint64_t inner, uint64_t gs,
                                           int32_t req, cudaStream_t stream);

/* --- cu_kern_softmax.cu: softmax, log_softmax, SoftmaxActivation ------------------ */

/**
 * The rows of a softmax: `outer * inner` rows of k elements `inner` apart;
 * length (NULL: none) holds one row length per row, of mxk_dtype length_dtype
 * (an integer type), clipped to [0, k]; y_dtype is the output's (and the output
 * gradient's) float dtype; temperature T divides x.
 */
typedef struct cu_softmax_view {
    uint64_t outer, k, inner;
    const void *length;
    int32_t length_dtype;
    int32_t y_dtype;
    int32_t log;
    double temperature;
} cu_softmax_view;

/** y = (log_)softmax(x / T) per row, 0 past the row's length; y (of y_dtype) may be x. */
cudaError_t cu_launch_softmax_forward(cu_softmax_view v, const float *x, void *y, int32_t req,
                                      cudaStream_t stream);

/** dx from dy and y (both of y_dtype) per row; dx may be dy. */
cudaError_t cu_launch_softmax_backward(cu_softmax_view v, const void *dy, const void *y, float *dx,
                                       int32_t req, cudaStream_t stream);

/* --- cu_kern_pool.cu: Pooling --------------------------------------------------- */

/**
 * One Pooling call on three axes (d, h, w), as cpu-blas's pl_geom: N*C planes
 * of D*H*W inputs and OD*OH*OW outputs, elements `es` apart within a plane (1:
 * channel-first; C: channel-last); kernel, stride, pad per axis; the pool type
 * (enum mxk_pool_type), lp's p and avg's count_include_pad.
 */
typedef struct cu_pool_geom {
    int64_t N, C, D, H, W, OD, OH, OW;
    int64_t kd, kh, kw, sd, sh, sw, pd, ph, pw;
    int64_t es;
    int32_t type, include_pad;
    int64_t p_value;
} cu_pool_geom;

/** y = the pooled windows of x by `req`. */
cudaError_t cu_launch_pool_forward(cu_pool_geom g, const float *x, float *y, int32_t req,
                                   cudaStream_t stream);

/**
 * dx = the routed dy of every window covering each input by `req` (x and y:
 * data and output, read by max and lp only; NULL otherwise).
 */
cudaError_t cu_launch_pool_backward(cu_pool_geom g, const float *x, const float *y, const float *dy,
                                    float *dx, int32_t req, cudaStream_t stream);

/* --- cu_kern_bn.cu: BatchNorm --------------------------------------------------- */

/**
 * One BatchNorm call: data viewed as (outer, C, inner); eps, momentum,
 * fix_gamma, and whether it normalises with the batch statistics (train).
 */
typedef struct cu_bn_geom {
    int64_t outer, C, inner;
    double eps;
    float momentum;
    int32_t fix_gamma, train;
} cu_bn_geom;

/**
 * Forward: per channel the batch (train) or moving statistics, y, the mean and
 * inverse-std outputs, each by its own request (a NULL output is skipped); with
 * fix_gamma writes 1 into gamma where it differs.
 */
cudaError_t cu_launch_bn_forward(cu_bn_geom g, const float *x, float *gamma, const float *beta,
                                 const float *moving_mean, const float *moving_var, float *y,
                                 float *mean, float *inv, const int32_t req[3],
                                 cudaStream_t stream);

/**
 * Backward: in training the moving-statistics update from mean / inv (the
 * forward's outputs), then dx, dgamma, dbeta, each by its own request (NULL
 * skipped; dy may be NULL when all three are).
 */
cudaError_t cu_launch_bn_backward(cu_bn_geom g, const float *x, const float *gamma, const float *dy,
                                  const float *mean, const float *inv, float *moving_mean,
                                  float *moving_var, float *dx, float *dgamma, float *dbeta,
                                  const int32_t req[3], cudaStream_t stream);

/* --- cu_kern_lrn.cu: LRN -------------------------------------------------------- */

/**
 * One LRN call on (N, C, S) data (S = H*W): the window [c - half, c + half]
 * clipped to the channels, scale a = alpha / nsize, offset k, the powers
 * -beta and -beta - 1 (each rounded from double, as cpu-blas rounds them) and
 * the backward's coefficient 2 beta alpha / nsize.
 */
typedef struct cu_lrn_geom {
    int64_t N, C, S, half;
    float a, k, nbeta, nbeta1, coef;
} cu_lrn_geom;

/** norm = k + a sum_window x^2 into tmp_norm and y = x norm^-beta, each by its request (NULL
 * skipped). */
cudaError_t cu_launch_lrn_forward(cu_lrn_geom g, const float *x, float *y, float *tmp_norm,
                                  const int32_t req[2], cudaStream_t stream);

/** dx = dy norm^-beta - coef x sum_window(dy x norm^(-beta-1)). */
cudaError_t cu_launch_lrn_backward(cu_lrn_geom g, const float *x, const float *dy,
                                   const float *norm, float *dx, int32_t req, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MXK_CU_KERN_LAYER_H */
