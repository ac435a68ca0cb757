/*
 * cuda plugin: launchers of the vision kernels (cu_kern_vision.cu,
 * cu_kern_vision_multibox.cu, cu_kern_vision_nms.cu), callable from the C11 host
 * sources (cu_ops_vision.c, cu_ops_vision_multibox.c, cu_ops_vision_nms.c): the
 * bilinear sampler, the sampling grids, ROI pooling, the SSD operators and
 * box_nms. Every launcher queues its kernels on `stream` and returns the launch
 * status. Pointers are device memory
 * of float32 elements unless stated; `req` is an output's write request
 * (mxk_op_req: ADD accumulates, WRITE and INPLACE store; a NULL request is never
 * launched). Gradients that several outputs scatter into (the sampler's and the
 * ROI operators' data gradient) are accumulated with atomic adds into memory
 * the caller has zeroed (or holds the values to add to, for ADD).
 */
#ifndef MXK_CU_KERN_VISION_H
#define MXK_CU_KERN_VISION_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The sampler's geometry: data (n, c, h, w), output (n, c, oh, ow), grid (n, 2, oh*ow). */
typedef struct cu_smp_geom {
    int64_t n, c, h, w, oh, ow;
} cu_smp_geom;

/** Bilinear sampling: y = data x sampled at the grid, by `req`. */
cudaError_t cu_launch_smp_forward(cu_smp_geom g, const float *x, const float *grid, float *y,
                                  int32_t req, cudaStream_t stream);

/**
 * The sampler's backward from dy: dx (unless NULL) += dy's share at the four
 * neighbours of every point; dgrid (unless NULL) the derivative wrt the grid, by
 * greq.
 */
cudaError_t cu_launch_smp_backward(cu_smp_geom g, const float *x, const float *grid,
                                   const float *dy, float *dx, float *dgrid, int32_t greq,
                                   cudaStream_t stream);

/** The affine target grid gd (3, th*tw) (mxk_vis_grid_dst), written. */
cudaError_t cu_launch_grid_dst(int64_t th, int64_t tw, float *gd, cudaStream_t stream);

/** src (n, 2, m) = theta (n, 2, 3) . gd (3, m) per sample, by `req`. */
cudaError_t cu_launch_affine(const float *theta, const float *gd, int64_t n, int64_t m, float *src,
                             int32_t req, cudaStream_t stream);

/** dtheta (n, 2, 3) = dsrc (n, 2, m) . gd^T per sample (sums in double), by `req`. */
cudaError_t cu_launch_affine_grad(const float *dsrc, const float *gd, int64_t n, int64_t m,
                                  float *dtheta, int32_t req, cudaStream_t stream);

/**
 * GridGenerator warp: y (n, 2, h, w) = ((flow_x + j) / ((w-1)/2) - 1, (flow_y + i)
 * / ((h-1)/2) - 1) by `req` (unless y is NULL); gd (2, h, w) = (j, i) written unless NULL.
 */
cudaError_t cu_launch_warp(const float *flow, int64_t n, int64_t h, int64_t w, float *y, float *gd,
                           int32_t req, cudaStream_t stream);

/** GridGenerator warp's backward: dx = dy / ((w-1)/2, (h-1)/2) by `req`. */
cudaError_t cu_launch_warp_grad(const float *dy, int64_t n, int64_t h, int64_t w, float *dx,
                                int32_t req, cudaStream_t stream);

/**
 * One ROI call: data (n, c, h, w), rois (r, 5), output (r, oc, ph, pw);
 * spatial_scale and, for ROIAlign, sample_ratio, aligned, position_sensitive.
 */
typedef struct cu_roi_geom {
    int64_t n, c, h, w, r, oc, ph, pw;
    float scale;
    int32_t aligned, position_sensitive;
    int64_t sample_ratio;
} cu_roi_geom;

/** ROIPooling: y (unless NULL) by `req` and maxidx (int32, unless NULL) written. */
cudaError_t cu_launch_roi_pool(cu_roi_geom g, const float *x, const float *rois, float *y,
                               int32_t req, int32_t *maxidx, cudaStream_t stream);

/** ROIPooling's backward: dx[maxidx[k]] += dy[k] for the ny outputs (maxidx in [0, nx)). */
cudaError_t cu_launch_roi_pool_grad(const float *dy, const int32_t *maxidx, uint64_t ny, float *dx,
                                    uint64_t nx, cudaStream_t stream);

/** ROIAlign: y by `req` (0 for a ROI that cannot be pooled). */
cudaError_t cu_launch_roi_align(cu_roi_geom g, const float *x, const float *rois, float *y,
                                int32_t req, cudaStream_t stream);

/** ROIAlign's backward: dx += dy's share at every sampled position. */
cudaError_t cu_launch_roi_align_grad(cu_roi_geom g, const float *rois, const float *dy, float *dx,
                                     cudaStream_t stream);

/* --- cu_kern_vision_multibox.cu: the SSD operators ------------------------------ */

/** Most sizes (ratios) of MultiBoxPrior (mxk_vision_attr.h's MXK_VIS_MAX_TUPLE). */
#define CU_PRIOR_MAX 64

/**
 * MultiBoxPrior on an h x w map: num_sizes + num_ratios - 1 anchors per location,
 * centres ((r + oy) sy, (c + ox) sx); sqrt_ratios holds the ratios' square roots.
 * Passed by value.
 */
typedef struct cu_prior_geom {
    int64_t h, w;
    int32_t num_sizes, num_ratios, clip;
    float sy, sx, oy, ox;
    float sizes[CU_PRIOR_MAX], sqrt_ratios[CU_PRIOR_MAX];
} cu_prior_geom;

/** MultiBoxPrior's output (1, h*w*anchors, 4) by `req`. */
cudaError_t cu_launch_prior(const cu_prior_geom *g, float *out, int32_t req, cudaStream_t stream);

/** One MultiBoxDetection call: cls_prob (nb, nc, na), loc_pred (nb, 4na), anchor (1, na, 4). */
typedef struct cu_det_geom {
    int64_t nb, nc, na;
    float threshold, nms_threshold;
    int32_t clip, force_suppress;
    int64_t nms_topk;
    float var[4];
} cu_det_geom;

/**
 * MultiBoxDetection's output (nb, na, 6), written, one thread block per batch
 * element; tmp (nb, na, 6) and order (nb, na; int32) are scratch.
 */
cudaError_t cu_launch_detection(cu_det_geom g, const float *cls, const float *loc,
                                const float *anchor, float *out, float *tmp, int32_t *order,
                                cudaStream_t stream);

/**
 * One MultiBoxTarget call: anchor (1, na, 4), label (nb, nl, lw), cls_pred (nb, nc,
 * na) and the attributes.
 */
typedef struct cu_target_geom {
    int64_t nb, na, nl, lw, nc;
    float overlap_threshold, ignore_label, neg_ratio, neg_thresh;
    float var[4];
} cu_target_geom;

/** Bytes of cu_launch_target's scratch. */
uint64_t cu_target_scratch_bytes(const cu_target_geom *g);

/**
 * MultiBoxTarget's loc_target and loc_mask (nb, 4na) and cls_target (nb, na),
 * written, one thread block per batch element; scratch of cu_target_scratch_bytes
 * bytes.
 */
cudaError_t cu_launch_target(const cu_target_geom *g, const float *anchor, const float *label,
                             const float *cls_pred, float *loc, float *mask, float *cls,
                             void *scratch, cudaStream_t stream);

/* --- cu_kern_vision_nms.cu: _contrib_box_nms ------------------------------------ */

/**
 * One box_nms call: nb batch elements of n boxes of width w; the attributes
 * (formats: 0 corner, 1 center); topk already clipped to [0, n] (-1: n).
 */
typedef struct cu_nms_geom {
    int64_t nb, n, w, topk;
    int64_t coord_start, score_index, id_index, background_id;
    float overlap_thresh, valid_thresh;
    int32_t force_suppress, in_format, out_format;
} cu_nms_geom;

/** Bytes of cu_launch_nms's scratch. */
uint64_t cu_nms_scratch_bytes(const cu_nms_geom *g);

/**
 * box_nms forward: out (nb, n, w) and rec (nb, n) written, one thread block per
 * batch element (topk 0: the input and 0, 1, 2, ...); scratch of
 * cu_nms_scratch_bytes bytes.
 */
cudaError_t cu_launch_nms(const cu_nms_geom *g, const float *x, float *out, float *rec,
                          void *scratch, cudaStream_t stream);

/**
 * box_nms backward: dx row rec[i] += dy row i for the `total` rows of width w
 * (rec in [0, total); others skipped).
 */
cudaError_t cu_launch_nms_grad(const float *dy, const float *rec, int64_t total, int64_t w,
                               float *dx, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* MXK_CU_KERN_VISION_H */
