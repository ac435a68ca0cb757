/*
 * cpu-blas plugin: Reshape's shape rules as pure functions (no host table), so
 * tests can call them directly.
 *
 * Semantics: MXNet src/operator/tensor/matrix_op-inl.h (InferReshapeShape,
 * ReshapeShape; the Reshape description in matrix_op.cc). Special values of the
 * `shape` attribute:
 *    0  copy this input dim             -1  infer from the remaining size (at most one)
 *   -2  copy all remaining input dims   -3  merge two consecutive input dims
 *   -4  split one input dim into the next two values (one may be -1)
 * With `reverse`, the rules apply right to left. Examples for input (2,3,4):
 * (4,0,2)->(4,3,2); (3,-1,8)->(3,1,8); (-2,1,1)->(2,3,4,1,1); (0,-3)->(2,12);
 * (-4,1,2,-2)->(1,2,3,4); input (10,5,4) with (-1,0): (40,5), reversed (50,4).
 */
#ifndef MXK_CB_RESHAPE_INFER_H
#define MXK_CB_RESHAPE_INFER_H

#include <stddef.h>
#include <stdint.h>

#include "mxk_abi_base.h"

/**
 * Checks a `shape` attribute on its own, in processing order (right to left
 * when `reverse`, where a -4 takes the two values before it): values >= -4, at
 * most one -1, every -4 followed by two split sizes that are positive or -1
 * and not both -1. Returns MXK_OK or MXK_ERR_INVALID_ARGUMENT with a message in
 * msg ("attribute 'shape': ...", truncated to msg_len).
 */
mxk_status cb_reshape_check_spec(const int64_t *spec, int32_t nspec, int reverse, char *msg,
                                 size_t msg_len);

/**
 * Output shape of Reshape for the fully known input `in` and the `shape`
 * attribute `spec` (nspec values), applied right to left when `reverse`.
 * Returns MXK_OK and *out, or MXK_ERR_INVALID_ARGUMENT (bad spec) /
 * MXK_ERR_SHAPE (spec does not fit the input: too few input dims, a split that
 * does not divide, a -3 merge over INT64_MAX elements, a size mismatch "target
 * shape (3,5) has 15 elements, input (2,3,4) has 24") with a message in msg.
 * Products of spec values (any int64 from a model file) are overflow-checked.
 */
mxk_status cb_reshape_infer(const int64_t *spec, int32_t nspec, int reverse, const mxk_shape *in,
                            mxk_shape *out, char *msg, size_t msg_len);

/**
 * Output shape for the deprecated `target_shape` attribute (MXNet 0.x meaning):
 * 0 marks the one inferred dim; with `keep_highest` the first dim is copied
 * from the input and the inferred dim is searched after it. Errors as
 * cb_reshape_infer.
 */
mxk_status cb_reshape_infer_legacy(const int64_t *target, int32_t ntarget, int keep_highest,
                                   const mxk_shape *in, mxk_shape *out, char *msg, size_t msg_len);

#endif /* MXK_CB_RESHAPE_INFER_H */
