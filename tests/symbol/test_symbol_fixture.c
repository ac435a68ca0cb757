/*
 * A real MXNet 0.8 file (tests/symbol/fixtures/save_000800.json, from apache/mxnet
 * tests/python/unittest): legacy keys, two-element inputs, BatchNorm without its aux
 * states. Loading it gives MXNet's argument list (its test_symbol.py
 * test_load_000800 checks the same), the aux states MXNet's upgrade adds back, the
 * hidden-key upgrade, and a stable current-form save.
 */

#include "symbol_test_util.h"

/* The fixture loads with MXNet's lists and attributes. */
static void test_fixture_loads(void) {
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxk_symbol_load(FIXTURE_000800, &s), MXK_OK);
    if (s == NULL) {
        fprintf(stderr, "load: %s\n", mxk_get_last_error());
        return;
    }
    CHECK_NAMES(s, MXK_SYMBOL_ARGUMENTS, "data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
                "fc3_weight", "fc3_bias", "batchnorm0_gamma", "batchnorm0_beta", "softmax_label");
    CHECK_NAMES(s, MXK_SYMBOL_AUX_STATES, "batchnorm0_moving_mean", "batchnorm0_moving_var");
    CHECK_NAMES(s, MXK_SYMBOL_OUTPUTS, "softmax_output");
    char b[64];
    CHECK(strcmp(st_internal_attr(s, "data", "lr_mult", b, sizeof b), "0.2") == 0);
    CHECK(strcmp(st_internal_attr(s, "data", "ctx_group", b, sizeof b), "stage1") == 0);
    /* fc1's weight_lr_mult moves onto fc1_weight (upstream UpgradeJSON_FixParsing) */
    CHECK(strcmp(st_internal_attr(s, "fc1_weight", "__lr_mult__", b, sizeof b), "1.2") == 0);
    CHECK(strcmp(st_internal_attr(s, "fc1_weight", "__wd_mult__", b, sizeof b), "0.3") == 0);
    CHECK(strcmp(st_internal_attr(s, "fc2_weight", "__lr_mult__", b, sizeof b), "0.01") == 0);
    CHECK(strcmp(st_internal_attr(s, "fc1_output", "__ctx_group__", b, sizeof b), "stage1") == 0);
    CHECK(strcmp(st_internal_attr(s, "batchnorm0_moving_mean", "__ctx_group__", b, sizeof b),
                 "stage2") == 0);
    CHECK(strcmp(st_internal_attr(s, "batchnorm0_moving_mean", "__init__", b, sizeof b),
                 "[\"zero\", {}]") == 0);
    CHECK(strcmp(st_internal_attr(s, "batchnorm0_moving_var", "__init__", b, sizeof b),
                 "[\"one\", {}]") == 0);
    /* saved in the current form (19 nodes with the aux states), stable under reload */
    char *j1 = st_json(s);
    CHECK_CONTAINS(j1, "\"name\": \"batchnorm0_moving_var\"");
    CHECK_CONTAINS(j1, "  \"heads\": [[18, 0, 0]], \n");
    mxk_symbol *back = NULL;
    CHECK_EQ_INT(mxk_symbol_from_json(j1, &back), MXK_OK);
    char *j2 = back ? st_json(back) : NULL;
    CHECK(j1 && j2 && strcmp(j1, j2) == 0);
    CHECK_NAMES(back, MXK_SYMBOL_AUX_STATES, "batchnorm0_moving_mean", "batchnorm0_moving_var");
    free(j1);
    free(j2);
    mxk_symbol_free(back);
    mxk_symbol_free(s);
}

int main(void) {
    if (st_setup() != 0)
        return 1;
    MXK_RUN(test_fixture_loads);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
