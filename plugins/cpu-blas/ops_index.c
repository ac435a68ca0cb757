/*
 * cpu-blas: indexing and sequence operators (slice, take, pick, gather_nd, where, Sequence*,
 * batch_dot, topk, sort, ...). Registration entry of the group; the operators are added here and in
 * the files listed in index.cmake.
 */
#include "cpu_blas.h"

/** Registers the operators of the index group with their CPU kernels; returns the first failure. */
mxk_status cb_register_index_ops(mxk_registrar *reg, mxk_error_sink *err) {
    (void)reg;
    (void)err;
    return MXK_OK;
}
