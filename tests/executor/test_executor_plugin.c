/*
 * Executor paths that cpu-blas cannot reach, with the passes-test plugin's operators
 * (trivial kernels writing zeros by the request): aux states (TestAux, which mutates
 * its state), a no_gradient operator in front of an argument (TestBlockGrad: the
 * argument's gradient is zero-filled for WRITE, left alone for ADD), and a hidden
 * output read by backward (TestDropout's mask).
 */
#include "exec_test_util.h"

#ifndef PT_PLUGIN_PATH
#error "PT_PLUGIN_PATH must name the passes-test plugin"
#endif

/** TestAux: the state is an aux state, bound and reported by name. */
static void test_aux_state(void) {
    mxk_symbol *x = et_var("x");
    mxk_symbol *t = et_op("TestAux", "ta", NULL, 1, x);
    mxk_symbol *y = et_op("_plus", "y", NULL, 2, t, x);
    char **names = NULL;
    uint32_t n = 0;
    CHECK_EQ_INT(mxk_symbol_list_names(y, MXK_SYMBOL_AUX_STATES, &n, &names), MXK_OK);
    CHECK(n == 1 && names && strcmp(names[0], "ta_state") == 0);
    mxk_string_list_free(names);
    mxk_ndarray *xa = et_full(et_shape(1, 3, 0, 0, 0), 2),
                *st = et_full(et_shape(1, 3, 0, 0, 0), 9);
    mxk_ndarray *gx = et_full(et_shape(1, 3, 0, 0, 0), 5);
    mxk_executor *ex = NULL;
    CHECK_EQ_INT(mxk_executor_bind(y, et_cpu, 1, &xa, &gx, NULL, 0, NULL, NULL, &ex),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "Length of aux_states does not match");
    CHECK_EQ_INT(mxk_executor_bind(y, et_cpu, 1, &xa, &gx, NULL, 1, &st, NULL, &ex), MXK_OK);
    if (ex != NULL) {
        CHECK(mxk_executor_aux(ex, "ta_state") != NULL);
        CHECK(mxk_executor_arg(ex, "ta_state") == NULL);
        mxk_ndarray *head = et_full(et_shape(1, 3, 0, 0, 0), 1);
        CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
        CHECK_EQ_INT(mxk_executor_backward(ex, 1, &head), MXK_OK);
        /* y = 0 + x; dy/dx = 0 (TestAux's zero backward) + 1. */
        ET_CHECK_ARRAY(mxk_executor_output(ex, 0), ((const float[]){2, 2, 2}), 3, 0);
        ET_CHECK_ARRAY(gx, ((const float[]){1, 1, 1}), 3, 0);
        ET_CHECK_ARRAY(st, ((const float[]){9, 9, 9}), 3, 0);
        /* copy_params_from reaches aux states by name. */
        mxk_ndarray *v = et_full(et_shape(1, 3, 0, 0, 0), 4);
        const char *an[] = {"ta_state"};
        CHECK_EQ_INT(mxk_executor_copy_params_from(ex, 0, NULL, NULL, 1, an, &v, 0), MXK_OK);
        ET_CHECK_ARRAY(st, ((const float[]){4, 4, 4}), 3, 0);
        mxk_ndarray_free(v);
        mxk_ndarray_free(head);
        mxk_executor_free(ex);
    }
    /* simple_bind allocates the aux state (zeros); reshape keeps it only with the shape. */
    const char *xn[] = {"x"};
    mxk_shape xs[] = {et_shape(1, 4, 0, 0, 0)};
    CHECK_EQ_INT(mxk_executor_simple_bind(y, et_cpu, 1, xn, xs, "write", 0, NULL, NULL, NULL, &ex),
                 MXK_OK);
    if (ex != NULL) {
        ET_CHECK_ARRAY(mxk_executor_aux(ex, "ta_state"), ((const float[]){0, 0, 0, 0}), 4, 0);
        mxk_executor *nx = NULL;
        mxk_shape s2[] = {et_shape(1, 2, 0, 0, 0)};
        CHECK_EQ_INT(mxk_executor_reshape(ex, 0, 0, 1, xn, s2, &nx), MXK_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(mxk_get_last_error(), "Shape of unspecifie arg: ta_state changed.");
        CHECK_EQ_INT(mxk_executor_reshape(ex, 1, 0, 1, xn, s2, &nx), MXK_OK);
        if (nx != NULL) {
            CHECK(mxk_ndarray_size(mxk_executor_aux(nx, "ta_state")) == 2);
            mxk_executor_free(nx);
        }
        mxk_executor_free(ex);
    }
    mxk_ndarray_free(xa);
    mxk_ndarray_free(st);
    mxk_ndarray_free(gx);
    et_free_syms(3, x, t, y);
}

/** A no_gradient operator: the argument's gradient is zeros (WRITE) or untouched (ADD). */
static void test_no_gradient_zero_fill(void) {
    mxk_symbol *x = et_var("x"), *w = et_var("w");
    mxk_symbol *b = et_op("TestBlockGrad", "bg", NULL, 1, x);
    mxk_symbol *y = et_op("_mul", "y", NULL, 2, b, w);
    mxk_ndarray *args[2] = {et_full(et_shape(1, 2, 0, 0, 0), 3),
                            et_full(et_shape(1, 2, 0, 0, 0), 2)};
    mxk_ndarray *head = et_full(et_shape(1, 2, 0, 0, 0), 1);
    for (int32_t req = MXK_REQ_WRITE; req <= MXK_REQ_ADD; req += 2) {
        mxk_ndarray *grads[2] = {et_full(et_shape(1, 2, 0, 0, 0), 5),
                                 et_full(et_shape(1, 2, 0, 0, 0), 5)};
        const mxk_op_req reqs[2] = {(mxk_op_req)req, MXK_REQ_WRITE};
        mxk_executor *ex = NULL;
        CHECK_EQ_INT(mxk_executor_bind(y, et_cpu, 2, args, grads, reqs, 0, NULL, NULL, &ex),
                     MXK_OK);
        if (ex != NULL) {
            for (int it = 0; it < 2; it++) {
                CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
                CHECK_EQ_INT(mxk_executor_backward(ex, 1, &head), MXK_OK);
            }
            /* TestBlockGrad's forward writes zeros: y = 0 * w; dy/dw = 0. */
            ET_CHECK_ARRAY(grads[1], ((const float[]){0, 0}), 2, 0);
            if (req == MXK_REQ_WRITE)
                ET_CHECK_ARRAY(grads[0], ((const float[]){0, 0}), 2, 0);
            else
                ET_CHECK_ARRAY(grads[0], ((const float[]){5, 5}), 2, 0);
            mxk_executor_free(ex);
        }
        mxk_ndarray_free(grads[0]);
        mxk_ndarray_free(grads[1]);
    }
    mxk_ndarray_free(args[0]);
    mxk_ndarray_free(args[1]);
    mxk_ndarray_free(head);
    et_free_syms(4, x, w, b, y);
}

/** TestDropout: a hidden output (the mask) kept for backward; the monitor reports it. */
static int g_reports;

static void count_cb(const char *name, mxk_ndarray *arr, void *user) {
    if (strcmp(name, "d_mask") == 0)
        (*(int *)user)++;
    g_reports++;
    mxk_ndarray_free(arr);
}

static void test_hidden_output(void) {
    mxk_symbol *x = et_var("x");
    mxk_symbol *d = et_op("TestDropout", "d", NULL, 1, x);
    mxk_symbol *y = et_op("Activation", "y", "act_type=tanh", 1, d);
    CHECK_EQ_INT(mxk_symbol_num_outputs(d), 1);
    const char *xn[] = {"x"};
    mxk_shape xs[] = {et_shape(2, 2, 3, 0, 0)};
    mxk_executor *ex = NULL;
    CHECK_EQ_INT(mxk_executor_simple_bind(y, et_cpu, 1, xn, xs, "write", 0, NULL, NULL, NULL, &ex),
                 MXK_OK);
    if (ex != NULL) {
        int masks = 0;
        g_reports = 0;
        mxk_executor_set_monitor(ex, count_cb, &masks, 0);
        mxk_ndarray *head = et_full(et_shape(2, 2, 3, 0, 0), 1);
        mxk_ndarray_fill(mxk_executor_grad(ex, "x"), 8);
        CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
        CHECK_EQ_INT(masks, 1); /* the hidden output is reported too */
        CHECK_EQ_INT(mxk_executor_backward(ex, 1, &head), MXK_OK);
        const float zeros[6] = {0};
        ET_CHECK_ARRAY(mxk_executor_grad(ex, "x"), zeros, 6, 0);
        ET_CHECK_ARRAY(mxk_executor_output(ex, 0), zeros, 6, 0);
        CHECK_EQ_INT(g_reports, 3 + 2);
        mxk_ndarray_free(head);
        mxk_executor_free(ex);
    }
    et_free_syms(3, x, d, y);
}

int main(void) {
    if (et_init() != 0)
        return 1;
    if (mxk_load_plugin(PT_PLUGIN_PATH, NULL) != MXK_OK) {
        fprintf(stderr, "load %s: %s\n", PT_PLUGIN_PATH, mxk_get_last_error());
        return 1;
    }
    MXK_RUN(test_aux_state);
    MXK_RUN(test_no_gradient_zero_fill);
    MXK_RUN(test_hidden_output);
    int rc = MXK_TEST_EXIT();
    mxk_shutdown();
    return rc;
}
