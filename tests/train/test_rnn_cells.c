/*
 * mxk_rnn.h on tiny sizes: argument names and order, inferred shapes, forward
 * numbers of unrolled RNN, LSTM and GRU cells against the recurrences of
 * upstream python/mxnet/rnn/rnn_cell.py computed here in double, the exact
 * messages of bad arguments, and FusedRNNCell's parameter layout
 * (FusedRNNCell._slice_weights) by offsets and round trips.
 * (conformance_rnn_cells compares the same cells with MXNet 1.9.1 itself.)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_rnn.h"
#include "testing.h"
#include "train_test_util.h"

static const mxk_context cpu = {MXK_DEV_CPU, 0};

/** Unrolls `c` over `len` steps of data (N=1, features `in`) in TNC, merged. */
static mxkt_rnn_unrolled unroll(mxkt_rnn_cell *c, uint32_t len) {
    mxkt_rnn_unrolled u;
    CHECK_EQ_INT(mxkt_rnn_cell_unroll(c, len, NULL, NULL, "TNC", MXKT_RNN_MERGE_TRUE, &u), MXK_OK);
    return u;
}

/**
 * Binds out (data: (len, 1, 1); a state variable `state` (1, 1) unless NULL), sets
 * the named arguments, runs forward, copies output 0.
 */
static void run_state(mxk_symbol *out, uint32_t len, const char *state, const char *const *names,
                      const float *const *vals, const int *sizes, uint32_t n, float *result,
                      uint32_t result_size) {
    mxk_shape ds[2] = {{.ndim = 3, .dims = {len, 1, 1}}, {.ndim = 2, .dims = {1, 1}}};
    const char *dn[2] = {"data", state};
    mxk_executor *ex = NULL;
    CHECK_EQ_INT(
        mxk_executor_simple_bind(out, cpu, state ? 2 : 1, dn, ds, "null", 0, NULL, NULL, NULL, &ex),
        MXK_OK);
    for (uint32_t i = 0; i < n; i++)
        CHECK_EQ_INT(mxk_ndarray_copy_from_host(mxk_executor_arg(ex, names[i]), vals[i],
                                                (uint64_t)sizes[i] * sizeof(float)),
                     MXK_OK);
    CHECK_EQ_INT(mxk_executor_forward(ex, 0), MXK_OK);
    CHECK_EQ_INT(
        mxk_ndarray_copy_to_host(mxk_executor_output(ex, 0), result, result_size * sizeof(float)),
        MXK_OK);
    mxk_executor_free(ex);
}

/** Elements of a shape. */
static int64_t shape_size(const mxk_shape *s) {
    int64_t n = 1;
    for (int32_t i = 0; i < s->ndim; i++)
        n *= s->dims[i];
    return n;
}

static void run(mxk_symbol *out, uint32_t len, const char *const *names, const float *const *vals,
                const int *sizes, uint32_t n, float *result, uint32_t result_size) {
    run_state(out, len, NULL, names, vals, sizes, n, result, result_size);
}

static double sigm(double x) {
    return 1.0 / (1.0 + exp(-x));
}

/** LSTMCell names, order and shapes; two steps against the recurrence (H = 1). */
static void test_lstm(void) {
    mxkt_rnn_cell *c = NULL;
    CHECK_EQ_INT(mxkt_rnn_cell_lstm(1, 1.0, NULL, &c), MXK_OK);
    mxkt_rnn_unrolled u = unroll(c, 2);
    CHECK_EQ_INT(u.num_outputs, 1);
    CHECK_EQ_INT(u.num_states, 2);
    CHECK(strcmp(mxk_symbol_name(u.states[0]), "lstm_t1_out") == 0);
    CHECK(strcmp(mxk_symbol_name(u.states[1]), "lstm_t1_state") == 0);
    uint32_t na = 0;
    char **args = NULL;
    CHECK_EQ_INT(mxk_symbol_list_names(u.outputs[0], MXK_SYMBOL_ARGUMENTS, &na, &args), MXK_OK);
    static const char *const want[5] = {"data", "lstm_i2h_weight", "lstm_i2h_bias",
                                        "lstm_h2h_weight", "lstm_h2h_bias"};
    CHECK_EQ_INT(na, 5);
    for (uint32_t i = 0; i < na && i < 5; i++)
        CHECK(strcmp(args[i], want[i]) == 0);
    mxk_string_list_free(args);
    /* shapes: data (T=2, N=3, C=5) */
    mxk_shape ds = {.ndim = 3, .dims = {2, 3, 5}}, as[5], os[1];
    const char *dn = "data";
    int32_t complete = 0;
    CHECK_EQ_INT(mxk_symbol_infer_shape(u.outputs[0], 1, &dn, &ds, as, os, NULL, &complete),
                 MXK_OK);
    CHECK_EQ_INT(complete, 1);
    CHECK(as[1].dims[0] == 4 && as[1].dims[1] == 5 && as[3].dims[0] == 4 && as[3].dims[1] == 1);
    CHECK(os[0].ndim == 3 && os[0].dims[0] == 2 && os[0].dims[1] == 3 && os[0].dims[2] == 1);

    static const float x[2] = {0.5f, -1.0f}, wi[4] = {0.3f, -0.2f, 0.8f, 0.1f},
                       bi[4] = {0.1f, 1.0f, 0.0f, -0.3f}, wh[4] = {0.4f, 0.2f, -0.6f, 0.5f},
                       bh[4] = {0.05f, 0.0f, 0.2f, 0.1f};
    const char *names[5] = {"data", "lstm_i2h_weight", "lstm_i2h_bias", "lstm_h2h_weight",
                            "lstm_h2h_bias"};
    const float *vals[5] = {x, wi, bi, wh, bh};
    const int sizes[5] = {2, 4, 4, 4, 4};
    float got[2];
    run(u.outputs[0], 2, names, vals, sizes, 5, got, 2);
    double h = 0, cs = 0;
    for (int t = 0; t < 2; t++) {
        double g[4];
        for (int k = 0; k < 4; k++)
            g[k] = wi[k] * x[t] + bi[k] + wh[k] * h + bh[k];
        cs = sigm(g[1]) * cs + sigm(g[0]) * tanh(g[2]);
        h = sigm(g[3]) * tanh(cs);
        CHECK_NEAR(got[t], h, 1e-6);
    }
    mxkt_rnn_unrolled_free(&u);
    mxkt_rnn_cell_free(c);
}

/** GRUCell (cuDNN's variant) and RNNCell relu over two steps (H = 1). */
static void test_gru_rnn(void) {
    static const float x[2] = {0.7f, -0.4f}, wi[3] = {0.5f, -0.3f, 0.9f},
                       bi[3] = {0.1f, 0.2f, -0.1f}, wh[3] = {0.6f, 0.4f, -0.7f},
                       bh[3] = {0.0f, -0.2f, 0.3f};
    const float *vals[5] = {x, wi, bi, wh, bh};
    const int sizes[5] = {2, 3, 3, 3, 3};
    mxkt_rnn_cell *c = NULL;
    CHECK_EQ_INT(mxkt_rnn_cell_gru(1, "g_", &c), MXK_OK);
    mxkt_rnn_unrolled u = unroll(c, 2);
    const char *names[5] = {"data", "g_i2h_weight", "g_i2h_bias", "g_h2h_weight", "g_h2h_bias"};
    float got[2];
    run(u.outputs[0], 2, names, vals, sizes, 5, got, 2);
    double h = 0;
    for (int t = 0; t < 2; t++) {
        double i2h[3], h2h[3];
        for (int k = 0; k < 3; k++) {
            i2h[k] = wi[k] * x[t] + bi[k];
            h2h[k] = wh[k] * h + bh[k];
        }
        double r = sigm(i2h[0] + h2h[0]), z = sigm(i2h[1] + h2h[1]);
        double n = tanh(i2h[2] + r * h2h[2]);
        h = (1 - z) * n + z * h;
        CHECK_NEAR(got[t], h, 1e-6);
    }
    mxkt_rnn_unrolled_free(&u);

    /* the same cell from a given begin state (a variable h0 = 0.3) */
    mxk_symbol *h0 = NULL;
    CHECK_EQ_INT(mxk_symbol_variable("h0", &h0), MXK_OK);
    CHECK_EQ_INT(mxkt_rnn_cell_num_states(c), 1);
    CHECK_EQ_INT(mxkt_rnn_cell_unroll(c, 2, NULL, &h0, "TNC", MXKT_RNN_MERGE_TRUE, &u), MXK_OK);
    static const float h0v[1] = {0.3f};
    const char *names0[6] = {"data",         "g_i2h_weight", "g_i2h_bias",
                             "g_h2h_weight", "g_h2h_bias",   "h0"};
    const float *vals0[6] = {x, wi, bi, wh, bh, h0v};
    const int sizes0[6] = {2, 3, 3, 3, 3, 1};
    run_state(u.outputs[0], 2, "h0", names0, vals0, sizes0, 6, got, 2);
    h = h0v[0];
    for (int t = 0; t < 2; t++) {
        double i2h[3], h2h[3];
        for (int k = 0; k < 3; k++) {
            i2h[k] = wi[k] * x[t] + bi[k];
            h2h[k] = wh[k] * h + bh[k];
        }
        double r = sigm(i2h[0] + h2h[0]), z = sigm(i2h[1] + h2h[1]);
        h = (1 - z) * tanh(i2h[2] + r * h2h[2]) + z * h;
        CHECK_NEAR(got[t], h, 1e-6);
    }
    mxkt_rnn_unrolled_free(&u);
    mxk_symbol *none[1] = {NULL};
    CHECK_EQ_INT(mxkt_rnn_cell_unroll(c, 2, NULL, none, "TNC", MXKT_RNN_MERGE_TRUE, &u),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "rnn cell: begin_state 0 is NULL") == 0);
    mxk_symbol_free(h0);
    mxkt_rnn_cell_free(c);

    CHECK_EQ_INT(mxkt_rnn_cell_rnn(1, "relu", NULL, &c), MXK_OK);
    u = unroll(c, 2);
    const char *rnames[5] = {"data", "rnn_i2h_weight", "rnn_i2h_bias", "rnn_h2h_weight",
                             "rnn_h2h_bias"};
    const int rsizes[5] = {2, 1, 1, 1, 1};
    run(u.outputs[0], 2, rnames, vals, rsizes, 5, got, 2);
    h = 0;
    for (int t = 0; t < 2; t++) {
        h = fmax(0.0, wi[0] * x[t] + bi[0] + wh[0] * h + bh[0]);
        CHECK_NEAR(got[t], h, 1e-6);
    }
    mxkt_rnn_unrolled_free(&u);
    mxkt_rnn_cell_free(c);
}

/** LSTMCell's i2h_bias carries __init__ LSTMBias: zeros, forget_bias on the f quarter. */
static void test_lstm_bias_init(void) {
    mxkt_rnn_cell *c = NULL;
    CHECK_EQ_INT(mxkt_rnn_cell_lstm(2, 0.5, "x_", &c), MXK_OK);
    mxkt_rnn_unrolled u = unroll(c, 1);
    uint32_t n = 0;
    char **kv = NULL;
    const char *init_attr = NULL;
    CHECK_EQ_INT(mxk_symbol_list_attrs(u.outputs[0], &n, &kv), MXK_OK);
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(kv[2 * i], "x_i2h_bias$__init__") == 0)
            init_attr = kv[2 * i + 1];
    CHECK(init_attr && strcmp(init_attr, "[\"lstmbias\", {\"forget_bias\": 0.5}]") == 0);
    mxkt_initializer xavier;
    CHECK_EQ_INT(mxkt_initializer_parse("xavier", 1, &xavier), MXK_OK);
    mxk_shape bs = {.ndim = 1, .dims = {8}};
    float got[8];
    static const float want[8] = {0, 0, 0.5f, 0.5f, 0, 0, 0, 0};
    CHECK_EQ_INT(mxkt_initializer_fill_desc(&xavier, "x_i2h_bias", init_attr, &bs, got), MXK_OK);
    CHECK(memcmp(got, want, sizeof want) == 0);
    mxk_string_list_free(kv);
    mxkt_rnn_unrolled_free(&u);
    mxkt_rnn_cell_free(c);
}

/** Bad arguments: exact messages, outputs left empty. */
static void test_errors(void) {
    mxkt_rnn_cell *c = (mxkt_rnn_cell *)1, *s = NULL;
    CHECK_EQ_INT(mxkt_rnn_cell_lstm(0, 1.0, NULL, &c), MXK_ERR_INVALID_ARGUMENT);
    CHECK(c == NULL);
    CHECK(strcmp(mxkt_last_error(), "rnn cell: num_hidden must be positive, got 0") == 0);
    CHECK_EQ_INT(mxkt_rnn_cell_rnn(2, "gelu", NULL, &c), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "rnn cell: unknown activation 'gelu'") == 0);
    CHECK_EQ_INT(mxkt_rnn_cell_dropout(1.0f, NULL, &c), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "rnn cell: dropout must be in [0, 1), got 1") == 0);
    CHECK_EQ_INT(mxkt_rnn_cell_gru(2, NULL, &c), MXK_OK);
    mxkt_rnn_unrolled u;
    CHECK_EQ_INT(mxkt_rnn_cell_unroll(c, 0, NULL, NULL, "NTC", MXKT_RNN_MERGE_TRUE, &u),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "rnn cell: length must be positive") == 0);
    CHECK_EQ_INT(mxkt_rnn_cell_unroll(c, 2, NULL, NULL, "NCT", MXKT_RNN_MERGE_TRUE, &u),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "rnn cell: layout must be NTC or TNC, got 'NCT'") == 0);
    CHECK(u.outputs == NULL && u.num_states == 0);
    mxkt_rnn_cell *g2 = NULL;
    CHECK_EQ_INT(mxkt_rnn_cell_gru(2, NULL, &g2), MXK_OK);
    CHECK_EQ_INT(mxkt_rnn_cell_add(c, g2), MXK_ERR_INVALID_ARGUMENT); /* g2 is freed */
    CHECK(strcmp(mxkt_last_error(), "rnn cell: add needs a SequentialRNNCell") == 0);
    mxkt_rnn_cell_free(c);
    CHECK_EQ_INT(mxkt_rnn_cell_gru(2, NULL, &g2), MXK_OK);
    CHECK_EQ_INT(mxkt_rnn_cell_zoneout(g2, 0.5f, 1.5f, &c), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "rnn cell: zoneout must be in [0, 1), got 0.5 and 1.5") == 0);
    CHECK_EQ_INT(mxkt_rnn_cell_sequential(&s), MXK_OK);
    CHECK_EQ_INT(mxkt_rnn_cell_zoneout(s, 0.5f, 0.5f, &c), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "rnn cell: ZoneoutCell needs an RNN, LSTM or GRU cell") == 0);
    CHECK(c == NULL);
    CHECK_EQ_INT(mxkt_rnn_cell_sequential(&s), MXK_OK);
    CHECK_EQ_INT(mxkt_rnn_cell_residual(s, &c), MXK_OK);
    CHECK_EQ_INT(mxkt_rnn_cell_unroll(c, 2, NULL, NULL, "NTC", MXKT_RNN_MERGE_TRUE, &u),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "rnn cell: an empty SequentialRNNCell") == 0);
    mxkt_rnn_cell_free(c);

    mxkt_fused_rnn f = {"lstmx", 2, 1, 0, 0.0f, NULL};
    int64_t size = 0;
    CHECK_EQ_INT(mxkt_fused_rnn_param_size(&f, 3, &size), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "fused rnn: unknown mode 'lstmx'") == 0);
    f.mode = "gru";
    f.num_layers = 0;
    CHECK_EQ_INT(mxkt_fused_rnn_unfuse(&f, &c), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "fused rnn: num_hidden and num_layers must be positive") == 0);
    f.num_layers = 1;
    mxk_shape vs = {.ndim = 1, .dims = {37}};
    mxk_ndarray *v = NULL, **arrs = NULL, *p = NULL;
    char **names = NULL;
    uint32_t n = 0;
    CHECK_EQ_INT(mxk_ndarray_create(&vs, MXK_FLOAT32, cpu, &v), MXK_OK);
    CHECK_EQ_INT(mxkt_fused_rnn_unpack_weights(&f, v, 0, &n, &names, &arrs),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(),
                 "fused rnn: a parameter vector of 37 elements fits no input size") == 0);
    CHECK(n == 0 && names == NULL && arrs == NULL);
    const char *nm = "gru_l0_i2h_weight";
    mxk_shape ws = {.ndim = 2, .dims = {6, 3}};
    mxk_ndarray *w = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(&ws, MXK_FLOAT32, cpu, &w), MXK_OK);
    CHECK_EQ_INT(mxkt_fused_rnn_pack_weights(&f, 1, &nm, &w, &p), MXK_ERR_NOT_FOUND);
    CHECK(strcmp(mxkt_last_error(), "fused rnn: missing gru_l0_h2h_weight") == 0);
    const char *nms[2] = {"gru_l0_i2h_weight", "gru_l0_h2h_weight"};
    mxk_ndarray *ws2[2] = {w, w};
    CHECK_EQ_INT(mxkt_fused_rnn_pack_weights(&f, 2, nms, ws2, &p), MXK_ERR_SHAPE);
    CHECK(strcmp(mxkt_last_error(), "fused rnn: gru_l0_h2h_weight has 18 elements, expected 12") ==
          0);
    CHECK(p == NULL);
    mxk_ndarray_free(w);
    mxk_ndarray_free(v);
}

/** The flat layout by offsets (a vector holding 0, 1, 2, ...) and the round trip. */
static void test_fused_layout(void) {
    mxkt_fused_rnn f = {"lstm", 2, 2, 1, 0.0f, NULL}; /* H 2, 2 layers, bidirectional */
    int64_t size = 0;
    CHECK_EQ_INT(mxkt_fused_rnn_param_size(&f, 3, &size), MXK_OK);
    /* (I + H + 2) H G D + (L - 1) G H (H + D H + 2) D = 7*2*4*2 + 4*2*8*2 */
    CHECK(size == 112 + 128);
    float *ramp = malloc((size_t)size * sizeof *ramp);
    for (int64_t i = 0; i < size; i++)
        ramp[i] = (float)i;
    mxk_shape vs = {.ndim = 1, .dims = {size}};
    mxk_ndarray *v = NULL, **arrs = NULL, *back = NULL;
    char **names = NULL;
    uint32_t n = 0;
    CHECK_EQ_INT(mxk_ndarray_create(&vs, MXK_FLOAT32, cpu, &v), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(v, ramp, (uint64_t)size * sizeof *ramp), MXK_OK);
    CHECK_EQ_INT(mxkt_fused_rnn_unpack_weights(&f, v, 0, &n, &names, &arrs), MXK_OK);
    CHECK_EQ_INT(n, 16);
    /* name, rows, cols (0: bias), first element = offset in the vector */
    static const struct {
        const char *name;
        int64_t rows, cols, first;
    } want[] = {
        {"lstm_l0_i2h_weight", 8, 3, 0},   {"lstm_l0_h2h_weight", 8, 2, 24},
        {"lstm_r0_i2h_weight", 8, 3, 40},  {"lstm_r0_h2h_weight", 8, 2, 64},
        {"lstm_l1_i2h_weight", 8, 4, 80},  {"lstm_l1_h2h_weight", 8, 2, 112},
        {"lstm_r1_i2h_weight", 8, 4, 128}, {"lstm_r1_h2h_weight", 8, 2, 160},
        {"lstm_l0_i2h_bias", 8, 0, 176},   {"lstm_l0_h2h_bias", 8, 0, 184},
        {"lstm_r0_i2h_bias", 8, 0, 192},   {"lstm_r1_h2h_bias", 8, 0, 232},
    };
    for (size_t k = 0; k < sizeof want / sizeof *want; k++) {
        uint32_t i = 0;
        while (i < n && strcmp(names[i], want[k].name) != 0)
            i++;
        CHECK(i < n);
        if (i == n)
            continue;
        mxk_shape s = mxk_ndarray_shape(arrs[i]);
        CHECK(s.ndim == (want[k].cols ? 2 : 1) && s.dims[0] == want[k].rows);
        CHECK(want[k].cols == 0 || s.dims[1] == want[k].cols);
        float block[32] = {-1};
        CHECK_EQ_INT(
            mxk_ndarray_copy_to_host(arrs[i], block, (uint64_t)shape_size(&s) * sizeof(float)),
            MXK_OK);
        float first = block[0];
        CHECK(first == (float)want[k].first);
    }
    CHECK_EQ_INT(mxkt_fused_rnn_pack_weights(&f, n, (const char *const *)names, arrs, &back),
                 MXK_OK);
    float *got = calloc((size_t)size, sizeof *got);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(back, got, (uint64_t)size * sizeof *got), MXK_OK);
    CHECK(memcmp(got, ramp, (size_t)size * sizeof *got) == 0);
    mxk_ndarray_free(back);
    mxk_ndarray_list_free(n, arrs, names);

    /* per gate (FusedRNNCell.unpack_weights' names): slices of the blocks above */
    CHECK_EQ_INT(mxkt_fused_rnn_unpack_weights(&f, v, 1, &n, &names, &arrs), MXK_OK);
    CHECK_EQ_INT(n, 64);
    static const struct {
        const char *name;
        int64_t first;
    } gates[] = {{"lstm_l0_i2h_i_weight", 0},
                 {"lstm_l0_i2h_f_weight", 6},
                 {"lstm_l1_h2h_c_weight", 120},
                 {"lstm_l0_h2h_o_bias", 190}};
    for (size_t k = 0; k < sizeof gates / sizeof *gates; k++) {
        uint32_t i = 0;
        while (i < n && strcmp(names[i], gates[k].name) != 0)
            i++;
        CHECK(i < n);
        float block[8] = {-1};
        mxk_shape s = i < n ? mxk_ndarray_shape(arrs[i]) : (mxk_shape){0};
        CHECK(s.dims[0] == 2);
        if (i < n)
            CHECK_EQ_INT(
                mxk_ndarray_copy_to_host(arrs[i], block, (uint64_t)shape_size(&s) * sizeof(float)),
                MXK_OK);
        CHECK(block[0] == (float)gates[k].first);
    }
    CHECK(strcmp(names[n - 1], "lstm_r1_h2h_o_bias") == 0);
    CHECK_EQ_INT(mxkt_fused_rnn_pack_weights(&f, n - 1, (const char *const *)names, arrs, &back),
                 MXK_ERR_NOT_FOUND);
    CHECK(strcmp(mxkt_last_error(), "fused rnn: missing lstm_r1_h2h_o_bias") == 0);
    CHECK_EQ_INT(mxkt_fused_rnn_pack_weights(&f, n, (const char *const *)names, arrs, &back),
                 MXK_OK);
    memset(got, 0, (size_t)size * sizeof *got);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(back, got, (uint64_t)size * sizeof *got), MXK_OK);
    CHECK(memcmp(got, ramp, (size_t)size * sizeof *got) == 0);
    free(got);
    free(ramp);
    mxk_ndarray_free(back);
    mxk_ndarray_list_free(n, arrs, names);
    mxk_ndarray_free(v);
}

/**
 * FusedRNNCell's parameter carries __init__ FusedRNN(None, ...): every per-gate array
 * (unpacked another way, by mxkt_fused_rnn_unpack_weights) is the global initializer's
 * fill of its unprefixed name, and the LSTM's "_f_bias" arrays hold forget_bias.
 */
static void test_fused_init(void) {
    mxkt_fused_rnn f = {"lstm", 2, 2, 1, 0.0f, NULL};
    int64_t size = 0;
    CHECK_EQ_INT(mxkt_fused_rnn_param_size(&f, 3, &size), MXK_OK);
    const char *attr = "[\"fusedrnn\", {\"init\": null, \"num_hidden\": 2, \"num_layers\": 2, "
                       "\"mode\": \"lstm\", \"bidirectional\": true, \"forget_bias\": 0.25}]";
    mxkt_initializer xavier;
    CHECK_EQ_INT(mxkt_initializer_parse("xavier", 7, &xavier), MXK_OK);
    mxk_shape vs = {.ndim = 1, .dims = {size}};
    float *vals = malloc((size_t)size * sizeof *vals);
    CHECK_EQ_INT(mxkt_initializer_fill_desc(&xavier, "lstm_parameters", attr, &vs, vals), MXK_OK);
    mxk_ndarray *v = NULL, **arrs = NULL;
    char **names = NULL;
    uint32_t n = 0;
    CHECK_EQ_INT(mxk_ndarray_create(&vs, MXK_FLOAT32, cpu, &v), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(v, vals, (uint64_t)size * sizeof *vals), MXK_OK);
    CHECK_EQ_INT(mxkt_fused_rnn_unpack_weights(&f, v, 1, &n, &names, &arrs), MXK_OK);
    CHECK_EQ_INT(n, 64);
    int f_bias = 0, weights = 0;
    for (uint32_t i = 0; i < n; i++) {
        mxk_shape s = mxk_ndarray_shape(arrs[i]);
        float got[8], want[8];
        CHECK(shape_size(&s) <= 8);
        CHECK_EQ_INT(mxk_ndarray_copy_to_host(arrs[i], got, (uint64_t)shape_size(&s) * 4), MXK_OK);
        CHECK(strncmp(names[i], "lstm_", 5) == 0);
        CHECK_EQ_INT(mxkt_initializer_fill(&xavier, names[i] + 5, &s, want), MXK_OK);
        int is_f = strstr(names[i], "_f_bias") != NULL;
        for (int64_t k = 0; k < shape_size(&s); k++)
            CHECK(got[k] == (is_f ? 0.25f : want[k]));
        f_bias += is_f;
        weights += s.ndim == 2 && want[0] != 0.0f;
    }
    CHECK_EQ_INT(f_bias, 8); /* i2h and h2h of 2 layers, 2 directions */
    CHECK_EQ_INT(weights, 32);
    mxk_ndarray_list_free(n, arrs, names);
    mxk_ndarray_free(v);
    vs.dims[0] = size + 1;
    CHECK_EQ_INT(mxkt_initializer_fill_desc(&xavier, "lstm_parameters", attr, &vs, vals),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "lstm_parameters: 241 values are not the parameters of a "
                                    "fused lstm of 2 hidden, 2 layers for any input size") == 0);
    const char *bad = "[\"fusedrnn\", {\"init\": \"xavier\", \"num_hidden\": 3}]";
    CHECK_EQ_INT(mxkt_initializer_fill_desc(&xavier, "lstm_parameters", bad, &vs, vals),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(),
                 "lstm_parameters: __init__ '[\"fusedrnn\", {\"init\": \"xavier\", "
                 "\"num_hidden\": 3}]': fusedrnn takes init null, num_hidden, num_layers, mode, "
                 "bidirectional and forget_bias") == 0);
    free(vals);
}

int main(void) {
    if (tt_init() != 0)
        return 77;
    MXK_RUN(test_lstm);
    MXK_RUN(test_gru_rnn);
    MXK_RUN(test_lstm_bias_init);
    MXK_RUN(test_errors);
    MXK_RUN(test_fused_layout);
    MXK_RUN(test_fused_init);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
