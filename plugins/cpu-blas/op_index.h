/*
 * cpu-blas plugin: declarations shared by the index group's files (op_index_*.c,
 * registered from ops_index.c): MXNet's optional-integer attributes, index
 * conversion by mode, the start of a backward, and the per-file registration functions.
 *
 * Optional integers (dmlc::optional<int>, e.g. slice_axis `end`, topk `axis`) and
 * tuples of them (slice `begin`/`end`/`step`, "(0,None,-1)") are declared as
 * MXK_ATTR_STRING attributes and parsed here, "None" meaning absent, as MXNet's
 * parameter parser reads them (dmlc-core include/dmlc/optional.h).
 */
#ifndef MXK_CB_OP_INDEX_H
#define MXK_CB_OP_INDEX_H

#include "cb_tensor.h"

/** Out-of-range index policy (MXNet take_::kRaise/kWrap/kClip, src/operator/tensor/indexing_op.h).
 */
typedef enum cb_idx_mode { CB_IDX_RAISE = 0, CB_IDX_WRAP = 1, CB_IDX_CLIP = 2 } cb_idx_mode;

/**
 * Reads the optional integer attribute `key`: absent or "None" gives *has = 0;
 * otherwise *has = 1 and *value. Error: MXK_ERR_INVALID_ARGUMENT "attribute 'end':
 * expected an integer or None, got 'x'". Thread-safe.
 */
mxk_status cb_idx_attr_opt_int(const mxk_attrs *attrs, const char *key, int32_t *has,
                               int64_t *value, mxk_error_sink *err);

/**
 * Reads the tuple attribute `key` of optional integers ("(1,None,-2)", "[0]", "()",
 * "3") into values[0..*n) with has[i] = 0 for "None" entries; absent gives *n = 0.
 * At most MXK_MAX_NDIM entries. Errors (MXK_ERR_INVALID_ARGUMENT): "attribute
 * 'begin': expected a tuple of integers or None, got 'x'"; "attribute 'begin': more
 * than 8 entries (Slicing axis exceeds data dimensions)". Thread-safe.
 */
mxk_status cb_idx_attr_opt_tuple(const mxk_attrs *attrs, const char *key, int32_t *n,
                                 int64_t *values, uint8_t *has, mxk_error_sink *err);

/**
 * The element an index value `v` addresses along an axis of `size` (> 0) elements,
 * as MXNet's take/pick kernels compute it: truncated toward zero, then clipped to
 * [0, size) (CB_IDX_CLIP) or wrapped modulo size (CB_IDX_WRAP, CB_IDX_RAISE after the
 * caller's range check). NaN counts as 0 and huge values saturate, so the result is
 * always in [0, size). Thread-safe.
 */
int64_t cb_idx_pos(double v, int64_t size, cb_idx_mode mode);

/**
 * Common start of the backward of an operator with one data argument (gradient by
 * out_grad, one visible output) and, when num_in is 2, a second argument without a
 * gradient (`aux_name`: indices, lengths, shape_like), which gets zeros (WRITE) or
 * nothing (ADD, NULL) as MXNet's zeros_like nodes: checks the counts, writes that
 * zero gradient, and when the data gradient is requested checks out_grad and it.
 * *dy, *dx: out_grad and the data gradient, or NULL when that gradient is not
 * requested (the caller is done). Errors: those of cb_check_backward_counts,
 * cbt_zero_grad and cb_check_tensor.
 */
mxk_status cb_idx_begin_backward(const mxk_backward_args *args, uint32_t num_in,
                                 const char *aux_name, const mxk_tensor **dy, const mxk_tensor **dx,
                                 mxk_error_sink *err);

/**
 * Defines `static mxk_status fn(attrs, out, err)`, the parse_param of one operator of a
 * file whose operators share one parser `impl(attrs, kind, out, err)` told apart by
 * `kind` (mxk_op_def.parse_param gets no operator name).
 */
#define CB_IDX_PARSE_AS(fn, impl, kind)                                                            \
    static mxk_status fn(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {                \
        return impl(attrs, kind, out, err);                                                        \
    }

/** op_index_slice.c: slice (alias crop), slice_axis, slice_like. */
mxk_status cb_register_index_slice(mxk_registrar *reg, mxk_error_sink *err);
/** op_index_take.c: take, pick, gather_nd, scatter_nd. */
mxk_status cb_register_index_take(mxk_registrar *reg, mxk_error_sink *err);
/** op_index_where.c: where. */
mxk_status cb_register_index_where(mxk_registrar *reg, mxk_error_sink *err);
/** op_index_sequence.c: SequenceMask, SequenceLast, SequenceReverse. */
mxk_status cb_register_index_sequence(mxk_registrar *reg, mxk_error_sink *err);
/** op_index_sort.c: topk, sort, argsort, argmin. */
mxk_status cb_register_index_sort(mxk_registrar *reg, mxk_error_sink *err);
/** op_dot.c: batch_dot (dot is registered by cb_register_dot). */
mxk_status cb_register_batch_dot(mxk_registrar *reg, mxk_error_sink *err);

#endif /* MXK_CB_OP_INDEX_H */
