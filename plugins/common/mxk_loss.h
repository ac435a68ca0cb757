/*
 * Loss-layer gradients shared by the CPU and GPU backends, as MXK_HD functions
 * that cpu-blas (op_softmax_output.c, op_regression.c, op_norm_loss.c) and the
 * cuda plugin (cu_kern_loss.cu) both call: the class of a float label, the
 * ignore_label test, and one element of the gradients of SoftmaxOutput,
 * the regression outputs and SVMOutput. Semantics: MXNet
 * src/operator/softmax_output-inl.h, regression_output-inl.h, svm_output-inl.h
 * (and mshadow's SoftmaxGrad, L1_SVM, L2_SVM).
 */
#ifndef MXK_LOSS_H
#define MXK_LOSS_H

#include <math.h>
#include <stdint.h>

#include "mxk_hd.h"

/** Class index of a float label (truncated toward zero); -1 (no class) outside [0, k) or NaN. */
MXK_HD int64_t mxk_loss_class(float label, uint64_t k) {
    if (!(label > -1.0f && label < (float)k))
        return -1;
    return (int64_t)label;
}

/** 1 when a label equals ignore_label after both are truncated to int (as MXNet compares). */
MXK_HD int mxk_loss_ignored(float label, double ignore) {
    if (!(label > -2147483648.0f && label < 2147483648.0f))
        return 0;
    return (int64_t)label == (int64_t)ignore;
}

/**
 * SoftmaxOutput's gradient of output y for class labels: (y - t) * scale with target
 * t = 1 - alpha for the label's class and `off` (alpha / (k - 1)) elsewhere; 0 for an
 * ignored label.
 */
MXK_HD float mxk_loss_softmax_grad(float y, int is_class, int ignored, float alpha, float off,
                                   float scale) {
    float t = is_class ? 1.0f - alpha : off;
    return ignored ? 0.0f : (y - t) * scale;
}

/** The logistic regression output: 1 / (1 + e^-x). */
MXK_HD float mxk_loss_sigmoid(float x) {
    return 1.0f / (1.0f + expf(-x));
}

/** The regression gradient of output y and label l: scale (y - l), or scale sign(y - l) (MAE). */
MXK_HD float mxk_loss_regression_grad(float y, float l, int mae, float scale) {
    float d = y - l;
    if (mae)
        d = (float)((d > 0.0f) - (d < 0.0f));
    return scale * d;
}

/**
 * SVMOutput's gradient of score s with margin m and coefficient c: for the label's
 * class -2c max(m - s, 0) (L2) or -c [m > s] (L1, `linear`), for the others
 * 2c max(m + s, 0) or c [m > -s].
 */
MXK_HD float mxk_loss_svm_grad(float s, int is_class, float m, float c, int linear) {
    if (is_class)
        return linear ? -(float)(m > s) * c : (m > s ? -2.0f * c * (m - s) : 0.0f);
    return linear ? (float)(m > -s) * c : (m > -s ? 2.0f * c * (m + s) : 0.0f);
}

#endif /* MXK_LOSS_H */
