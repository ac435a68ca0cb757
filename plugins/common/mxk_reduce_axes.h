/*
 * Shared by the CPU and GPU backends (host code): which axes a reduction
 * reduces, from its `axis` and `exclude` attributes, so that cpu-blas's and the
 * cuda plugin's kernels agree on them and on the error messages.
 *
 * Semantics: MXNet src/operator/tensor/broadcast_reduce_op.h (ReduceAxesParam,
 * ReduceAxesShapeImpl): `axis` () reduces every axis; negative values count from
 * the end; `exclude` reduces the axes not listed.
 */
#ifndef MXK_REDUCE_AXES_H
#define MXK_REDUCE_AXES_H

#include <string.h>

#include "mxk_sdk.h"

/**
 * Marks in red[0..ndim) the axes reduced for an input of `ndim` dims.
 * MXK_ERR_SHAPE for an axis out of range or listed twice.
 */
static inline mxk_status mxk_reduce_axes(const mxk_shape *axis, int32_t exclude, int32_t ndim,
                                         uint8_t *red, mxk_error_sink *err) {
    if (axis->ndim == 0) {
        memset(red, 1, (size_t)ndim);
        return MXK_OK;
    }
    uint8_t listed[MXK_MAX_NDIM] = {0};
    for (int32_t i = 0; i < axis->ndim; i++) {
        int64_t a = axis->dims[i];
        int64_t n = a < 0 ? a + ndim : a;
        if (n < 0 || n >= ndim)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "attribute 'axis': axis %lld is out of range for an input of %d "
                                 "dims",
                                 (long long)a, (int)ndim);
        if (listed[n])
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "attribute 'axis': axis %lld listed twice",
                                 (long long)a);
        listed[n] = 1;
    }
    for (int32_t i = 0; i < ndim; i++)
        red[i] = exclude ? !listed[i] : listed[i];
    return MXK_OK;
}

#endif /* MXK_REDUCE_AXES_H */
