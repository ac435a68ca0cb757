/*
 * cpu-blas plugin: BatchNorm.
 *
 * Semantics: MXNet src/operator/nn/batch_norm-inl.h, batch_norm.cc. Arguments data, gamma, beta;
 * aux states moving_mean, moving_var; outputs output, mean, var (visible 1, or 3 with
 * output_mean_var). Data is viewed as (outer, C, inner) around `axis`.
 *   Training (is_train and not use_global_stats): per channel mean and biased
 *   variance over outer*inner elements, inv = 1/sqrt(var + eps) (0 for a
 *   constant channel with eps 0, as upstream),
 *   y = (x - mean) inv gamma + beta. The `mean` output holds the batch mean and
 *   the `var` output holds inv (as upstream: the name says var, the CPU kernel
 *   stores the inverse standard deviation there).
 *   Otherwise: mean / var are the moving statistics; mean output = moving_mean,
 *   var output = 1/sqrt(moving_var + eps).
 * fix_gamma: gamma is used as 1, its gradient is 0 (written by the request, so
 * ADD leaves it), and every forward writes 1 into the gamma argument where it is
 * not 1, as upstream's CPU kernel does. Like upstream (whose FMutateInputs lists
 * the aux states only) gamma is not declared as a mutated input, so symbol JSON
 * keeps MXNet's entry versions; the write happens under the forward's read of
 * gamma, so nothing may read gamma concurrently with a fix_gamma forward that
 * finds it other than 1 (only the first forward, or one after an optimizer step
 * with weight decay, writes).
 *
 * Moving statistics: updated in the training BACKWARD (is_train and not
 * use_global_stats), as upstream's CPU kernel (batch_norm.cc BatchNormBackwardImpl)
 * and its MKLDNN path do, from the saved mean and inverse standard deviation:
 *   moving_mean = moving_mean*momentum + mean*(1-momentum)
 *   moving_var  = moving_var*momentum + var*(1-momentum),  var = 1/inv^2 - eps
 * so a forward-only training pass (e.g. a monitor run) leaves them alone.
 *
 * Shapes: gamma, beta and the aux states are inferred as (C,) over whatever shape
 * they had (upstream's BatchNormShape assigns them); a bound array of another size
 * is refused by the kernel (upstream reads C values from it, out of bounds when it
 * is smaller).
 *
 * Backward (training), per channel with M elements, g = dy, gbar = mean(g),
 * dot = sum((x-mean) g), k = dot inv^2 / M:
 *   dx = (g - gbar - (x - mean) k) inv gamma;  dgamma = dot inv;  dbeta = sum g.
 * Global stats: dx = g inv gamma with inv from moving_var. It reads out_grad[0],
 * data, gamma and the mean / var outputs.
 */
#include <math.h>
#include <string.h>

#include "cb_tensor.h"
#include "norm_ops.h"

/** Parsed attributes of BatchNorm. */
typedef struct bn_param {
    double eps;
    float momentum; /**< float32, as upstream's BatchNormParam */
    int32_t fix_gamma;
    int32_t use_global_stats;
    int32_t output_mean_var;
    int64_t axis;
} bn_param;

static const char *const bn_args[] = {"data", "gamma", "beta", NULL};
static const char *const bn_outs[] = {"output", "mean", "var", NULL};
static const char *const bn_aux[] = {"moving_mean", "moving_var", NULL};
/** Upstream's add_alias name (batch_norm.cc). */
static const char *const bn_aliases[] = {"_npx_batch_norm", NULL};

/** Attribute schema (MXNet 1.9.1 BatchNormParam). */
static const mxk_attr_def bn_attrs[] = {
    MXK_SDK_ATTR("eps", MXK_ATTR_FLOAT, 0, "0.001", NULL, "Added to the variance."),
    MXK_SDK_ATTR("momentum", MXK_ATTR_FLOAT, 0, "0.9", NULL, "Momentum of the moving average."),
    MXK_SDK_ATTR("fix_gamma", MXK_ATTR_BOOL, 0, "True", NULL, "Fix gamma to 1 (no gradient)."),
    MXK_SDK_ATTR("use_global_stats", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Normalise with the moving statistics in training too."),
    MXK_SDK_ATTR("output_mean_var", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Expose the mean and var outputs."),
    MXK_SDK_ATTR("axis", MXK_ATTR_INT, 0, "1", NULL, "The channel axis."),
    MXK_SDK_ATTR("cudnn_off", MXK_ATTR_BOOL, 0, "False", NULL, "Turn off cuDNN (ignored)."),
};

/** Parses the attributes (eps >= 0; momentum any float32, as upstream). */
static mxk_status bn_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    bn_param p;
    MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, "eps", &p.eps, err));
    MXK_SDK_CHECK(cb_norm_attr_f32(attrs, "momentum", &p.momentum, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "fix_gamma", &p.fix_gamma, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "use_global_stats", &p.use_global_stats, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "output_mean_var", &p.output_mean_var, err));
    MXK_SDK_CHECK(
        mxk_sdk_attr_int_range(attrs, "axis", -MXK_MAX_NDIM, MXK_MAX_NDIM - 1, &p.axis, err));
    if (!(p.eps >= 0.0))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "attribute 'eps': must be >= 0, got %g",
                             p.eps);
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Visible outputs: 3 with output_mean_var, else 1. */
static uint32_t bn_num_visible(const void *param) {
    const bn_param *p = param;
    return p->output_mean_var ? 3u : 1u;
}

/** The channel axis of an ndim-D shape, or -1 when out of range. */
static int32_t bn_axis(const bn_param *p, int32_t ndim) {
    int64_t a = p->axis < 0 ? p->axis + ndim : p->axis;
    return a >= 0 && a < ndim ? (int32_t)a : -1;
}

/**
 * Shape inference: output = data; gamma, beta, mean, var and the aux states are
 * (C,), C = data[axis] (gamma, beta and the aux states whatever they were).
 */
static mxk_status bn_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                 uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const bn_param *p = param;
    if (num_in != 3 || num_out != 3 || (num_aux != 2 && num_aux != 0))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "BatchNorm expects 3 arguments, 3 outputs and 2 aux states");
    MXK_SDK_CHECK(mxk_sdk_infer_shape_same(in, 1, bn_args, out, 1, bn_outs, err));
    if (in[0].ndim == 0)
        return MXK_OK;
    int32_t ax = bn_axis(p, in[0].ndim);
    if (ax < 0)
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': axis %lld is out of range for %d dimensions",
                             (long long)p->axis, (int)in[0].ndim);
    if (in[0].dims[ax] == 0)
        return MXK_OK;
    mxk_shape c = mxk_sdk_shape1(in[0].dims[ax]);
    in[1] = in[2] = c; /* assigned over any given shape, as upstream's BatchNormShape */
    for (uint32_t i = 0; i < num_aux; i++)
        aux[i] = c;
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[1], &c, "output", "mean", err));
    return mxk_sdk_shape_assign_named(&out[2], &c, "output", "var", err);
}

/** All float32 (aux states too). */
static mxk_status bn_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                mxk_error_sink *err) {
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, bn_args, out, num_out, bn_outs, aux,
                                      num_aux, err);
}

/** Backward reads out_grad[0], data, gamma and the mean / var outputs. */
static void bn_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                   uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                   uint8_t *need_out_data) {
    need_out_grad[0] = 1;
    need_in_data[0] = 1;
    need_in_data[1] = 1;
    need_out_data[1] = 1;
    need_out_data[2] = 1;
}

/** (outer, C, inner) view of a data shape. */
typedef struct bn_view {
    int64_t outer, C, inner;
} bn_view;

/** Computes the view. */
static bn_view bn_view_of(const bn_param *p, const mxk_shape *d) {
    bn_view v;
    int32_t ax = bn_axis(p, d->ndim);
    v.outer = (int64_t)mxk_sdk_shape_prod(d, 0, ax);
    v.C = d->dims[ax];
    v.inner = (int64_t)mxk_sdk_shape_prod(d, ax + 1, d->ndim);
    return v;
}

/** Checks a (C,) tensor. */
static mxk_status bn_check_vec(const mxk_tensor *t, int64_t C, const char *what,
                               mxk_error_sink *err) {
    MXK_SDK_CHECK(cb_check_tensor(t, what, err));
    if (mxk_sdk_shape_count(&t->shape) != (uint64_t)C)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: expected %lld elements", what, (long long)C);
    return MXK_OK;
}

/** Checks the two aux states (moving_mean, moving_var), each (C,). */
static mxk_status bn_check_aux(uint32_t num_aux, const mxk_tensor *const *aux, int64_t C,
                               mxk_error_sink *err) {
    if (num_aux != 2)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "BatchNorm expects 2 aux states");
    MXK_SDK_CHECK(bn_check_vec(aux[0], C, "auxiliary state 'moving_mean'", err));
    return bn_check_vec(aux[1], C, "auxiliary state 'moving_var'", err);
}

/** Forward: statistics (batch or moving), normalisation; gamma := 1 with fix_gamma. */
static mxk_status bn_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *args, mxk_error_sink *err) {
    const bn_param *p = param;
    MXK_SDK_CHECK(cb_check_forward(args, 3, 3, bn_args, bn_outs, bn_infer_shape, param, err));
    bn_view v = bn_view_of(p, &args->in_data[0]->shape);
    MXK_SDK_CHECK(bn_check_vec(args->in_data[1], v.C, "argument 'gamma'", err));
    MXK_SDK_CHECK(bn_check_vec(args->in_data[2], v.C, "argument 'beta'", err));
    MXK_SDK_CHECK(bn_check_aux(args->num_aux, args->aux, v.C, err));
    const float *x = cb_f32(args->in_data[0]), *beta = cb_f32(args->in_data[2]);
    float *gamma = cb_f32(args->in_data[1]);
    const float *mm = cb_f32(args->aux[0]), *mv = cb_f32(args->aux[1]);
    const mxk_op_req *req = args->req;
    float *y = req[0] != MXK_REQ_NULL ? cb_f32(args->out_data[0]) : NULL;
    float *mo = req[1] != MXK_REQ_NULL ? cb_f32(args->out_data[1]) : NULL;
    float *vo = req[2] != MXK_REQ_NULL ? cb_f32(args->out_data[2]) : NULL;
    int train = ctx->is_train && !p->use_global_stats;
    const double M = (double)(v.outer * v.inner);
    for (int64_t c = 0; c < v.C; c++) {
        double mean, var;
        if (train) {
            double s = 0.0, s2 = 0.0;
            for (int64_t o = 0; o < v.outer; o++) {
                const float *xp = x + (o * v.C + c) * v.inner;
                for (int64_t i = 0; i < v.inner; i++)
                    s += xp[i];
            }
            mean = s / M;
            for (int64_t o = 0; o < v.outer; o++) {
                const float *xp = x + (o * v.C + c) * v.inner;
                for (int64_t i = 0; i < v.inner; i++) {
                    double d = xp[i] - mean;
                    s2 += d * d;
                }
            }
            var = s2 / M;
        } else {
            mean = mm[c];
            var = mv[c];
        }
        /* upstream: a constant channel with eps 0 gets inv 0, not a division by zero */
        double inv = train && var == 0.0 && p->eps == 0.0 ? 0.0 : 1.0 / sqrt(var + p->eps);
        if (p->fix_gamma && gamma[c] != 1.0f)
            gamma[c] = 1.0f;
        float g = gamma[c];
        float scale = cb_norm_f32(inv * g), shift = cb_norm_f32(beta[c] - mean * inv * g);
        if (y != NULL)
            for (int64_t o = 0; o < v.outer; o++) {
                const float *xp = x + (o * v.C + c) * v.inner;
                float *yp = y + (o * v.C + c) * v.inner;
                if (req[0] == MXK_REQ_ADD)
                    for (int64_t i = 0; i < v.inner; i++)
                        yp[i] += xp[i] * scale + shift;
                else
                    for (int64_t i = 0; i < v.inner; i++)
                        yp[i] = xp[i] * scale + shift;
            }
        if (mo != NULL)
            mxk_sdk_assign_f32(&mo[c], (float)mean, req[1]);
        if (vo != NULL)
            mxk_sdk_assign_f32(&vo[c], cb_norm_f32(inv), req[2]);
    }
    return MXK_OK;
}

/**
 * Backward: in training (is_train and not use_global_stats) the moving-average
 * update from the saved mean / inverse std, then dx, dgamma, dbeta by their
 * requests (see the file comment).
 */
static mxk_status bn_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_backward_args *args, mxk_error_sink *err) {
    const bn_param *p = param;
    uint32_t nv = bn_num_visible(p);
    MXK_SDK_CHECK(cb_check_backward_counts(args, 3, 3, nv, err));
    MXK_SDK_CHECK(cb_check_tensor(args->in_data[0], "argument 'data'", err));
    const mxk_shape *ds = &args->in_data[0]->shape;
    mxk_shape in[3] = {*ds, mxk_sdk_shape_unknown(), mxk_sdk_shape_unknown()};
    mxk_shape outs[3] = {mxk_sdk_shape_unknown(), mxk_sdk_shape_unknown(), mxk_sdk_shape_unknown()};
    MXK_SDK_CHECK(bn_infer_shape(p, in, 3, outs, 3, NULL, 0, err));
    bn_view v = bn_view_of(p, ds);
    MXK_SDK_CHECK(bn_check_aux(args->num_aux, args->aux, v.C, err));
    float *mm = cb_f32(args->aux[0]), *mv = cb_f32(args->aux[1]);
    int train = ctx->is_train && !p->use_global_stats;
    const float *meanp = mm, *invp = NULL;
    if (train) {
        MXK_SDK_CHECK(bn_check_vec(args->out_data[1], v.C, "output 'mean'", err));
        MXK_SDK_CHECK(bn_check_vec(args->out_data[2], v.C, "output 'var'", err));
        meanp = cb_f32(args->out_data[1]);
        invp = cb_f32(args->out_data[2]);
        for (int64_t c = 0; c < v.C; c++) {
            double var = invp[c] > 0.0f ? 1.0 / ((double)invp[c] * invp[c]) - p->eps : INFINITY;
            /* float32 arithmetic, as upstream's AccReal: overflow gives inf, not UB */
            const float mom = p->momentum;
            mm[c] = mm[c] * mom + meanp[c] * (1.0f - mom);
            mv[c] = mv[c] * mom + cb_norm_f32(var) * (1.0f - mom);
        }
    }
    const mxk_op_req *req = args->req;
    if (req[0] == MXK_REQ_NULL && req[1] == MXK_REQ_NULL && req[2] == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cb_check_tensor(args->out_grad[0], "gradient of 'output'", err));
    if (!mxk_sdk_shape_equal(&args->out_grad[0]->shape, ds))
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "gradient of 'output' does not match the data");
    MXK_SDK_CHECK(bn_check_vec(args->in_data[1], v.C, "argument 'gamma'", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[0], req[0], ds, "data", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[1], req[1], &in[1], "gamma", err));
    MXK_SDK_CHECK(cb_check_grad(args->in_grad[2], req[2], &in[2], "beta", err));
    const float *x = cb_f32(args->in_data[0]), *gamma = cb_f32(args->in_data[1]);
    const float *dy = cb_f32(args->out_grad[0]);
    const double M = (double)(v.outer * v.inner);
    for (int64_t c = 0; c < v.C; c++) {
        double mean = meanp[c];
        double inv = train ? invp[c] : 1.0 / sqrt((double)mv[c] + p->eps);
        double sg = 0.0, dot = 0.0;
        for (int64_t o = 0; o < v.outer; o++) {
            const float *xp = x + (o * v.C + c) * v.inner, *gp = dy + (o * v.C + c) * v.inner;
            for (int64_t i = 0; i < v.inner; i++) {
                sg += gp[i];
                dot += (xp[i] - mean) * gp[i];
            }
        }
        float g = p->fix_gamma ? 1.0f : gamma[c];
        if (req[1] != MXK_REQ_NULL)
            mxk_sdk_assign_f32(&cb_f32(args->in_grad[1])[c],
                               p->fix_gamma ? 0.0f : cb_norm_f32(dot * inv), req[1]);
        if (req[2] != MXK_REQ_NULL)
            mxk_sdk_assign_f32(&cb_f32(args->in_grad[2])[c], cb_norm_f32(sg), req[2]);
        if (req[0] == MXK_REQ_NULL)
            continue;
        float *dx = cb_f32(args->in_grad[0]);
        double gbar = train ? sg / M : 0.0, k = train ? dot * inv * inv / M : 0.0;
        double s = inv * g;
        for (int64_t o = 0; o < v.outer; o++) {
            const float *xp = x + (o * v.C + c) * v.inner, *gp = dy + (o * v.C + c) * v.inner;
            float *dp = dx + (o * v.C + c) * v.inner;
            for (int64_t i = 0; i < v.inner; i++) {
                float r = cb_norm_f32((gp[i] - gbar - (xp[i] - mean) * k) * s);
                mxk_sdk_assign_f32(&dp[i], r, req[0]);
            }
        }
    }
    return MXK_OK;
}

/**
 * input_var_attrs (ABI 1.3), MXNet's FSetInputVarAttrOnCompose of BatchNorm
 * (src/operator/nn/batch_norm.cc): input 3 (moving_mean) gets `__init__`
 * ["zero", {}] and input 4 (moving_var) ["one", {}], so that initialisers start
 * the moving statistics at 0 and 1 whatever their default for other arrays.
 */
static mxk_status bn_input_var_attrs(const void *param, uint32_t index, mxk_name_list *out,
                                     mxk_error_sink *err) {
    static const char *const inits[2] = {"[\"zero\", {}]", "[\"one\", {}]"};
    if (index != 3 && index != 4)
        return MXK_OK;
    MXK_SDK_CHECK(mxk_sdk_host()->name_list_add(out, "__init__", err));
    return mxk_sdk_host()->name_list_add(out, inits[index - 3], err);
}

/** Registers BatchNorm and its CPU kernel. */
mxk_status cb_register_batchnorm(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = "BatchNorm";
    def.description = "Batch normalisation with moving statistics as auxiliary states.";
    def.attrs = bn_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(bn_attrs);
    def.arguments = bn_args;
    def.outputs = bn_outs;
    def.aux_states = bn_aux;
    def.parse_param = bn_parse;
    def.free_param = cbt_param_free;
    def.num_visible_outputs = bn_num_visible;
    def.infer_shape = bn_infer_shape;
    def.infer_type = bn_infer_type;
    def.backward_dependency = bn_backward_dependency;
    def.aliases = bn_aliases;
    def.input_var_attrs = bn_input_var_attrs;
    mxk_op_kernel_def k;
    cb_kernel_init(&k, "BatchNorm", bn_forward, bn_backward);
    return cb_register(reg, &def, &k, err);
}
