/*
 * cpu-blas: normalisation and loss operators (LayerNorm, InstanceNorm, GroupNorm, L2Normalization,
 * MakeLoss, SVMOutput, ...). Registration entry of the group; the operators are added here and in
 * the files listed in norm.cmake.
 */
#include "norm_ops.h"

/** Registers the operators of the norm group with their CPU kernels; returns the first failure. */
mxk_status cb_register_norm_ops(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_register_norm_moments(reg, err));
    MXK_SDK_CHECK(cb_register_norm_l2(reg, err));
    return cb_register_norm_loss(reg, err);
}
