/*
 * One training step of a small LSTM built two ways gives the same output and
 * gradients on onednn and on cpu-blas (ctest onednn.rnn_train):
 *   - unrolled: FusedRNNCell.unfuse's stack of LSTMCells (train/include/mxk_rnn.h)
 *     unrolled over T steps (TNC, merged), zero begin states;
 *   - fused: the RNN operator (mode lstm) with the same weights packed into its
 *     flat vector (mxkt_fused_rnn_pack_weights), zero state arguments.
 * Both run forward (training) and backward with one random head gradient, with
 * the preference "cpu-blas" and "onednn,cpu-blas" (the fused node checked to run
 * on onednn). The reference is the unrolled graph on cpu-blas; the others'
 * output, data gradient and weight gradients (the unrolled ones packed by
 * mxkt_fused_rnn_pack_weights) agree within 1e-4 + 1e-3 |reference|.
 * Configuration: 2 layers, H 5, T 4, N 3, C 6. Usage: test_dn_rnn_train CONFDIR.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_rnn.h"
#include "onednn_test.h"

enum { T = 4, N = 3, C = 6, H = 5, L = 2, MAXP = 1024 };

/** The results of one run: output (T, N, H), data gradient (T, N, C), packed weight gradient. */
typedef struct step_result {
    float y[T * N * H], dx[T * N * C], dw[MAXP];
    int64_t np;
} step_result;

static const mxkt_fused_rnn fused = {"lstm", H, L, 0, 0.0f, NULL};

/** Values in [-1, 1) from a seeded sequence. */
static void fill(float *v, size_t n, uint32_t seed) {
    for (size_t i = 0; i < n; i++)
        v[i] = (float)((int)((i * 37 + seed * 11) % 101) - 50) / 50.0f;
}

/** The unrolled LSTM stack's output symbol (the caller frees it). */
static mxk_symbol *unrolled_symbol(void) {
    mxkt_rnn_cell *cell = NULL;
    mxkt_rnn_unrolled u = {0};
    mxk_symbol *out = NULL;
    CHECK_EQ_INT(mxkt_fused_rnn_unfuse(&fused, &cell), MXK_OK);
    CHECK_EQ_INT(mxkt_rnn_cell_unroll(cell, T, NULL, NULL, "TNC", MXKT_RNN_MERGE_TRUE, &u), MXK_OK);
    if (u.num_outputs == 1)
        CHECK_EQ_INT(mxk_symbol_copy(u.outputs[0], &out), MXK_OK);
    mxkt_rnn_unrolled_free(&u);
    mxkt_rnn_cell_free(cell);
    return out;
}

/** The fused RNN node "rnn" (arguments rnn_data, rnn_parameters, rnn_state, rnn_state_cell). */
static mxk_symbol *fused_symbol(void) {
    const char *keys[] = {"mode", "state_size", "num_layers"}, *vals[] = {"lstm", "5", "2"};
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxk_symbol_create("RNN", "rnn", 3, keys, vals, 0, NULL, NULL, &s), MXK_OK);
    return s;
}

/** Sets every argument of ex but the data to values from `seed` (states: zeros). */
static void set_weights(mxk_executor *ex, uint32_t n, char **names, const char *data) {
    static float v[MAXP];
    for (uint32_t i = 0; i < n; i++) {
        if (strcmp(names[i], data) == 0)
            continue;
        mxk_ndarray *a = mxk_executor_arg(ex, names[i]);
        uint64_t size = mxk_ndarray_size(a);
        CHECK(size <= MAXP);
        if (strstr(names[i], "state") != NULL)
            memset(v, 0, sizeof v);
        else
            fill(v, size, i + 1);
        CHECK_EQ_INT(mxk_ndarray_copy_from_host(a, v, size * sizeof(float)), MXK_OK);
    }
}

/** Packs the unrolled arrays (arguments or, with grads, their gradients) into a flat vector. */
static void pack(mxk_executor *ex, uint32_t n, char **names, int grads, float *out, int64_t *np) {
    mxk_ndarray *arrays[32], *flat = NULL;
    CHECK(n <= 32);
    for (uint32_t i = 0; i < n && i < 32; i++)
        arrays[i] = grads ? mxk_executor_grad(ex, names[i]) : mxk_executor_arg(ex, names[i]);
    CHECK_EQ_INT(mxkt_fused_rnn_pack_weights(&fused, n, (const char *const *)names, arrays, &flat),
                 MXK_OK);
    if (flat == NULL)
        return;
    *np = (int64_t)mxk_ndarray_size(flat);
    CHECK(*np <= MAXP);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(flat, out, (size_t)*np * sizeof(float)), MXK_OK);
    mxk_ndarray_free(flat);
}

/**
 * Binds `sym` (data argument `data`) under preference `prefer`, runs forward and
 * backward with the head gradient of `seed`, and fills r. The unrolled graph's
 * weights come from set_weights and are packed into `w` (unrolled) or read from
 * `w` (fused: its parameters).
 */
static void run_step(mxk_symbol *sym, const char *data, const char *prefer, int is_fused, float *w,
                     step_result *r) {
    static float x[T * N * C], dy[T * N * H];
    uint32_t n = 0;
    char **names = NULL;
    mxk_executor *ex = NULL;
    mxk_shape ds = {.ndim = 3, .dims = {T, N, C}};
    CHECK_EQ_INT(mxk_set_backend_preference(prefer), MXK_OK);
    CHECK_EQ_INT(mxk_symbol_list_names(sym, MXK_SYMBOL_ARGUMENTS, &n, &names), MXK_OK);
    CHECK_EQ_INT(
        mxk_executor_simple_bind(sym, cpu, 1, &data, &ds, "write", 0, NULL, NULL, NULL, &ex),
        MXK_OK);
    if (ex == NULL)
        return;
    fill(x, T * N * C, 100);
    fill(dy, T * N * H, 200);
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(mxk_executor_arg(ex, data), x, sizeof x), MXK_OK);
    set_weights(ex, n, names, data);
    if (is_fused) {
        const char *backend = NULL;
        CHECK_EQ_INT(mxk_executor_node_backend(ex, "rnn", &backend), MXK_OK);
        CHECK(backend != NULL &&
              strcmp(backend, strstr(prefer, "onednn") ? "onednn" : "cpu-blas") == 0);
        CHECK_EQ_INT(mxk_ndarray_copy_from_host(mxk_executor_arg(ex, "rnn_parameters"), w,
                                                (size_t)r->np * sizeof(float)),
                     MXK_OK);
    } else {
        pack(ex, n, names, 0, w, &r->np);
    }
    mxk_shape ys = {.ndim = 3, .dims = {T, N, H}};
    mxk_ndarray *head = array(&ys, dy, T * N * H);
    CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
    CHECK_EQ_INT(mxk_executor_backward(ex, 1, &head), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(mxk_executor_output(ex, 0), r->y, sizeof r->y), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(mxk_executor_grad(ex, data), r->dx, sizeof r->dx),
                 MXK_OK);
    if (is_fused)
        CHECK_EQ_INT(mxk_ndarray_copy_to_host(mxk_executor_grad(ex, "rnn_parameters"), r->dw,
                                              (size_t)r->np * sizeof(float)),
                     MXK_OK);
    else
        pack(ex, n, names, 1, r->dw, &r->np);
    mxk_ndarray_free(head);
    mxk_executor_free(ex);
    mxk_string_list_free(names);
}

/** Largest |a - b| beyond 1e-3 |b| over n values. */
static double excess(const float *a, const float *b, size_t n) {
    double worst = 0.0;
    for (size_t i = 0; i < n; i++)
        worst = fmax(worst, fabs((double)a[i] - b[i]) - 1e-3 * fabs((double)b[i]));
    return worst;
}

/** Compares r with the reference. */
static void check_same(const step_result *r, const step_result *ref, const char *what) {
    double e[3] = {excess(r->y, ref->y, T * N * H), excess(r->dx, ref->dx, T * N * C),
                   excess(r->dw, ref->dw, (size_t)ref->np)};
    CHECK_EQ_INT((int)r->np, (int)ref->np);
    for (int i = 0; i < 3; i++) {
        if (e[i] > 1e-4)
            printf("%s: %s differs from the unrolled graph on cpu-blas by %g\n", what,
                   i == 0   ? "output"
                   : i == 1 ? "data gradient"
                            : "weight gradient",
                   e[i]);
        CHECK(e[i] <= 1e-4);
    }
}

/** The four runs of the file comment. */
static void test_unrolled_and_fused(void) {
    static float w[MAXP];
    static step_result ref, r;
    mxk_symbol *unrolled = unrolled_symbol(), *fsym = fused_symbol();
    if (unrolled == NULL || fsym == NULL)
        return;
    run_step(unrolled, "data", "cpu-blas", 0, w, &ref);
    CHECK(ref.np > 0);
    run_step(unrolled, "data", "onednn,cpu-blas", 0, w, &r);
    check_same(&r, &ref, "unrolled on onednn");
    r.np = ref.np;
    run_step(fsym, "rnn_data", "cpu-blas", 1, w, &r);
    check_same(&r, &ref, "fused on cpu-blas");
    r.np = ref.np;
    run_step(fsym, "rnn_data", "onednn,cpu-blas", 1, w, &r);
    check_same(&r, &ref, "fused on onednn");
    mxk_symbol_free(unrolled);
    mxk_symbol_free(fsym);
}

int main(int argc, char **argv) {
    int rc = onednn_test_init(argc, argv);
    if (rc != 0)
        return rc;
    MXK_RUN(test_unrolled_and_fused);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
