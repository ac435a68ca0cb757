/*
 * passes-test: operators with the *semantics* (names, shape inference, backward
 * dependencies, in-place hints, hidden outputs, no_gradient) of MXNet operators the
 * graph-pass tests need but cpu-blas does not have, with trivial kernels (they
 * write zeros by the request): the passes never run kernels.
 *
 * - TestConv: MXNet Convolution's shapes (src/operator/nn/convolution-inl.h):
 *   data (N,C,H,W), weight (F,C,kh,kw), bias (F,), output
 *   (N, F, (H+2p-kh)/s+1, (W+2p-kw)/s+1); backward reads out_grad, data and weight
 *   (DeclareBackwardDependency {out_grad, in_data[data], in_data[weight]}); no in-place.
 * - TestPool: MXNet Pooling (v0.9.5 pooling-inl.h): output (N,C,(H+2p-kh)/s+1, ...);
 *   backward reads out_grad, data and output (max pooling finds the argmax);
 *   backward in-place in_data[data] -> in_grad[data] (backward input index 1).
 * - TestDropout: MXNet Dropout's layout: outputs (output, mask), one visible;
 *   backward reads out_grad and the hidden mask; forward in-place data -> output.
 * - TestBlockGrad: identity forward (in-place identity) with no_gradient = 1, the
 *   way a BlockGrad-like operator stops gradients in the gradient plan.
 * - TestAux: y = data, with one aux state `state` (BatchNorm-like; mutates it).
 */
#include <stdlib.h>

#include "testing_plugin.h"

/* ------------------------------------------------------------------------- */
/* Parameters                                                                */
/* ------------------------------------------------------------------------- */

/** Window parameters shared by TestConv and TestPool (MXNet's kernel/stride/pad). */
typedef struct pt_window {
    int64_t num_filter; /**< TestConv only */
    int64_t kh, kw, sh, sw, ph, pw;
} pt_window;

static const mxk_attr_def conv_attrs[] = {
    MXK_SDK_ATTR("num_filter", MXK_ATTR_INT, 1, NULL, NULL, "output channels"),
    MXK_SDK_ATTR("kernel", MXK_ATTR_SHAPE, 1, NULL, NULL, "(kh,kw)"),
    MXK_SDK_ATTR("stride", MXK_ATTR_SHAPE, 0, "(1,1)", NULL, "(sh,sw)"),
    MXK_SDK_ATTR("pad", MXK_ATTR_SHAPE, 0, "(0,0)", NULL, "(ph,pw)"),
};

static const mxk_attr_def pool_attrs[] = {
    MXK_SDK_ATTR("kernel", MXK_ATTR_SHAPE, 1, NULL, NULL, "(kh,kw)"),
    MXK_SDK_ATTR("stride", MXK_ATTR_SHAPE, 0, "(1,1)", NULL, "(sh,sw)"),
    MXK_SDK_ATTR("pad", MXK_ATTR_SHAPE, 0, "(0,0)", NULL, "(ph,pw)"),
};

/** Reads a 2-tuple attribute with positive (or non-negative when `zero_ok`) entries. */
static mxk_status pt_pair(const mxk_attrs *attrs, const char *key, int zero_ok, int64_t *a,
                          int64_t *b, mxk_error_sink *err) {
    mxk_shape s;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, key, &s, err));
    if (s.ndim != 2 || s.dims[0] < (zero_ok ? 0 : 1) || s.dims[1] < (zero_ok ? 0 : 1))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute '%s': expected two %s integers", key,
                             zero_ok ? "non-negative" : "positive");
    *a = s.dims[0];
    *b = s.dims[1];
    return MXK_OK;
}

/** parse_param of TestConv and TestPool (num_filter only when present in the schema). */
static mxk_status pt_parse_window(const mxk_attrs *attrs, void **param, mxk_error_sink *err) {
    pt_window w = {0};
    if (mxk_sdk_attr_is_set(attrs, "num_filter"))
        MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_filter", 1, 1 << 20, &w.num_filter, err));
    MXK_SDK_CHECK(pt_pair(attrs, "kernel", 0, &w.kh, &w.kw, err));
    MXK_SDK_CHECK(pt_pair(attrs, "stride", 0, &w.sh, &w.sw, err));
    MXK_SDK_CHECK(pt_pair(attrs, "pad", 1, &w.ph, &w.pw, err));
    pt_window *p = malloc(sizeof *p);
    if (p == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "out of memory");
    *p = w;
    *param = p;
    return MXK_OK;
}

/** free_param of the window operators. */
static void pt_free(void *param) {
    free(param);
}

/**
 * Output spatial size of a window, or an error when the window does not fit or the
 * padded size is too large (checked arithmetic: pad comes from a model file).
 */
static mxk_status pt_out_dim(int64_t in, int64_t k, int64_t s, int64_t pad, const char *what,
                             int64_t *out, mxk_error_sink *err) {
    if (in == 0) {
        *out = 0;
        return MXK_OK;
    }
    int64_t twice, size;
    MXK_SDK_CHECK(mxk_sdk_dim_mul(2, pad, &twice, "2 * pad", err));
    MXK_SDK_CHECK(mxk_sdk_dim_add(in, twice, &size, "padded input", err));
    if (size < k)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': %s %lld (+2*%lld pad) is "
                             "smaller than the kernel %lld",
                             what, (long long)in, (long long)pad, (long long)k);
    *out = (size - k) / s + 1;
    return MXK_OK;
}

/* ------------------------------------------------------------------------- */
/* TestConv                                                                  */
/* ------------------------------------------------------------------------- */

static const char *const conv_args[] = {"data", "weight", "bias", NULL};
static const char *const one_out[] = {"output", NULL};
static const char *const data_arg[] = {"data", NULL};

/** Convolution shapes: weight and bias from data, output from data. */
static mxk_status conv_infer_shape(const void *param, mxk_shape *in, uint32_t num_in,
                                   mxk_shape *out, uint32_t num_out, mxk_shape *aux,
                                   uint32_t num_aux, mxk_error_sink *err) {
    const pt_window *w = param;
    if (num_in != 3 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expects 3 arguments, 1 output");
    const mxk_shape *d = &in[0];
    if (d->ndim == 0)
        return MXK_OK;
    if (d->ndim != 4)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'data': expected 4 dims, got %d",
                             (int)d->ndim);
    int64_t wd[4] = {w->num_filter, d->dims[1], w->kh, w->kw};
    mxk_shape ws = mxk_sdk_shape_from(wd, 4), bs = mxk_sdk_shape1(w->num_filter);
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[1], &ws, "argument", "weight", err));
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[2], &bs, "argument", "bias", err));
    int64_t oh = 0, ow = 0;
    MXK_SDK_CHECK(pt_out_dim(d->dims[2], w->kh, w->sh, w->ph, "height", &oh, err));
    MXK_SDK_CHECK(pt_out_dim(d->dims[3], w->kw, w->sw, w->pw, "width", &ow, err));
    int64_t od[4] = {d->dims[0], w->num_filter, oh, ow};
    mxk_shape os = mxk_sdk_shape_from(od, 4);
    return mxk_sdk_shape_assign_named(&out[0], &os, "output", "output", err);
}

/** Convolution backward reads out_grad, data and weight (not the output). */
static void conv_backward_dependency(const void *param, uint32_t nv, uint32_t ni, uint32_t no,
                                     uint8_t *og, uint8_t *id, uint8_t *od) {
    og[0] = 1;
    id[0] = 1;
    id[1] = 1;
}

/* ------------------------------------------------------------------------- */
/* TestPool                                                                  */
/* ------------------------------------------------------------------------- */

/** Pooling shapes: output from data. */
static mxk_status pool_infer_shape(const void *param, mxk_shape *in, uint32_t num_in,
                                   mxk_shape *out, uint32_t num_out, mxk_shape *aux,
                                   uint32_t num_aux, mxk_error_sink *err) {
    const pt_window *w = param;
    if (num_in != 1 || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expects 1 argument, 1 output");
    const mxk_shape *d = &in[0];
    if (d->ndim == 0)
        return MXK_OK;
    if (d->ndim != 4)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'data': expected 4 dims, got %d",
                             (int)d->ndim);
    int64_t oh = 0, ow = 0;
    MXK_SDK_CHECK(pt_out_dim(d->dims[2], w->kh, w->sh, w->ph, "height", &oh, err));
    MXK_SDK_CHECK(pt_out_dim(d->dims[3], w->kw, w->sw, w->pw, "width", &ow, err));
    int64_t od[4] = {d->dims[0], d->dims[1], oh, ow};
    mxk_shape os = mxk_sdk_shape_from(od, 4);
    return mxk_sdk_shape_assign_named(&out[0], &os, "output", "output", err);
}

/** Pooling backward reads out_grad, data and output. */
static void pool_backward_dependency(const void *param, uint32_t nv, uint32_t ni, uint32_t no,
                                     uint8_t *og, uint8_t *id, uint8_t *od) {
    og[0] = 1;
    id[0] = 1;
    od[0] = 1;
}

/** Backward in-place in_data[data] (backward input 1) -> in_grad[data]. */
static uint32_t pool_backward_inplace(const void *param, mxk_inplace_pair *pairs, uint32_t cap) {
    uint32_t n = 0;
    mxk_sdk_inplace_add(pairs, cap, &n, 1, 0, 0);
    return n;
}

/* ------------------------------------------------------------------------- */
/* TestDropout, TestBlockGrad, TestAux                                       */
/* ------------------------------------------------------------------------- */

static const char *const drop_outs[] = {"output", "mask", NULL};
static const char *const aux_states[] = {"state", NULL};

/** Every argument, output and aux state has the data's shape. */
static mxk_status same_infer_shape(const void *param, mxk_shape *in, uint32_t num_in,
                                   mxk_shape *out, uint32_t num_out, mxk_shape *aux,
                                   uint32_t num_aux, mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_sdk_infer_shape_same(in, num_in, NULL, out, num_out, NULL, err));
    for (uint32_t i = 0; i < num_aux; i++)
        MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&aux[i], &in[0], "aux state", "state", err));
    return MXK_OK;
}

/** Dropout's visible outputs: 1 (the mask is hidden). */
static uint32_t drop_num_visible(const void *param) {
    return 1;
}

/** Dropout backward reads out_grad and the mask. */
static void drop_backward_dependency(const void *param, uint32_t nv, uint32_t ni, uint32_t no,
                                     uint8_t *og, uint8_t *id, uint8_t *od) {
    og[0] = 1;
    od[1] = 1;
}

/** Forward in-place data -> output (not identity). */
static uint32_t fwd_inplace(const void *param, mxk_inplace_pair *pairs, uint32_t cap) {
    uint32_t n = 0;
    mxk_sdk_inplace_add(pairs, cap, &n, 0, 0, 0);
    return n;
}

/** Forward in-place identity data -> output. */
static uint32_t fwd_identity(const void *param, mxk_inplace_pair *pairs, uint32_t cap) {
    uint32_t n = 0;
    mxk_sdk_inplace_add(pairs, cap, &n, 0, 0, 1);
    return n;
}

/** BlockGrad-like: no gradient flows. */
static int32_t no_gradient(const void *param) {
    return 1;
}

/** TestAux backward reads out_grad only. */
static void og_only_dependency(const void *param, uint32_t nv, uint32_t ni, uint32_t no,
                               uint8_t *og, uint8_t *id, uint8_t *od) {
    og[0] = 1;
}

/** TestAux mutates its aux state (input index 1). */
static uint32_t aux_mutate(const void *param, uint32_t *indices, uint32_t cap) {
    if (cap < 1)
        return 0;
    indices[0] = 1;
    return 1;
}

/* ------------------------------------------------------------------------- */
/* Kernels: zeros by the request                                             */
/* ------------------------------------------------------------------------- */

/** Fills a float32 tensor with zeros by `req` (absent tensors are skipped). */
static void zero(const mxk_tensor *t, mxk_op_req req) {
    if (t != NULL && t->data != NULL && t->dtype == MXK_FLOAT32)
        mxk_sdk_fill_f32(t->data, 0.0f, (size_t)mxk_sdk_shape_count(&t->shape), req);
}

/** Forward: zeros into every output. */
static mxk_status zero_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_forward_args *args, mxk_error_sink *err) {
    for (uint32_t i = 0; i < args->num_out; i++)
        zero(args->out_data[i], args->req[i]);
    return MXK_OK;
}

/** Backward: zeros into every input gradient. */
static mxk_status zero_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                                const mxk_backward_args *args, mxk_error_sink *err) {
    for (uint32_t i = 0; i < args->num_in; i++)
        zero(args->in_grad[i], args->req[i]);
    return MXK_OK;
}

/** Registers operator `def` with the zero-output CPU kernels. */
static mxk_status pt_register(mxk_registrar *reg, const mxk_op_def *def, mxk_error_sink *err) {
    return mxk_test_register_cpu_op(reg, def, zero_forward, zero_backward, err);
}

MXK_TEST_PLUGIN_INFO("passes-test",
                     "Test operators for the graph passes (conv/pool/dropout shapes, no_gradient)",
                     0, MXK_PROVIDES_OPERATORS | MXK_PROVIDES_KERNELS)

/** Entry point 2: registers the five operators and their CPU kernels. */
MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args,
                                             mxk_error_sink *err) {
    MXK_SDK_CHECK(mxk_test_plugin_begin(args, MXK_SDK_HOST_SLOT_END(attr_get_shape), err));
    mxk_registrar *reg = args->registrar;
    mxk_op_def d;

    mxk_sdk_op_def_init(&d);
    d.name = "TestConv";
    d.attrs = conv_attrs;
    d.num_attrs = MXK_SDK_COUNTOF(conv_attrs);
    d.arguments = conv_args;
    d.outputs = one_out;
    d.parse_param = pt_parse_window;
    d.free_param = pt_free;
    d.infer_shape = conv_infer_shape;
    d.backward_dependency = conv_backward_dependency;
    MXK_SDK_CHECK(pt_register(reg, &d, err));

    mxk_sdk_op_def_init(&d);
    d.name = "TestPool";
    d.attrs = pool_attrs;
    d.num_attrs = MXK_SDK_COUNTOF(pool_attrs);
    d.arguments = data_arg;
    d.outputs = one_out;
    d.parse_param = pt_parse_window;
    d.free_param = pt_free;
    d.infer_shape = pool_infer_shape;
    d.backward_dependency = pool_backward_dependency;
    d.backward_inplace = pool_backward_inplace;
    MXK_SDK_CHECK(pt_register(reg, &d, err));

    mxk_sdk_op_def_init(&d);
    d.name = "TestDropout";
    d.arguments = data_arg;
    d.outputs = drop_outs;
    d.num_visible_outputs = drop_num_visible;
    d.infer_shape = same_infer_shape;
    d.backward_dependency = drop_backward_dependency;
    d.forward_inplace = fwd_inplace;
    MXK_SDK_CHECK(pt_register(reg, &d, err));

    mxk_sdk_op_def_init(&d);
    d.name = "TestBlockGrad";
    d.arguments = data_arg;
    d.outputs = one_out;
    d.infer_shape = same_infer_shape;
    d.forward_inplace = fwd_identity;
    d.no_gradient = no_gradient;
    MXK_SDK_CHECK(pt_register(reg, &d, err));

    mxk_sdk_op_def_init(&d);
    d.name = "TestAux";
    d.arguments = data_arg;
    d.outputs = one_out;
    d.aux_states = aux_states;
    d.infer_shape = same_infer_shape;
    d.backward_dependency = og_only_dependency;
    d.mutate_inputs = aux_mutate;
    return pt_register(reg, &d, err);
}
