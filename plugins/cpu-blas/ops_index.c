/*
 * cpu-blas: indexing and sequence operators (slice, take, pick, gather_nd, where, Sequence*,
 * batch_dot, topk, sort, ...). Registration entry of the group; the operators are defined in
 * the op_index_*.c files listed in index.cmake (declared in op_index.h) and in op_dot.c.
 */
#include "op_index.h"

/** Registers the operators of the index group with their CPU kernels; returns the first failure. */
mxk_status cb_register_index_ops(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_register_index_slice(reg, err));
    MXK_SDK_CHECK(cb_register_index_take(reg, err));
    MXK_SDK_CHECK(cb_register_index_where(reg, err));
    MXK_SDK_CHECK(cb_register_index_sequence(reg, err));
    MXK_SDK_CHECK(cb_register_batch_dot(reg, err));
    MXK_SDK_CHECK(cb_register_index_sort(reg, err));
    return MXK_OK;
}
