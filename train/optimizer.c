/* Optimizers over the update operators (python/mxnet/optimizer/optimizer.py). */
#include <math.h>
#include <string.h>

#include "train_internal.h"

/** SGD(learning_rate, momentum, wd) with upstream defaults otherwise. */
void mxkt_optimizer_sgd(mxkt_optimizer *o, double lr, double momentum, double wd) {
    memset(o, 0, sizeof *o);
    o->kind = MXKT_OPT_SGD;
    o->lr = lr;
    o->momentum = momentum;
    o->wd = wd;
    o->rescale_grad = 1.0;
    o->clip_gradient = -1.0;
}

/** Adam(learning_rate, wd) with beta1 0.9, beta2 0.999, epsilon 1e-8. */
void mxkt_optimizer_adam(mxkt_optimizer *o, double lr, double wd) {
    memset(o, 0, sizeof *o);
    o->kind = MXKT_OPT_ADAM;
    o->lr = lr;
    o->wd = wd;
    o->rescale_grad = 1.0;
    o->clip_gradient = -1.0;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->epsilon = 1e-8;
}

/** Checks the hyper-parameters' ranges (see mxk_train.h). */
mxk_status mxkt_optimizer_check(const mxkt_optimizer *o) {
    if (o->kind != MXKT_OPT_SGD && o->kind != MXKT_OPT_ADAM)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "optimizer: kind must be SGD (0) or Adam (1), not %d", (int)o->kind);
    const char *name = o->kind == MXKT_OPT_ADAM ? "Adam" : "SGD";
#define RANGE(ok, what, value)                                                                     \
    if (!(ok))                                                                                     \
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "%s: %s, not %g", name, what, value);
    RANGE(isfinite(o->lr) && o->lr > 0.0, "learning_rate must be positive", o->lr)
    RANGE(isfinite(o->wd) && o->wd >= 0.0, "wd must be at least 0", o->wd)
    RANGE(isfinite(o->rescale_grad) && o->rescale_grad > 0.0, "rescale_grad must be positive",
          o->rescale_grad)
    RANGE(o->clip_gradient < 0.0 || (isfinite(o->clip_gradient) && o->clip_gradient > 0.0),
          "clip_gradient must be positive (negative: off)", o->clip_gradient)
    if (o->kind == MXKT_OPT_SGD) {
        RANGE(o->momentum >= 0.0 && o->momentum < 1.0, "momentum must be in [0, 1)", o->momentum)
    } else {
        RANGE(o->beta1 >= 0.0 && o->beta1 < 1.0, "beta1 must be in [0, 1)", o->beta1)
        RANGE(o->beta2 >= 0.0 && o->beta2 < 1.0, "beta2 must be in [0, 1)", o->beta2)
        RANGE(isfinite(o->epsilon) && o->epsilon > 0.0, "epsilon must be positive", o->epsilon)
    }
#undef RANGE
    return MXK_OK;
}

/** States per parameter: SGD momentum → 1 (mom), Adam → 2 (mean, var), else 0. */
uint32_t mxkt_optimizer_num_states(const mxkt_optimizer *o) {
    if (o->kind == MXKT_OPT_ADAM)
        return 2;
    return o->momentum != 0.0 ? 1 : 0;
}

/** upstream Optimizer.set_wd_mult: no decay unless the name ends in _weight or _gamma. */
double mxkt_optimizer_wd_mult(const char *name) {
    if (name == NULL)
        return 1.0;
    return mxkt_ends_with(name, "_weight") || mxkt_ends_with(name, "_gamma") ? 1.0 : 0.0;
}

/** _update_count(index) then _get_lr(index) (plus Adam's bias correction). */
double mxkt_optimizer_step(mxkt_optimizer *o, int32_t index) {
    int64_t t = 1;
    if (index >= 0 && index < MXKT_MAX_PARAMS) {
        t = ++o->counts[index];
        if (t > o->num_update)
            o->num_update = t;
    }
    double lr = o->sched.kind != MXKT_SCHED_NONE ? mxkt_lr_get(&o->sched, o->num_update) : o->lr;
    if (o->kind == MXKT_OPT_ADAM)
        lr *= sqrt(1.0 - pow(o->beta2, (double)t)) / (1.0 - pow(o->beta1, (double)t));
    return lr;
}

/** Runs sgd_update / sgd_mom_update / adam_update in place on `weight`. */
mxk_status mxkt_optimizer_apply(const mxkt_optimizer *o, double lr, double wd_mult,
                                mxk_ndarray *weight, mxk_ndarray *grad,
                                mxk_ndarray *const *states) {
    char v[8][40];
    const char *keys[8], *vals[8];
    uint32_t na = 0;
#define ATTR(k, x)                                                                                 \
    do {                                                                                           \
        snprintf(v[na], sizeof v[na], "%.17g", (double)(x));                                       \
        keys[na] = (k);                                                                            \
        vals[na] = v[na];                                                                          \
        na++;                                                                                      \
    } while (0)
    ATTR("lr", lr);
    ATTR("wd", o->wd * wd_mult);
    ATTR("rescale_grad", o->rescale_grad);
    ATTR("clip_gradient", o->clip_gradient);
    mxk_ndarray *in[4] = {weight, grad, NULL, NULL};
    uint32_t nin = 2;
    const char *op = "sgd_update";
    if (o->kind == MXKT_OPT_ADAM) {
        op = "adam_update";
        ATTR("beta1", o->beta1);
        ATTR("beta2", o->beta2);
        ATTR("epsilon", o->epsilon);
        in[2] = states[0];
        in[3] = states[1];
        nin = 4;
    } else if (o->momentum != 0.0) {
        op = "sgd_mom_update";
        ATTR("momentum", o->momentum);
        in[2] = states[0];
        nin = 3;
    }
#undef ATTR
    uint32_t nout = 1;
    mxk_ndarray *out[MXK_MAX_OUTPUTS] = {weight};
    mxk_status st = mxk_imperative_invoke(op, nin, in, &nout, out, na, keys, vals);
    if (st != MXK_OK)
        return mxkt_kernel_error(st, op);
    return MXK_OK;
}
