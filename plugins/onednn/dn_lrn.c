/*
 * onednn plugin: the LRN kernel on oneDNN's LRN primitive (oneDNN 2.x,
 * dnnl_lrn_forward_desc_init / dnnl_lrn_backward_desc_init,
 * dnnl_lrn_across_channels).
 *
 * Semantics are the operator's (cpu-blas op_lrn.c; upstream MXNet
 * src/operator/nn/lrn-inl.h, lrn.cc); the mapping follows MXNet 1.9.1's
 * src/operator/nn/mkldnn/mkldnn_lrn-inl.h. Data (N, C, H, W) float32, plain
 * layout; n = nsize, window [c - h, c + h] with h = (n-1)/2, clipped to the
 * channels:
 *   norm = knorm + (alpha / n) sum_window x^2,   y = x norm^-beta.
 * oneDNN's across-channel LRN divides alpha by the local size itself, so MXNet's
 * alpha is passed unchanged (as mkldnn_lrn-inl.h does).
 * Layout: oneDNN 2.x's LRN backward on plain NCHW is its reference
 * implementation (130 ms where cpu-blas takes 47 ms for forward and backward of
 * (32,96,27,27)); its JIT forms (nsize 5) want channels blocked by 16 or 8
 * (aBcd16b, aBcd8b: 2.5 ms). The primitives run in the first of aBcd16b, aBcd8b,
 * abcd for which neither the forward nor the backward is the reference one,
 * with reorders from and to the plain tensors (as MXNet's MKLDNN path keeps its
 * blocked layouts); where every layout is reference-only (nsize 3, say) the
 * kernel declines.
 * The hidden output tmp_norm (norm above) is computed here by a plain loop when
 * it is requested (oneDNN keeps its own form of it in the workspace).
 * Backward: oneDNN's, from the data (blocked, kept from the forward), dy and the
 * forward's workspace (kept in the state, dn_util.h; recomputed when it does not
 * hold this data's). Every request is WRITE or INPLACE (the host emulates ADD);
 * NULL writes nothing.
 * Declined: data other than non-empty 4-D float32; configurations with only
 * reference implementations.
 */
#include "dn_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/** LRN's attributes (MXNet 1.9.1 LRNParam). Owned by the host (parse_param / free_param). */
typedef struct dn_lrn_param {
    double alpha, beta, knorm;
    int64_t nsize;
} dn_lrn_param;

/**
 * Per-node state: the plain data descriptor and the one the primitives run in
 * (blk_md: blocked over channels, or plain), the forward (training) and backward
 * primitive descriptors and primitives, the reorders between the layouts, the
 * blocked data kept for the backward, and the workspace. Used by one call at a
 * time.
 */
typedef struct dn_lrn_state {
    dnnl_memory_desc_t md, blk_md;
    int blocked;        /**< blk_md is not md: data is reordered */
    int64_t N, C, S, n; /**< batch, channels, H*W, elements */
    dnnl_primitive_desc_t fwd_pd, bwd_pd;
    dnnl_primitive_t fwd, bwd, to_blk, from_blk; /**< reorders: NULL unless blocked */
    void *xb;                                    /**< the data in blk_md (blocked only) */
    dn_ws ws;
} dn_lrn_state;

/** Parses LRN's attributes. Errors: the mxk_sdk_attr_* readers'; MXK_ERR_OUT_OF_MEMORY. */
static mxk_status lrn_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    dn_lrn_param p;
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "alpha", &p.alpha, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "beta", &p.beta, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "knorm", &p.knorm, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "nsize", &p.nsize, err));
    return dn_param_dup(&p, sizeof p, out, err);
}

/**
 * Picks the layout (aBcd16b, aBcd8b, abcd: the first whose forward and backward
 * are not reference implementations) for data dims `dims`: its descriptor and
 * the forward (training) and backward primitive descriptors (the caller owns
 * them). MXK_ERR_UNSUPPORTED "oneDNN LRN: only reference implementations for
 * this configuration" when none qualifies; dn_check's.
 */
static mxk_status lrn_pick(const dn_lrn_param *p, const dnnl_dim_t *dims, dnnl_memory_desc_t *md,
                           dnnl_primitive_desc_t *fwd_pd, dnnl_primitive_desc_t *bwd_pd,
                           mxk_error_sink *err) {
    static const dnnl_format_tag_t tags[] = {dnnl_aBcd16b, dnnl_aBcd8b, dnnl_abcd};
    const float a = (float)p->alpha, b = (float)p->beta, k = (float)p->knorm;
    for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++) {
        dnnl_lrn_desc_t fd, bd;
        DN_CHECK(dnnl_memory_desc_init_by_tag(md, 4, dims, dnnl_f32, tags[i]),
                 "LRN memory descriptor", err);
        DN_CHECK(dnnl_lrn_forward_desc_init(&fd, dnnl_forward_training, dnnl_lrn_across_channels,
                                            md, p->nsize, a, b, k),
                 "LRN forward descriptor", err);
        DN_CHECK(
            dnnl_lrn_backward_desc_init(&bd, dnnl_lrn_across_channels, md, md, p->nsize, a, b, k),
            "LRN backward descriptor", err);
        *fwd_pd = *bwd_pd = NULL;
        if (dn_pd_create(fwd_pd, &fd, NULL) == dnnl_success &&
            dn_pd_create(bwd_pd, &bd, *fwd_pd) == dnnl_success && !dn_pd_is_ref(*fwd_pd) &&
            !dn_pd_is_ref(*bwd_pd))
            return MXK_OK;
        dnnl_primitive_desc_destroy(*bwd_pd);
        dnnl_primitive_desc_destroy(*fwd_pd);
    }
    *fwd_pd = *bwd_pd = NULL;
    return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED,
                         "oneDNN LRN: only reference implementations for this configuration");
}

/** Accepts non-empty 4-D float32 data for which lrn_pick finds a layout. */
static int32_t lrn_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                            uint32_t num_in) {
    const mxk_shape *d = &in_shapes[0];
    dnnl_memory_desc_t md;
    dnnl_primitive_desc_t fwd_pd = NULL, bwd_pd = NULL;
    if (num_in != 1 || in_types[0] != MXK_FLOAT32 || d->ndim != 4 || dn_shape_size(d) < 1 ||
        lrn_pick(param, d->dims, &md, &fwd_pd, &bwd_pd, NULL) != MXK_OK)
        return 0;
    dnnl_primitive_desc_destroy(bwd_pd);
    dnnl_primitive_desc_destroy(fwd_pd);
    return 1;
}

/** Frees a state of lrn_create_state (NULL allowed). */
static void lrn_destroy_state(void *state) {
    dn_lrn_state *s = state;
    if (s == NULL)
        return;
    dnnl_primitive_destroy(s->from_blk);
    dnnl_primitive_destroy(s->to_blk);
    dnnl_primitive_destroy(s->bwd);
    dnnl_primitive_destroy(s->fwd);
    dnnl_primitive_desc_destroy(s->bwd_pd);
    dnnl_primitive_desc_destroy(s->fwd_pd);
    free(s->xb);
    dn_ws_free(&s->ws);
    free(s);
}

/**
 * A reorder primitive from `from` to `to` (on the plugin's engine). Errors:
 * dn_check's.
 */
static mxk_status lrn_reorder(dnnl_primitive_t *prim, const dnnl_memory_desc_t *from,
                              const dnnl_memory_desc_t *to, mxk_error_sink *err) {
    dnnl_primitive_desc_t pd = NULL;
    DN_CHECK(dn_reorder_pd_create(&pd, from, to), "LRN reorder primitive descriptor", err);
    mxk_status rc = dn_primitive(prim, pd, "LRN reorder primitive", err);
    dnnl_primitive_desc_destroy(pd);
    return rc;
}

/**
 * Creates the state: layout, primitives, reorders, the blocked data buffer and
 * the workspace. Errors: MXK_ERR_OUT_OF_MEMORY, dn_md_of_shape's, lrn_pick's,
 * dn_check's.
 */
static mxk_status lrn_create_state(const void *param, int32_t dev_type, int32_t dev_id,
                                   const mxk_shape *in_shapes, const int32_t *in_types,
                                   uint32_t num_in, void **state, mxk_error_sink *err) {
    dn_lrn_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN LRN: out of memory");
    const mxk_shape *d = &in_shapes[0];
    s->N = d->dims[0], s->C = d->dims[1], s->S = d->dims[2] * d->dims[3];
    s->n = dn_shape_size(d);
    mxk_status rc = dn_md_of_shape(&s->md, d, err);
    if (rc == MXK_OK)
        rc = lrn_pick(param, d->dims, &s->blk_md, &s->fwd_pd, &s->bwd_pd, err);
    if (rc == MXK_OK)
        rc = dn_primitive(&s->fwd, s->fwd_pd, "LRN forward primitive", err);
    if (rc == MXK_OK)
        rc = dn_primitive(&s->bwd, s->bwd_pd, "LRN backward primitive", err);
    if (rc == MXK_OK)
        rc = dn_ws_init(&s->ws, s->fwd_pd, err);
    s->blocked = rc == MXK_OK && !dnnl_memory_desc_equal(&s->md, &s->blk_md);
    if (s->blocked) {
        rc = lrn_reorder(&s->to_blk, &s->md, &s->blk_md, err);
        if (rc == MXK_OK)
            rc = lrn_reorder(&s->from_blk, &s->blk_md, &s->md, err);
        if (rc == MXK_OK && posix_memalign(&s->xb, 64, dnnl_memory_desc_get_size(&s->blk_md)))
            rc = mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN LRN: out of memory");
    }
    if (rc != MXK_OK) {
        lrn_destroy_state(s);
        return rc;
    }
    *state = s;
    return MXK_OK;
}

/**
 * tmp_norm = knorm + (alpha/n) sum_window x^2 of every (image, channel) plane,
 * in the order and float32 arithmetic of cpu-blas op_lrn.c.
 */
static void lrn_norm(const dn_lrn_param *p, const dn_lrn_state *s, const float *x, float *tn) {
    const int64_t half = (p->nsize - 1) / 2, S = s->S, C = s->C;
    const float a = (float)(p->alpha / (double)p->nsize), k = (float)p->knorm;
    for (int64_t n = 0; n < s->N; n++)
        for (int64_t c = 0; c < C; c++) {
            float *acc = tn + (n * C + c) * S;
            const int64_t c0 = c - half < 0 ? 0 : c - half, c1 = c + half >= C ? C - 1 : c + half;
            memset(acc, 0, (size_t)S * sizeof(float));
            for (int64_t cc = c0; cc <= c1; cc++) {
                const float *xp = x + (n * C + cc) * S;
                for (int64_t i = 0; i < S; i++)
                    acc[i] += xp[i] * xp[i];
            }
            for (int64_t i = 0; i < S; i++)
                acc[i] = k + a * acc[i];
        }
}

/** Runs reorder `prim` (from -> to). Errors: dn_execute's. */
static mxk_status lrn_run_reorder(const mxk_op_ctx *ctx, dnnl_primitive_t prim,
                                  const dnnl_memory_desc_t *from_md, void *from,
                                  const dnnl_memory_desc_t *to_md, void *to, mxk_error_sink *err) {
    dn_arg a[] = {{DNNL_ARG_FROM, from_md, from}, {DNNL_ARG_TO, to_md, to}};
    return dn_execute(ctx, prim, 2, a, err);
}

/**
 * The forward of x into y (plain), through the blocked layout when the state
 * has one (x kept there for the backward); the workspace is then keyed by x.
 * Errors: dn_scratch's, dn_execute's.
 */
static mxk_status lrn_run_forward(const mxk_op_ctx *ctx, dn_lrn_state *s, const mxk_tensor *x,
                                  void *y, mxk_error_sink *err) {
    void *src = x->data, *dst = y;
    if (s->blocked) {
        MXK_SDK_CHECK(lrn_run_reorder(ctx, s->to_blk, &s->md, x->data, &s->blk_md, s->xb, err));
        src = s->xb;
        if ((dst = dn_scratch(0, dnnl_memory_desc_get_size(&s->blk_md), err)) == NULL)
            return MXK_ERR_OUT_OF_MEMORY;
    }
    dn_arg a[] = {{DNNL_ARG_SRC, &s->blk_md, src},
                  {DNNL_ARG_DST, &s->blk_md, dst},
                  {DNNL_ARG_WORKSPACE, s->ws.md, s->ws.data}};
    MXK_SDK_CHECK(dn_execute(ctx, s->fwd, s->ws.md != NULL ? 3 : 2, a, err));
    if (s->ws.md != NULL)
        dn_ws_mark(&s->ws, x);
    return s->blocked ? lrn_run_reorder(ctx, s->from_blk, &s->blk_md, dst, &s->md, y, err) : MXK_OK;
}

/**
 * Forward: y by oneDNN, tmp_norm by lrn_norm, each by its request. Errors:
 * dn_check_tensor's, dn_scratch's, dn_execute's.
 */
static mxk_status lrn_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    dn_lrn_state *s = state;
    const mxk_op_req *req = args->req;
    if (req[0] == MXK_REQ_NULL && req[1] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *x = args->in_data[0];
    MXK_SDK_CHECK(dn_check_tensor(x, s->n, "LRN", "argument 'data'", err));
    for (int i = 0; i < 2; i++)
        if (req[i] != MXK_REQ_NULL)
            MXK_SDK_CHECK(dn_check_tensor(args->out_data[i], s->n, "LRN",
                                          i == 0 ? "output 'output'" : "output 'tmp_norm'", err));
    if (req[0] != MXK_REQ_NULL)
        MXK_SDK_CHECK(lrn_run_forward(ctx, s, x, args->out_data[0]->data, err));
    if (req[1] != MXK_REQ_NULL)
        lrn_norm(param, s, x->data, args->out_data[1]->data);
    return MXK_OK;
}

/**
 * Backward: dx from x, dy and the workspace (recomputed first unless it holds
 * this x's), through the blocked layout when the state has one (WRITE or
 * INPLACE; nothing for NULL). Errors: dn_check_tensor's, dn_scratch's,
 * dn_execute's.
 */
static mxk_status lrn_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    dn_lrn_state *s = state;
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    const mxk_tensor *x = args->in_data[0];
    MXK_SDK_CHECK(dn_check_tensor(x, s->n, "LRN", "argument 'data'", err));
    MXK_SDK_CHECK(dn_check_tensor(args->out_grad[0], s->n, "LRN", "gradient of 'output'", err));
    MXK_SDK_CHECK(dn_check_tensor(args->in_grad[0], s->n, "LRN", "gradient of 'data'", err));
    if (s->ws.md == NULL || !dn_ws_matches(&s->ws, x)) {
        void *y = dn_scratch(1, (size_t)s->n * sizeof(float), err);
        if (y == NULL)
            return MXK_ERR_OUT_OF_MEMORY;
        MXK_SDK_CHECK(lrn_run_forward(ctx, s, x, y, err));
    }
    void *src = x->data, *dy = args->out_grad[0]->data, *dx = args->in_grad[0]->data;
    if (s->blocked) {
        const size_t bytes = dnnl_memory_desc_get_size(&s->blk_md);
        src = s->xb;
        if ((dy = dn_scratch(0, bytes, err)) == NULL || (dx = dn_scratch(1, bytes, err)) == NULL)
            return MXK_ERR_OUT_OF_MEMORY;
        MXK_SDK_CHECK(
            lrn_run_reorder(ctx, s->to_blk, &s->md, args->out_grad[0]->data, &s->blk_md, dy, err));
    }
    dn_arg a[] = {{DNNL_ARG_SRC, &s->blk_md, src},
                  {DNNL_ARG_DIFF_DST, &s->blk_md, dy},
                  {DNNL_ARG_DIFF_SRC, &s->blk_md, dx},
                  {DNNL_ARG_WORKSPACE, s->ws.md, s->ws.data}};
    MXK_SDK_CHECK(dn_execute(ctx, s->bwd, s->ws.md != NULL ? 4 : 3, a, err));
    return s->blocked ? lrn_run_reorder(ctx, s->from_blk, &s->blk_md, dx, &s->md,
                                        args->in_grad[0]->data, err)
                      : MXK_OK;
}

/** Registers the LRN kernel (onednn.h). Errors: dn_register_kernel's. */
mxk_status dn_register_lrn(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "LRN";
    k.parse_param = lrn_parse;
    k.free_param = dn_param_free;
    k.supports = lrn_supports;
    k.create_state = lrn_create_state;
    k.destroy_state = lrn_destroy_state;
    k.forward = lrn_forward;
    k.backward = lrn_backward;
    /* powf of the norm and window sums in another order: a few ulps */
    k.crosscheck_rtol = 1e-5;
    k.crosscheck_atol = 1e-6;
    return dn_register_kernel(reg, &k, err);
}
