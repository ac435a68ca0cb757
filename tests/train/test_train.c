/*
 * Tests of mxk_train (train/include/mxk_train.h) against numbers computed from
 * MXNet's formulas (python/mxnet/optimizer/optimizer.py, lr_scheduler.py,
 * initializer.py, metric.py, callback.py, executor_manager.py): update
 * operators through the optimizer, schedulers, initializer bounds, metrics,
 * _split_input_slice, the Speedometer line, checkpoint names, the reference
 * networks' parameters, and the Module: a second init_optimizer changes nothing,
 * checkpoints load back and predict bit for bit, two contexts keep identical
 * parameters and agree with one context, a store object given to init_optimizer.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mxk_train.h"
#include "testing.h"
#include "train_test_util.h"

#ifndef BUILD_CONFDIR
#error "BUILD_CONFDIR must name the build tree's config dir"
#endif

static const mxk_context cpu = {MXK_DEV_CPU, 0};

/** A 1-element float32 array holding v. */
static mxk_ndarray *scalar(float v) {
    mxk_shape s = {.ndim = 1};
    s.dims[0] = 1;
    mxk_ndarray *a = NULL;
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, v, &a);
    return a;
}

/** The value of a 1-element array. */
static float value(mxk_ndarray *a) {
    float v = 0;
    mxk_ndarray_copy_to_host(a, &v, sizeof v);
    return v;
}

/** Rows 17-19: sgd_mom_update, sgd_update and clipping with rescale. */
static void test_sgd_numbers(void) {
    mxkt_optimizer o;
    mxkt_optimizer_sgd(&o, 0.1, 0.9, 0.01);
    mxk_ndarray *w = scalar(1), *g = scalar(0.5f), *m = scalar(0);
    const double ew[] = {0.949, 0.852151, 0.714134749}, em[] = {-0.051, -0.096849, -0.138016251};
    for (int i = 0; i < 3; i++) {
        CHECK_EQ_INT(mxkt_optimizer_apply(&o, 0.1, 1.0, w, g, &m), MXK_OK);
        CHECK_NEAR(value(w), ew[i], 1e-6);
        CHECK_NEAR(value(m), em[i], 1e-6);
    }
    mxkt_optimizer_sgd(&o, 0.1, 0.0, 0.01);
    CHECK_EQ_INT(mxkt_optimizer_num_states(&o), 0);
    mxk_ndarray_fill(w, 1.0);
    CHECK_EQ_INT(mxkt_optimizer_apply(&o, 0.1, 1.0, w, g, NULL), MXK_OK);
    CHECK_NEAR(value(w), 0.949, 1e-6);
    CHECK_EQ_INT(mxkt_optimizer_apply(&o, 0.1, 1.0, w, g, NULL), MXK_OK);
    CHECK_NEAR(value(w), 0.898051, 1e-6);
    mxkt_optimizer_sgd(&o, 0.1, 0.0, 0.0);
    o.rescale_grad = 0.5;
    o.clip_gradient = 1.0;
    mxk_ndarray_fill(w, 1.0);
    mxk_ndarray_fill(g, 10.0);
    CHECK_EQ_INT(mxkt_optimizer_apply(&o, 0.1, 1.0, w, g, NULL), MXK_OK);
    CHECK_NEAR(value(w), 0.9, 1e-6);
    /* wd_mult: no decay on biases (upstream set_wd_mult) */
    CHECK(mxkt_optimizer_wd_mult("fc1_weight") == 1.0);
    CHECK(mxkt_optimizer_wd_mult("fc1_bias") == 0.0);
    CHECK(mxkt_optimizer_wd_mult("bn_gamma") == 1.0);
    mxk_ndarray_free(w);
    mxk_ndarray_free(g);
    mxk_ndarray_free(m);
}

/** Row 20: Python Adam with bias correction through the learning rate. */
static void test_adam_numbers(void) {
    mxkt_optimizer o;
    mxkt_optimizer_adam(&o, 0.001, 0.0);
    mxk_ndarray *w = scalar(1), *g = scalar(0.5f), *st[2] = {scalar(0), scalar(0)};
    const double lrt[] = {3.16228e-4, 2.35317e-4, 2.02011e-4};
    const double ew[] = {0.9990000006, 0.9980000011, 0.9970000014};
    for (int i = 0; i < 3; i++) {
        double lr = mxkt_optimizer_step(&o, 0);
        CHECK_NEAR(lr, lrt[i], 1e-5);
        CHECK_EQ_INT(mxkt_optimizer_apply(&o, lr, 1.0, w, g, st), MXK_OK);
        CHECK_NEAR(value(w), ew[i], 1e-6);
    }
    CHECK_EQ_INT(o.num_update, 3);
    mxk_ndarray_free(w);
    mxk_ndarray_free(g);
    mxk_ndarray_free(st[0]);
    mxk_ndarray_free(st[1]);
}

/** Row 21: FactorScheduler(step=2, factor=0.5, base_lr=1); MultiFactorScheduler. */
static void test_schedulers(void) {
    mxkt_lr_scheduler s;
    CHECK_EQ_INT(mxkt_lr_factor(&s, 2, 0.5, 1.0), MXK_OK);
    const double e[] = {1, 1, 0.5, 0.5, 0.25};
    for (int i = 0; i < 5; i++)
        CHECK_NEAR(mxkt_lr_get(&s, i + 1), e[i], 1e-12);
    int64_t steps[] = {3, 5};
    CHECK_EQ_INT(mxkt_lr_multifactor(&s, steps, 2, 0.1, 1.0), MXK_OK);
    const double m[] = {1, 1, 1, 0.1, 0.1, 0.01};
    for (int i = 0; i < 6; i++)
        CHECK_NEAR(mxkt_lr_get(&s, i + 1), m[i], 1e-12);
    int64_t bad[] = {5, 3}, zero[] = {0, 3};
    CHECK_EQ_INT(mxkt_lr_multifactor(&s, bad, 2, 0.1, 1.0), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(), "Schedule step must be an increasing integer list");
    CHECK_EQ_INT(mxkt_lr_multifactor(&s, zero, 2, 0.1, 1.0), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(), "Schedule step must be greater or equal than 1 round");
    CHECK_EQ_INT(mxkt_lr_multifactor(&s, steps, 2, 1.5, 1.0), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(), "Factor must be no more than 1 to make lr reduce");
    /* a refused set-up leaves the scheduler as it was */
    CHECK(s.kind == MXKT_SCHED_MULTIFACTOR && s.steps[0] == 3 && s.steps[1] == 5);
    CHECK_EQ_INT(mxkt_lr_factor(&s, 0, 0.5, 1.0), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(), "Schedule step must be greater or equal than 1 round");
    CHECK_EQ_INT(mxkt_lr_factor(&s, 2, 1.01, 1.0), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(), "Factor must be no more than 1 to make lr reduce");
    CHECK(s.kind == MXKT_SCHED_MULTIFACTOR);
}

/**
 * Initializer specs with upstream's positional and keyword arguments: the parsed
 * fields, Xavier scales computed by hand (sqrt(magnitude / factor)), and the exact
 * messages for malformed specs.
 */
static void test_initializer_specs(void) {
    mxkt_initializer i;
    mxk_shape fc = {.ndim = 2, .dims = {128, 784}};
    double s = 0;
    CHECK_EQ_INT(mxkt_initializer_parse(
                     "Xavier(rnd_type='gaussian', factor_type=\"out\", magnitude=2.5)", 0, &i),
                 MXK_OK);
    CHECK(i.kind == MXKT_INIT_XAVIER && i.gaussian == 1 && i.factor_type == 2);
    CHECK_EQ_INT(mxkt_xavier_scale(&i, &fc, &s), MXK_OK);
    CHECK_NEAR(s, sqrt(2.5 / 128.0), 1e-12);
    CHECK_EQ_INT(mxkt_initializer_parse("xavier(uniform, in, 6)", 0, &i), MXK_OK);
    CHECK(i.gaussian == 0 && i.factor_type == 1);
    CHECK_EQ_INT(mxkt_xavier_scale(&i, &fc, &s), MXK_OK);
    CHECK_NEAR(s, sqrt(6.0 / 784.0), 1e-12);
    /* fit.py's default, and MSRAPrelu (avg, 2 / (1 + 0.25^2)) */
    CHECK_EQ_INT(mxkt_initializer_parse("default", 0, &i), MXK_OK);
    CHECK_EQ_INT(mxkt_xavier_scale(&i, &fc, &s), MXK_OK);
    CHECK_NEAR(s, sqrt(2.0 / 784.0), 1e-12);
    CHECK(i.gaussian == 1);
    CHECK_EQ_INT(mxkt_initializer_parse("msra", 0, &i), MXK_OK);
    CHECK_EQ_INT(mxkt_xavier_scale(&i, &fc, &s), MXK_OK);
    CHECK_NEAR(s, sqrt(2.0 / 1.0625 / 456.0), 1e-12);
    CHECK_EQ_INT(mxkt_initializer_parse("MSRAPrelu(slope=0)", 0, &i), MXK_OK);
    CHECK_NEAR(i.magnitude, 2.0, 1e-12);
    CHECK_EQ_INT(mxkt_initializer_parse("normal(sigma=0.5)", 0, &i), MXK_OK);
    CHECK(i.kind == MXKT_INIT_NORMAL && i.sigma == 0.5);
    /* One / Zero / Constant fill weights; biases still follow their suffix */
    float v[4];
    mxk_shape vec = {.ndim = 1, .dims = {4}};
    CHECK_EQ_INT(mxkt_initializer_parse("one", 0, &i), MXK_OK);
    CHECK_EQ_INT(mxkt_initializer_fill(&i, "fc_weight", &vec, v), MXK_OK);
    CHECK(v[0] == 1.0f && v[3] == 1.0f);
    CHECK_EQ_INT(mxkt_initializer_fill(&i, "fc_bias", &vec, v), MXK_OK);
    CHECK(v[0] == 0.0f && v[3] == 0.0f);
    CHECK_EQ_INT(mxkt_initializer_parse("constant(-2.5)", 0, &i), MXK_OK);
    CHECK_EQ_INT(mxkt_initializer_fill(&i, "fc_weight", &vec, v), MXK_OK);
    CHECK(v[1] == -2.5f);
    CHECK_EQ_INT(mxkt_initializer_parse("zero", 0, &i), MXK_OK);
    CHECK_EQ_INT(mxkt_initializer_fill(&i, "fc_weight", &vec, v), MXK_OK);
    CHECK(v[2] == 0.0f);
    static const struct {
        const char *spec, *msg;
    } bad[] = {
        {"uniform(0.01",
         "malformed initializer 'uniform(0.01' (NAME or NAME(ARG, KEY=VALUE, ...))"},
        {"uniform(0.01)x", "malformed initializer 'uniform(0.01)x'"},
        {"uniform(,)", "malformed initializer 'uniform(,)'"},
        {"orthogonal", "unknown initializer 'orthogonal' (xavier, glorot, he, default, msra, "
                       "uniform, normal, one, zero, constant, lstmbias)"},
        {"uniform(0.1, 2)", "initializer 'uniform(0.1, 2)': too many arguments"},
        {"glorot(1)", "initializer 'glorot(1)': too many arguments"},
        {"xavier(mag=2)", "initializer 'xavier(mag=2)': unknown argument 'mag'"},
        {"xavier(rnd_type=cauchy)", "initializer 'xavier(rnd_type=cauchy)': bad rnd_type 'cauchy'"},
        {"xavier(factor_type=sum)", "initializer 'xavier(factor_type=sum)': bad factor_type 'sum'"},
        {"normal(0.1x)", "initializer 'normal(0.1x)': bad sigma '0.1x'"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        CHECK_EQ_INT(mxkt_initializer_parse(bad[k].spec, 0, &i), MXK_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(mxkt_last_error(), bad[k].msg);
    }
}

/** Row 23: Xavier bounds; values stay within; suffix dispatch. */
static void test_initializers(void) {
    mxkt_initializer x, he;
    CHECK_EQ_INT(mxkt_initializer_parse("xavier", 7, &x), MXK_OK);
    CHECK_EQ_INT(mxkt_initializer_parse("he", 7, &he), MXK_OK);
    mxk_shape fc = {.ndim = 2, .dims = {128, 784}}, conv = {.ndim = 4, .dims = {20, 1, 5, 5}};
    mxk_shape conv2 = {.ndim = 4, .dims = {50, 20, 5, 5}}, vec = {.ndim = 1, .dims = {5}};
    double s = 0;
    CHECK_EQ_INT(mxkt_xavier_scale(&x, &fc, &s), MXK_OK);
    CHECK_NEAR(s, 0.0811107, 1e-6);
    CHECK_EQ_INT(mxkt_xavier_scale(&x, &conv, &s), MXK_OK);
    CHECK_NEAR(s, 0.1069045, 1e-6);
    CHECK_EQ_INT(mxkt_xavier_scale(&he, &conv2, &s), MXK_OK);
    CHECK_NEAR(s, 0.0632456, 1e-6);
    CHECK_EQ_INT(mxkt_xavier_scale(&x, &vec, &s), MXK_ERR_INVALID_ARGUMENT);
    float *v = malloc(128 * 784 * sizeof(float)), *v2 = malloc(128 * 784 * sizeof(float));
    CHECK_EQ_INT(mxkt_initializer_fill(&x, "fc1_weight", &fc, v), MXK_OK);
    float mx = 0;
    for (int i = 0; i < 128 * 784; i++)
        mx = fabsf(v[i]) > mx ? fabsf(v[i]) : mx;
    CHECK(mx <= 0.0811107f && mx > 0.08f);
    CHECK_EQ_INT(mxkt_initializer_fill(&x, "fc1_weight", &fc, v2), MXK_OK);
    CHECK(memcmp(v, v2, 128 * 784 * sizeof(float)) == 0); /* reproducible */
    /* He (gaussian, in, 2): sample standard deviation near 0.0632456 */
    CHECK_EQ_INT(mxkt_initializer_fill(&he, "c_weight", &conv2, v), MXK_OK);
    double sq = 0;
    for (int i = 0; i < 25000; i++)
        sq += (double)v[i] * v[i];
    CHECK_NEAR(sqrt(sq / 25000), 0.0632456, 0.02);
    CHECK_EQ_INT(mxkt_initializer_fill(&x, "fc1_bias", &vec, v), MXK_OK);
    CHECK(v[0] == 0 && v[4] == 0);
    CHECK_EQ_INT(mxkt_initializer_fill(&x, "bn_gamma", &vec, v), MXK_OK);
    CHECK(v[0] == 1);
    CHECK_EQ_INT(mxkt_initializer_fill(&x, "bn_moving_var", &vec, v), MXK_OK);
    CHECK(v[0] == 1);
    CHECK_EQ_INT(mxkt_initializer_fill(&x, "bn_moving_mean", &vec, v), MXK_OK);
    CHECK(v[0] == 0);
    CHECK_EQ_INT(mxkt_initializer_fill(&x, "bn_beta", &vec, v), MXK_OK);
    CHECK(v[0] == 0);
    CHECK_EQ_INT(mxkt_initializer_fill(&x, "strange", &vec, v), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(), "Unknown initialization pattern for strange");
    mxkt_initializer u;
    CHECK_EQ_INT(mxkt_initializer_parse("uniform(0.01)", 1, &u), MXK_OK);
    CHECK_EQ_INT(mxkt_initializer_fill(&u, "fc1_weight", &fc, v), MXK_OK);
    for (int i = 0; i < 128 * 784; i++)
        if (fabsf(v[i]) > 0.01f) {
            CHECK(0);
            break;
        }
    free(v);
    free(v2);
}

/** Rows 24-26: Accuracy, CrossEntropy, NLL, Perplexity, MAE, MSE, RMSE; TopK. */
static void test_metrics(void) {
    const float preds[] = {0.3f, 0.7f, 0, 1, 0.4f, 0.6f}, labels[] = {0, 1, 1};
    const char *names[] = {"acc", "ce", "nll_loss", "perplexity"};
    const double expect[] = {0.6666667, 0.5715995, 0.5715995, 1.7710976};
    const char *shown[] = {"accuracy", "cross-entropy", "nll-loss", "perplexity"};
    for (int k = 0; k < 4; k++) {
        mxkt_metric m;
        CHECK_EQ_INT(mxkt_metric_create(names[k], 0, &m), MXK_OK);
        mxkt_metric_update(&m, labels, preds, 3, 2);
        CHECK_NEAR(mxkt_metric_get(&m), expect[k], 1e-6);
        CHECK(strcmp(m.name, shown[k]) == 0);
        mxkt_metric_reset(&m);
        CHECK(isnan(mxkt_metric_get(&m)));
    }
    const float rp[] = {3, -0.5f, 2, 7}, rl[] = {2.5f, 0, 2, 8};
    const char *rn[] = {"mae", "mse", "rmse"};
    const double re[] = {0.5, 0.375, 0.6123724};
    for (int k = 0; k < 3; k++) {
        mxkt_metric m;
        CHECK_EQ_INT(mxkt_metric_create(rn[k], 0, &m), MXK_OK);
        mxkt_metric_update(&m, rl, rp, 4, 1);
        CHECK_NEAR(mxkt_metric_get(&m), re[k], 1e-6);
    }
    /* a (B,) label broadcasts over a (B, 2) prediction (upstream reshapes it to
     * (B, 1)); differences 1, -1, 0, -2; each batch's mean averaged over batches */
    const float wl[] = {1, 2}, wp[] = {0, 2, 2, 4};
    const double we[] = {4.0 / 4, 6.0 / 4, 1.224744871391589};
    for (int k = 0; k < 3; k++) {
        mxkt_metric m;
        CHECK_EQ_INT(mxkt_metric_create(rn[k], 0, &m), MXK_OK);
        mxkt_metric_update(&m, wl, wp, 2, 2);
        CHECK_NEAR(mxkt_metric_get(&m), we[k], 1e-6);
        mxkt_metric_update(&m, rl, rp, 4, 1);
        CHECK_NEAR(mxkt_metric_get(&m), (we[k] + re[k]) / 2, 1e-6);
    }
    mxkt_metric t;
    CHECK_EQ_INT(mxkt_metric_create("top_k_accuracy", 1, &t), MXK_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(mxkt_metric_create("top_k_accuracy", 2, &t), MXK_OK);
    CHECK(strcmp(t.name, "top_k_accuracy_2") == 0);
    const float p3[] = {0.1f, 0.5f, 0.4f, 0.6f, 0.3f, 0.1f}, l3[] = {2, 2};
    mxkt_metric_update(&t, l3, p3, 2, 3);
    CHECK_NEAR(mxkt_metric_get(&t), 0.5, 1e-12);
}

/** python/mxnet/executor_manager.py _split_input_slice (Python 3 rounding) and its errors. */
static void test_split(void) {
    struct {
        int64_t batch;
        int n;
        double w[4];
        int64_t b[4], e[4];
        int ok;
    } cases[] = {
        {10, 2, {1, 1}, {0, 5}, {5, 10}, 1},
        {5, 2, {1, 1}, {0, 2}, {2, 5}, 1},
        {7, 2, {1, 1}, {0, 4}, {4, 7}, 1},
        {9, 2, {1, 1}, {0, 4}, {4, 9}, 1},
        {10, 3, {1, 1, 1}, {0, 3, 6}, {3, 6, 10}, 1},
        {10, 4, {1, 1, 1, 1}, {0, 2, 4, 6}, {2, 4, 6, 10}, 1},
        {14, 4, {1, 1, 1, 1}, {0, 4, 8, 12}, {4, 8, 12, 14}, 1},
        {30, 4, {1, 1, 1, 1}, {0, 8, 16, 24}, {8, 16, 24, 30}, 1},
        {32, 3, {1, 1, 1}, {0, 11, 22}, {11, 22, 32}, 1},
        {10, 2, {3, 1}, {0, 8}, {8, 10}, 1},
        {10, 2, {1, 2}, {0, 3}, {3, 10}, 1},
        {7, 3, {1, 2, 4}, {0, 1, 3}, {1, 3, 7}, 1},
        {6, 4, {1, 1, 1, 1}, {0}, {0}, 0},
        {2, 3, {1, 1, 1}, {0}, {0}, 0},
        {1, 2, {1, 1}, {0}, {0}, 0},
        {100, 3, {1, 1, 1}, {0, 33, 66}, {33, 66, 100}, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t b[4], e[4];
        mxk_status st = mxkt_split_input_slice(cases[k].batch, cases[k].w, cases[k].n, b, e);
        if (!cases[k].ok) {
            CHECK_EQ_INT(st, MXK_ERR_INVALID_ARGUMENT);
            CHECK_CONTAINS(mxkt_last_error(), "Too many slices. Some splits are empty.");
            continue;
        }
        CHECK_EQ_INT(st, MXK_OK);
        for (int i = 0; i < cases[k].n; i++) {
            CHECK_EQ_INT(b[i], cases[k].b[i]);
            CHECK_EQ_INT(e[i], cases[k].e[i]);
        }
    }
}

/** Row 29 (Speedometer) and row 30 (checkpoint names). */
static void test_speedometer_and_names(void) {
    mxkt_metric m;
    mxkt_metric_create("acc", 0, &m);
    const float p[] = {0.3f, 0.7f, 0, 1, 0.4f, 0.6f}, l[] = {0, 1, 1};
    mxkt_metric_update(&m, l, p, 3, 2);
    char line[256];
    mxkt_speedometer_line(line, sizeof line, 0, 50, 50 * 100 / 2.0, &m, 1);
    CHECK(strcmp(line, "Epoch[0] Batch [50]\tSpeed: 2500.00 samples/sec\taccuracy=0.666667") == 0);
    mxkt_speedometer_line(line, sizeof line, 3, 100, 2500, NULL, 0);
    CHECK(strcmp(line, "Iter[3] Batch [100]\tSpeed: 2500.00 samples/sec") == 0);
    char name[128];
    mxkt_checkpoint_name(name, sizeof name, "mymodel", 0 + 1, "params");
    CHECK(strcmp(name, "mymodel-0001.params") == 0);
    mxkt_checkpoint_name(name, sizeof name, "mymodel", 12, "params");
    CHECK(strcmp(name, "mymodel-0012.params") == 0);
    mxkt_checkpoint_name(name, sizeof name, "mymodel", 12, "states");
    CHECK(strcmp(name, "mymodel-0012.states") == 0);
    mxkt_checkpoint_name(name, sizeof name, "mymodel", 12, "symbol");
    CHECK(strcmp(name, "mymodel-symbol.json") == 0);
}

/** Row 31: MLP parameter names, shapes and count; LeNet count. */
static void test_networks(void) {
    mxk_symbol *mlp = NULL, *lenet = NULL;
    CHECK_EQ_INT(mxkt_net_mlp(&mlp), MXK_OK);
    CHECK_EQ_INT(mxkt_net_lenet(&lenet), MXK_OK);
    mxkt_module *m = NULL;
    CHECK_EQ_INT(mxkt_module_create(mlp, "data", "softmax_label", &cpu, 1, &m), MXK_OK);
    mxk_shape ds = {.ndim = 2, .dims = {100, 784}}, ls = {.ndim = 1, .dims = {100}};
    CHECK_EQ_INT(mxkt_module_bind(m, &ds, &ls, 1), MXK_OK);
    const char *names[] = {"fc1_weight", "fc1_bias",   "fc2_weight",
                           "fc2_bias",   "fc3_weight", "fc3_bias"};
    const int64_t shapes[][2] = {{128, 784}, {128, 0}, {64, 128}, {64, 0}, {10, 64}, {10, 0}};
    CHECK_EQ_INT(mxkt_module_num_params(m), 6);
    CHECK_EQ_INT(mxkt_module_num_aux(m), 0);
    uint64_t total = 0;
    for (uint32_t i = 0; i < 6; i++) {
        CHECK(strcmp(mxkt_module_param_name(m, i), names[i]) == 0);
        mxk_shape s = mxk_ndarray_shape(mxkt_module_param(m, i));
        CHECK_EQ_INT(s.ndim, shapes[i][1] ? 2 : 1);
        CHECK_EQ_INT(s.dims[0], shapes[i][0]);
        if (shapes[i][1])
            CHECK_EQ_INT(s.dims[1], shapes[i][1]);
        total += mxk_ndarray_size(mxkt_module_param(m, i));
    }
    CHECK_EQ_INT(total, 109386);
    mxkt_module_free(m);
    CHECK_EQ_INT(mxkt_module_create(lenet, "data", "softmax_label", &cpu, 1, &m), MXK_OK);
    mxk_shape is = {.ndim = 4, .dims = {10, 1, 28, 28}}, l10 = {.ndim = 1, .dims = {10}};
    CHECK_EQ_INT(mxkt_module_bind(m, &is, &l10, 1), MXK_OK);
    total = 0;
    for (uint32_t i = 0; i < mxkt_module_num_params(m); i++)
        total += mxk_ndarray_size(mxkt_module_param(m, i));
    CHECK_EQ_INT(total, 431080);
    mxkt_module_free(m);
    mxk_symbol_free(mlp);
    mxk_symbol_free(lenet);
}

/** Synthetic data: 40 samples of 784 values, labels 0..9, in batches of 10. */
static mxkt_iter *make_data(int32_t shuffle) {
    float *x = malloc(40 * 784 * sizeof(float)), y[40];
    for (int i = 0; i < 40; i++) {
        y[i] = (float)(i % 10);
        for (int j = 0; j < 784; j++)
            x[i * 784 + j] = (float)((i * 31 + j * 7) % 97) / 97.0f + (j % 10 == i % 10 ? 1.0f : 0);
    }
    mxk_shape s = {.ndim = 2, .dims = {40, 784}};
    mxkt_iter *it = NULL;
    CHECK_EQ_INT(mxkt_ndarray_iter_create(x, &s, y, 1, 10, shuffle, 3, &it), MXK_OK);
    free(x);
    return it;
}

/** A bound, initialised MLP module with SGD on `nctx` contexts (with store `kv` when not NULL). */
static mxkt_module *make_module(uint32_t nctx, double lr, mxk_kvstore *kv) {
    mxk_symbol *sym = NULL;
    mxkt_net_mlp(&sym);
    mxk_context ctx[2] = {{MXK_DEV_CPU, 0}, {MXK_DEV_CPU, 1}};
    mxkt_module *m = NULL;
    CHECK_EQ_INT(mxkt_module_create(sym, "data", "softmax_label", ctx, nctx, &m), MXK_OK);
    mxk_symbol_free(sym);
    mxk_shape ds = {.ndim = 2, .dims = {10, 784}}, ls = {.ndim = 1, .dims = {10}};
    CHECK_EQ_INT(mxkt_module_bind(m, &ds, &ls, 1), MXK_OK);
    mxkt_initializer init;
    mxkt_initializer_parse("xavier", 5, &init);
    CHECK_EQ_INT(mxkt_module_init_params(m, &init, 0, NULL, NULL, 0, 0), MXK_OK);
    mxkt_optimizer o;
    mxkt_optimizer_sgd(&o, lr, 0.9, 1e-4);
    CHECK_EQ_INT(kv ? mxkt_module_init_optimizer_kv(m, kv, &o, 0)
                    : mxkt_module_init_optimizer(m, "local", &o, 0),
                 MXK_OK);
    return m;
}

/** Runs one epoch of fit (no logs). */
static void fit_epochs(mxkt_module *m, mxkt_iter *it, int32_t begin, int32_t end) {
    mxkt_fit_options fo;
    memset(&fo, 0, sizeof fo);
    fo.begin_epoch = begin;
    fo.num_epoch = end;
    FILE *devnull = fopen("/dev/null", "w");
    fo.log = devnull;
    CHECK_EQ_INT(mxkt_module_fit(m, it, NULL, &fo), MXK_OK);
    fclose(devnull);
}

/** Host copy of parameter i of context c. */
static float *param_copy(mxkt_module *m, uint32_t c, uint32_t i, uint64_t *n) {
    mxk_ndarray *a = mxkt_module_param_on(m, c, i);
    *n = mxk_ndarray_size(a);
    float *v = malloc(*n * sizeof(float));
    mxk_ndarray_copy_to_host(a, v, *n * sizeof(float));
    return v;
}

/**
 * NDArrayIter: batches in order without shuffle, the last one filled from the
 * start with its pad reported; with shuffle a new permutation every reset, the
 * same sequence of permutations for the same seed.
 */
static void test_ndarray_iter(void) {
    float x[25], y[25];
    for (int i = 0; i < 25; i++)
        x[i] = y[i] = (float)i;
    mxk_shape s = {.ndim = 2, .dims = {25, 1}};
    mxkt_iter *plain = NULL, *s1 = NULL, *s2 = NULL;
    CHECK_EQ_INT(mxkt_ndarray_iter_create(x, &s, y, 1, 10, 0, 9, &plain), MXK_OK);
    CHECK_EQ_INT(mxkt_ndarray_iter_create(x, &s, y, 1, 10, 1, 9, &s1), MXK_OK);
    CHECK_EQ_INT(mxkt_ndarray_iter_create(x, &s, y, 1, 10, 1, 9, &s2), MXK_OK);
    /* one epoch of each: the labels seen, in order */
    float seen[3][3][30];
    mxkt_iter *its[3] = {plain, s1, s2};
    for (int e = 0; e < 3; e++)
        for (int k = 0; k < 3; k++) {
            CHECK_EQ_INT(mxkt_iter_reset(its[k]), MXK_OK);
            int32_t has = 0, nb = 0;
            while (mxkt_iter_next(its[k], &has) == MXK_OK && has) {
                mxk_ndarray *d = NULL, *l = NULL;
                uint32_t pad = 0;
                CHECK_EQ_INT(its[k]->batch(its[k], &d, &l, &pad), MXK_OK);
                CHECK_EQ_INT(pad, nb == 2 ? 5 : 0);
                if (nb < 3)
                    CHECK_EQ_INT(mxk_ndarray_copy_to_host(l, &seen[k][e][nb * 10], 40), MXK_OK);
                nb++;
            }
            CHECK_EQ_INT(nb, 3);
        }
    for (int i = 0; i < 30; i++)
        CHECK(seen[0][0][i] == (float)(i % 25) && seen[0][2][i] == (float)(i % 25));
    for (int e = 0; e < 3; e++) {
        CHECK(memcmp(seen[1][e], seen[2][e], sizeof seen[1][e]) == 0);
        int count[25] = {0};
        for (int i = 0; i < 25; i++)
            count[(int)seen[1][e][i]]++;
        for (int i = 0; i < 25; i++)
            CHECK_EQ_INT(count[i], 1);
    }
    CHECK(memcmp(seen[1][0], seen[1][1], 25 * sizeof(float)) != 0);
    CHECK(memcmp(seen[1][1], seen[1][2], 25 * sizeof(float)) != 0);
    mxkt_iter_free(plain);
    mxkt_iter_free(s1);
    mxkt_iter_free(s2);
    mxkt_iter *bad = NULL;
    CHECK_EQ_INT(mxkt_ndarray_iter_create(x, &s, y, 1, 0, 0, 0, &bad), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(), "NDArrayIter: empty data or batch size");
}

/**
 * A second init_optimizer warns and changes nothing; checkpoint round trip bit for
 * bit; a module resumed from a checkpoint with states continues as the original.
 * Each module trains on its own iterator (one seed: the same batches).
 */
static void test_module_checkpoint(void) {
    mxkt_iter *ia = make_data(1), *ib = make_data(1), *it = make_data(0);
    mxkt_module *a = make_module(1, 0.1, NULL), *b = make_module(1, 0.1, NULL);
    mxkt_optimizer other;
    mxkt_optimizer_sgd(&other, 5.0, 0.0, 0.0);
    mxk_t_capture cap;
    char warned[256];
    CHECK(mxk_t_capture_begin(&cap));
    mxk_status st = mxkt_module_init_optimizer(b, "local", &other, 0); /* ignored */
    mxk_t_capture_end(&cap, warned, sizeof warned);
    CHECK_EQ_INT(st, MXK_OK);
    CHECK(strcmp(warned, "WARNING: optimizer already initialized, ignoring...\n") == 0);
    fit_epochs(a, ia, 0, 2);
    fit_epochs(b, ib, 0, 2);
    for (uint32_t i = 0; i < 6; i++) {
        uint64_t n = 0;
        float *pa = param_copy(a, 0, i, &n), *pb = param_copy(b, 0, i, &n);
        CHECK(memcmp(pa, pb, n * sizeof(float)) == 0);
        free(pa);
        free(pb);
    }
    char prefix[] = "/tmp/mxk_train_test_XXXXXX";
    CHECK(mkdtemp(prefix) != NULL);
    char pre[128], path[160];
    snprintf(pre, sizeof pre, "%s/mymodel", prefix);
    CHECK_EQ_INT(mxkt_module_save_checkpoint(a, pre, 2, 1, NULL), MXK_OK);
    const char *files[] = {"symbol", "params", "states"};
    for (int k = 0; k < 3; k++) {
        mxkt_checkpoint_name(path, sizeof path, pre, 2, files[k]);
        CHECK(access(path, R_OK) == 0);
    }
    float *out1 = NULL, *out2 = NULL;
    int64_t r1 = 0, w1 = 0, r2 = 0, w2 = 0;
    CHECK_EQ_INT(mxkt_module_predict(a, it, &out1, &r1, &w1), MXK_OK);
    CHECK_EQ_INT(r1, 40);
    CHECK_EQ_INT(w1, 10);
    /* load into a fresh module bound for inference */
    mxk_symbol *sym = NULL;
    CHECK_EQ_INT(mxkt_load_symbol(pre, &sym), MXK_OK);
    mxkt_module *c = NULL;
    CHECK_EQ_INT(mxkt_module_create(sym, "data", "softmax_label", &cpu, 1, &c), MXK_OK);
    mxk_shape ds = {.ndim = 2, .dims = {10, 784}}, ls = {.ndim = 1, .dims = {10}};
    CHECK_EQ_INT(mxkt_module_bind(c, &ds, &ls, 0), MXK_OK);
    CHECK_EQ_INT(mxkt_module_load_params(c, pre, 2), MXK_OK);
    CHECK_EQ_INT(mxkt_module_predict(c, it, &out2, &r2, &w2), MXK_OK);
    CHECK_EQ_INT(r2, r1);
    CHECK(out1 && out2 && memcmp(out1, out2, (size_t)(r1 * w1) * sizeof(float)) == 0);
    /* resume: b continues from a's checkpoint with states → same as a continuing */
    CHECK_EQ_INT(mxkt_module_load_params(b, pre, 2), MXK_OK);
    CHECK_EQ_INT(mxkt_module_load_states(b, pre, 2), MXK_OK);
    fit_epochs(a, ia, 2, 3);
    fit_epochs(b, ib, 2, 3);
    for (uint32_t i = 0; i < 6; i++) {
        uint64_t n = 0;
        float *pa = param_copy(a, 0, i, &n), *pb = param_copy(b, 0, i, &n);
        CHECK(memcmp(pa, pb, n * sizeof(float)) == 0);
        free(pa);
        free(pb);
    }
    free(out1);
    free(out2);
    mxkt_module_free(a);
    mxkt_module_free(b);
    mxkt_module_free(c);
    mxk_symbol_free(sym);
    mxkt_iter_free(it);
    mxkt_iter_free(ia);
    mxkt_iter_free(ib);
    for (int k = 0; k < 3; k++) {
        mxkt_checkpoint_name(path, sizeof path, pre, 2, files[k]);
        unlink(path);
    }
    rmdir(prefix);
}

/**
 * Module errors change nothing: set_params checks every name before copying (an
 * unknown name, and, before the parameters are initialised, a missing one), a
 * .states file whose counts are not float64 is refused without touching the
 * optimizer, init_params without an initializer names the first missing value.
 */
static void test_module_errors(void) {
    mxk_symbol *sym = NULL;
    mxkt_net_mlp(&sym);
    mxkt_module *m = NULL;
    CHECK_EQ_INT(mxkt_module_create(sym, "data", "softmax_label", &cpu, 1, &m), MXK_OK);
    mxk_shape ds = {.ndim = 2, .dims = {10, 784}}, ls = {.ndim = 1, .dims = {10}};
    CHECK_EQ_INT(mxkt_module_bind(m, &ds, &ls, 1), MXK_OK);
    CHECK_EQ_INT(mxkt_module_init_params(m, NULL, 0, NULL, NULL, 1, 0), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(), "fc1_bias is not presented and no initializer was given");
    /* the first set_params must cover every parameter */
    mxk_shape bs = {.ndim = 1, .dims = {128}};
    mxk_ndarray *b = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&bs, MXK_FLOAT32, cpu, 0.5, &b), MXK_OK);
    const char *one[] = {"arg:fc1_bias"};
    CHECK_EQ_INT(mxkt_module_set_params(m, 1, one, &b, 0), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxkt_last_error(), "fc1_weight is not presented");
    mxkt_initializer init;
    mxkt_initializer_parse("xavier", 5, &init);
    CHECK_EQ_INT(mxkt_module_init_params(m, &init, 0, NULL, NULL, 0, 0), MXK_OK);
    /* then a partial set is fine, and an unknown name refuses the whole call */
    const char *two[] = {"arg:fc1_bias", "fc9_weight"};
    mxk_ndarray *vals[2] = {b, b};
    uint64_t n = 0;
    float *before = param_copy(m, 0, 1, &n);
    CHECK_EQ_INT(mxkt_module_set_params(m, 2, two, vals, 0), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxkt_last_error(), "Find name \"fc9_weight\" that is not in the arguments");
    float *after = param_copy(m, 0, 1, &n);
    CHECK(memcmp(before, after, n * sizeof(float)) == 0);
    free(after);
    CHECK_EQ_INT(mxkt_module_set_params(m, 2, two, vals, 1), MXK_OK);
    after = param_copy(m, 0, 1, &n);
    CHECK(after[0] == 0.5f && after[127] == 0.5f);
    free(after);
    free(before);
    /* a .states file with float32 counts: refused, the optimizer keeps its counts */
    mxkt_optimizer o;
    mxkt_optimizer_sgd(&o, 0.1, 0.9, 0.0);
    CHECK_EQ_INT(mxkt_module_init_optimizer(m, "local", &o, 0), MXK_OK);
    char dir[] = "/tmp/mxk_train_states_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char pre[128], path[160];
    snprintf(pre, sizeof pre, "%s/m", dir);
    mxkt_checkpoint_name(path, sizeof path, pre, 1, "states");
    uint32_t np = mxkt_module_num_params(m);
    mxk_ndarray *arrs[8];
    const char *names[8];
    char nbuf[8][64];
    for (uint32_t i = 0; i < np; i++) {
        arrs[i] = mxkt_module_param(m, i);
        snprintf(nbuf[i], sizeof nbuf[i], "%s:mom", mxkt_module_param_name(m, i));
        names[i] = nbuf[i];
    }
    mxk_shape cs = {.ndim = 1, .dims = {np + 1}};
    CHECK_EQ_INT(mxk_ndarray_full(&cs, MXK_FLOAT32, cpu, 7.0, &arrs[np]), MXK_OK);
    names[np] = "__counts__";
    CHECK_EQ_INT(mxk_ndarray_save(path, np + 1, arrs, names), MXK_OK);
    CHECK_EQ_INT(mxkt_module_load_states(m, pre, 1), MXK_ERR_FORMAT);
    CHECK_CONTAINS(mxkt_last_error(), "__counts__ must be float64 with 7 values");
    /* a state of the wrong shape is refused by name */
    arrs[0] = b;
    CHECK_EQ_INT(mxk_ndarray_save(path, np + 1, arrs, names), MXK_OK);
    CHECK_EQ_INT(mxkt_module_load_states(m, pre, 1), MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxkt_last_error(), "state fc1_weight:mom has another shape than fc1_weight");
    unlink(path);
    rmdir(dir);
    mxk_ndarray_free(arrs[np]);
    mxk_ndarray_free(b);
    mxkt_module_free(m);
    mxk_symbol_free(sym);
}

/**
 * fit resets the training iterator at the end of each epoch (upstream), so the
 * iterator is at its first batch afterwards; a metric count outside 1..8 is
 * refused before anything runs.
 */
static void test_fit_iterator_and_metrics(void) {
    mxkt_iter *it = make_data(0);
    mxkt_module *m = make_module(1, 0.1, NULL);
    fit_epochs(m, it, 0, 1);
    int32_t has = 0;
    CHECK_EQ_INT(mxkt_iter_next(it, &has), MXK_OK);
    CHECK_EQ_INT(has, 1);
    mxk_ndarray *d = NULL, *l = NULL;
    uint32_t pad = 0;
    float labels[10];
    CHECK_EQ_INT(it->batch(it, &d, &l, &pad), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(l, labels, sizeof labels), MXK_OK);
    for (int i = 0; i < 10; i++)
        CHECK(labels[i] == (float)i);
    mxkt_metric ms[MXKT_FIT_MAX_METRICS + 1];
    for (int k = 0; k <= MXKT_FIT_MAX_METRICS; k++)
        CHECK_EQ_INT(mxkt_metric_create("acc", 0, &ms[k]), MXK_OK);
    mxkt_fit_options fo;
    memset(&fo, 0, sizeof fo);
    fo.num_epoch = 1;
    fo.metrics = ms;
    fo.num_metrics = MXKT_FIT_MAX_METRICS + 1;
    uint64_t n = 0;
    float *before = param_copy(m, 0, 0, &n);
    CHECK_EQ_INT(mxkt_module_fit(m, it, NULL, &fo), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(), "fit: 1 to 8 metrics, not 9");
    fo.num_metrics = 0;
    CHECK_EQ_INT(mxkt_module_fit(m, it, NULL, &fo), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(), "fit: 1 to 8 metrics, not 0");
    float *after = param_copy(m, 0, 0, &n);
    CHECK(memcmp(before, after, n * sizeof(float)) == 0);
    free(before);
    free(after);
    mxkt_module_free(m);
    mxkt_iter_free(it);
}

/** 25 samples of the synthetic data (labels i % 10), batch 10: the last batch has 5 pad rows. */
static mxkt_iter *make_data25(float bad_label, int bad_at) {
    float *x = malloc(25 * 784 * sizeof(float)), y[25];
    for (int i = 0; i < 25; i++) {
        y[i] = i == bad_at ? bad_label : (float)(i % 10);
        for (int j = 0; j < 784; j++)
            x[i * 784 + j] = (float)((i * 31 + j * 7) % 97) / 97.0f + (j % 10 == i % 10 ? 1.0f : 0);
    }
    mxk_shape s = {.ndim = 2, .dims = {25, 784}};
    mxkt_iter *it = NULL;
    CHECK_EQ_INT(mxkt_ndarray_iter_create(x, &s, y, 1, 10, 0, 3, &it), MXK_OK);
    free(x);
    return it;
}

/** batch_cb: the instances the first metric has counted so far. */
static void count_cb(int32_t epoch, int64_t nbatch, const mxkt_metric *metrics,
                     uint32_t num_metrics, void *user) {
    (void)epoch;
    (void)nbatch;
    (void)num_metrics;
    *(double *)user = metrics[0].num_inst;
}

/**
 * A padded last batch (BaseModule.score / iter_predict with DataBatch.pad): score
 * counts the 25 real examples once, with the accuracy of predict's 25 rows; fit
 * updates on all rows but its metric counts the 25 real ones only.
 */
static void test_pad_rows_not_counted(void) {
    mxkt_iter *it = make_data25(0, -1);
    mxkt_module *m = make_module(1, 0.1, NULL);
    fit_epochs(m, it, 0, 1);
    float *out = NULL;
    int64_t rows = 0, width = 0;
    CHECK_EQ_INT(mxkt_module_predict(m, it, &out, &rows, &width), MXK_OK);
    CHECK(rows == 25 && width == 10);
    int right = 0;
    for (int i = 0; i < 25; i++) {
        int best = 0;
        for (int j = 1; j < 10; j++)
            if (out[i * 10 + j] > out[i * 10 + best])
                best = j;
        right += best == i % 10;
    }
    free(out);
    mxkt_metric acc;
    CHECK_EQ_INT(mxkt_metric_create("acc", 0, &acc), MXK_OK);
    CHECK_EQ_INT(mxkt_module_score(m, it, &acc, 1), MXK_OK);
    CHECK(acc.num_inst == 25.0 && mxkt_module_scored_examples(m) == 25);
    CHECK_NEAR(mxkt_metric_get(&acc), right / 25.0, 1e-12);
    double counted = 0;
    mxkt_fit_options fo;
    memset(&fo, 0, sizeof fo);
    fo.num_epoch = 1;
    fo.log = fopen("/dev/null", "w");
    fo.batch_cb = count_cb;
    fo.batch_cb_user = &counted;
    CHECK_EQ_INT(mxkt_iter_reset(it), MXK_OK); /* score left it at the end */
    CHECK_EQ_INT(mxkt_module_fit(m, it, it, &fo), MXK_OK);
    fclose(fo.log);
    CHECK(counted == 25.0 && fo.last_examples == 25 && fo.last_val_examples == 25);
    mxkt_module_free(m);
    mxkt_iter_free(it);
}

/** An iterator without batches (an empty epoch). */
static mxk_status empty_reset(mxkt_iter *it) {
    (void)it;
    return MXK_OK;
}
static mxk_status empty_next(mxkt_iter *it, int32_t *has_next) {
    (void)it;
    *has_next = 0;
    return MXK_OK;
}
static mxk_status empty_batch(mxkt_iter *it, mxk_ndarray **d, mxk_ndarray **l, uint32_t *pad) {
    (void)it, (void)d, (void)l, (void)pad;
    return MXK_ERR_STATE;
}
static void empty_destroy(mxkt_iter *it) {
    (void)it;
}

/**
 * No examples is an error, never a NaN metric (metric.py's get would divide by 0):
 * score, fit and predict over an empty iterator; a label that is not a class of
 * the output names its value, example and source in score and fit, and fit stops
 * before that batch's update.
 */
static void test_no_examples_and_bad_labels(void) {
    mxkt_module *m = make_module(1, 0.1, NULL);
    mxkt_iter e = {.reset = empty_reset,
                   .next = empty_next,
                   .batch = empty_batch,
                   .destroy = empty_destroy,
                   .batch_size = 10};
    mxkt_metric acc;
    CHECK_EQ_INT(mxkt_metric_create("acc", 0, &acc), MXK_OK);
    CHECK_EQ_INT(mxkt_module_score(m, &e, &acc, 1), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(),
                   "score: metric 'accuracy' counted no example (the data gave no labelled row)");
    mxkt_fit_options fo;
    memset(&fo, 0, sizeof fo);
    fo.num_epoch = 1;
    fo.log = fopen("/dev/null", "w");
    CHECK_EQ_INT(mxkt_module_fit(m, &e, NULL, &fo), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(), "fit: epoch 0: metric 'accuracy' counted no example");
    float *out = NULL;
    int64_t rows = 0, width = 0;
    CHECK_EQ_INT(mxkt_module_predict(m, &e, &out, &rows, &width), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(), "predict: the data gave no example");
    CHECK(out == NULL);
    mxkt_iter *bad = make_data25(10, 13), *neg = make_data25(-1, 4);
    CHECK_EQ_INT(mxkt_module_score(m, bad, &acc, 1), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(),
                   "label 10 of example 13 is not a class of the output (0 to 9)");
    snprintf(neg->source, sizeof neg->source, "%s", "t10k-labels");
    uint64_t np = 0;
    float *before = param_copy(m, 0, 0, &np);
    CHECK_EQ_INT(mxkt_module_fit(m, neg, NULL, &fo), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxkt_last_error(),
                   "label -1 of example 4 in 't10k-labels' is not a class of the output (0 to 9)");
    float *after = param_copy(m, 0, 0, &np); /* the first batch was never applied */
    CHECK(memcmp(before, after, np * sizeof(float)) == 0);
    free(before);
    free(after);
    fclose(fo.log);
    mxkt_iter_free(bad);
    mxkt_iter_free(neg);
    mxkt_module_free(m);
}

/** Two contexts (KVStore local): identical parameters, close to one context. */
static void test_two_contexts(void) {
    mxkt_iter *it = make_data(1), *it2 = make_data(1);
    mxkt_module *one = make_module(1, 0.1, NULL), *two = make_module(2, 0.1, NULL);
    CHECK_EQ_INT(mxkt_module_num_ctx(two), 2);
    fit_epochs(one, it, 0, 2);
    fit_epochs(two, it2, 0, 2);
    for (uint32_t i = 0; i < 6; i++) {
        uint64_t n = 0;
        float *p0 = param_copy(two, 0, i, &n), *p1 = param_copy(two, 1, i, &n);
        float *q = param_copy(one, 0, i, &n);
        CHECK(memcmp(p0, p1, n * sizeof(float)) == 0);
        double md = 0;
        for (uint64_t k = 0; k < n; k++)
            md = fabs((double)p0[k] - q[k]) > md ? fabs((double)p0[k] - q[k]) : md;
        CHECK(md < 1e-3);
        free(p0);
        free(p1);
        free(q);
    }
    /* get_params: "arg:" names in list_arguments order, the contexts' average
     * (equal to both, which agree) */
    uint32_t n = 0;
    char **names = NULL;
    mxk_ndarray **vals = NULL;
    CHECK_EQ_INT(mxkt_module_get_params(two, &n, &names, &vals), MXK_OK);
    CHECK_EQ_INT(n, 6);
    const char *want[] = {"arg:fc1_weight", "arg:fc1_bias",   "arg:fc2_weight",
                          "arg:fc2_bias",   "arg:fc3_weight", "arg:fc3_bias"};
    for (uint32_t i = 0; i < n && i < 6; i++) {
        CHECK(strcmp(names[i], want[i]) == 0);
        uint64_t k = 0;
        float *p0 = param_copy(two, 0, i, &k), *g = malloc(k * sizeof(float));
        CHECK_EQ_INT(mxk_ndarray_size(vals[i]), k);
        CHECK_EQ_INT(mxk_ndarray_copy_to_host(vals[i], g, k * sizeof(float)), MXK_OK);
        CHECK(memcmp(p0, g, k * sizeof(float)) == 0);
        free(p0);
        free(g);
    }
    mxk_ndarray_list_free(n, vals, names);
    mxkt_module_free(one);
    mxkt_module_free(two);
    mxkt_iter_free(it);
    mxkt_iter_free(it2);
    /* before init_params: nothing to get */
    mxk_symbol *sym = NULL;
    mxkt_net_mlp(&sym);
    mxkt_module *m = NULL;
    CHECK_EQ_INT(mxkt_module_create(sym, "data", "softmax_label", &cpu, 1, &m), MXK_OK);
    CHECK_EQ_INT(mxkt_module_get_params(m, &n, &names, &vals), MXK_ERR_STATE);
    CHECK_CONTAINS(mxkt_last_error(), "call bind and init_params before get_params");
    CHECK(n == 0 && names == NULL && vals == NULL);
    mxkt_module_free(m);
    mxk_symbol_free(sym);
}

/**
 * init_optimizer with a store object (mxkt_module_init_optimizer_kv, as mxk train
 * passes its dist store), one context: the module initialises its keys in the
 * store, trains bit for bit as without a store (the sum over one context is the
 * gradient itself), and leaves the store to its owner; a NULL store is refused.
 */
static void test_store_object(void) {
    mxkt_iter *it = make_data(1), *it2 = make_data(1);
    mxk_kvstore *kv = NULL;
    CHECK_EQ_INT(mxk_kvstore_create("local", &kv), MXK_OK);
    mxkt_module *plain = make_module(1, 0.1, NULL), *with = make_module(1, 0.1, kv);
    fit_epochs(plain, it, 0, 1);
    fit_epochs(with, it2, 0, 1);
    for (uint32_t i = 0; i < 6; i++) {
        uint64_t n = 0;
        float *p = param_copy(plain, 0, i, &n), *q = param_copy(with, 0, i, &n);
        CHECK(memcmp(p, q, n * sizeof(float)) == 0);
        free(p);
        free(q);
    }
    mxkt_module_free(with);
    /* the store outlives the module and holds its keys */
    const char *key = "fc3_bias";
    mxk_ndarray *v = scalar(0);
    mxk_status st = mxk_kvstore_init(kv, 1, &key, &v);
    CHECK_EQ_INT(st, MXK_ERR_STATE);
    CHECK_CONTAINS(mxk_get_last_error(), "duplicate init of key fc3_bias");
    mxk_ndarray_free(v);
    mxk_kvstore_free(kv);
    mxkt_optimizer o;
    mxkt_optimizer_sgd(&o, 0.1, 0.9, 1e-4);
    mxk_symbol *sym = NULL;
    mxkt_net_mlp(&sym);
    mxkt_module *m = NULL;
    CHECK_EQ_INT(mxkt_module_create(sym, "data", "softmax_label", &cpu, 1, &m), MXK_OK);
    CHECK_EQ_INT(mxkt_module_init_optimizer_kv(m, NULL, &o, 0), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "init_optimizer: the kvstore is NULL") == 0);
    mxkt_module_free(m);
    mxk_symbol_free(sym);
    mxkt_module_free(plain);
    mxkt_iter_free(it);
    mxkt_iter_free(it2);
}

int main(void) {
    if (tt_init() != 0)
        return 77;
    MXK_RUN(test_sgd_numbers);
    MXK_RUN(test_adam_numbers);
    MXK_RUN(test_schedulers);
    MXK_RUN(test_initializers);
    MXK_RUN(test_initializer_specs);
    MXK_RUN(test_metrics);
    MXK_RUN(test_split);
    MXK_RUN(test_speedometer_and_names);
    MXK_RUN(test_networks);
    MXK_RUN(test_ndarray_iter);
    MXK_RUN(test_module_checkpoint);
    MXK_RUN(test_module_errors);
    MXK_RUN(test_fit_iterator_and_metrics);
    MXK_RUN(test_two_contexts);
    MXK_RUN(test_store_object);
    MXK_RUN(test_pad_rows_not_counted);
    MXK_RUN(test_no_examples_and_bad_labels);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
