/*
 * The predict-only API (mxk.h mxk_predictor_*, upstream include/mxnet/c_predict_api.h)
 * and the pieces it stands on: mxk_ndarray_load_buffer and mxk_executor_copy_params_from
 * with "arg:"/"aux:" names. The network is data -> FullyConnected fc1 (3) -> relu act1
 * -> BatchNorm bn (aux states) -> FullyConnected fc2 (2) -> SoftmaxOutput; its
 * outputs are checked against the same arithmetic written out in C below. Also the
 * enumeration of the registries (count and index) that the predictor's plugins fill.
 */
#include <math.h>
#include <stdlib.h>

#include "exec_test_util.h"

#define IN 4
#define HID 3
#define OUT 2

static const float W1[HID * IN] = {0.5f, -1, 0.25f, 2, -0.5f, 1, 1.5f, -2, 1, 0.75f, -0.25f, 0.5f};
static const float B1[HID] = {0.1f, -0.2f, 0.3f};
static const float MEAN[HID] = {0.5f, -0.25f, 1};
static const float VAR[HID] = {4, 0.25f, 1};
static const float BETA[HID] = {0.1f, 0.2f, -0.3f};
static const float W2[OUT * HID] = {1, -1, 0.5f, -0.5f, 2, 1};
static const float B2[OUT] = {0.05f, -0.05f};
static const float X[2][IN] = {{1, 2, -1, 0.5f}, {-2, 0.5f, 1, -1}};

/** The network's reference for one example: fc1 (optional), probabilities. */
static void reference(const float *x, float *fc1, float *prob) {
    float h[HID], z[OUT];
    for (int j = 0; j < HID; j++) {
        double s = B1[j];
        for (int i = 0; i < IN; i++)
            s += (double)W1[j * IN + i] * x[i];
        if (fc1)
            fc1[j] = (float)s;
        s = s > 0 ? s : 0;                                             /* relu */
        h[j] = (float)((s - MEAN[j]) / sqrt(VAR[j] + 1e-3) + BETA[j]); /* fix_gamma: gamma 1 */
    }
    double m = -INFINITY, sum = 0;
    for (int k = 0; k < OUT; k++) {
        double s = B2[k];
        for (int j = 0; j < HID; j++)
            s += (double)W2[k * HID + j] * h[j];
        z[k] = (float)s;
        m = fmax(m, s);
    }
    for (int k = 0; k < OUT; k++)
        sum += exp(z[k] - m);
    for (int k = 0; k < OUT; k++)
        prob[k] = (float)(exp(z[k] - m) / sum);
}

/** The network's symbol JSON (freed with mxk_free()). */
static char *network_json(void) {
    mxk_symbol *data = et_var("data");
    mxk_symbol *fc1 = et_op("FullyConnected", "fc1", "num_hidden=3", 1, data);
    mxk_symbol *act = et_op("Activation", "act1", "act_type=relu", 1, fc1);
    mxk_symbol *bn = et_op("BatchNorm", "bn", NULL, 1, act);
    mxk_symbol *fc2 = et_op("FullyConnected", "fc2", "num_hidden=2", 1, bn);
    mxk_symbol *sm = et_op("SoftmaxOutput", "softmax", NULL, 1, fc2);
    char *json = NULL;
    CHECK_EQ_INT(mxk_symbol_to_json(sm, &json), MXK_OK);
    et_free_syms(6, data, fc1, act, bn, fc2, sm);
    return json;
}

/**
 * The bytes of a .params file for the network, written by mxk_ndarray_save and read
 * back as a file's content. `w2_rows` changes fc2_weight's shape (2 is right).
 */
static char *params_bytes(int w2_rows, size_t *size) {
    mxk_ndarray *a[] = {
        et_array(et_shape(2, HID, IN, 0, 0), W1),  et_array(et_shape(1, HID, 0, 0, 0), B1),
        et_full(et_shape(1, HID, 0, 0, 0), 7), /* gamma: ignored (fix_gamma) */
        et_array(et_shape(1, HID, 0, 0, 0), BETA), et_array(et_shape(2, w2_rows, HID, 0, 0), NULL),
        et_array(et_shape(1, OUT, 0, 0, 0), B2),   et_array(et_shape(1, HID, 0, 0, 0), MEAN),
        et_array(et_shape(1, HID, 0, 0, 0), VAR)};
    mxk_ndarray_fill(a[4], 0);
    if (w2_rows == OUT)
        mxk_ndarray_copy_from_host(a[4], W2, sizeof W2);
    const char *names[] = {"arg:fc1_weight",     "arg:fc1_bias",     "arg:bn_gamma",
                           "arg:bn_beta",        "arg:fc2_weight",   "arg:fc2_bias",
                           "aux:bn_moving_mean", "aux:bn_moving_var"};
    char path[] = "/tmp/mxk-capi-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    CHECK_EQ_INT(mxk_ndarray_save(path, 8, a, names), MXK_OK);
    char *bytes = NULL;
    CHECK_EQ_INT(mxk_file_read(path, "params", 1 << 20, &bytes, size), MXK_OK);
    unlink(path);
    for (int i = 0; i < 8; i++)
        mxk_ndarray_free(a[i]);
    return bytes;
}

static const char *const data_name[] = {"data"};

/** A predictor of the whole network for `batch` examples (NULL on failure). */
static mxk_predictor *create(const char *json, const char *params, size_t size, int batch,
                             uint32_t num_keys, const char *const *keys) {
    mxk_shape s = et_shape(2, batch, IN, 0, 0);
    mxk_predictor *p = NULL;
    mxk_status st =
        mxk_predictor_create(json, params, size, et_cpu, 1, data_name, &s, num_keys, keys, &p);
    if (st != MXK_OK)
        fprintf(stderr, "mxk_predictor_create: %s\n", mxk_get_last_error());
    CHECK_EQ_INT(st, MXK_OK);
    return p;
}

/** Checks the probabilities of `p` for the first `batch` rows of X. */
static void check_probs(mxk_predictor *p, int batch) {
    float got[2 * OUT] = {0}, want[OUT];
    mxk_shape s;
    CHECK_EQ_INT(mxk_predictor_output_shape(p, 0, &s), MXK_OK);
    CHECK(s.ndim == 2 && s.dims[0] == batch && s.dims[1] == OUT);
    CHECK_EQ_INT(mxk_predictor_set_input(p, "data", &X[0][0], (uint64_t)batch * IN), MXK_OK);
    CHECK_EQ_INT(mxk_predictor_forward(p), MXK_OK);
    CHECK_EQ_INT(mxk_predictor_get_output(p, 0, got, (uint64_t)batch * OUT), MXK_OK);
    for (int b = 0; b < batch; b++) {
        reference(X[b], NULL, want);
        for (int k = 0; k < OUT; k++)
            CHECK_NEAR(got[b * OUT + k], want[k], 1e-5);
    }
}

/** Create, set input, forward, get output: the softmax probabilities of the reference. */
static void test_predict(void) {
    size_t size = 0;
    char *json = network_json(), *params = params_bytes(OUT, &size);
    mxk_predictor *p = create(json, params, size, 1, 0, NULL);
    if (p != NULL) {
        CHECK_EQ_INT(mxk_predictor_num_outputs(p), 1);
        check_probs(p, 1);
    }
    mxk_predictor_free(p);
    mxk_free(json);
    mxk_free(params);
}

/** Partial outputs by node name or output name (MXPredCreatePartialOut). */
static void test_partial_out(void) {
    size_t size = 0;
    char *json = network_json(), *params = params_bytes(OUT, &size);
    const char *keys[] = {"fc1", "softmax_output"};
    mxk_predictor *p = create(json, params, size, 1, 2, keys);
    if (p != NULL) {
        float fc1[HID], prob[OUT], want_fc1[HID], want_prob[OUT];
        reference(X[0], want_fc1, want_prob);
        CHECK_EQ_INT(mxk_predictor_num_outputs(p), 2);
        CHECK_EQ_INT(mxk_predictor_set_input(p, "data", X[0], IN), MXK_OK);
        CHECK_EQ_INT(mxk_predictor_forward(p), MXK_OK);
        CHECK_EQ_INT(mxk_predictor_get_output(p, 0, fc1, HID), MXK_OK);
        CHECK_EQ_INT(mxk_predictor_get_output(p, 1, prob, OUT), MXK_OK);
        for (int j = 0; j < HID; j++)
            CHECK_NEAR(fc1[j], want_fc1[j], 1e-6);
        for (int k = 0; k < OUT; k++)
            CHECK_NEAR(prob[k], want_prob[k], 1e-5);
    }
    mxk_predictor_free(p);
    /* Only fc1: the parameters of the rest are skipped. */
    const char *only[] = {"fc1_output"};
    p = create(json, params, size, 1, 1, only);
    if (p != NULL) {
        float fc1[HID], want_fc1[HID], prob[OUT];
        reference(X[1], want_fc1, prob);
        CHECK_EQ_INT(mxk_predictor_set_input(p, "data", X[1], IN), MXK_OK);
        CHECK_EQ_INT(mxk_predictor_forward(p), MXK_OK);
        CHECK_EQ_INT(mxk_predictor_get_output(p, 0, fc1, HID), MXK_OK);
        for (int j = 0; j < HID; j++)
            CHECK_NEAR(fc1[j], want_fc1[j], 1e-6);
    }
    mxk_predictor_free(p);
    mxk_predictor *q = (mxk_predictor *)json;
    const char *bad[] = {"fc9"};
    mxk_shape s = et_shape(2, 1, IN, 0, 0);
    CHECK_EQ_INT(mxk_predictor_create(json, params, size, et_cpu, 1, data_name, &s, 1, bad, &q),
                 MXK_ERR_NOT_FOUND);
    CHECK(q == NULL);
    CHECK(strcmp(mxk_get_last_error(),
                 "mxk_predictor_create: the symbol has no output named 'fc9' or 'fc9_output'") ==
          0);
    mxk_free(json);
    mxk_free(params);
}

/** Reshape to a batch of 2; the first predictor stays usable and may be freed first. */
static void test_reshape(void) {
    size_t size = 0;
    char *json = network_json(), *params = params_bytes(OUT, &size);
    mxk_predictor *p = create(json, params, size, 1, 0, NULL), *q = NULL;
    if (p != NULL) {
        mxk_shape two = et_shape(2, 2, IN, 0, 0);
        if (mxk_predictor_reshape(p, 1, data_name, &two, &q) != MXK_OK)
            fprintf(stderr, "reshape: %s\n", mxk_get_last_error());
        CHECK(q != NULL);
        check_probs(p, 1);
        mxk_predictor_free(p);
        if (q != NULL)
            check_probs(q, 2);
        /* A shape that would change fc1_weight. */
        mxk_shape wide = et_shape(2, 2, IN + 1, 0, 0);
        mxk_predictor *r = (mxk_predictor *)json;
        CHECK_EQ_INT(mxk_predictor_reshape(q, 1, data_name, &wide, &r), MXK_ERR_SHAPE);
        CHECK(r == NULL);
        CHECK(strcmp(mxk_get_last_error(), "mxk_predictor_reshape: the shape of parameter "
                                           "fc1_weight would change; only the shapes of inputs "
                                           "may change") == 0);
    }
    mxk_predictor_free(q);
    mxk_free(json);
    mxk_free(params);
}

/** Bad input: exact messages, no crash, nothing leaked. */
static void test_errors(void) {
    size_t size = 0;
    char *json = network_json(), *params = params_bytes(OUT, &size);
    mxk_shape s = et_shape(2, 1, IN, 0, 0);
    mxk_predictor *p = NULL;
    /* Truncated parameter bytes. */
    CHECK_EQ_INT(
        mxk_predictor_create(json, params, size - 3, et_cpu, 1, data_name, &s, 0, NULL, &p),
        MXK_ERR_FORMAT);
    CHECK(p == NULL);
    CHECK_CONTAINS(mxk_get_last_error(), "Invalid NDArray file format: ");
    CHECK_CONTAINS(mxk_get_last_error(), "(parameter bytes)");
    /* A parameter whose shape is not the inferred one. */
    size_t bad_size = 0;
    char *bad = params_bytes(OUT + 1, &bad_size);
    CHECK_EQ_INT(mxk_predictor_create(json, bad, bad_size, et_cpu, 1, data_name, &s, 0, NULL, &p),
                 MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxk_get_last_error(), "copy_params_from: argument 'fc2_weight': ");
    mxk_free(bad);
    /* An input the symbol does not have. */
    const char *image[] = {"image"};
    CHECK(mxk_predictor_create(json, params, size, et_cpu, 1, image, &s, 0, NULL, &p) != MXK_OK);
    CHECK(p == NULL);
    CHECK_EQ_INT(mxk_predictor_create(NULL, params, size, et_cpu, 1, data_name, &s, 0, NULL, &p),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxk_get_last_error(),
                 "mxk_predictor_create: out, symbol_json or a list is NULL") == 0);

    p = create(json, params, size, 1, 0, NULL);
    if (p != NULL) {
        float out[OUT];
        CHECK_EQ_INT(mxk_predictor_set_input(p, "label", X[0], IN), MXK_ERR_NOT_FOUND);
        CHECK(strcmp(mxk_get_last_error(),
                     "mxk_predictor_set_input: cannot find input key label") == 0);
        CHECK_EQ_INT(mxk_predictor_set_input(p, "data", X[0], IN - 1), MXK_ERR_SHAPE);
        CHECK(strcmp(mxk_get_last_error(),
                     "mxk_predictor_set_input: input 'data' has 4 elements, not 3") == 0);
        CHECK_EQ_INT(mxk_predictor_get_output(p, 1, out, OUT), MXK_ERR_NOT_FOUND);
        CHECK(strcmp(mxk_get_last_error(),
                     "mxk_predictor_get_output: output 1 is out of range (1 outputs)") == 0);
        CHECK_EQ_INT(mxk_predictor_get_output(p, 0, out, OUT + 1), MXK_ERR_SHAPE);
        CHECK(strcmp(mxk_get_last_error(),
                     "mxk_predictor_get_output: output '0' has 2 elements, not 3") == 0);
        mxk_shape o;
        CHECK_EQ_INT(mxk_predictor_output_shape(p, 5, &o), MXK_ERR_NOT_FOUND);
        CHECK(strcmp(mxk_get_last_error(),
                     "mxk_predictor_output_shape: output 5 is out of range (1 outputs)") == 0);
    }
    mxk_predictor_free(p);
    mxk_predictor_free(NULL);
    CHECK_EQ_INT(mxk_predictor_num_outputs(NULL), 0);
    CHECK_EQ_INT(mxk_predictor_forward(NULL), MXK_ERR_INVALID_ARGUMENT);
    mxk_free(json);
    mxk_free(params);
}

/** copy_params_from routes "arg:"/"aux:" names whichever list holds them. */
static void test_copy_params_prefixes(void) {
    size_t size = 0;
    char *json = network_json(), *params = params_bytes(OUT, &size);
    uint32_t num = 0;
    mxk_ndarray **arrays = NULL;
    char **names = NULL;
    CHECK_EQ_INT(mxk_ndarray_load_buffer(params, size, NULL, &num, &arrays, &names), MXK_OK);
    CHECK_EQ_INT(num, 8);
    mxk_symbol *sym = NULL;
    CHECK_EQ_INT(mxk_symbol_from_json(json, &sym), MXK_OK);
    mxk_shape s = et_shape(2, 1, IN, 0, 0);
    mxk_executor *ex = NULL;
    CHECK_EQ_INT(
        mxk_executor_simple_bind(sym, et_cpu, 1, data_name, &s, "null", 0, NULL, NULL, NULL, &ex),
        MXK_OK);
    if (ex != NULL && num == 8) {
        /* The whole list as arguments: the aux: entries go to the aux states. */
        CHECK_EQ_INT(mxk_executor_copy_params_from(ex, num, (const char *const *)names, arrays, 0,
                                                   NULL, NULL, 0),
                     MXK_OK);
        ET_CHECK_ARRAY(mxk_executor_aux(ex, "bn_moving_var"), VAR, HID, 0);
        ET_CHECK_ARRAY(mxk_executor_arg(ex, "fc1_bias"), B1, HID, 0);
        /* An unknown prefixed name is reported without its prefix. */
        const char *unknown[] = {"aux:bn_moving_max"};
        CHECK_EQ_INT(mxk_executor_copy_params_from(ex, 1, unknown, arrays, 0, NULL, NULL, 0),
                     MXK_ERR_NOT_FOUND);
        CHECK(strcmp(mxk_get_last_error(),
                     "Find name bn_moving_max that is not in the auxiliary states") == 0);
        const char *arg_in_aux[] = {"arg:fc1_weight"};
        CHECK_EQ_INT(mxk_executor_copy_params_from(ex, 0, NULL, NULL, 1, arg_in_aux, arrays, 0),
                     MXK_OK);
        ET_CHECK_ARRAY(mxk_executor_arg(ex, "fc1_weight"), W1, HID * IN, 0);
        mxk_ndarray_fill(mxk_executor_arg(ex, "data"), 0);
        mxk_ndarray_copy_from_host(mxk_executor_arg(ex, "data"), X[0], sizeof X[0]);
        CHECK_EQ_INT(mxk_executor_forward(ex, 0), MXK_OK);
        float want[OUT];
        reference(X[0], NULL, want);
        ET_CHECK_ARRAY(mxk_executor_output(ex, 0), want, OUT, 1e-5);
    }
    mxk_executor_free(ex);
    mxk_symbol_free(sym);
    mxk_ndarray_list_free(num, arrays, names);
    mxk_free(json);
    mxk_free(params);
}

/** Registries enumerate by count and index; past the end is NULL or MXK_ERR_NOT_FOUND. */
static void test_enumeration(void) {
    uint32_t n = mxk_iterator_count(), t = mxk_kvstore_transport_count();
    uint32_t d = mxk_device_backend_count(), o = mxk_op_count();
    CHECK(n >= 2 && d >= 1 && o > 50); /* MNISTIter, CSVIter; cpu; cpu-blas's operators */
    CHECK(mxk_iterator_name(n - 1) != NULL && mxk_iterator_name(n) == NULL);
    CHECK(mxk_kvstore_transport_name(t) == NULL);
    CHECK(mxk_op_name(o - 1) != NULL && mxk_op_name(o) == NULL);
    int32_t type = -1;
    const char *name = NULL, *plugin = NULL;
    CHECK_EQ_INT(mxk_device_get(d - 1, &type, &name, &plugin), MXK_OK);
    CHECK_EQ_INT(mxk_device_get(d, &type, &name, &plugin), MXK_ERR_NOT_FOUND);
    char want[80];
    snprintf(want, sizeof want, "device backend index %u out of range", d);
    CHECK(strcmp(mxk_get_last_error(), want) == 0);
}

int main(void) {
    if (et_init() != 0)
        return 1;
    MXK_RUN(test_predict);
    MXK_RUN(test_partial_out);
    MXK_RUN(test_reshape);
    MXK_RUN(test_errors);
    MXK_RUN(test_copy_params_prefixes);
    MXK_RUN(test_enumeration);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
