/*
 * cpu-blas plugin: optimizer update operators sgd_update, sgd_mom_update, adam_update.
 *
 * Semantics: MXNet src/operator/optimizer_op-inl.h (SGDKernel, SGDMomKernel,
 * AdamUpdateKernel) and optimizer_op.cc; the per-element rules are
 * plugins/common/mxk_optimizer.h's, which the GPU kernels share.
 * With r = rescale_grad, c = clip_gradient (clipping off when c < 0):
 *   sgd_update      w' = (1 - lr wd) w - lr clip(r g, c)
 *   sgd_mom_update  m = momentum m - lr wd w - lr clip(r g, c);  w' = w + m
 *   adam_update     g' = clip(r g + wd w, c); m = b1 m + (1-b1) g';
 *                   v = b2 v + (1-b2) g'^2;  w' = w - lr m / (sqrt(v) + epsilon)
 * adam_update does not bias-correct: the Python Adam optimizer passes
 * lr_t = lr sqrt(1 - b2^t) / (1 - b1^t). The arguments are weight and grad; the
 * states (mom; mean, var) are auxiliary states updated in place, as MXNet lists an
 * operator's mutated inputs (FMutateInputs) under list_auxiliary_states; the
 * new weight goes to the output by its request, normally in place over `weight`
 * (forward in-place hint). Imperative calls pass weight, grad, then the states.
 * No gradient (no_gradient); `lazy_update` is accepted for MXNet compatibility
 * and has no effect on dense arrays.
 */
#include <stdio.h>

#include "cb_tensor.h"
#include "mxk_optimizer.h"

/** The three update rules. */
enum opt_kind { OPT_SGD, OPT_SGD_MOM, OPT_ADAM };

/** Parsed attributes of an update operator. */
typedef struct opt_param {
    int32_t kind; /**< enum opt_kind */
    mxk_opt_hparams h;
} opt_param;

static const char *const opt_args[] = {"weight", "grad", NULL};
static const char *const opt_outs[] = {"output", NULL};
static const char *const sgd_mom_aux[] = {"mom", NULL};
static const char *const adam_aux[] = {"mean", "var", NULL};

#define OPT_COMMON_ATTRS                                                                           \
    MXK_SDK_ATTR("lr", MXK_ATTR_FLOAT, 1, NULL, NULL, "Learning rate."),                           \
        MXK_SDK_ATTR("wd", MXK_ATTR_FLOAT, 0, "0", NULL, "Weight decay (L2 regularisation)."),     \
        MXK_SDK_ATTR("rescale_grad", MXK_ATTR_FLOAT, 0, "1", NULL,                                 \
                     "Rescales the gradient: grad = rescale_grad * grad."),                        \
        MXK_SDK_ATTR("clip_gradient", MXK_ATTR_FLOAT, 0, "-1", NULL,                               \
                     "Clips the gradient to [-clip_gradient, clip_gradient]; < 0: off."),          \
        MXK_SDK_ATTR("lazy_update", MXK_ATTR_BOOL, 0, "True", NULL,                                \
                     "Lazy update for row-sparse gradients; no effect on dense arrays.")

/** Attribute schema of sgd_update (MXNet 1.9.1 SGDParam). */
static const mxk_attr_def sgd_attrs[] = {OPT_COMMON_ATTRS};
/** Attribute schema of sgd_mom_update (SGDMomParam). */
static const mxk_attr_def sgd_mom_attrs[] = {
    OPT_COMMON_ATTRS,
    MXK_SDK_ATTR("momentum", MXK_ATTR_FLOAT, 0, "0", NULL, "The decay rate of momentum."),
};
/** Attribute schema of adam_update (AdamParam). */
static const mxk_attr_def adam_attrs[] = {
    OPT_COMMON_ATTRS,
    MXK_SDK_ATTR("beta1", MXK_ATTR_FLOAT, 0, "0.9", NULL, "Decay rate of the first moment."),
    MXK_SDK_ATTR("beta2", MXK_ATTR_FLOAT, 0, "0.999", NULL, "Decay rate of the second moment."),
    MXK_SDK_ATTR("epsilon", MXK_ATTR_FLOAT, 0, "1e-8", NULL, "Small constant for stability."),
};

/** Reads real attribute `key` as float (absent: `dflt`). */
static mxk_status opt_get(const mxk_attrs *attrs, const char *key, float dflt, float *v,
                          mxk_error_sink *err) {
    double d = dflt;
    if (mxk_sdk_attr_is_set(attrs, key))
        MXK_SDK_CHECK(mxk_sdk_attr_float_finite(attrs, key, &d, err));
    *v = (float)d;
    return MXK_OK;
}

/** Parses the attributes of one rule. */
static mxk_status opt_parse(const mxk_attrs *attrs, int32_t kind, void **out, mxk_error_sink *err) {
    opt_param p = {.kind = kind};
    MXK_SDK_CHECK(opt_get(attrs, "lr", 0.0f, &p.h.lr, err));
    MXK_SDK_CHECK(opt_get(attrs, "wd", 0.0f, &p.h.wd, err));
    MXK_SDK_CHECK(opt_get(attrs, "rescale_grad", 1.0f, &p.h.rescale_grad, err));
    MXK_SDK_CHECK(opt_get(attrs, "clip_gradient", -1.0f, &p.h.clip_gradient, err));
    MXK_SDK_CHECK(opt_get(attrs, "momentum", 0.0f, &p.h.momentum, err));
    MXK_SDK_CHECK(opt_get(attrs, "beta1", 0.9f, &p.h.beta1, err));
    MXK_SDK_CHECK(opt_get(attrs, "beta2", 0.999f, &p.h.beta2, err));
    MXK_SDK_CHECK(opt_get(attrs, "epsilon", 1e-8f, &p.h.epsilon, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** parse_param of sgd_update. */
static mxk_status sgd_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return opt_parse(attrs, OPT_SGD, out, err);
}
/** parse_param of sgd_mom_update. */
static mxk_status sgd_mom_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return opt_parse(attrs, OPT_SGD_MOM, out, err);
}
/** parse_param of adam_update. */
static mxk_status adam_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    return opt_parse(attrs, OPT_ADAM, out, err);
}

/** weight, grad, output and the states all have one shape. */
static mxk_status opt_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    const opt_param *p = param;
    const char *const *aux_names = p->kind == OPT_ADAM ? adam_aux : sgd_mom_aux;
    /* arguments with the output, the states with it, then the arguments again (a shape
     * known only from a state reaches them) */
    MXK_SDK_CHECK(mxk_sdk_infer_shape_same(in, num_in, opt_args, out, num_out, opt_outs, err));
    MXK_SDK_CHECK(mxk_sdk_infer_shape_same(aux, num_aux, aux_names, out, num_out, opt_outs, err));
    return mxk_sdk_infer_shape_same(in, num_in, opt_args, out, num_out, opt_outs, err);
}

/** Update operators have no gradient. */
static int32_t opt_no_gradient(const void *param) {
    return 1;
}

/** One update call: its tensors, split by element ranges over the kernel's threads. */
typedef struct opt_run {
    const opt_param *p;
    const float *w, *g;
    float *m, *v; /**< states (mom; mean, var), NULL when the rule has none */
    float *out;
    mxk_op_req req;
} opt_run;

/** Fewest elements per thread worth splitting an update for. */
#define OPT_GRAIN 32768

/** The update of elements [b, e); `out` may be `weight` (in place). */
static void opt_part(void *arg, int64_t b, int64_t e) {
    const opt_run *u = arg;
    const opt_param *p = u->p;
    const mxk_opt_hparams *h = &p->h;
    const float *w = u->w, *g = u->g;
    float *out = u->out, *m = u->m, *v = u->v;
    const mxk_op_req req = u->req;
    if (p->kind == OPT_SGD) {
        for (int64_t i = b; i < e; i++)
            mxk_sdk_assign_f32(&out[i], mxk_opt_sgd(h, w[i], g[i]), req);
    } else if (p->kind == OPT_SGD_MOM && h->clip_gradient < 0.0f &&
               (req == MXK_REQ_WRITE || req == MXK_REQ_INPLACE)) {
        /* the common case (no clipping, a plain store) as loops the compiler
         * vectorises: the same rule as the general loop below; in place through
         * one pointer, since a run-time overlap check would send out == weight to
         * the scalar version */
        mxk_opt_hparams hc = *h;
        if (out == w)
            for (int64_t i = b; i < e; i++)
                out[i] = mxk_opt_sgd_mom(&hc, out[i], g[i], &m[i]);
        else
            for (int64_t i = b; i < e; i++)
                out[i] = mxk_opt_sgd_mom(&hc, w[i], g[i], &m[i]);
    } else if (p->kind == OPT_SGD_MOM) {
        for (int64_t i = b; i < e; i++)
            mxk_sdk_assign_f32(&out[i], mxk_opt_sgd_mom(h, w[i], g[i], &m[i]), req);
    } else {
        for (int64_t i = b; i < e; i++)
            mxk_sdk_assign_f32(&out[i], mxk_opt_adam(h, w[i], g[i], &m[i], &v[i]), req);
    }
}

/** One update, split over the kernel's threads; `out` may be `weight` (in place). */
static mxk_status opt_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const opt_param *p = param;
    uint32_t naux = p->kind == OPT_ADAM ? 2 : p->kind == OPT_SGD_MOM ? 1 : 0;
    MXK_SDK_CHECK(cbt_check_forward(args, 2, 1, cbt_infer_shape_same, param, 0, err));
    int64_t n = (int64_t)mxk_sdk_shape_count(&args->in_data[0]->shape);
    if (args->num_aux != naux)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "expected %u auxiliary states, got %u",
                             (unsigned)naux, (unsigned)args->num_aux);
    for (uint32_t i = 0; i < naux; i++) {
        const char *name = (p->kind == OPT_ADAM ? adam_aux : sgd_mom_aux)[i];
        char what[48];
        snprintf(what, sizeof what, "auxiliary state '%s'", name);
        MXK_SDK_CHECK(cb_check_tensor(args->aux[i], what, err));
        if (mxk_sdk_shape_count(&args->aux[i]->shape) != (uint64_t)n)
            return mxk_sdk_error(err, MXK_ERR_SHAPE, "%s: not the size of 'weight'", what);
    }
    opt_run u = {p,
                 cb_f32(args->in_data[0]),
                 cb_f32(args->in_data[1]),
                 naux > 0 ? cb_f32(args->aux[0]) : NULL,
                 naux > 1 ? cb_f32(args->aux[1]) : NULL,
                 cb_f32(args->out_data[0]),
                 args->req[0]};
    cb_parallel_for(ctx, n, OPT_GRAIN, opt_part, &u);
    return MXK_OK;
}

/** Registers one update operator. */
static mxk_status
opt_register_one(mxk_registrar *reg, const char *name, const char *doc,
                 const char *const *aux_states, const mxk_attr_def *attrs, uint32_t num_attrs,
                 mxk_status (*parse)(const mxk_attrs *, void **, mxk_error_sink *),
                 mxk_error_sink *err) {
    mxk_op_def def;
    cbt_def_init(&def, doc, attrs, num_attrs, opt_args, parse);
    def.aux_states = aux_states;
    def.infer_shape = opt_infer_shape;
    def.forward_inplace = cbt_inplace_00;
    def.no_gradient = opt_no_gradient;
    return cbt_register(reg, &def, name, opt_forward, NULL, 0, err);
}

/** Registers sgd_update, sgd_mom_update and adam_update with their CPU kernels. */
mxk_status cb_register_optimizer(mxk_registrar *reg, mxk_error_sink *err) {
    MXK_SDK_CHECK(opt_register_one(reg, "sgd_update",
                                   "SGD update: weight = (1 - lr*wd)*weight - lr*clip(rescale_grad*"
                                   "grad, clip_gradient).",
                                   NULL, sgd_attrs, MXK_SDK_COUNTOF(sgd_attrs), sgd_parse, err));
    MXK_SDK_CHECK(opt_register_one(reg, "sgd_mom_update",
                                   "SGD with momentum: mom = momentum*mom - lr*wd*weight - "
                                   "lr*clip(rescale_grad*grad); weight += mom.",
                                   sgd_mom_aux, sgd_mom_attrs, MXK_SDK_COUNTOF(sgd_mom_attrs),
                                   sgd_mom_parse, err));
    return opt_register_one(reg, "adam_update",
                            "Adam update (no bias correction: pass the corrected lr).", adam_aux,
                            adam_attrs, MXK_SDK_COUNTOF(adam_attrs), adam_parse, err);
}
