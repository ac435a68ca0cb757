/*
 * cpu-blas: creation and shape operators (_copy, _zeros, expand_dims, stack, tile, Pad,
 * broadcast_to, ...). Registration entry of the group; the operators are added here and in the
 * files listed in init.cmake.
 */
#include "cpu_blas.h"

/** Registers the operators of the init group with their CPU kernels; returns the first failure. */
mxk_status cb_register_init_ops(mxk_registrar *reg, mxk_error_sink *err) {
    (void)reg;
    (void)err;
    return MXK_OK;
}
