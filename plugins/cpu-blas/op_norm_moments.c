/*
 * cpu-blas plugin: LayerNorm, InstanceNorm, GroupNorm, the normalisations by the
 * moments of groups of elements of one example.
 *
 * Semantics: MXNet src/operator/nn/layer_norm.cc and layer_norm-inl.h,
 * src/operator/instance_norm-inl.h, src/operator/nn/group_norm.cc and
 * group_norm-inl.h. Arguments data, gamma, beta; outputs output and two
 * statistics (hidden unless output_mean_var; InstanceNorm never shows them).
 * Data is viewed as (outer, K, inner); each (o, i) is a group of K elements of
 * stride inner, normalised by its mean m and biased variance v:
 *   y = (x - m) / sqrt(v + eps) * gamma[p] + beta[p]
 *   LayerNorm    around `axis` (default -1): outer = dims before, K = C, inner =
 *                dims after; p = the element's index along the axis; gamma (C,);
 *                statistics mean and std = sqrt(v + eps), data's shape with the
 *                axis set to 1.
 *   InstanceNorm (N, C, rest...) data, at least 3 dims: outer = N*C, K = rest,
 *                inner 1; p = channel; gamma (C,); statistics mean and var = v,
 *                both (N, C).
 *   GroupNorm    (N, C, rest...) data, at least 3 dims, C divisible by
 *                num_groups G: outer = N*G, K = C/G * rest, inner 1; p = group;
 *                gamma (G,); statistics mean and std, both (N, G).
 * gamma and beta are inferred over any given shape for InstanceNorm and GroupNorm
 * (upstream assigns them) and checked for LayerNorm (upstream's SHAPE_ASSIGN_CHECK);
 * the kernels refuse bound arrays of another size.
 * Backward (the statistics' gradients are ignored, as upstream), per group with
 * inv = 1/sqrt(v + eps), xh = (x - m) inv, g = dy gamma[p]:
 *   dx = inv (g - mean(g) - xh mean(g xh));  dgamma[p] += sum dy xh;  dbeta[p] += sum dy.
 * It reads out_grad[0], data, gamma and both statistics. LayerNorm and GroupNorm
 * may run forward in place (data -> output), as upstream's FInplaceOption.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cb_tensor.h"
#include "mxk_norm.h"
#include "norm_ops.h"

/** Parsed attributes (those an operator does not have keep their zero). */
typedef struct nm_param {
    int32_t kind;            /**< MXK_NORM_LAYER, _INSTANCE or _GROUP */
    int32_t output_mean_var; /**< LayerNorm, GroupNorm */
    double eps;              /**< float32 in upstream: the value rounded to float */
    int64_t axis;            /**< LayerNorm */
    int64_t groups;          /**< GroupNorm num_groups */
} nm_param;

static const char *const nm_args[] = {"data", "gamma", "beta", NULL};
static const char *const nm_outs_std[] = {"output", "mean", "std", NULL};
static const char *const nm_outs_var[] = {"output", "mean", "var", NULL};
/** LayerNorm's add_alias name (layer_norm.cc). */
static const char *const ln_aliases[] = {"_npx_layer_norm", NULL};

/** LayerNorm attributes (MXNet 1.9.1 LayerNormParam). */
static const mxk_attr_def ln_attrs[] = {
    MXK_SDK_ATTR("axis", MXK_ATTR_INT, 0, "-1", NULL, "The axis to perform layer normalization."),
    MXK_SDK_ATTR("eps", MXK_ATTR_FLOAT, 0, "1e-05", NULL,
                 "An `epsilon` parameter to prevent division by 0."),
    MXK_SDK_ATTR("output_mean_var", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Output the mean and std calculated along the given axis."),
};
/** InstanceNorm attributes (MXNet 1.9.1 InstanceNormParam). */
static const mxk_attr_def in_attrs[] = {
    MXK_SDK_ATTR("eps", MXK_ATTR_FLOAT, 0, "0.001", NULL,
                 "An `epsilon` parameter to prevent division by 0."),
};
/** GroupNorm attributes (MXNet 1.9.1 GroupNormParam). */
static const mxk_attr_def gn_attrs[] = {
    MXK_SDK_ATTR("num_groups", MXK_ATTR_INT, 0, "1", NULL, "Total number of groups."),
    MXK_SDK_ATTR("eps", MXK_ATTR_FLOAT, 0, "1e-05", NULL,
                 "An `epsilon` parameter to prevent division by 0."),
    MXK_SDK_ATTR("output_mean_var", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Output the mean and std calculated along the given axis."),
};

/** Parses the attributes of `kind` (those present in its schema); eps must be >= 0. */
static mxk_status nm_parse(const mxk_attrs *attrs, int32_t kind, void **out, mxk_error_sink *err) {
    nm_param p;
    memset(&p, 0, sizeof p);
    p.kind = kind;
    float eps = 0.0f;
    MXK_SDK_CHECK(cb_norm_attr_f32(attrs, "eps", &eps, err));
    if (!(eps >= 0.0f))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "attribute 'eps': must be >= 0, got %g",
                             (double)eps);
    p.eps = eps;
    if (kind == MXK_NORM_LAYER)
        MXK_SDK_CHECK(
            mxk_sdk_attr_int_range(attrs, "axis", -MXK_MAX_NDIM, MXK_MAX_NDIM - 1, &p.axis, err));
    if (kind == MXK_NORM_GROUP)
        MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_groups", 1, INT32_MAX, &p.groups, err));
    if (kind != MXK_NORM_INSTANCE)
        MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "output_mean_var", &p.output_mean_var, err));
    return cbt_param_new(&p, sizeof p, out, err);
}
/** parse_param of LayerNorm. */
static mxk_status ln_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return nm_parse(a, MXK_NORM_LAYER, o, e);
}
/** parse_param of InstanceNorm. */
static mxk_status in_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return nm_parse(a, MXK_NORM_INSTANCE, o, e);
}
/** parse_param of GroupNorm. */
static mxk_status gn_parse(const mxk_attrs *a, void **o, mxk_error_sink *e) {
    return nm_parse(a, MXK_NORM_GROUP, o, e);
}

/** Visible outputs: 3 with output_mean_var, else 1. */
static uint32_t nm_num_visible(const void *param) {
    const nm_param *p = param;
    return p->output_mean_var ? 3u : 1u;
}

/**
 * Checks a data shape for the operator and computes its view and the statistics'
 * shape (mxk_norm_moments_view). Errors (MXK_ERR_SHAPE): a shape not fully known,
 * LayerNorm's axis out of range, fewer than 3 dims for InstanceNorm / GroupNorm, C
 * not divisible by num_groups.
 */
static mxk_status nm_view_of(const nm_param *p, const mxk_shape *d, mxk_norm_view *v,
                             mxk_error_sink *err) {
    if (!mxk_sdk_shape_is_known(d)) {
        char b[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "argument 'data': shape %s is not fully known",
                             mxk_sdk_shape_format(d, b, sizeof b));
    }
    return mxk_norm_moments_view(p->kind, p->axis, p->groups, d, v, err);
}

/** Shape inference: output = data; gamma, beta (P,); statistics (see the file comment). */
static mxk_status nm_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const nm_param *p = param;
    if (num_in != 3 || num_out != 3)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected 3 arguments and 3 outputs");
    const char *const *outs = p->kind == MXK_NORM_INSTANCE ? nm_outs_var : nm_outs_std;
    MXK_SDK_CHECK(mxk_sdk_infer_shape_same(in, 1, nm_args, out, 1, outs, err));
    if (!mxk_sdk_shape_is_known(&in[0]))
        return MXK_OK;
    mxk_norm_view v;
    MXK_SDK_CHECK(nm_view_of(p, &in[0], &v, err));
    mxk_shape c = mxk_sdk_shape1((int64_t)v.P);
    if (p->kind == MXK_NORM_LAYER) {
        MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[1], &c, "argument", "gamma", err));
        MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[2], &c, "argument", "beta", err));
    } else {
        in[1] = in[2] = c;
    }
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[1], &v.stat, "output", outs[1], err));
    return mxk_sdk_shape_assign_named(&out[2], &v.stat, "output", outs[2], err);
}

/** Backward reads out_grad[0], data, gamma and both statistics. */
static void nm_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_in_data[0] = 1;
    need_in_data[1] = 1;
    need_out_data[1] = 1;
    need_out_data[2] = 1;
}

/** Checks a (n,)-element float32 tensor. */
static mxk_status nm_check_len(const mxk_tensor *t, uint64_t n, const char *what,
                               mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_check_tensor(t, what, err));
    if (mxk_sdk_shape_count(&t->shape) != n)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: expected %llu elements, got %llu", what,
                             (unsigned long long)n,
                             (unsigned long long)mxk_sdk_shape_count(&t->shape));
    return MXK_OK;
}

/** Index of gamma / beta for element k of group (o, i). */
static uint64_t nm_pidx(const nm_param *p, const mxk_norm_view *v, uint64_t o, uint64_t k) {
    return mxk_norm_param_index(p->kind == MXK_NORM_LAYER, v->P, o, k);
}

/** Forward: the statistics of every group, then the normalised, scaled output. */
static mxk_status nm_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const nm_param *p = param;
    const char *const *outs = p->kind == MXK_NORM_INSTANCE ? nm_outs_var : nm_outs_std;
    MXK_SDK_CHECK(cb_check_forward(args, 3, 3, nm_args, outs, nm_infer_shape, param, err));
    mxk_norm_view v;
    MXK_SDK_CHECK(nm_view_of(p, &args->in_data[0]->shape, &v, err));
    MXK_SDK_CHECK(nm_check_len(args->in_data[1], v.P, "argument 'gamma'", err));
    MXK_SDK_CHECK(nm_check_len(args->in_data[2], v.P, "argument 'beta'", err));
    const mxk_op_req *req = args->req;
    const float *x = cb_f32(args->in_data[0]), *gamma = cb_f32(args->in_data[1]),
                *beta = cb_f32(args->in_data[2]);
    float *y = req[0] != MXK_REQ_NULL ? cb_f32(args->out_data[0]) : NULL;
    float *mo = req[1] != MXK_REQ_NULL ? cb_f32(args->out_data[1]) : NULL;
    float *so = req[2] != MXK_REQ_NULL ? cb_f32(args->out_data[2]) : NULL;
    for (uint64_t o = 0; o < v.outer; o++)
        for (uint64_t i = 0; i < v.inner; i++) {
            const float *xp = x + o * v.K * v.inner + i;
            double s = 0.0, s2 = 0.0;
            for (uint64_t k = 0; k < v.K; k++)
                s += xp[k * v.inner];
            double m = s / (double)v.K;
            for (uint64_t k = 0; k < v.K; k++) {
                double dd = xp[k * v.inner] - m;
                s2 += dd * dd;
            }
            double var = s2 / (double)v.K, sd = sqrt(var + p->eps), inv = 1.0 / sd;
            uint64_t gi = o * v.inner + i;
            if (mo != NULL)
                mxk_sdk_assign_f32(&mo[gi], cb_norm_f32(m), req[1]);
            if (so != NULL)
                mxk_sdk_assign_f32(&so[gi], cb_norm_f32(p->kind == MXK_NORM_INSTANCE ? var : sd),
                                   req[2]);
            if (y == NULL)
                continue;
            float *yp = y + o * v.K * v.inner + i;
            for (uint64_t k = 0; k < v.K; k++) {
                uint64_t pi = nm_pidx(p, &v, o, k);
                float r = cb_norm_f32((xp[k * v.inner] - m) * inv * gamma[pi] + beta[pi]);
                mxk_sdk_assign_f32(&yp[k * v.inner], r, req[0]);
            }
        }
    return MXK_OK;
}

/** Writes zeros into a WRITE/INPLACE gradient so that the kernel can accumulate into it. */
static void nm_zero_for_sum(float *g, uint64_t n, mxk_op_req req) {
    if (g != NULL && req != MXK_REQ_ADD)
        memset(g, 0, (size_t)n * sizeof(float));
}

/** Backward: dx, dgamma, dbeta by their requests (see the file comment). */
static mxk_status nm_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const nm_param *p = param;
    MXK_SDK_CHECK(cb_check_backward_counts(args, 3, 3, nm_num_visible(p), err));
    const mxk_op_req *req = args->req;
    if (req[0] == MXK_REQ_NULL && req[1] == MXK_REQ_NULL && req[2] == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cb_check_tensor(args->in_data[0], "argument 'data'", err));
    const mxk_shape *ds = &args->in_data[0]->shape;
    mxk_norm_view v;
    MXK_SDK_CHECK(nm_view_of(p, ds, &v, err));
    uint64_t n = mxk_sdk_shape_count(ds), ng = v.outer * v.inner;
    MXK_SDK_CHECK(nm_check_len(args->out_grad[0], n, "gradient of 'output'", err));
    MXK_SDK_CHECK(nm_check_len(args->in_data[1], v.P, "argument 'gamma'", err));
    char what[32];
    snprintf(what, sizeof what, "output '%s'", p->kind == MXK_NORM_INSTANCE ? "var" : "std");
    MXK_SDK_CHECK(nm_check_len(args->out_data[1], ng, "output 'mean'", err));
    MXK_SDK_CHECK(nm_check_len(args->out_data[2], ng, what, err));
    mxk_shape cs = mxk_sdk_shape1((int64_t)v.P);
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req[0], ds, "data", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[1], req[1], &cs, "gamma", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[2], req[2], &cs, "beta", err));
    const float *x = cb_f32(args->in_data[0]), *gamma = cb_f32(args->in_data[1]);
    const float *dy = cb_f32(args->out_grad[0]), *mean = cb_f32(args->out_data[1]),
                *st = cb_f32(args->out_data[2]);
    float *dx = req[0] != MXK_REQ_NULL ? cb_f32(args->in_grad[0]) : NULL;
    float *dg = req[1] != MXK_REQ_NULL ? cb_f32(args->in_grad[1]) : NULL;
    float *db = req[2] != MXK_REQ_NULL ? cb_f32(args->in_grad[2]) : NULL;
    nm_zero_for_sum(dg, v.P, req[1]);
    nm_zero_for_sum(db, v.P, req[2]);
    for (uint64_t o = 0; o < v.outer; o++)
        for (uint64_t i = 0; i < v.inner; i++) {
            uint64_t gi = o * v.inner + i, base = o * v.K * v.inner + i;
            double m = mean[gi];
            double inv =
                p->kind == MXK_NORM_INSTANCE ? 1.0 / sqrt((double)st[gi] + p->eps) : 1.0 / st[gi];
            double sg = 0.0, sgx = 0.0;
            for (uint64_t k = 0; k < v.K; k++) {
                uint64_t e = base + k * v.inner, pi = nm_pidx(p, &v, o, k);
                double xh = (x[e] - m) * inv, g = (double)dy[e] * gamma[pi];
                sg += g;
                sgx += g * xh;
                if (dg != NULL)
                    dg[pi] += cb_norm_f32(dy[e] * xh);
                if (db != NULL)
                    db[pi] += dy[e];
            }
            if (dx == NULL)
                continue;
            double mg = sg / (double)v.K, mgx = sgx / (double)v.K;
            for (uint64_t k = 0; k < v.K; k++) {
                uint64_t e = base + k * v.inner, pi = nm_pidx(p, &v, o, k);
                double xh = (x[e] - m) * inv, g = (double)dy[e] * gamma[pi];
                mxk_sdk_assign_f32(&dx[e], cb_norm_f32(mxk_norm_moments_dx(inv, g, mg, xh, mgx)),
                                   req[0]);
            }
        }
    return MXK_OK;
}

/** Registers one of the three operators with its CPU kernel. */
static mxk_status nm_register_one(mxk_registrar *reg, const char *name, const char *doc,
                                  const mxk_attr_def *attrs, uint32_t num_attrs,
                                  mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *),
                                  const char *const *outs, int inplace, const char *const *aliases,
                                  mxk_error_sink *err) {
    mxk_op_def def;
    cbt_def_init(&def, doc, attrs, num_attrs, nm_args, parse);
    def.outputs = outs;
    def.num_visible_outputs = nm_num_visible;
    def.infer_shape = nm_infer_shape;
    def.backward_dependency = nm_backward_dependency;
    def.forward_inplace = inplace ? cbt_inplace_00 : NULL;
    def.aliases = aliases;
    return cbt_register(reg, &def, name, nm_forward, nm_backward, 0, err);
}

/** Registers LayerNorm, InstanceNorm and GroupNorm. */
mxk_status cb_register_norm_moments(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(nm_register_one(reg, "LayerNorm",
                                  "Normalises along one axis by its mean and variance, then "
                                  "scales by gamma and shifts by beta.",
                                  ln_attrs, MXK_SDK_COUNTOF(ln_attrs), ln_parse, nm_outs_std, 1,
                                  ln_aliases, err));
    MXK_SDK_CHECK(nm_register_one(reg, "InstanceNorm",
                                  "Normalises each channel of each example by its mean and "
                                  "variance, then scales by gamma and shifts by beta.",
                                  in_attrs, MXK_SDK_COUNTOF(in_attrs), in_parse, nm_outs_var, 0,
                                  NULL, err));
    return nm_register_one(reg, "GroupNorm",
                           "Normalises each group of channels of each example by its mean and "
                           "variance, then scales by gamma and shifts by beta per group.",
                           gn_attrs, MXK_SDK_COUNTOF(gn_attrs), gn_parse, nm_outs_std, 1, NULL,
                           err);
}
