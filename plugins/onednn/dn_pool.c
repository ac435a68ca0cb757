/*
 * onednn plugin: the Pooling kernel on oneDNN's pooling primitive (oneDNN 2.x,
 * dnnl_pooling_v2_forward_desc_init / dnnl_pooling_v2_backward_desc_init).
 *
 * Semantics are the operator's (cpu-blas op_pooling.c; upstream MXNet
 * src/operator/nn/pooling.cc, pool.h); the mapping follows MXNet 1.9.1's
 * src/operator/nn/mkldnn/mkldnn_pooling.cc:
 *   max                          dnnl_pooling_max (padding never wins)
 *   avg, count_include_pad=1     dnnl_pooling_avg_include_padding (divisor: the kernel)
 *   avg, count_include_pad=0     dnnl_pooling_avg_exclude_padding (divisor: the
 *                                window clipped to the data)
 *   pooling_convention=valid     padding_r = pad, o = floor((x + 2p - k)/s) + 1
 *   pooling_convention=full      padding_r = pad + the extra right padding that
 *                                makes o = ceil((x + 2p - k)/s) + 1 windows
 *                                (mkldnn_pooling.cc GetPaddingSizeFull)
 *   global_pool                  kernel = the data's spatial dims, stride 1, pad 0
 * on NCW, NCHW or NCDHW float32 data in plain (row-major) layout.
 * Declined (the next backend runs them): pool_type sum and lp, convention same,
 * channel-last layouts, empty data, a window that lies wholly in the padding
 * (the full convention with a stride longer than the kernel; upstream's max
 * gives the lowest float there), and avg with count_include_pad under the full
 * convention when a window reaches past the symmetric padding (upstream then
 * divides by the window clipped to x + pad, oneDNN by the kernel).
 * Backward: max routes each dy to the position its forward picked, recorded in
 * oneDNN's workspace (kept in the state, dn_util.h; upstream routes to the first
 * position equal to the output, the same position unless a window holds ties);
 * avg spreads dy / divisor. Every request is WRITE or INPLACE (the host emulates
 * ADD); NULL writes nothing.
 */
#include "dn_util.h"

#include <stdlib.h>
#include <string.h>

/** Most spatial axes (NCDHW). */
#define DN_POOL_AXES 3

/**
 * Pooling's attributes as this kernel needs them. `supported` 0: the
 * configuration is declined whatever the shapes. Per-axis arrays have `nd`
 * entries (the kernel's length; 0 with global_pool and no kernel). Owned by the
 * host (parse_param / free_param); read only.
 */
typedef struct dn_pool_param {
    int32_t supported;
    dnnl_alg_kind_t alg;
    int32_t global; /**< global_pool */
    int32_t full;   /**< pooling_convention full */
    int32_t nd;
    int64_t kernel[DN_POOL_AXES], stride[DN_POOL_AXES], pad[DN_POOL_AXES];
} dn_pool_param;

/**
 * The oneDNN geometry of one data shape: source and destination dims (N, C,
 * spatial...), and per spatial axis the kernel, stride, dilation (0: none) and
 * left / right padding.
 */
typedef struct dn_pool_geom {
    int ndims; /**< 3 to 5 */
    dnnl_dims_t src, dst, kernel, stride, dilation, pad_l, pad_r;
} dn_pool_geom;

/**
 * Per-node state: descriptors, the forward (training) primitive descriptor and
 * primitive, the backward primitive (made at the first backward) and max
 * pooling's workspace. Used by one call at a time.
 */
typedef struct dn_pool_state {
    dnnl_memory_desc_t src_md, dst_md;
    dnnl_primitive_desc_t fwd_pd; /**< training: the backward's hint, the workspace's md */
    dnnl_primitive_t fwd, bwd;
    dnnl_primitive_t fwd_inf; /**< max pooling without a backward to follow (no workspace) */
    dn_ws ws;
    dn_pool_geom g;
} dn_pool_state;

/**
 * Reads a per-axis tuple attribute (stride, pad) of nd entries; "()" gives
 * `dflt` on every axis. 0 when the tuple has another length or a value below
 * `min` (the operator refuses those itself; this kernel then declines).
 */
static int pool_tuple(const mxk_attrs *attrs, const char *key, int nd, int64_t dflt, int64_t min,
                      int64_t *out) {
    mxk_shape s = mxk_sdk_shape_unknown();
    if (mxk_sdk_attr_is_set(attrs, key) && mxk_sdk_attr_shape(attrs, key, &s, NULL) != MXK_OK)
        return 0;
    if (s.ndim != 0 && s.ndim != nd)
        return 0;
    for (int i = 0; i < nd; i++) {
        out[i] = s.ndim == 0 ? dflt : s.dims[i];
        if (out[i] < min)
            return 0;
    }
    return 1;
}

/**
 * Parses Pooling's attributes (MXNet 1.9.1 PoolingParam names, defaults filled
 * by the operator's schema) into a dn_pool_param (see the file comment for what
 * is declined). Errors: the mxk_sdk_attr_* readers'; MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status pool_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    enum { MAX, AVG };
    int32_t type = 0, conv = 0, include = 0, layout = 0;
    dn_pool_param p;
    memset(&p, 0, sizeof p);
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "pool_type", "max|avg|sum|lp", &type, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "global_pool", &p.global, err));
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "pooling_convention", "valid|full|same", &conv, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "count_include_pad", &include, err));
    MXK_SDK_CHECK(
        mxk_sdk_attr_enum(attrs, "layout", "None|NCW|NCHW|NCDHW|NWC|NHWC|NDHWC", &layout, err));
    mxk_shape k = mxk_sdk_shape_unknown();
    if (mxk_sdk_attr_is_set(attrs, "kernel"))
        MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "kernel", &k, err));
    p.nd = k.ndim;
    p.full = conv == 1;
    p.alg = type == MAX ? dnnl_pooling_max
            : include   ? dnnl_pooling_avg_include_padding
                        : dnnl_pooling_avg_exclude_padding;
    p.supported = (type == MAX || type == AVG) && conv != 2 && layout <= 3 &&
                  k.ndim <= DN_POOL_AXES && (k.ndim > 0 || p.global);
    for (int i = 0; i < p.nd && p.supported; i++) {
        p.kernel[i] = k.dims[i];
        p.supported = k.dims[i] >= 1;
    }
    if (p.supported && !p.global)
        p.supported = pool_tuple(attrs, "stride", p.nd, 1, 1, p.stride) &&
                      pool_tuple(attrs, "pad", p.nd, 0, 0, p.pad);
    return dn_param_dup(&p, sizeof p, out, err);
}

/**
 * Computes the oneDNN geometry of data shape d (output sizes as pooling.cc's
 * PoolingShape). 0 when the configuration is declined for this shape (rank,
 * empty data, kernel past the padded data, an empty window, include-pad avg
 * reaching past the symmetric padding; see the file comment).
 */
static int pool_geom(const dn_pool_param *p, const mxk_shape *d, dn_pool_geom *g) {
    const int nd = d->ndim - 2;
    if (!p->supported || nd < 1 || nd > DN_POOL_AXES || (!p->global && p->nd != nd) ||
        d->dims[0] < 1 || d->dims[1] < 1)
        return 0;
    memset(g, 0, sizeof *g);
    g->ndims = d->ndim;
    g->src[0] = g->dst[0] = d->dims[0];
    g->src[1] = g->dst[1] = d->dims[1];
    for (int i = 0; i < nd; i++) {
        const int64_t x = d->dims[2 + i];
        const int64_t k = p->global ? x : p->kernel[i], s = p->global ? 1 : p->stride[i],
                      pad = p->global ? 0 : p->pad[i];
        if (x < 1 || k > x + 2 * pad)
            return 0;
        const int64_t span = x + 2 * pad - k;
        const int64_t o = (p->full ? (span + s - 1) / s : span / s) + 1;
        const int64_t extra = (o - 1) * s - span; /* > 0 only under the full convention */
        if ((o - 1) * s - pad >= x)
            return 0; /* the last window lies wholly in the padding */
        if (extra > 0 && p->alg == dnnl_pooling_avg_include_padding)
            return 0;
        g->src[2 + i] = x;
        g->dst[2 + i] = o;
        g->kernel[i] = k;
        g->stride[i] = s;
        g->pad_l[i] = pad;
        g->pad_r[i] = pad + (extra > 0 ? extra : 0);
    }
    return 1;
}

/**
 * Makes the forward primitive descriptor of geometry g for `prop`
 * (dnnl_forward_training: max pooling writes the workspace;
 * dnnl_forward_inference) and the plain source / destination descriptors.
 * Errors: dn_check's (MXK_ERR_UNSUPPORTED when oneDNN has no implementation).
 */
static mxk_status pool_fwd_pd(const dn_pool_param *p, const dn_pool_geom *g, dnnl_prop_kind_t prop,
                              dnnl_memory_desc_t *src_md, dnnl_memory_desc_t *dst_md,
                              dnnl_primitive_desc_t *pd, mxk_error_sink *err) {
    dnnl_pooling_v2_desc_t desc;
    MXK_SDK_CHECK(dn_md_plain(src_md, g->ndims, g->src, err));
    MXK_SDK_CHECK(dn_md_plain(dst_md, g->ndims, g->dst, err));
    DN_CHECK(dnnl_pooling_v2_forward_desc_init(&desc, prop, p->alg, src_md, dst_md, g->stride,
                                               g->kernel, g->dilation, g->pad_l, g->pad_r),
             "pooling forward descriptor", err);
    DN_CHECK(dn_pd_create(pd, &desc, NULL), "pooling forward primitive descriptor", err);
    return MXK_OK;
}

/**
 * Accepts a supported configuration (pool_geom) on float32 data for which
 * oneDNN has a forward implementation.
 */
static int32_t pool_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                             uint32_t num_in) {
    dn_pool_geom g;
    dnnl_memory_desc_t src_md, dst_md;
    dnnl_primitive_desc_t pd = NULL;
    if (num_in != 1 || in_types[0] != MXK_FLOAT32 || !pool_geom(param, &in_shapes[0], &g) ||
        pool_fwd_pd(param, &g, dnnl_forward_training, &src_md, &dst_md, &pd, NULL) != MXK_OK)
        return 0;
    dnnl_primitive_desc_destroy(pd);
    return 1;
}

/** Frees a state of pool_create_state (NULL allowed). */
static void pool_destroy_state(void *state) {
    dn_pool_state *s = state;
    if (s == NULL)
        return;
    dnnl_primitive_destroy(s->bwd);
    dnnl_primitive_destroy(s->fwd);
    dnnl_primitive_destroy(s->fwd_inf);
    dnnl_primitive_desc_destroy(s->fwd_pd);
    dn_ws_free(&s->ws);
    free(s);
}

/**
 * Creates the state: geometry, forward primitive and (max) workspace. Errors:
 * MXK_ERR_UNSUPPORTED "oneDNN pooling: configuration not supported for this
 * shape" (a shape `supports` declines), MXK_ERR_OUT_OF_MEMORY, dn_check's.
 */
static mxk_status pool_create_state(const void *param, int32_t dev_type, int32_t dev_id,
                                    const mxk_shape *in_shapes, const int32_t *in_types,
                                    uint32_t num_in, void **state, mxk_error_sink *err) {
    dn_pool_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN pooling: out of memory");
    mxk_status rc = MXK_OK;
    if (num_in != 1 || !pool_geom(param, &in_shapes[0], &s->g))
        rc = mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                           "oneDNN pooling: configuration not supported for this shape");
    if (rc == MXK_OK)
        rc = pool_fwd_pd(param, &s->g, dnnl_forward_training, &s->src_md, &s->dst_md, &s->fwd_pd,
                         err);
    if (rc == MXK_OK)
        rc = dn_primitive(&s->fwd, s->fwd_pd, "pooling forward primitive", err);
    if (rc == MXK_OK)
        rc = dn_ws_init(&s->ws, s->fwd_pd, err);
    if (rc != MXK_OK) {
        pool_destroy_state(s);
        return rc;
    }
    *state = s;
    return MXK_OK;
}

/**
 * Runs forward primitive `fwd` (arguments SRC, DST and, when w has one,
 * WORKSPACE) of x into y, and keys the workspace by x. Errors: dn_execute's.
 */
static mxk_status pool_ws_forward(const mxk_op_ctx *ctx, dnnl_primitive_t fwd, dn_ws *w,
                                  const dnnl_memory_desc_t *src_md, const mxk_tensor *x,
                                  const dnnl_memory_desc_t *dst_md, void *y, mxk_error_sink *err) {
    dn_arg a[] = {{DNNL_ARG_SRC, src_md, x->data},
                  {DNNL_ARG_DST, dst_md, y},
                  {DNNL_ARG_WORKSPACE, w->md, w->data}};
    MXK_SDK_CHECK(dn_execute(ctx, fwd, w->md != NULL ? 3 : 2, a, err));
    if (w->md != NULL)
        dn_ws_mark(w, x);
    return MXK_OK;
}

/**
 * Before a backward: when w exists and does not hold x's forward, recomputes it
 * (pool_ws_forward into scratch slot 0 as the discarded output). Errors:
 * dn_scratch's, dn_execute's.
 */
static mxk_status pool_ws_ensure(const mxk_op_ctx *ctx, dnnl_primitive_t fwd, dn_ws *w,
                                 const dnnl_memory_desc_t *src_md, const mxk_tensor *x,
                                 const dnnl_memory_desc_t *dst_md, mxk_error_sink *err) {
    if (w->md == NULL || dn_ws_matches(w, x))
        return MXK_OK;
    void *y = dn_scratch(0, dnnl_memory_desc_get_size(dst_md), err);
    if (y == NULL)
        return MXK_ERR_OUT_OF_MEMORY;
    return pool_ws_forward(ctx, fwd, w, src_md, x, dst_md, y, err);
}

/** Checks tensor t (named `what`) against md's element count (dn_check_tensor). */
static mxk_status pool_check(const mxk_tensor *t, const dnnl_memory_desc_t *md, const char *what,
                             mxk_error_sink *err) {
    return dn_check_tensor(t, (int64_t)(dnnl_memory_desc_get_size(md) / sizeof(float)), "pooling",
                           what, err);
}

/**
 * The inference forward primitive of max pooling (made at first use): the
 * training one writes the workspace too, several times slower on plain layouts.
 * Errors: pool_fwd_pd's, dn_primitive's.
 */
static mxk_status pool_make_fwd_inf(const dn_pool_param *p, dn_pool_state *s, mxk_error_sink *err) {
    if (s->fwd_inf != NULL)
        return MXK_OK;
    dnnl_memory_desc_t src_md, dst_md;
    dnnl_primitive_desc_t pd = NULL;
    MXK_SDK_CHECK(pool_fwd_pd(p, &s->g, dnnl_forward_inference, &src_md, &dst_md, &pd, err));
    mxk_status rc = dn_primitive(&s->fwd_inf, pd, "pooling forward primitive", err);
    dnnl_primitive_desc_destroy(pd);
    return rc;
}

/**
 * Forward: y = pool(x) (WRITE or INPLACE; nothing for NULL); max pooling keeps
 * the workspace only when a backward follows (ctx->need_grad). Errors:
 * pool_check's, pool_make_fwd_inf's, dn_execute's.
 */
static mxk_status pool_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_forward_args *args, mxk_error_sink *err) {
    dn_pool_state *s = state;
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *x = args->in_data[0];
    void *y = args->out_data[0]->data;
    MXK_SDK_CHECK(pool_check(x, &s->src_md, "argument 'data'", err));
    MXK_SDK_CHECK(pool_check(args->out_data[0], &s->dst_md, "output 'output'", err));
    if (s->ws.md != NULL && !ctx->need_grad) {
        MXK_SDK_CHECK(pool_make_fwd_inf(param, s, err));
        dn_arg a[] = {{DNNL_ARG_SRC, &s->src_md, x->data}, {DNNL_ARG_DST, &s->dst_md, y}};
        return dn_execute(ctx, s->fwd_inf, 2, a, err);
    }
    return pool_ws_forward(ctx, s->fwd, &s->ws, &s->src_md, x, &s->dst_md, y, err);
}

/**
 * Makes the backward primitive (once), with the forward's descriptor as hint.
 * Errors: dn_check's.
 */
static mxk_status pool_make_bwd(const dn_pool_param *p, dn_pool_state *s, mxk_error_sink *err) {
    if (s->bwd != NULL)
        return MXK_OK;
    dnnl_pooling_v2_desc_t desc;
    dnnl_primitive_desc_t pd = NULL;
    const dn_pool_geom *g = &s->g;
    DN_CHECK(dnnl_pooling_v2_backward_desc_init(&desc, p->alg, &s->src_md, &s->dst_md, g->stride,
                                                g->kernel, g->dilation, g->pad_l, g->pad_r),
             "pooling backward descriptor", err);
    DN_CHECK(dn_pd_create(&pd, &desc, s->fwd_pd), "pooling backward primitive descriptor", err);
    mxk_status rc = dn_primitive(&s->bwd, pd, "pooling backward primitive", err);
    dnnl_primitive_desc_destroy(pd);
    return rc;
}

/**
 * Backward: dx from dy (WRITE or INPLACE; nothing for NULL). Max pooling first
 * recomputes the forward into the workspace unless it holds this data's
 * (dn_util.h). Errors: pool_check's, dn_scratch's, dn_check's, dn_execute's.
 */
static mxk_status pool_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                                const mxk_backward_args *args, mxk_error_sink *err) {
    dn_pool_state *s = state;
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(pool_check(args->out_grad[0], &s->dst_md, "gradient of 'output'", err));
    MXK_SDK_CHECK(pool_check(args->in_grad[0], &s->src_md, "gradient of 'data'", err));
    MXK_SDK_CHECK(pool_make_bwd(param, s, err));
    if (s->ws.md != NULL) {
        MXK_SDK_CHECK(pool_check(args->in_data[0], &s->src_md, "argument 'data'", err));
        MXK_SDK_CHECK(
            pool_ws_ensure(ctx, s->fwd, &s->ws, &s->src_md, args->in_data[0], &s->dst_md, err));
    }
    dn_arg a[] = {{DNNL_ARG_DIFF_DST, &s->dst_md, args->out_grad[0]->data},
                  {DNNL_ARG_DIFF_SRC, &s->src_md, args->in_grad[0]->data},
                  {DNNL_ARG_WORKSPACE, s->ws.md, s->ws.data}};
    return dn_execute(ctx, s->bwd, s->ws.md != NULL ? 3 : 2, a, err);
}

/** Registers the Pooling kernel (onednn.h). Errors: dn_register_kernel's. */
mxk_status dn_register_pool(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "Pooling";
    k.parse_param = pool_parse;
    k.free_param = dn_param_free;
    k.supports = pool_supports;
    k.create_state = pool_create_state;
    k.destroy_state = pool_destroy_state;
    k.forward = pool_forward;
    k.backward = pool_backward;
    /* max and sums of at most a window of float32 terms, in another order */
    k.crosscheck_rtol = 1e-5;
    k.crosscheck_atol = 1e-6;
    return dn_register_kernel(reg, &k, err);
}
