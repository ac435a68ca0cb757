/*
 * cpu-blas plugin: declarations shared by the index group's files (op_index_*.c,
 * registered from ops_index.c): the start of a backward and the per-file
 * registration functions. MXNet's optional-integer attributes (mxk_idx_attr_opt_int,
 * mxk_idx_attr_opt_tuple) and index conversion by mode (mxk_idx_pos) come from
 * plugins/common (mxk_index_attr.h, mxk_index.h), shared with the cuda plugin.
 */
#ifndef MXK_CB_OP_INDEX_H
#define MXK_CB_OP_INDEX_H

#include "cb_tensor.h"
#include "mxk_index.h"
#include "mxk_index_attr.h"

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
