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
 * The hidden output tmp_norm (norm above) is computed here by a plain loop when
 * it is requested (oneDNN keeps its own form of it in the workspace).
 * Backward: oneDNN's, from the data, dy and the forward's workspace (kept in
 * the state, dn_util.h; recomputed when it does not hold this data's). Every
 * request is WRITE or INPLACE (the host emulates ADD); NULL writes nothing.
 * Declined: data other than non-empty 4-D float32.
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
 * Per-node state: the data descriptor, the forward (training) primitive
 * descriptor and primitive, the backward primitive (made at the first
 * backward) and the workspace. Used by one call at a time.
 */
typedef struct dn_lrn_state {
    dnnl_memory_desc_t md;
    int64_t N, C, S, n; /**< batch, channels, H*W, elements */
    dnnl_primitive_desc_t fwd_pd;
    dnnl_primitive_t fwd, bwd;
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

/** Makes the forward (training) primitive descriptor over md. Errors: dn_check's. */
static mxk_status lrn_fwd_pd(const dn_lrn_param *p, const dnnl_memory_desc_t *md,
                             dnnl_primitive_desc_t *pd, mxk_error_sink *err) {
    dnnl_lrn_desc_t d;
    DN_CHECK(dnnl_lrn_forward_desc_init(&d, dnnl_forward_training, dnnl_lrn_across_channels, md,
                                        p->nsize, (float)p->alpha, (float)p->beta, (float)p->knorm),
             "LRN forward descriptor", err);
    DN_CHECK(dn_pd_create(pd, &d, NULL), "LRN forward primitive descriptor", err);
    return MXK_OK;
}

/** Accepts non-empty 4-D float32 data when oneDNN implements the forward on it. */
static int32_t lrn_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                            uint32_t num_in) {
    dnnl_memory_desc_t md;
    dnnl_primitive_desc_t pd = NULL;
    if (num_in != 1 || in_types[0] != MXK_FLOAT32 || in_shapes[0].ndim != 4 ||
        dn_shape_size(&in_shapes[0]) < 1 || dn_md_of_shape(&md, &in_shapes[0], NULL) != MXK_OK ||
        lrn_fwd_pd(param, &md, &pd, NULL) != MXK_OK)
        return 0;
    dnnl_primitive_desc_destroy(pd);
    return 1;
}

/** Frees a state of lrn_create_state (NULL allowed). */
static void lrn_destroy_state(void *state) {
    dn_lrn_state *s = state;
    if (s == NULL)
        return;
    dnnl_primitive_destroy(s->bwd);
    dnnl_primitive_destroy(s->fwd);
    dnnl_primitive_desc_destroy(s->fwd_pd);
    dn_ws_free(&s->ws);
    free(s);
}

/**
 * Creates the state: descriptor, forward primitive, workspace. Errors:
 * MXK_ERR_OUT_OF_MEMORY, dn_md_of_shape's, dn_check's.
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
        rc = lrn_fwd_pd(param, &s->md, &s->fwd_pd, err);
    if (rc == MXK_OK)
        rc = dn_primitive(&s->fwd, s->fwd_pd, "LRN forward primitive", err);
    if (rc == MXK_OK)
        rc = dn_ws_init(&s->ws, s->fwd_pd, err);
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
        MXK_SDK_CHECK(
            dn_ws_forward(ctx, s->fwd, &s->ws, &s->md, x, &s->md, args->out_data[0]->data, err));
    if (req[1] != MXK_REQ_NULL)
        lrn_norm(param, s, x->data, args->out_data[1]->data);
    return MXK_OK;
}

/** Makes the backward primitive (once), with the forward's as hint. Errors: dn_check's. */
static mxk_status lrn_make_bwd(const dn_lrn_param *p, dn_lrn_state *s, mxk_error_sink *err) {
    if (s->bwd != NULL)
        return MXK_OK;
    dnnl_lrn_desc_t d;
    dnnl_primitive_desc_t pd = NULL;
    DN_CHECK(dnnl_lrn_backward_desc_init(&d, dnnl_lrn_across_channels, &s->md, &s->md, p->nsize,
                                         (float)p->alpha, (float)p->beta, (float)p->knorm),
             "LRN backward descriptor", err);
    DN_CHECK(dn_pd_create(&pd, &d, s->fwd_pd), "LRN backward primitive descriptor", err);
    mxk_status rc = dn_primitive(&s->bwd, pd, "LRN backward primitive", err);
    dnnl_primitive_desc_destroy(pd);
    return rc;
}

/**
 * Backward: dx from x, dy and the workspace, recomputed first unless it holds
 * this x's (WRITE or INPLACE; nothing for NULL). Errors: dn_check_tensor's,
 * dn_scratch's, dn_check's, dn_execute's.
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
    MXK_SDK_CHECK(lrn_make_bwd(param, s, err));
    MXK_SDK_CHECK(dn_ws_ensure(ctx, s->fwd, &s->ws, &s->md, x, &s->md, err));
    dn_arg a[] = {{DNNL_ARG_SRC, &s->md, x->data},
                  {DNNL_ARG_DIFF_DST, &s->md, args->out_grad[0]->data},
                  {DNNL_ARG_DIFF_SRC, &s->md, args->in_grad[0]->data},
                  {DNNL_ARG_WORKSPACE, s->ws.md, s->ws.data}};
    return dn_execute(ctx, s->bwd, s->ws.md != NULL ? 4 : 3, a, err);
}

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
