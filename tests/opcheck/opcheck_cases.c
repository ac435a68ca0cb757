/*
 * The operator case tables of tests/opcheck (opcheck_cases.h): the float64
 * references, the table (layers, tensor and optimizer operators here, the
 * operator groups added for MXNet conformance in opcheck_*.inc) and the helpers
 * that make a case concrete.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk.h"
#include "opcheck_cases.h"
#include "testing_attrs.h"

/* ------------------------------------------------------------------------- */
/* float64 references                                                        */
/* ------------------------------------------------------------------------- */

/** Value of attribute `key` of the run, or NULL. */
static const char *attr(const mxk_opcheck_config *c, const char *key) {
    for (uint32_t i = 0; i < c->num_attrs; i++)
        if (strcmp(c->keys[i], key) == 0)
            return c->vals[i];
    return NULL;
}

/** Attribute as a double (default d). */
static double attr_f(const mxk_opcheck_config *c, const char *key, double d) {
    const char *v = attr(c, key);
    return v ? atof(v) : d;
}

/** Attribute as a bool (default d). */
static int attr_b(const mxk_opcheck_config *c, const char *key, int d) {
    const char *v = attr(c, key);
    if (v == NULL)
        return d;
    return strcmp(v, "True") == 0 || strcmp(v, "true") == 0 || strcmp(v, "1") == 0;
}

/** Element count. */
static uint64_t count(const mxk_shape *s) {
    uint64_t n = 1;
    for (int d = 0; d < s->ndim; d++)
        n *= (uint64_t)s->dims[d];
    return n;
}

/** y = f(x) element-wise; user is the double(*)(double). */
static int ref_unary(void *user, const mxk_opcheck_ref_args *a) {
    double (*f)(double) = (double (*)(double))user;
    for (uint64_t k = 0; k < count(&a->in_shapes[0]); k++)
        a->out[0][k] = f(a->in[0][k]);
    return 0;
}

/** Unary functions of MXNet's set not in libm under that name. */
static double f_rsqrt(double x) {
    return 1.0 / sqrt(x);
}
/** sign. */
static double f_sign(double x) {
    return (x > 0) - (x < 0);
}
/** square. */
static double f_square(double x) {
    return x * x;
}
/** sigmoid. */
static double f_sigmoid(double x) {
    return 1.0 / (1.0 + exp(-x));
}
/** relu. */
static double f_relu(double x) {
    return x > 0 ? x : 0;
}
/** identity. */
static double f_identity(double x) {
    return x;
}
/** MXNet's round: half away from zero (C round). */
static double f_round(double x) {
    return round(x);
}

/** Element-wise op of two values; user selects it. */
typedef double (*bin_fn)(double, double);
/** a + b. */
static double b_add(double a, double b) {
    return a + b;
}
/** a - b. */
static double b_sub(double a, double b) {
    return a - b;
}
/** a * b. */
static double b_mul(double a, double b) {
    return a * b;
}
/** a / b. */
static double b_div(double a, double b) {
    return a / b;
}
/** max. */
static double b_max(double a, double b) {
    return a > b ? a : b;
}
/** min. */
static double b_min(double a, double b) {
    return a < b ? a : b;
}

/** Broadcast binary (covers equal shapes): numpy rules, right-aligned. */
static int ref_binary(void *user, const mxk_opcheck_ref_args *a) {
    bin_fn f = (bin_fn)user;
    const mxk_shape *o = &a->out_shapes[0], *l = &a->in_shapes[0], *r = &a->in_shapes[1];
    uint64_t n = count(o);
    for (uint64_t k = 0; k < n; k++) {
        uint64_t rem = k, li = 0, ri = 0, lstride = 1, rstride = 1;
        for (int d = o->ndim - 1; d >= 0; d--) {
            uint64_t idx = rem % (uint64_t)o->dims[d];
            rem /= (uint64_t)o->dims[d];
            int dl = d - (o->ndim - l->ndim), dr = d - (o->ndim - r->ndim);
            if (dl >= 0) {
                if (l->dims[dl] > 1)
                    li += idx * lstride;
                lstride *= (uint64_t)l->dims[dl];
            }
            if (dr >= 0) {
                if (r->dims[dr] > 1)
                    ri += idx * rstride;
                rstride *= (uint64_t)r->dims[dr];
            }
        }
        a->out[0][k] = f(a->in[0][li], a->in[1][ri]);
    }
    return 0;
}

/** _X_scalar: user is a code: 0 plus 1 minus 2 rminus 3 mul 4 div 5 rdiv. */
static int ref_scalar(void *user, const mxk_opcheck_ref_args *a) {
    int code = (int)(intptr_t)user;
    double s = attr_f(a->config, "scalar", 0);
    for (uint64_t k = 0; k < count(&a->in_shapes[0]); k++) {
        double x = a->in[0][k];
        a->out[0][k] = code == 0   ? x + s
                       : code == 1 ? x - s
                       : code == 2 ? s - x
                       : code == 3 ? x * s
                       : code == 4 ? x / s
                                   : s / x;
    }
    return 0;
}

/** Identity on the values (Flatten, Reshape, copies): the output has input's order. */
static int ref_copy(void *user, const mxk_opcheck_ref_args *a) {
    memcpy(a->out[0], a->in[0], count(&a->in_shapes[0]) * sizeof(double));
    return 0;
}

/** Cast: the value in the target dtype (integers truncate toward zero, as C casts). */
static int ref_cast(void *user, const mxk_opcheck_ref_args *a) {
    const char *dt = attr(a->config, "dtype");
    int integer = dt && (strncmp(dt, "int", 3) == 0 || strncmp(dt, "uint", 4) == 0);
    for (uint64_t k = 0; k < count(&a->in_shapes[0]); k++)
        a->out[0][k] = integer ? trunc(a->in[0][k]) : a->in[0][k];
    return 0;
}

/** FullyConnected: y = x . W^T + b (flatten or last axis). */
static int ref_fc(void *user, const mxk_opcheck_ref_args *a) {
    const mxk_shape *w = &a->in_shapes[1];
    uint64_t h = (uint64_t)w->dims[0], kdim = (uint64_t)w->dims[1];
    uint64_t rows = count(&a->in_shapes[0]) / kdim;
    int bias = a->num_in > 2;
    for (uint64_t i = 0; i < rows; i++)
        for (uint64_t j = 0; j < h; j++) {
            double s = bias ? a->in[2][j] : 0.0;
            for (uint64_t k = 0; k < kdim; k++)
                s += a->in[0][i * kdim + k] * a->in[1][j * kdim + k];
            a->out[0][i * h + j] = s;
        }
    return 0;
}

/**
 * dot with transpose_a / transpose_b (src/operator/tensor/dot-inl.h): lhs is a
 * (M, K) matrix of its last axis against the others, or (K, M) of its first axis
 * with transpose_a; rhs is (K, N) of its first axis, or (N, K) of its last with
 * transpose_b (1-D arrays are a row or a column).
 */
static int ref_dot(void *user, const mxk_opcheck_ref_args *a) {
    int ta = attr_b(a->config, "transpose_a", 0), tb = attr_b(a->config, "transpose_b", 0);
    const mxk_shape *l = &a->in_shapes[0], *r = &a->in_shapes[1];
    uint64_t k = (uint64_t)(ta ? l->dims[0] : l->dims[l->ndim - 1]), m = count(l) / k;
    uint64_t n = count(r) / k;
    for (uint64_t i = 0; i < m; i++)
        for (uint64_t j = 0; j < n; j++) {
            double s = 0;
            for (uint64_t p = 0; p < k; p++) {
                double x = ta ? a->in[0][p * m + i] : a->in[0][i * k + p];
                double y = tb ? a->in[1][j * k + p] : a->in[1][p * n + j];
                s += x * y;
            }
            a->out[0][i * n + j] = s;
        }
    return 0;
}

/** softmax / log_softmax over `axis` (default -1); user: 1 for log. */
static int ref_softmax(void *user, const mxk_opcheck_ref_args *a) {
    int log_ = (int)(intptr_t)user;
    const mxk_shape *s = &a->in_shapes[0];
    int axis = (int)attr_f(a->config, "axis", -1);
    if (axis < 0)
        axis += s->ndim;
    double t = attr_f(a->config, "temperature", 1.0);
    uint64_t outer = 1, inner = 1, len = (uint64_t)s->dims[axis];
    for (int d = 0; d < axis; d++)
        outer *= (uint64_t)s->dims[d];
    for (int d = axis + 1; d < s->ndim; d++)
        inner *= (uint64_t)s->dims[d];
    for (uint64_t o = 0; o < outer; o++)
        for (uint64_t i = 0; i < inner; i++) {
            const double *x = a->in[0] + o * len * inner + i;
            double *y = a->out[0] + o * len * inner + i, mx = -INFINITY, z = 0;
            for (uint64_t k = 0; k < len; k++)
                mx = fmax(mx, x[k * inner] / t);
            for (uint64_t k = 0; k < len; k++)
                z += exp(x[k * inner] / t - mx);
            for (uint64_t k = 0; k < len; k++)
                y[k * inner] =
                    log_ ? x[k * inner] / t - mx - log(z) : exp(x[k * inner] / t - mx) / z;
        }
    return 0;
}

/** clip(a_min, a_max). */
static int ref_clip(void *user, const mxk_opcheck_ref_args *a) {
    double lo = attr_f(a->config, "a_min", 0), hi = attr_f(a->config, "a_max", 0);
    for (uint64_t k = 0; k < count(&a->in_shapes[0]); k++)
        a->out[0][k] = fmin(fmax(a->in[0][k], lo), hi);
    return 0;
}

/**
 * SoftmaxOutput's implicit loss, whose gradient is its backward
 * (src/operator/softmax_output-inl.h): the cross entropy of softmax(x) against the
 * label smoothed by smooth_alpha (1 - alpha on the label, alpha / (k - 1) on the
 * others), over the class axis (1 with multi_output, the last with
 * preserve_shape, else all but the first), labels equal to ignore_label left out
 * with use_ignore, times grad_scale, divided by the normalization (null: 1, or
 * the spatial size with multi_output; batch: the number of labels; valid: the
 * labels not ignored).
 */
static int loss_softmax_output(void *user, const mxk_opcheck_ref_args *a, double *loss) {
    const mxk_shape *s = &a->in_shapes[0];
    double scale = attr_f(a->config, "grad_scale", 1.0);
    double alpha = attr_f(a->config, "smooth_alpha", 0.0);
    double ignore = attr_f(a->config, "ignore_label", -1.0);
    int multi = attr_b(a->config, "multi_output", 0);
    int preserve = attr_b(a->config, "preserve_shape", 0);
    int use_ignore = attr_b(a->config, "use_ignore", 0);
    const char *norm = attr(a->config, "normalization");
    uint64_t n = (uint64_t)s->dims[0], k = count(s) / n, inner = 1;
    if (multi) {
        k = (uint64_t)s->dims[1];
        inner = count(s) / n / k;
    } else if (preserve) {
        k = (uint64_t)s->dims[s->ndim - 1];
        n = count(s) / k;
    }
    double l = 0, valid = 0;
    for (uint64_t b = 0; b < n; b++)
        for (uint64_t i = 0; i < inner; i++) {
            const double *x = a->in[0] + b * k * inner + i;
            double lab = a->in[1][b * inner + i];
            if ((uint64_t)lab >= k)
                return 1;
            if (use_ignore && lab == ignore)
                continue;
            valid += 1;
            double mx = -INFINITY, z = 0;
            for (uint64_t c = 0; c < k; c++)
                mx = fmax(mx, x[c * inner]);
            for (uint64_t c = 0; c < k; c++)
                z += exp(x[c * inner] - mx);
            for (uint64_t c = 0; c < k; c++) {
                double t = c == (uint64_t)lab ? 1.0 - alpha : alpha / (double)(k - 1);
                l -= t * (x[c * inner] - mx - log(z));
            }
        }
    double div = multi ? (double)inner : 1.0;
    if (norm != NULL && strcmp(norm, "batch") == 0)
        div = (double)(n * inner);
    else if (norm != NULL && strcmp(norm, "valid") == 0)
        div = valid > 0 ? valid : 1.0;
    *loss = l * scale / div;
    return 0;
}

/** Regression outputs' implicit losses; user: 0 linear, 1 logistic, 2 MAE. */
static int loss_regression(void *user, const mxk_opcheck_ref_args *a, double *loss) {
    int kind = (int)(intptr_t)user;
    const mxk_shape *s = &a->in_shapes[1];
    double m = (double)count(s) / (double)s->dims[0];
    double scale = attr_f(a->config, "grad_scale", 1.0) / m, l = 0;
    for (uint64_t k = 0; k < count(&a->in_shapes[0]); k++) {
        double x = a->in[0][k], y = a->in[1][k];
        l += kind == 0 ? 0.5 * (x - y) * (x - y) : kind == 1 ? log1p(exp(x)) - y * x : fabs(x - y);
    }
    *loss = l * scale;
    return 0;
}

/* ------------------------------------------------------------------------- */
/* The table                                                                 */
/* ------------------------------------------------------------------------- */

#define UNARY(names_, fn_, inputs_, kink_)                                                         \
    {                                                                                              \
        names_, inputs_, "0:0", 0, kink_, ref_unary, NULL, {                                       \
            {"", "1-4,1-3", 0}, {"", "2,1-3,2", 0}, {                                              \
                "", "5", 0                                                                         \
            }                                                                                      \
        }                                                                                          \
    }
#define SCALAR(names_, code_, inputs_)                                                             \
    {                                                                                              \
        names_, inputs_, "0:0", 0, 0, ref_scalar, NULL, {                                          \
            {"scalar=1.5", "1-4,1-3", 0}, {"scalar=-0.75", "2,3,2", 0}, {                          \
                "scalar=2", "4", 0                                                                 \
            }                                                                                      \
        }                                                                                          \
    }
/* The references get their function or code as the user pointer: see opcheck_user_of(). */
const op_entry opcheck_table[] = {
    /* Layers */
    {"FullyConnected",
     NULL,
     NULL,
     0,
     0,
     ref_fc,
     NULL,
     {{"num_hidden=4", "2,3|0|0", 0},
      {"num_hidden=3;no_bias=True", "2,2,3|0", 0},
      {"num_hidden=2;flatten=False", "2,3,4|0|0", 0},
      {"num_hidden=1-5", "1-3,2-4|0|0", 0},
      {"num_hidden=5", "3,2,2|0|0", 0},
      {"num_hidden=4", "2,3|4,3|4,1", 0}}},
    {"Activation",
     NULL,
     "0:0",
     0,
     0.01,
     NULL,
     NULL,
     {{"act_type=relu", "2,3", 0},
      {"act_type=sigmoid", "2,1-4", 0},
      {"act_type=tanh", "3,2,2", 0},
      {"act_type=softrelu", "4", 0},
      {"act_type=softsign", "3,7", 0}}},
    {"SoftmaxOutput Softmax",
     "1=0,4,int,nograd",
     NULL,
     0,
     0,
     NULL,
     loss_softmax_output,
     {{"", "3,4|3", 0},
      {"grad_scale=0.5", "2-5,4|0", 0},
      {"multi_output=True", "2,4,3|2,3", 0},
      {"grad_scale=0.5;normalization=valid;use_ignore=True;ignore_label=3", "4,5|4", 0},
      {"preserve_shape=True;normalization=batch", "2,3,4|2,3", 0},
      {"smooth_alpha=0.1", "3,4|3", 0}}},
    {"LinearRegressionOutput",
     "1=-1,1,nograd",
     NULL,
     0,
     0,
     NULL,
     loss_regression,
     {{"", "3,2|3,2", 0}, {"grad_scale=2", "4|4", 0}}},
    {"LogisticRegressionOutput",
     "1=0,1,nograd",
     NULL,
     0,
     0,
     NULL,
     loss_regression,
     {{"", "3,2|3,2", 0}, {"grad_scale=0.5", "2,3|2,3", 0}}},
    {"MAERegressionOutput",
     "1=-1,1,nograd",
     NULL,
     0,
     0,
     NULL,
     loss_regression,
     {{"", "3,2|3,2", 0}, {"grad_scale=2", "5|5", 0}}},
    {"BatchNorm",
     NULL,
     NULL,
     0,
     0,
     NULL,
     NULL,
     {{"fix_gamma=False", "2,3,2,2|0|0", 0},
      {"", "4,3|0|0", 0},
      {"use_global_stats=True;fix_gamma=False", "2,2,3|0|0", 0},
      {"fix_gamma=False;eps=0.01;momentum=0.5", "3,2,1-3|0|0", 0}}},
    {"Dropout",
     NULL,
     "0:0",
     0,
     0,
     NULL,
     NULL,
     {{"p=0.5", "4,5", 0}, {"p=0.2", "3,3,2", 0}, {"p=0.5", "2,3", MXK_OPCHECK_INFERENCE}}},
    {"Concat concat",
     NULL,
     NULL,
     0,
     0,
     NULL,
     NULL,
     {{"num_args=2", "2,3|2,2", 0},
      {"num_args=3;dim=0", "1,3|2,3|1,3", 0},
      {"num_args=2;dim=2", "2,2,1-3|2,2,2", 0}}},
    {"SliceChannel split",
     NULL,
     NULL,
     0,
     0,
     NULL,
     NULL,
     {{"num_outputs=2", "2,4,3", 0},
      {"num_outputs=3;axis=0;squeeze_axis=True", "3,2", 0},
      {"num_outputs=2;axis=-1", "3,4", 0}}},
    {"Embedding",
     "0=0,5,int,nograd",
     NULL,
     0,
     0,
     NULL,
     NULL,
     {{"input_dim=5;output_dim=3", "2,3|0", 0}, {"input_dim=5;output_dim=2", "4|0", 0}}},
    {"RNN _npx_rnn",
     "4=1,4,int,nograd", /* lstm's sequence_length: lengths in [1, T = 3] */
     NULL,
     0,
     0,
     NULL,
     NULL,
     {{"mode=rnn_tanh;state_size=3;num_layers=1", "4,2,3|0|0", 0},
      {"mode=rnn_relu;state_size=2;num_layers=2;state_outputs=True", "3,1-3,2|0|0", 0},
      {"mode=lstm;state_size=3;num_layers=2;bidirectional=True;state_outputs=True", "3,2,3|0|0|0",
       0},
      {"mode=lstm;state_size=2;num_layers=1;state_outputs=True", "1,3,2|0|0|0", 0},
      {"mode=gru;state_size=3;num_layers=2;bidirectional=True;state_outputs=True", "4,2,2|0|0", 0},
      {"mode=gru;state_size=2;num_layers=1;p=0.5", "3,2,3|0|0", 0},
      {"mode=gru;state_size=3;num_layers=3;bidirectional=True;p=0.5;state_outputs=True",
       "3,2,3|0|0", 0},
      {"mode=lstm;state_size=3;num_layers=2;bidirectional=True;projection_size=2;"
       "state_outputs=True",
       "3,2,3|0|0|0", 0},
      {"mode=lstm;state_size=3;num_layers=2;lstm_state_clip_min=-0.3;lstm_state_clip_max=0.3;"
       "state_outputs=True",
       "3,2,3|0|0|0", 0},
      {"mode=lstm;state_size=3;num_layers=2;bidirectional=True;projection_size=2;p=0.3;"
       "use_sequence_length=True;state_outputs=True",
       "3,4,2|0|0|0|4", 0}}},
    {"LeakyReLU",
     NULL,
     NULL,
     0,
     0.01,
     NULL,
     NULL,
     {{"act_type=leaky;slope=0.1", "2,3", 0},
      {"act_type=elu;slope=0.5", "2,3", 0},
      {"act_type=prelu", "2,3,2|0", 0},
      {"act_type=rrelu", "3,4", 0},
      {"act_type=selu", "2,3", 0},
      {"act_type=gelu", "2,3", 0}}},
    {"SoftmaxActivation",
     NULL,
     NULL,
     0,
     0,
     NULL,
     NULL,
     {{"", "2,4", 0}, {"mode=channel", "2,3,2", 0}}},
    {"softmax",
     NULL,
     NULL,
     0,
     0,
     ref_softmax,
     NULL,
     {{"", "2,4", 0}, {"axis=0", "3,2", 0}, {"axis=1", "2,3,2", 0}, {"axis=1", "2,40,3", 0}}},
    {"log_softmax",
     NULL,
     NULL,
     0,
     0,
     ref_softmax,
     NULL,
     {{"", "2,4", 0}, {"axis=0", "3,2", 0}, {"axis=1", "2,3,2", 0}, {"axis=1", "2,40,3", 0}}},
    {"SwapAxis swapaxes",
     NULL,
     NULL,
     0,
     0,
     NULL,
     NULL,
     {{"dim1=0;dim2=1", "2,3", 0}, {"dim1=1;dim2=2", "2,3,4", 0}}},
    {"transpose",
     NULL,
     NULL,
     0,
     0,
     NULL,
     NULL,
     {{"", "2,3", 0}, {"axes=(1,0,2)", "2,3,2", 0}, {"axes=(2,0,1)", "2,1-3,2", 0}}},
    {"Cast cast",
     NULL,
     NULL,
     0,
     0,
     ref_cast,
     NULL,
     {{"dtype=float64", "2,3", 0},
      {"dtype=float32", "4", 0},
      {"dtype=int32", "2,2", MXK_OPCHECK_NO_BACKWARD}}},
    {"ElementWiseSum add_n",
     NULL,
     "0:0",
     0,
     0,
     NULL,
     NULL,
     {{"num_args=2", "2,3|2,3", 0}, {"num_args=3", "4|4|4", 0}, {"num_args=1", "3,1-3", 0}}},
    /* The unary set */
    UNARY("abs", fabs, NULL, 0.01),
    UNARY("ceil", ceil, NULL, 0.01),
    UNARY("cos", cos, NULL, 0),
    UNARY("exp", exp, NULL, 0),
    UNARY("floor", floor, NULL, 0.01),
    UNARY("log", log, "0=0.5,2", 0),
    UNARY("round", f_round, NULL, 0.01),
    UNARY("rsqrt", f_rsqrt, "0=0.5,2", 0),
    UNARY("sign", f_sign, NULL, 0.01),
    UNARY("sin", sin, NULL, 0),
    UNARY("sqrt", sqrt, "0=0.5,2", 0),
    UNARY("square", f_square, NULL, 0),
    UNARY("tanh", tanh, NULL, 0),
    UNARY("sigmoid", f_sigmoid, NULL, 0),
    UNARY("relu", f_relu, NULL, 0.01),
    UNARY("BlockGrad stop_gradient", f_identity, NULL, 0),
    UNARY("_copy identity _copyto", f_identity, NULL, 0),
    {"clip",
     NULL,
     "0:0",
     0,
     0.01,
     ref_clip,
     NULL,
     {{"a_min=-0.5;a_max=0.5", "2,3", 0}, {"a_min=0;a_max=1", "1-4,2", 0}}},
    /* Element-wise binary, same shapes */
    {"_plus elemwise_add _Plus",
     NULL,
     "0:0 1:0",
     0,
     0,
     ref_binary,
     NULL,
     {{"", "2,3|2,3", 0}, {"", "1-4|0", 0}, {"", "2,2,2|2,2,2", 0}}},
    {"_minus elemwise_sub _Minus",
     NULL,
     "0:0 1:0",
     0,
     0,
     ref_binary,
     NULL,
     {{"", "2,3|2,3", 0}, {"", "1-4|0", 0}}},
    {"_mul elemwise_mul _Mul",
     NULL,
     "0:0 1:0",
     0,
     0,
     ref_binary,
     NULL,
     {{"", "2,3|2,3", 0}, {"", "1-4|0", 0}}},
    {"_div elemwise_div _Div",
     "1=0.5,1.5",
     "0:0 1:0",
     0,
     0,
     ref_binary,
     NULL,
     {{"", "2,3|2,3", 0}, {"", "1-4|0", 0}}},
    {"_maximum _Maximum",
     NULL,
     "0:0 1:0",
     0,
     0,
     ref_binary,
     NULL,
     {{"", "2,3|2,3", 0}, {"", "1-4|0", 0}}},
    {"_minimum _Minimum",
     NULL,
     "0:0 1:0",
     0,
     0,
     ref_binary,
     NULL,
     {{"", "2,3|2,3", 0}, {"", "1-4|0", 0}}},
    {"_power _Power",
     "0=0.5,1.5",
     "0:0 1:0",
     0,
     0,
     NULL,
     NULL,
     {{"", "2,3|2,3", 0}, {"", "1-4|0", 0}}},
    /* With a scalar */
    SCALAR("_plus_scalar _PlusScalar", 0, NULL),
    SCALAR("_minus_scalar _MinusScalar", 1, NULL),
    SCALAR("_rminus_scalar _RMinusScalar", 2, NULL),
    SCALAR("_mul_scalar _MulScalar", 3, NULL),
    SCALAR("_div_scalar _DivScalar", 4, NULL),
    SCALAR("_rdiv_scalar _RDivScalar", 5, "0=0.5,1.5"),
    {"_power_scalar _PowerScalar _rpower_scalar _RPowerScalar _maximum_scalar _MaximumScalar "
     "_minimum_scalar _MinimumScalar",
     "0=0.5,1.5",
     "0:0",
     0,
     0.01,
     NULL,
     NULL,
     {{"scalar=2", "2,3", 0}, {"scalar=0.75", "4", 0}}},
    /* Broadcasting */
    {"broadcast_add broadcast_plus",
     NULL,
     NULL,
     0,
     0,
     ref_binary,
     NULL,
     {{"", "2,3|1,3", 0}, {"", "2,1,3|1,2,1", 0}, {"", "3|3", 0}, {"", "2,3|2,1", 0}}},
    {"broadcast_sub broadcast_minus",
     NULL,
     NULL,
     0,
     0,
     ref_binary,
     NULL,
     {{"", "2,3|1,3", 0}, {"", "2,1,3|1,2,1", 0}, {"", "3|3", 0}}},
    {"broadcast_mul",
     NULL,
     NULL,
     0,
     0,
     ref_binary,
     NULL,
     {{"", "2,3|1,3", 0}, {"", "2,1,3|1,2,1", 0}, {"", "3|3", 0}}},
    {"broadcast_div",
     "1=0.5,1.5",
     NULL,
     0,
     0,
     ref_binary,
     NULL,
     {{"", "2,3|1,3", 0}, {"", "2,1,3|1,2,1", 0}, {"", "3|3", 0}}},
    {"broadcast_maximum",
     NULL,
     NULL,
     0,
     0,
     ref_binary,
     NULL,
     {{"", "2,3|1,3", 0}, {"", "2,1,3|1,2,1", 0}}},
    {"broadcast_minimum",
     NULL,
     NULL,
     0,
     0,
     ref_binary,
     NULL,
     {{"", "2,3|1,3", 0}, {"", "2,1,3|1,2,1", 0}}},
    {"broadcast_power",
     "0=0.5,1.5",
     NULL,
     0,
     0,
     NULL,
     NULL,
     {{"", "2,3|1,3", 0}, {"", "2,1,3|1,2,1", 0}}},
    /* Reductions and indexing */
    {"sum sum_axis mean nansum prod",
     "0=0.5,1.5",
     NULL,
     0,
     0,
     NULL,
     NULL,
     {{"", "2,3", 0},
      {"axis=1;keepdims=True", "2,3,2", 0},
      {"axis=(0,2)", "2,3,2", 0},
      {"axis=0;exclude=True", "2,1-3", 0},
      {"axis=-1", "2,3,4", 0},
      {"keepdims=True", "2,3,2", 0}}},
    {"max max_axis min min_axis",
     NULL,
     NULL,
     0,
     0,
     NULL,
     NULL,
     {{"", "2,3", 0}, {"axis=1;keepdims=True", "2,3,2", 0}, {"axis=0", "3,2", 0}}},
    {"norm",
     "0=0.5,1.5",
     NULL,
     0,
     0,
     NULL,
     NULL,
     {{"", "2,3", 0}, {"axis=1;keepdims=True", "2,3,2", 0}, {"axis=0", "3,2", 0}}},
    {"argmax argmin",
     NULL,
     NULL,
     MXK_OPCHECK_NO_BACKWARD,
     0,
     NULL,
     NULL,
     {{"axis=1", "2,3", 0}, {"axis=0;keepdims=True", "3,2", 0}, {"", "4,2", 0}}},
    {"argmax_channel",
     NULL,
     NULL,
     MXK_OPCHECK_NO_BACKWARD,
     0,
     NULL,
     NULL,
     {{"", "2,3", 0}, {"", "4,5", 0}}},
    {"one_hot",
     "0=0,4,int,nograd",
     NULL,
     MXK_OPCHECK_NO_BACKWARD,
     0,
     NULL,
     NULL,
     {{"depth=4", "2,3", 0}, {"depth=4;on_value=2;off_value=-1", "5", 0}}},
    {"dot",
     NULL,
     NULL,
     0,
     0,
     ref_dot,
     NULL,
     {{"", "2,3|3,4", 0},
      {"transpose_a=True", "3,2|3,4", 0},
      {"transpose_b=True", "2,3|4,3", 0},
      {"", "1-3,2|2,1-3", 0},
      {"", "2,3,4|4,5", 0},
      {"transpose_a=True", "4,2,3|4,5", 0}}},
    {"batch_dot",
     NULL,
     NULL,
     0,
     0,
     NULL,
     NULL,
     {{"", "2,2,3|2,3,2", 0}, {"transpose_b=True", "2,2,3|2,4,3", 0}}},
    /* Shape manipulation */
    {"Flatten flatten",
     NULL,
     "0:0",
     0,
     0,
     ref_copy,
     NULL,
     {{"", "2,3,2", 0}, {"", "3,1-3", 0}, {"", "5", 0}}},
    {"Reshape reshape",
     NULL,
     "0:0",
     0,
     0,
     ref_copy,
     NULL,
     {{"shape=(3,-1)", "2,3,2", 0},
      {"shape=(0,-3)", "2,3,4", 0},
      {"target_shape=(4,0)", "2,4", 0},
      {"shape=(-1,0);reverse=True", "10,5,4", 0}}},
    {"expand_dims", NULL, NULL, 0, 0, ref_copy, NULL, {{"axis=1", "2,3", 0}}},
    /* Random sampling: no inputs */
    {"_random_uniform random_uniform uniform",
     NULL,
     NULL,
     0,
     0,
     NULL,
     NULL,
     {{"shape=(2,3)", "", 0}, {"low=-2;high=3;shape=(4,)", "", 0}}},
    {"_random_normal random_normal normal",
     NULL,
     NULL,
     0,
     0,
     NULL,
     NULL,
     {{"shape=(2,3)", "", 0}, {"loc=1;scale=2;shape=(4,)", "", 0}}},
    /* Optimizer updates (no backward; mutate their states) */
    {"sgd_update",
     NULL,
     NULL,
     MXK_OPCHECK_NO_BACKWARD,
     0,
     NULL,
     NULL,
     {{"lr=0.1", "2,3|2,3", 0}, {"lr=0.1;wd=0.01;rescale_grad=0.5;clip_gradient=0.3", "4|4", 0}}},
    {"sgd_mom_update",
     NULL,
     NULL,
     MXK_OPCHECK_NO_BACKWARD,
     0,
     NULL,
     NULL,
     {{"lr=0.1;momentum=0.9", "2,3|2,3", 0},
      {"lr=0.1;momentum=0.5;wd=0.01;clip_gradient=0.3", "4|4", 0}}},
    {"adam_update",
     NULL,
     NULL,
     MXK_OPCHECK_NO_BACKWARD,
     0,
     NULL,
     NULL,
     {{"lr=0.01", "2,3|2,3", 0},
      {"lr=0.01;beta1=0.8;beta2=0.99;epsilon=1e-6;wd=0.1;rescale_grad=2", "4|4", 0}}},
    {"IdentityAttachKLSparseReg", NULL, NULL, 0, 0, NULL, NULL, {{"", "2,3", 0}}},
/* The operator groups added for MXNet conformance, one table fragment each. */
#include "opcheck_init.inc"
#include "opcheck_index.inc"
#include "opcheck_math.inc"
#include "opcheck_norm.inc"
#include "opcheck_spatial.inc"
#include "opcheck_vision.inc"
};

const size_t opcheck_table_size = sizeof opcheck_table / sizeof opcheck_table[0];

/** The user pointer of an entry's callbacks for operator `name`. */
void *opcheck_user_of(const op_entry *e, const char *name) {
    if (e->ref == ref_unary) {
        static const struct {
            const char *n;
            double (*f)(double);
        } fns[] = {{"abs", fabs},      {"ceil", ceil},         {"cos", cos},
                   {"exp", exp},       {"floor", floor},       {"log", log},
                   {"round", f_round}, {"rsqrt", f_rsqrt},     {"sign", f_sign},
                   {"sin", sin},       {"sqrt", sqrt},         {"square", f_square},
                   {"tanh", tanh},     {"sigmoid", f_sigmoid}, {"relu", f_relu}};
        for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
            if (strcmp(fns[i].n, name) == 0)
                return (void *)fns[i].f;
        return (void *)f_identity;
    }
    if (e->ref == ref_binary) {
        const char *n = name;
        if (strstr(n, "add") || strstr(n, "plus") || strstr(n, "Plus"))
            return (void *)b_add;
        if (strstr(n, "sub") || strstr(n, "minus") || strstr(n, "Minus"))
            return (void *)b_sub;
        if (strstr(n, "mul") || strstr(n, "Mul"))
            return (void *)b_mul;
        if (strstr(n, "div") || strstr(n, "Div"))
            return (void *)b_div;
        if (strstr(n, "max") || strstr(n, "Max"))
            return (void *)b_max;
        return (void *)b_min;
    }
    if (e->ref == ref_scalar) {
        static const char *const codes[] = {"plus", "minus", "rminus", "mul", "div", "rdiv"};
        static const char *const legacy[] = {"Plus", "Minus", "RMinus", "Mul", "Div", "RDiv"};
        for (int i = 5; i >= 0; i--) {
            char a[32], b[32];
            snprintf(a, sizeof a, "_%s_scalar", codes[i]);
            snprintf(b, sizeof b, "_%sScalar", legacy[i]);
            if (strcmp(name, a) == 0 || strcmp(name, b) == 0)
                return (void *)(intptr_t)i;
        }
    }
    if (e->ref == ref_softmax)
        return (void *)(intptr_t)(strcmp(name, "log_softmax") == 0);
    if (e->loss == loss_regression)
        return (void *)(intptr_t)(strstr(name, "Logistic") ? 1 : strstr(name, "MAE") ? 2 : 0);
    return NULL;
}

/** The entry whose names contain `name` (whole word), or NULL. */
const op_entry *opcheck_find_entry(const char *name) {
    size_t n = strlen(name);
    for (size_t i = 0; i < opcheck_table_size; i++) {
        const char *p = opcheck_table[i].names;
        while ((p = strstr(p, name)) != NULL) {
            int start = p == opcheck_table[i].names || p[-1] == ' ';
            int end = p[n] == '\0' || p[n] == ' ';
            if (start && end)
                return &opcheck_table[i];
            p += n;
        }
    }
    return NULL;
}

/** splitmix64 for the random dims. */
uint64_t opcheck_rnd(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/** Replaces every "a-b" in text by a random integer in [a, b] (dims and attributes). */
static void expand_ranges(const char *text, char *out, size_t size, uint64_t *rng) {
    size_t o = 0;
    for (const char *p = text; *p && o + 24 < size;) {
        char *end = NULL;
        int prev_digit_ok = p == text || !(p[-1] >= '0' && p[-1] <= '9');
        if (*p >= '0' && *p <= '9' && prev_digit_ok) {
            long a = strtol(p, &end, 10);
            if (*end == '-' && end[1] >= '0' && end[1] <= '9') {
                char *end2 = NULL;
                long b = strtol(end + 1, &end2, 10);
                long v = b > a ? a + (long)(opcheck_rnd(rng) % (uint64_t)(b - a + 1)) : a;
                o += (size_t)snprintf(out + o, size - o, "%ld", v);
                p = end2;
                continue;
            }
        }
        out[o++] = *p++;
    }
    out[o] = '\0';
}

/** Parses a case (after range expansion). Returns 0 on a malformed table entry. */
int opcheck_make_concrete(const op_entry *e, const op_case *c, uint64_t *rng, concrete *k) {
    memset(k, 0, sizeof *k);
    char attrs[sizeof k->attr_text];
    expand_ranges(c->attrs, attrs, sizeof attrs, rng);
    expand_ranges(c->shapes, k->shape_text, sizeof k->shape_text, rng);
    int na = mxk_t_parse_attrs(attrs, k->attr_text, sizeof k->attr_text, k->keys, k->vals, 16);
    if (na < 0)
        return 0;
    k->num_attrs = (uint32_t)na;
    if (k->shape_text[0]) {
        char *save = NULL;
        for (char *tok = strtok_r(k->shape_text, "|", &save); tok;
             tok = strtok_r(NULL, "|", &save)) {
            if (k->num_in >= MAX_IN || !mxk_opcheck_parse_shape(tok, &k->shapes[k->num_in]))
                return 0;
            k->num_in++;
        }
    }
    for (uint32_t i = 0; i < MAX_IN; i++)
        k->specs[i].kink_margin = e->kink;
    if (e->inputs) {
        char buf[128];
        snprintf(buf, sizeof buf, "%s", e->inputs);
        char *save = NULL;
        for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
            unsigned idx = 0;
            double lo = 0, hi = 0;
            if (sscanf(tok, "%u=%lf,%lf", &idx, &lo, &hi) != 3 || idx >= MAX_IN)
                return 0;
            k->specs[idx].low = lo;
            k->specs[idx].high = hi;
            k->specs[idx].integer = strstr(tok, ",int") != NULL;
            k->specs[idx].no_grad = strstr(tok, ",nograd") != NULL;
        }
    }
    if (e->inplace) {
        const char *p = e->inplace;
        unsigned a, b;
        int used = 0;
        while (sscanf(p, "%u:%u%n", &a, &b, &used) == 2 && k->num_inplace < MAX_IN) {
            /* Only pairs within this case's arguments. */
            if (a < k->num_in || k->num_in == 0) {
                k->inplace[2 * k->num_inplace] = a;
                k->inplace[2 * k->num_inplace + 1] = b;
                k->num_inplace++;
            }
            p += used;
            while (*p == ' ')
                p++;
        }
    }
    return 1;
}
