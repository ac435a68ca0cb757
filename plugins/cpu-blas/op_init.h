/*
 * cpu-blas plugin, init group (creation and shape operators): the registration
 * functions of its files, the index maps shared by the data-movement operators
 * (broadcast_to, broadcast_axis, broadcast_like, tile, repeat, flip, Pad;
 * op_init_gather.c) and the attribute helpers, copies and stock callbacks of the
 * group (op_init_common.c).
 *
 * A map describes an output of `ndim` dims read from an input seen with the same
 * rank: along dim d, output index j reads input index tab[d][j], or the constant
 * fill value when tab[d][j] < 0 (Pad's constant mode). MXNet computes these
 * operators with per-element index arithmetic in the same way
 * (src/operator/tensor/broadcast_reduce_op.h broadcast kernel, matrix_op-inl.h
 * tile/repeat through broadcast_to, reverse's ReverseIndex, src/operator/pad.cc):
 * forward gathers, backward scatter-adds the output gradient onto the input
 * positions it was read from (a sum over broadcast or repeated positions).
 */
#ifndef MXK_CB_OP_INIT_H
#define MXK_CB_OP_INIT_H

#include "cb_tensor.h"

/** A per-dimension index map from an output to an input view of the same rank. */
typedef struct cbi_map {
    int32_t ndim;                    /**< rank of the output and of the input view */
    int64_t out_dims[MXK_MAX_NDIM];  /**< output dims (all >= 1) */
    int64_t in_dims[MXK_MAX_NDIM];   /**< input view dims: the input left-padded with 1s, or
                                          with its leading dims merged, to the output's rank */
    int64_t in_stride[MXK_MAX_NDIM]; /**< row-major element strides of the input view */
    int64_t *tab[MXK_MAX_NDIM];      /**< per dim: out_dims[d] input indices (< 0: fill) */
    int64_t *buf;                    /**< owns the tables (one allocation) */
} cbi_map;

/** Fills the tables of a map for an operator's parameters (called after cbi_map_init). */
typedef void (*cbi_fill_fn)(const void *param, cbi_map *m);

/**
 * The start of the parameter object of every gather operator (its first member):
 * what the shared kernels cbi_gather_forward / cbi_gather_backward need.
 */
typedef struct cbi_gather_param {
    uint32_t num_in;         /**< arguments (broadcast_like: 2; only argument 0 is read) */
    cb_infer_shape_fn infer; /**< the operator's shape inference (forward re-checks with it) */
    cbi_fill_fn fill_map;    /**< fills the tables (NULL: the broadcast rule) */
    double fill;             /**< value of the positions outside the input (Pad constant) */
} cbi_gather_param;

/**
 * Forward kernel of the gather operators (any dtype; argument 0 and the output
 * of one dtype): checks the call with cbt_check_forward against the operator's
 * inference, builds the map and gathers argument 0 into the output by req[0].
 * `param` starts with a cbi_gather_param.
 */
mxk_status cbi_gather_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err);

/**
 * Backward kernel of the gather operators (float32 gradients), which read only
 * out_grad (the input shape comes from in_grad[0]): checks the counts and
 * tensors, builds the map as forward and scatters into in_grad[0] by req[0]; the
 * other arguments (broadcast_like's rhs) get a zero gradient.
 */
mxk_status cbi_gather_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err);

/**
 * Reads an optional integer attribute (MXNet's `int or None`): absent or "None"
 * sets *has = 0; otherwise *has = 1 and *value. The schema declares such
 * attributes MXK_ATTR_STRING with default "None". Errors: MXK_ERR_INVALID_ARGUMENT
 * "attribute 'axis': expected an integer or None, got 'x'".
 */
mxk_status cbi_attr_opt_int(const mxk_attrs *attrs, const char *key, int32_t *has, int64_t *value,
                            mxk_error_sink *err);

/**
 * Reads an optional tuple attribute (MXNet's `Shape or None`): absent or "None"
 * sets *has = 0; otherwise *has = 1 and *value (errors of mxk_sdk_attr_shape).
 */
mxk_status cbi_attr_opt_shape(const mxk_attrs *attrs, const char *key, int32_t *has,
                              mxk_shape *value, mxk_error_sink *err);

/**
 * Reads tuple attribute `key` into *value and checks every value >= lo. Errors:
 * those of mxk_sdk_attr_shape; MXK_ERR_INVALID_ARGUMENT "attribute 'reps': values
 * must be >= 1, got 0".
 */
mxk_status cbi_attr_tuple_min(const mxk_attrs *attrs, const char *key, int64_t lo, mxk_shape *value,
                              mxk_error_sink *err);

/** Zero gradient of input `i` named `name` by its request (the MakeZeroGradNodes inputs). */
mxk_status cbi_zero_grad_of(const mxk_backward_args *args, uint32_t i, const char *name,
                            mxk_error_sink *err);

/**
 * dst[i] (=|+=) src[i] for i < n by req, both of `dtype` (any; float32 through
 * mxk_sdk_copy_f32); equal pointers: WRITE/INPLACE is a no-op.
 */
void cbi_copy_n(void *dst, const void *src, int32_t dtype, uint64_t n, mxk_op_req req);

/** cbi_copy_n of a whole tensor: dst and src of one dtype and element count. */
void cbi_copy(const mxk_tensor *dst, const mxk_tensor *src, mxk_op_req req);

/**
 * infer_type: every argument and output has one dtype, any (the first known;
 * MXNet's ElemwiseType<-1, -1>, as Concat, stack and SliceChannel infer).
 */
mxk_status cbi_infer_type_all(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                              uint32_t num_out, int32_t *aux, uint32_t num_aux,
                              mxk_error_sink *err);

/**
 * v as a float32 without undefined behaviour: beyond float's range it saturates to
 * an infinity of its sign (as IEEE conversion rounds), NaN stays NaN.
 */
float cbi_to_f32(double v);

/**
 * Checks a forward call of any dtype (cbt_check_forward: counts, presence, CPU
 * memory, shapes against `infer`) whose inputs and requested outputs share one
 * dtype: MXK_ERR_TYPE "argument 1: expected float32, got int32" otherwise.
 */
mxk_status cbi_check_forward_same(const mxk_forward_args *args, uint32_t num_in, uint32_t num_out,
                                  cb_infer_shape_fn infer, const void *param, mxk_error_sink *err);

/**
 * Forward of the operators that copy argument 0 into a new shape (_copy,
 * expand_dims, squeeze, reshape_like, Flatten, Reshape): checks the call with
 * cbt_check_forward (any dtype, `num_in` arguments) against `infer`, then output
 * (=|+=) argument 0 by req[0]. MXK_ERR_TYPE when the output's dtype differs.
 */
mxk_status cbi_copy_forward(const mxk_forward_args *args, uint32_t num_in, cb_infer_shape_fn infer,
                            const void *param, mxk_error_sink *err);

/**
 * Backward kernel of those copies (reads only out_grad): in_grad[0] (=|+=)
 * out_grad[0] (same element count and dtype, any); a second argument
 * (reshape_like's rhs) gets a zero gradient.
 */
mxk_status cbi_copy_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_backward_args *args, mxk_error_sink *err);

/**
 * infer_type: argument 0 and output 0 share one dtype, any (MXNet's
 * ElemwiseType<1, 1>); other arguments are left alone.
 */
mxk_status cbi_infer_type_same(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                               uint32_t num_out, int32_t *aux, uint32_t num_aux,
                               mxk_error_sink *err);

/** no_gradient callback returning 1 (MXNet's MakeZeroGradNodes: zeros_like, shape_array). */
int32_t cbi_no_gradient(const void *param);

/** Signature of mxk_op_def.infer_type. */
typedef mxk_status (*cbi_infer_type_fn)(const void *param, int32_t *in, uint32_t num_in,
                                        int32_t *out, uint32_t num_out, int32_t *aux,
                                        uint32_t num_aux, mxk_error_sink *err);

/** Signature of a kernel's forward. */
typedef mxk_status (*cbi_forward_fn)(const mxk_op_ctx *ctx, const void *param, void *state,
                                     const mxk_forward_args *args, mxk_error_sink *err);

/** Signature of a kernel's backward. */
typedef mxk_status (*cbi_backward_fn)(const mxk_op_ctx *ctx, const void *param, void *state,
                                      const mxk_backward_args *args, mxk_error_sink *err);

/** cbi_op.flags: forward and backward in-place identities 0 -> 0 (FInplaceIdentity). */
#define CBI_OP_INPLACE 1u
/** cbi_op.flags: no gradient flows (MakeZeroGradNodes); backward reads nothing. */
#define CBI_OP_NO_GRADIENT 2u

/**
 * One operator of the group as its file describes it for cbi_register_ops: one
 * output "output", parameters freed by cbt_param_free, a kernel accepting every
 * dtype; backward reads out_grad only, or nothing with CBI_OP_NO_GRADIENT.
 */
typedef struct cbi_op {
    const char *name;
    const char *const *aliases; /**< NULL-terminated MXNet aliases, or NULL */
    const char *doc;
    const mxk_attr_def *attrs;
    uint32_t num_attrs;
    const char *const *arguments; /**< NULL-terminated argument names */
    mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *);
    cb_infer_shape_fn infer_shape;
    cbi_infer_type_fn infer_type;
    cbi_forward_fn forward;
    cbi_backward_fn backward; /**< NULL: no backward kernel */
    uint32_t flags;           /**< CBI_OP_* */
} cbi_op;

/** Registers `n` operators with their cpu-blas kernels; returns the first failure. */
mxk_status cbi_register_ops(mxk_registrar *reg, const cbi_op *ops, size_t n, mxk_error_sink *err);

/** op_init_fill.c: _zeros, _ones, _full, _arange, zeros_like, ones_like. */
mxk_status cb_register_init_fill(mxk_registrar *reg, mxk_error_sink *err);
/** op_init_shape.c: _copy, expand_dims, squeeze, reshape_like, shape_array, size_array. */
mxk_status cb_register_init_shape(mxk_registrar *reg, mxk_error_sink *err);
/** op_init_broadcast.c: broadcast_to, broadcast_axis, broadcast_like. */
mxk_status cb_register_init_broadcast(mxk_registrar *reg, mxk_error_sink *err);
/** op_init_tile.c: tile, repeat, reverse. */
mxk_status cb_register_init_tile(mxk_registrar *reg, mxk_error_sink *err);
/** op_init_pad.c: Pad. */
mxk_status cb_register_init_pad(mxk_registrar *reg, mxk_error_sink *err);

#endif /* MXK_CB_OP_INIT_H */
