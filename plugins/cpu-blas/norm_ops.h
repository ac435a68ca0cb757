/*
 * cpu-blas plugin: internal declarations of the norm group (ops_norm.c and the
 * op_norm_*.c files listed in norm.cmake): the registration function of each file.
 */
#ifndef MXK_CB_NORM_OPS_H
#define MXK_CB_NORM_OPS_H

#include "cpu_blas.h"

/** op_norm_moments.c: LayerNorm, InstanceNorm, GroupNorm. */
mxk_status cb_register_norm_moments(mxk_registrar *reg, mxk_error_sink *err);
/** op_norm_l2.c: L2Normalization. */
mxk_status cb_register_norm_l2(mxk_registrar *reg, mxk_error_sink *err);
/** op_norm_loss.c: MakeLoss, make_loss, SVMOutput, softmax_cross_entropy. */
mxk_status cb_register_norm_loss(mxk_registrar *reg, mxk_error_sink *err);

#endif /* MXK_CB_NORM_OPS_H */
