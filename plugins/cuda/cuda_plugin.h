/*
 * cuda plugin: internal declarations shared by its C11 host sources (cu_*.c).
 *
 * The plugin provides the GPU device backend ("gpu", MXK_DEV_GPU; cu_device.c) and
 * kernels on that device type for the operators another plugin defines (cpu-blas):
 * the operator definitions (attributes, inference, backward dependencies) stay one
 * truth there, and each kernel here parses the attributes it needs itself
 * (mxk_op_kernel_def.parse_param, ABI 1.2), as plugins/onednn does. Every
 * cu_ops_*.c family file registers its kernels from one cu_register_* function
 * that plugin.c calls; the GPU code they launch is CUDA C in cu_kern_*.cu behind
 * the C declarations of cu_kernels.h. Nothing here is exported from the .so.
 *
 * Streams: every kernel call runs on ctx->stream, the stream of the engine worker
 * that runs it (the engine creates it through this backend's stream_create and
 * waits for it after the call, so a kernel only enqueues work and returns).
 * cuBLAS and cuDNN handles are per thread and device (cu_blas, cu_dnn), bound to
 * the call's stream. Semantics: MXNet's GPU operators (src/operator/ *.cu) on
 * mshadow::Stream<gpu> (RunContext::get_stream<gpu>()).
 */
#ifndef MXK_CUDA_PLUGIN_H
#define MXK_CUDA_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include "mxk_sdk.h"

/** Backend name of every kernel this plugin registers. */
#define CU_BACKEND "cuda"

/** Most GPUs the plugin serves (device ids 0 .. CU_MAX_DEVICES-1). */
#define CU_MAX_DEVICES 64

/* --- cu_common.c: errors, handles, registration --------------------------------- */

/**
 * Turns a CUDA runtime status into mxk's: cudaSuccess is MXK_OK; anything else
 * writes "WHAT: CUDA error NAME: STRING" into err and returns MXK_ERR_BACKEND
 * (MXK_ERR_OUT_OF_MEMORY for cudaErrorMemoryAllocation). Clears the runtime's
 * sticky "last error" of non-sticky failures (cudaGetLastError).
 */
mxk_status cu_check(cudaError_t st, const char *what, mxk_error_sink *err);

/** cu_check for cuBLAS: "WHAT: cuBLAS STATUS_NAME"; MXK_ERR_OUT_OF_MEMORY for ALLOC_FAILED. */
mxk_status cu_check_blas(cublasStatus_t st, const char *what, mxk_error_sink *err);

/** cu_check for cuDNN: "WHAT: cuDNN NAME (cudnnGetErrorString)"; MXK_ERR_UNSUPPORTED for
 *  CUDNN_STATUS_NOT_SUPPORTED, MXK_ERR_OUT_OF_MEMORY for ALLOC_FAILED. */
mxk_status cu_check_dnn(cudnnStatus_t st, const char *what, mxk_error_sink *err);

/** Fails the enclosing function with cu_check's status unless `call` succeeds. */
#define CU_CHECK(call, what, err)                                                                  \
    do {                                                                                           \
        mxk_status cu_rc_ = cu_check((call), (what), (err));                                       \
        if (cu_rc_ != MXK_OK)                                                                      \
            return cu_rc_;                                                                         \
    } while (0)

/** CU_CHECK for cuBLAS calls. */
#define CU_CHECK_BLAS(call, what, err)                                                             \
    do {                                                                                           \
        mxk_status cu_rc_ = cu_check_blas((call), (what), (err));                                  \
        if (cu_rc_ != MXK_OK)                                                                      \
            return cu_rc_;                                                                         \
    } while (0)

/** CU_CHECK for cuDNN calls. */
#define CU_CHECK_DNN(call, what, err)                                                              \
    do {                                                                                           \
        mxk_status cu_rc_ = cu_check_dnn((call), (what), (err));                                   \
        if (cu_rc_ != MXK_OK)                                                                      \
            return cu_rc_;                                                                         \
    } while (0)

/**
 * Makes ctx->dev_id the calling thread's current device (cudaSetDevice). Every
 * kernel calls it first (the cu_* helpers below do). Errors: cu_check's.
 */
mxk_status cu_enter(const mxk_op_ctx *ctx, mxk_error_sink *err);

/** The call's stream (ctx->stream; NULL is CUDA's legacy default stream). */
static inline cudaStream_t cu_stream(const mxk_op_ctx *ctx) {
    return (cudaStream_t)ctx->stream;
}

/**
 * The calling thread's cuBLAS handle for ctx->dev_id (created on first use, freed at
 * thread exit), bound to the call's stream, pointer mode host, math mode
 * CUBLAS_DEFAULT_MATH (float32 results; MXK_CUDA_TF32=1 allows TF32 tensor-op math).
 * NULL with err set on failure. Calls cu_enter.
 */
cublasHandle_t cu_blas(const mxk_op_ctx *ctx, mxk_error_sink *err);

/** The calling thread's cuDNN handle for ctx->dev_id, bound to the call's stream; as cu_blas. */
cudnnHandle_t cu_dnn(const mxk_op_ctx *ctx, mxk_error_sink *err);

/**
 * Registers `kdef` for its op_name on MXK_DEV_GPU with backend "cuda" (both set
 * here). The operator may come from a plugin loaded later: kernels resolve by name.
 */
mxk_status cu_register_kernel(mxk_registrar *reg, mxk_op_kernel_def *kdef, mxk_error_sink *err);

/** An operator and the parse_param of its kernel. */
typedef struct cu_op_entry {
    const char *name;
    mxk_status (*parse)(const mxk_attrs *attrs, void **out, mxk_error_sink *err);
} cu_op_entry;

/**
 * Registers the kernel `tmpl` (flags, supports, forward, backward, ...) once per
 * operator of ops[0..n), with that operator's op_name and parse_param and
 * free_param cu_param_free. Errors of cu_register_kernel.
 */
mxk_status cu_register_each(mxk_registrar *reg, const mxk_op_kernel_def *tmpl,
                            const cu_op_entry *ops, size_t n, mxk_error_sink *err);

/**
 * Allocates a copy of the `size` bytes at p as a kernel's parameter object
 * (parse_param; freed by cu_param_free). MXK_ERR_OUT_OF_MEMORY "cuda: out of
 * memory (parameters)".
 */
mxk_status cu_param_dup(const void *p, size_t size, void **out, mxk_error_sink *err);

/** Frees a parameter object of cu_param_dup (free_param). */
void cu_param_free(void *p);

/**
 * Defines parse_param `fn` as `parse(attrs, value, out, err)`: one per operator of
 * a family whose parser takes the operator's code (the registrar keeps function
 * pointers only).
 */
#define CU_PARSE_AS(fn, parse, value)                                                              \
    static mxk_status fn(const mxk_attrs *a, void **o, mxk_error_sink *e) {                        \
        return parse(a, value, o, e);                                                              \
    }

/** Reads float attribute `key` (validated by the operator) into *v as float32. */
mxk_status cu_attr_float32(const mxk_attrs *attrs, const char *key, float *v, mxk_error_sink *err);

/** 1 when every one of the n types is float32. */
int cu_all_f32(const int32_t *types, uint32_t n);

/** supports of a kernel that computes float32 only: 1 when every argument is float32. */
int32_t cu_supports_float32(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                            uint32_t num_in);

/** Number of elements of a shape (1 for ndim 0). */
int64_t cu_shape_size(const mxk_shape *s);

/**
 * The gradient of an input that gets none (indices, labels, shape_like, the rhs of a
 * comparison): zeros on the call's stream for WRITE/INPLACE, nothing for NULL and ADD.
 * MXK_ERR_INVALID_ARGUMENT "input gradient: missing" when a written gradient has no
 * memory; errors of cu_check.
 */
mxk_status cu_zero_grad(const mxk_op_ctx *ctx, const mxk_tensor *g, mxk_op_req req,
                        mxk_error_sink *err);

/* --- cu_device.c: the device backend -------------------------------------------- */

/** Registers the "gpu" device backend (device count 0 without a GPU; still registered). */
mxk_status cu_register_device(mxk_registrar *reg, mxk_error_sink *err);

/* --- cu_nccl.c: the multi-GPU reduce on NCCL --------------------------------------- */

/** Sets the device definition's `reduce` slot (ABI 1.4) to the NCCL reduce. */
void cu_nccl_install(mxk_device_def *def);

/** Destroys the NCCL communicators and streams (from mxk_plugin_shutdown). */
void cu_nccl_shutdown(void);

/* --- family registrations (one per cu_ops_*.c file) ------------------------------- */

/** cu_ops_norm.c: LayerNorm, InstanceNorm, GroupNorm, L2Normalization. */
mxk_status cu_register_norm(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_rnn.c: RNN on cuDNN. */
mxk_status cu_register_rnn(mxk_registrar *reg, mxk_error_sink *err);
/** Registers FullyConnected (cu_ops_fc.c). */
mxk_status cu_register_fc(mxk_registrar *reg, mxk_error_sink *err);
/** Registers dot and batch_dot (cu_ops_dot.c). */
mxk_status cu_register_dot(mxk_registrar *reg, mxk_error_sink *err);
/** Registers Convolution and Deconvolution (cu_ops_conv.c). */
mxk_status cu_register_conv(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_random.c: _random_uniform, _random_normal, _random_gamma, _random_exponential,
 * _random_randint. */
mxk_status cu_register_random(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_sample.c: _sample_multinomial, _shuffle. */
mxk_status cu_register_sample(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_dropout.c: Dropout. */
mxk_status cu_register_dropout(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_optimizer.c: sgd_update, sgd_mom_update, adam_update. */
mxk_status cu_register_optimizer(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_loss.c: SoftmaxOutput, softmax_cross_entropy. */
mxk_status cu_register_loss(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_regression.c: Linear/Logistic/MAERegressionOutput, SVMOutput. */
mxk_status cu_register_regression(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_layout.c: transpose, SwapAxis, slice, slice_axis, slice_like, reverse, Crop. */
mxk_status cu_register_layout(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_broadcast.c: broadcast_to, broadcast_axis, broadcast_like, tile, repeat. */
mxk_status cu_register_broadcast(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_concat.c: Concat, SliceChannel, stack. */
mxk_status cu_register_concat(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_index.c: take, pick, gather_nd, scatter_nd, one_hot, where, Embedding. */
mxk_status cu_register_index(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_sort.c: argmax, argmax_channel, argmin, topk, sort, argsort. */
mxk_status cu_register_sort(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_sequence.c: SequenceMask, SequenceLast, SequenceReverse. */
mxk_status cu_register_sequence(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_pad.c: Pad, UpSampling (nearest, bilinear). */
mxk_status cu_register_pad(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_elemwise.c: the element-wise binary, scalar, broadcast and unary math operators. */
mxk_status cu_register_elemwise(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_reduce.c: sum, mean, max, min, prod, nansum and norm. */
mxk_status cu_register_reduce(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_copy.c: the identities, fills, _arange, shape_array and size_array. */
mxk_status cu_register_copy(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_convert.c: Cast and add_n. */
mxk_status cu_register_convert(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_act.c: Activation, LeakyReLU. */
mxk_status cu_register_act(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_softmax.c: softmax, log_softmax, SoftmaxActivation. */
mxk_status cu_register_softmax(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_pool.c: Pooling. */
mxk_status cu_register_pool(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_bn.c: BatchNorm. */
mxk_status cu_register_bn(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_lrn.c: LRN. */
mxk_status cu_register_lrn(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_vision.c: BilinearSampler, GridGenerator, SpatialTransformer, ROIPooling,
 * _contrib_ROIAlign. */
mxk_status cu_register_vision(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_vision_multibox.c: _contrib_MultiBoxPrior, _contrib_MultiBoxTarget,
 * _contrib_MultiBoxDetection. */
mxk_status cu_register_vision_multibox(mxk_registrar *reg, mxk_error_sink *err);
/** cu_ops_vision_nms.c: _contrib_box_nms. */
mxk_status cu_register_vision_nms(mxk_registrar *reg, mxk_error_sink *err);

#endif /* MXK_CUDA_PLUGIN_H */
