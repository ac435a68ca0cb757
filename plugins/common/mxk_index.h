/*
 * Index arithmetic shared by the CPU (cpu-blas) and GPU (cuda) kernels of the
 * indexing and slicing operators, as MXK_HD functions (mxk_hd.h), so that both
 * backends address the same elements:
 *   - the element an index value addresses under take's / pick's out-of-range
 *     mode (MXNet src/operator/tensor/indexing_op.h, take_::kRaise/kWrap/kClip,
 *     and the TakeRspKernel / pick kernels' clip and wrap arithmetic);
 *   - slice's per-axis selection (src/operator/tensor/matrix_op-inl.h,
 *     GetIndexRange and SetSliceOpOutputDimSize).
 */
#ifndef MXK_INDEX_H
#define MXK_INDEX_H

#include <math.h>
#include <stdint.h>

#include "mxk_hd.h"

/** Out-of-range index policy (MXNet take_::kRaise, kWrap, kClip). */
typedef enum mxk_idx_mode { MXK_IDX_RAISE = 0, MXK_IDX_WRAP = 1, MXK_IDX_CLIP = 2 } mxk_idx_mode;

/**
 * The element an index value `v` addresses along an axis of `size` (> 0)
 * elements, as MXNet's take/pick kernels compute it: truncated toward zero, then
 * clipped to [0, size) (MXK_IDX_CLIP) or wrapped modulo size (MXK_IDX_WRAP, and
 * MXK_IDX_RAISE after the caller's range check). NaN counts as 0 and huge values
 * saturate, so the result is always in [0, size).
 */
MXK_HD int64_t mxk_idx_pos(double v, int64_t size, mxk_idx_mode mode) {
    double t = isnan(v) ? 0.0 : trunc(v);
    /* saturate far outside any axis: the clip/wrap below then stays in range */
    int64_t j = t <= -4e18  ? INT64_C(-4000000000000000000)
                : t >= 4e18 ? INT64_C(4000000000000000000)
                            : (int64_t)t;
    if (mode == MXK_IDX_CLIP)
        return j <= 0 ? 0 : (j >= size ? size - 1 : j);
    j %= size;
    return j < 0 ? j + size : j;
}

/**
 * slice's selection along one axis of `len` (> 0) elements from optional begin,
 * end and step (has_* = 0: None; step None is 1): the first index into *begin
 * (-1 when nothing is selected), the step into *step (clamped to [-len, len], which
 * selects the same elements), and returns the number of selected elements (0 when
 * empty). Negative bounds count from the end; out-of-range bounds are clipped, as
 * Python slices are.
 */
MXK_HD int64_t mxk_idx_slice_range(int32_t has_begin, int64_t begin, int32_t has_end, int64_t end,
                                   int32_t has_step, int64_t step, int64_t len, int64_t *first,
                                   int64_t *stride) {
    int64_t s = has_step ? step : 1;
    int64_t b = has_begin ? begin : (s < 0 ? len - 1 : 0);
    int64_t e = has_end ? end : (s < 0 ? -1 : len);
    /* a step of len or more selects one element either way: clamped, steps times
     * strides cannot overflow */
    s = s > len ? len : (s < -len ? -len : s);
    if (b < 0)
        b += len;
    if (e < 0 && has_end)
        e += len;
    if (b < 0 && s > 0)
        b = 0;
    if (b > len - 1 && s < 0)
        b = len - 1;
    if (b < 0 || b > len - 1)
        b = -1;
    e = e < -1 ? -1 : (e > len ? len : e);
    int64_t n = 0;
    if (e != b && b >= 0)
        n = s > 0 ? (e > b ? (e - b - 1) / s + 1 : 0) : (e < b ? (b - e - 1) / (-s) + 1 : 0);
    *first = b;
    *stride = s;
    return n;
}

#endif /* MXK_INDEX_H */
