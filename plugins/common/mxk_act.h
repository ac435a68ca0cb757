/*
 * Element functions of Activation and LeakyReLU and their gradients, shared by
 * the CPU (cpu-blas op_activation.c, op_leaky_relu.c) and GPU (cuda
 * cu_kern_act.cu) kernels so that both compute one formula (mxk_hd.h).
 *
 * Semantics: MXNet src/operator/mshadow_op.h (relu, sigmoid, tanh, softrelu,
 * softsign, xelu, elu, selu, gelu and their *_grad functors),
 * src/operator/nn/activation-inl.h and src/operator/leaky_relu-inl.h. Gradients
 * take the output y where the operator's backward keeps it (relu, sigmoid, tanh,
 * softrelu, leaky, elu, selu) and the input x otherwise (softsign, gelu).
 */
#ifndef MXK_ACT_H
#define MXK_ACT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "mxk_hd.h"

/** Activation's act_type values, in the order of the operator's enum string. */
enum mxk_act_type {
    MXK_ACT_RELU,
    MXK_ACT_SIGMOID,
    MXK_ACT_TANH,
    MXK_ACT_SOFTRELU,
    MXK_ACT_SOFTSIGN
};
/** Activation's act_type enum string. */
#define MXK_ACT_TYPES "relu|sigmoid|tanh|softrelu|softsign"

/** LeakyReLU's act_type values, in upstream's order of the enum string. */
enum mxk_lrelu_type {
    MXK_LR_RRELU,
    MXK_LR_LEAKY,
    MXK_LR_PRELU,
    MXK_LR_ELU,
    MXK_LR_SELU,
    MXK_LR_GELU
};
/** LeakyReLU's act_type enum string. */
#define MXK_LR_TYPES "rrelu|leaky|prelu|elu|selu|gelu"

/** SELU's constants (mshadow_op.h SELU_LAMBDA, SELU_ALPHA). */
#define MXK_SELU_L 1.0507009873554804934193349852946f
#define MXK_SELU_A 1.6732632423543772848170429916717f

/** relu: x > 0 ? x : 0. */
MXK_HD float mxk_act_relu(float x) {
    return x > 0.0f ? x : 0.0f;
}

/** sigmoid: 1 / (1 + e^-x). */
MXK_HD float mxk_act_sigmoid(float x) {
    return 1.0f / (1.0f + expf(-x));
}

/** softrelu: log(1 + e^x), x itself above 20. */
MXK_HD float mxk_act_softrelu(float x) {
    return x > 20.0f ? x : log1pf(expf(x));
}

/** softsign: x / (1 + |x|). */
MXK_HD float mxk_act_softsign(float x) {
    return x / (1.0f + fabsf(x));
}

/**
 * tanh of a float, branch-free so that the CPU loops calling it vectorise (libm's
 * tanhf is a scalar call). Cephes' tanhf method, both branches computed and one
 * selected: |x| < 0.625 an odd polynomial x + x^3 P(x^2); otherwise
 * 1 - 2 / (e^(2|x|) + 1) with e^t from Cephes' expf (t = n ln2 + r, |r| <= ln2/2,
 * a degree-6 polynomial in r, 2^n from the exponent bits). |x| is clamped to 10
 * first, where tanh rounds to 1 in float32, so e^t cannot overflow and n is in
 * [0, 29]. The sign is copied back; NaN propagates. Accurate to a few float32
 * ulps (tested against double tanh in tests/cpu_blas).
 */
MXK_HD float mxk_act_tanh(float x) {
    /* no float compares and no branches: under -ftrapping-math GCC would sink
     * each branch's arithmetic into a conditional block it cannot if-convert
     * (the division may trap), and the loop would stay scalar */
    uint32_t ux, ua;
    memcpy(&ux, &x, sizeof ux);
    ua = ux & UINT32_C(0x7FFFFFFF);
    const uint32_t ten = UINT32_C(0x41200000); /* 10.0f; NaN patterns are larger */
    const uint32_t uc = ua < ten ? ua : ten;
    float a;
    memcpy(&a, &uc, sizeof a);
    /* large branch: e^(2a) */
    const float t = a + a;
    const float magic = 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    const float rn = t * 1.44269504088896341f + magic;
    const float n = rn - magic;
    uint32_t nb;
    memcpy(&nb, &rn, sizeof nb);
    float r = t - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    const float r2 = r * r;
    float e = 1.9875691500e-4f;
    e = e * r + 1.3981999507e-3f;
    e = e * r + 8.3334519073e-3f;
    e = e * r + 4.1665795894e-2f;
    e = e * r + 1.6666665459e-1f;
    e = e * r + 5.0000001201e-1f;
    e = e * r2 + r + 1.0f;
    const uint32_t sb = ((nb - UINT32_C(0x4B400000)) + 127u) << 23; /* 2^n */
    float scale;
    memcpy(&scale, &sb, sizeof scale);
    e *= scale;
    const float big = 1.0f - 2.0f / (e + 1.0f);
    /* small branch */
    const float z = a * a;
    float q = -5.70498872745e-3f;
    q = q * z + 2.06390887954e-2f;
    q = q * z - 5.37397155531e-2f;
    q = q * z + 1.33314422036e-1f;
    q = q * z - 3.33332819422e-1f;
    const float small = q * z * a + a;
    /* select by masks; the sign of x copied back; NaN returned as is */
    uint32_t us, ub;
    memcpy(&us, &small, sizeof us);
    memcpy(&ub, &big, sizeof ub);
    const uint32_t sm = UINT32_C(0) - (uint32_t)(ua < UINT32_C(0x3F200000)); /* 0.625f */
    uint32_t uy = ((us & sm) | (ub & ~sm)) | (ux & UINT32_C(0x80000000));
    const uint32_t nan = UINT32_C(0) - (uint32_t)(ua > UINT32_C(0x7F800000));
    uy = (ux & nan) | (uy & ~nan);
    float y;
    memcpy(&y, &uy, sizeof y);
    return y;
}

/** relu's gradient from the output: dy where y > 0. */
MXK_HD float mxk_act_relu_grad(float dy, float y) {
    return y > 0.0f ? dy : 0.0f;
}

/** sigmoid's gradient from the output: dy y (1 - y). */
MXK_HD float mxk_act_sigmoid_grad(float dy, float y) {
    return (dy * y) * (1.0f - y);
}

/** tanh's gradient from the output: dy (1 - y^2). */
MXK_HD float mxk_act_tanh_grad(float dy, float y) {
    return dy * (1.0f - y * y);
}

/** softrelu's gradient from the output: dy (1 - e^-y). */
MXK_HD float mxk_act_softrelu_grad(float dy, float y) {
    return dy * -expm1f(-y);
}

/** softsign's gradient from the input: dy / (1 + |x|)^2. */
MXK_HD float mxk_act_softsign_grad(float dy, float x) {
    return dy / ((1.0f + fabsf(x)) * (1.0f + fabsf(x)));
}

/** Activation's y = f(x) for act_type `act` (enum mxk_act_type). */
MXK_HD float mxk_act_f(int32_t act, float x) {
    switch (act) {
    case MXK_ACT_RELU:
        return mxk_act_relu(x);
    case MXK_ACT_SIGMOID:
        return mxk_act_sigmoid(x);
    case MXK_ACT_TANH:
        return mxk_act_tanh(x);
    case MXK_ACT_SOFTRELU:
        return mxk_act_softrelu(x);
    default:
        return mxk_act_softsign(x);
    }
}

/** Activation's dx from dy and r, the output (the input for softsign). */
MXK_HD float mxk_act_grad(int32_t act, float dy, float r) {
    switch (act) {
    case MXK_ACT_RELU:
        return mxk_act_relu_grad(dy, r);
    case MXK_ACT_SIGMOID:
        return mxk_act_sigmoid_grad(dy, r);
    case MXK_ACT_TANH:
        return mxk_act_tanh_grad(dy, r);
    case MXK_ACT_SOFTRELU:
        return mxk_act_softrelu_grad(dy, r);
    default:
        return mxk_act_softsign_grad(dy, r);
    }
}

/** y of LeakyReLU's leaky, elu, selu and gelu (enum mxk_lrelu_type) at x. */
MXK_HD float mxk_lrelu_f(int32_t act, float slope, float x) {
    switch (act) {
    case MXK_LR_LEAKY:
        return x > 0.0f ? x : slope * x;
    case MXK_LR_ELU:
        return x > 0.0f ? x : slope * expm1f(x);
    case MXK_LR_SELU:
        return MXK_SELU_L * (x > 0.0f ? x : MXK_SELU_A * expm1f(x));
    default:
        return 0.5f * x * (1.0f + erff(x * 0.70710678118654752f));
    }
}

/**
 * dy/dx of leaky, elu and selu from the output y, and of gelu from the input
 * (passed as y). selu's is the derivative y + L A for y <= 0 (upstream's
 * L (A + y) is not).
 */
MXK_HD float mxk_lrelu_df(int32_t act, float slope, float y) {
    switch (act) {
    case MXK_LR_LEAKY:
        return y > 0.0f ? 1.0f : slope;
    case MXK_LR_ELU:
        return y > 0.0f ? 1.0f : y + slope;
    case MXK_LR_SELU:
        return y > 0.0f ? MXK_SELU_L : y + MXK_SELU_L * MXK_SELU_A;
    default:
        return 0.5f * (1.0f + erff(y * 0.70710678118654752f)) +
               y * expf(-0.5f * y * y) * 0.39894228040143268f; /* 1 / sqrt(2 pi) */
    }
}

#endif /* MXK_ACT_H */
