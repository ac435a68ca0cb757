/*
 * Optimizer update rules shared by the CPU and GPU backends: one element of
 * sgd_update, sgd_mom_update and adam_update, as MXK_HD functions that cpu-blas
 * (op_optimizer.c) and the cuda plugin (cu_kern_optimizer.cu) both call.
 * Semantics: MXNet src/operator/optimizer_op-inl.h (SGDKernel, SGDMomKernel,
 * AdamUpdateKernel). With r = rescale_grad and c = clip_gradient (off when c < 0):
 *   sgd      w' = (1 - lr wd) w - lr clip(r g, c)
 *   sgd_mom  m = momentum m - lr wd w - lr clip(r g, c);  w' = w + m
 *   adam     g' = clip(r g + wd w, c);  m = b1 m + (1 - b1) g';
 *            v = b2 v + (1 - b2) g'^2;  w' = w - lr m / (sqrt(v) + epsilon)
 */
#ifndef MXK_OPTIMIZER_H
#define MXK_OPTIMIZER_H

#include <math.h>

#include "mxk_hd.h"

/** The hyper-parameters of an update (the attributes of the operators, as float32). */
typedef struct mxk_opt_hparams {
    float lr, wd, rescale_grad, clip_gradient, momentum, beta1, beta2, epsilon;
} mxk_opt_hparams;

/** clip(x, c) with c < 0 meaning no clipping (MXNet's clip_gradient convention). */
MXK_HD float mxk_opt_clip(float x, float c) {
    if (c < 0.0f)
        return x;
    return x > c ? c : (x < -c ? -c : x);
}

/** The sgd_update of weight w with gradient g: the new weight. */
MXK_HD float mxk_opt_sgd(const mxk_opt_hparams *h, float w, float g) {
    return (1.0f - h->lr * h->wd) * w - h->lr * mxk_opt_clip(h->rescale_grad * g, h->clip_gradient);
}

/** The sgd_mom_update of w with gradient g: updates the momentum *m, returns the new weight. */
MXK_HD float mxk_opt_sgd_mom(const mxk_opt_hparams *h, float w, float g, float *m) {
    float mi = h->momentum * *m - h->lr * h->wd * w -
               h->lr * mxk_opt_clip(h->rescale_grad * g, h->clip_gradient);
    *m = mi;
    return w + mi;
}

/** The adam_update of w with gradient g: updates the moments *m, *v, returns the new weight. */
MXK_HD float mxk_opt_adam(const mxk_opt_hparams *h, float w, float g, float *m, float *v) {
    float gi = mxk_opt_clip(h->rescale_grad * g + h->wd * w, h->clip_gradient);
    float mi = h->beta1 * *m + (1.0f - h->beta1) * gi;
    float vi = h->beta2 * *v + (1.0f - h->beta2) * gi * gi;
    *m = mi;
    *v = vi;
    return w - h->lr * mi / (sqrtf(vi) + h->epsilon);
}

#endif /* MXK_OPTIMIZER_H */
