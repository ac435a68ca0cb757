/*
 * cpu-blas plugin: FullyConnected.
 *
 * Semantics: MXNet src/operator/nn/fully_connected.cc, fully_connected-inl.h
 * Arguments data, weight, bias (no
 * bias argument with no_bias=True); output `output`.
 *   flatten=True:  data (N, x1..xn) viewed as (N, K), K = x1*...*xn; output (N, H)
 *   flatten=False: data (d1..dn-1, K); output (d1..dn-1, H)
 *   weight (H, K), bias (H,) or (H, 1); y = x * W^T + b.
 * Backward: dW = dy^T x, db = column sums of dy, dx = dy W; it reads out_grad,
 * data and weight (not the output). dx may share memory with data (computed
 * last, after dW has read data).
 */
#include <cblas.h>
#include <string.h>

#include "cb_tensor.h"

/** Parsed attributes of FullyConnected. */
typedef struct fc_param {
    int64_t num_hidden; /**< H, output units (>= 1) */
    int32_t no_bias;    /**< 1: no bias argument */
    int32_t flatten;    /**< 1: collapse all but the first axis of data */
} fc_param;

/** Argument names (the bias entry is dropped with no_bias). */
static const char *const fc_args[] = {"data", "weight", "bias", NULL};
static const char *const fc_outs[] = {"output", NULL};
/** Upstream's add_alias name (fully_connected.cc). */
static const char *const fc_aliases[] = {"_npx_fully_connected", NULL};

/** Attribute schema (MXNet 1.9.1 FullyConnectedParam). */
static const mxk_attr_def fc_attrs[] = {
    MXK_SDK_ATTR("num_hidden", MXK_ATTR_INT, 1, NULL, NULL,
                 "Number of hidden nodes of the output."),
    MXK_SDK_ATTR("no_bias", MXK_ATTR_BOOL, 0, "False", NULL, "Whether to disable bias parameter."),
    MXK_SDK_ATTR("flatten", MXK_ATTR_BOOL, 0, "True", NULL,
                 "Whether to collapse all but the first axis of the input data tensor."),
};

/** Parses num_hidden (1..2^31-1), no_bias, flatten. */
static mxk_status fc_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    fc_param p;
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_hidden", 1, INT32_MAX, &p.num_hidden, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "no_bias", &p.no_bias, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "flatten", &p.flatten, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Number of arguments: 2 with no_bias, else 3. */
static uint32_t fc_num_args(const fc_param *p) {
    return p->no_bias ? 2u : 3u;
}

/** Argument names: data, weight[, bias]. */
static mxk_status fc_list_arguments(const void *param, mxk_name_list *out, mxk_error_sink *err) {
    const fc_param *p = param;
    for (uint32_t i = 0; i < fc_num_args(p); i++)
        MXK_SDK_CHECK(mxk_sdk_host()->name_list_add(out, fc_args[i], err));
    return MXK_OK;
}

/**
 * Shape inference: from data, weight (H, K), bias (H,) (or an existing (H, 1))
 * and the output; backwards, the output's leading dims into data. Incomplete
 * when data is unknown.
 */
static mxk_status fc_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const fc_param *p = param;
    if (num_in != fc_num_args(p) || num_out != 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "FullyConnected expects %u arguments and 1 output, got %u and %u",
                             (unsigned)fc_num_args(p), (unsigned)num_in, (unsigned)num_out);
    mxk_shape *d = &in[0];
    if (d->ndim == 0)
        return MXK_OK;
    MXK_SDK_CHECK(mxk_sdk_shapes_check_count(in, num_in, "argument", fc_args, err));
    int64_t H = p->num_hidden; /* the weight (H, K) is checked by mxk_sdk_shape_assign */
    int64_t K = p->flatten ? (int64_t)mxk_sdk_shape_prod(d, 1, d->ndim) : d->dims[d->ndim - 1];
    mxk_shape w = mxk_sdk_shape2(H, K);
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[1], &w, "argument", "weight", err));
    if (!p->no_bias) {
        mxk_shape b1 = mxk_sdk_shape1(H), b2 = mxk_sdk_shape2(H, 1);
        if (!mxk_sdk_shape_merge(&in[2], &b1, &in[2]) &&
            !mxk_sdk_shape_merge(&in[2], &b2, &in[2])) {
            char e1[MXK_SDK_SHAPE_STR_MAX], e2[MXK_SDK_SHAPE_STR_MAX], g[MXK_SDK_SHAPE_STR_MAX];
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'bias': expected %s or %s, got %s",
                                 mxk_sdk_shape_format(&b1, e1, sizeof e1),
                                 mxk_sdk_shape_format(&b2, e2, sizeof e2),
                                 mxk_sdk_shape_format(&in[2], g, sizeof g));
        }
    }
    mxk_shape y;
    if (p->flatten) {
        y = mxk_sdk_shape2(d->dims[0], H);
    } else {
        y = *d;
        y.dims[y.ndim - 1] = H;
    }
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[0], &y, "output", "output", err));
    /* backwards: the batch (flatten) or all leading dims (no flatten) of the output */
    mxk_shape back = *d;
    int32_t lead = p->flatten ? 1 : d->ndim - 1;
    for (int32_t i = 0; i < lead && i < out[0].ndim; i++)
        if (back.dims[i] == 0)
            back.dims[i] = out[0].dims[i];
    *d = back;
    return MXK_OK;
}

/** All float32. */
static mxk_status fc_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, fc_args, out, num_out, fc_outs, aux,
                                      num_aux, err);
}

/** Backward reads out_grad, data and weight (MXNet: {out_grad, data, weight}). */
static void fc_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_in_data[0] = 1;
    need_in_data[1] = 1;
}

/** Backward in-place: in_data[data] (index 1 after the one out_grad) -> in_grad[data]. */
static uint32_t fc_backward_inplace(const void *param, mxk_inplace_pair *pairs, uint32_t capacity) {
    uint32_t n = 0;
    mxk_sdk_inplace_add(pairs, capacity, &n, 1, 0, 0);
    return n;
}

/** Sizes of the matrix view: M rows of data, K inputs, H outputs. */
typedef struct fc_dims {
    int M, K, H;
} fc_dims;

/** Computes the matrix view from the data shape. */
static mxk_status fc_dims_of(const fc_param *p, const mxk_shape *d, fc_dims *m,
                             mxk_error_sink *err) {
    uint64_t rows = p->flatten ? (uint64_t)d->dims[0] : mxk_sdk_shape_prod(d, 0, d->ndim - 1);
    uint64_t k = p->flatten ? mxk_sdk_shape_prod(d, 1, d->ndim) : (uint64_t)d->dims[d->ndim - 1];
    MXK_SDK_CHECK(cb_blas_dim(rows, "FullyConnected rows", &m->M, err));
    MXK_SDK_CHECK(cb_blas_dim(k, "FullyConnected input size", &m->K, err));
    return cb_blas_dim((uint64_t)p->num_hidden, "num_hidden", &m->H, err);
}

/** y (=|+=) x W^T + b via one sgemm (bias pre-stored into y, then beta = 1). */
static mxk_status fc_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const fc_param *p = param;
    MXK_SDK_CHECK(
        cb_check_forward(args, fc_num_args(p), 1, fc_args, fc_outs, fc_infer_shape, param, err));
    mxk_op_req req = args->req[0];
    if (req == MXK_REQ_NULL)
        return MXK_OK;
    fc_dims m;
    MXK_SDK_CHECK(fc_dims_of(p, &args->in_data[0]->shape, &m, err));
    const float *x = cb_f32(args->in_data[0]), *w = cb_f32(args->in_data[1]);
    float *y = cb_f32(args->out_data[0]);
    float beta = mxk_sdk_req_beta(req);
    if (!p->no_bias) {
        const float *b = cb_f32(args->in_data[2]);
        for (int i = 0; i < m.M; i++)
            mxk_sdk_copy_f32(y + (size_t)i * m.H, b, (size_t)m.H,
                             req == MXK_REQ_ADD ? MXK_REQ_ADD : MXK_REQ_WRITE);
        beta = 1.0f;
    }
    cb_sgemm(ctx, CblasNoTrans, CblasTrans, m.M, m.H, m.K, 1.0f, x, m.K, w, m.K, beta, y, m.H);
    return MXK_OK;
}

/** dW = dy^T x, db = colsum(dy), then dx = dy W (dx may alias x), each by its request. */
static mxk_status fc_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const fc_param *p = param;
    uint32_t ni = fc_num_args(p);
    const mxk_op_req *req = args->req;
    int need_any;
    MXK_SDK_CHECK(cb_begin_weighted_backward(args, ni, &need_any, err));
    if (!need_any)
        return MXK_OK;
    const mxk_shape *ds = &args->in_data[0]->shape;
    fc_dims m;
    MXK_SDK_CHECK(fc_dims_of(p, ds, &m, err));
    mxk_shape ws = mxk_sdk_shape2(m.H, m.K), ys = mxk_sdk_shape2(m.M, m.H);
    mxk_shape bs = mxk_sdk_shape1(m.H);
    if (mxk_sdk_shape_count(&args->out_grad[0]->shape) != mxk_sdk_shape_count(&ys) ||
        mxk_sdk_shape_count(&args->in_data[1]->shape) != mxk_sdk_shape_count(&ws)) {
        char a[MXK_SDK_SHAPE_STR_MAX], b[MXK_SDK_SHAPE_STR_MAX], c[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "inconsistent backward shapes: data %s, weight %s, out_grad %s",
                             mxk_sdk_shape_format(ds, a, sizeof a),
                             mxk_sdk_shape_format(&args->in_data[1]->shape, b, sizeof b),
                             mxk_sdk_shape_format(&args->out_grad[0]->shape, c, sizeof c));
    }
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req[0], ds, "data", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[1], req[1], &ws, "weight", err));
    if (!p->no_bias)
        MXK_SDK_CHECK(cb_check_grad(args->in_grad[2], req[2], &bs, "bias", err));

    const float *dy = cb_f32(args->out_grad[0]);
    const float *x = cb_f32(args->in_data[0]), *w = cb_f32(args->in_data[1]);
    if (req[1] != MXK_REQ_NULL)
        cb_sgemm(ctx, CblasTrans, CblasNoTrans, m.H, m.K, m.M, 1.0f, dy, m.H, x, m.K,
                 mxk_sdk_req_beta(req[1]), cb_f32(args->in_grad[1]), m.K);
    if (!p->no_bias && req[2] != MXK_REQ_NULL) {
        float *db = cb_f32(args->in_grad[2]);
        if (req[2] != MXK_REQ_ADD)
            memset(db, 0, sizeof(float) * (size_t)m.H);
        for (int i = 0; i < m.M; i++)
            mxk_sdk_copy_f32(db, dy + (size_t)i * m.H, (size_t)m.H, MXK_REQ_ADD);
    }
    if (req[0] != MXK_REQ_NULL)
        cb_sgemm(ctx, CblasNoTrans, CblasNoTrans, m.M, m.K, m.H, 1.0f, dy, m.H, w, m.K,
                 mxk_sdk_req_beta(req[0]), cb_f32(args->in_grad[0]), m.K);
    return MXK_OK;
}

/** Registers FullyConnected and its CPU kernel. */
mxk_status cb_register_fully_connected(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = "FullyConnected";
    def.description = "Applies a linear transformation: y = x W^T + b.";
    def.attrs = fc_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(fc_attrs);
    def.outputs = fc_outs;
    def.parse_param = fc_parse;
    def.free_param = cbt_param_free;
    def.list_arguments = fc_list_arguments;
    def.infer_shape = fc_infer_shape;
    def.infer_type = fc_infer_type;
    def.backward_dependency = fc_backward_dependency;
    def.backward_inplace = fc_backward_inplace;
    def.aliases = fc_aliases;
    mxk_op_kernel_def k;
    cb_kernel_init(&k, "FullyConnected", fc_forward, fc_backward);
    return cb_register(reg, &def, &k, err);
}
