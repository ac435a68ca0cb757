/*
 * The executor's per-node profiler and backend query (mxk.h
 * mxk_executor_set_profiling / _get_profile / _node_backend) on a small MLP bound
 * with cpu-blas (and whatever else the build tree's config dir loads):
 * counts equal the iterations run, times are positive, entries follow the graph's
 * order and backends, profiling off gives no entries and counts nothing, and a
 * node's backend follows the preference after mxk_executor_reresolve.
 */
#include "exec_test_util.h"

/** Iterations of the timed loops. */
#define ITERS 5

/** data -> fc1 (FullyConnected 4) -> relu1 (Activation) -> softmax (SoftmaxOutput). */
static mxk_symbol *mlp(void) {
    mxk_symbol *x = et_var("data");
    mxk_symbol *fc = et_op("FullyConnected", "fc1", "num_hidden=4", 1, x);
    mxk_symbol *act = et_op("Activation", "relu1", "act_type=relu", 1, fc);
    mxk_symbol *out = et_op("SoftmaxOutput", "softmax", NULL, 1, act);
    et_free_syms(3, x, fc, act);
    return out;
}

/**
 * Binds the MLP for a (3, 5) batch with gradient request `req` (simple_bind) and
 * runs body(ex); frees everything afterwards.
 */
static void with_mlp(const char *req, void (*body)(mxk_executor *ex)) {
    mxk_symbol *sym = mlp();
    const char *names[] = {"data"};
    mxk_shape shapes[] = {et_shape(2, 3, 5, 0, 0)};
    mxk_executor *ex = NULL;
    CHECK_EQ_INT(
        mxk_executor_simple_bind(sym, et_cpu, 1, names, shapes, req, 0, NULL, NULL, NULL, &ex),
        MXK_OK);
    if (ex != NULL)
        body(ex);
    mxk_executor_free(ex);
    mxk_symbol_free(sym);
}

/** Runs `n` iterations: forward (training when `train`), and backward when `train`. */
static void iterate(mxk_executor *ex, int n, int train) {
    for (int i = 0; i < n; i++) {
        CHECK_EQ_INT(mxk_executor_forward(ex, train), MXK_OK);
        if (train)
            CHECK_EQ_INT(mxk_executor_backward(ex, 0, NULL), MXK_OK);
    }
    CHECK_EQ_INT(mxk_wait_all(), MXK_OK);
}

/** Off by default: no entries, and bad arguments are refused with their messages. */
static void off_by_default(mxk_executor *ex) {
    iterate(ex, 2, 1);
    uint32_t num = 7;
    mxk_executor_node_profile dummy, *p = &dummy;
    CHECK_EQ_INT(mxk_executor_get_profile(ex, &num, &p), MXK_OK);
    CHECK(num == 0 && p == NULL);
    CHECK_EQ_INT(mxk_executor_get_profile(ex, NULL, &p), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "mxk_executor_get_profile: executor, num or nodes is NULL");
    CHECK_EQ_INT(mxk_executor_set_profiling(NULL, 1), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "mxk_executor_set_profiling: executor is NULL");
}

/** off_by_default on the MLP bound with gradients. */
static void test_off_by_default(void) {
    with_mlp("write", off_by_default);
}

/**
 * Training iterations count one forward and one backward run per node and
 * iteration; inference forwards add forward runs only; entries are in the
 * graph's order with their operator and the backend node_backend reports.
 */
static void counts(mxk_executor *ex) {
    iterate(ex, 1, 1); /* before profiling: not counted */
    CHECK_EQ_INT(mxk_executor_set_profiling(ex, 1), MXK_OK);
    iterate(ex, ITERS, 1);
    iterate(ex, 3, 0);
    uint32_t num = 0;
    mxk_executor_node_profile *p = NULL;
    CHECK_EQ_INT(mxk_executor_get_profile(ex, &num, &p), MXK_OK);
    static const char *const names[3] = {"fc1", "relu1", "softmax"};
    static const char *const ops[3] = {"FullyConnected", "Activation", "SoftmaxOutput"};
    CHECK_EQ_INT(num, 3);
    for (uint32_t i = 0; p != NULL && i < num && i < 3; i++) {
        CHECK(strcmp(p[i].name, names[i]) == 0);
        CHECK(strcmp(p[i].op, ops[i]) == 0);
        const char *backend = NULL;
        CHECK_EQ_INT(mxk_executor_node_backend(ex, names[i], &backend), MXK_OK);
        CHECK(backend != NULL && strcmp(p[i].backend, backend) == 0);
        CHECK_EQ_INT((int)p[i].fwd_runs, ITERS + 3);
        CHECK_EQ_INT((int)p[i].bwd_runs, ITERS);
        CHECK(p[i].fwd_ns > 0 && p[i].bwd_ns > 0);
    }
    free(p);

    /* Off: no entries, nothing counted; on again starts from zero. */
    CHECK_EQ_INT(mxk_executor_set_profiling(ex, 0), MXK_OK);
    iterate(ex, 2, 1);
    CHECK_EQ_INT(mxk_executor_get_profile(ex, &num, &p), MXK_OK);
    CHECK(num == 0 && p == NULL);
    CHECK_EQ_INT(mxk_executor_set_profiling(ex, 1), MXK_OK);
    CHECK_EQ_INT(mxk_executor_get_profile(ex, &num, &p), MXK_OK);
    CHECK_EQ_INT(num, 3);
    for (uint32_t i = 0; p != NULL && i < num; i++)
        CHECK(p[i].fwd_runs == 0 && p[i].fwd_ns == 0 && p[i].bwd_runs == 0 && p[i].bwd_ns == 0);
    free(p);
}

/** counts on the MLP bound with gradients. */
static void test_counts(void) {
    with_mlp("write", counts);
}

/** Without gradients there are no backward steps: backward counts stay zero. */
static void inference_only(mxk_executor *ex) {
    CHECK_EQ_INT(mxk_executor_set_profiling(ex, 1), MXK_OK);
    iterate(ex, ITERS, 0);
    uint32_t num = 0;
    mxk_executor_node_profile *p = NULL;
    CHECK_EQ_INT(mxk_executor_get_profile(ex, &num, &p), MXK_OK);
    CHECK_EQ_INT(num, 3);
    for (uint32_t i = 0; p != NULL && i < num; i++) {
        CHECK_EQ_INT((int)p[i].fwd_runs, ITERS);
        CHECK(p[i].fwd_ns > 0);
        CHECK(p[i].bwd_runs == 0 && p[i].bwd_ns == 0);
    }
    free(p);
}

/** inference_only on the MLP bound without gradients. */
static void test_inference_only(void) {
    with_mlp("null", inference_only);
}

/**
 * node_backend: errors with their messages; after a preference change and
 * reresolve every node runs the backend mxk_resolve_backend names for its operator,
 * or cpu-blas where that backend's kernel declines the node; back to "cpu-blas"
 * every node runs cpu-blas.
 */
static void node_backend(mxk_executor *ex) {
    const char *backend = NULL;
    CHECK_EQ_INT(mxk_executor_node_backend(ex, "data", &backend), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "executor: no operator node named 'data'");
    CHECK_EQ_INT(mxk_executor_node_backend(ex, NULL, &backend), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "mxk_executor_node_backend: executor, node or backend is NULL");
    CHECK_EQ_INT(mxk_executor_node_backend(ex, "fc1", &backend), MXK_OK);
    CHECK(backend != NULL && strcmp(backend, "cpu-blas") == 0);

    static const char *const prefs[2] = {"onednn,cpu-blas", "cpu-blas"};
    static const char *const names[3] = {"fc1", "relu1", "softmax"};
    static const char *const ops[3] = {"FullyConnected", "Activation", "SoftmaxOutput"};
    for (int k = 0; k < 2; k++) {
        CHECK_EQ_INT(mxk_set_backend_preference(prefs[k]), MXK_OK);
        CHECK_EQ_INT(mxk_executor_reresolve(ex), MXK_OK);
        for (int i = 0; i < 3; i++) {
            const char *want = NULL;
            CHECK_EQ_INT(mxk_resolve_backend(ops[i], MXK_DEV_CPU, &want), MXK_OK);
            CHECK_EQ_INT(mxk_executor_node_backend(ex, names[i], &backend), MXK_OK);
            /* A kernel that declines the node's configuration leaves it to cpu-blas. */
            CHECK(want != NULL && backend != NULL &&
                  (strcmp(want, backend) == 0 || strcmp(backend, "cpu-blas") == 0));
            if (k == 1)
                CHECK(backend != NULL && strcmp(backend, "cpu-blas") == 0);
        }
        iterate(ex, 1, 1);
    }
    CHECK_EQ_INT(mxk_set_backend_preference(NULL), MXK_OK);
}

/** node_backend on the MLP bound with gradients. */
static void test_node_backend(void) {
    with_mlp("write", node_backend);
}

int main(void) {
    if (et_init() != 0)
        return 1;
    MXK_RUN(test_off_by_default);
    MXK_RUN(test_counts);
    MXK_RUN(test_inference_only);
    MXK_RUN(test_node_backend);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
