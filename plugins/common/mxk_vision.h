/*
 * Per-element math of the vision operators shared by the CPU (cpu-blas
 * op_vision_sampler.c, op_vision_roi.c) and GPU (cuda cu_kern_vision.cu)
 * kernels, so that both sample the same points with the same weights and pick
 * the same ROI bins (mxk_hd.h).
 *
 * Semantics: MXNet src/operator/bilinear_sampler-inl.h, bilinear_sampler.cc
 * (source point and weights of BilinearSamplerForward / Backward),
 * src/operator/grid_generator-inl.h (the affine target grid),
 * src/operator/roi_pooling.cc (ROIPoolForward's rounded corners and bins),
 * src/operator/contrib/roi_align.cc (the bin layout and
 * bilinear_interpolate_gradient) and the SSD operators'
 * src/operator/contrib/multibox_prior.cc (anchor boxes), multibox_target.cc
 * (IoU, box encoding) and multibox_detection.cc (IoU, box decoding, score order),
 * and box_nms's src/operator/contrib/bounding_box-inl.h (class ids, box overlap,
 * format conversion).
 */
#ifndef MXK_VISION_H
#define MXK_VISION_H

#include <math.h>
#include <stdint.h>

#include "mxk_hd.h"

/** floor(v) as an index clamped to +-2^30 (NaN: -2^30, outside every map). */
MXK_HD int64_t mxk_vis_floor(float v) {
    if (!(v >= -1073741824.0f))
        return -1073741824;
    return v > 1073741824.0f ? 1073741824 : (int64_t)floorf(v);
}

/**
 * A bilinear sampler point: top-left neighbour (ty, tx), the weights wy, wx of
 * its row and column, and which of the rows ty, ty + 1 and columns tx, tx + 1
 * lie inside the map.
 */
typedef struct mxk_vis_point {
    int64_t ty, tx;
    float wy, wx;
    int in_y0, in_y1, in_x0, in_x1;
} mxk_vis_point;

/** The point of normalised grid coordinates (gx, gy) in [-1, 1] on an h x w map. */
MXK_HD mxk_vis_point mxk_vis_point_at(float gx, float gy, int64_t h, int64_t w) {
    mxk_vis_point p;
    float yr = (gy + 1.0f) * (float)(h - 1) / 2.0f;
    float xr = (gx + 1.0f) * (float)(w - 1) / 2.0f;
    p.ty = mxk_vis_floor(yr);
    p.tx = mxk_vis_floor(xr);
    p.wy = 1.0f - (yr - (float)p.ty);
    p.wx = 1.0f - (xr - (float)p.tx);
    p.in_y0 = p.ty >= 0 && p.ty <= h - 1;
    p.in_y1 = p.ty + 1 >= 0 && p.ty + 1 <= h - 1;
    p.in_x0 = p.tx >= 0 && p.tx <= w - 1;
    p.in_x1 = p.tx + 1 >= 0 && p.tx + 1 <= w - 1;
    return p;
}

/**
 * The four neighbours of p on the map xc of width w (top-left, top-right,
 * bottom-left, bottom-right; 0 outside the map) into v.
 */
MXK_HD void mxk_vis_corners(const mxk_vis_point *p, const float *xc, int64_t w, float v[4]) {
    int64_t at = p->ty * w + p->tx;
    v[0] = p->in_y0 && p->in_x0 ? xc[at] : 0.0f;
    v[1] = p->in_y0 && p->in_x1 ? xc[at + 1] : 0.0f;
    v[2] = p->in_y1 && p->in_x0 ? xc[at + w] : 0.0f;
    v[3] = p->in_y1 && p->in_x1 ? xc[at + w + 1] : 0.0f;
}

/** The interpolated value of the corners v at p. */
MXK_HD float mxk_vis_interp(const mxk_vis_point *p, const float v[4]) {
    return v[0] * p->wy * p->wx + v[1] * p->wy * (1.0f - p->wx) + v[2] * (1.0f - p->wy) * p->wx +
           v[3] * (1.0f - p->wy) * (1.0f - p->wx);
}

/**
 * Adds one channel's share of the grid gradient for output gradient d at p with
 * corners v: *gy and *gx (before the (h-1)/2, (w-1)/2 scaling).
 */
MXK_HD void mxk_vis_grid_grad(const mxk_vis_point *p, const float v[4], float d, float *gy,
                              float *gx) {
    *gy -= d * (v[1] - v[3] + (v[0] - v[1] - v[2] + v[3]) * p->wx);
    *gx -= d * (v[2] - v[3] + (v[0] - v[1] - v[2] + v[3]) * p->wy);
}

/**
 * Element k of row `row` (0: x, 1: y, 2: ones) of the affine target grid
 * (3, th*tw): x = -1 + 2 j/(tw-1), y = -1 + 2 i/(th-1) at k = i tw + j.
 */
MXK_HD float mxk_vis_grid_dst(int64_t k, int64_t th, int64_t tw, int row) {
    if (row == 0)
        return -1.0f + (float)(k % tw) * (float)(2.0 / (double)(tw - 1));
    if (row == 1)
        return -1.0f + (float)(k / tw) * (float)(2.0 / (double)(th - 1));
    return 1.0f;
}

/** x clamped to +-2^30 (NaN to 0), so that conversions to int are defined. */
MXK_HD double mxk_vis_clamp(double x) {
    if (x != x)
        return 0.0;
    return x < -1073741824.0 ? -1073741824.0 : (x > 1073741824.0 ? 1073741824.0 : x);
}

/** The batch index of ROI row r (truncated), or -1 when outside [0, n). */
MXK_HD int64_t mxk_vis_roi_batch(const float *r, int64_t n) {
    double b = mxk_vis_clamp(trunc((double)r[0]));
    return b >= 0.0 && b < (double)n ? (int64_t)b : -1;
}

/** ROIPooling's ROI: start (sh, sw) on the map and bin size (bh, bw). */
typedef struct mxk_vis_roi_pool {
    int64_t sh, sw;
    float bh, bw;
} mxk_vis_roi_pool;

/** ROIPooling's corners of ROI row r (rounded half away from zero, at least 1x1). */
MXK_HD mxk_vis_roi_pool mxk_vis_roi_pool_of(const float *r, float scale, int64_t ph, int64_t pw) {
    mxk_vis_roi_pool q;
    q.sw = (int64_t)round(mxk_vis_clamp(r[1] * scale));
    q.sh = (int64_t)round(mxk_vis_clamp(r[2] * scale));
    int64_t ew = (int64_t)round(mxk_vis_clamp(r[3] * scale));
    int64_t eh = (int64_t)round(mxk_vis_clamp(r[4] * scale));
    int64_t rh = eh - q.sh + 1 > 1 ? eh - q.sh + 1 : 1, rw = ew - q.sw + 1 > 1 ? ew - q.sw + 1 : 1;
    q.bh = (float)rh / (float)ph;
    q.bw = (float)rw / (float)pw;
    return q;
}

/** Clamps v to [0, n]. */
MXK_HD int64_t mxk_vis_clip(int64_t v, int64_t n) {
    return v < 0 ? 0 : (v > n ? n : v);
}

/**
 * Bin (i, j) of ROIPooling's ROI q on an h x w map: rows [*hs, *he) and columns
 * [*ws, *we), clipped to the map (empty when *he <= *hs or *we <= *ws).
 */
MXK_HD void mxk_vis_roi_pool_bin(const mxk_vis_roi_pool *q, int64_t i, int64_t j, int64_t h,
                                 int64_t w, int64_t *hs, int64_t *he, int64_t *ws, int64_t *we) {
    *hs = mxk_vis_clip((int64_t)floorf((float)i * q->bh) + q->sh, h);
    *he = mxk_vis_clip((int64_t)ceilf((float)(i + 1) * q->bh) + q->sh, h);
    *ws = mxk_vis_clip((int64_t)floorf((float)j * q->bw) + q->sw, w);
    *we = mxk_vis_clip((int64_t)ceilf((float)(j + 1) * q->bw) + q->sw, w);
}

/** Outcomes of mxk_vis_roi_align_of besides 0 (a valid layout). */
enum mxk_vis_roi_align_bad {
    MXK_VIS_RA_EMPTY = 1, /**< aligned and the ROI has no area */
    MXK_VIS_RA_DENSE = 2  /**< more than 2^20 sampling points per bin */
};

/** One ROIAlign ROI's sampling layout. */
typedef struct mxk_vis_roi_align {
    int64_t b;            /**< batch index, -1: invalid ROI */
    float sh, sw, bh, bw; /**< ROI start and bin size (float, as MXNet computes them) */
    float rh, rw;         /**< ROI size */
    int64_t gh, gw;       /**< sampling grid per bin */
} mxk_vis_roi_align;

/**
 * The layout of ROI row r over a batch of n maps (pooled ph x pw, sample_ratio
 * > 0 fixed, else adaptive; aligned shifts the corners by -0.5). Returns 0, or
 * an mxk_vis_roi_align_bad for a ROI of a valid batch index that cannot be
 * pooled.
 */
MXK_HD int mxk_vis_roi_align_of(const float *r, int64_t n, float scale, int aligned,
                                int64_t sample_ratio, int64_t ph, int64_t pw,
                                mxk_vis_roi_align *a) {
    a->b = mxk_vis_roi_batch(r, n);
    float off = aligned ? 0.5f : 0.0f;
    a->sw = (float)mxk_vis_clamp(r[1] * scale - off);
    a->sh = (float)mxk_vis_clamp(r[2] * scale - off);
    a->rw = (float)mxk_vis_clamp(r[3] * scale - off) - a->sw;
    a->rh = (float)mxk_vis_clamp(r[4] * scale - off) - a->sh;
    if (aligned && a->b >= 0 && !(a->rw > 0.0 && a->rh > 0.0))
        return MXK_VIS_RA_EMPTY;
    if (!aligned) {
        a->rw = a->rw > 1.0f ? a->rw : 1.0f;
        a->rh = a->rh > 1.0f ? a->rh : 1.0f;
    }
    a->bh = a->rh / (float)ph;
    a->bw = a->rw / (float)pw;
    a->gh = sample_ratio > 0 ? sample_ratio : (int64_t)ceilf(a->rh / (float)ph);
    a->gw = sample_ratio > 0 ? sample_ratio : (int64_t)ceilf(a->rw / (float)pw);
    if (a->b >= 0 && a->gh * a->gw > (1 << 20))
        return MXK_VIS_RA_DENSE;
    return 0;
}

/** Sample (iy, ix) of bin (i, j) of layout a: its map coordinates (*y, *x). */
MXK_HD void mxk_vis_roi_align_at(const mxk_vis_roi_align *a, int64_t i, int64_t j, int64_t iy,
                                 int64_t ix, float *y, float *x) {
    *y = a->sh + (float)i * a->bh + ((float)iy + 0.5f) * a->bh / (float)a->gh;
    *x = a->sw + (float)j * a->bw + ((float)ix + 0.5f) * a->bw / (float)a->gw;
}

/**
 * The bilinear sample at (y, x) of an h x w map: the four positions and weights
 * (roi_align.cc's bilinear_interpolate_gradient); 0 when outside [-1, h] x [-1, w].
 */
MXK_HD int mxk_vis_roi_sample(double y, double x, int64_t h, int64_t w, int64_t pos[4],
                              double wt[4]) {
    if (y < -1.0 || y > (double)h || x < -1.0 || x > (double)w)
        return 0;
    y = y <= 0 ? 0 : y;
    x = x <= 0 ? 0 : x;
    int64_t yl = (int64_t)y, xl = (int64_t)x, yh, xh;
    if (yl >= h - 1) {
        yh = yl = h - 1;
        y = (double)yl;
    } else {
        yh = yl + 1;
    }
    if (xl >= w - 1) {
        xh = xl = w - 1;
        x = (double)xl;
    } else {
        xh = xl + 1;
    }
    double ly = y - (double)yl, lx = x - (double)xl, hy = 1.0 - ly, hx = 1.0 - lx;
    pos[0] = yl * w + xl;
    pos[1] = yl * w + xh;
    pos[2] = yh * w + xl;
    pos[3] = yh * w + xh;
    wt[0] = hy * hx;
    wt[1] = hy * lx;
    wt[2] = ly * hx;
    wt[3] = ly * lx;
    return 1;
}

/**
 * IoU of boxes a and b ([xmin, ymin, xmax, ymax]): 0 when the union is not positive
 * (multibox_detection.cc's CalculateOverlap) or, with `zero_only`, when it is zero
 * (multibox_target-inl.h's safe_divide).
 */
MXK_HD float mxk_vis_iou(const float *a, const float *b, int zero_only) {
    float w = fminf(a[2], b[2]) - fmaxf(a[0], b[0]), h = fminf(a[3], b[3]) - fmaxf(a[1], b[1]);
    float i = (w > 0.0f ? w : 0.0f) * (h > 0.0f ? h : 0.0f);
    float u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i;
    return (zero_only ? u == 0.0f : u <= 0.0f) ? 0.0f : i / u;
}

/**
 * MultiBoxPrior's anchor of one size and ratio (square root already taken) centred at
 * (cy, cx) on an h x w map: [xmin, ymin, xmax, ymax] into box, clipped to [0, 1]
 * with clip.
 */
MXK_HD void mxk_vis_prior_box(float cy, float cx, float size, float sqrt_ratio, int64_t h,
                              int64_t w, int clip, float box[4]) {
    float hw = size * (float)h / (float)w * sqrt_ratio / 2.0f, hh = size / sqrt_ratio / 2.0f;
    box[0] = cx - hw;
    box[1] = cy - hh;
    box[2] = cx + hw;
    box[3] = cy + hh;
    for (int j = 0; clip && j < 4; j++)
        box[j] = box[j] < 0.0f ? 0.0f : (box[j] > 1.0f ? 1.0f : box[j]);
}

/**
 * MultiBoxTarget's regression target t of ground truth g ([xmin, ymin, xmax, ymax])
 * against anchor a, divided by the variances var.
 */
MXK_HD void mxk_vis_encode(const float *a, const float *g, const float *var, float t[4]) {
    float aw = a[2] - a[0], ah = a[3] - a[1], ax = (a[0] + a[2]) * 0.5f, ay = (a[1] + a[3]) * 0.5f;
    float gw = g[2] - g[0], gh = g[3] - g[1], gx = (g[0] + g[2]) * 0.5f, gy = (g[1] + g[3]) * 0.5f;
    t[0] = (gx - ax) / aw / var[0];
    t[1] = (gy - ay) / ah / var[1];
    t[2] = logf(gw / aw) / var[2];
    t[3] = logf(gh / ah) / var[3];
}

/**
 * MultiBoxDetection's box of prediction l against anchor a with the variances var:
 * [xmin, ymin, xmax, ymax] into box, clipped to [0, 1] with clip.
 */
MXK_HD void mxk_vis_decode(const float *a, const float *l, const float *var, int clip,
                           float box[4]) {
    float aw = a[2] - a[0], ah = a[3] - a[1], ax = (a[0] + a[2]) / 2.0f, ay = (a[1] + a[3]) / 2.0f;
    float ox = l[0] * var[0] * aw + ax, oy = l[1] * var[1] * ah + ay;
    float ow = expf(l[2] * var[2]) * aw / 2.0f, oh = expf(l[3] * var[3]) * ah / 2.0f;
    box[0] = ox - ow;
    box[1] = oy - oh;
    box[2] = ox + ow;
    box[3] = oy + oh;
    for (int k = 0; clip && k < 4; k++)
        box[k] = fmaxf(0.0f, fminf(1.0f, box[k]));
}

/**
 * The order of a score sort, as std::stable_sort by descending score: -1 when
 * (va, ia) comes before (vb, ib), 1 after, 0 for the same element.
 */
MXK_HD int mxk_vis_score_cmp(float va, int64_t ia, float vb, int64_t ib) {
    if (va > vb)
        return -1;
    if (va < vb)
        return 1;
    return (ia > ib) - (ia < ib);
}

/* box_nms (src/operator/contrib/bounding_box-inl.h) */

/** A class value as C++'s static_cast<int> gives it on x86-64 (NaN, out of range: INT32_MIN). */
MXK_HD int64_t mxk_vis_nms_class(float v) {
    return v > -2147483649.0f && v < 2147483648.0f ? (int64_t)v : INT32_MIN;
}

/** Intersection length of the 1-D extents at a[0], a[2] and b[0], b[2] (corner or center). */
MXK_HD float mxk_vis_nms_intersect(const float *a, const float *b, int center) {
    float al = center ? a[0] - a[2] / 2 : a[0], ar = center ? a[0] + a[2] / 2 : a[2];
    float bl = center ? b[0] - b[2] / 2 : b[0], br = center ? b[0] + b[2] / 2 : b[2];
    float w = (ar < br ? ar : br) - (al > bl ? al : bl);
    return w > 0 ? w : 0.0f;
}

/** Box area (0 for a negative width or height). */
MXK_HD float mxk_vis_nms_area(const float *b, int center) {
    float w = center ? b[2] : b[2] - b[0], h = center ? b[3] : b[3] - b[1];
    return w < 0 || h < 0 ? 0.0f : w * h;
}

/** Converts the coordinates of one output row between formats (skipped when the first < 0). */
MXK_HD void mxk_vis_nms_convert(float *c, int to_center) {
    if (c[0] < 0)
        return;
    float a = c[0], b = c[1], x = c[2], y = c[3];
    if (to_center) {
        c[0] = (a + x) / 2;
        c[1] = (b + y) / 2;
        c[2] = x - a;
        c[3] = y - b;
    } else {
        c[0] = a - x / 2;
        c[1] = b - y / 2;
        c[2] = a + x / 2;
        c[3] = b + y / 2;
    }
}

#endif /* MXK_VISION_H */
