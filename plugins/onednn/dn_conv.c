/*
 * onednn plugin: Convolution and Deconvolution kernels (1-D, 2-D and 3-D; groups,
 * stride, dilation, padding, bias; Deconvolution's adj and target_shape) on
 * oneDNN's convolution and deconvolution primitives (oneDNN 2.x,
 * dnnl_dilated_{de,}convolution_{forward,backward_data,backward_weights}_desc_init).
 *
 * The mapping follows MXNet 1.9.1's src/operator/nn/mkldnn/mkldnn_convolution.cc
 * and mkldnn_deconvolution.cc. Each primitive descriptor is created with
 * dnnl_format_tag_any for data, weights and output, so oneDNN picks its blocked
 * layouts; every tensor crosses between mxk's plain layout and the primitive's
 * through a "port" (a reorder primitive made once, or nothing when the layouts
 * agree). MXNet's weights are (F, C/G, k...) for Convolution, which is oneDNN's
 * goihw / oihw as is, and (C, F/G, k...) for Deconvolution, which is giohw /
 * iohw: a strided descriptor over oneDNN's logical (G, F/G, C/G, k...) makes the
 * reorder do the transposition. Reordered weights are cached in the state,
 * keyed by (data pointer, mxk_tensor.version), so inference with unchanged
 * weights reorders them once. The bias and its gradient stay plain (F).
 *
 * Primitives, ports and weight caches come from dn_conv_port.c (user-managed
 * scratchpads in scratch slot 3). Scratch slots here: 0 and 1 the forward's data and output
 * (backward: output gradient and data gradient), 1 and 2 the backward-weights pass's data and
 * output gradient, 3 the scratchpads (no tensor lives there across a call).
 *
 * State: one per bound node; the forward primitive is made in create_state, the
 * backward-data and backward-weights ones at the first backward. Backward reads
 * out_grad, data and weight (the operator's backward dependency). Requests:
 * WRITE and INPLACE are written, NULL skipped (the kernels do not take ADD: the
 * host emulates it).
 */
#include "dn_conv.h"
#include "dn_util.h"

#include <stdlib.h>
#include <string.h>

/** The descriptor initialisers of one operator (deconvolution's share convolution's types). */
typedef struct dn_cv_ops {
    const char *name;
    dnnl_alg_kind_t alg;
    dnnl_status_t (*fwd)(dnnl_convolution_desc_t *, dnnl_prop_kind_t, dnnl_alg_kind_t,
                         const dnnl_memory_desc_t *, const dnnl_memory_desc_t *,
                         const dnnl_memory_desc_t *, const dnnl_memory_desc_t *, const dnnl_dims_t,
                         const dnnl_dims_t, const dnnl_dims_t, const dnnl_dims_t);
    dnnl_status_t (*bwd_data)(dnnl_convolution_desc_t *, dnnl_alg_kind_t,
                              const dnnl_memory_desc_t *, const dnnl_memory_desc_t *,
                              const dnnl_memory_desc_t *, const dnnl_dims_t, const dnnl_dims_t,
                              const dnnl_dims_t, const dnnl_dims_t);
    dnnl_status_t (*bwd_weights)(dnnl_convolution_desc_t *, dnnl_alg_kind_t,
                                 const dnnl_memory_desc_t *, const dnnl_memory_desc_t *,
                                 const dnnl_memory_desc_t *, const dnnl_memory_desc_t *,
                                 const dnnl_dims_t, const dnnl_dims_t, const dnnl_dims_t,
                                 const dnnl_dims_t);
} dn_cv_ops;

/** Convolution's and Deconvolution's initialisers, indexed by mxk_conv_param.deconv. */
static const dn_cv_ops cv_ops[2] = {
    {"Convolution", dnnl_convolution_direct, dnnl_dilated_convolution_forward_desc_init,
     dnnl_dilated_convolution_backward_data_desc_init,
     dnnl_dilated_convolution_backward_weights_desc_init},
    {"Deconvolution", dnnl_deconvolution_direct, dnnl_dilated_deconvolution_forward_desc_init,
     dnnl_dilated_deconvolution_backward_data_desc_init,
     dnnl_dilated_deconvolution_backward_weights_desc_init},
};

/**
 * Per-node state (one call at a time: the host serialises calls on a state).
 * Forward: fwd_pd (the backward's hint), fwd, ports src/dst, cached weights.
 * Backward (bwd_ready once made): backward data with its ports and weight cache,
 * backward weights with its ports, dw_buf (oneDNN-layout weight gradient when it
 * needs a reorder or is not wanted) and db_buf (bias gradient when not wanted).
 */
typedef struct dn_cv_state {
    const dn_cv_ops *ops;
    dn_cv_geom g;
    dnnl_memory_desc_t any_src, any_wei, any_dst, bias;
    dnnl_primitive_desc_t fwd_pd;
    dnnl_primitive_t fwd;
    dn_cv_port src, dst;
    dn_cv_wcache wei;
    int bwd_ready;
    dnnl_primitive_t bwd_data, bwd_wei;
    dn_cv_port bd_diff_dst, bd_diff_src, bw_src, bw_diff_dst, bw_diff_wei;
    dn_cv_wcache bd_wei;
    void *dw_buf, *db_buf;
} dn_cv_state;

/**
 * mxk's layout of the weights as a descriptor over oneDNN's logical weight dims
 * (G, O/G, I/G, k...) or (O, I, k...): plain for Convolution (F, C/G, k...);
 * for Deconvolution (C, F/G, k...), i.e. I before O in memory (giohw / iohw).
 */
static mxk_status cv_user_weights(const mxk_conv_param *p, const dn_cv_geom *g,
                                  dnnl_memory_desc_t *md, mxk_error_sink *err) {
    if (!p->deconv)
        return dn_md_plain(md, g->wei_nd, g->wei, err);
    const int lead = g->wei_nd - p->nd - 2; /* 1 with groups */
    dnnl_dims_t strides;
    dnnl_dim_t k = 1;
    for (int i = g->wei_nd - 1; i >= lead + 2; i--) {
        strides[i] = k;
        k *= g->wei[i];
    }
    const dnnl_dim_t og = g->wei[lead], ig = g->wei[lead + 1];
    strides[lead] = k;          /* O/G, inner to I/G */
    strides[lead + 1] = og * k; /* I/G */
    if (lead)
        strides[0] = ig * og * k; /* G */
    DN_CHECK(dnnl_memory_desc_init_by_strides(md, g->wei_nd, g->wei, dnnl_f32, strides),
             "weights descriptor", err);
    return MXK_OK;
}

/** Frees the backward part of a state (idempotent). */
static void cv_free_bwd(dn_cv_state *s) {
    s->bwd_ready = 0;
    dnnl_primitive_destroy(s->bwd_data);
    dnnl_primitive_destroy(s->bwd_wei);
    s->bwd_data = s->bwd_wei = NULL;
    dn_cv_port_free(&s->bd_diff_dst);
    dn_cv_port_free(&s->bd_diff_src);
    dn_cv_port_free(&s->bw_src);
    dn_cv_port_free(&s->bw_diff_dst);
    dn_cv_port_free(&s->bw_diff_wei);
    dn_cv_wcache_free(&s->bd_wei);
    free(s->dw_buf);
    free(s->db_buf);
    s->dw_buf = s->db_buf = NULL;
}

/** Frees a state of cv_create_state (NULL allowed). */
static void cv_destroy_state(void *state) {
    dn_cv_state *s = state;
    if (s == NULL)
        return;
    cv_free_bwd(s);
    dn_cv_port_free(&s->src);
    dn_cv_port_free(&s->dst);
    dn_cv_wcache_free(&s->wei);
    dnnl_primitive_destroy(s->fwd);
    dnnl_primitive_desc_destroy(s->fwd_pd);
    free(s);
}

/**
 * Builds the state's forward part: the format-any descriptors, the forward
 * (training) primitive descriptor and primitive, and the src, weight and dst
 * ports. Errors: dn_check's, MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status cv_make_fwd(const mxk_conv_param *p, dn_cv_state *s, mxk_error_sink *err) {
    const dn_cv_geom *g = &s->g;
    dnnl_memory_desc_t user_src, user_dst, user_wei;
    DN_CHECK(
        dnnl_memory_desc_init_by_tag(&s->any_src, g->src_nd, g->src, dnnl_f32, dnnl_format_tag_any),
        "source descriptor", err);
    DN_CHECK(
        dnnl_memory_desc_init_by_tag(&s->any_dst, g->src_nd, g->dst, dnnl_f32, dnnl_format_tag_any),
        "destination descriptor", err);
    DN_CHECK(
        dnnl_memory_desc_init_by_tag(&s->any_wei, g->wei_nd, g->wei, dnnl_f32, dnnl_format_tag_any),
        "weights descriptor", err);
    MXK_SDK_CHECK(dn_md_plain(&s->bias, 1, &g->dst[1], err));
    MXK_SDK_CHECK(dn_md_plain(&user_src, g->src_nd, g->src, err));
    MXK_SDK_CHECK(dn_md_plain(&user_dst, g->src_nd, g->dst, err));
    MXK_SDK_CHECK(cv_user_weights(p, g, &user_wei, err));
    dnnl_convolution_desc_t d;
    DN_CHECK(s->ops->fwd(&d, dnnl_forward_training, s->ops->alg, &s->any_src, &s->any_wei,
                         p->no_bias ? NULL : &s->bias, &s->any_dst, g->strides, g->dilates, g->pad,
                         g->pad),
             "forward descriptor", err);
    MXK_SDK_CHECK(dn_cv_make(&d, NULL, NULL, NULL, "forward", &s->fwd_pd, &s->fwd, err));
    MXK_SDK_CHECK(dn_cv_port_init(&s->src, &user_src, s->fwd_pd, dnnl_query_src_md, 0, err));
    MXK_SDK_CHECK(dn_cv_port_init(&s->dst, &user_dst, s->fwd_pd, dnnl_query_dst_md, 1, err));
    return dn_cv_wcache_init(&s->wei, &user_wei, s->fwd_pd, dnnl_query_weights_md, err);
}

/**
 * Creates the state for the data shape in_shapes[0] (supports accepted it):
 * the geometry and the forward part. Errors: MXK_ERR_UNSUPPORTED for a
 * configuration dn_cv_geom_of rejects, cv_make_fwd's.
 */
static mxk_status cv_create_state(const void *param, int32_t dev_type, int32_t dev_id,
                                  const mxk_shape *in_shapes, const int32_t *in_types,
                                  uint32_t num_in, void **state, mxk_error_sink *err) {
    const mxk_conv_param *p = param;
    dn_cv_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN convolution: out of memory");
    s->ops = &cv_ops[p->deconv ? 1 : 0];
    mxk_status rc = dn_cv_geom_of(p, &in_shapes[0], &s->g)
                        ? cv_make_fwd(p, s, err)
                        : mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                                        "oneDNN %s: configuration not supported", s->ops->name);
    if (rc != MXK_OK) {
        cv_destroy_state(s);
        return rc;
    }
    *state = s;
    return MXK_OK;
}

/**
 * Builds the backward part at the first backward: backward-data and
 * backward-weights primitives (hinted by the forward's) with their ports, the
 * backward-data weight cache and the gradient buffers. On failure the part is
 * freed again. Errors: dn_check's, MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status cv_make_bwd_parts(const mxk_conv_param *p, dn_cv_state *s, mxk_error_sink *err) {
    const dn_cv_geom *g = &s->g;
    dnnl_convolution_desc_t d;
    dnnl_primitive_desc_t pd;
    /* a forward that reads mxk's plain data (few channels) gets a plain data gradient */
    const dnnl_memory_desc_t *diff_src = s->src.reorder ? &s->any_src : &s->src.user;
    DN_CHECK(s->ops->bwd_data(&d, s->ops->alg, diff_src, &s->any_wei, &s->any_dst, g->strides,
                              g->dilates, g->pad, g->pad),
             "backward data descriptor", err);
    MXK_SDK_CHECK(dn_cv_make(&d, NULL, NULL, s->fwd_pd, "backward data", &pd, &s->bwd_data, err));
    mxk_status rc =
        dn_cv_port_init(&s->bd_diff_dst, &s->dst.user, pd, dnnl_query_diff_dst_md, 0, err);
    if (rc == MXK_OK)
        rc = dn_cv_port_init(&s->bd_diff_src, &s->src.user, pd, dnnl_query_diff_src_md, 1, err);
    if (rc == MXK_OK)
        rc = dn_cv_wcache_init(&s->bd_wei, &s->wei.port.user, pd, dnnl_query_weights_md, err);
    dnnl_primitive_desc_destroy(pd);
    MXK_SDK_CHECK(rc);
    DN_CHECK(s->ops->bwd_weights(&d, s->ops->alg, &s->any_src, &s->any_wei,
                                 p->no_bias ? NULL : &s->bias, &s->any_dst, g->strides, g->dilates,
                                 g->pad, g->pad),
             "backward weights descriptor", err);
    MXK_SDK_CHECK(dn_cv_make(&d, NULL, NULL, s->fwd_pd, "backward weights", &pd, &s->bwd_wei, err));
    rc = dn_cv_port_init(&s->bw_src, &s->src.user, pd, dnnl_query_src_md, 0, err);
    if (rc == MXK_OK)
        rc = dn_cv_port_init(&s->bw_diff_dst, &s->dst.user, pd, dnnl_query_diff_dst_md, 0, err);
    if (rc == MXK_OK)
        rc = dn_cv_port_init(&s->bw_diff_wei, &s->wei.port.user, pd, dnnl_query_diff_weights_md, 1,
                             err);
    dnnl_primitive_desc_destroy(pd);
    MXK_SDK_CHECK(rc);
    s->dw_buf = malloc(dnnl_memory_desc_get_size(&s->bw_diff_wei.prim));
    s->db_buf = malloc(sizeof(float) * (size_t)g->dst[1]);
    if (s->dw_buf == NULL || s->db_buf == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN %s: out of memory", s->ops->name);
    s->bwd_ready = 1;
    return MXK_OK;
}

/** cv_make_bwd_parts, freeing the backward part again when it fails. */
static mxk_status cv_make_bwd(const mxk_conv_param *p, dn_cv_state *s, mxk_error_sink *err) {
    mxk_status rc = cv_make_bwd_parts(p, s, err);
    if (rc != MXK_OK)
        cv_free_bwd(s);
    return rc;
}

/**
 * dn_check_tensor (dn_util.h) against the element count of descriptor `md`:
 * "oneDNN OP: WHAT is missing" or "oneDNN OP: WHAT has K elements, expected N".
 */
static mxk_status cv_check(const dn_cv_state *s, const mxk_tensor *t, const dnnl_memory_desc_t *md,
                           const char *what, mxk_error_sink *err) {
    int64_t n = (int64_t)(dnnl_memory_desc_get_size(md) / sizeof(float));
    return dn_check_tensor(t, n, s->ops->name, what, err);
}

/**
 * y = conv(x, w) (+ bias) for WRITE or INPLACE (nothing for NULL): x reordered
 * into the primitive's layout (scratch slot 0), the cached weights, y written
 * through scratch slot 1 when its layout differs. Errors: cv_check's,
 * dn_execute's, MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status cv_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const mxk_conv_param *p = param;
    dn_cv_state *s = state;
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cv_check(s, args->in_data[0], &s->src.user, "data", err));
    MXK_SDK_CHECK(cv_check(s, args->in_data[1], &s->wei.port.user, "weight", err));
    if (!p->no_bias)
        MXK_SDK_CHECK(cv_check(s, args->in_data[2], &s->bias, "bias", err));
    MXK_SDK_CHECK(cv_check(s, args->out_data[0], &s->dst.user, "output", err));
    void *x, *w, *y = dn_cv_port_out(&s->dst, args->out_data[0]->data, 1, err);
    if (y == NULL)
        return MXK_ERR_OUT_OF_MEMORY;
    MXK_SDK_CHECK(dn_cv_port_in(ctx, &s->src, args->in_data[0]->data, 0, &x, err));
    MXK_SDK_CHECK(dn_cv_wcache_get(ctx, &s->wei, args->in_data[1], &w, err));
    dn_arg a[] = {{DNNL_ARG_SRC, &s->src.prim, x},
                  {DNNL_ARG_WEIGHTS, &s->wei.port.prim, w},
                  {DNNL_ARG_DST, &s->dst.prim, y},
                  {DNNL_ARG_BIAS, &s->bias, p->no_bias ? NULL : args->in_data[2]->data}};
    MXK_SDK_CHECK(dn_execute(ctx, s->fwd, p->no_bias ? 3 : 4, a, err));
    return s->dst.reorder ? dn_cv_port_run(ctx, &s->dst, y, args->out_data[0]->data, err) : MXK_OK;
}

/**
 * dx from dy and w (backward data), into in_grad[0]: dy reordered into scratch
 * slot 0 (its pointer returned in *dy_prim for the weights pass when the
 * layouts agree), dx through slot 1. Errors: cv_check's, dn_execute's.
 */
static mxk_status cv_backward_data(const mxk_op_ctx *ctx, dn_cv_state *s,
                                   const mxk_backward_args *args, void **dy_prim,
                                   mxk_error_sink *err) {
    MXK_SDK_CHECK(cv_check(s, args->in_grad[0], &s->src.user, "data gradient", err));
    void *dy, *w, *dx = dn_cv_port_out(&s->bd_diff_src, args->in_grad[0]->data, 1, err);
    if (dx == NULL)
        return MXK_ERR_OUT_OF_MEMORY;
    MXK_SDK_CHECK(dn_cv_port_in(ctx, &s->bd_diff_dst, args->out_grad[0]->data, 0, &dy, err));
    /* the forward's cached weights serve when both primitives want one layout */
    dn_cv_wcache *wc =
        dnnl_memory_desc_equal(&s->bd_wei.port.prim, &s->wei.port.prim) ? &s->wei : &s->bd_wei;
    MXK_SDK_CHECK(dn_cv_wcache_get(ctx, wc, args->in_data[1], &w, err));
    dn_arg a[] = {{DNNL_ARG_DIFF_DST, &s->bd_diff_dst.prim, dy},
                  {DNNL_ARG_WEIGHTS, &wc->port.prim, w},
                  {DNNL_ARG_DIFF_SRC, &s->bd_diff_src.prim, dx}};
    MXK_SDK_CHECK(dn_execute(ctx, s->bwd_data, 3, a, err));
    *dy_prim = dy;
    if (s->bd_diff_src.reorder)
        return dn_cv_port_run(ctx, &s->bd_diff_src, dx, args->in_grad[0]->data, err);
    return MXK_OK;
}

/**
 * dw and db (backward weights) from x and dy into in_grad[1] and in_grad[2]
 * where wanted (the state's buffers take the unwanted or reordered ones). dy is
 * reused from the data pass (`dy_prim`, NULL if none ran) when the layouts
 * agree, else reordered into scratch slot 2; x into slot 1. Errors: cv_check's,
 * dn_execute's.
 */
static mxk_status cv_backward_weights(const mxk_op_ctx *ctx, const mxk_conv_param *p,
                                      dn_cv_state *s, const mxk_backward_args *args, void *dy_prim,
                                      mxk_error_sink *err) {
    const int want_w = args->req[1] != MXK_REQ_NULL;
    const int want_b = !p->no_bias && args->req[2] != MXK_REQ_NULL;
    if (want_w)
        MXK_SDK_CHECK(cv_check(s, args->in_grad[1], &s->wei.port.user, "weight gradient", err));
    if (want_b)
        MXK_SDK_CHECK(cv_check(s, args->in_grad[2], &s->bias, "bias gradient", err));
    void *x, *dy = dy_prim;
    MXK_SDK_CHECK(dn_cv_port_in(ctx, &s->bw_src, args->in_data[0]->data, 1, &x, err));
    if (dy == NULL || !dnnl_memory_desc_equal(&s->bw_diff_dst.prim, &s->bd_diff_dst.prim))
        MXK_SDK_CHECK(dn_cv_port_in(ctx, &s->bw_diff_dst, args->out_grad[0]->data, 2, &dy, err));
    void *dw = want_w && s->bw_diff_wei.reorder == NULL ? args->in_grad[1]->data : s->dw_buf;
    dn_arg a[] = {{DNNL_ARG_SRC, &s->bw_src.prim, x},
                  {DNNL_ARG_DIFF_DST, &s->bw_diff_dst.prim, dy},
                  {DNNL_ARG_DIFF_WEIGHTS, &s->bw_diff_wei.prim, dw},
                  {DNNL_ARG_DIFF_BIAS, &s->bias, want_b ? args->in_grad[2]->data : s->db_buf}};
    MXK_SDK_CHECK(dn_execute(ctx, s->bwd_wei, p->no_bias ? 3 : 4, a, err));
    if (want_w && s->bw_diff_wei.reorder)
        return dn_cv_port_run(ctx, &s->bw_diff_wei, dw, args->in_grad[1]->data, err);
    return MXK_OK;
}

/**
 * Backward: the gradients of data, weight and bias wanted by their requests
 * (WRITE or INPLACE; NULL skipped); creates the backward primitives at the first
 * call. Errors: MXK_ERR_INVALID_ARGUMENT "oneDNN OP: request ADD not supported"
 * (the host emulates ADD for this kernel), cv_check's, cv_make_bwd's,
 * dn_execute's.
 */
static mxk_status cv_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const mxk_conv_param *p = param;
    dn_cv_state *s = state;
    const uint32_t ni = p->no_bias ? 2u : 3u;
    int need_data = 0, need_wb = 0;
    for (uint32_t i = 0; i < ni; i++) {
        if (args->req[i] == MXK_REQ_ADD)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "oneDNN %s: request ADD not supported", s->ops->name);
        if (args->req[i] != MXK_REQ_NULL)
            *(i == 0 ? &need_data : &need_wb) = 1;
    }
    if (!need_data && !need_wb)
        return MXK_OK;
    MXK_SDK_CHECK(cv_check(s, args->out_grad[0], &s->dst.user, "output gradient", err));
    MXK_SDK_CHECK(cv_check(s, args->in_data[0], &s->src.user, "data", err));
    MXK_SDK_CHECK(cv_check(s, args->in_data[1], &s->wei.port.user, "weight", err));
    if (!s->bwd_ready)
        MXK_SDK_CHECK(cv_make_bwd(p, s, err));
    void *dy_prim = NULL;
    if (need_data)
        MXK_SDK_CHECK(cv_backward_data(ctx, s, args, &dy_prim, err));
    return need_wb ? cv_backward_weights(ctx, p, s, args, dy_prim, err) : MXK_OK;
}

/**
 * Registers the Convolution and Deconvolution kernels. Tolerances against
 * cpu-blas, as measured: outputs and data gradients differ by a few float32 ulps
 * (max abs 2e-6 on the agreement tables); weight and bias gradients sum
 * N * spatial products in float32 and oneDNN's backward-weights kernels
 * accumulate them with errors of about 1e-7 * sum|x dy| (cpu-blas's GEMM about
 * 1e-8; both against a float64 sum), which on ResNet-20's first convolution at
 * batch 128 (100k products per weight) is up to 2e-3 absolute (3e-4 relative).
 */
mxk_status dn_register_conv(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_status (*const parse[2])(const mxk_attrs *, void **,
                                 mxk_error_sink *) = {dn_cv_parse_conv, dn_cv_parse_deconv};
    for (int i = 0; i < 2; i++) {
        mxk_op_kernel_def k;
        mxk_sdk_kernel_def_init(&k);
        k.op_name = cv_ops[i].name;
        k.parse_param = parse[i];
        k.free_param = dn_param_free;
        k.supports = dn_cv_supports;
        k.create_state = cv_create_state;
        k.destroy_state = cv_destroy_state;
        k.forward = cv_forward;
        k.backward = cv_backward;
        k.crosscheck_rtol = 1e-3;
        k.crosscheck_atol = 2e-3;
        MXK_SDK_CHECK(dn_register_kernel(reg, &k, err));
    }
    return MXK_OK;
}
