/*
 * cpu-blas plugin: internal declarations of the norm group (ops_norm.c and the
 * op_norm_*.c files listed in norm.cmake, op_batchnorm.c, op_softmax_output.c,
 * op_regression.c): the registration function of each op_norm_*.c file and the
 * float32 conversions they share.
 */
#ifndef MXK_CB_NORM_OPS_H
#define MXK_CB_NORM_OPS_H

#include <float.h>
#include <math.h>

#include "cpu_blas.h"

/**
 * v as float32, saturated to +-infinity beyond the float range (C leaves the plain
 * cast of such a double undefined); NaN stays NaN. Thread-safe.
 */
static inline float cb_norm_f32(double v) {
    if (v > FLT_MAX)
        return INFINITY;
    if (v < -FLT_MAX)
        return -INFINITY;
    return (float)v;
}

/**
 * Reads attribute `key`, a float32 in upstream's parameter struct, into *out.
 * Errors: those of mxk_sdk_attr_float_finite (NaN, infinity, not a number), and
 * MXK_ERR_INVALID_ARGUMENT "attribute 'KEY': must be a float32 value, got V"
 * beyond +-FLT_MAX.
 */
static inline mxk_status cb_norm_attr_f32(const mxk_attrs *attrs, const char *key, float *out,
                                          mxk_error_sink *err) {
    double v;
    MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, key, &v, err));
    if (!(fabs(v) <= FLT_MAX))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute '%s': must be a float32 value, got %g", key, v);
    *out = (float)v;
    return MXK_OK;
}

/** op_norm_moments.c: LayerNorm, InstanceNorm, GroupNorm. */
mxk_status cb_register_norm_moments(mxk_registrar *reg, mxk_error_sink *err);
/** op_norm_l2.c: L2Normalization. */
mxk_status cb_register_norm_l2(mxk_registrar *reg, mxk_error_sink *err);
/** op_norm_loss.c: MakeLoss, make_loss, SVMOutput, softmax_cross_entropy. */
mxk_status cb_register_norm_loss(mxk_registrar *reg, mxk_error_sink *err);

#endif /* MXK_CB_NORM_OPS_H */
