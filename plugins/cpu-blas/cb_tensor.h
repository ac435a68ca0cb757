/*
 * cpu-blas plugin: helpers shared by the tensor, reduction, sampling and optimizer
 * operator files (op_concat.c ... op_optimizer.c).
 *
 * They cover what cb_check_forward (common.c) does not: any number of inputs and
 * outputs (Concat, ElementWiseSum, SliceChannel), tensors of any dtype (Cast,
 * one_hot, the samplers), axis normalisation, the (outer, k, inner) view of a
 * shape around one axis (MXNet's common pattern, e.g. src/operator/nn/softmax-inl.h),
 * element access by dtype code, and the stock callbacks (float32 type inference,
 * same-shape inference, "backward reads out_grad only", in-place 0 -> 0, one
 * visible output, heap parameter objects) and kernels (copy forward / backward)
 * that the other operator files use as well.
 */
#ifndef MXK_CB_TENSOR_H
#define MXK_CB_TENSOR_H

#include "cpu_blas.h"

/** Most inputs or outputs of a variadic operator (Concat num_args, SliceChannel num_outputs). */
#define CBT_MAX_IO 256

/** The dtypes as MXNet names them, in code order (float32=0 ... int64=6), for enum attributes. */
#define CBT_DTYPES "float32|float64|float16|uint8|int32|int8|int64"

/**
 * Checks a forward call of an operator with `num_in` inputs and `num_out` outputs:
 * counts, every input and every requested output present and in CPU memory,
 * float32 unless `any_dtype`, input shapes fully known, and output shapes as the
 * operator's `infer` gives them. Messages name slots "argument i" / "output i".
 */
mxk_status cbt_check_forward(const mxk_forward_args *args, uint32_t num_in, uint32_t num_out,
                             cb_infer_shape_fn infer, const void *param, int any_dtype,
                             mxk_error_sink *err);

/** Checks one tensor of any dtype: present, CPU memory, valid ndim (cb_check_tensor minus dtype).
 */
mxk_status cbt_check_any(const mxk_tensor *t, const char *what, mxk_error_sink *err);

/**
 * Checks a gradient input/output pair of backward: nothing when `req` is NULL;
 * else `g` passes cb_check_tensor and has as many elements as `like`.
 */
mxk_status cbt_check_grad_like(const mxk_tensor *g, mxk_op_req req, const mxk_tensor *like,
                               const char *name, mxk_error_sink *err);

/**
 * Normalises `axis` (negative counts from the end) for `ndim` dims into *out;
 * MXK_ERR_SHAPE naming attribute `attr` when out of range.
 */
mxk_status cbt_axis(int64_t axis, int32_t ndim, const char *attr, int32_t *out,
                    mxk_error_sink *err);

/** Splits shape s around `axis`: outer = prod(dims before), k = dims[axis], inner = prod(after). */
void cbt_split(const mxk_shape *s, int32_t axis, uint64_t *outer, uint64_t *k, uint64_t *inner);

/** Copies `size` bytes of a parameter struct into a new heap object (*out); MXK_ERR_OUT_OF_MEMORY.
 */
mxk_status cbt_param_new(const void *p, size_t size, void **out, mxk_error_sink *err);

/** free_param for cbt_param_new objects. */
void cbt_param_free(void *param);

/** infer_type: every slot float32 (MXNet's default ElemwiseType with float32). */
mxk_status cbt_infer_type_f32(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                              uint32_t num_out, int32_t *aux, uint32_t num_aux,
                              mxk_error_sink *err);

/** infer_shape: every argument and output has one shape (ElemwiseShape). */
mxk_status cbt_infer_shape_same(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                mxk_error_sink *err);

/** backward_dependency: out_grad[0] only. */
void cbt_dep_out_grad(const void *param, uint32_t num_visible, uint32_t num_in, uint32_t num_out,
                      uint8_t *need_out_grad, uint8_t *need_in_data, uint8_t *need_out_data);

/** backward_dependency: nothing (zero or constant gradients). */
void cbt_dep_none(const void *param, uint32_t num_visible, uint32_t num_in, uint32_t num_out,
                  uint8_t *need_out_grad, uint8_t *need_in_data, uint8_t *need_out_data);

/** forward_inplace / backward_inplace: the single pair 0 -> 0 (not an identity). */
uint32_t cbt_inplace_00(const void *param, mxk_inplace_pair *pairs, uint32_t capacity);

/**
 * forward_inplace / backward_inplace: the single pair 0 -> 0 as an identity (the
 * output equals the input, so sharing the memory makes the copy a no-op).
 */
uint32_t cbt_inplace_identity_00(const void *param, mxk_inplace_pair *pairs, uint32_t capacity);

/**
 * backward_inplace of the loss operators with arguments (data, label) and one
 * output (SoftmaxOutput, *RegressionOutput): out_data[0] (backward index
 * 1 + 2 + 0 = 3) -> in_grad[data], not an identity.
 */
uint32_t cbt_inplace_loss_grad(const void *param, mxk_inplace_pair *pairs, uint32_t capacity);

/** num_visible_outputs: one (the other outputs, e.g. a mask, are hidden). */
uint32_t cbt_num_visible_1(const void *param);

/**
 * Forward of a one-argument copy operator (argument `data`, output `output`:
 * BlockGrad, _copyto, Flatten, Reshape): checks the call with cb_check_forward
 * against the operator's shape inference `infer` (messages name `data` and
 * `output`), then output (=|+=) data by req[0], element for element.
 */
mxk_status cbt_copy_forward(const mxk_forward_args *args, cb_infer_shape_fn infer,
                            const void *param, mxk_error_sink *err);

/**
 * Backward kernel of a one-argument copy operator (_copyto, Flatten, Reshape):
 * counts (1, 1, 1), then in_grad[0] (=|+=) out_grad[0] by req[0], element for
 * element, after checking out_grad ("gradient of 'output'") and in_grad (as many
 * elements, "gradient of 'data'"). Nothing is checked when req[0] is NULL.
 */
mxk_status cbt_copy_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_backward_args *args, mxk_error_sink *err);

/** Element i of dtype `dtype` at p, as a double (float16 through mxk_sdk_half.h). */
double cbt_load(const void *p, int32_t dtype, uint64_t i);

/**
 * Stores v (=|+=) into element i of dtype `dtype` at p by `req`. Integer types
 * truncate toward zero and saturate at their range (NaN stores 0), so every
 * input has a defined result (C's conversion is undefined out of range).
 */
void cbt_store(void *p, int32_t dtype, uint64_t i, double v, mxk_op_req req);

/**
 * Writes zeros into a gradient by its request (WRITE/INPLACE zero, ADD and NULL
 * leave it) after checking it; the gradient of non-differentiable inputs.
 */
mxk_status cbt_zero_grad(const mxk_tensor *g, mxk_op_req req, const char *name,
                         mxk_error_sink *err);

/**
 * Registers operator `def` under `name` (def->name is set) with a cpu-blas kernel
 * (forward, backward); `any_dtype` replaces cb_supports_f32 by "accept all".
 */
mxk_status cbt_register(mxk_registrar *reg, mxk_op_def *def, const char *name,
                        mxk_status (*forward)(const mxk_op_ctx *, const void *, void *,
                                              const mxk_forward_args *, mxk_error_sink *),
                        mxk_status (*backward)(const mxk_op_ctx *, const void *, void *,
                                               const mxk_backward_args *, mxk_error_sink *),
                        int any_dtype, mxk_error_sink *err);

/**
 * Starts an operator definition (mxk_sdk_op_def_init) with the fields most
 * operators of these files share: description, attribute schema, fixed
 * `arguments`, one output "output", parse_param `parse` with cbt_param_free, and
 * float32 type inference.
 */
void cbt_def_init(mxk_op_def *def, const char *doc, const mxk_attr_def *attrs, uint32_t num_attrs,
                  const char *const *arguments,
                  mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *));

/** Appends "<prefix><i>" for i < n to a name list (Concat's arg0.., SliceChannel's output0..). */
mxk_status cbt_list_numbered(mxk_name_list *out, const char *prefix, int64_t n,
                             mxk_error_sink *err);

/** The random stream of the op's first MXK_RESOURCE_RANDOM resource, or NULL. */
mxk_random *cbt_random(const mxk_op_ctx *ctx);

/** forward_resources requesting one random stream. */
mxk_status cbt_resources_random(const void *param, const mxk_shape *in_shapes, uint32_t num_in,
                                mxk_resource_request *reqs, uint32_t *num, mxk_error_sink *err);

#endif /* MXK_CB_TENSOR_H */
