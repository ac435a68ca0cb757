/*
 * The variable attributes the Module honours, against MXNet 1.9.1's Module
 * (python/mxnet/module/module.py, initializer.py Initializer.__call__ with
 * InitDesc.attrs, optimizer.py set_lr_mult / set_wd_mult / _get_lr / _get_wd):
 * __init__ picks a variable's initializer before the name-suffix rules,
 * __lr_mult__ / __wd_mult__ scale its rate and decay (0 freezes it), __shape__
 * seeds shape inference; a parameter no rule covers is an error saying how to
 * fix it. The numbers are MXNet's for the same graph, data and optimizer.
 */
#include <stdlib.h>
#include <string.h>

#include "mxk_train.h"
#include "testing.h"
#include "train_test_util.h"

#ifndef BUILD_CONFDIR
#error "BUILD_CONFDIR must name the build tree's config dir"
#endif

static const mxk_context cpu = {MXK_DEV_CPU, 0};

/** A variable with attributes (NULL-terminated key, value pairs). */
static mxk_symbol *var(const char *name, const char *const *kv) {
    mxk_symbol *v = NULL;
    CHECK_EQ_INT(mxk_symbol_variable(name, &v), MXK_OK);
    for (; kv && kv[0]; kv += 2)
        CHECK_EQ_INT(mxk_symbol_set_attr(v, kv[0], kv[1]), MXK_OK);
    return v;
}

/** Applies op to inputs (freed), with one optional attribute. */
static mxk_symbol *op(const char *name, const char *node, mxk_symbol **in, uint32_t n,
                      const char *key, const char *val) {
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxk_symbol_create(name, node, key ? 1 : 0, &key, &val, n, NULL, in, &s), MXK_OK);
    for (uint32_t i = 0; i < n; i++)
        mxk_symbol_free(in[i]);
    return s;
}

/**
 * softmax(broadcast_mul(fc(data), scale)) as MXNet's script builds it:
 *   w = Variable('fc_weight', init=Constant(0.1), lr_mult=0.5, wd_mult=2)
 *   b = Variable('fc_bias', lr_mult=3)
 *   scale = Variable(SCALE, shape=(1, 3), init=One(), lr_mult=0)   (init_attr NULL: none)
 */
static mxk_symbol *graph(const char *scale, const char *init_attr) {
    static const char *const w_kv[] = {
        "__init__", "[\"constant\", {\"value\": 0.1}]", "lr_mult", "0.5", "wd_mult", "2", NULL};
    static const char *const b_kv[] = {"lr_mult", "3", NULL};
    const char *s_kv[] = {"__shape__", "(1, 3)", "lr_mult", "0", "__init__", init_attr, NULL};
    if (init_attr == NULL)
        s_kv[4] = NULL;
    mxk_symbol *in[3] = {var("data", NULL), var("fc_weight", w_kv), var("fc_bias", b_kv)};
    mxk_symbol *fc = op("FullyConnected", "fc", in, 3, "num_hidden", "3");
    mxk_symbol *mul_in[2] = {fc, var(scale, s_kv)};
    mxk_symbol *mul = op("broadcast_mul", "mul", mul_in, 2, NULL, NULL);
    return op("SoftmaxOutput", "softmax", &mul, 1, NULL, NULL);
}

/** A module of `sym` bound for data (4, 5), its symbol freed. */
static mxkt_module *bound(mxk_symbol *sym) {
    mxkt_module *m = NULL;
    CHECK_EQ_INT(mxkt_module_create(sym, "data", "softmax_label", &cpu, 1, &m), MXK_OK);
    mxk_symbol_free(sym);
    mxk_shape ds = {.ndim = 2, .dims = {4, 5}}, ls = {.ndim = 1, .dims = {4}};
    if (m)
        CHECK_EQ_INT(mxkt_module_bind(m, &ds, &ls, 1), MXK_OK);
    return m;
}

/** Host values of the module's parameter `name`. */
static void param(mxkt_module *m, const char *name, float *out, uint64_t n) {
    for (uint32_t i = 0; i < mxkt_module_num_params(m); i++)
        if (strcmp(mxkt_module_param_name(m, i), name) == 0) {
            CHECK_EQ_INT(mxk_ndarray_size(mxkt_module_param(m, i)), n);
            CHECK_EQ_INT(mxk_ndarray_copy_to_host(mxkt_module_param(m, i), out, n * sizeof *out),
                         MXK_OK);
            return;
        }
    CHECK(!"parameter found");
}

/** __init__, __lr_mult__, __wd_mult__ and __shape__: two SGD steps equal MXNet's. */
static void test_attrs_train_as_mxnet(void) {
    /* MXNet 1.9.1: init_params(Uniform(0.5)), sgd lr 0.5 momentum 0.9 wd 0.1 */
    static const float want_w[15] = {0.0619343f, 0.0715774f, 0.0812205f, 0.0908636f, 0.1005067f,
                                     0.0549542f, 0.0501056f, 0.0452571f, 0.0404085f, 0.03556f,
                                     0.1403615f, 0.135567f,  0.1307724f, 0.1259779f, 0.1211833f};
    static const float want_b[3] = {0.591086f, -0.297163f, -0.2939231f};
    mxkt_module *m = bound(graph("scale", "[\"one\", {}]"));
    if (m == NULL)
        return;
    mxkt_initializer init;
    CHECK_EQ_INT(mxkt_initializer_parse("uniform(0.5)", 1, &init), MXK_OK);
    CHECK_EQ_INT(mxkt_module_init_params(m, &init, 0, NULL, NULL, 0, 0), MXK_OK);
    float w[15], b[3], s[3];
    param(m, "fc_weight", w, 15);
    param(m, "scale", s, 3);
    CHECK(w[0] == 0.1f && w[14] == 0.1f && s[0] == 1.0f && s[2] == 1.0f);
    mxkt_optimizer o;
    mxkt_optimizer_sgd(&o, 0.5, 0.9, 0.1);
    CHECK_EQ_INT(mxkt_module_init_optimizer(m, "local", &o, 0), MXK_OK);
    float x[20], y[4] = {0, 1, 2, 0};
    for (int i = 0; i < 20; i++)
        x[i] = (float)i / 10.0f - 1.0f;
    mxk_shape xs = {.ndim = 2, .dims = {4, 5}}, ys = {.ndim = 1, .dims = {4}};
    mxk_ndarray *xa = NULL, *ya = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(&xs, MXK_FLOAT32, cpu, &xa), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_create(&ys, MXK_FLOAT32, cpu, &ya), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(xa, x, sizeof x), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(ya, y, sizeof y), MXK_OK);
    for (int step = 0; step < 2; step++) {
        CHECK_EQ_INT(mxkt_module_forward_backward(m, xa, ya), MXK_OK);
        CHECK_EQ_INT(mxkt_module_update(m), MXK_OK);
    }
    param(m, "fc_weight", w, 15);
    param(m, "fc_bias", b, 3);
    param(m, "scale", s, 3);
    for (int i = 0; i < 15; i++)
        CHECK_NEAR(w[i], want_w[i], 2e-6);
    for (int i = 0; i < 3; i++) {
        CHECK_NEAR(b[i], want_b[i], 2e-6);
        CHECK(s[i] == 1.0f); /* lr_mult 0: frozen */
    }
    mxk_ndarray_free(xa);
    mxk_ndarray_free(ya);
    mxkt_module_free(m);
}

/** __init__ with a random initializer: Xavier's bound for the shape, whatever the name. */
static void test_init_attr_xavier(void) {
    mxkt_module *m = bound(graph("gain", "[\"xavier\", {\"rnd_type\": \"uniform\", "
                                         "\"factor_type\": \"avg\", \"magnitude\": 2}]"));
    if (m == NULL)
        return;
    mxkt_initializer init;
    CHECK_EQ_INT(mxkt_initializer_parse("zero", 1, &init), MXK_OK);
    CHECK_EQ_INT(mxkt_module_init_params(m, &init, 0, NULL, NULL, 0, 0), MXK_OK);
    float g[3];
    param(m, "gain", g, 3);
    /* (1, 3): fan_in 3, fan_out 1, avg 2 → U(-1, 1), not the global zero */
    CHECK(g[0] != 0 || g[1] != 0 || g[2] != 0);
    for (int i = 0; i < 3; i++)
        CHECK(g[i] >= -1.0f && g[i] <= 1.0f);
    mxkt_module_free(m);
}

/** A parameter no rule covers, and bad attribute values: errors that say what to do. */
static void test_attr_errors(void) {
    mxkt_initializer init;
    CHECK_EQ_INT(mxkt_initializer_parse("uniform", 1, &init), MXK_OK);
    struct {
        const char *name, *init_attr, *msg;
    } bad[] = {
        {"offset", NULL,
         "Unknown initialization pattern for offset. Default initialization is now limited to "
         "\"weight\", \"bias\", \"gamma\" (1.0), and \"beta\" (0.0)"},
        {"offset", NULL, "give the variable an __init__ attribute such as [\"zero\", {}]"},
        {"offset", "[\"one\"", "offset: malformed __init__ '[\"one\"'"},
        {"offset", "[\"orthogonal\", {}]",
         "offset: __init__ '[\"orthogonal\", {}]': unknown initializer 'orthogonal()'"},
        {"offset", "[\"constant\", {\"valu\": 1}]",
         "initializer 'constant(valu=1)': unknown argument 'valu'"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        mxkt_module *m = bound(graph(bad[k].name, bad[k].init_attr));
        if (m == NULL)
            continue;
        CHECK_EQ_INT(mxkt_module_init_params(m, &init, 0, NULL, NULL, 0, 0),
                     MXK_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(mxkt_last_error(), bad[k].msg);
        mxkt_module_free(m);
    }
    /* a multiplier that is not a number: refused when the module is made */
    mxk_symbol *v = var("w_weight", (const char *const[]){"lr_mult", "fast", NULL});
    mxk_symbol *fc_in[2] = {var("data", NULL), v};
    mxk_symbol *fc = op("FullyConnected", "fc", fc_in, 2, "num_hidden", "2");
    mxkt_module *m = NULL;
    CHECK_EQ_INT(mxkt_module_create(fc, "data", "softmax_label", &cpu, 1, &m),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(), "w_weight: __lr_mult__ 'fast' is not a number");
    mxk_symbol_free(fc);
}

int main(void) {
    if (tt_init() != 0)
        return 77;
    MXK_RUN(test_attrs_train_as_mxnet);
    MXK_RUN(test_init_attr_xavier);
    MXK_RUN(test_attr_errors);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
