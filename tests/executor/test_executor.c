/*
 * The executor with cpu-blas: four small graphs worked out by hand (T1-T4), grad_req add/null,
 * arrays by name, copy_params_from, the monitor callback, debug_str, bound outputs against
 * imperative results, bind and simple_bind errors, reresolve, and no allocation per
 * forward/backward once warm.
 */
#include "engine.h"
#include "exec_test_util.h"

/** T1's symbol: c = _mul_scalar(a, scalar=2) + b, named as executor.py's docstring. */
static mxk_symbol *t1_symbol(void) {
    mxk_symbol *a = et_var("a"), *b = et_var("b");
    mxk_symbol *m = et_op("_mul_scalar", "_mulscalar0", "scalar=2", 1, a);
    mxk_symbol *c = et_op("_plus", "_plus0", NULL, 2, m, b);
    et_free_syms(3, a, b, m);
    return c;
}

/** Binds `sym` to n arguments on the CPU without aux states; checks MXK_OK (else prints why). */
static mxk_executor *bind_checked(const mxk_symbol *sym, uint32_t n, mxk_ndarray *const *args,
                                  mxk_ndarray *const *grads, const mxk_op_req *reqs) {
    mxk_executor *ex = NULL;
    mxk_status st = mxk_executor_bind(sym, et_cpu, n, args, grads, reqs, 0, NULL, NULL, &ex);
    CHECK_EQ_INT(st, MXK_OK);
    if (st != MXK_OK)
        fprintf(stderr, "bind: %s\n", mxk_get_last_error());
    return ex;
}

/** T1 bound: its symbol, arguments a and b, gradient arrays (NULL: none) and executor. */
typedef struct t1_bound {
    mxk_symbol *c;
    mxk_ndarray *args[2], *grads[2];
    mxk_executor *ex;
} t1_bound;

/** Frees what t1_setup made (a test sets what it freed itself to NULL). */
static void t1_free(t1_bound *t) {
    mxk_executor_free(t->ex);
    for (int i = 0; i < 2; i++) {
        mxk_ndarray_free(t->args[i]);
        mxk_ndarray_free(t->grads[i]);
    }
    mxk_symbol_free(t->c);
}

/**
 * Binds T1 with a=[1,2], b=[2,3]; with `grad_fill`, gradient arrays filled with its two
 * values and requests `reqs` (NULL: write). Returns 0, with everything freed, when the
 * bind fails.
 */
static int t1_setup(t1_bound *t, const float *grad_fill, const mxk_op_req *reqs) {
    const float av[] = {1, 2}, bv[] = {2, 3};
    memset(t, 0, sizeof *t);
    t->c = t1_symbol();
    t->args[0] = et_array(et_shape(1, 2, 0, 0, 0), av);
    t->args[1] = et_array(et_shape(1, 2, 0, 0, 0), bv);
    if (grad_fill != NULL)
        for (int i = 0; i < 2; i++)
            t->grads[i] = et_full(et_shape(1, 2, 0, 0, 0), grad_fill[i]);
    t->ex = bind_checked(t->c, 2, t->args, grad_fill != NULL ? t->grads : NULL, reqs);
    if (t->ex == NULL)
        t1_free(t);
    return t->ex != NULL;
}

/** Zero-filled gradients for t1_setup. */
static const float t1_zero_grads[2] = {0, 0};

/** T1: out [4,7]; with head gradient = out: grad_a [8,14], grad_b [4,7]. */
static void test_t1_two_a_plus_b(void) {
    t1_bound t;
    if (!t1_setup(&t, t1_zero_grads, NULL))
        return;
    mxk_executor *ex = t.ex;
    CHECK_EQ_INT(mxk_executor_num_outputs(ex), 1);
    CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
    mxk_ndarray *out = mxk_executor_output(ex, 0);
    const float o[] = {4, 7}, ga[] = {8, 14}, gb[] = {4, 7};
    ET_CHECK_ARRAY(out, o, 2, 1e-6);
    CHECK_EQ_INT(mxk_executor_backward(ex, 1, &out), MXK_OK);
    ET_CHECK_ARRAY(t.grads[0], ga, 2, 1e-6);
    ET_CHECK_ARRAY(t.grads[1], gb, 2, 1e-6);
    /* Arrays by name share the bound memory. */
    ET_CHECK_ARRAY(mxk_executor_grad(ex, "a"), ga, 2, 1e-6);
    ET_CHECK_ARRAY(mxk_executor_arg(ex, "b"), ((const float[]){2, 3}), 2, 1e-6);
    CHECK(mxk_executor_output_by_name(ex, "_plus0_output") == out);
    CHECK(mxk_executor_arg(ex, "c") == NULL && mxk_executor_aux(ex, "a") == NULL);
    /* A second iteration gives the same numbers (WRITE overwrites). */
    CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
    CHECK_EQ_INT(mxk_executor_backward(ex, 1, &out), MXK_OK);
    ET_CHECK_ARRAY(t.grads[0], ga, 2, 1e-6);
    t1_free(&t);
}

/** T2: backward without head gradients for a non-loss output fails with MXNet's message. */
static void test_t2_head_gradient_required(void) {
    t1_bound t;
    if (!t1_setup(&t, t1_zero_grads, NULL))
        return;
    mxk_executor *ex = t.ex;
    CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
    CHECK_EQ_INT(mxk_executor_backward(ex, 0, NULL), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxk_get_last_error(),
                 "Because the last operator is not Loss function, head_gradient is required when "
                 "calling backward. If you are attempting to minimize the output as an "
                 "objective, please modify your network and pass it through the make_loss "
                 "symbol.") == 0);
    mxk_ndarray *none = NULL;
    CHECK_EQ_INT(mxk_executor_backward(ex, 1, &none), MXK_ERR_INVALID_ARGUMENT);
    /* A head gradient of the wrong shape. */
    mxk_ndarray *bad = et_full(et_shape(1, 3, 0, 0, 0), 1);
    CHECK_EQ_INT(mxk_executor_backward(ex, 1, &bad), MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxk_get_last_error(), "head gradient 0");
    mxk_ndarray_free(bad);
    t1_free(&t);
}

/** No gradient requested: backward does nothing, even without head gradients. */
static void test_backward_without_gradients_is_a_no_op(void) {
    t1_bound t;
    if (!t1_setup(&t, NULL, NULL))
        return;
    mxk_executor *ex = t.ex;
    CHECK_EQ_INT(mxk_executor_forward(ex, 0), MXK_OK);
    CHECK_EQ_INT(mxk_executor_backward(ex, 0, NULL), MXK_OK);
    CHECK(mxk_executor_grad(ex, "a") == NULL);
    ET_CHECK_ARRAY(mxk_executor_output(ex, 0), ((const float[]){4, 7}), 2, 1e-6);
    t1_free(&t);
}

/** grad_req add accumulates over two backward calls; null leaves the gradient untouched. */
static void test_grad_req_add_and_null(void) {
    const float fill[2] = {0, 7};
    const mxk_op_req reqs[2] = {MXK_REQ_ADD, MXK_REQ_NULL};
    t1_bound t;
    if (!t1_setup(&t, fill, reqs))
        return;
    mxk_executor *ex = t.ex;
    mxk_ndarray *head = et_full(et_shape(1, 2, 0, 0, 0), 1);
    for (int it = 0; it < 2; it++) {
        CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
        CHECK_EQ_INT(mxk_executor_backward(ex, 1, &head), MXK_OK);
    }
    ET_CHECK_ARRAY(t.grads[0], ((const float[]){4, 4}), 2, 1e-6); /* 2 * 1, twice */
    ET_CHECK_ARRAY(t.grads[1], ((const float[]){7, 7}), 2, 1e-6); /* null: untouched */
    mxk_ndarray_free(head);
    t1_free(&t);
}

/** The FC(6) -> relu -> SoftmaxOutput symbol of T3 (fc, relu, softmax). */
static mxk_symbol *t3_symbol(void) {
    mxk_symbol *data = et_var("data");
    mxk_symbol *fc = et_op("FullyConnected", "fc", "num_hidden=6", 1, data);
    mxk_symbol *act = et_op("Activation", "relu", "act_type=relu", 1, fc);
    mxk_symbol *sm = et_op("SoftmaxOutput", "softmax", NULL, 1, act);
    et_free_syms(3, data, fc, act);
    return sm;
}

/** T3: python/mxnet/executor.py's numbers for outputs and weight and bias gradients. */
static void test_t3_fc_relu_softmax(void) {
    mxk_symbol *sm = t3_symbol();
    const float bias[] = {1, 4, 4, 4, 5, 6}, label[] = {1};
    mxk_ndarray *args[4] = {
        et_full(et_shape(2, 1, 4, 0, 0), 1), et_full(et_shape(2, 6, 4, 0, 0), 1),
        et_array(et_shape(1, 6, 0, 0, 0), bias), et_array(et_shape(1, 1, 0, 0, 0), label)};
    mxk_ndarray *gw = et_full(et_shape(2, 6, 4, 0, 0), 0),
                *gb = et_full(et_shape(1, 6, 0, 0, 0), 0);
    mxk_ndarray *grads[4] = {NULL, gw, gb, NULL};
    mxk_executor *ex = bind_checked(sm, 4, args, grads, NULL);
    if (ex == NULL)
        return;
    CHECK(mxk_executor_grad(ex, "data") == NULL && mxk_executor_grad(ex, "softmax_label") == NULL);
    CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
    const float p[] = {0.00378404f, 0.07600445f, 0.07600445f, 0.07600445f, 0.20660152f, 0.5616011f};
    ET_CHECK_ARRAY(mxk_executor_output(ex, 0), p, 6, 1e-5);
    CHECK_EQ_INT(mxk_executor_backward(ex, 0, NULL), MXK_OK); /* a loss: no head gradient */
    float w[24], d[6];
    for (int r = 0; r < 6; r++) {
        d[r] = p[r] - (r == 1 ? 1.0f : 0.0f);
        for (int k = 0; k < 4; k++)
            w[r * 4 + k] = d[r];
    }
    ET_CHECK_ARRAY(gw, w, 24, 1e-5);
    ET_CHECK_ARRAY(gb, d, 6, 1e-5);
    mxk_executor_free(ex);
    for (int i = 0; i < 4; i++)
        mxk_ndarray_free(args[i]);
    mxk_ndarray_free(gw);
    mxk_ndarray_free(gb);
    mxk_symbol_free(sm);
}

/** One gradient entry named twice by one backward step: d(a*a)/da = 2a. */
static void test_same_input_twice(void) {
    mxk_symbol *a = et_var("a");
    mxk_symbol *sq = et_op("_mul", "sq", NULL, 2, a, a);
    const float av[] = {1, -2, 3};
    mxk_ndarray *arg = et_array(et_shape(1, 3, 0, 0, 0), av);
    mxk_ndarray *g = et_full(et_shape(1, 3, 0, 0, 0), 5);
    mxk_ndarray *head = et_full(et_shape(1, 3, 0, 0, 0), 1);
    const mxk_op_req reqs[] = {MXK_REQ_WRITE, MXK_REQ_ADD};
    for (int k = 0; k < 2; k++) {
        mxk_op_req req = reqs[k];
        mxk_executor *ex = bind_checked(sq, 1, &arg, &g, &req);
        if (ex == NULL)
            break;
        CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
        CHECK_EQ_INT(mxk_executor_backward(ex, 1, &head), MXK_OK);
        ET_CHECK_ARRAY(mxk_executor_output(ex, 0), ((const float[]){1, 4, 9}), 3, 1e-6);
        if (req == MXK_REQ_WRITE)
            ET_CHECK_ARRAY(g, ((const float[]){2, -4, 6}), 3, 1e-6);
        else
            ET_CHECK_ARRAY(g, ((const float[]){4, -8, 12}), 3, 1e-6);
        mxk_executor_free(ex);
    }
    mxk_ndarray_free(arg);
    mxk_ndarray_free(g);
    mxk_ndarray_free(head);
    et_free_syms(2, a, sq);
}

/** Bind errors: argument counts, NULL arrays, bad requests, inconsistent shapes. */
static void test_bind_errors(void) {
    mxk_symbol *c = t1_symbol();
    mxk_ndarray *a = et_full(et_shape(1, 2, 0, 0, 0), 1), *b3 = et_full(et_shape(1, 3, 0, 0, 0), 1);
    mxk_ndarray *one[1] = {a}, *two[2] = {a, b3}, *withnull[2] = {a, NULL};
    mxk_executor *ex = (mxk_executor *)a;
    CHECK_EQ_INT(mxk_executor_bind(c, et_cpu, 1, one, NULL, NULL, 0, NULL, NULL, &ex),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(ex == NULL);
    CHECK_CONTAINS(mxk_get_last_error(), "Length of args does not match the number of arguments");
    CHECK_EQ_INT(mxk_executor_bind(c, et_cpu, 2, withnull, NULL, NULL, 0, NULL, NULL, &ex),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "Only accept list of NDArrays");
    CHECK_EQ_INT(mxk_executor_bind(c, et_cpu, 2, two, NULL, NULL, 1, one, NULL, &ex),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "Length of aux_states does not match");
    CHECK_EQ_INT(mxk_executor_bind(c, et_cpu, 2, two, NULL, NULL, 0, NULL, NULL, &ex),
                 MXK_ERR_SHAPE);
    mxk_ndarray *ok2[2] = {a, a}, *g2[2] = {a, a};
    const mxk_op_req bad[2] = {MXK_REQ_INPLACE, MXK_REQ_WRITE};
    CHECK_EQ_INT(mxk_executor_bind(c, et_cpu, 2, ok2, g2, bad, 0, NULL, NULL, &ex),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "grad_req must be in {'null': 0, 'write': 1, 'add': 3}");
    mxk_ndarray_free(a);
    mxk_ndarray_free(b3);
    mxk_symbol_free(c);
}

/** simple_bind: zero-filled arrays, requests per argument, and its errors. */
static void test_simple_bind(void) {
    mxk_symbol *sm = t3_symbol();
    const char *names[] = {"data"};
    mxk_shape shapes[] = {et_shape(2, 3, 4, 0, 0)};
    const char *rn[] = {"data", "softmax_label"}, *rv[] = {"null", "null"};
    mxk_executor *ex = NULL;
    CHECK_EQ_INT(
        mxk_executor_simple_bind(sm, et_cpu, 1, names, shapes, "write", 2, rn, rv, NULL, &ex),
        MXK_OK);
    if (ex != NULL) {
        mxk_ndarray *w = mxk_executor_arg(ex, "fc_weight");
        CHECK(w != NULL && mxk_ndarray_shape(w).dims[0] == 6 && mxk_ndarray_shape(w).dims[1] == 4);
        float z[24];
        et_host(mxk_executor_grad(ex, "fc_weight"), z);
        for (int i = 0; i < 24; i++)
            CHECK(z[i] == 0);
        et_host(w, z);
        for (int i = 0; i < 24; i++)
            CHECK(z[i] == 0);
        CHECK(mxk_executor_grad(ex, "data") == NULL);
        CHECK(mxk_executor_grad(ex, "softmax_label") == NULL);
        CHECK(mxk_executor_arg(ex, "softmax_label") != NULL);
        CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
        CHECK_EQ_INT(mxk_executor_backward(ex, 0, NULL), MXK_OK);
        CHECK_EQ_INT(mxk_wait_all(), MXK_OK);
        mxk_executor_free(ex);
    }
    CHECK_EQ_INT(
        mxk_executor_simple_bind(sm, et_cpu, 0, NULL, NULL, "write", 0, NULL, NULL, NULL, &ex),
        MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "InferShape pass cannot decide shapes for the following arguments (-1 means "
                   "unknown dimensions). Please consider providing them as inputs:\ndata: ()");
    const char *dup[] = {"data", "data"};
    mxk_shape two[] = {shapes[0], shapes[0]};
    CHECK_EQ_INT(
        mxk_executor_simple_bind(sm, et_cpu, 2, dup, two, "write", 0, NULL, NULL, NULL, &ex),
        MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "Duplicate shapes are provided for argument data in simple_bind");
    CHECK_EQ_INT(
        mxk_executor_simple_bind(sm, et_cpu, 1, names, shapes, "inplace", 0, NULL, NULL, NULL, &ex),
        MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "grad_req=inplace is not a valid input in simple_bind; only 'null', 'write', "
                   "and 'add' are supported");
    mxk_symbol_free(sm);
}

/** copy_params_from: copies known names, rejects unknown ones with MXNet's messages. */
static void test_copy_params_from(void) {
    t1_bound t;
    if (!t1_setup(&t, NULL, NULL))
        return;
    mxk_executor *ex = t.ex;
    mxk_ndarray *v = et_full(et_shape(1, 2, 0, 0, 0), 9);
    const char *bad[] = {"a", "zzz"};
    mxk_ndarray *vals[] = {v, v};
    CHECK_EQ_INT(mxk_executor_copy_params_from(ex, 2, bad, vals, 0, NULL, NULL, 0),
                 MXK_ERR_NOT_FOUND);
    CHECK(strcmp(mxk_get_last_error(), "Find name \"zzz\" that is not in the arguments") == 0);
    ET_CHECK_ARRAY(t.args[0], ((const float[]){1, 2}), 2, 0); /* unchanged on error */
    CHECK_EQ_INT(mxk_executor_copy_params_from(ex, 0, NULL, NULL, 1, bad + 1, vals, 0),
                 MXK_ERR_NOT_FOUND);
    CHECK(strcmp(mxk_get_last_error(), "Find name zzz that is not in the auxiliary states") == 0);
    CHECK_EQ_INT(mxk_executor_copy_params_from(ex, 2, bad, vals, 1, bad + 1, vals, 1), MXK_OK);
    ET_CHECK_ARRAY(t.args[0], ((const float[]){9, 9}), 2, 0);
    CHECK_EQ_INT(mxk_executor_forward(ex, 0), MXK_OK);
    ET_CHECK_ARRAY(mxk_executor_output(ex, 0), ((const float[]){20, 21}), 2, 1e-6);
    mxk_ndarray_free(v);
    t1_free(&t);
}

/* ---- monitor ---- */

/** Records of monitor callbacks. */
typedef struct mon_log {
    int count;
    char names[128][64];
    int bad_arrays;
} mon_log;

/** Monitor callback: records the name, waits for the array, frees the handle. */
static void mon_cb(const char *name, mxk_ndarray *arr, void *user) {
    mon_log *l = user;
    if (l->count < 128)
        snprintf(l->names[l->count], sizeof l->names[0], "%s", name);
    l->count++;
    if (arr == NULL || mxk_ndarray_wait_to_read(arr) != MXK_OK)
        l->bad_arrays++;
    mxk_ndarray_free(arr);
}

/** Whether the log has `name`. */
static int mon_has(const mon_log *l, const char *name) {
    for (int i = 0; i < l->count && i < 128; i++)
        if (strcmp(l->names[i], name) == 0)
            return 1;
    return 0;
}

/** A small MLP: data -> fc1(3) -> relu (act1) -> fc2(2) -> SoftmaxOutput (softmax). */
static mxk_symbol *mlp_symbol(void) {
    mxk_symbol *data = et_var("data");
    mxk_symbol *fc1 = et_op("FullyConnected", "fc1", "num_hidden=3", 1, data);
    mxk_symbol *act1 = et_op("Activation", "act1", "act_type=relu", 1, fc1);
    mxk_symbol *fc2 = et_op("FullyConnected", "fc2", "num_hidden=2", 1, act1);
    mxk_symbol *sm = et_op("SoftmaxOutput", "softmax", NULL, 1, fc2);
    et_free_syms(4, data, fc1, act1, fc2);
    return sm;
}

/** simple_bind of the MLP with data (2,4); data and label get no gradient. */
static mxk_executor *mlp_bind(mxk_symbol *sm, const char *grad_req) {
    const char *names[] = {"data"};
    mxk_shape shapes[] = {et_shape(2, 2, 4, 0, 0)};
    const char *rn[] = {"data", "softmax_label"}, *rv[] = {"null", "null"};
    mxk_executor *ex = NULL;
    mxk_status st =
        mxk_executor_simple_bind(sm, et_cpu, 1, names, shapes, grad_req, 2, rn, rv, NULL, &ex);
    CHECK_EQ_INT(st, MXK_OK);
    if (st != MXK_OK)
        fprintf(stderr, "simple_bind: %s\n", mxk_get_last_error());
    return ex;
}

static void test_monitor(void) {
    mxk_symbol *sm = mlp_symbol();
    mxk_executor *ex = mlp_bind(sm, "write");
    if (ex == NULL)
        return;
    mon_log l = {0};
    CHECK_EQ_INT(mxk_executor_set_monitor(ex, mon_cb, &l, 0), MXK_OK);
    CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
    /* One report per output of each forward node. */
    CHECK_EQ_INT(l.count, 4);
    CHECK(strcmp(l.names[0], "fc1_output") == 0 && strcmp(l.names[1], "act1_output") == 0 &&
          strcmp(l.names[2], "fc2_output") == 0 && strcmp(l.names[3], "softmax_output") == 0);
    CHECK_EQ_INT(mxk_executor_backward(ex, 0, NULL), MXK_OK);
    /* Backward nodes: softmax (data grad), fc2 (data, weight, bias), act1, fc1 (weight,
     * bias: no data gradient is wanted). */
    CHECK_EQ_INT(l.count, 4 + 7);
    CHECK(mon_has(&l, "softmax_backward_output0"));
    CHECK(mon_has(&l, "fc2_backward_output0") && mon_has(&l, "fc2_backward_output1") &&
          mon_has(&l, "fc2_backward_output2"));
    CHECK(mon_has(&l, "act1_backward_output"));
    CHECK(mon_has(&l, "fc1_backward_output1") && mon_has(&l, "fc1_backward_output2"));
    CHECK(!mon_has(&l, "fc1_backward_output0"));
    CHECK_EQ_INT(l.bad_arrays, 0);

    /* monitor_all: inputs first, variables also by their own name. */
    mon_log all = {0};
    CHECK_EQ_INT(mxk_executor_set_monitor(ex, mon_cb, &all, 1), MXK_OK);
    CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
    /* Variable inputs twice (the variable's name, then "<node>_<input>", which for
     * fc1_weight is the same text): fc1 3 * 2 + output; act1 1 + 1; fc2 1 + 2 * 2 + 1;
     * softmax 1 + 2 + 1. */
    CHECK_EQ_INT(all.count, 7 + 2 + 6 + 4);
    CHECK(strcmp(all.names[0], "data") == 0 && strcmp(all.names[1], "fc1_data") == 0 &&
          strcmp(all.names[2], "fc1_weight") == 0 && strcmp(all.names[3], "fc1_weight") == 0 &&
          strcmp(all.names[6], "fc1_output") == 0);
    CHECK(mon_has(&all, "softmax_label") && mon_has(&all, "softmax_data"));
    CHECK(mon_has(&all, "act1_data") && mon_has(&all, "fc2_data"));
    CHECK_EQ_INT(all.bad_arrays, 0);
    /* Removing the monitor stops the reports. */
    CHECK_EQ_INT(mxk_executor_set_monitor(ex, NULL, NULL, 0), MXK_OK);
    int before = all.count;
    CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
    CHECK_EQ_INT(all.count, before);
    CHECK_EQ_INT(mxk_wait_all(), MXK_OK);
    mxk_executor_free(ex);
    mxk_symbol_free(sm);
}

/* ---- debug_str ---- */

/** T4 with tanh for sin: b = tanh(a), c = 2a + b, simple_bind with an unused 'b' shape. */
static void test_debug_str(void) {
    mxk_symbol *a = et_var("a");
    mxk_symbol *m = et_op("_mul_scalar", "_mulscalar0", "scalar=2", 1, a);
    mxk_symbol *t = et_op("Activation", "tanh0", "act_type=tanh", 1, a);
    mxk_symbol *c = et_op("_plus", "_plus0", NULL, 2, m, t);
    const char *names[] = {"a", "b"};
    mxk_shape shapes[] = {et_shape(1, 2, 0, 0, 0), et_shape(1, 2, 0, 0, 0)};
    mxk_executor *ex = NULL;
    CHECK_EQ_INT(
        mxk_executor_simple_bind(c, et_cpu, 2, names, shapes, "null", 0, NULL, NULL, NULL, &ex),
        MXK_OK);
    char *s = NULL;
    if (ex != NULL)
        CHECK_EQ_INT(mxk_executor_debug_str(ex, &s), MXK_OK);
    if (s != NULL) {
        const char *listing = "Symbol Outputs:\n"
                              "\toutput[0]=_plus0(0)\n"
                              "Variable:a\n"
                              "--------------------\n"
                              "Op:_mul_scalar, Name=_mulscalar0\n"
                              "Inputs:\n"
                              "\targ[0]=a(0) version=0\n"
                              "Attrs:\n"
                              "\tscalar=2\n"
                              "--------------------\n"
                              "Op:Activation, Name=tanh0\n"
                              "Inputs:\n"
                              "\targ[0]=a(0) version=0\n"
                              "Attrs:\n"
                              "\tact_type=tanh\n"
                              "--------------------\n"
                              "Op:elemwise_add, Name=_plus0\n" /* _plus is an alias */
                              "Inputs:\n"
                              "\targ[0]=_mulscalar0(0)\n"
                              "\targ[1]=tanh0(0)\n";
        CHECK(strncmp(s, listing, strlen(listing)) == 0);
        if (strncmp(s, listing, strlen(listing)) != 0)
            fprintf(stderr, "debug_str:\n%s\n", s);
        const char *rest = s + strlen(listing);
        CHECK(strncmp(rest, "Memory plan: ", 13) == 0);
        /* The footer is the last two lines (front ends parse the MB figure). */
        const char *footer = "Total 0 MB allocated\nTotal 11 TempSpace resource requested\n";
        size_t n = strlen(s), k = strlen(footer);
        CHECK(n > k && strcmp(s + n - k, footer) == 0);
        uint64_t planned = 0, naive = 0;
        mxk_executor_plan_bytes(ex, &planned, &naive);
        CHECK(planned > 0 && planned <= naive);
        char line[128];
        snprintf(line, sizeof line, "%llu bytes planned, %llu bytes naive",
                 (unsigned long long)planned, (unsigned long long)naive);
        CHECK_CONTAINS(s, line);
        free(s);
    }
    mxk_executor_free(ex);

    /* With gradients: the backward nodes and the head-gradient placeholder appear. */
    CHECK_EQ_INT(
        mxk_executor_simple_bind(c, et_cpu, 1, names, shapes, "write", 0, NULL, NULL, NULL, &ex),
        MXK_OK);
    s = NULL;
    if (ex != NULL)
        CHECK_EQ_INT(mxk_executor_debug_str(ex, &s), MXK_OK);
    if (s != NULL) {
        CHECK_CONTAINS(s, "Variable:_head_grad_0\n");
        CHECK_CONTAINS(s, "Op:_backward_elemwise_add, Name=_plus0_backward\nInputs:\n"
                          "\targ[0]=_head_grad_0(0)\nControl deps:\n\tcdep[0]=_plus0\n");
        CHECK_CONTAINS(s, "Op:_backward_Activation, Name=tanh0_backward\n");
        CHECK_CONTAINS(s, "\toutput[1]=");
        free(s);
    }
    mxk_executor_free(ex);
    et_free_syms(4, a, m, t, c);
}

/* ---- bound vs imperative ---- */

/** A composite graph gives the same outputs as the same operators invoked imperatively. */
static void test_outputs_equal_imperative(void) {
    mxk_symbol *x = et_var("x"), *y = et_var("y");
    mxk_symbol *fc = et_op("FullyConnected", "fc", "num_hidden=5", 1, x);
    mxk_symbol *th = et_op("Activation", "th", "act_type=tanh", 1, fc);
    mxk_symbol *sg = et_op("Activation", "sg", "act_type=sigmoid", 1, fc);
    mxk_symbol *pl = et_op("_plus", "pl", NULL, 2, th, sg);
    mxk_symbol *ml = et_op("_mul", "ml", NULL, 2, pl, y);
    mxk_symbol *sc = et_op("_plus_scalar", "sc", "scalar=0.5", 1, ml);
    float xv[12], wv[20], bv[5], yv[15];
    for (int i = 0; i < 12; i++)
        xv[i] = (float)((i * 7) % 11) / 11.0f - 0.5f;
    for (int i = 0; i < 20; i++)
        wv[i] = (float)((i * 5) % 13) / 13.0f - 0.4f;
    for (int i = 0; i < 5; i++)
        bv[i] = 0.1f * (float)i;
    for (int i = 0; i < 15; i++)
        yv[i] = (float)i / 15.0f;
    mxk_ndarray *X = et_array(et_shape(2, 3, 4, 0, 0), xv),
                *W = et_array(et_shape(2, 5, 4, 0, 0), wv);
    mxk_ndarray *B = et_array(et_shape(1, 5, 0, 0, 0), bv),
                *Y = et_array(et_shape(2, 3, 5, 0, 0), yv);
    /* list_arguments: x, fc_weight, fc_bias, y */
    mxk_ndarray *args[4] = {X, W, B, Y};
    mxk_executor *ex = bind_checked(sc, 4, args, NULL, NULL);
    if (ex == NULL)
        return;
    CHECK_EQ_INT(mxk_executor_forward(ex, 0), MXK_OK);
    /* Imperative. */
    mxk_ndarray *o1[16], *o2[16], *o3[16], *o4[16], *o5[16], *o6[16];
    uint32_t n = 0;
    const char *nh[] = {"num_hidden"}, *nh5[] = {"5"}, *at[] = {"act_type"}, *tanh_[] = {"tanh"},
               *sig[] = {"sigmoid"}, *scal[] = {"scalar"}, *half[] = {"0.5"};
    mxk_ndarray *in3[3] = {X, W, B};
    CHECK_EQ_INT(mxk_imperative_invoke("FullyConnected", 3, in3, &n, o1, 1, nh, nh5), MXK_OK);
    n = 0;
    CHECK_EQ_INT(mxk_imperative_invoke("Activation", 1, o1, &n, o2, 1, at, tanh_), MXK_OK);
    n = 0;
    CHECK_EQ_INT(mxk_imperative_invoke("Activation", 1, o1, &n, o3, 1, at, sig), MXK_OK);
    mxk_ndarray *p2[2] = {o2[0], o3[0]};
    n = 0;
    CHECK_EQ_INT(mxk_imperative_invoke("_plus", 2, p2, &n, o4, 0, NULL, NULL), MXK_OK);
    mxk_ndarray *m2[2] = {o4[0], Y};
    n = 0;
    CHECK_EQ_INT(mxk_imperative_invoke("_mul", 2, m2, &n, o5, 0, NULL, NULL), MXK_OK);
    n = 0;
    CHECK_EQ_INT(mxk_imperative_invoke("_plus_scalar", 1, o5, &n, o6, 1, scal, half), MXK_OK);
    float want[15];
    et_host(o6[0], want);
    ET_CHECK_ARRAY(mxk_executor_output(ex, 0), want, 15, 1e-6);
    mxk_ndarray *all[] = {o1[0], o2[0], o3[0], o4[0], o5[0], o6[0], X, W, B, Y};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mxk_ndarray_free(all[i]);
    mxk_executor_free(ex);
    et_free_syms(8, x, y, fc, th, sg, pl, ml, sc);
}

/* ---- no allocation when warm ---- */

/** Forward+backward allocate no storage and no engine op once each mode has run once. */
static void test_no_allocation_when_warm(void) {
    mxk_symbol *sm = mlp_symbol();
    mxk_executor *ex = mlp_bind(sm, "write");
    if (ex == NULL)
        return;
    const float label[] = {1, 0};
    mxk_ndarray *l = et_array(et_shape(1, 2, 0, 0, 0), label);
    mxk_ndarray_copy_to(l, mxk_executor_arg(ex, "softmax_label"));
    mxk_ndarray_fill(mxk_executor_arg(ex, "fc1_weight"), 0.1);
    mxk_ndarray_fill(mxk_executor_arg(ex, "fc2_weight"), -0.2);
    mxk_ndarray_fill(mxk_executor_arg(ex, "data"), 1.0);
    for (int it = 0; it < 2; it++) {
        CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
        CHECK_EQ_INT(mxk_executor_backward(ex, 0, NULL), MXK_OK);
        CHECK_EQ_INT(mxk_executor_forward(ex, 0), MXK_OK);
    }
    CHECK_EQ_INT(mxk_wait_all(), MXK_OK);
    mxk_storage_stats s0 = et_stats();
    uint64_t inst0 = mxki_engine_cached_instances_total();
    for (int it = 0; it < 10; it++) {
        CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
        CHECK_EQ_INT(mxk_executor_backward(ex, 0, NULL), MXK_OK);
        CHECK_EQ_INT(mxk_executor_forward(ex, 0), MXK_OK);
        CHECK_EQ_INT(mxk_wait_all(), MXK_OK);
    }
    mxk_storage_stats s1 = et_stats();
    CHECK_EQ_INT(s1.raw_allocs, s0.raw_allocs);
    CHECK_EQ_INT(s1.pool_hits, s0.pool_hits);
    CHECK_EQ_INT(s1.bytes_in_use, s0.bytes_in_use);
    CHECK_EQ_INT(mxki_engine_cached_instances_total(), inst0);
    mxk_ndarray_free(l);
    mxk_executor_free(ex);
    mxk_symbol_free(sm);
}

/** Re-resolving kernels between iterations keeps the executor working. */
static void test_reresolve(void) {
    t1_bound t;
    if (!t1_setup(&t, t1_zero_grads, NULL))
        return;
    mxk_executor *ex = t.ex;
    CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
    CHECK_EQ_INT(mxk_set_backend_preference("cpu-blas"), MXK_OK);
    CHECK_EQ_INT(mxk_executor_reresolve(ex), MXK_OK);
    CHECK_EQ_INT(mxk_set_backend_preference(NULL), MXK_OK);
    mxk_ndarray *out = mxk_executor_output(ex, 0);
    CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
    CHECK_EQ_INT(mxk_executor_backward(ex, 1, &out), MXK_OK);
    ET_CHECK_ARRAY(t.grads[0], ((const float[]){8, 14}), 2, 1e-6);
    t1_free(&t);
}

/** The executor's arrays outlive the caller's handles (bind references, not copies). */
static void test_bound_arrays_are_referenced(void) {
    t1_bound t;
    if (!t1_setup(&t, NULL, NULL))
        return;
    mxk_ndarray_fill(t.args[0], 3.0); /* visible to the executor: same memory */
    for (int i = 0; i < 2; i++) {
        mxk_ndarray_free(t.args[i]);
        t.args[i] = NULL;
    }
    CHECK_EQ_INT(mxk_executor_forward(t.ex, 0), MXK_OK);
    ET_CHECK_ARRAY(mxk_executor_output(t.ex, 0), ((const float[]){8, 9}), 2, 1e-6);
    t1_free(&t);
}

int main(void) {
    if (et_init() != 0)
        return 1;
    MXK_RUN(test_t1_two_a_plus_b);
    MXK_RUN(test_t2_head_gradient_required);
    MXK_RUN(test_backward_without_gradients_is_a_no_op);
    MXK_RUN(test_grad_req_add_and_null);
    MXK_RUN(test_t3_fc_relu_softmax);
    MXK_RUN(test_same_input_twice);
    MXK_RUN(test_bind_errors);
    MXK_RUN(test_simple_bind);
    MXK_RUN(test_copy_params_from);
    MXK_RUN(test_monitor);
    MXK_RUN(test_debug_str);
    MXK_RUN(test_outputs_equal_imperative);
    MXK_RUN(test_no_allocation_when_warm);
    MXK_RUN(test_reresolve);
    MXK_RUN(test_bound_arrays_are_referenced);
    int rc = MXK_TEST_EXIT();
    mxk_shutdown();
    return rc;
}
