/*
 * The SDK example plugin (sdk/examples/scaled_tanh), built out of tree by the
 * fixture sdk.example_build and loaded through a config dir like any plugin:
 *
 *   test_sdk_scaled_tanh CONFIG_DIR PLUGIN_LIBRARY NEED_CPU
 *
 * CONFIG_DIR holds plugins.d/scaled_tanh.conf (the built PLUGIN_LIBRARY) and,
 * when the cpu-blas plugin is part of the build, plugins.d/cpu-blas.conf (the CPU
 * device backend every CPU array needs). NEED_CPU is 1 when cpu-blas was built:
 * then a missing CPU device is a failure; otherwise the numerical tests are
 * skipped (exit 77 when nothing else ran).
 *
 * Checks: the plugin is listed with what it registered; ScaledTanh matches a
 * float64 reference (y = alpha * tanh(beta * x), LeCun 1998) with default and
 * given attributes; backward (reading out_grad and out_data only) matches central
 * finite differences of the float64 reference and of the operator's own forward;
 * every write request (NULL / WRITE / INPLACE / ADD) of forward and backward; and
 * the errors of bad dtypes and attributes.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mxk.h"
#include "testing.h"

/** Elements of the test arrays: shape (2, 5). */
#define N 10

static const char *g_conf_dir;   /* argv[1] */
static const char *g_plugin_lib; /* argv[2] */
static int g_need_cpu;           /* argv[3] */
static const mxk_context cpu = {MXK_DEV_CPU, 0};
static const mxk_shape shape25 = {.ndim = 2, .dims = {2, 5}};

/** Inputs spanning the linear part and both saturated tails of tanh. */
static const float xs[N] = {-4.0f, -2.5f, -1.0f, -0.4f, -0.05f, 0.0f, 0.3f, 1.0f, 1.7f, 3.2f};
/** Output gradients (arbitrary, signs mixed). */
static const float gs[N] = {0.5f, -1.25f, 2.0f, 0.75f, -0.3f, 1.0f, -2.0f, 0.125f, 1.5f, -0.8f};

/** The float64 reference: alpha * tanh(beta * x) (LeCun, "Efficient BackProp", 4.4). */
static double ref_f(double x, double alpha, double beta) {
    return alpha * tanh(beta * x);
}

/** Central finite difference of ref_f at x, in float64 (step 1e-6). */
static double ref_fd(double x, double alpha, double beta) {
    const double h = 1e-6;
    return (ref_f(x + h, alpha, beta) - ref_f(x - h, alpha, beta)) / (2.0 * h);
}

/** A CPU float32 array of shape (2,5) holding `v` (N values); NULL on failure. */
static mxk_ndarray *array_from(const float *v) {
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_create(&shape25, MXK_FLOAT32, cpu, &a) != MXK_OK) {
        fprintf(stderr, "mxk_ndarray_create: %s\n", mxk_get_last_error());
        return NULL;
    }
    if (mxk_ndarray_copy_from_host(a, v, N * sizeof(float)) != MXK_OK) {
        fprintf(stderr, "copy_from_host: %s\n", mxk_get_last_error());
        mxk_ndarray_free(a);
        return NULL;
    }
    return a;
}

/** A CPU float32 (2,5) array filled with `value`; NULL on failure. */
static mxk_ndarray *array_full(double value) {
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_full(&shape25, MXK_FLOAT32, cpu, value, &a) != MXK_OK) {
        fprintf(stderr, "mxk_ndarray_full: %s\n", mxk_get_last_error());
        return NULL;
    }
    return a;
}

/** Copies `a` (N float32) to `out`; returns the status (waits, reports errors). */
static mxk_status read_array(mxk_ndarray *a, float *out) {
    mxk_status rc = mxk_ndarray_copy_to_host(a, out, N * sizeof(float));
    if (rc != MXK_OK)
        fprintf(stderr, "copy_to_host: %s\n", mxk_get_last_error());
    return rc;
}

/** 1 when a CPU device is available; otherwise reports (fails if one was required). */
static int have_cpu(void) {
    if (mxk_device_count(MXK_DEV_CPU) > 0)
        return 1;
    if (g_need_cpu) {
        fprintf(stderr, "no CPU device although cpu-blas was built (plugins.d/cpu-blas.conf)\n");
        CHECK(0);
    }
    return 0;
}

/**
 * Runs ScaledTanh imperatively on xs with the given attributes (n of them) and
 * writes the output to y. Returns the status of the call or of the read.
 */
static mxk_status run_imperative(uint32_t n, const char *const *keys, const char *const *vals,
                                 const float *x, float *y) {
    mxk_ndarray *in = array_from(x);
    if (in == NULL)
        return MXK_ERR_INTERNAL;
    mxk_ndarray *outs[MXK_MAX_OUTPUTS] = {0};
    uint32_t nout = 0;
    mxk_status rc = mxk_imperative_invoke("ScaledTanh", 1, &in, &nout, outs, n, keys, vals);
    if (rc == MXK_OK) {
        CHECK_EQ_INT(nout, 1);
        rc = read_array(outs[0], y);
        mxk_ndarray_free(outs[0]);
    }
    mxk_ndarray_free(in);
    return rc;
}

/** The plugin is loaded from the conf, with its operator and CPU kernel, no rejections. */
static void test_plugin_listed(void) {
    char conf[PATH_MAX] = "";
    CHECK(realpath(g_conf_dir, conf) != NULL);
    CHECK(strcmp(mxk_config_dir(), g_conf_dir) == 0 || strcmp(mxk_config_dir(), conf) == 0);
    for (uint32_t i = 0; i < mxk_plugin_rejected_count(); i++) {
        const char *path = NULL, *reason = NULL;
        mxk_plugin_rejected_get(i, &path, &reason);
        fprintf(stderr, "rejected: %s: %s\n", path, reason);
    }
    CHECK_EQ_INT(mxk_plugin_rejected_count(), 0);
    int found = 0;
    for (uint32_t i = 0; i < mxk_plugin_count(); i++) {
        mxk_plugin_record r = {.struct_size = sizeof r};
        CHECK_EQ_INT(mxk_plugin_get(i, &r), MXK_OK);
        if (strcmp(r.name, "scaled_tanh") != 0)
            continue;
        found = 1;
        CHECK(strcmp(r.version, "0.1.0") == 0);
        CHECK_CONTAINS(r.description, "ScaledTanh");
        CHECK_EQ_INT(r.abi_major, MXK_ABI_MAJOR);
        CHECK_EQ_INT(r.num_ops, 1);
        CHECK_EQ_INT(r.num_kernels, 1);
        CHECK_EQ_INT(r.num_devices, 0);
        char want[PATH_MAX];
        CHECK(realpath(g_plugin_lib, want) != NULL);
        CHECK(strcmp(r.path, want) == 0);
        if (strcmp(r.path, want) != 0)
            fprintf(stderr, "plugin path '%s', expected '%s'\n", r.path, want);
    }
    CHECK(found);
    const char *plugin = mxk_op_plugin("ScaledTanh");
    CHECK(plugin != NULL && strcmp(plugin, "scaled_tanh") == 0);
    CHECK_EQ_INT(mxk_op_kernel_count("ScaledTanh"), 1);
    int32_t dev = 0;
    const char *backend = NULL;
    CHECK_EQ_INT(mxk_op_kernel_get("ScaledTanh", 0, &dev, &backend, &plugin), MXK_OK);
    CHECK_EQ_INT(dev, MXK_DEV_CPU);
    CHECK(backend != NULL && strcmp(backend, "scaled_tanh") == 0);
}

/** Forward with the default attributes (alpha 1.7159, beta 0.6667) against float64. */
static void test_forward_default_attrs(void) {
    if (!have_cpu())
        MXK_SKIP("no CPU device");
    float y[N];
    CHECK_EQ_INT(run_imperative(0, NULL, NULL, xs, y), MXK_OK);
    for (int i = 0; i < N; i++)
        CHECK_NEAR(y[i], ref_f(xs[i], 1.7159, 0.6667), 1e-6);
    /* LeCun's choice of constants: f(1) = 1 and f(-1) = -1 (to 1e-4). */
    CHECK_NEAR(y[7], 1.0, 1e-4);
    CHECK_NEAR(y[2], -1.0, 1e-4);
    CHECK_EQ_INT(y[5], 0); /* f(0) = 0 exactly */
}

/** Forward with given attributes (negative beta included) against float64. */
static void test_forward_given_attrs(void) {
    if (!have_cpu())
        MXK_SKIP("no CPU device");
    const char *keys[] = {"alpha", "beta"};
    const char *vals[] = {"2.5", "-0.3"};
    float y[N];
    CHECK_EQ_INT(run_imperative(2, keys, vals, xs, y), MXK_OK);
    for (int i = 0; i < N; i++)
        CHECK_NEAR(y[i], ref_f(xs[i], 2.5, -0.3), 1e-6);
    const char *k1[] = {"beta"}, *v1[] = {"1"};
    CHECK_EQ_INT(run_imperative(1, k1, v1, xs, y), MXK_OK); /* alpha keeps its default */
    for (int i = 0; i < N; i++)
        CHECK_NEAR(y[i], ref_f(xs[i], 1.7159, 1.0), 1e-6);
}

/** An instance of ScaledTanh(alpha 1.3, beta 0.8) on (2,5) float32; NULL on failure. */
static mxk_op_instance *make_instance(void) {
    const char *keys[] = {"alpha", "beta"}, *vals[] = {"1.3", "0.8"};
    mxk_op_instance *inst = NULL;
    mxk_status rc =
        mxk_op_instance_create("ScaledTanh", 2, keys, vals, cpu, 1, &shape25, NULL, &inst);
    CHECK_EQ_INT(rc, MXK_OK);
    if (rc != MXK_OK)
        fprintf(stderr, "mxk_op_instance_create: %s\n", mxk_get_last_error());
    return inst;
}

/**
 * Backward against central finite differences: of the float64 reference (tight)
 * and of the operator's own float32 forward (step 1e-2, loose). Backward gets no
 * input (in_data NULL), which the declared dependency allows.
 */
static void test_backward_finite_differences(void) {
    if (!have_cpu())
        MXK_SKIP("no CPU device");
    mxk_op_instance *inst = make_instance();
    if (inst == NULL)
        return;
    uint32_t ni = 0, no = 0, nv = 0, na = 0;
    mxk_op_instance_counts(inst, &ni, &no, &nv, &na);
    CHECK(ni == 1 && no == 1 && nv == 1 && na == 0);
    CHECK(strcmp(mxk_op_instance_name(inst, 0, 0), "data") == 0);
    CHECK(strcmp(mxk_op_instance_name(inst, 1, 0), "output") == 0);
    uint8_t need_og = 0, need_in = 0, need_out = 0;
    mxk_op_instance_backward_dependency(inst, &need_og, &need_in, &need_out);
    CHECK(need_og == 1 && need_in == 0 && need_out == 1); /* out_grad + out_data only */

    mxk_ndarray *x = array_from(xs), *y = array_full(0), *dy = array_from(gs);
    mxk_ndarray *dx = array_full(0);
    float hy[N], hdx[N];
    CHECK_EQ_INT(mxk_op_instance_forward(inst, 1, &x, &y, NULL, NULL), MXK_OK);
    CHECK_EQ_INT(mxk_op_instance_backward(inst, &dy, NULL, &y, &dx, NULL, NULL), MXK_OK);
    CHECK_EQ_INT(read_array(y, hy), MXK_OK);
    CHECK_EQ_INT(read_array(dx, hdx), MXK_OK);
    for (int i = 0; i < N; i++) {
        CHECK_NEAR(hy[i], ref_f(xs[i], 1.3, 0.8), 1e-6);
        CHECK_NEAR(hdx[i], gs[i] * ref_fd(xs[i], 1.3, 0.8), 1e-5);
    }
    /* The operator's own forward, differentiated numerically (element-wise op:
     * perturbing every element at once gives the diagonal of the Jacobian). */
    const float h = 1e-2f;
    float xp[N], xm[N], yp[N], ym[N];
    for (int i = 0; i < N; i++) {
        xp[i] = xs[i] + h;
        xm[i] = xs[i] - h;
    }
    const char *keys[] = {"alpha", "beta"}, *vals[] = {"1.3", "0.8"};
    CHECK_EQ_INT(run_imperative(2, keys, vals, xp, yp), MXK_OK);
    CHECK_EQ_INT(run_imperative(2, keys, vals, xm, ym), MXK_OK);
    for (int i = 0; i < N; i++) {
        double fd = ((double)yp[i] - (double)ym[i]) / ((double)xp[i] - (double)xm[i]);
        CHECK_NEAR(hdx[i], gs[i] * fd, 1e-3);
    }
    /* Backward needs out_grad and the output: omitting the output is an error. */
    CHECK_EQ_INT(mxk_op_instance_backward(inst, &dy, &x, NULL, &dx, NULL, NULL),
                 MXK_ERR_INVALID_ARGUMENT);
    mxk_ndarray_free(x);
    mxk_ndarray_free(y);
    mxk_ndarray_free(dy);
    mxk_ndarray_free(dx);
    mxk_op_instance_free(inst);
}

/** Forward through every write request: NULL keeps, WRITE overwrites, INPLACE, ADD adds. */
static void test_forward_write_requests(void) {
    if (!have_cpu())
        MXK_SKIP("no CPU device");
    mxk_op_instance *inst = make_instance();
    if (inst == NULL)
        return;
    mxk_ndarray *x = array_from(xs);
    float h[N];
    struct {
        mxk_op_req req;
        double fill;   /* output before the call */
        double before; /* weight of the old value in the expected result */
        double fresh;  /* weight of f(x) */
    } cases[] = {
        {MXK_REQ_ADD, 5.0, 1.0, 1.0},
        {MXK_REQ_NULL, 7.0, 1.0, 0.0},
        {MXK_REQ_WRITE, NAN, 0.0, 1.0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mxk_ndarray *y = array_full(cases[c].fill);
        CHECK_EQ_INT(mxk_op_instance_forward(inst, 0, &x, &y, &cases[c].req, NULL), MXK_OK);
        CHECK_EQ_INT(read_array(y, h), MXK_OK);
        for (int i = 0; i < N; i++) {
            double want = cases[c].fresh * ref_f(xs[i], 1.3, 0.8);
            if (cases[c].before != 0.0)
                want += cases[c].before * cases[c].fill;
            CHECK_NEAR(h[i], want, 1e-6);
        }
        mxk_ndarray_free(y);
    }
    /* In place: the output is the input array (the instance turns WRITE into INPLACE). */
    mxk_ndarray *xy = array_from(xs);
    mxk_op_req inplace = MXK_REQ_INPLACE;
    CHECK_EQ_INT(mxk_op_instance_forward(inst, 0, &xy, &xy, &inplace, NULL), MXK_OK);
    CHECK_EQ_INT(read_array(xy, h), MXK_OK);
    for (int i = 0; i < N; i++)
        CHECK_NEAR(h[i], ref_f(xs[i], 1.3, 0.8), 1e-6);
    CHECK_EQ_INT(mxk_op_instance_forward(inst, 0, &xy, &xy, NULL, NULL), MXK_OK); /* f(f(x)) */
    CHECK_EQ_INT(read_array(xy, h), MXK_OK);
    for (int i = 0; i < N; i++)
        CHECK_NEAR(h[i], ref_f(ref_f(xs[i], 1.3, 0.8), 1.3, 0.8), 1e-6);
    mxk_ndarray_free(xy);
    mxk_ndarray_free(x);
    mxk_op_instance_free(inst);
}

/** Backward through every write request of in_grad, in place (in_grad = out_grad) too. */
static void test_backward_write_requests(void) {
    if (!have_cpu())
        MXK_SKIP("no CPU device");
    mxk_op_instance *inst = make_instance();
    if (inst == NULL)
        return;
    mxk_ndarray *x = array_from(xs), *y = array_full(0), *dy = array_from(gs);
    CHECK_EQ_INT(mxk_op_instance_forward(inst, 1, &x, &y, NULL, NULL), MXK_OK);
    float h[N];
    double dref[N];
    for (int i = 0; i < N; i++)
        dref[i] = gs[i] * ref_fd(xs[i], 1.3, 0.8);
    struct {
        mxk_op_req req;
        double fill, before, fresh;
    } cases[] = {
        {MXK_REQ_ADD, 5.0, 1.0, 1.0},
        {MXK_REQ_NULL, 7.0, 1.0, 0.0},
        {MXK_REQ_WRITE, NAN, 0.0, 1.0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mxk_ndarray *dx = array_full(cases[c].fill);
        CHECK_EQ_INT(mxk_op_instance_backward(inst, &dy, NULL, &y, &dx, &cases[c].req, NULL),
                     MXK_OK);
        CHECK_EQ_INT(read_array(dx, h), MXK_OK);
        for (int i = 0; i < N; i++) {
            double want = cases[c].fresh * dref[i];
            if (cases[c].before != 0.0)
                want += cases[c].before * cases[c].fill;
            CHECK_NEAR(h[i], want, 1e-5);
        }
        mxk_ndarray_free(dx);
    }
    /* In place: in_grad is the out_grad array. */
    mxk_ndarray *g = array_from(gs);
    CHECK_EQ_INT(mxk_op_instance_backward(inst, &g, NULL, &y, &g, NULL, NULL), MXK_OK);
    CHECK_EQ_INT(read_array(g, h), MXK_OK);
    for (int i = 0; i < N; i++)
        CHECK_NEAR(h[i], dref[i], 1e-5);
    mxk_ndarray_free(g);
    mxk_ndarray_free(x);
    mxk_ndarray_free(y);
    mxk_ndarray_free(dy);
    mxk_op_instance_free(inst);
}

/** Bad dtypes and attributes give clear errors (type inference, parse_param, schema). */
static void test_errors(void) {
    mxk_op_instance *inst = NULL;
    int32_t f64 = MXK_FLOAT64;
    CHECK_EQ_INT(mxk_op_instance_create("ScaledTanh", 0, NULL, NULL, cpu, 1, &shape25, &f64, &inst),
                 MXK_ERR_TYPE);
    CHECK_CONTAINS(mxk_get_last_error(), "expected float32, got float64");
    const char *ka[] = {"alpha"}, *va[] = {"0"};
    CHECK_EQ_INT(mxk_op_instance_create("ScaledTanh", 1, ka, va, cpu, 1, &shape25, NULL, &inst),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "attribute 'alpha': must be non-zero");
    const char *kb[] = {"beta"}, *vb[] = {"1e300"};
    CHECK_EQ_INT(mxk_op_instance_create("ScaledTanh", 1, kb, vb, cpu, 1, &shape25, NULL, &inst),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "attribute 'beta': must be a finite float32");
    const char *kc[] = {"gamma"}, *vc[] = {"1"};
    CHECK_EQ_INT(mxk_op_instance_create("ScaledTanh", 1, kc, vc, cpu, 1, &shape25, NULL, &inst),
                 MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "alpha, beta");
    const char *kd[] = {"alpha"}, *vd[] = {"big"};
    CHECK_EQ_INT(mxk_op_instance_create("ScaledTanh", 1, kd, vd, cpu, 1, &shape25, NULL, &inst),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "alpha");
    CHECK(inst == NULL);
}

/** Loads the config dir given on the command line, runs the tests. */
int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s CONFIG_DIR PLUGIN_LIBRARY NEED_CPU\n", argv[0]);
        return 2;
    }
    g_conf_dir = argv[1];
    g_plugin_lib = argv[2];
    g_need_cpu = strcmp(argv[3], "1") == 0;
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = argv[1]};
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    MXK_RUN(test_plugin_listed);
    MXK_RUN(test_forward_default_attrs);
    MXK_RUN(test_forward_given_attrs);
    MXK_RUN(test_backward_finite_differences);
    MXK_RUN(test_forward_write_requests);
    MXK_RUN(test_backward_write_requests);
    MXK_RUN(test_errors);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
