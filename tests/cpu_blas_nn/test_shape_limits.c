/*
 * Shapes no memory can hold and attribute values no computation can use, refused
 * by cpu-blas's shape inference and attribute parsing with exact messages (never
 * signed overflow, never a shape with more than MXK_SDK_MAX_ELEMS = 2^60
 * elements): Convolution / Deconvolution padding, stride and kernel arithmetic,
 * Pooling, UpSampling, Crop offsets, Concat sums, Reshape's -3 / -4, Flatten,
 * FullyConnected and Embedding weights, broadcast and dot outputs; NaN / Inf in
 * LRN, LeakyReLU, BatchNorm, the samplers, grad_scale and optimizer rates. A shape
 * at the limit is accepted. Also the model-file route: a symbol JSON whose
 * Convolution pads (2147483647, 2147483647), refused at bind.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk.h"
#include "testing.h"

static const mxk_context cpu = {MXK_DEV_CPU, 0};

/** "(1152921504606846976 elements)": the limit as the messages print it. */
#define LIMIT "1152921504606846976"

/** A shape from up to 4 dims (ndim given). */
static mxk_shape shp(int32_t nd, int64_t a, int64_t b, int64_t c, int64_t d) {
    mxk_shape s;
    memset(&s, 0, sizeof s);
    s.ndim = nd;
    int64_t v[4] = {a, b, c, d};
    for (int32_t i = 0; i < nd; i++)
        s.dims[i] = v[i];
    return s;
}

/**
 * Creates an instance of `op` with `n` attributes "k=v" (NULL-terminated pairs
 * in kv) and inputs `in` (count ni); expects status `want` and, when `msg` is not
 * NULL, that the error contains it.
 */
static void expect(const char *file, int line, const char *op, const char *const *kv, uint32_t ni,
                   const mxk_shape *in, mxk_status want, const char *msg) {
    const char *k[16], *v[16];
    uint32_t n = 0;
    for (; kv[2 * n] != NULL; n++) {
        k[n] = kv[2 * n];
        v[n] = kv[2 * n + 1];
    }
    mxk_op_instance *inst = NULL;
    mxk_status st = mxk_op_instance_create(op, n, k, v, cpu, ni, in, NULL, &inst);
    if (st != want || (msg != NULL && strstr(mxk_get_last_error(), msg) == NULL)) {
        fprintf(stderr, "%s:%d: %s: status %d (want %d), error \"%s\"\n  want \"%s\"\n", file, line,
                op, (int)st, (int)want, st ? mxk_get_last_error() : "", msg ? msg : "");
        mxk_t_failed_checks++;
    }
    mxk_op_instance_free(inst);
}
#define EXPECT(op, kv, ni, in, want, msg) expect(__FILE__, __LINE__, op, kv, ni, in, want, msg)

/** Convolution's pad (2^31-1, 2^31-1): a 2^64-element output, not Ho*Wo overflow. */
static void test_convolution_pad(void) {
    const char *kv[] = {"kernel", "(3,3)", "num_filter", "1", "pad", "(2147483647,2147483647)",
                        NULL};
    mxk_shape in[3] = {shp(4, 1, 1, 8, 8)};
    EXPECT("Convolution", kv, 3, in, MXK_ERR_SHAPE,
           "Convolution: output 'output': shape (1,1,4294967300,4294967300) has too many "
           "elements (more than " LIMIT ")");
    /* a dilated kernel of 2^62 against an input of 2^40 */
    const char *kd[] = {"kernel", "(2147483647,1)", "dilate", "(2147483647,1)", "num_filter", "1",
                        NULL};
    in[0] = shp(4, 1, 1, INT64_C(1) << 40, 1);
    EXPECT("Convolution", kd, 3, in, MXK_ERR_SHAPE,
           "Convolution: kernel size exceed input: dilated kernel 4611686011984936963 > input "
           "1099511627776 + 2 * pad 0");
    /* data over the limit */
    in[0] = shp(4, 1, 1, INT64_C(1) << 40, INT64_C(1) << 40);
    EXPECT("Convolution", kv, 3, in, MXK_ERR_SHAPE,
           "Convolution: argument 'data': shape (1,1,1099511627776,1099511627776) has too many "
           "elements (more than " LIMIT ")");
}

/** Deconvolution: stride * (input - 1) checked; pads from target_shape too. */
static void test_deconvolution(void) {
    const char *kv[] = {"kernel", "(1,1)", "num_filter", "1", "stride", "(2147483647,1)", NULL};
    mxk_shape in[2] = {shp(4, 1, 1, INT64_C(1) << 40, 1)};
    EXPECT("Deconvolution", kv, 2, in, MXK_ERR_SHAPE,
           "Deconvolution: stride * (input size - 1): 2147483647 * 1099511627775 is too large "
           "(more than " LIMIT " elements)");
    const char *kt[] = {"kernel",         "(1,1)",        "num_filter", "1", "stride",
                        "(2147483647,1)", "target_shape", "(4,1)",      NULL};
    EXPECT("Deconvolution", kt, 2, in, MXK_ERR_SHAPE,
           "Deconvolution: stride * (input size - 1): 2147483647 * 1099511627775 is too large");
}

/** Pooling, UpSampling, Crop. */
static void test_pooling_upsampling_crop(void) {
    const char *kp[] = {"kernel", "(2,2)", "pool_type", "max", "pooling_convention", "full", NULL};
    mxk_shape in = shp(4, 1, 1, INT64_C(1) << 61, 1);
    EXPECT("Pooling", kp, 1, &in, MXK_ERR_SHAPE,
           "Pooling: argument 'data': shape (1,1,2305843009213693952,1) has too many elements");
    const char *ku[] = {"scale", "4096", "sample_type", "nearest", "num_args", "1", NULL};
    in = shp(4, 1, 1, INT64_C(1) << 50, 1);
    EXPECT("UpSampling", ku, 1, &in, MXK_ERR_SHAPE,
           "UpSampling: output height (height * scale): 1125899906842624 * 4096 is too large "
           "(more than " LIMIT " elements)");
    const char *kc[] = {"num_args", "1", "h_w", "(1,1)", "offset", "(9223372036854775807,0)", NULL};
    in = shp(4, 1, 1, 4, 4);
    EXPECT("Crop", kc, 1, &in, MXK_ERR_INVALID_ARGUMENT,
           "Crop: attribute 'offset': expected two integers in [0, 2147483647] (y, x)");
}

/** Concat's sum along the axis; broadcast and dot outputs; FC and Embedding weights. */
static void test_sums_and_products(void) {
    const char *kc[] = {"num_args", "2", "dim", "0", NULL};
    mxk_shape two[2] = {shp(1, INT64_C(1) << 60, 0, 0, 0), shp(1, INT64_C(1) << 60, 0, 0, 0)};
    EXPECT("Concat", kc, 2, two, MXK_ERR_SHAPE,
           "Concat: output size along the axis: 1152921504606846976 + 1152921504606846976 is too "
           "large");
    const char *none[] = {NULL};
    mxk_shape bc[2] = {shp(2, INT64_C(1) << 40, 1, 0, 0), shp(2, 1, INT64_C(1) << 40, 0, 0)};
    EXPECT("broadcast_add", none, 2, bc, MXK_ERR_SHAPE,
           "broadcast_add: output 'output': shape (1099511627776,1099511627776) has too many "
           "elements");
    mxk_shape dt[2] = {shp(2, INT64_C(1) << 40, 2, 0, 0), shp(2, 2, INT64_C(1) << 40, 0, 0)};
    EXPECT("dot", none, 2, dt, MXK_ERR_SHAPE,
           "dot: output 'output': shape (1099511627776,1099511627776) has too many elements");
    const char *kf[] = {"num_hidden", "2147483647", "no_bias", "true", NULL};
    mxk_shape fc[2] = {shp(2, 2, INT64_C(1) << 40, 0, 0)};
    EXPECT("FullyConnected", kf, 2, fc, MXK_ERR_SHAPE,
           "FullyConnected: argument 'weight': shape (2147483647,1099511627776) has too many "
           "elements");
    const char *ke[] = {"input_dim", "1099511627776", "output_dim", "1099511627776", NULL};
    mxk_shape em[2] = {shp(1, 4, 0, 0, 0)};
    EXPECT("Embedding", ke, 2, em, MXK_ERR_SHAPE,
           "Embedding: argument 'weight': shape (1099511627776,1099511627776) has too many "
           "elements");
    /* exactly the limit is accepted: (2^30, 2^30) weight of a 2^30-wide input */
    const char *kok[] = {"num_hidden", "1073741824", "no_bias", "true", NULL};
    fc[0] = shp(2, 1, INT64_C(1) << 30, 0, 0);
    EXPECT("FullyConnected", kok, 2, fc, MXK_OK, NULL);
}

/** Reshape's -3 and -4 without overflow; Flatten of too large data. */
static void test_reshape(void) {
    const char *k4[] = {"shape", "(-4,4294967296,4294967296)", NULL};
    mxk_shape in = shp(1, 16, 0, 0, 0);
    EXPECT("Reshape", k4, 1, &in, MXK_ERR_SHAPE,
           "Reshape: shape (-4,4294967296,4294967296): split sizes 4294967296, 4294967296 do "
           "not divide input dim 16 of (16,)");
    const char *k3[] = {"shape", "(-3,)", NULL};
    in = shp(2, INT64_C(1) << 40, INT64_C(1) << 40, 0, 0);
    EXPECT("Reshape", k3, 1, &in, MXK_ERR_SHAPE,
           "Reshape: argument 'data': shape (1099511627776,1099511627776) has too many elements");
    const char *none[] = {NULL};
    EXPECT("Flatten", none, 1, &in, MXK_ERR_SHAPE,
           "Flatten: argument 'data': shape (1099511627776,1099511627776) has too many elements");
}

/** NaN / Inf where the value must be finite: the raw value quoted. */
static void test_finite_attributes(void) {
    mxk_shape x = shp(4, 1, 3, 2, 2), v = shp(2, 2, 3, 0, 0);
    const char *lrn[] = {"nsize", "3", "alpha", "nan", NULL};
    EXPECT("LRN", lrn, 1, &x, MXK_ERR_INVALID_ARGUMENT,
           "LRN: attribute 'alpha': must be finite, got 'nan'");
    const char *lrn_b[] = {"nsize", "3", "beta", "inf", NULL};
    EXPECT("LRN", lrn_b, 1, &x, MXK_ERR_INVALID_ARGUMENT,
           "LRN: attribute 'beta': must be finite, got 'inf'");
    const char *lrn_k[] = {"nsize", "3", "knorm", "-Infinity", NULL};
    EXPECT("LRN", lrn_k, 1, &x, MXK_ERR_INVALID_ARGUMENT,
           "LRN: attribute 'knorm': must be finite, got '-Infinity'");
    const char *lr[] = {"act_type", "leaky", "slope", "NaN", NULL};
    EXPECT("LeakyReLU", lr, 1, &v, MXK_ERR_INVALID_ARGUMENT,
           "LeakyReLU: attribute 'slope': must be finite, got 'NaN'");
    const char *smo[] = {"grad_scale", "inf", NULL};
    mxk_shape sm[2] = {v, shp(1, 2, 0, 0, 0)};
    EXPECT("SoftmaxOutput", smo, 2, sm, MXK_ERR_INVALID_ARGUMENT,
           "SoftmaxOutput: attribute 'grad_scale': must be finite, got 'inf'");
    const char *reg[] = {"grad_scale", "nan", NULL};
    mxk_shape rg[2] = {v, v};
    EXPECT("LinearRegressionOutput", reg, 2, rg, MXK_ERR_INVALID_ARGUMENT,
           "LinearRegressionOutput: attribute 'grad_scale': must be finite, got 'nan'");
    const char *bn[] = {"momentum", "nan", NULL};
    EXPECT("BatchNorm", bn, 1, &x, MXK_ERR_INVALID_ARGUMENT,
           "BatchNorm: attribute 'momentum': must be finite, got 'nan'");
    const char *sgd[] = {"lr", "inf", NULL};
    mxk_shape wg[2] = {v, v};
    EXPECT("sgd_update", sgd, 2, wg, MXK_ERR_INVALID_ARGUMENT,
           "sgd_update: attribute 'lr': must be finite, got 'inf'");
    const char *rnd[] = {"shape", "(2,)", "high", "inf", NULL};
    EXPECT("random_uniform", rnd, 0, NULL, MXK_ERR_INVALID_ARGUMENT,
           "random_uniform: attribute 'high': must be finite, got 'inf'");
}

/** The model-file route: symbol JSON with the huge pads, refused at simple_bind. */
static void test_model_file_at_bind(void) {
    const char *js = "{\"nodes\":[{\"op\":\"null\",\"name\":\"data\",\"inputs\":[]},"
                     "{\"op\":\"null\",\"name\":\"c_weight\",\"inputs\":[]},"
                     "{\"op\":\"null\",\"name\":\"c_bias\",\"inputs\":[]},"
                     "{\"op\":\"Convolution\",\"name\":\"c\",\"attrs\":{\"kernel\":\"(3,3)\","
                     "\"num_filter\":\"1\",\"pad\":\"(2147483647,2147483647)\"},"
                     "\"inputs\":[[0,0,0],[1,0,0],[2,0,0]]}],"
                     "\"arg_nodes\":[0,1,2],\"node_row_ptr\":[0,1,2,3,4],\"heads\":[[3,0,0]],"
                     "\"attrs\":{\"mxnet_version\":[\"int\",10901]}}";
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxk_symbol_from_json(js, &s), MXK_OK);
    if (s == NULL)
        return;
    const char *names[] = {"data"};
    mxk_shape shapes[] = {shp(4, 1, 1, 8, 8)};
    mxk_executor *ex = NULL;
    CHECK_EQ_INT(
        mxk_executor_simple_bind(s, cpu, 1, names, shapes, "write", 0, NULL, NULL, NULL, &ex),
        MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "Error in operator c: Convolution: output 'output': shape "
                   "(1,1,4294967300,4294967300) has too many elements (more than " LIMIT ")");
    CHECK(ex == NULL);
    mxk_symbol_free(s);
}

int main(void) {
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = BUILD_CONFDIR};
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    MXK_RUN(test_convolution_pad);
    MXK_RUN(test_deconvolution);
    MXK_RUN(test_pooling_upsampling_crop);
    MXK_RUN(test_sums_and_products);
    MXK_RUN(test_reshape);
    MXK_RUN(test_finite_attributes);
    MXK_RUN(test_model_file_at_bind);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
