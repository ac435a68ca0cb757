/*
 * cpu-blas plugin: ROIPooling and _contrib_ROIAlign, region-of-interest pooling.
 *
 * Semantics: MXNet src/operator/roi_pooling-inl.h, roi_pooling.cc (ROIPoolingParam:
 * pooled_size (h, w) required, spatial_scale in [0, 1] required; arguments data
 * (N, C, H, W) and rois (R, 5) of rows [batch_index, x1, y1, x2, y2]; outputs
 * output and the hidden int32 maxidx, both (R, C, ph, pw)). Each ROI's corners
 * are scaled and rounded (half away from zero), malformed ROIs are forced to 1x1,
 * bin (i, j) covers rows [floor(i h/ph), ceil((i+1) h/ph)) of the ROI clipped to
 * the map, and takes the maximum (first one wins; -FLT_MAX initial); an empty bin
 * or a batch index outside [0, N) gives 0 and maxidx -1. Backward (reads out_grad,
 * rois, maxidx) adds each output gradient at its maxidx; rois get a zero gradient.
 * Alias _npx_roi_pooling.
 *
 * src/operator/contrib/roi_align-inl.h, roi_align.cc (ROIAlignParam: pooled_size,
 * spatial_scale, sample_ratio -1 (adaptive: ceil(roi size / pooled size)),
 * position_sensitive False, aligned False): each bin averages the bilinear
 * interpolation of sample_ratio^2 points on a regular grid; samples outside
 * [-1, H] x [-1, W] count as 0; aligned shifts the scaled corners by -0.5 and
 * refuses an empty ROI, otherwise sizes are at least 1. position_sensitive
 * reads channel c*ph*pw + i*pw + j (C must divide by ph*pw; output C/(ph*pw)
 * channels). Backward (reads out_grad and rois) scatters the same weights.
 *
 * Deliberate differences: ROIAlign gives 0 for an ROI whose batch index is
 * outside [0, N) (MXNet zeroes one stray element for a negative index and reads
 * out of bounds for one >= N); coordinates are clamped to +-2^30 before the
 * integer conversions (C's conversion is undefined beyond int), and a ROIAlign
 * sampling grid of more than 2^20 points per bin is refused (MXNet loops on).
 * Forward honours the write request (MXNet always overwrites).
 */
#include <float.h>

#include "cb_tensor.h"
#include "mxk_vision.h"
#include "op_vision.h"

/** Parsed attributes of both operators. */
typedef struct roi_param {
    int32_t align; /**< 0: ROIPooling, 1: _contrib_ROIAlign */
    int64_t ph, pw;
    double scale;
    int64_t sample_ratio;
    int32_t position_sensitive, aligned;
} roi_param;

static const char *const roi_args[] = {"data", "rois", NULL};
static const char *const rp_outs[] = {"output", "maxidx", NULL};
static const char *const ra_outs[] = {"output", NULL};
static const char *const rp_aliases[] = {"_npx_roi_pooling", NULL};

/** Attribute schema of ROIPooling (ROIPoolingParam). */
static const mxk_attr_def rp_attrs[] = {
    MXK_SDK_ATTR("pooled_size", MXK_ATTR_SHAPE, 1, NULL, NULL, "ROI pooling output shape (h,w)."),
    MXK_SDK_ATTR("spatial_scale", MXK_ATTR_FLOAT, 1, NULL, NULL,
                 "Ratio of input feature map height (or w) to raw image height (or w)."),
};
/** Attribute schema of _contrib_ROIAlign (ROIAlignParam). */
static const mxk_attr_def ra_attrs[] = {
    MXK_SDK_ATTR("pooled_size", MXK_ATTR_SHAPE, 1, NULL, NULL,
                 "ROI Align output roi feature map height and width: (h, w)."),
    MXK_SDK_ATTR("spatial_scale", MXK_ATTR_FLOAT, 1, NULL, NULL,
                 "Ratio of input feature map height (or w) to raw image height (or w)."),
    MXK_SDK_ATTR("sample_ratio", MXK_ATTR_INT, 0, "-1", NULL,
                 "Sampling ratio of ROI align; <= 0: adaptive."),
    MXK_SDK_ATTR("position_sensitive", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Position-sensitive RoI pooling (PSRoIPooling)."),
    MXK_SDK_ATTR("aligned", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Center-aligned ROIAlign (Detectron2): corners shifted by -0.5."),
};

/** Parses the attributes shared by both operators (pooled_size, spatial_scale). */
static mxk_status roi_parse_common(const mxk_attrs *attrs, roi_param *p, mxk_error_sink *err) {
    mxk_shape ps;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "pooled_size", &ps, err));
    if (ps.ndim != 2)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'pooled_size': has wrong dimensions, expected "
                             "dimension=2, got %d",
                             (int)ps.ndim);
    if (ps.dims[0] <= 0 || ps.dims[1] <= 0 || ps.dims[0] > INT32_MAX || ps.dims[1] > INT32_MAX)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'pooled_size': the input shape must be nonzero "
                             "(positive) in all dimensions, got (%lld,%lld)",
                             (long long)ps.dims[0], (long long)ps.dims[1]);
    p->ph = ps.dims[0];
    p->pw = ps.dims[1];
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "spatial_scale", &p->scale, err));
    if (!(p->scale >= 0.0 && p->scale <= 1.0))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'spatial_scale': value %g exceed bound [0,1]", p->scale);
    return MXK_OK;
}

/** parse_param of ROIPooling. */
static mxk_status rp_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    roi_param p = {0};
    MXK_SDK_CHECK(roi_parse_common(attrs, &p, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** parse_param of _contrib_ROIAlign. */
static mxk_status ra_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    roi_param p = {.align = 1};
    MXK_SDK_CHECK(roi_parse_common(attrs, &p, err));
    MXK_SDK_CHECK(
        mxk_sdk_attr_int_range(attrs, "sample_ratio", INT32_MIN, INT32_MAX, &p.sample_ratio, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "position_sensitive", &p.position_sensitive, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "aligned", &p.aligned, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** output (and maxidx) = (R, C', ph, pw) from data (N, C, H, W) and rois (R, 5). */
static mxk_status roi_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    const roi_param *p = param;
    if (num_in != 2 || num_out != (p->align ? 1u : 2u))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "Input:[data, rois]");
    if (in[0].ndim == 0 || in[1].ndim == 0)
        return MXK_OK;
    if (in[0].ndim != 4)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': data should be a 4D tensor, got %d dims",
                             (int)in[0].ndim);
    if (in[1].ndim != 2 || in[1].dims[1] != 5)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'rois': bbox should be a 2D tensor of shape [batch, 5]");
    int64_t c = in[0].dims[1];
    if (p->position_sensitive) {
        if (c % (p->ph * p->pw) != 0)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "argument 'data': Input channels should be divided by "
                                 "pooled_size[0]*pooled_size[1] when position_sensitive is "
                                 "true (%lld channels, pooled_size (%lld,%lld))",
                                 (long long)c, (long long)p->ph, (long long)p->pw);
        c /= p->ph * p->pw;
    }
    if (!p->align && mxk_sdk_shape_count(&in[0]) > INT32_MAX)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': more than 2^31-1 elements (maxidx is int32)");
    int64_t d[4] = {in[1].dims[0], c, p->ph, p->pw};
    mxk_shape o = mxk_sdk_shape_from(d, 4);
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[0], &o, "output", "output", err));
    if (!p->align)
        MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[1], &o, "output", "maxidx", err));
    return MXK_OK;
}

/** data, rois and output float32; ROIPooling's maxidx int32. */
static mxk_status roi_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                 uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const roi_param *p = param;
    MXK_SDK_CHECK(mxk_sdk_type_assign(&in[0], MXK_FLOAT32, "argument 'data'", err));
    MXK_SDK_CHECK(mxk_sdk_type_assign(&in[1], MXK_FLOAT32, "argument 'rois'", err));
    MXK_SDK_CHECK(mxk_sdk_type_assign(&out[0], MXK_FLOAT32, "output 'output'", err));
    if (!p->align)
        MXK_SDK_CHECK(mxk_sdk_type_assign(&out[1], MXK_INT32, "output 'maxidx'", err));
    return MXK_OK;
}

/** ROIPooling's backward reads out_grad, rois and maxidx. */
static void rp_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_in_data[1] = 1;
    need_out_data[1] = 1;
}

/** ROIAlign's backward reads out_grad and rois. */
static void ra_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_in_data[1] = 1;
}

/** The tensors of one call and the derived sizes. */
typedef struct roi_geom {
    int64_t n, c, h, w; /**< data dims */
    int64_t r, oc;      /**< ROIs, output channels */
    int64_t ph, pw;     /**< pooled size */
    const float *rois;  /**< (R, 5) */
} roi_geom;

/** Fills the geometry from the data and rois shapes. */
static void roi_geom_init(roi_geom *g, const roi_param *p, const mxk_shape *ds,
                          const mxk_tensor *rois) {
    g->n = ds->dims[0];
    g->c = ds->dims[1];
    g->h = ds->dims[2];
    g->w = ds->dims[3];
    g->r = rois->shape.dims[0];
    g->oc = p->position_sensitive ? g->c / (p->ph * p->pw) : g->c;
    g->ph = p->ph;
    g->pw = p->pw;
    g->rois = cb_f32(rois);
}

/** ROIPooling forward: max over each bin, maxidx its flat index in data (or -1). */
static void rp_pool(const roi_param *p, const roi_geom *g, const float *x, float *y, int32_t *idx,
                    mxk_op_req req) {
    for (int64_t n = 0; n < g->r; n++) {
        const float *roi = g->rois + n * 5;
        int64_t b = mxk_vis_roi_batch(roi, g->n);
        mxk_vis_roi_pool q = mxk_vis_roi_pool_of(roi, (float)p->scale, g->ph, g->pw);
        for (int64_t c = 0; c < g->c; c++) {
            int64_t base = (b * g->c + c) * g->h * g->w;
            for (int64_t i = 0; i < g->ph; i++)
                for (int64_t j = 0; j < g->pw; j++) {
                    int64_t hs, he, ws, we;
                    mxk_vis_roi_pool_bin(&q, i, j, g->h, g->w, &hs, &he, &ws, &we);
                    float best = -FLT_MAX;
                    int64_t arg = -1;
                    if (b < 0 || he <= hs || we <= ws)
                        best = 0.0f;
                    else
                        for (int64_t yy = hs; yy < he; yy++)
                            for (int64_t xx = ws; xx < we; xx++)
                                if (x[base + yy * g->w + xx] > best) {
                                    best = x[base + yy * g->w + xx];
                                    arg = base + yy * g->w + xx;
                                }
                    int64_t o = ((n * g->c + c) * g->ph + i) * g->pw + j;
                    if (y != NULL)
                        mxk_sdk_assign_f32(&y[o], best, req);
                    if (idx != NULL)
                        idx[o] = (int32_t)arg;
                }
        }
    }
}

/** The sampling layout of ROI row `roi`; MXK_ERR_INVALID_ARGUMENT when it cannot be pooled. */
static mxk_status ra_layout(const roi_param *p, const roi_geom *g, int64_t n, mxk_vis_roi_align *rb,
                            mxk_error_sink *err) {
    int bad = mxk_vis_roi_align_of(g->rois + n * 5, g->n, (float)p->scale, p->aligned,
                                   p->sample_ratio, g->ph, g->pw, rb);
    if (bad == MXK_VIS_RA_EMPTY)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "rois[%lld]: roi_width > 0 and roi_height > 0 "
                             "required when aligned (got %g, %g)",
                             (long long)n, rb->rw, rb->rh);
    if (bad == MXK_VIS_RA_DENSE)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "rois[%lld]: %lld x %lld sampling points per "
                             "bin, more than 2^20",
                             (long long)n, (long long)rb->gh, (long long)rb->gw);
    return MXK_OK;
}

/**
 * ROIAlign over every bin: forward (y != NULL) writes the averages by `req`;
 * backward (dx != NULL) adds dy's share at the sampled positions.
 */
static mxk_status ra_run(const roi_param *p, const roi_geom *g, const float *x, float *y,
                         mxk_op_req req, const float *dy, float *dx, mxk_error_sink *err) {
    int64_t hw = g->h * g->w;
    for (int64_t n = 0; n < g->r; n++) {
        mxk_vis_roi_align rb;
        MXK_SDK_CHECK(ra_layout(p, g, n, &rb, err));
        double cnt = (double)(rb.gh * rb.gw);
        for (int64_t c = 0; c < g->oc; c++)
            for (int64_t i = 0; i < g->ph; i++)
                for (int64_t j = 0; j < g->pw; j++) {
                    int64_t o = ((n * g->oc + c) * g->ph + i) * g->pw + j;
                    int64_t cu = p->position_sensitive ? (c * g->ph + i) * g->pw + j : c;
                    int64_t base = (rb.b * g->c + cu) * hw;
                    double acc = 0.0;
                    for (int64_t iy = 0; rb.b >= 0 && iy < rb.gh; iy++) {
                        for (int64_t ix = 0; ix < rb.gw; ix++) {
                            float yy, xx;
                            mxk_vis_roi_align_at(&rb, i, j, iy, ix, &yy, &xx);
                            int64_t pos[4];
                            double wt[4];
                            if (!mxk_vis_roi_sample(yy, xx, g->h, g->w, pos, wt))
                                continue;
                            for (int k = 0; k < 4; k++) {
                                if (y != NULL)
                                    acc += wt[k] * x[base + pos[k]];
                                else
                                    dx[base + pos[k]] += (float)(dy[o] * wt[k] / cnt);
                            }
                        }
                    }
                    if (y != NULL)
                        mxk_sdk_assign_f32(&y[o], rb.b >= 0 ? (float)(acc / cnt) : 0.0f, req);
                }
    }
    return MXK_OK;
}

/** Forward of both operators. */
static mxk_status roi_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const roi_param *p = param;
    uint32_t nout = p->align ? 1 : 2;
    MXK_SDK_CHECK(cbt_check_forward(args, 2, nout, roi_infer_shape, param, 1, err));
    roi_geom g;
    roi_geom_init(&g, p, &args->in_data[0]->shape, args->in_data[1]);
    const float *x = cb_f32(args->in_data[0]);
    float *y = cb_f32(args->out_data[0]);
    if (p->align) {
        if (args->req[0] == MXK_REQ_NULL)
            return MXK_OK;
        return ra_run(p, &g, x, y, args->req[0], NULL, NULL, err);
    }
    int32_t *idx = args->req[1] != MXK_REQ_NULL ? args->out_data[1]->data : NULL;
    rp_pool(p, &g, x, args->req[0] == MXK_REQ_NULL ? NULL : y, idx, args->req[0]);
    return MXK_OK;
}

/** Backward of both operators: d data from out_grad (and maxidx); d rois zero. */
static mxk_status roi_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const roi_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 2, p->align ? 1 : 2, 1, err));
    MXK_SDK_CHECK(cbt_zero_grad(args->in_grad[1], args->req[1], "rois", err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dyt = args->out_grad[0], *dxt = args->in_grad[0], *rois = args->in_data[1];
    MXK_SDK_CHECK(cb_check_tensor(dyt, "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(rois, "argument 'rois'", err));
    MXK_SDK_CHECK(cb_check_tensor(dxt, "gradient of 'data'", err));
    if (dxt->shape.ndim != 4 || dyt->shape.ndim != 4 || rois->shape.ndim != 2 ||
        dyt->shape.dims[0] != rois->shape.dims[0])
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradients of 'data' and 'output' do not match");
    roi_geom g;
    roi_geom_init(&g, p, &dxt->shape, rois);
    float *dx = cb_f32(dxt);
    const float *dy = cb_f32(dyt);
    uint64_t nx = mxk_sdk_shape_count(&dxt->shape);
    if (req != MXK_REQ_ADD)
        mxk_sdk_fill_f32(dx, 0.0f, (size_t)nx, MXK_REQ_WRITE);
    if (p->align)
        return ra_run(p, &g, NULL, NULL, MXK_REQ_NULL, dy, dx, err);
    const mxk_tensor *it = args->out_data[1];
    if (it->data == NULL || it->dtype != MXK_INT32 ||
        mxk_sdk_shape_count(&it->shape) != mxk_sdk_shape_count(&dyt->shape))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "output 'maxidx' missing or of the wrong type or size");
    const int32_t *idx = it->data;
    uint64_t ny = mxk_sdk_shape_count(&dyt->shape);
    for (uint64_t k = 0; k < ny; k++)
        if (idx[k] >= 0 && (uint64_t)idx[k] < nx)
            dx[idx[k]] += dy[k];
    return MXK_OK;
}

/** Registers ROIPooling and _contrib_ROIAlign with their CPU kernels. */
mxk_status cb_register_vision_roi(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    cbt_def_init(&def, "Region of interest max pooling (Fast R-CNN).", rp_attrs,
                 MXK_SDK_COUNTOF(rp_attrs), roi_args, rp_parse);
    def.outputs = rp_outs;
    def.num_visible_outputs = cbt_num_visible_1;
    def.infer_shape = roi_infer_shape;
    def.infer_type = roi_infer_type;
    def.backward_dependency = rp_backward_dependency;
    def.aliases = rp_aliases;
    MXK_SDK_CHECK(cbt_register(reg, &def, "ROIPooling", roi_forward, roi_backward, 0, err));

    cbt_def_init(&def, "Region of interest align with bilinear sampling (Mask R-CNN).", ra_attrs,
                 MXK_SDK_COUNTOF(ra_attrs), roi_args, ra_parse);
    def.outputs = ra_outs;
    def.infer_shape = roi_infer_shape;
    def.infer_type = roi_infer_type;
    def.backward_dependency = ra_backward_dependency;
    return cbt_register(reg, &def, "_contrib_ROIAlign", roi_forward, roi_backward, 0, err);
}
