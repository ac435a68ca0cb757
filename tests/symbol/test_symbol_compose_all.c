/*
 * Operators that must be given all their inputs: MXNet 1.9.1 registers its
 * optimizer updates without input names (FListInputNames), so nnvm's Compose
 * (src/core/symbolic.cc) refuses to create variables for the inputs not given:
 * mx.sym.adam_update(w, g, m, lr=0.1) raises "Not enough argument to call operator
 * adam_update" (measured with the 1.9.1 wheel, as for sgd_update and
 * sgd_mom_update). Every other operator still gets "<node>_<input>" variables, and
 * the symbol JSON loader refuses an update node with fewer inputs in the same words.
 */
#include "symbol_test_util.h"

/** Variables named by `names` (n of them) into `out`. */
static void make_vars(int n, const char *const *names, mxk_symbol **out) {
    for (int i = 0; i < n; i++)
        CHECK_EQ_INT(mxk_symbol_variable(names[i], &out[i]), MXK_OK);
}

/** Frees n symbols. */
static void free_syms(int n, mxk_symbol **s) {
    for (int i = 0; i < n; i++)
        mxk_symbol_free(s[i]);
}

/** The updates refuse fewer inputs, positional or named, with MXNet's message. */
static void test_updates_refuse_missing_inputs(void) {
    static const char *const names[4] = {"weight", "grad", "mean", "var"};
    mxk_symbol *v[4] = {NULL}, *s = NULL;
    make_vars(4, names, v);
    const char *k[1] = {"lr"}, *val[1] = {"0.1"};
    for (uint32_t n = 0; n < 4; n++) {
        char want[256];
        snprintf(want, sizeof want,
                 "Not enough argument to call operator adam_update: it takes 4 inputs (weight, "
                 "grad, mean, var), %u given, and creates no variables for the others",
                 n);
        CHECK_ERROR(mxk_symbol_create("adam_update", "x", 1, k, val, n, NULL, v, &s),
                    MXK_ERR_INVALID_ARGUMENT, want);
        CHECK(s == NULL);
    }
    CHECK_ERROR(mxk_symbol_create("adam_update", "x", 1, k, val, 3, names, v, &s),
                MXK_ERR_INVALID_ARGUMENT,
                "Not enough argument to call operator adam_update: it takes 4 inputs (weight, "
                "grad, mean, var), 3 given, and creates no variables for the others");
    CHECK_ERROR(mxk_symbol_create("sgd_update", "x", 1, k, val, 1, NULL, v, &s),
                MXK_ERR_INVALID_ARGUMENT,
                "Not enough argument to call operator sgd_update: it takes 2 inputs (weight, "
                "grad), 1 given, and creates no variables for the others");
    const char *km[2] = {"lr", "momentum"}, *vm[2] = {"0.1", "0.9"};
    CHECK_ERROR(mxk_symbol_create("sgd_mom_update", "x", 2, km, vm, 2, NULL, v, &s),
                MXK_ERR_INVALID_ARGUMENT,
                "Not enough argument to call operator sgd_mom_update: it takes 3 inputs (weight, "
                "grad, mom), 2 given, and creates no variables for the others");
    free_syms(4, v);
}

/** All inputs given: the update composes, its states are aux states, no variable is added. */
static void test_updates_with_all_inputs(void) {
    static const char *const names[4] = {"w", "g", "m", "v"};
    mxk_symbol *v[4] = {NULL}, *s = NULL;
    make_vars(4, names, v);
    const char *k[1] = {"lr"}, *val[1] = {"0.1"};
    CHECK_EQ_INT(mxk_symbol_create("adam_update", "x", 1, k, val, 4, NULL, v, &s), MXK_OK);
    CHECK_NAMES(s, MXK_SYMBOL_ARGUMENTS, "w", "g");
    CHECK_NAMES(s, MXK_SYMBOL_AUX_STATES, "m", "v");
    mxk_symbol_free(s);
    s = NULL;
    /* By name, in another order (MXNet accepts only positions here; mxk matches names). */
    const char *in_names[4] = {"var", "mean", "grad", "weight"};
    mxk_symbol *rev[4] = {v[3], v[2], v[1], v[0]};
    CHECK_EQ_INT(mxk_symbol_create("adam_update", "x", 1, k, val, 4, in_names, rev, &s), MXK_OK);
    CHECK_NAMES(s, MXK_SYMBOL_ARGUMENTS, "w", "g");
    mxk_symbol_free(s);
    s = NULL;
    CHECK_EQ_INT(mxk_symbol_create("sgd_update", "x", 1, k, val, 2, NULL, v, &s), MXK_OK);
    CHECK_NAMES(s, MXK_SYMBOL_ARGUMENTS, "w", "g");
    mxk_symbol_free(s);
    free_syms(4, v);
}

/**
 * Other operators still get variables: one-input operators without gradient that
 * work in place (BlockGrad, _shuffle, as MXNet's default input name "data") and
 * operators with several inputs (FullyConnected, BatchNorm's aux states).
 */
static void test_others_create_variables(void) {
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxk_symbol_create("BlockGrad", "b", 0, NULL, NULL, 0, NULL, NULL, &s), MXK_OK);
    CHECK_NAMES(s, MXK_SYMBOL_ARGUMENTS, "b_data");
    mxk_symbol_free(s);
    s = NULL;
    CHECK_EQ_INT(mxk_symbol_create("_shuffle", "sh", 0, NULL, NULL, 0, NULL, NULL, &s), MXK_OK);
    CHECK_NAMES(s, MXK_SYMBOL_ARGUMENTS, "sh_data");
    mxk_symbol_free(s);
    s = NULL;
    mxk_symbol *x = NULL;
    CHECK_EQ_INT(mxk_symbol_variable("x", &x), MXK_OK);
    CHECK_EQ_INT(mxk_symbol_create("BatchNorm", "bn", 0, NULL, NULL, 1, NULL, &x, &s), MXK_OK);
    CHECK_NAMES(s, MXK_SYMBOL_ARGUMENTS, "x", "bn_gamma", "bn_beta");
    CHECK_NAMES(s, MXK_SYMBOL_AUX_STATES, "bn_moving_mean", "bn_moving_var");
    mxk_symbol_free(s);
    mxk_symbol_free(x);
}

/** The JSON loader refuses an update node with fewer inputs in MXNet's compose words. */
static void test_json_update_with_missing_input(void) {
    static const char *js =
        "{\"nodes\": [{\"op\": \"null\", \"name\": \"weight\", \"inputs\": []},"
        " {\"op\": \"null\", \"name\": \"grad\", \"inputs\": []},"
        " {\"op\": \"null\", \"name\": \"mean\", \"inputs\": []},"
        " {\"op\": \"adam_update\", \"name\": \"x\", \"attrs\": {\"lr\": \"0.1\"},"
        "  \"inputs\": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]}],"
        " \"arg_nodes\": [0, 1, 2], \"node_row_ptr\": [0, 1, 2, 3, 4],"
        " \"heads\": [[3, 0, 0]], \"attrs\": {\"mxnet_version\": [\"int\", 10901]}}";
    mxk_symbol *s = NULL;
    CHECK(mxk_symbol_from_json(js, &s) != MXK_OK);
    CHECK(s == NULL);
    CHECK_CONTAINS(mxk_get_last_error(), "Not enough argument to call operator adam_update: it "
                                         "takes 4 inputs (weight, grad, mean, var), the file "
                                         "gives 3");
}

int main(void) {
    if (st_setup() != 0)
        return 1;
    MXK_RUN(test_updates_refuse_missing_inputs);
    MXK_RUN(test_updates_with_all_inputs);
    MXK_RUN(test_others_create_variables);
    MXK_RUN(test_json_update_with_missing_input);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
