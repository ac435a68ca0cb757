/*
 * Index arithmetic shared by the CPU (cpu-blas) and GPU (cuda) kernels of the
 * indexing and slicing operators, as MXK_HD functions (mxk_hd.h), so that both
 * backends address the same elements:
 *   - the element an index value addresses under take's / pick's out-of-range
 *     mode (MXNet src/operator/tensor/indexing_op.h, take_::kRaise/kWrap/kClip,
 *     and the TakeRspKernel / pick kernels' clip and wrap arithmetic);
 *   - slice's per-axis selection (src/operator/tensor/matrix_op-inl.h,
 *     GetIndexRange and SetSliceOpOutputDimSize);
 *   - the blocks take, pick and gather_nd / scatter_nd move (indexing_op.h
 *     TakeKernel, gather_nd / scatter_nd kernels; broadcast_reduce_op.h pick);
 *   - argmax / argmin along a strided row (broadcast_reduce_op.h
 *     SearchAxisCompute with mshadow's red::maximum / red::minimum);
 *   - the order topk / sort / argsort sort a row by (ordering_op-inl.h);
 *   - the Sequence* operators' step rows and lengths (src/operator/sequence_*-inl.h);
 *   - Pad's source index per dim (src/operator/pad-inl.h, pad.cc / pad.cu).
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

/**
 * take and pick move blocks between a big tensor, seen as (outer, size, inner)
 * around the indexed axis, and a small one: take's block b (b < outer * n, of
 * `inner` elements) reads index element b % n of the n indices, pick's block b
 * (b < outer * inner, one element) reads index element b. Returns which.
 */
MXK_HD uint64_t mxk_idx_take_index(int32_t pick, uint64_t b, uint64_t n) {
    return pick ? b : b % n;
}

/**
 * The big tensor's element offset of block b (see mxk_idx_take_index) whose index
 * value is v: row mxk_idx_pos(v) of outer row b / n (take) or b / inner (pick),
 * plus pick's position within the inner dims. RAISE addresses as WRAP (the caller
 * checked the range).
 */
MXK_HD uint64_t mxk_idx_take_offset(int32_t pick, uint64_t b, uint64_t n, uint64_t size,
                                    uint64_t inner, double v, mxk_idx_mode mode) {
    uint64_t o = pick ? b / inner : b / n;
    uint64_t pos =
        (uint64_t)mxk_idx_pos(v, (int64_t)size, mode == MXK_IDX_CLIP ? MXK_IDX_CLIP : MXK_IDX_WRAP);
    return (o * size + pos) * inner + (pick ? b % inner : 0);
}

/**
 * gather_nd / scatter_nd: the position an index value v in [-size, size)
 * addresses along an axis of `size`, (int)(v + size) % size as MXNet's kernels
 * compute it; other values are wrapped into [0, size) too, so no value addresses
 * memory outside the axis.
 */
MXK_HD int64_t mxk_idx_nd_pos(double v, int64_t size) {
    return mxk_idx_pos(v + (double)size, size, MXK_IDX_WRAP);
}

/**
 * The position of the first maximum (minimize = 0) or minimum (minimize = 1) of
 * the n floats x[0], x[stride], ...; the first NaN wins, as mshadow's red::maximum
 * and red::minimum propagate NaN.
 */
MXK_HD uint64_t mxk_idx_arg_best(const float *x, uint64_t n, uint64_t stride, int32_t minimize) {
    uint64_t best = 0;
    for (uint64_t j = 1; j < n && !isnan(x[best * stride]); j++) {
        float c = x[j * stride], b = x[best * stride];
        if ((minimize ? c < b : c > b) || isnan(c))
            best = j;
    }
    return best;
}

/**
 * Whether element (xv at position xi) sorts before (yv at yi) in topk / sort /
 * argsort: ascending puts NaN last, descending first; ties (and two NaNs) keep
 * position order, so the order is total and every sort algorithm gives the same
 * result (MXNet's std::sort leaves ties unspecified).
 */
MXK_HD int mxk_idx_sort_before(float xv, int64_t xi, float yv, int64_t yi, int32_t ascend) {
    int xn = isnan(xv) != 0, yn = isnan(yv) != 0;
    if (xn != yn)
        return ascend ? yn : xn;
    if (!xn && xv != yv)
        return ascend ? xv < yv : xv > yv;
    return xi < yi;
}

/**
 * The element offset of row (step s, batch element b) of Sequence* data laid out
 * (seq, batch, rest) for axis 0 or (batch, seq, rest) for axis 1.
 */
MXK_HD uint64_t mxk_idx_seq_row(int32_t axis, int64_t seq, int64_t batch, int64_t rest, int64_t s,
                                int64_t b) {
    int64_t r = axis ? b * seq + s : s * batch + b;
    return (uint64_t)(r * rest);
}

/**
 * The steps a Sequence* length value l covers: truncated toward zero (MXNet's
 * static_cast), clamped to [lo, seq]; NaN gives lo.
 */
MXK_HD int64_t mxk_idx_seq_len(double l, int64_t seq, int64_t lo) {
    if (isnan(l) || l < (double)lo)
        return lo;
    return l >= (double)seq ? seq : (int64_t)l;
}

/** Pad's modes, in the operator's enum order. */
typedef enum mxk_pad_mode {
    MXK_PAD_CONSTANT = 0,
    MXK_PAD_EDGE = 1,
    MXK_PAD_REFLECT = 2
} mxk_pad_mode;

/**
 * The input index Pad's output index j reads along a dim of n input elements
 * padded by `before`: j - before inside; outside, -1 (constant: the fill value),
 * the border (edge) or the mirror without repeating the border (reflect: -1 reads
 * 1; the operator keeps widths below n).
 */
MXK_HD int64_t mxk_idx_pad_pos(int64_t j, int64_t before, int64_t n, mxk_pad_mode mode) {
    int64_t k = j - before;
    if (k >= 0 && k < n)
        return k;
    if (mode == MXK_PAD_CONSTANT)
        return -1;
    if (mode == MXK_PAD_EDGE)
        return k < 0 ? 0 : n - 1;
    return k < 0 ? -k : 2 * (n - 1) - k;
}

#endif /* MXK_INDEX_H */
