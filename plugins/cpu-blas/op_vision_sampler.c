/*
 * cpu-blas plugin: BilinearSampler, GridGenerator and SpatialTransformer.
 *
 * Semantics: MXNet src/operator/bilinear_sampler-inl.h, bilinear_sampler.cc
 * (arguments data (N, C, H, W) and grid (N, 2, Ho, Wo) of normalised source
 * coordinates, x then y, in [-1, 1]; output (N, C, Ho, Wo) and a hidden tmp
 * (N, Ho, Wo, 2), cuDNN's workspace upstream, written as zeros here; source point ((x+1)(W-1)/2,
 * (y+1)(H-1)/2) interpolated bilinearly with zero padding outside the map; backward reads out_grad,
 * data, grid and also differentiates the grid; cudnn_off is accepted and ignored),
 * src/operator/grid_generator-inl.h (transform_type affine: data (N, 6) is a 2x3
 * matrix per sample applied to the target grid (x, y, 1) of target_shape (H, W)
 * with x = -1 + 2 j/(W-1), y = -1 + 2 i/(H-1): output (N, 2, H, W), hidden
 * grid_dst (3, H*W), backward reads out_grad and grid_dst; warp: data (N, 2, H, W)
 * is an optical flow, output ((flow_x + j) / ((W-1)/2) - 1, (flow_y + i) /
 * ((H-1)/2) - 1), hidden grid_dst (2, H, W), backward reads out_grad only) and
 * src/operator/spatial_transformer-inl.h, spatial_transformer.cc (the two
 * chained: arguments data and loc (N, 6), target_shape, transform_type affine,
 * sampler_type bilinear; hidden outputs grid_dst (3, H*W) and grid_src
 * (N, 2, H*W); backward reads out_grad, data, grid_dst and grid_src).
 *
 * Deliberate difference: SpatialTransformer's backward honours ADD requests
 * (MXNet overwrites both gradients whatever the request). Source indices are
 * clamped to +-2^30 before conversion to integers (C's conversion of NaN or of
 * huge values is undefined); such points are outside the map either way.
 */
#include "cb_tensor.h"
#include "mxk_vision.h"
#include "op_vision.h"

/** Which operator a parameter object belongs to. */
enum smp_kind { SMP_SAMPLER, SMP_GRID, SMP_ST };

/** Parsed attributes of the three operators. */
typedef struct smp_param {
    int32_t kind;   /**< enum smp_kind */
    int32_t warp;   /**< GridGenerator: transform_type warp */
    int64_t th, tw; /**< target_shape */
} smp_param;

static const char *const bs_args[] = {"data", "grid", NULL};
static const char *const bs_outs[] = {"output", "tmp", NULL};
static const char *const gg_args[] = {"data", NULL};
static const char *const gg_outs[] = {"output", "grid_dst", NULL};
static const char *const st_args[] = {"data", "loc", NULL};
static const char *const st_outs[] = {"output", "grid_dst", "grid_src", NULL};

/** Attribute schema of BilinearSampler (BilinearSamplerParam). */
static const mxk_attr_def bs_attrs[] = {
    MXK_SDK_ATTR("cudnn_off", MXK_ATTR_BOOL, 0, NULL, NULL,
                 "Whether to turn cudnn off (no effect on CPU)."),
};
/** Attribute schema of GridGenerator (GridGeneratorParam). */
static const mxk_attr_def gg_attrs[] = {
    MXK_SDK_ATTR("transform_type", MXK_ATTR_ENUM, 1, NULL, "affine|warp",
                 "affine: data is (batch, 6); warp: data is an optical flow (batch, 2, h, w)."),
    MXK_SDK_ATTR("target_shape", MXK_ATTR_SHAPE, 0, "(0,0)", NULL,
                 "Output shape (H, W); required for affine, ignored for warp."),
};
/** Attribute schema of SpatialTransformer (SpatialTransformerParam). */
static const mxk_attr_def st_attrs[] = {
    MXK_SDK_ATTR("target_shape", MXK_ATTR_SHAPE, 0, "(0,0)", NULL,
                 "Output shape (h, w) of spatial transformer: (y, x)."),
    MXK_SDK_ATTR("transform_type", MXK_ATTR_ENUM, 1, NULL, "affine", "Transformation type."),
    MXK_SDK_ATTR("sampler_type", MXK_ATTR_ENUM, 1, NULL, "bilinear", "Sampling type."),
    MXK_SDK_ATTR("cudnn_off", MXK_ATTR_BOOL, 0, NULL, NULL,
                 "Whether to turn cudnn off (no effect on CPU)."),
};

/** Reads target_shape (2 values, each in [0, 2^31)) into p. */
static mxk_status smp_target(const mxk_attrs *attrs, smp_param *p, mxk_error_sink *err) {
    mxk_shape t;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "target_shape", &t, err));
    if (t.ndim != 2 || t.dims[0] < 0 || t.dims[1] < 0 || t.dims[0] > INT32_MAX ||
        t.dims[1] > INT32_MAX)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'target_shape': expected (H, W) of non-negative "
                             "sizes, got %d values",
                             (int)t.ndim);
    p->th = t.dims[0];
    p->tw = t.dims[1];
    return MXK_OK;
}

/** parse_param of BilinearSampler. */
static mxk_status bs_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    smp_param p = {.kind = SMP_SAMPLER};
    return cbt_param_new(&p, sizeof p, out, err);
}
/** parse_param of GridGenerator. */
static mxk_status gg_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    smp_param p = {.kind = SMP_GRID};
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "transform_type", "affine|warp", &p.warp, err));
    MXK_SDK_CHECK(smp_target(attrs, &p, err));
    return cbt_param_new(&p, sizeof p, out, err);
}
/** parse_param of SpatialTransformer. */
static mxk_status st_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    smp_param p = {.kind = SMP_ST};
    MXK_SDK_CHECK(smp_target(attrs, &p, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** MXK_ERR_SHAPE "incorrect target_shape: 0" when a target size is 0 (affine transforms). */
static mxk_status smp_check_target(const smp_param *p, mxk_error_sink *err) {
    if (p->th <= 0 || p->tw <= 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "attribute 'target_shape': incorrect target_shape: %lld",
                             (long long)(p->th <= 0 ? p->th : p->tw));
    return MXK_OK;
}

/** Shapes of the three operators (see the file comment). */
static mxk_status smp_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    const smp_param *p = param;
    if (num_in != (p->kind == SMP_GRID ? 1u : 2u) || num_out != (p->kind == SMP_ST ? 3u : 2u))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "wrong number of arguments");
    const mxk_shape *d = &in[0];
    if (p->kind == SMP_GRID) {
        if (d->ndim == 0)
            return MXK_OK;
        if (p->warp) {
            if (d->ndim != 4 || d->dims[1] != 2)
                return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                     "argument 'data': if transform_type is warp, data is "
                                     "optical flow of shape (batch, 2, h, w)");
            int64_t g[3] = {2, d->dims[2], d->dims[3]};
            mxk_shape gs = mxk_sdk_shape_from(g, 3);
            MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[0], d, "output", "output", err));
            return mxk_sdk_shape_assign_named(&out[1], &gs, "output", "grid_dst", err);
        }
        if (d->ndim != 2 || d->dims[1] != 6)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "argument 'data': if transform_type is affine, data is an "
                                 "affine matrix of shape (batch, 6)");
        MXK_SDK_CHECK(smp_check_target(p, err));
        int64_t o[4] = {d->dims[0], 2, p->th, p->tw};
        mxk_shape os = mxk_sdk_shape_from(o, 4), gs = mxk_sdk_shape2(3, p->th * p->tw);
        MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[0], &os, "output", "output", err));
        return mxk_sdk_shape_assign_named(&out[1], &gs, "output", "grid_dst", err);
    }
    if (d->ndim == 0 || in[1].ndim == 0)
        return MXK_OK;
    if (d->ndim != 4)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': input data should be 4D in batch-num_filter-y-x");
    const mxk_shape *g = &in[1];
    int64_t o[4] = {d->dims[0], d->dims[1], 0, 0};
    if (p->kind == SMP_SAMPLER) {
        if (g->ndim != 4 || g->dims[1] != 2 || g->dims[0] != d->dims[0])
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "argument 'grid': Sampler grid should be 4D in batch-2-y-x "
                                 "with the batch of data");
        o[2] = g->dims[2];
        o[3] = g->dims[3];
        int64_t t[4] = {g->dims[0], g->dims[2], g->dims[3], 2};
        mxk_shape os = mxk_sdk_shape_from(o, 4), ts = mxk_sdk_shape_from(t, 4);
        MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[0], &os, "output", "output", err));
        return mxk_sdk_shape_assign_named(&out[1], &ts, "output", "tmp", err);
    }
    if (g->ndim != 2 || g->dims[1] != 6 || g->dims[0] != d->dims[0])
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'loc': incorrect locolisation network shape, should be "
                             "(batch, 6)");
    MXK_SDK_CHECK(smp_check_target(p, err));
    o[2] = p->th;
    o[3] = p->tw;
    int64_t s[3] = {d->dims[0], 2, p->th * p->tw};
    mxk_shape os = mxk_sdk_shape_from(o, 4), gd = mxk_sdk_shape2(3, p->th * p->tw),
              gs = mxk_sdk_shape_from(s, 3);
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[0], &os, "output", "output", err));
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[1], &gd, "output", "grid_dst", err));
    return mxk_sdk_shape_assign_named(&out[2], &gs, "output", "grid_src", err);
}

/** BilinearSampler's backward reads out_grad, data and grid. */
static void bs_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_in_data[0] = need_in_data[1] = 1;
}
/** GridGenerator's backward reads out_grad (and grid_dst for affine). */
static void gg_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    const smp_param *p = param;
    need_out_grad[0] = 1;
    need_out_data[1] = !p->warp;
}
/** SpatialTransformer's backward reads out_grad, data, grid_dst and grid_src. */
static void st_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_in_data[0] = 1;
    need_out_data[1] = need_out_data[2] = 1;
}

/** The sampler's geometry: data (n, c, h, w), output (n, c, oh, ow), grid (n, 2, oh*ow). */
typedef struct smp_geom {
    int64_t n, c, h, w, oh, ow;
} smp_geom;

/**
 * Bilinear sampling of every output point (bilinear_sampler.cc's
 * BilinearSamplerForward): out (=|+=) by req. Without dy it is the forward;
 * with dy it is the backward: dx += (when not NULL) dy's share at the four
 * neighbours, dgrid (when not NULL) (=|+=) by greq the derivative wrt the grid.
 */
static void smp_sample(const smp_geom *g, const float *x, const float *grid, float *out,
                       mxk_op_req req, const float *dy, float *dx, float *dgrid, mxk_op_req greq) {
    int64_t ohw = g->oh * g->ow, hw = g->h * g->w;
    for (int64_t n = 0; n < g->n; n++)
        for (int64_t k = 0; k < ohw; k++) {
            const float *gp = grid + n * 2 * ohw + k;
            mxk_vis_point pt = mxk_vis_point_at(gp[0], gp[ohw], g->h, g->w);
            int64_t at = pt.ty * g->w + pt.tx;
            float gy = 0.0f, gx = 0.0f, v[4];
            for (int64_t c = 0; c < g->c; c++) {
                int64_t o = (n * g->c + c) * ohw + k;
                mxk_vis_corners(&pt, x + (n * g->c + c) * hw, g->w, v);
                if (dy == NULL) {
                    mxk_sdk_assign_f32(&out[o], mxk_vis_interp(&pt, v), req);
                    continue;
                }
                float d = dy[o];
                if (dx != NULL) {
                    float *dc = dx + (n * g->c + c) * hw;
                    if (pt.in_y0 && pt.in_x0)
                        dc[at] += d * pt.wy * pt.wx;
                    if (pt.in_y0 && pt.in_x1)
                        dc[at + 1] += d * pt.wy * (1.0f - pt.wx);
                    if (pt.in_y1 && pt.in_x0)
                        dc[at + g->w] += d * (1.0f - pt.wy) * pt.wx;
                    if (pt.in_y1 && pt.in_x1)
                        dc[at + g->w + 1] += d * (1.0f - pt.wy) * (1.0f - pt.wx);
                }
                mxk_vis_grid_grad(&pt, v, d, &gy, &gx);
            }
            if (dgrid != NULL) {
                float *dg = dgrid + n * 2 * ohw + k;
                mxk_sdk_assign_f32(&dg[ohw], gy * (float)(g->h - 1) / 2.0f, greq);
                mxk_sdk_assign_f32(&dg[0], gx * (float)(g->w - 1) / 2.0f, greq);
            }
        }
}

/** The affine target grid (3, H*W): x = -1 + 2 j/(W-1), y = -1 + 2 i/(H-1), 1. */
static void smp_grid_dst(int64_t th, int64_t tw, float *gd) {
    int64_t m = th * tw;
    for (int64_t k = 0; k < m; k++)
        for (int row = 0; row < 3; row++)
            gd[row * m + k] = mxk_vis_grid_dst(k, th, tw, row);
}

/** src (N, 2, M) (=|+=) theta (N, 2, 3) . grid_dst (3, M), per sample. */
static void smp_affine(const float *theta, const float *gd, int64_t n, int64_t m, float *src,
                       mxk_op_req req) {
    for (int64_t b = 0; b < n * 2; b++)
        for (int64_t k = 0; k < m; k++)
            mxk_sdk_assign_f32(&src[b * m + k],
                               theta[b * 3] * gd[k] + theta[b * 3 + 1] * gd[m + k] +
                                   theta[b * 3 + 2] * gd[2 * m + k],
                               req);
}

/** dtheta (N, 2, 3) (=|+=) dsrc (N, 2, M) . grid_dst^T, per sample. */
static void smp_affine_grad(const float *dsrc, const float *gd, int64_t n, int64_t m, float *dtheta,
                            mxk_op_req req) {
    for (int64_t b = 0; b < n * 2; b++)
        for (int64_t r = 0; r < 3; r++) {
            double s = 0.0;
            for (int64_t k = 0; k < m; k++)
                s += (double)dsrc[b * m + k] * gd[r * m + k];
            mxk_sdk_assign_f32(&dtheta[b * 3 + r], (float)s, req);
        }
}

/** Forward of the three operators. */
static mxk_status smp_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const smp_param *p = param;
    uint32_t nin = p->kind == SMP_GRID ? 1 : 2, nout = p->kind == SMP_ST ? 3 : 2;
    MXK_SDK_CHECK(cbt_check_forward(args, nin, nout, smp_infer_shape, param, 0, err));
    const mxk_shape *ds = &args->in_data[0]->shape;
    const float *x = cb_f32(args->in_data[0]);
    float *y = cb_f32(args->out_data[0]);
    mxk_op_req req = args->req[0];
    if (p->kind == SMP_GRID && p->warp) {
        int64_t h = ds->dims[2], w = ds->dims[3], hw = h * w;
        float sx = (float)((double)(w - 1) / 2.0), sy = (float)((double)(h - 1) / 2.0);
        for (int64_t n = 0; n < ds->dims[0]; n++)
            for (int64_t k = 0; k < hw; k++) {
                const float *f = x + n * 2 * hw + k;
                mxk_sdk_assign_f32(&y[n * 2 * hw + k], (f[0] + (float)(k % w)) / sx - 1.0f, req);
                mxk_sdk_assign_f32(&y[n * 2 * hw + hw + k], (f[hw] + (float)(k / w)) / sy - 1.0f,
                                   req);
            }
        if (args->req[1] != MXK_REQ_NULL) {
            float *gd = cb_f32(args->out_data[1]);
            for (int64_t k = 0; k < hw; k++) {
                gd[k] = (float)(k % w);
                gd[hw + k] = (float)(k / w);
            }
        }
        return MXK_OK;
    }
    if (p->kind == SMP_SAMPLER) {
        const mxk_shape *gs = &args->in_data[1]->shape;
        smp_geom g = {ds->dims[0], ds->dims[1], ds->dims[2], ds->dims[3], gs->dims[2], gs->dims[3]};
        if (req != MXK_REQ_NULL)
            smp_sample(&g, x, cb_f32(args->in_data[1]), y, req, NULL, NULL, NULL, MXK_REQ_NULL);
        if (args->req[1] != MXK_REQ_NULL) /* tmp: cuDNN's workspace upstream, unused here */
            mxk_sdk_fill_f32(cb_f32(args->out_data[1]), 0.0f,
                             (size_t)mxk_sdk_shape_count(&args->out_data[1]->shape), MXK_REQ_WRITE);
        return MXK_OK;
    }
    /* affine grids: GridGenerator writes them to its output, SpatialTransformer samples them */
    int64_t m = p->th * p->tw;
    float *gd = cb_f32(args->out_data[1]);
    smp_grid_dst(p->th, p->tw, gd);
    if (p->kind == SMP_GRID) {
        if (req != MXK_REQ_NULL)
            smp_affine(x, gd, ds->dims[0], m, y, req);
        return MXK_OK;
    }
    float *src = cb_f32(args->out_data[2]);
    smp_affine(cb_f32(args->in_data[1]), gd, ds->dims[0], m, src, MXK_REQ_WRITE);
    smp_geom g = {ds->dims[0], ds->dims[1], ds->dims[2], ds->dims[3], p->th, p->tw};
    if (req != MXK_REQ_NULL)
        smp_sample(&g, x, src, y, req, NULL, NULL, NULL, MXK_REQ_NULL);
    return MXK_OK;
}

/** Checks hidden output `i` of a backward call: present, float32, `count` elements. */
static mxk_status smp_hidden(const mxk_backward_args *args, uint32_t i, uint64_t count,
                             mxk_error_sink *err) {
    const mxk_tensor *t = args->out_data[i];
    MXK_SDK_CHECK(cb_check_tensor(t, "hidden output", err));
    if (mxk_sdk_shape_count(&t->shape) != count)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "hidden output %u: wrong size", (unsigned)i);
    return MXK_OK;
}

/** Backward of the three operators. */
static mxk_status smp_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const smp_param *p = param;
    uint32_t nin = p->kind == SMP_GRID ? 1 : 2, nout = p->kind == SMP_ST ? 3 : 2;
    MXK_SDK_CHECK(cb_check_backward_counts(args, nin, nout, 1, err));
    const mxk_tensor *dyt = args->out_grad[0];
    MXK_SDK_CHECK(cb_check_tensor(dyt, "gradient of 'output'", err));
    const float *dy = cb_f32(dyt);
    const mxk_shape *os = &dyt->shape;
    if (os->ndim != 4)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'output': expected 4 dims");
    if (p->kind == SMP_GRID) {
        mxk_op_req req = args->req[0];
        if (req == MXK_REQ_NULL)
            return MXK_OK;
        const mxk_tensor *dxt = args->in_grad[0];
        int64_t n = os->dims[0], h = os->dims[2], w = os->dims[3], hw = h * w;
        mxk_shape xs = p->warp ? *os : mxk_sdk_shape2(n, 6);
        MXK_SDK_CHECK(cb_check_grad(dxt, req, &xs, "data", err));
        float *dx = cb_f32(dxt);
        if (!p->warp) {
            MXK_SDK_CHECK(smp_hidden(args, 1, (uint64_t)(3 * hw), err));
            smp_affine_grad(dy, cb_f32(args->out_data[1]), n, hw, dx, req);
            return MXK_OK;
        }
        float sx = (float)((double)(w - 1) / 2.0), sy = (float)((double)(h - 1) / 2.0);
        for (int64_t b = 0; b < n; b++)
            for (int64_t k = 0; k < hw; k++) {
                mxk_sdk_assign_f32(&dx[b * 2 * hw + k], dy[b * 2 * hw + k] / sx, req);
                mxk_sdk_assign_f32(&dx[b * 2 * hw + hw + k], dy[b * 2 * hw + hw + k] / sy, req);
            }
        return MXK_OK;
    }
    const mxk_tensor *xt = args->in_data[0];
    MXK_SDK_CHECK(cb_check_tensor(xt, "argument 'data'", err));
    const mxk_shape *ds = &xt->shape;
    smp_geom g = {ds->dims[0], ds->dims[1], ds->dims[2], ds->dims[3], os->dims[2], os->dims[3]};
    if (ds->ndim != 4 || os->dims[0] != g.n || os->dims[1] != g.c)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'output' does not match 'data'");
    mxk_op_req dreq = args->req[0], greq = args->req[1];
    float *dx = NULL;
    if (dreq != MXK_REQ_NULL) {
        MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], dreq, ds, "data", err));
        dx = cb_f32(args->in_grad[0]);
        if (dreq != MXK_REQ_ADD)
            mxk_sdk_fill_f32(dx, 0.0f, (size_t)mxk_sdk_shape_count(ds), MXK_REQ_WRITE);
    }
    uint64_t ng = (uint64_t)(g.n * 2 * g.oh * g.ow);
    if (p->kind == SMP_SAMPLER) {
        const mxk_tensor *gt = args->in_data[1];
        MXK_SDK_CHECK(cb_check_tensor(gt, "argument 'grid'", err));
        if (mxk_sdk_shape_count(&gt->shape) != ng)
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'grid': wrong size");
        float *dg = NULL;
        if (greq != MXK_REQ_NULL) {
            MXK_SDK_CHECK(cb_check_grad(args->in_grad[1], greq, &gt->shape, "grid", err));
            dg = cb_f32(args->in_grad[1]);
        }
        smp_sample(&g, cb_f32(xt), cb_f32(gt), NULL, MXK_REQ_NULL, dy, dx, dg, greq);
        return MXK_OK;
    }
    MXK_SDK_CHECK(smp_hidden(args, 1, (uint64_t)(3 * g.oh * g.ow), err));
    MXK_SDK_CHECK(smp_hidden(args, 2, ng, err));
    float *dsrc = NULL;
    if (greq != MXK_REQ_NULL) {
        mxk_shape ls = mxk_sdk_shape2(g.n, 6);
        MXK_SDK_CHECK(cb_check_grad(args->in_grad[1], greq, &ls, "loc", err));
        const cb_vision_part part = {(void **)&dsrc, ng, sizeof *dsrc};
        MXK_SDK_CHECK(cb_vision_temp(ctx, 1, &part, err));
    }
    smp_sample(&g, cb_f32(xt), cb_f32(args->out_data[2]), NULL, MXK_REQ_NULL, dy, dx, dsrc,
               MXK_REQ_WRITE);
    if (dsrc != NULL)
        smp_affine_grad(dsrc, cb_f32(args->out_data[1]), g.n, g.oh * g.ow, cb_f32(args->in_grad[1]),
                        greq);
    return MXK_OK;
}

/** Registers BilinearSampler, GridGenerator and SpatialTransformer with their CPU kernels. */
mxk_status cb_register_vision_sampler(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    cbt_def_init(&def, "Bilinear sampling of data at the normalised grid coordinates.", bs_attrs,
                 MXK_SDK_COUNTOF(bs_attrs), bs_args, bs_parse);
    def.outputs = bs_outs;
    def.num_visible_outputs = cbt_num_visible_1;
    def.infer_shape = smp_infer_shape;
    def.backward_dependency = bs_backward_dependency;
    MXK_SDK_CHECK(cbt_register(reg, &def, "BilinearSampler", smp_forward, smp_backward, 0, err));

    cbt_def_init(&def, "Sampling grid of an affine transform or an optical flow.", gg_attrs,
                 MXK_SDK_COUNTOF(gg_attrs), gg_args, gg_parse);
    def.outputs = gg_outs;
    def.num_visible_outputs = cbt_num_visible_1;
    def.infer_shape = smp_infer_shape;
    def.backward_dependency = gg_backward_dependency;
    MXK_SDK_CHECK(cbt_register(reg, &def, "GridGenerator", smp_forward, smp_backward, 0, err));

    cbt_def_init(&def, "Affine grid generation and bilinear sampling (spatial transformer).",
                 st_attrs, MXK_SDK_COUNTOF(st_attrs), st_args, st_parse);
    def.outputs = st_outs;
    def.num_visible_outputs = cbt_num_visible_1;
    def.infer_shape = smp_infer_shape;
    def.backward_dependency = st_backward_dependency;
    def.backward_resources = cb_vision_resources_temp; /* the grid gradient, as upstream */
    return cbt_register(reg, &def, "SpatialTransformer", smp_forward, smp_backward, 0, err);
}
