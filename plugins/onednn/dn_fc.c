/*
 * onednn plugin: FullyConnected on oneDNN's inner product primitive (oneDNN 2.x,
 * dnnl_inner_product_forward_desc_init, ..._backward_data_desc_init,
 * ..._backward_weights_desc_init).
 *
 * Semantics are the operator's (cpu-blas op_fully_connected.c; upstream MXNet
 * src/operator/nn/fully_connected.cc, fully_connected-inl.h); the mapping
 * follows MXNet 1.9.1's src/operator/nn/mkldnn/mkldnn_fully_connected.cc.
 * Data is viewed as an (M, K) matrix: flatten=True (N, x1..xn) as (N, x1*..*xn),
 * flatten=False (d1..dn-1, K) as (d1*..*dn-1, K); weight (H, K), bias (H) (or
 * (H, 1)), output (M, H): y = x W^T + b.
 *   training forward: plain weights (the backward's hint primitive)
 *   inference forward: weights in the layout oneDNN picks (format_tag_any); when
 *     that is not the plain one the weight is reordered into the node's cache,
 *     kept while the weight's (data, version) stays the same (mxk_tensor.version)
 *   backward: dW and db by one backward-weights primitive, then dx by one
 *     backward-data primitive (dx may share memory with x: x is read first);
 *     a gradient not requested whose partner is goes to scratch
 * Requests: WRITE / INPLACE / NULL (the host emulates ADD). Accepted: float32
 * arguments and a non-empty data; everything else is declined.
 */
#include "dn_util.h"

#include <stdlib.h>

/** Parsed attributes (MXNet 1.9.1 FullyConnectedParam). */
typedef struct dn_fc_param {
    int64_t num_hidden;
    int32_t no_bias;
    int32_t flatten;
} dn_fc_param;

/**
 * Per-node state: the matrix sizes, the plain descriptors, the primitives (made
 * at first use) and the inference weight cache (`w_cache`, owned, in
 * `infer_w_md`'s layout, valid for the weight at `w_key` with `w_version`, 0:
 * none). Used by one call at a time.
 */
typedef struct dn_fc_state {
    int64_t M, K, H;
    int32_t no_bias;
    dnnl_memory_desc_t src_md, w_md, b_md, dst_md;
    dnnl_primitive_desc_t train_pd;
    dnnl_primitive_t train_fwd, infer_fwd, w_reorder, bwd_data, bwd_weights;
    dnnl_memory_desc_t infer_w_md;
    void *w_cache;
    const void *w_key;
    uint64_t w_version;
} dn_fc_state;

/** Parses num_hidden, no_bias, flatten. Errors: the mxk_sdk_attr_* getters'. */
static mxk_status fc_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    dn_fc_param p;
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "num_hidden", &p.num_hidden, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "no_bias", &p.no_bias, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "flatten", &p.flatten, err));
    dn_fc_param *q = malloc(sizeof *q);
    if (q == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN FullyConnected: out of memory");
    *q = p;
    *out = q;
    return MXK_OK;
}

/** Frees a parameter object of fc_parse. */
static void fc_param_free(void *p) {
    free(p);
}

/** The (M, K) matrix view of the data shape (see the file comment). */
static void fc_view(const dn_fc_param *p, const mxk_shape *d, int64_t *m, int64_t *k) {
    int64_t n = dn_shape_size(d);
    int64_t lead = d->ndim == 0 ? 1 : p->flatten ? d->dims[0] : n / d->dims[d->ndim - 1];
    *m = lead;
    *k = lead > 0 ? n / lead : 0;
}

/** Accepts float32 data, weight (and bias) with non-empty data and num_hidden >= 1. */
static int32_t fc_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                           uint32_t num_in) {
    const dn_fc_param *p = param;
    if (num_in != (p->no_bias ? 2u : 3u) || p->num_hidden < 1 || in_shapes[0].ndim < 1 ||
        dn_shape_size(&in_shapes[0]) <= 0)
        return 0;
    for (uint32_t i = 0; i < num_in; i++)
        if (in_types[i] != MXK_FLOAT32)
            return 0;
    return 1;
}

/** Frees a state of fc_create_state (NULL allowed). */
static void fc_destroy_state(void *state) {
    dn_fc_state *s = state;
    if (s == NULL)
        return;
    dnnl_primitive_destroy(s->train_fwd);
    dnnl_primitive_destroy(s->infer_fwd);
    dnnl_primitive_destroy(s->w_reorder);
    dnnl_primitive_destroy(s->bwd_data);
    dnnl_primitive_destroy(s->bwd_weights);
    dnnl_primitive_desc_destroy(s->train_pd);
    free(s->w_cache);
    free(s);
}

/**
 * Creates the state: the matrix sizes and plain descriptors (primitives come at
 * first use). Errors: MXK_ERR_OUT_OF_MEMORY, dn_md_plain's.
 */
static mxk_status fc_create_state(const void *param, int32_t dev_type, int32_t dev_id,
                                  const mxk_shape *in_shapes, const int32_t *in_types,
                                  uint32_t num_in, void **state, mxk_error_sink *err) {
    const dn_fc_param *p = param;
    dn_fc_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN FullyConnected: out of memory");
    fc_view(p, &in_shapes[0], &s->M, &s->K);
    s->H = p->num_hidden;
    s->no_bias = p->no_bias;
    dnnl_dim_t x[2] = {s->M, s->K}, w[2] = {s->H, s->K}, y[2] = {s->M, s->H}, b = s->H;
    mxk_status rc = dn_md_plain(&s->src_md, 2, x, err);
    if (rc == MXK_OK)
        rc = dn_md_plain(&s->w_md, 2, w, err);
    if (rc == MXK_OK)
        rc = dn_md_plain(&s->dst_md, 2, y, err);
    if (rc == MXK_OK)
        rc = dn_md_plain(&s->b_md, 1, &b, err);
    if (rc != MXK_OK) {
        fc_destroy_state(s);
        return rc;
    }
    *state = s;
    return MXK_OK;
}

/** The bias descriptor, or NULL (no bias term) with no_bias. */
static const dnnl_memory_desc_t *fc_bias_md(const dn_fc_state *s) {
    return s->no_bias ? NULL : &s->b_md;
}

/**
 * Creates a forward primitive (and, with `keep_pd`, keeps its descriptor in
 * train_pd) of `prop` with weights `w_md` (plain, or format_tag_any whose chosen
 * layout is written back into *w_md). Errors: dn_check's.
 */
static mxk_status fc_make_forward(dn_fc_state *s, dnnl_prop_kind_t prop, dnnl_memory_desc_t *w_md,
                                  int keep_pd, dnnl_primitive_t *prim, mxk_error_sink *err) {
    dnnl_inner_product_desc_t d;
    dnnl_primitive_desc_t pd;
    DN_CHECK(
        dnnl_inner_product_forward_desc_init(&d, prop, &s->src_md, w_md, fc_bias_md(s), &s->dst_md),
        "inner product forward descriptor", err);
    DN_CHECK(dn_pd_create(&pd, &d, NULL), "inner product forward primitive descriptor", err);
    *w_md = *dn_pd_md(pd, dnnl_query_weights_md, 0);
    mxk_status rc = dn_primitive(prim, pd, "inner product forward primitive", err);
    if (rc == MXK_OK && keep_pd)
        s->train_pd = pd;
    else
        dnnl_primitive_desc_destroy(pd);
    return rc;
}

/** Makes the training forward primitive (plain weights) unless made. Errors: dn_check's. */
static mxk_status fc_make_training(dn_fc_state *s, mxk_error_sink *err) {
    if (s->train_fwd != NULL)
        return MXK_OK;
    dnnl_memory_desc_t md = s->w_md;
    return fc_make_forward(s, dnnl_forward_training, &md, 1, &s->train_fwd, err);
}

/**
 * Makes the inference primitive with oneDNN's preferred weight layout and, when
 * that differs from the plain one, the reorder into it and the cache buffer.
 * Errors: dn_check's, MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status fc_make_inference(dn_fc_state *s, mxk_error_sink *err) {
    dnnl_dims_t w = {s->H, s->K}; /* the full array the prototype declares */
    DN_CHECK(dnnl_memory_desc_init_by_tag(&s->infer_w_md, 2, w, dnnl_f32, dnnl_format_tag_any),
             "inner product weight descriptor", err);
    MXK_SDK_CHECK(
        fc_make_forward(s, dnnl_forward_inference, &s->infer_w_md, 0, &s->infer_fwd, err));
    if (dnnl_memory_desc_equal(&s->infer_w_md, &s->w_md))
        return MXK_OK;
    dnnl_primitive_desc_t pd;
    DN_CHECK(dn_reorder_pd_create(&pd, &s->w_md, &s->infer_w_md),
             "weight reorder primitive descriptor", err);
    mxk_status rc = dn_primitive(&s->w_reorder, pd, "weight reorder primitive", err);
    dnnl_primitive_desc_destroy(pd);
    MXK_SDK_CHECK(rc);
    size_t bytes = dnnl_memory_desc_get_size(&s->infer_w_md);
    if (posix_memalign(&s->w_cache, 64, bytes ? bytes : 64) != 0) {
        s->w_cache = NULL;
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY,
                             "oneDNN FullyConnected: out of memory (weight cache of %zu bytes)",
                             bytes);
    }
    return MXK_OK;
}

/**
 * The weight in the inference primitive's layout: the tensor's own memory when
 * that is plain, else the cache, reordered unless it already holds this
 * (data, version) (version 0: always reordered). Errors: dn_execute's.
 */
static mxk_status fc_inference_weight(const mxk_op_ctx *ctx, dn_fc_state *s, const mxk_tensor *w,
                                      void **out, mxk_error_sink *err) {
    if (s->w_reorder == NULL) {
        *out = w->data;
        return MXK_OK;
    }
    uint64_t version = dn_ws_version(w);
    if (version == 0 || s->w_key != w->data || s->w_version != version) {
        s->w_key = NULL;
        dn_arg a[] = {{DNNL_ARG_FROM, &s->w_md, w->data},
                      {DNNL_ARG_TO, &s->infer_w_md, s->w_cache}};
        MXK_SDK_CHECK(dn_execute(ctx, s->w_reorder, 2, a, err));
        s->w_key = w->data;
        s->w_version = version;
    }
    *out = s->w_cache;
    return MXK_OK;
}

/**
 * y = x W^T + b (WRITE or INPLACE; nothing for NULL): the inference primitive
 * outside training, the training one (plain weights) in training. Errors:
 * dn_check_tensor's, dn_check's, dn_execute's.
 */
static mxk_status fc_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    dn_fc_state *s = state;
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(
        dn_check_tensor(args->in_data[0], s->M * s->K, "FullyConnected", "the data", err));
    MXK_SDK_CHECK(
        dn_check_tensor(args->in_data[1], s->H * s->K, "FullyConnected", "the weight", err));
    if (!s->no_bias)
        MXK_SDK_CHECK(dn_check_tensor(args->in_data[2], s->H, "FullyConnected", "the bias", err));
    MXK_SDK_CHECK(
        dn_check_tensor(args->out_data[0], s->M * s->H, "FullyConnected", "the output", err));
    dnnl_primitive_t prim;
    const dnnl_memory_desc_t *w_md;
    void *w;
    if (ctx->is_train) {
        MXK_SDK_CHECK(fc_make_training(s, err));
        prim = s->train_fwd, w_md = &s->w_md, w = args->in_data[1]->data;
    } else {
        if (s->infer_fwd == NULL)
            MXK_SDK_CHECK(fc_make_inference(s, err));
        MXK_SDK_CHECK(fc_inference_weight(ctx, s, args->in_data[1], &w, err));
        prim = s->infer_fwd, w_md = &s->infer_w_md;
    }
    dn_arg a[] = {{DNNL_ARG_SRC, &s->src_md, args->in_data[0]->data},
                  {DNNL_ARG_WEIGHTS, w_md, w},
                  {DNNL_ARG_DST, &s->dst_md, args->out_data[0]->data},
                  {DNNL_ARG_BIAS, &s->b_md, s->no_bias ? NULL : args->in_data[2]->data}};
    return dn_execute(ctx, prim, s->no_bias ? 3 : 4, a, err);
}

/**
 * Makes the backward primitives (training forward first: it is their hint).
 * Errors: dn_check's.
 */
static mxk_status fc_make_backward(dn_fc_state *s, mxk_error_sink *err) {
    MXK_SDK_CHECK(fc_make_training(s, err));
    dnnl_inner_product_desc_t dd, wd;
    dnnl_primitive_desc_t dpd, wpd;
    DN_CHECK(dnnl_inner_product_backward_data_desc_init(&dd, &s->src_md, &s->w_md, &s->dst_md),
             "inner product backward data descriptor", err);
    DN_CHECK(dnnl_inner_product_backward_weights_desc_init(&wd, &s->src_md, &s->w_md, fc_bias_md(s),
                                                           &s->dst_md),
             "inner product backward weights descriptor", err);
    DN_CHECK(dn_pd_create(&dpd, &dd, s->train_pd),
             "inner product backward data primitive descriptor", err);
    mxk_status rc = dn_primitive(&s->bwd_data, dpd, "inner product backward data primitive", err);
    dnnl_primitive_desc_destroy(dpd);
    MXK_SDK_CHECK(rc);
    DN_CHECK(dn_pd_create(&wpd, &wd, s->train_pd),
             "inner product backward weights primitive descriptor", err);
    rc = dn_primitive(&s->bwd_weights, wpd, "inner product backward weights primitive", err);
    dnnl_primitive_desc_destroy(wpd);
    return rc;
}

/**
 * The gradient memory for argument `i` (`n` floats): its own when requested,
 * else scratch `slot` (the backward-weights primitive writes dW and db together).
 * NULL with MXK_ERR_OUT_OF_MEMORY from dn_scratch.
 */
static void *fc_grad_or_scratch(const mxk_backward_args *args, uint32_t i, int64_t n, int slot,
                                mxk_error_sink *err) {
    if (args->req[i] != MXK_REQ_NULL)
        return args->in_grad[i]->data;
    return dn_scratch(slot, sizeof(float) * (size_t)n, err);
}

/**
 * dW = dy^T x and db = column sums of dy (one primitive, when either is
 * requested), then dx = dy W (dx may be x's memory), each WRITE or INPLACE or
 * skipped for NULL. Errors: dn_check_tensor's, dn_check's, dn_scratch's, dn_execute's.
 */
static mxk_status fc_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    dn_fc_state *s = state;
    const mxk_op_req *req = args->req;
    int want_w = req[1] != MXK_REQ_NULL || (!s->no_bias && req[2] != MXK_REQ_NULL);
    if (!want_w && req[0] == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(dn_check_tensor(args->out_grad[0], s->M * s->H, "FullyConnected",
                                  "the output gradient", err));
    MXK_SDK_CHECK(
        dn_check_tensor(args->in_data[0], s->M * s->K, "FullyConnected", "the data", err));
    MXK_SDK_CHECK(
        dn_check_tensor(args->in_data[1], s->H * s->K, "FullyConnected", "the weight", err));
    static const char *const names[] = {"the data gradient", "the weight gradient",
                                        "the bias gradient"};
    const int64_t sizes[] = {s->M * s->K, s->H * s->K, s->H};
    for (uint32_t i = 0; i < (s->no_bias ? 2u : 3u); i++)
        if (req[i] != MXK_REQ_NULL)
            MXK_SDK_CHECK(
                dn_check_tensor(args->in_grad[i], sizes[i], "FullyConnected", names[i], err));
    if (s->bwd_data == NULL)
        MXK_SDK_CHECK(fc_make_backward(s, err));
    void *dy = args->out_grad[0]->data;
    if (want_w) {
        void *dw = fc_grad_or_scratch(args, 1, sizes[1], 1, err);
        void *db = s->no_bias ? NULL : fc_grad_or_scratch(args, 2, s->H, 2, err);
        if (dw == NULL || (!s->no_bias && db == NULL))
            return MXK_ERR_OUT_OF_MEMORY;
        dn_arg a[] = {{DNNL_ARG_SRC, &s->src_md, args->in_data[0]->data},
                      {DNNL_ARG_DIFF_DST, &s->dst_md, dy},
                      {DNNL_ARG_DIFF_WEIGHTS, &s->w_md, dw},
                      {DNNL_ARG_DIFF_BIAS, &s->b_md, db}};
        MXK_SDK_CHECK(dn_execute(ctx, s->bwd_weights, s->no_bias ? 3 : 4, a, err));
    }
    if (req[0] == MXK_REQ_NULL)
        return MXK_OK;
    dn_arg a[] = {{DNNL_ARG_DIFF_DST, &s->dst_md, dy},
                  {DNNL_ARG_WEIGHTS, &s->w_md, args->in_data[1]->data},
                  {DNNL_ARG_DIFF_SRC, &s->src_md, args->in_grad[0]->data}};
    return dn_execute(ctx, s->bwd_data, 3, a, err);
}

/**
 * Registers the FullyConnected kernel. Tolerance against cpu-blas: both sum K
 * products in float32 in different orders (blocking, FMA), so outputs that
 * cancel differ by more than a few ulps of their own size.
 */
mxk_status dn_register_fc(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "FullyConnected";
    k.parse_param = fc_parse;
    k.free_param = fc_param_free;
    k.supports = fc_supports;
    k.create_state = fc_create_state;
    k.destroy_state = fc_destroy_state;
    k.forward = fc_forward;
    k.backward = fc_backward;
    k.crosscheck_rtol = 1e-4;
    k.crosscheck_atol = 1e-4;
    return dn_register_kernel(reg, &k, err);
}
