/*
 * cpu-blas plugin: attribute helpers of the 1-D / 2-D / 3-D spatial operators
 * (Convolution, Deconvolution, Pooling; op_convolution.c, op_pooling.c).
 *
 * MXNet's spatial parameters are tuples of one value per spatial axis: (w,),
 * (h, w) or (d, h, w) (src/operator/nn/convolution-inl.h, pooling-inl.h). The
 * kernels here always work on three axes (d, h, w): a tuple of nd values fills
 * the LAST nd of them and the leading ones take the neutral value (size 1,
 * kernel 1, stride 1, dilate 1, pad 0), so 1-D and 2-D run through the 3-D loops
 * with trivial outer loops.
 */
#ifndef MXK_CB_SPATIAL_H
#define MXK_CB_SPATIAL_H

#include "cpu_blas.h"

/** Most spatial axes (d, h, w). */
#define CB_SP_AXES 3

/**
 * Reads the tuple attribute `key` for an operator with `nd` spatial axes (1..3)
 * into out[0..3) aligned to the last axes (see the file comment); the leading
 * 3 - nd entries and an absent or empty ("()") attribute give `dflt`. `label`
 * names the attribute as MXNet's parameter checks do ("Stride", "Dilate",
 * "Padding"). Errors: MXK_ERR_INVALID_ARGUMENT "attribute 'stride': Stride must
 * have the same number of dimensions with kernel_size, but kernel_size has 2
 * values while stride has 1" (MXNet's ConvolutionParamParser /
 * PoolingParamParser check, src/operator/nn/convolution.cc), and
 * "attribute 'stride': values must be in [1, 2147483647], got 0" for a value
 * below `lo` or above INT32_MAX; those of mxk_sdk_attr_shape. Pure; thread-safe.
 */
mxk_status cb_sp_tuple(const mxk_attrs *attrs, const char *key, const char *label, int nd,
                       int64_t dflt, int64_t lo, int64_t out[CB_SP_AXES], mxk_error_sink *err);

#endif /* MXK_CB_SPATIAL_H */
