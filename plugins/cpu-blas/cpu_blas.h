/*
 * cpu-blas plugin: internal declarations shared by its source files.
 *
 * The plugin provides the CPU device backend ("cpu", MXK_DEV_CPU) and float32
 * kernels of mxk's reference operator set, computed with plain C loops and
 * OpenBLAS (CBLAS). Every op_*.c file registers one family of operators (its
 * semantics, mxk_op_def, and its CPU kernel, mxk_op_kernel_def); plugin.c
 * calls them from mxk_plugin_init. Nothing here is exported from the .so.
 */
#ifndef MXK_CPU_BLAS_H
#define MXK_CPU_BLAS_H

#include <stddef.h>
#include <stdint.h>

#include <cblas.h>

#include "mxk_sdk.h"

/** Backend name of every kernel registered by this plugin. */
#define CB_BACKEND "cpu-blas"

/** Most inputs / outputs of any operator of this plugin (shape checks use fixed arrays). */
#define CB_MAX_IO 5

/* --- threads.c: the thread knob and the worker pool ------------------------------ */

/**
 * Records the plugin option `num_threads` (0: none) and sets OpenBLAS to one
 * thread for the whole process (the plugin splits matrix products itself, see
 * cb_sgemm); called once from init, before any kernel runs.
 */
void cb_threads_init(int64_t option_threads);

/** Stops and joins the pool's workers; idempotent; a later region starts new ones. */
void cb_threads_shutdown(void);

/**
 * The threads a kernel call with `ctx` may use: ctx->num_threads (mxk's knob)
 * capped by the plugin option when that is > 0; knob absent or 0: the option,
 * else the online CPUs. At most 64.
 */
int cb_num_threads(const mxk_op_ctx *ctx);

/** A part of a parallel region: part t of nt (0 <= t < nt). */
typedef void (*cb_task_fn)(void *arg, int t, int nt);

/**
 * Runs fn(arg, t, nt) for every t in [0, nt) at once, part 0 on the calling
 * thread and the others on the pool's workers, and returns when all are done.
 * When the pool is busy (another thread's region, or a call from inside a region)
 * or nt <= 1 it runs fn(arg, 0, 1) on the calling thread instead, so `fn` must
 * cover all the work for any nt it is given. Thread-safe.
 */
void cb_parallel_run(int nt, cb_task_fn fn, void *arg);

/** A loop body over items [begin, end). */
typedef void (*cb_range_fn)(void *arg, int64_t begin, int64_t end);

/**
 * Runs fn over [0, n) split into contiguous ranges, one per thread, using at most
 * cb_num_threads(ctx) threads and at least `grain` items per thread (n < 2 grain:
 * one call on this thread). Ranges never overlap, so bodies that write only their
 * items need no locking. Thread-safe.
 */
void cb_parallel_for(const mxk_op_ctx *ctx, int64_t n, int64_t grain, cb_range_fn fn, void *arg);

/**
 * cblas_sgemm (row-major; arguments as CBLAS) over up to cb_num_threads(ctx)
 * threads: C is split into row blocks when M > N, else into column blocks of 16,
 * each computed by one single-threaded sgemm; products under 2^19 multiply-adds
 * per thread are not split. Each element of C is computed as by an unsplit call
 * on one thread. Thread-safe.
 */
void cb_sgemm(const mxk_op_ctx *ctx, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K,
              float alpha, const float *A, int lda, const float *B, int ldb, float beta, float *C,
              int ldc);

/* --- common.c: registration and kernel-argument checks ------------------------- */

/** An element-wise loop of cb_loops.h's CB_DEFINE_UNARY shape. */
typedef void (*cb_unary_fn)(float *out, const float *in, float s, size_t n, mxk_op_req req);
/** An element-wise loop of cb_loops.h's CB_DEFINE_BINARY shape. */
typedef void (*cb_binary_fn)(float *out, const float *a, const float *b, float s, size_t n,
                             mxk_op_req req);

/** Fewest elements per thread worth splitting an element-wise loop for. */
#define CB_ELEMWISE_GRAIN 32768

/**
 * fn(out, in, s, n, req) split into contiguous element ranges over the kernel's
 * threads (cb_parallel_for, grain CB_ELEMWISE_GRAIN); same aliasing rules as fn.
 */
void cb_unary_parallel(const mxk_op_ctx *ctx, cb_unary_fn fn, float *out, const float *in, float s,
                       size_t n, mxk_op_req req);

/** fn(out, a, b, s, n, req) split as cb_unary_parallel. */
void cb_binary_parallel(const mxk_op_ctx *ctx, cb_binary_fn fn, float *out, const float *a,
                        const float *b, float s, size_t n, mxk_op_req req);

/** Signature of mxk_op_def.infer_shape (used to re-check shapes in kernels). */
typedef mxk_status (*cb_infer_shape_fn)(const void *param, mxk_shape *in_shapes, uint32_t num_in,
                                        mxk_shape *out_shapes, uint32_t num_out,
                                        mxk_shape *aux_shapes, uint32_t num_aux,
                                        mxk_error_sink *err);

/**
 * Fills a kernel definition for `op_name` on MXK_DEV_CPU, backend "cpu-blas",
 * priority 0, flags SUPPORTS_ADDTO (the kernels are stateless and
 * write every output through its request), `supports` = cb_supports_f32.
 */
void cb_kernel_init(mxk_op_kernel_def *k, const char *op_name,
                    mxk_status (*forward)(const mxk_op_ctx *, const void *, void *,
                                          const mxk_forward_args *, mxk_error_sink *),
                    mxk_status (*backward)(const mxk_op_ctx *, const void *, void *,
                                           const mxk_backward_args *, mxk_error_sink *));

/** Registers `def` and then `kdef` through the registrar; returns the first error. */
mxk_status cb_register(mxk_registrar *reg, const mxk_op_def *def, const mxk_op_kernel_def *kdef,
                       mxk_error_sink *err);

/** mxk_op_kernel_def.supports: accepts when every known input type is float32. */
int32_t cb_supports_f32(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                        uint32_t num_in);

/**
 * Checks one tensor a kernel reads or writes: present (data != NULL), float32,
 * in CPU memory. `what` names it in the message ("argument 'data'", "gradient of
 * 'weight'"). Errors: MXK_ERR_INVALID_ARGUMENT, MXK_ERR_TYPE.
 */
mxk_status cb_check_tensor(const mxk_tensor *t, const char *what, mxk_error_sink *err);

/**
 * Checks the arguments of a forward call: `num_in` inputs and `num_out` outputs
 * (MXK_ERR_INVALID_ARGUMENT otherwise), every input and every requested output
 * passes cb_check_tensor, and their shapes are consistent according to the
 * operator's own shape inference `infer` (MXK_ERR_SHAPE naming the argument).
 * `arg_names` / `out_names` are NULL-terminated (for messages).
 */
mxk_status cb_check_forward(const mxk_forward_args *args, uint32_t num_in, uint32_t num_out,
                            const char *const *arg_names, const char *const *out_names,
                            cb_infer_shape_fn infer, const void *param, mxk_error_sink *err);

/**
 * Checks the counts of a backward call: `num_in` arguments (in_data, in_grad and
 * req) and `num_out` outputs (out_data; out_grad has `num_visible`).
 */
mxk_status cb_check_backward_counts(const mxk_backward_args *args, uint32_t num_in,
                                    uint32_t num_out, uint32_t num_visible, mxk_error_sink *err);

/**
 * Common start of the backward of the data/weight[/bias] operators (FullyConnected,
 * Convolution, Deconvolution): checks the counts (num_in arguments, 1 output) and
 * the tensors out_grad, data and weight. *needed is 0 when no gradient is
 * requested (the caller returns MXK_OK at once; the tensors are then not checked).
 */
mxk_status cb_begin_weighted_backward(const mxk_backward_args *args, uint32_t num_in, int *needed,
                                      mxk_error_sink *err);

/**
 * Checks a gradient output: nothing when req is NULL; otherwise cb_check_tensor
 * and the same element count as `expected` (MXK_ERR_SHAPE "gradient of 'weight':
 * expected (3,2), got (2,3)"-style otherwise). `name` is the argument's name.
 */
mxk_status cb_check_grad(const mxk_tensor *g, mxk_op_req req, const mxk_shape *expected,
                         const char *name, mxk_error_sink *err);

/**
 * Converts a dimension for CBLAS (int): MXK_ERR_UNSUPPORTED naming `what` when it
 * exceeds INT_MAX.
 */
mxk_status cb_blas_dim(uint64_t v, const char *what, int *out, mxk_error_sink *err);

/** The float32 data of a tensor (no checks). */
static inline float *cb_f32(const mxk_tensor *t) {
    return (float *)t->data;
}

/* --- registration functions, one per op_*.c file (and device_cpu.c) ----------- */

/** device_cpu.c: the CPU device backend (MXK_DEV_CPU, "cpu"). */
mxk_status cb_register_device(mxk_registrar *reg, mxk_error_sink *err);
/** op_fully_connected.c: FullyConnected. */
mxk_status cb_register_fully_connected(mxk_registrar *reg, mxk_error_sink *err);
/** op_activation.c: Activation. */
mxk_status cb_register_activation(mxk_registrar *reg, mxk_error_sink *err);
/** op_softmax_output.c: SoftmaxOutput. */
mxk_status cb_register_softmax_output(mxk_registrar *reg, mxk_error_sink *err);
/** op_elemwise.c: elemwise_add/sub/mul/div, _grad_add, _power, _maximum, _minimum, _hypot,
 * _equal ... _lesser_equal (MXNet's aliases on each). */
mxk_status cb_register_elemwise(mxk_registrar *reg, mxk_error_sink *err);
/** op_elemwise_scalar.c: _plus_scalar ... _rdiv_scalar, _power/_rpower/_maximum/_minimum/
 * _hypot_scalar, the comparison _scalar forms, smooth_l1. */
mxk_status cb_register_elemwise_scalar(mxk_registrar *reg, mxk_error_sink *err);
/** op_dot.c: dot, batch_dot. */
mxk_status cb_register_dot(mxk_registrar *reg, mxk_error_sink *err);
/** op_reduce.c: sum, mean, max, min, prod, nansum, norm. */
mxk_status cb_register_reduce(mxk_registrar *reg, mxk_error_sink *err);
/** op_reshape.c: Flatten, Reshape. */
mxk_status cb_register_reshape(mxk_registrar *reg, mxk_error_sink *err);
/** op_misc.c: BlockGrad, _copyto. */
mxk_status cb_register_misc(mxk_registrar *reg, mxk_error_sink *err);

/** op_convolution.c: Convolution, Deconvolution. */
mxk_status cb_register_convolution(mxk_registrar *reg, mxk_error_sink *err);
/** op_pooling.c: Pooling. */
mxk_status cb_register_pooling(mxk_registrar *reg, mxk_error_sink *err);
/** op_batchnorm.c: BatchNorm. */
mxk_status cb_register_batchnorm(mxk_registrar *reg, mxk_error_sink *err);
/** op_dropout.c: Dropout. */
mxk_status cb_register_dropout(mxk_registrar *reg, mxk_error_sink *err);
/** op_lrn.c: LRN. */
mxk_status cb_register_lrn(mxk_registrar *reg, mxk_error_sink *err);
/** op_upsampling.c: UpSampling. */
mxk_status cb_register_upsampling(mxk_registrar *reg, mxk_error_sink *err);
/** op_crop.c: Crop. */
mxk_status cb_register_crop(mxk_registrar *reg, mxk_error_sink *err);

/** op_optimizer.c: sgd_update, sgd_mom_update, adam_update. */
mxk_status cb_register_optimizer(mxk_registrar *reg, mxk_error_sink *err);
/** op_softmax.c: softmax, log_softmax, SoftmaxActivation. */
mxk_status cb_register_softmax(mxk_registrar *reg, mxk_error_sink *err);
/** op_regression.c: LinearRegressionOutput, LogisticRegressionOutput, MAERegressionOutput. */
mxk_status cb_register_regression(mxk_registrar *reg, mxk_error_sink *err);
/** op_concat.c: Concat, SliceChannel, stack. */
mxk_status cb_register_concat(mxk_registrar *reg, mxk_error_sink *err);
/** op_add_n.c: add_n (alias ElementWiseSum). */
mxk_status cb_register_add_n(mxk_registrar *reg, mxk_error_sink *err);
/** op_embedding.c: Embedding. */
mxk_status cb_register_embedding(mxk_registrar *reg, mxk_error_sink *err);
/** op_rnn.c: RNN (alias _npx_rnn), the fused recurrent layers. */
mxk_status cb_register_rnn(mxk_registrar *reg, mxk_error_sink *err);
/** op_leaky_relu.c: LeakyReLU. */
mxk_status cb_register_leaky_relu(mxk_registrar *reg, mxk_error_sink *err);
/** op_cast.c: Cast. */
mxk_status cb_register_cast(mxk_registrar *reg, mxk_error_sink *err);
/** op_unary.c: abs ... relu, negative, reciprocal, log1p, expm1, log2, log10, erf, softsign,
 * hard_sigmoid, clip. */
mxk_status cb_register_unary(mxk_registrar *reg, mxk_error_sink *err);
/** op_broadcast.c: broadcast_add ... broadcast_power, broadcast_hypot, the broadcast
 * comparisons. */
mxk_status cb_register_broadcast(mxk_registrar *reg, mxk_error_sink *err);
/** op_transpose.c: transpose, SwapAxis. */
mxk_status cb_register_transpose(mxk_registrar *reg, mxk_error_sink *err);
/** op_argmax.c: argmax, argmax_channel, one_hot. */
mxk_status cb_register_argmax(mxk_registrar *reg, mxk_error_sink *err);
/** op_random.c: _random_uniform, _random_normal, _random_gamma, _random_exponential,
 * _random_randint. */
mxk_status cb_register_random(mxk_registrar *reg, mxk_error_sink *err);
/** ops_init.c (and files listed in init.cmake): creation and shape operators (_copy, _zeros,
 * expand_dims, stack, tile, Pad, broadcast_to, ...). */
mxk_status cb_register_init_ops(mxk_registrar *reg, mxk_error_sink *err);
/** ops_index.c (and files listed in index.cmake): indexing and sequence operators (slice, take,
 * pick, gather_nd, where, Sequence*, batch_dot, topk, sort, ...). */
mxk_status cb_register_index_ops(mxk_registrar *reg, mxk_error_sink *err);
/** ops_math.c (and files listed in math.cmake): element-wise math, comparison and reduction
 * operators added for MXNet conformance. */
mxk_status cb_register_math_ops(mxk_registrar *reg, mxk_error_sink *err);
/** ops_norm.c (and files listed in norm.cmake): normalisation and loss operators (LayerNorm,
 * InstanceNorm, GroupNorm, L2Normalization, MakeLoss, SVMOutput, ...). */
mxk_status cb_register_norm_ops(mxk_registrar *reg, mxk_error_sink *err);
/** ops_spatial.c (and files listed in spatial.cmake): 1-D/3-D convolution and pooling helpers. */
mxk_status cb_register_spatial_ops(mxk_registrar *reg, mxk_error_sink *err);
/** ops_vision.c (and files listed in vision.cmake): spatial sampling and detection operators
 * (ROIPooling, BilinearSampler, MultiBox*, box_nms, ...). */
mxk_status cb_register_vision_ops(mxk_registrar *reg, mxk_error_sink *err);

#endif /* MXK_CPU_BLAS_H */
