/*
 * cuda plugin: _contrib_MultiBoxPrior, _contrib_MultiBoxTarget and
 * _contrib_MultiBoxDetection on the GPU (own CUDA kernels,
 * cu_kern_vision_multibox.cu), for the operators cpu-blas defines
 * (op_vision_multibox.c).
 *
 * Semantics are the operators' (upstream MXNet
 * src/operator/contrib/multibox_prior-inl.h, multibox_prior.cu,
 * multibox_target-inl.h, multibox_target.cu, multibox_detection-inl.h,
 * multibox_detection.cu): float32 data; MultiBoxPrior handles every write
 * request; MultiBoxTarget and MultiBoxDetection write their outputs (without
 * MXK_KERNEL_SUPPORTS_ADDTO the executor turns an ADD into a WRITE to a
 * temporary and a sum, as for cpu-blas's kernels), one thread block per batch
 * element with its scratch in the operator's temp space; MultiBoxDetection
 * declines more than 2^31 - 1 anchors.
 *
 * Differences from cpu-blas: MultiBoxTarget's data-dependent errors (a label
 * padding row with class -1 but other values not -1; fewer negative candidates
 * than negative_mining_ratio asks for) are not reported, since the labels are
 * read on the device only: the rows before the first class -1 are the ground
 * truths, and every candidate becomes a negative. The negative mining ranks
 * background probabilities computed with the GPU's expf, so nearly equal
 * probabilities may rank differently from cpu-blas.
 * Neither is differentiable: the backward zeroes the requested gradients (ADD
 * leaves them as they are, as cpu-blas does).
 */
#include <math.h>

#include "cu_blas_util.h"
#include "cu_kern_vision.h"
#include "cu_layer.h"
#include "mxk_vision_attr.h"

/** Parsed attributes of both operators (only the operator's fields are set). */
typedef struct cu_mb_param {
    cu_prior_geom prior; /**< MultiBoxPrior: all but the map size and steps */
    float steps[2];      /**< MultiBoxPrior: (step_y, step_x), <= 0: 1/h, 1/w */
    cu_det_geom det;     /**< MultiBoxDetection: all but the sizes */
    cu_target_geom tg;   /**< MultiBoxTarget: all but the sizes */
} cu_mb_param;

/** parse_param of _contrib_MultiBoxPrior: sizes, ratios, clip, steps, offsets. */
static mxk_status pr_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_mb_param p = {0};
    cu_prior_geom *g = &p.prior;
    float ratios[MXK_VIS_MAX_TUPLE], offsets[2];
    int32_t ns, no;
    MXK_SDK_CHECK(mxk_vis_attr_tuple(attrs, "sizes", g->sizes, CU_PRIOR_MAX, &g->num_sizes, err));
    MXK_SDK_CHECK(mxk_vis_attr_tuple(attrs, "ratios", ratios, CU_PRIOR_MAX, &g->num_ratios, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "clip", &g->clip, err));
    MXK_SDK_CHECK(mxk_vis_attr_tuple(attrs, "steps", p.steps, 2, &ns, err));
    MXK_SDK_CHECK(mxk_vis_attr_tuple(attrs, "offsets", offsets, 2, &no, err));
    if (g->num_sizes == 0 || g->num_ratios == 0 || ns != 2 || no != 2)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "cuda _contrib_MultiBoxPrior: sizes and ratios need a value, "
                             "steps and offsets two");
    for (int32_t i = 0; i < g->num_ratios; i++)
        g->sqrt_ratios[i] = sqrtf(ratios[i]);
    g->oy = offsets[0];
    g->ox = offsets[1];
    return cu_param_dup(&p, sizeof p, out, err);
}

/** Reads real attribute `key` as float. */
static mxk_status mb_float(const mxk_attrs *attrs, const char *key, float *v, mxk_error_sink *err) {
    double d;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, key, &d, err));
    *v = (float)d;
    return MXK_OK;
}

/** parse_param of _contrib_MultiBoxTarget. */
static mxk_status tg_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_mb_param p = {0};
    cu_target_geom *g = &p.tg;
    MXK_SDK_CHECK(mb_float(attrs, "overlap_threshold", &g->overlap_threshold, err));
    MXK_SDK_CHECK(mb_float(attrs, "ignore_label", &g->ignore_label, err));
    MXK_SDK_CHECK(mb_float(attrs, "negative_mining_ratio", &g->neg_ratio, err));
    MXK_SDK_CHECK(mb_float(attrs, "negative_mining_thresh", &g->neg_thresh, err));
    MXK_SDK_CHECK(mxk_vis_attr_variances(attrs, g->var, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** parse_param of _contrib_MultiBoxDetection. */
static mxk_status dt_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_mb_param p = {0};
    cu_det_geom *g = &p.det;
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "clip", &g->clip, err));
    MXK_SDK_CHECK(mb_float(attrs, "threshold", &g->threshold, err));
    MXK_SDK_CHECK(mb_float(attrs, "nms_threshold", &g->nms_threshold, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "force_suppress", &g->force_suppress, err));
    MXK_SDK_CHECK(mxk_vis_attr_variances(attrs, g->var, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "nms_topk", &g->nms_topk, err));
    return cu_param_dup(&p, sizeof p, out, err);
}

/** MultiBoxPrior forward: the anchors of data's h x w map by the request. */
static mxk_status pr_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_mb_param *p = param;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_shape *ds = &args->in_data[0]->shape;
    if (ds->ndim < 4)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "cuda _contrib_MultiBoxPrior: data is not 4-D");
    cu_prior_geom g = p->prior;
    g.h = ds->dims[2];
    g.w = ds->dims[3];
    g.sy = p->steps[0];
    g.sx = p->steps[1];
    if (g.sy <= 0.0f || g.sx <= 0.0f) {
        g.sy = 1.0f / (float)g.h;
        g.sx = 1.0f / (float)g.w;
    }
    const int64_t n = g.h * g.w * (g.num_sizes + g.num_ratios - 1) * 4;
    MXK_SDK_CHECK(
        cu_check_tensor(args->out_data[0], n, "_contrib_MultiBoxPrior", "output 'output'", err));
    return cu_check(cu_launch_prior(&g, cu_f32(args->out_data[0]), args->req[0], cu_stream(ctx)),
                    "MultiBoxPrior forward", err);
}

/** MultiBoxDetection forward: the output written (the request is WRITE or INPLACE). */
static mxk_status dt_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_mb_param *p = param;
    MXK_SDK_CHECK(cu_enter(ctx, err));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    static const char op[] = "_contrib_MultiBoxDetection";
    const mxk_tensor *ct = args->in_data[0];
    if (ct->shape.ndim != 3)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "cuda %s: cls_prob is not 3-D", op);
    cu_det_geom g = p->det;
    g.nb = ct->shape.dims[0];
    g.nc = ct->shape.dims[1];
    g.na = ct->shape.dims[2];
    MXK_SDK_CHECK(cu_check_tensor(ct, g.nb * g.nc * g.na, op, "argument 'cls_prob'", err));
    MXK_SDK_CHECK(
        cu_check_tensor(args->in_data[1], g.nb * g.na * 4, op, "argument 'loc_pred'", err));
    MXK_SDK_CHECK(cu_check_tensor(args->in_data[2], g.na * 4, op, "argument 'anchor'", err));
    MXK_SDK_CHECK(cu_check_tensor(args->out_data[0], g.nb * g.na * 6, op, "output 'output'", err));
    const uint64_t rows = (uint64_t)(g.nb * g.na), tmp_bytes = rows * 6 * sizeof(float);
    void *scratch;
    MXK_SDK_CHECK(
        mxk_sdk_host()->temp_space(ctx, tmp_bytes + rows * sizeof(int32_t) + 16, &scratch, err));
    float *tmp = scratch;
    int32_t *order = (int32_t *)((char *)scratch + tmp_bytes);
    return cu_check(cu_launch_detection(g, cu_f32(ct), cu_f32(args->in_data[1]),
                                        cu_f32(args->in_data[2]), cu_f32(args->out_data[0]), tmp,
                                        order, cu_stream(ctx)),
                    "MultiBoxDetection forward", err);
}

/** MultiBoxTarget forward: the three outputs written (unrequested ones into the scratch). */
static mxk_status tg_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_mb_param *p = param;
    static const char op[] = "_contrib_MultiBoxTarget";
    MXK_SDK_CHECK(cu_enter(ctx, err));
    const mxk_tensor *at = args->in_data[0], *lt = args->in_data[1], *ct = args->in_data[2];
    if (at->shape.ndim != 3 || lt->shape.ndim != 3 || ct->shape.ndim != 3)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "cuda %s: anchor, label, cls_pred not 3-D", op);
    cu_target_geom g = p->tg;
    g.na = at->shape.dims[1];
    g.nb = lt->shape.dims[0];
    g.nl = lt->shape.dims[1];
    g.lw = lt->shape.dims[2];
    g.nc = ct->shape.dims[1];
    MXK_SDK_CHECK(cu_check_tensor(at, g.na * 4, op, "argument 'anchor'", err));
    MXK_SDK_CHECK(cu_check_tensor(lt, g.nb * g.nl * g.lw, op, "argument 'label'", err));
    MXK_SDK_CHECK(cu_check_tensor(ct, g.nb * g.nc * g.na, op, "argument 'cls_pred'", err));
    static const char *const names[3] = {"output 'loc_target'", "output 'loc_mask'",
                                         "output 'cls_target'"};
    const int64_t count[3] = {g.nb * g.na * 4, g.nb * g.na * 4, g.nb * g.na};
    uint64_t bytes = cu_target_scratch_bytes(&g), at_sink[3];
    for (int i = 0; i < 3; i++) {
        at_sink[i] = bytes;
        if (args->req[i] == MXK_REQ_NULL)
            bytes += (uint64_t)count[i] * sizeof(float);
        else
            MXK_SDK_CHECK(cu_check_tensor(args->out_data[i], count[i], op, names[i], err));
    }
    void *scratch;
    MXK_SDK_CHECK(mxk_sdk_host()->temp_space(ctx, bytes + 16, &scratch, err));
    float *dst[3];
    for (int i = 0; i < 3; i++)
        dst[i] = args->req[i] == MXK_REQ_NULL ? (float *)((char *)scratch + at_sink[i])
                                              : cu_f32(args->out_data[i]);
    return cu_check(cu_launch_target(&g, cu_f32(at), cu_f32(lt), cu_f32(ct), dst[0], dst[1], dst[2],
                                     scratch, cu_stream(ctx)),
                    "MultiBoxTarget forward", err);
}

/** Zero gradients of every input, by request. */
static mxk_status mb_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_enter(ctx, err));
    for (uint32_t i = 0; i < args->num_in; i++)
        MXK_SDK_CHECK(cu_zero_grad(ctx, args->in_grad[i], args->req[i], err));
    return MXK_OK;
}

/** Accepts float32 inputs of at most 2^31 - 1 anchors (the sort's int32 positions). */
static int32_t dt_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                           uint32_t num_in) {
    return num_in == 3 && cu_all_f32(in_types, num_in) && in_shapes[0].ndim == 3 &&
           in_shapes[0].dims[2] <= INT32_MAX;
}

/** Registers the MultiBox kernels. */
mxk_status cu_register_vision_multibox(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_layer_register(reg, "_contrib_MultiBoxPrior", pr_parse, NULL, pr_forward,
                                    mb_backward, err));
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "_contrib_MultiBoxDetection";
    k.parse_param = dt_parse;
    k.free_param = cu_param_free;
    k.supports = dt_supports;
    k.forward = dt_forward;
    k.backward = mb_backward;
    MXK_SDK_CHECK(cu_register_kernel(reg, &k, err));
    k.op_name = "_contrib_MultiBoxTarget";
    k.parse_param = tg_parse;
    k.supports = cu_supports_float32;
    k.forward = tg_forward;
    return cu_register_kernel(reg, &k, err);
}
