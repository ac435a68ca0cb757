/*
 * cpu-blas plugin: attribute helpers of the spatial operators (cb_spatial.h).
 * Semantics: MXNet src/operator/nn/convolution.cc (ConvolutionParamParser) and
 * src/operator/nn/pooling.cc (PoolingParamParser).
 */
#include "cb_spatial.h"

/** Reads a per-axis tuple aligned to the last axes (see cb_spatial.h). */
mxk_status cb_sp_tuple(const mxk_attrs *attrs, const char *key, const char *label, int nd,
                       int64_t dflt, int64_t lo, int64_t out[CB_SP_AXES], mxk_error_sink *err) {
    for (int i = 0; i < CB_SP_AXES; i++)
        out[i] = dflt;
    if (!mxk_sdk_attr_is_set(attrs, key))
        return MXK_OK;
    mxk_shape s;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, key, &s, err));
    if (s.ndim == 0)
        return MXK_OK;
    if (s.ndim != nd)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute '%s': %s must have the same number of dimensions with "
                             "kernel_size, but kernel_size has %d values while %s has %d",
                             key, label, nd, key, (int)s.ndim);
    for (int i = 0; i < nd; i++) {
        if (s.dims[i] < lo || s.dims[i] > INT32_MAX)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "attribute '%s': values must be in [%lld, %d], got %lld", key,
                                 (long long)lo, INT32_MAX, (long long)s.dims[i]);
        out[CB_SP_AXES - nd + i] = s.dims[i];
    }
    return MXK_OK;
}
