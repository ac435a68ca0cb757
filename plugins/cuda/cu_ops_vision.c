/*
 * cuda plugin: BilinearSampler, GridGenerator, SpatialTransformer, ROIPooling and
 * _contrib_ROIAlign on the GPU (own CUDA kernels, cu_kern_vision.cu), for the
 * operators cpu-blas defines (op_vision_sampler.c, op_vision_roi.c).
 *
 * Semantics are the operators' (upstream MXNet src/operator/bilinear_sampler.cu,
 * grid_generator-inl.h, spatial_transformer.cu, roi_pooling.cu,
 * contrib/roi_align.cu): data float32; every write request is handled (ADD
 * included); hidden outputs (the sampler's zero tmp, the grids, ROIPooling's
 * maxidx) are written whatever their request, as cpu-blas writes them. Rois
 * get a zero gradient.
 *
 * Difference from cpu-blas: a ROIAlign ROI that cannot be pooled (an empty ROI
 * with aligned, more than 2^20 sampling points per bin) is an error there; the
 * GPU reads the ROIs only on the device and cannot report it without
 * synchronising, so such a ROI pools to 0 and gets no gradient.
 */
#include "cu_blas_util.h"
#include "cu_kern_vision.h"
#include "cu_layer.h"

/** Which operator a parameter object belongs to. */
enum cu_vis_kind { CU_VIS_SAMPLER, CU_VIS_GRID, CU_VIS_ST, CU_VIS_ROI_POOL, CU_VIS_ROI_ALIGN };

/** Parsed attributes of the operators of this file (only the kind's fields are set). */
typedef struct cu_vis_param {
    int32_t kind;   /**< enum cu_vis_kind */
    int32_t warp;   /**< GridGenerator: transform_type warp */
    int64_t th, tw; /**< target_shape */
    int64_t ph, pw; /**< pooled_size */
    double scale;   /**< spatial_scale */
    int64_t sample_ratio;
    int32_t position_sensitive, aligned;
} cu_vis_param;

/** Reads the two values of shape attribute `key` into a and b. */
static mxk_status vis_pair(const mxk_attrs *attrs, const char *key, int64_t *a, int64_t *b,
                           mxk_error_sink *err) {
    mxk_shape s;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, key, &s, err));
    if (s.ndim != 2)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "attribute '%s': expected 2 values",
                             key);
    *a = s.dims[0];
    *b = s.dims[1];
    return MXK_OK;
}

/** parse_param of BilinearSampler. */
static mxk_status bs_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_vis_param p = {.kind = CU_VIS_SAMPLER};
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of GridGenerator: transform_type, target_shape. */
static mxk_status gg_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_vis_param p = {.kind = CU_VIS_GRID};
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "transform_type", "affine|warp", &p.warp, err));
    MXK_SDK_CHECK(vis_pair(attrs, "target_shape", &p.th, &p.tw, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of SpatialTransformer: target_shape. */
static mxk_status st_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_vis_param p = {.kind = CU_VIS_ST};
    MXK_SDK_CHECK(vis_pair(attrs, "target_shape", &p.th, &p.tw, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** Reads the attributes both ROI operators have: pooled_size, spatial_scale. */
static mxk_status roi_parse_common(const mxk_attrs *attrs, cu_vis_param *p, mxk_error_sink *err) {
    MXK_SDK_CHECK(vis_pair(attrs, "pooled_size", &p->ph, &p->pw, err));
    if (p->ph <= 0 || p->pw <= 0)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'pooled_size': must be positive");
    return mxk_sdk_attr_float(attrs, "spatial_scale", &p->scale, err);
}

/** parse_param of ROIPooling. */
static mxk_status rp_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_vis_param p = {.kind = CU_VIS_ROI_POOL};
    MXK_SDK_CHECK(roi_parse_common(attrs, &p, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of _contrib_ROIAlign: also sample_ratio, position_sensitive, aligned. */
static mxk_status ra_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_vis_param p = {.kind = CU_VIS_ROI_ALIGN};
    MXK_SDK_CHECK(roi_parse_common(attrs, &p, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "sample_ratio", &p.sample_ratio, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "position_sensitive", &p.position_sensitive, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "aligned", &p.aligned, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** The operator's name, for messages. */
static const char *vis_name(const cu_vis_param *p) {
    static const char *const names[] = {"BilinearSampler", "GridGenerator", "SpatialTransformer",
                                        "ROIPooling", "_contrib_ROIAlign"};
    return names[p->kind];
}

/** Checks that t (named what) is 4-D. */
static mxk_status vis_4d(const cu_vis_param *p, const mxk_tensor *t, const char *what,
                         mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_check_tensor(t, cu_shape_size(&t->shape), vis_name(p), what, err));
    if (t->shape.ndim != 4)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "cuda %s: %s is not 4-D", vis_name(p), what);
    return MXK_OK;
}

/** Zeros the n floats at x on the call's stream. */
static mxk_status vis_zero(const mxk_op_ctx *ctx, float *x, int64_t n, mxk_error_sink *err) {
    return cu_check(cudaMemsetAsync(x, 0, (size_t)n * sizeof(float), cu_stream(ctx)),
                    "vision: zero fill", err);
}

/** An output's elements, or NULL for a NULL request. */
static float *vis_out(const mxk_tensor *const *t, const mxk_op_req *req, uint32_t i) {
    return req[i] == MXK_REQ_NULL ? NULL : cu_f32(t[i]);
}

/** The sampler geometry of data ds and output (oh, ow). */
static cu_smp_geom vis_smp_geom(const mxk_shape *ds, int64_t oh, int64_t ow) {
    return (cu_smp_geom){ds->dims[0], ds->dims[1], ds->dims[2], ds->dims[3], oh, ow};
}

/** Forward of GridGenerator: the grid from an affine matrix or an optical flow. */
static mxk_status gg_forward(const mxk_op_ctx *ctx, const cu_vis_param *p,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const mxk_tensor *xt = args->in_data[0];
    const mxk_shape *ds = &xt->shape;
    float *y = vis_out(args->out_data, args->req, 0);
    if (p->warp) {
        MXK_SDK_CHECK(vis_4d(p, xt, "argument 'data'", err));
        float *gd = vis_out(args->out_data, args->req, 1);
        if (y == NULL && gd == NULL)
            return MXK_OK;
        return cu_check(cu_launch_warp(cu_f32(xt), ds->dims[0], ds->dims[2], ds->dims[3], y, gd,
                                       args->req[0], cu_stream(ctx)),
                        "GridGenerator forward", err);
    }
    const int64_t n = ds->dims[0], m = p->th * p->tw;
    MXK_SDK_CHECK(cu_check_tensor(xt, n * 6, vis_name(p), "argument 'data'", err));
    MXK_SDK_CHECK(cu_check_tensor(args->out_data[1], 3 * m, vis_name(p), "output 'grid_dst'", err));
    float *gd = cu_f32(args->out_data[1]);
    MXK_SDK_CHECK(cu_check(cu_launch_grid_dst(p->th, p->tw, gd, cu_stream(ctx)),
                           "GridGenerator forward", err));
    if (y == NULL)
        return MXK_OK;
    return cu_check(cu_launch_affine(cu_f32(xt), gd, n, m, y, args->req[0], cu_stream(ctx)),
                    "GridGenerator forward", err);
}

/** Forward of BilinearSampler and SpatialTransformer. */
static mxk_status smp_forward(const mxk_op_ctx *ctx, const cu_vis_param *p,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const mxk_tensor *xt = args->in_data[0], *gt = args->in_data[1];
    MXK_SDK_CHECK(vis_4d(p, xt, "argument 'data'", err));
    const mxk_shape *ds = &xt->shape;
    float *y = vis_out(args->out_data, args->req, 0);
    cudaStream_t s = cu_stream(ctx);
    if (p->kind == CU_VIS_SAMPLER) {
        MXK_SDK_CHECK(vis_4d(p, gt, "argument 'grid'", err));
        cu_smp_geom g = vis_smp_geom(ds, gt->shape.dims[2], gt->shape.dims[3]);
        if (gt->shape.dims[0] != g.n || gt->shape.dims[1] != 2)
            return mxk_sdk_error(err, MXK_ERR_SHAPE,
                                 "cuda BilinearSampler: grid is not (N, 2, h, w)");
        if (y != NULL)
            MXK_SDK_CHECK(
                cu_check(cu_launch_smp_forward(g, cu_f32(xt), cu_f32(gt), y, args->req[0], s),
                         "BilinearSampler forward", err));
        if (args->req[1] == MXK_REQ_NULL) /* tmp: cuDNN's workspace upstream, zeros here */
            return MXK_OK;
        return vis_zero(ctx, cu_f32(args->out_data[1]), cu_shape_size(&args->out_data[1]->shape),
                        err);
    }
    const int64_t n = ds->dims[0], m = p->th * p->tw;
    MXK_SDK_CHECK(cu_check_tensor(gt, n * 6, vis_name(p), "argument 'loc'", err));
    MXK_SDK_CHECK(cu_check_tensor(args->out_data[1], 3 * m, vis_name(p), "output 'grid_dst'", err));
    MXK_SDK_CHECK(
        cu_check_tensor(args->out_data[2], n * 2 * m, vis_name(p), "output 'grid_src'", err));
    float *gd = cu_f32(args->out_data[1]), *src = cu_f32(args->out_data[2]);
    MXK_SDK_CHECK(
        cu_check(cu_launch_grid_dst(p->th, p->tw, gd, s), "SpatialTransformer forward", err));
    MXK_SDK_CHECK(cu_check(cu_launch_affine(cu_f32(gt), gd, n, m, src, MXK_REQ_WRITE, s),
                           "SpatialTransformer forward", err));
    if (y == NULL)
        return MXK_OK;
    return cu_check(
        cu_launch_smp_forward(vis_smp_geom(ds, p->th, p->tw), cu_f32(xt), src, y, args->req[0], s),
        "SpatialTransformer forward", err);
}

/** The ROI geometry of data ds and rois rs. */
static cu_roi_geom vis_roi_geom(const cu_vis_param *p, const mxk_shape *ds, const mxk_shape *rs) {
    cu_roi_geom g = {.n = ds->dims[0],
                     .c = ds->dims[1],
                     .h = ds->dims[2],
                     .w = ds->dims[3],
                     .r = rs->dims[0],
                     .oc = ds->dims[1],
                     .ph = p->ph,
                     .pw = p->pw,
                     .scale = (float)p->scale};
    g.aligned = p->aligned;
    g.position_sensitive = p->position_sensitive;
    g.sample_ratio = p->sample_ratio;
    if (p->position_sensitive)
        g.oc = g.c / (p->ph * p->pw);
    return g;
}

/** Checks data (4-D) and rois (R, 5) of a ROI operator. */
static mxk_status roi_check(const cu_vis_param *p, const mxk_tensor *x, const mxk_tensor *rois,
                            mxk_error_sink *err) {
    MXK_SDK_CHECK(vis_4d(p, x, "argument 'data'", err));
    MXK_SDK_CHECK(
        cu_check_tensor(rois, cu_shape_size(&rois->shape), vis_name(p), "argument 'rois'", err));
    if (rois->shape.ndim != 2 || rois->shape.dims[1] != 5)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "cuda %s: rois is not (R, 5)", vis_name(p));
    return MXK_OK;
}

/** Forward of ROIPooling and ROIAlign. */
static mxk_status roi_forward(const mxk_op_ctx *ctx, const cu_vis_param *p,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const mxk_tensor *xt = args->in_data[0], *rt = args->in_data[1];
    MXK_SDK_CHECK(roi_check(p, xt, rt, err));
    cu_roi_geom g = vis_roi_geom(p, &xt->shape, &rt->shape);
    float *y = vis_out(args->out_data, args->req, 0);
    if (p->kind == CU_VIS_ROI_ALIGN) {
        if (y == NULL)
            return MXK_OK;
        return cu_check(
            cu_launch_roi_align(g, cu_f32(xt), cu_f32(rt), y, args->req[0], cu_stream(ctx)),
            "ROIAlign forward", err);
    }
    int32_t *idx = args->req[1] == MXK_REQ_NULL ? NULL : (int32_t *)args->out_data[1]->data;
    if (y == NULL && idx == NULL)
        return MXK_OK;
    return cu_check(
        cu_launch_roi_pool(g, cu_f32(xt), cu_f32(rt), y, args->req[0], idx, cu_stream(ctx)),
        "ROIPooling forward", err);
}

/** Forward of every operator of this file. */
static mxk_status vis_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_vis_param *p = param;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    if (p->kind == CU_VIS_GRID)
        return gg_forward(ctx, p, args, err);
    if (p->kind == CU_VIS_ROI_POOL || p->kind == CU_VIS_ROI_ALIGN)
        return roi_forward(ctx, p, args, err);
    return smp_forward(ctx, p, args, err);
}

/** Backward of GridGenerator: the affine matrix's or the flow's gradient. */
static mxk_status gg_backward(const mxk_op_ctx *ctx, const cu_vis_param *p,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dyt = args->out_grad[0], *dxt = args->in_grad[0];
    MXK_SDK_CHECK(vis_4d(p, dyt, "gradient of 'output'", err));
    const int64_t n = dyt->shape.dims[0], h = dyt->shape.dims[2], w = dyt->shape.dims[3];
    MXK_SDK_CHECK(cu_check_tensor(dxt, p->warp ? n * 2 * h * w : n * 6, vis_name(p),
                                  "gradient of 'data'", err));
    if (p->warp)
        return cu_check(cu_launch_warp_grad(cu_f32(dyt), n, h, w, cu_f32(dxt), req, cu_stream(ctx)),
                        "GridGenerator backward", err);
    MXK_SDK_CHECK(
        cu_check_tensor(args->out_data[1], 3 * h * w, vis_name(p), "output 'grid_dst'", err));
    return cu_check(cu_launch_affine_grad(cu_f32(dyt), cu_f32(args->out_data[1]), n, h * w,
                                          cu_f32(dxt), req, cu_stream(ctx)),
                    "GridGenerator backward", err);
}

/**
 * The data gradient of a scattering backward: checked against `count` elements
 * and zeroed unless its request adds; NULL for a NULL request.
 */
static mxk_status vis_scatter_grad(const mxk_op_ctx *ctx, const cu_vis_param *p,
                                   const mxk_tensor *g, mxk_op_req req, int64_t count, float **out,
                                   mxk_error_sink *err) {
    *out = NULL;
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cu_check_tensor(g, count, vis_name(p), "gradient of 'data'", err));
    *out = cu_f32(g);
    return req == MXK_REQ_ADD ? MXK_OK : vis_zero(ctx, *out, count, err);
}

/** Backward of BilinearSampler and SpatialTransformer. */
static mxk_status smp_backward(const mxk_op_ctx *ctx, const cu_vis_param *p,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const mxk_tensor *xt = args->in_data[0], *dyt = args->out_grad[0];
    MXK_SDK_CHECK(vis_4d(p, xt, "argument 'data'", err));
    MXK_SDK_CHECK(vis_4d(p, dyt, "gradient of 'output'", err));
    cu_smp_geom g = vis_smp_geom(&xt->shape, dyt->shape.dims[2], dyt->shape.dims[3]);
    if (dyt->shape.dims[0] != g.n || dyt->shape.dims[1] != g.c)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "cuda %s: gradient of 'output' does not match "
                             "'data'",
                             vis_name(p));
    const mxk_op_req greq = args->req[1];
    const int64_t ng = g.n * 2 * g.oh * g.ow;
    float *dx, *dg = NULL;
    MXK_SDK_CHECK(vis_scatter_grad(ctx, p, args->in_grad[0], args->req[0],
                                   cu_shape_size(&xt->shape), &dx, err));
    const float *grid;
    if (p->kind == CU_VIS_SAMPLER) {
        MXK_SDK_CHECK(cu_check_tensor(args->in_data[1], ng, vis_name(p), "argument 'grid'", err));
        grid = cu_f32(args->in_data[1]);
        if (greq != MXK_REQ_NULL) {
            MXK_SDK_CHECK(
                cu_check_tensor(args->in_grad[1], ng, vis_name(p), "gradient of 'grid'", err));
            dg = cu_f32(args->in_grad[1]);
        }
    } else {
        MXK_SDK_CHECK(cu_check_tensor(args->out_data[1], 3 * g.oh * g.ow, vis_name(p),
                                      "output 'grid_dst'", err));
        MXK_SDK_CHECK(
            cu_check_tensor(args->out_data[2], ng, vis_name(p), "output 'grid_src'", err));
        grid = cu_f32(args->out_data[2]);
        if (greq != MXK_REQ_NULL) {
            MXK_SDK_CHECK(
                cu_check_tensor(args->in_grad[1], g.n * 6, vis_name(p), "gradient of 'loc'", err));
            void *tmp;
            MXK_SDK_CHECK(mxk_sdk_host()->temp_space(
                ctx, (uint64_t)(ng > 0 ? ng : 1) * sizeof(float), &tmp, err));
            dg = tmp;
        }
    }
    if (dx == NULL && dg == NULL)
        return MXK_OK;
    const int32_t sreq = p->kind == CU_VIS_SAMPLER ? greq : MXK_REQ_WRITE;
    MXK_SDK_CHECK(cu_check(
        cu_launch_smp_backward(g, cu_f32(xt), grid, cu_f32(dyt), dx, dg, sreq, cu_stream(ctx)),
        "sampler backward", err));
    if (p->kind == CU_VIS_SAMPLER || dg == NULL)
        return MXK_OK;
    return cu_check(cu_launch_affine_grad(dg, cu_f32(args->out_data[1]), g.n, g.oh * g.ow,
                                          cu_f32(args->in_grad[1]), greq, cu_stream(ctx)),
                    "SpatialTransformer backward", err);
}

/** Backward of ROIPooling and ROIAlign: the data gradient; rois get zeros. */
static mxk_status roi_backward(const mxk_op_ctx *ctx, const cu_vis_param *p,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_zero_grad(ctx, args->in_grad[1], args->req[1], err));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *dxt = args->in_grad[0], *rt = args->in_data[1], *dyt = args->out_grad[0];
    MXK_SDK_CHECK(roi_check(p, dxt, rt, err));
    cu_roi_geom g = vis_roi_geom(p, &dxt->shape, &rt->shape);
    const int64_t nx = cu_shape_size(&dxt->shape), ny = g.r * g.oc * g.ph * g.pw;
    MXK_SDK_CHECK(cu_check_tensor(dyt, ny, vis_name(p), "gradient of 'output'", err));
    float *dx;
    MXK_SDK_CHECK(vis_scatter_grad(ctx, p, dxt, args->req[0], nx, &dx, err));
    if (p->kind == CU_VIS_ROI_ALIGN)
        return cu_check(cu_launch_roi_align_grad(g, cu_f32(rt), cu_f32(dyt), dx, cu_stream(ctx)),
                        "ROIAlign backward", err);
    const mxk_tensor *it = args->out_data[1];
    MXK_SDK_CHECK(cu_check_tensor(it, ny, vis_name(p), "output 'maxidx'", err));
    if (it->dtype != MXK_INT32)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "cuda ROIPooling: output 'maxidx' is not int32");
    return cu_check(cu_launch_roi_pool_grad(cu_f32(dyt), it->data, (uint64_t)ny, dx, (uint64_t)nx,
                                            cu_stream(ctx)),
                    "ROIPooling backward", err);
}

/** Backward of every operator of this file. */
static mxk_status vis_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_vis_param *p = param;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    if (p->kind == CU_VIS_GRID)
        return gg_backward(ctx, p, args, err);
    if (p->kind == CU_VIS_ROI_POOL || p->kind == CU_VIS_ROI_ALIGN)
        return roi_backward(ctx, p, args, err);
    return smp_backward(ctx, p, args, err);
}

/** Registers the sampler, grid and ROI kernels. */
mxk_status cu_register_vision(mxk_registrar *reg, mxk_error_sink *err) {
    static const struct {
        const char *op;
        mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *);
    } ops[] = {{"BilinearSampler", bs_parse},
               {"GridGenerator", gg_parse},
               {"SpatialTransformer", st_parse},
               {"ROIPooling", rp_parse},
               {"_contrib_ROIAlign", ra_parse}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        MXK_SDK_CHECK(
            cu_layer_register(reg, ops[i].op, ops[i].parse, NULL, vis_forward, vis_backward, err));
    return MXK_OK;
}
