/*
 * The tensor, element-wise, reduction, sampling and optimizer operators of the
 * cpu-blas plugin, run through the kernel (operator instances with explicit write
 * requests) with cpu-blas loaded from the build tree's config dir.
 *
 * Each generic check (check_op) runs: forward against an independent float64
 * reference; forward with WRITE / ADD / NULL into outputs pre-filled with 5;
 * backward against float64 central finite differences of sum(dy * y); backward
 * with ADD / NULL into gradients pre-filled with 5. Specific tests pin the
 * numbers worked out by hand (Embedding, optimizer steps), sampling moments
 * and reproducibility, Cast round trips and in-place runs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mxk.h"
#include "testing.h"

static const mxk_context cpu = {MXK_DEV_CPU, 0};

#define MAXIO 8

/** An operator instance with host copies of its inputs. */
typedef struct sess {
    mxk_op_instance *inst;
    uint32_t nin, nout, nvis;
    mxk_shape is[MAXIO], os[MAXIO];
    int32_t it[MAXIO], ot[MAXIO];
    float *in[MAXIO];
    uint64_t nel_in[MAXIO], nel_out[MAXIO];
} sess;

static uint64_t rng_state = 12345;
/** When set, sess_open spreads inputs over [lo, hi) in distinct steps instead of random. */
static int g_spread;
/** Deterministic uniform in [lo, hi). */
static float urand(float lo, float hi) {
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * (float)((rng_state >> 40) / 16777216.0);
}

static mxk_ndarray *arr_f32(const mxk_shape *s, const float *v) {
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_create(s, MXK_FLOAT32, cpu, &a) != MXK_OK)
        return NULL;
    if (v)
        mxk_ndarray_copy_from_host(a, v, mxk_ndarray_size(a) * sizeof(float));
    return a;
}

static void to_host(mxk_ndarray *a, float *out) {
    if (mxk_ndarray_copy_to_host(a, out, mxk_ndarray_size(a) * sizeof(float)) != MXK_OK)
        fprintf(stderr, "copy_to_host: %s\n", mxk_get_last_error());
}

static uint64_t count(const mxk_shape *s) {
    uint64_t n = 1;
    for (int i = 0; i < s->ndim; i++)
        n *= (uint64_t)s->dims[i];
    return n;
}

/** Creates the instance and random inputs in [lo, hi). Returns 0 on failure. */
static int sess_open(sess *s, const char *op, uint32_t na, const char *const *k,
                     const char *const *v, uint32_t nin, const mxk_shape *shapes, float lo,
                     float hi) {
    memset(s, 0, sizeof *s);
    mxk_status rc = mxk_op_instance_create(op, na, k, v, cpu, nin, shapes, NULL, &s->inst);
    if (rc != MXK_OK) {
        fprintf(stderr, "%s: %s\n", op, mxk_get_last_error());
        CHECK_EQ_INT(rc, MXK_OK);
        return 0;
    }
    uint32_t aux;
    mxk_op_instance_counts(s->inst, &s->nin, &s->nout, &s->nvis, &aux);
    for (uint32_t i = 0; i < s->nin; i++) {
        mxk_op_instance_shape(s->inst, 0, i, &s->is[i], &s->it[i]);
        s->nel_in[i] = count(&s->is[i]);
        s->in[i] = malloc(s->nel_in[i] * sizeof(float));
        for (uint64_t e = 0; e < s->nel_in[i]; e++) {
            /* distinct values (no ties for max/min, argmax), kept off the kink at 0 */
            float x = g_spread ? lo + (hi - lo) * (float)((e * 7 + 3) % s->nel_in[i]) /
                                          (float)s->nel_in[i]
                               : urand(lo, hi);
            if (fabsf(x) < 0.05f)
                x += x < 0 ? -0.05f : 0.05f;
            s->in[i][e] = x;
        }
    }
    for (uint32_t i = 0; i < s->nout; i++) {
        mxk_op_instance_shape(s->inst, 1, i, &s->os[i], &s->ot[i]);
        s->nel_out[i] = count(&s->os[i]);
    }
    return 1;
}

static void sess_close(sess *s) {
    for (uint32_t i = 0; i < s->nin; i++)
        free(s->in[i]);
    mxk_op_instance_free(s->inst);
}

/** Forward (float32 outputs), outputs pre-filled with `fill`, request `req` for all. */
static void sess_forward(sess *s, int32_t req, float fill, int is_train, float **out) {
    mxk_ndarray *ia[MAXIO], *oa[MAXIO];
    mxk_op_req r[MAXIO];
    for (uint32_t i = 0; i < s->nin; i++)
        ia[i] = arr_f32(&s->is[i], s->in[i]);
    for (uint32_t i = 0; i < s->nout; i++) {
        mxk_ndarray_full(&s->os[i], MXK_FLOAT32, cpu, fill, &oa[i]);
        r[i] = i < s->nvis ? req : MXK_REQ_WRITE;
    }
    CHECK_EQ_INT(mxk_op_instance_forward(s->inst, is_train, ia, oa, r, NULL), MXK_OK);
    for (uint32_t i = 0; i < s->nout; i++) {
        to_host(oa[i], out[i]);
        mxk_ndarray_free(oa[i]);
    }
    for (uint32_t i = 0; i < s->nin; i++)
        mxk_ndarray_free(ia[i]);
}

/** Backward with dy, in_data = s->in, out_data = `out`; grads pre-filled with `fill`. */
static void sess_backward(sess *s, float **dy, float **out, const mxk_op_req *req, float fill,
                          float **grad) {
    mxk_ndarray *ia[MAXIO], *oa[MAXIO], *ga[MAXIO], *da[MAXIO];
    for (uint32_t i = 0; i < s->nin; i++) {
        ia[i] = arr_f32(&s->is[i], s->in[i]);
        mxk_ndarray_full(&s->is[i], MXK_FLOAT32, cpu, fill, &ga[i]);
    }
    for (uint32_t i = 0; i < s->nout; i++)
        oa[i] = arr_f32(&s->os[i], out[i]);
    for (uint32_t i = 0; i < s->nvis; i++)
        da[i] = arr_f32(&s->os[i], dy[i]);
    mxk_status rc = mxk_op_instance_backward(s->inst, da, ia, oa, ga, req, NULL);
    if (rc != MXK_OK)
        fprintf(stderr, "backward: %s\n", mxk_get_last_error());
    CHECK_EQ_INT(rc, MXK_OK);
    for (uint32_t i = 0; i < s->nin; i++) {
        to_host(ga[i], grad[i]);
        mxk_ndarray_free(ga[i]);
        mxk_ndarray_free(ia[i]);
    }
    for (uint32_t i = 0; i < s->nout; i++)
        mxk_ndarray_free(oa[i]);
    for (uint32_t i = 0; i < s->nvis; i++)
        mxk_ndarray_free(da[i]);
}

/** float64 reference of output 0 from the (float) inputs. */
typedef void (*ref_fn)(const sess *s, double *out);

/** sum over visible outputs of dy * y, in double. */
static double loss(sess *s, float **dy, float **out) {
    double l = 0;
    sess_forward(s, MXK_REQ_WRITE, 0.0f, 1, out);
    for (uint32_t i = 0; i < s->nvis; i++)
        for (uint64_t e = 0; e < s->nel_out[i]; e++)
            l += (double)dy[i][e] * out[i][e];
    return l;
}

/**
 * The generic check (see the file comment). grad_mask: bit i set = check the
 * gradient of input i by finite differences; other gradients are not requested
 * except in the request checks. ref may be NULL.
 */
static void check_op(const char *op, uint32_t na, const char *const *k, const char *const *v,
                     uint32_t nin, const mxk_shape *shapes, float lo, float hi, unsigned grad_mask,
                     ref_fn ref) {
    sess s;
    if (!sess_open(&s, op, na, k, v, nin, shapes, lo, hi))
        return;
    float *out[MAXIO], *out2[MAXIO], *dy[MAXIO], *g[MAXIO], *g2[MAXIO];
    for (uint32_t i = 0; i < s.nout; i++) {
        out[i] = malloc(s.nel_out[i] * sizeof(float));
        out2[i] = malloc(s.nel_out[i] * sizeof(float));
        dy[i] = malloc(s.nel_out[i] * sizeof(float));
        for (uint64_t e = 0; e < s.nel_out[i]; e++)
            dy[i][e] = urand(-1, 1);
    }
    for (uint32_t i = 0; i < s.nin; i++) {
        g[i] = malloc(s.nel_in[i] * sizeof(float));
        g2[i] = malloc(s.nel_in[i] * sizeof(float));
    }
    int failed_before = mxk_t_failed_checks;
    /* forward vs reference */
    sess_forward(&s, MXK_REQ_WRITE, 5.0f, 1, out);
    if (ref) {
        double *want = malloc(s.nel_out[0] * sizeof(double));
        ref(&s, want);
        for (uint64_t e = 0; e < s.nel_out[0]; e++)
            CHECK_NEAR(out[0][e], want[e], 1e-5);
        free(want);
    }
    /* forward requests: ADD onto 5, NULL leaves 5 */
    sess_forward(&s, MXK_REQ_ADD, 5.0f, 1, out2);
    for (uint64_t e = 0; e < s.nel_out[0]; e++)
        CHECK_NEAR(out2[0][e], out[0][e] + 5.0f, 1e-5);
    sess_forward(&s, MXK_REQ_NULL, 5.0f, 1, out2);
    for (uint64_t e = 0; e < s.nel_out[0]; e++)
        CHECK(out2[0][e] == 5.0f);
    if (grad_mask) {
        mxk_op_req req[MAXIO];
        for (uint32_t i = 0; i < s.nin; i++)
            req[i] = (grad_mask >> i) & 1 ? MXK_REQ_WRITE : MXK_REQ_NULL;
        sess_forward(&s, MXK_REQ_WRITE, 0.0f, 1, out);
        sess_backward(&s, dy, out, req, 5.0f, g);
        for (uint32_t i = 0; i < s.nin; i++) {
            if (!((grad_mask >> i) & 1)) {
                for (uint64_t e = 0; e < s.nel_in[i]; e++)
                    CHECK(g[i][e] == 5.0f); /* NULL request untouched */
                continue;
            }
            for (uint64_t e = 0; e < s.nel_in[i]; e++) {
                const float eps = 1e-2f;
                float x0 = s.in[i][e];
                s.in[i][e] = x0 + eps;
                double lp = loss(&s, dy, out2);
                s.in[i][e] = x0 - eps;
                double lm = loss(&s, dy, out2);
                s.in[i][e] = x0;
                double fd = (lp - lm) / (2.0 * (double)eps);
                if (fabs(g[i][e] - fd) > 2e-2 * (1.0 + fabs(fd)))
                    fprintf(stderr, "%s: d input %u [%llu]: backward %g, finite difference %g\n",
                            op, (unsigned)i, (unsigned long long)e, g[i][e], fd);
                CHECK(fabs(g[i][e] - fd) <= 2e-2 * (1.0 + fabs(fd)));
            }
        }
        /* backward ADD onto 5 */
        for (uint32_t i = 0; i < s.nin; i++)
            req[i] = (grad_mask >> i) & 1 ? MXK_REQ_ADD : MXK_REQ_NULL;
        sess_backward(&s, dy, out, req, 5.0f, g2);
        for (uint32_t i = 0; i < s.nin; i++)
            if ((grad_mask >> i) & 1)
                for (uint64_t e = 0; e < s.nel_in[i]; e++)
                    CHECK_NEAR(g2[i][e], g[i][e] + 5.0f, 1e-5);
    }
    if (mxk_t_failed_checks != failed_before)
        fprintf(stderr, "  ... in check_op(%s)\n", op);
    for (uint32_t i = 0; i < s.nout; i++) {
        free(out[i]);
        free(out2[i]);
        free(dy[i]);
    }
    for (uint32_t i = 0; i < s.nin; i++) {
        free(g[i]);
        free(g2[i]);
    }
    sess_close(&s);
}

#define SH1(a) ((mxk_shape){.ndim = 1, .dims = {a}})
#define SH2(a, b) ((mxk_shape){.ndim = 2, .dims = {a, b}})
#define SH3(a, b, c) ((mxk_shape){.ndim = 3, .dims = {a, b, c}})
#define SH4(a, b, c, d) ((mxk_shape){.ndim = 4, .dims = {a, b, c, d}})

/* ---- float64 references ------------------------------------------------ */

/** softmax over the last axis of a (rows, k) view; log when `log`. */
static void ref_softmax_last(const sess *s, double *o, int log_) {
    uint64_t k = (uint64_t)s->is[0].dims[s->is[0].ndim - 1], rows = s->nel_in[0] / k;
    for (uint64_t r = 0; r < rows; r++) {
        double mx = -INFINITY, sum = 0;
        for (uint64_t j = 0; j < k; j++)
            mx = fmax(mx, s->in[0][r * k + j]);
        for (uint64_t j = 0; j < k; j++)
            sum += exp(s->in[0][r * k + j] - mx);
        for (uint64_t j = 0; j < k; j++) {
            double z = s->in[0][r * k + j] - mx - log(sum);
            o[r * k + j] = log_ ? z : exp(z);
        }
    }
}
static void ref_softmax(const sess *s, double *o) {
    ref_softmax_last(s, o, 0);
}
static void ref_log_softmax(const sess *s, double *o) {
    ref_softmax_last(s, o, 1);
}
static void ref_identity(const sess *s, double *o) {
    for (uint64_t e = 0; e < s->nel_in[0]; e++)
        o[e] = s->in[0][e];
}
static void ref_sigmoid(const sess *s, double *o) {
    for (uint64_t e = 0; e < s->nel_in[0]; e++)
        o[e] = 1.0 / (1.0 + exp(-(double)s->in[0][e]));
}
static void ref_leaky(const sess *s, double *o) {
    for (uint64_t e = 0; e < s->nel_in[0]; e++)
        o[e] = s->in[0][e] > 0 ? s->in[0][e] : 0.25 * s->in[0][e];
}
static void ref_elu(const sess *s, double *o) {
    for (uint64_t e = 0; e < s->nel_in[0]; e++)
        o[e] = s->in[0][e] > 0 ? s->in[0][e] : 0.25 * expm1((double)s->in[0][e]);
}
/** prelu with data (2,3,4), gamma (3,). */
static void ref_prelu(const sess *s, double *o) {
    for (uint64_t e = 0; e < s->nel_in[0]; e++) {
        double x = s->in[0][e];
        o[e] = x > 0 ? x : s->in[1][(e / 4) % 3] * x;
    }
}
static void ref_add3(const sess *s, double *o) {
    for (uint64_t e = 0; e < s->nel_in[0]; e++)
        o[e] = (double)s->in[0][e] + s->in[1][e] + s->in[2][e];
}
/** Concat of (2,1,3) and (2,2,3) on dim 1. */
static void ref_concat(const sess *s, double *o) {
    for (int n = 0; n < 2; n++)
        for (int c = 0; c < 3; c++)
            for (int w = 0; w < 3; w++)
                o[(n * 3 + c) * 3 + w] =
                    c < 1 ? s->in[0][(n * 1 + c) * 3 + w] : s->in[1][(n * 2 + c - 1) * 3 + w];
}
/** SliceChannel of (2,4,3) into 2 on axis 1: output0. */
static void ref_slice0(const sess *s, double *o) {
    for (int n = 0; n < 2; n++)
        for (int c = 0; c < 2; c++)
            for (int w = 0; w < 3; w++)
                o[(n * 2 + c) * 3 + w] = s->in[0][(n * 4 + c) * 3 + w];
}
/** transpose of (2,3,4) with axes (1,2,0): out (3,4,2). */
static void ref_transpose(const sess *s, double *o) {
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 2; c++)
                o[(a * 4 + b) * 2 + c] = s->in[0][(c * 3 + a) * 4 + b];
}
/** SwapAxis dim1 0 dim2 2 of (2,3,4): out (4,3,2). */
static void ref_swap(const sess *s, double *o) {
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 2; c++)
                o[(a * 3 + b) * 2 + c] = s->in[0][(c * 3 + b) * 4 + a];
}
/** Reductions of (2,3,4) over axis 1 (out (2,4)). */
static int g_red;
static void ref_reduce(const sess *s, double *o) {
    for (int a = 0; a < 2; a++)
        for (int c = 0; c < 4; c++) {
            double acc = g_red == 2 ? -INFINITY : g_red == 3 ? INFINITY : 0;
            for (int b = 0; b < 3; b++) {
                double x = s->in[0][(a * 3 + b) * 4 + c];
                acc = g_red == 0   ? acc + x
                      : g_red == 1 ? acc + x / 3
                      : g_red == 2 ? fmax(acc, x)
                      : g_red == 3 ? fmin(acc, x)
                                   : acc + x * x;
            }
            o[a * 4 + c] = g_red == 4 ? sqrt(acc) : acc;
        }
}
/** Broadcast of (2,1,4) op (3,1). */
static int g_bc;
static void ref_broadcast(const sess *s, double *o) {
    for (int a = 0; a < 2; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 4; c++) {
                double l = s->in[0][a * 4 + c], r = s->in[1][b];
                o[(a * 3 + b) * 4 + c] = g_bc == 0   ? l + r
                                         : g_bc == 1 ? l - r
                                         : g_bc == 2 ? l * r
                                         : g_bc == 3 ? l / r
                                         : g_bc == 4 ? fmax(l, r)
                                         : g_bc == 5 ? fmin(l, r)
                                                     : pow(l, r);
            }
}
static double (*g_un)(double);
static void ref_unary(const sess *s, double *o) {
    for (uint64_t e = 0; e < s->nel_in[0]; e++)
        o[e] = g_un(s->in[0][e]);
}
static double d_sign(double x) {
    return (x > 0) - (x < 0);
}
static double d_rsqrt(double x) {
    return 1 / sqrt(x);
}
static double d_square(double x) {
    return x * x;
}
static double d_sigmoid(double x) {
    return 1 / (1 + exp(-x));
}
static double d_relu(double x) {
    return x > 0 ? x : 0;
}
static double d_clip(double x) {
    return fmin(fmax(x, -0.45), 0.6);
}

/* ---- tests -------------------------------------------------------------- */

static void test_softmax_family(void) {
    const char *k[] = {"axis"}, *v[] = {"-1"};
    mxk_shape s = SH3(2, 3, 4);
    check_op("softmax", 1, k, v, 1, &s, -2, 2, 1, ref_softmax);
    check_op("log_softmax", 1, k, v, 1, &s, -2, 2, 1, ref_log_softmax);
    const char *k2[] = {"axis", "temperature"}, *v2[] = {"1", "2.5"};
    check_op("softmax", 2, k2, v2, 1, &s, -2, 2, 1, NULL);
    const char *k3[] = {"mode"}, *v3[] = {"channel"};
    check_op("SoftmaxActivation", 1, k3, v3, 1, &s, -2, 2, 1, NULL);
    mxk_shape s2 = SH2(3, 5);
    check_op("SoftmaxActivation", 0, NULL, NULL, 1, &s2, -2, 2, 1, ref_softmax);
}

/** Regression outputs: forward, and the closed-form gradient grad_scale/m * (y - label). */
static void test_regression_outputs(void) {
    mxk_shape sh[2] = {SH2(2, 3), SH2(2, 3)};
    const char *names[] = {"LinearRegressionOutput", "LogisticRegressionOutput",
                           "MAERegressionOutput"};
    ref_fn refs[] = {ref_identity, ref_sigmoid, ref_identity};
    const char *k[] = {"grad_scale"}, *v[] = {"2"};
    for (int t = 0; t < 3; t++) {
        check_op(names[t], 1, k, v, 2, sh, -1, 1, 0, refs[t]);
        sess s;
        if (!sess_open(&s, names[t], 1, k, v, 2, sh, -1, 1))
            continue;
        float y[6], dy[6] = {7, 7, 7, 7, 7, 7}, g0[6], g1[6], *out[1] = {y}, *dys[1] = {dy},
                    *g[2] = {g0, g1};
        sess_forward(&s, MXK_REQ_WRITE, 0, 1, out);
        mxk_op_req req[2] = {MXK_REQ_WRITE, MXK_REQ_WRITE};
        sess_backward(&s, dys, out, req, 5, g);
        for (int e = 0; e < 6; e++) {
            double d = (double)y[e] - s.in[1][e];
            double want = 2.0 / 3.0 * (t == 2 ? (double)((d > 0) - (d < 0)) : d);
            CHECK_NEAR(g0[e], want, 1e-6);
            CHECK(g1[e] == 0.0f); /* label: zero gradient */
        }
        sess_close(&s);
    }
    /* data (N,1) takes a label (N,) by default */
    mxk_shape d1[2] = {SH2(4, 1), {.ndim = 0}};
    mxk_op_instance *inst = NULL;
    CHECK_EQ_INT(
        mxk_op_instance_create("LinearRegressionOutput", 0, NULL, NULL, cpu, 2, d1, NULL, &inst),
        MXK_OK);
    mxk_shape ls;
    if (inst) {
        mxk_op_instance_shape(inst, 0, 1, &ls, NULL);
        CHECK(ls.ndim == 1 && ls.dims[0] == 4);
    }
    mxk_op_instance_free(inst);
}

static void test_concat_slice_add_n(void) {
    const char *k[] = {"num_args", "dim"}, *v[] = {"2", "1"};
    mxk_shape cs[2] = {SH3(2, 1, 3), SH3(2, 2, 3)};
    check_op("Concat", 2, k, v, 2, cs, -1, 1, 3, ref_concat);
    const char *k2[] = {"num_outputs", "axis"}, *v2[] = {"2", "1"};
    mxk_shape ss = SH3(2, 4, 3);
    check_op("SliceChannel", 2, k2, v2, 1, &ss, -1, 1, 1, ref_slice0);
    check_op("split", 2, k2, v2, 1, &ss, -1, 1, 1, ref_slice0);
    const char *k3[] = {"num_outputs", "axis", "squeeze_axis"}, *v3[] = {"4", "-2", "1"};
    check_op("SliceChannel", 3, k3, v3, 1, &ss, -1, 1, 1, NULL);
    const char *k4[] = {"num_args"}, *v4[] = {"3"};
    mxk_shape as[3] = {SH2(2, 3), SH2(2, 3), SH2(2, 3)};
    check_op("ElementWiseSum", 1, k4, v4, 3, as, -1, 1, 7, ref_add3);
    check_op("add_n", 1, k4, v4, 3, as, -1, 1, 5, ref_add3);
}

static void test_leaky_relu(void) {
    mxk_shape s = SH3(2, 3, 4);
    const char *k[] = {"act_type"};
    const char *leaky[] = {"leaky"}, *elu[] = {"elu"}, *prelu[] = {"prelu"};
    check_op("LeakyReLU", 1, k, leaky, 1, &s, -1, 1, 1, ref_leaky);
    check_op("LeakyReLU", 1, k, elu, 1, &s, -1, 1, 1, ref_elu);
    mxk_shape ps[2] = {SH3(2, 3, 4), SH1(3)};
    check_op("LeakyReLU", 1, k, prelu, 2, ps, -1, 1, 3, ref_prelu);
    /* rrelu: training draws slopes in [lower, upper) into mask; inference uses the mean */
    const char *rk[] = {"act_type", "lower_bound", "upper_bound"}, *rv[] = {"rrelu", "0.1", "0.3"};
    sess r;
    if (!sess_open(&r, "LeakyReLU", 3, rk, rv, 1, &s, -1, 1))
        return;
    CHECK_EQ_INT(r.nout, 2);
    CHECK_EQ_INT(r.nvis, 1);
    float y[24], m[24], *out[2] = {y, m};
    sess_forward(&r, MXK_REQ_WRITE, 0, 1, out);
    for (int e = 0; e < 24; e++) {
        CHECK(m[e] >= 0.1f && m[e] < 0.3f);
        float x = r.in[0][e];
        CHECK_NEAR(y[e], x > 0 ? x : m[e] * x, 1e-6);
    }
    sess_forward(&r, MXK_REQ_WRITE, 0, 0, out);
    for (int e = 0; e < 24; e++)
        CHECK_NEAR(m[e], 0.2, 1e-6);
    sess_close(&r);
}

/** Embedding by hand, and clipping of out-of-range indices; d weight scatter-adds. */
static void test_embedding(void) {
    const char *k[] = {"input_dim", "output_dim"}, *v[] = {"4", "5"};
    mxk_shape sh[2] = {SH2(2, 2), {.ndim = 0}};
    sess s;
    if (!sess_open(&s, "Embedding", 2, k, v, 2, sh, 0, 1))
        return;
    CHECK(s.is[1].ndim == 2 && s.is[1].dims[0] == 4 && s.is[1].dims[1] == 5);
    CHECK(s.os[0].ndim == 3 && s.os[0].dims[2] == 5);
    const float idx[4] = {1, 3, 0, 2};
    memcpy(s.in[0], idx, sizeof idx);
    for (int i = 0; i < 20; i++)
        s.in[1][i] = (float)i;
    float y[20], *out[1] = {y};
    sess_forward(&s, MXK_REQ_WRITE, 0, 1, out);
    const int rows[4] = {1, 3, 0, 2};
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < 5; j++)
            CHECK(y[r * 5 + j] == (float)(rows[r] * 5 + j));
    /* clipping: -3 -> row 0, 9 -> row 3; repeated indices accumulate in d weight */
    const float idx2[4] = {-3, 9, 3, 1.7f};
    memcpy(s.in[0], idx2, sizeof idx2);
    sess_forward(&s, MXK_REQ_WRITE, 0, 1, out);
    CHECK(y[0] == 0 && y[5] == 15 && y[10] == 15 && y[15] == 5);
    float dy[20], g0[4] = {5, 5, 5, 5}, g1[20], *dys[1] = {dy}, *g[2] = {g0, g1};
    for (int i = 0; i < 20; i++)
        dy[i] = 1;
    /* the indices get no gradient: MXNet refuses a request for one */
    mxk_op_req req[2] = {MXK_REQ_NULL, MXK_REQ_WRITE};
    sess_backward(&s, dys, out, req, 5, g);
    const float rowsum[4] = {1, 1, 0, 2};
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < 5; j++)
            CHECK(g1[r * 5 + j] == rowsum[r]);
    req[0] = MXK_REQ_NULL;
    req[1] = MXK_REQ_ADD;
    sess_backward(&s, dys, out, req, 5, g);
    CHECK(g1[0] == 6 && g1[10] == 5 && g1[15] == 7 && g0[0] == 5);
    sess_close(&s);
}

/**
 * Runs one update step in place: in[0] (weight) is also the output, in[1] the
 * gradient, and in[2..nin) the optimizer states, which are aux states (mutated
 * inputs, as MXNet lists them).
 */
static void update_step(const char *op, uint32_t na, const char *const *k, const char *const *v,
                        uint32_t nin, mxk_ndarray **in) {
    mxk_shape shapes[2] = {mxk_ndarray_shape(in[0]), mxk_ndarray_shape(in[1])};
    mxk_op_instance *inst = NULL;
    CHECK_EQ_INT(mxk_op_instance_create(op, na, k, v, cpu, 2, shapes, NULL, &inst), MXK_OK);
    if (inst == NULL)
        return;
    CHECK_EQ_INT(mxk_op_instance_forward(inst, 0, in, in, NULL, nin > 2 ? in + 2 : NULL), MXK_OK);
    mxk_op_instance_free(inst);
}

static float first(mxk_ndarray *a) {
    float v[4] = {0};
    to_host(a, v);
    return v[0];
}

/** MXNet's update formulas (optimizer_op-inl.h) on worked steps; SGD on zeros with gradient ones
 * and lr 0.01 gives -0.01. */
static void test_optimizer_updates(void) {
    mxk_shape s = SH1(3);
    mxk_ndarray *w, *g, *m, *var;
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 0, &w);
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 1, &g);
    mxk_ndarray *in2[2] = {w, g};
    const char *k[] = {"lr"}, *v[] = {"0.01"};
    update_step("sgd_update", 1, k, v, 2, in2);
    CHECK_NEAR(first(w), -0.01, 1e-7);
    mxk_ndarray_free(w);
    mxk_ndarray_free(g);

    /* sgd_mom_update w=1, g=0.5, lr 0.1, momentum 0.9, wd 0.01, 3 steps */
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 1, &w);
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 0.5, &g);
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 0, &m);
    in2[1] = g;
    const char *km[] = {"lr", "momentum", "wd"}, *vm[] = {"0.1", "0.9", "0.01"};
    const double want_m[3] = {-0.051, -0.096849, -0.138016251},
                 want_w[3] = {0.949, 0.852151, 0.714134749};
    mxk_ndarray *in3[3] = {w, g, m};
    for (int t = 0; t < 3; t++) {
        update_step("sgd_mom_update", 3, km, vm, 3, in3);
        CHECK_NEAR(first(m), want_m[t], 1e-6);
        CHECK_NEAR(first(w), want_w[t], 1e-6);
    }
    mxk_ndarray_free(w);
    mxk_ndarray_free(m);

    /* sgd_update, same without momentum, 2 steps */
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 1, &w);
    in2[0] = w;
    const char *ks[] = {"lr", "wd"}, *vs[] = {"0.1", "0.01"};
    update_step("sgd_update", 2, ks, vs, 2, in2);
    CHECK_NEAR(first(w), 0.949, 1e-6);
    update_step("sgd_update", 2, ks, vs, 2, in2);
    CHECK_NEAR(first(w), 0.898051, 1e-6);
    mxk_ndarray_free(w);
    mxk_ndarray_free(g);

    /* w=1, g=10, rescale 0.5, clip 1, lr 0.1 -> 0.9 */
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 1, &w);
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 10, &g);
    in2[0] = w;
    in2[1] = g;
    const char *kc[] = {"lr", "rescale_grad", "clip_gradient"}, *vc[] = {"0.1", "0.5", "1"};
    update_step("sgd_update", 3, kc, vc, 2, in2);
    CHECK_NEAR(first(w), 0.9, 1e-7);
    mxk_ndarray_free(w);
    mxk_ndarray_free(g);

    /* Python Adam w=1, g=0.5, lr 0.001: the operator gets lr_t (bias correction) */
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 1, &w);
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 0.5, &g);
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 0, &m);
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 0, &var);
    mxk_ndarray *in4[4] = {w, g, m, var};
    const double want_lr[3] = {3.16228e-4, 2.35317e-4, 2.02011e-4},
                 want_aw[3] = {0.9990000006, 0.9980000011, 0.9970000014};
    for (int t = 1; t <= 3; t++) {
        double lr_t = 0.001 * sqrt(1 - pow(0.999, t)) / (1 - pow(0.9, t));
        CHECK_NEAR(lr_t, want_lr[t - 1], 1e-5);
        char lrs[64];
        snprintf(lrs, sizeof lrs, "%.17g", lr_t);
        const char *ka[] = {"lr"}, *va[] = {lrs};
        update_step("adam_update", 1, ka, va, 4, in4);
        CHECK_NEAR(first(w), want_aw[t - 1], 1e-6);
    }
    /* the operator's own formula (no bias correction), with wd and clipping */
    float w0 = 0.5f, g0 = 3.0f, m0 = 0.2f, v0 = 0.1f;
    mxk_ndarray_fill(w, w0);
    mxk_ndarray_fill(g, g0);
    mxk_ndarray_fill(m, m0);
    mxk_ndarray_fill(var, v0);
    const char *kf[] = {"lr", "wd", "rescale_grad", "clip_gradient", "beta1", "beta2", "epsilon"},
               *vf[] = {"0.01", "0.1", "0.5", "1.2", "0.8", "0.9", "1e-6"};
    update_step("adam_update", 7, kf, vf, 4, in4);
    double gg = fmin(0.5 * g0 + 0.1 * w0, 1.2);
    double mm = 0.8 * m0 + 0.2 * gg, vv = 0.9 * v0 + 0.1 * gg * gg;
    CHECK_NEAR(first(m), mm, 1e-6);
    CHECK_NEAR(first(var), vv, 1e-6);
    CHECK_NEAR(first(w), w0 - 0.01 * mm / (sqrt(vv) + 1e-6), 1e-6);
    mxk_ndarray *all[] = {w, g, m, var};
    for (int i = 0; i < 4; i++)
        mxk_ndarray_free(all[i]);

    /* declared mutated inputs */
    mxk_shape sh4[4] = {s, s, s, s};
    mxk_op_instance *inst = NULL;
    CHECK_EQ_INT(mxk_op_instance_create("sgd_update", 0, NULL, NULL, cpu, 2, sh4, NULL, &inst),
                 MXK_ERR_INVALID_ARGUMENT); /* lr is required */
}

static void test_reductions(void) {
    mxk_shape s = SH3(2, 3, 4);
    const char *k[] = {"axis"}, *v[] = {"1"};
    const char *ops[] = {"sum", "mean", "max", "min", "norm"};
    g_spread = 1;
    for (g_red = 0; g_red < 5; g_red++)
        check_op(ops[g_red], 1, k, v, 1, &s, -1, 1, 1, ref_reduce);
    const char *k2[] = {"axis", "keepdims", "exclude"}, *v2[] = {"(0,2)", "1", "1"};
    g_red = 1;
    check_op("mean", 3, k2, v2, 1, &s, -1, 1, 1, ref_reduce); /* exclude (0,2) = axis 1 */
    const char *k3[] = {"ord"}, *v3[] = {"1"};
    check_op("norm", 1, k3, v3, 1, &s, 0.1f, 1, 1, NULL);
    check_op("max", 0, NULL, NULL, 1, &s, -1, 1, 1, NULL);
    g_spread = 0;
}

static void test_unary_and_clip(void) {
    mxk_shape s = SH2(3, 4);
    struct {
        const char *op;
        double (*f)(double);
        float lo, hi;
        int grad;
    } t[] = {{"abs", fabs, -1, 1, 1},    {"ceil", ceil, -3, 3, 0},
             {"cos", cos, -2, 2, 1},     {"exp", exp, -1, 1, 1},
             {"floor", floor, -3, 3, 0}, {"log", log, 0.5f, 2, 1},
             {"round", round, -3, 3, 0}, {"rsqrt", d_rsqrt, 0.5f, 2, 1},
             {"sign", d_sign, -1, 1, 0}, {"sin", sin, -2, 2, 1},
             {"sqrt", sqrt, 0.5f, 2, 1}, {"square", d_square, -1, 1, 1},
             {"tanh", tanh, -1, 1, 1},   {"sigmoid", d_sigmoid, -2, 2, 1},
             {"relu", d_relu, -1, 1, 1}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        g_un = t[i].f;
        check_op(t[i].op, 0, NULL, NULL, 1, &s, t[i].lo, t[i].hi, 1, ref_unary);
    }
    const char *k[] = {"a_min", "a_max"}, *v[] = {"-0.45", "0.6"};
    g_un = d_clip;
    g_spread = 1; /* inputs in steps of 1/6: none within the finite-difference step of a bound */
    check_op("clip", 2, k, v, 1, &s, -1, 1, 1, ref_unary);
    g_spread = 0;
}

static void test_broadcast(void) {
    const char *ops[] = {"broadcast_add",  "broadcast_sub",     "broadcast_mul",
                         "broadcast_div",  "broadcast_maximum", "broadcast_minimum",
                         "broadcast_power"};
    mxk_shape sh[2] = {SH3(2, 1, 4), SH2(3, 1)};
    for (g_bc = 0; g_bc < 7; g_bc++) {
        float lo = g_bc == 3 || g_bc == 6 ? 0.5f : -1, hi = g_bc == 3 || g_bc == 6 ? 2 : 1;
        check_op(ops[g_bc], 0, NULL, NULL, 2, sh, lo, hi, 3, ref_broadcast);
    }
    mxk_shape bad[2] = {SH2(2, 3), SH2(2, 4)};
    mxk_op_instance *inst = NULL;
    CHECK_EQ_INT(mxk_op_instance_create("broadcast_add", 0, NULL, NULL, cpu, 2, bad, NULL, &inst),
                 MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxk_get_last_error(), "(2,3) (2,4)");
}

static void test_transpose_swapaxis(void) {
    mxk_shape s = SH3(2, 3, 4);
    const char *k[] = {"axes"}, *v[] = {"(1,2,0)"};
    check_op("transpose", 1, k, v, 1, &s, -1, 1, 1, ref_transpose);
    check_op("transpose", 0, NULL, NULL, 1, &s, -1, 1, 1, NULL);
    const char *k2[] = {"dim1", "dim2"}, *v2[] = {"0", "2"};
    check_op("SwapAxis", 2, k2, v2, 1, &s, -1, 1, 1, ref_swap);
}

static void test_cast_round_trips(void) {
    const char *dts[] = {"float64", "float16", "uint8", "int32", "int8", "int64", "float32"};
    const int32_t codes[] = {MXK_FLOAT64, MXK_FLOAT16, MXK_UINT8,  MXK_INT32,
                             MXK_INT8,    MXK_INT64,   MXK_FLOAT32};
    const float x[6] = {0, 1, 2, 7, 100, 3.75f};
    mxk_shape s = SH1(6);
    for (int i = 0; i < 7; i++) {
        mxk_ndarray *a = arr_f32(&s, x), *out[MXK_MAX_OUTPUTS] = {0}, *back[MXK_MAX_OUTPUTS] = {0};
        uint32_t n = 0, n2 = 0;
        const char *k[] = {"dtype"}, *v[] = {dts[i]}, *vb[] = {"float32"};
        CHECK_EQ_INT(mxk_imperative_invoke("Cast", 1, &a, &n, out, 1, k, v), MXK_OK);
        if (out[0] == NULL)
            continue;
        CHECK_EQ_INT(mxk_ndarray_dtype(out[0]), codes[i]);
        CHECK_EQ_INT(mxk_imperative_invoke("Cast", 1, out, &n2, back, 1, k, vb), MXK_OK);
        float r[6] = {0};
        if (back[0])
            to_host(back[0], r);
        for (int e = 0; e < 6; e++) {
            float want = i >= 2 && i <= 5 ? truncf(x[e]) : x[e];
            CHECK(r[e] == want);
        }
        mxk_ndarray_free(a);
        mxk_ndarray_free(out[0]);
        mxk_ndarray_free(back[0]);
    }
    /* out of the integer range: wraps as MXNet's static_cast through int32 does, and the
     * backward cast */
    const float big[2] = {300, -5};
    mxk_shape s2 = SH1(2);
    mxk_ndarray *a = arr_f32(&s2, big), *out[MXK_MAX_OUTPUTS] = {0};
    uint32_t n = 0;
    const char *k[] = {"dtype"}, *v[] = {"uint8"};
    CHECK_EQ_INT(mxk_imperative_invoke("Cast", 1, &a, &n, out, 1, k, v), MXK_OK);
    uint8_t u[2] = {0};
    if (out[0])
        mxk_ndarray_copy_to_host(out[0], u, 2);
    CHECK(u[0] == 44 && u[1] == 251);
    mxk_ndarray_free(a);
    mxk_ndarray_free(out[0]);
    const char *v32[] = {"float32"};
    mxk_shape sh = SH2(2, 3);
    check_op("Cast", 1, k, v32, 1, &sh, -1, 1, 1, ref_identity);
}

static void test_argmax_one_hot(void) {
    const float x[6] = {1, 5, 3, 9, 2, 9};
    mxk_shape s = SH2(2, 3);
    mxk_ndarray *a = arr_f32(&s, x), *out[MXK_MAX_OUTPUTS] = {0};
    uint32_t n = 0;
    const char *k[] = {"axis"}, *v[] = {"1"};
    CHECK_EQ_INT(mxk_imperative_invoke("argmax", 1, &a, &n, out, 1, k, v), MXK_OK);
    float r[6] = {0};
    if (out[0]) {
        to_host(out[0], r);
        CHECK(r[0] == 1 && r[1] == 0); /* first maximum wins */
        mxk_ndarray_free(out[0]);
    }
    n = 0;
    CHECK_EQ_INT(mxk_imperative_invoke("argmax_channel", 1, &a, &n, out, 0, NULL, NULL), MXK_OK);
    if (out[0]) {
        to_host(out[0], r);
        CHECK(r[0] == 1 && r[1] == 0);
        mxk_ndarray_free(out[0]);
    }
    n = 0;
    const char *k0[] = {"axis", "keepdims"}, *v0[] = {"0", "1"};
    CHECK_EQ_INT(mxk_imperative_invoke("argmax", 1, &a, &n, out, 2, k0, v0), MXK_OK);
    if (out[0]) {
        mxk_shape os = mxk_ndarray_shape(out[0]);
        CHECK(os.ndim == 2 && os.dims[0] == 1 && os.dims[1] == 3);
        to_host(out[0], r);
        CHECK(r[0] == 1 && r[1] == 0 && r[2] == 1);
        mxk_ndarray_free(out[0]);
    }
    mxk_ndarray_free(a);
    const float idx[3] = {2, -1, 0};
    mxk_shape si = SH1(3);
    a = arr_f32(&si, idx);
    n = 0;
    const char *ko[] = {"depth", "on_value", "off_value"}, *vo[] = {"3", "8", "-1"};
    CHECK_EQ_INT(mxk_imperative_invoke("one_hot", 1, &a, &n, out, 3, ko, vo), MXK_OK);
    float oh[9] = {0};
    if (out[0]) {
        to_host(out[0], oh);
        const float want[9] = {-1, -1, 8, -1, -1, -1, 8, -1, -1};
        CHECK(memcmp(oh, want, sizeof want) == 0);
        mxk_ndarray_free(out[0]);
    }
    mxk_ndarray_free(a);
}

/** Draws `n` samples of op with attrs into host buffer `out`. */
static void sample(const char *op, uint32_t na, const char *const *k, const char *const *v,
                   float *out, uint64_t n) {
    mxk_op_instance *inst = NULL;
    CHECK_EQ_INT(mxk_op_instance_create(op, na, k, v, cpu, 0, NULL, NULL, &inst), MXK_OK);
    if (inst == NULL)
        return;
    mxk_shape s;
    mxk_op_instance_shape(inst, 1, 0, &s, NULL);
    CHECK(count(&s) == n);
    mxk_ndarray *o = arr_f32(&s, NULL);
    CHECK_EQ_INT(mxk_op_instance_forward(inst, 0, NULL, &o, NULL, NULL), MXK_OK);
    to_host(o, out);
    mxk_ndarray_free(o);
    mxk_op_instance_free(inst);
}

static void test_random_sampling(void) {
    enum { N = 20000 };
    float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float));
    const char *ku[] = {"low", "high", "shape"}, *vu[] = {"-1", "3", "(100,200)"};
    mxk_random_seed(7);
    sample("_random_uniform", 3, ku, vu, a, N);
    double mean = 0, var = 0, lo = 1e9, hi = -1e9;
    for (int i = 0; i < N; i++) {
        mean += a[i] / (double)N;
        lo = fmin(lo, a[i]);
        hi = fmax(hi, a[i]);
    }
    for (int i = 0; i < N; i++)
        var += (a[i] - mean) * (a[i] - mean) / (N - 1);
    CHECK(lo >= -1 && hi < 3);
    CHECK(fabs(mean - 1.0) < 4 * sqrt(16.0 / 12 / N));
    CHECK(fabs(var - 16.0 / 12) < 0.05);
    /* same seed, other thread counts: same numbers */
    int32_t threads = mxk_get_num_threads();
    mxk_set_num_threads(1);
    mxk_random_seed(7);
    sample("random_uniform", 3, ku, vu, b, N);
    CHECK(memcmp(a, b, N * sizeof(float)) == 0);
    mxk_set_num_threads(4);
    mxk_random_seed(7);
    sample("random_uniform", 3, ku, vu, b, N);
    CHECK(memcmp(a, b, N * sizeof(float)) == 0);
    mxk_set_num_threads(threads);
    mxk_random_seed(8);
    sample("random_uniform", 3, ku, vu, b, N);
    CHECK(memcmp(a, b, N * sizeof(float)) != 0);

    const char *kn[] = {"loc", "scale", "shape"}, *vn[] = {"2", "0.5", "(20000,)"};
    mxk_random_seed(7);
    sample("_random_normal", 3, kn, vn, a, N);
    mean = var = 0;
    for (int i = 0; i < N; i++)
        mean += a[i] / (double)N;
    for (int i = 0; i < N; i++)
        var += (a[i] - mean) * (a[i] - mean) / (N - 1);
    CHECK(fabs(mean - 2.0) < 4 * 0.5 / sqrt(N));
    CHECK(fabs(var - 0.25) < 0.015);
    mxk_random_seed(7);
    sample("random_normal", 3, kn, vn, b, N);
    CHECK(memcmp(a, b, N * sizeof(float)) == 0);
    free(a);
    free(b);
}

/** In place equals out of place for operators that declare forward in-place. */
static void test_inplace(void) {
    const char *ops[] = {"softmax", "sqrt", "LeakyReLU", "clip", "LinearRegressionOutput"};
    const char *kc[] = {"a_min", "a_max"}, *vc[] = {"0.2", "0.7"};
    mxk_shape s[2] = {SH2(3, 4), SH2(3, 4)};
    for (int i = 0; i < 5; i++) {
        uint32_t na = i == 3 ? 2 : 0, nin = i == 4 ? 2 : 1;
        sess t;
        if (!sess_open(&t, ops[i], na, kc, vc, nin, s, 0.1f, 1))
            continue;
        mxk_ndarray *a[2], *b[2], *out = arr_f32(&s[0], NULL);
        for (uint32_t j = 0; j < nin; j++) {
            a[j] = arr_f32(&s[j], t.in[j]);
            b[j] = arr_f32(&s[j], t.in[j]);
        }
        CHECK_EQ_INT(mxk_op_instance_forward(t.inst, 1, a, &out, NULL, NULL), MXK_OK);
        CHECK_EQ_INT(mxk_op_instance_forward(t.inst, 1, b, b, NULL, NULL), MXK_OK);
        float r1[12], r2[12];
        to_host(out, r1);
        to_host(b[0], r2);
        CHECK(memcmp(r1, r2, sizeof r1) == 0);
        for (uint32_t j = 0; j < nin; j++) {
            mxk_ndarray_free(a[j]);
            mxk_ndarray_free(b[j]);
        }
        mxk_ndarray_free(out);
        sess_close(&t);
    }
}

int main(void) {
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = BUILD_CONFDIR};
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    MXK_RUN(test_softmax_family);
    MXK_RUN(test_regression_outputs);
    MXK_RUN(test_concat_slice_add_n);
    MXK_RUN(test_leaky_relu);
    MXK_RUN(test_embedding);
    MXK_RUN(test_optimizer_updates);
    MXK_RUN(test_reductions);
    MXK_RUN(test_unary_and_clip);
    MXK_RUN(test_broadcast);
    MXK_RUN(test_transpose_swapaxis);
    MXK_RUN(test_cast_round_trips);
    MXK_RUN(test_argmax_one_hot);
    MXK_RUN(test_random_sampling);
    MXK_RUN(test_inplace);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
