/*
 * cpu-blas: 1-D/3-D convolution and pooling helpers.
 * Registration entry of the group; the operators are added here and in the
 * files listed in spatial.cmake.
 */
#include "cpu_blas.h"

/** Registers the operators of the spatial group with their CPU kernels; returns the first failure.
 */
mxk_status cb_register_spatial_ops(mxk_registrar *reg, mxk_error_sink *err) {
    (void)reg;
    (void)err;
    return MXK_OK;
}
