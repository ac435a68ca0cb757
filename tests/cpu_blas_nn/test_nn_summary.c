/*
 * LeNet and VGG-16 built through the public symbol API (mxk_symbol_create) on
 * the cpu-blas operators: shape inference from data (1,1,28,28) and
 * (1,3,224,224) gives MXNet's output shapes and parameter counts (LeNet
 * 431,080; VGG-16 138,357,544). With argv[1], the two symbols
 * are also saved there as lenet-symbol.json / vgg16-symbol.json (for the CLI
 * test of `mxk symbol summary`).
 */
#include <stdlib.h>
#include <string.h>

#include "mxk.h"
#include "testing.h"

/** Applies `op` named `name` to `in` with attributes "k=v" pairs (NULL-terminated). */
static mxk_symbol *apply(const char *op, const char *name, mxk_symbol *in, const char *const *kv) {
    const char *k[8], *v[8];
    uint32_t n = 0;
    for (; kv && kv[2 * n]; n++)
        k[n] = kv[2 * n], v[n] = kv[2 * n + 1];
    mxk_symbol *out = NULL;
    if (mxk_symbol_create(op, name, n, k, v, 1, NULL, &in, &out) != MXK_OK) {
        fprintf(stderr, "%s %s: %s\n", op, name, mxk_get_last_error());
        mxk_t_failed_checks++;
    }
    mxk_symbol_free(in);
    return out;
}

/** LeNet as in the MXNet.jl / Python examples. */
static mxk_symbol *lenet(void) {
    mxk_symbol *x = NULL;
    mxk_symbol_variable("data", &x);
    x = apply("Convolution", "conv1", x,
              (const char *[]){"kernel", "(5,5)", "num_filter", "20", NULL});
    x = apply("Activation", "tanh1", x, (const char *[]){"act_type", "tanh", NULL});
    x = apply("Pooling", "pool1", x,
              (const char *[]){"pool_type", "max", "kernel", "(2,2)", "stride", "(2,2)", NULL});
    x = apply("Convolution", "conv2", x,
              (const char *[]){"kernel", "(5,5)", "num_filter", "50", NULL});
    x = apply("Activation", "tanh2", x, (const char *[]){"act_type", "tanh", NULL});
    x = apply("Pooling", "pool2", x,
              (const char *[]){"pool_type", "max", "kernel", "(2,2)", "stride", "(2,2)", NULL});
    x = apply("Flatten", "flatten", x, NULL);
    x = apply("FullyConnected", "fc1", x, (const char *[]){"num_hidden", "500", NULL});
    x = apply("Activation", "tanh3", x, (const char *[]){"act_type", "tanh", NULL});
    x = apply("FullyConnected", "fc2", x, (const char *[]){"num_hidden", "10", NULL});
    return apply("SoftmaxOutput", "softmax", x, NULL);
}

/** VGG-16 (configuration D) with dropout in the classifier. */
static mxk_symbol *vgg16(void) {
    static const int blocks[5][2] = {{2, 64}, {2, 128}, {3, 256}, {3, 512}, {3, 512}};
    mxk_symbol *x = NULL;
    mxk_symbol_variable("data", &x);
    char name[32], nf[16];
    for (int b = 0; b < 5; b++) {
        for (int l = 0; l < blocks[b][0]; l++) {
            snprintf(name, sizeof name, "conv%d_%d", b + 1, l + 1);
            snprintf(nf, sizeof nf, "%d", blocks[b][1]);
            x = apply("Convolution", name, x,
                      (const char *[]){"kernel", "(3,3)", "pad", "(1,1)", "num_filter", nf, NULL});
            snprintf(name, sizeof name, "relu%d_%d", b + 1, l + 1);
            x = apply("Activation", name, x, (const char *[]){"act_type", "relu", NULL});
        }
        snprintf(name, sizeof name, "pool%d", b + 1);
        x = apply("Pooling", name, x,
                  (const char *[]){"pool_type", "max", "kernel", "(2,2)", "stride", "(2,2)", NULL});
    }
    x = apply("Flatten", "flatten", x, NULL);
    x = apply("FullyConnected", "fc6", x, (const char *[]){"num_hidden", "4096", NULL});
    x = apply("Activation", "relu6", x, (const char *[]){"act_type", "relu", NULL});
    x = apply("Dropout", "drop6", x, (const char *[]){"p", "0.5", NULL});
    x = apply("FullyConnected", "fc7", x, (const char *[]){"num_hidden", "4096", NULL});
    x = apply("Activation", "relu7", x, (const char *[]){"act_type", "relu", NULL});
    x = apply("Dropout", "drop7", x, (const char *[]){"p", "0.5", NULL});
    x = apply("FullyConnected", "fc8", x, (const char *[]){"num_hidden", "1000", NULL});
    return apply("SoftmaxOutput", "softmax", x, NULL);
}

/** Infers shapes from `data`; returns the parameter count; *out gets the first output. */
static uint64_t infer(const mxk_symbol *s, mxk_shape data, mxk_shape *out, mxk_shape *args,
                      char ***names, uint32_t *nargs) {
    const char *nm[] = {"data"};
    int32_t complete = 0;
    if (mxk_symbol_list_names(s, MXK_SYMBOL_ARGUMENTS, nargs, names) != MXK_OK)
        return 0;
    if (mxk_symbol_infer_shape(s, 1, nm, &data, args, out, NULL, &complete) != MXK_OK) {
        fprintf(stderr, "infer_shape: %s\n", mxk_get_last_error());
        mxk_t_failed_checks++;
        return 0;
    }
    CHECK_EQ_INT(complete, 1);
    uint64_t total = 0;
    for (uint32_t i = 0; i < *nargs; i++) {
        if (!strcmp((*names)[i], "data") || !strcmp((*names)[i], "softmax_label"))
            continue;
        uint64_t c = 1;
        for (int d = 0; d < args[i].ndim; d++)
            c *= (uint64_t)args[i].dims[d];
        total += c;
    }
    return total;
}

static const char *g_save_dir;

static void test_lenet(void) {
    mxk_symbol *s = lenet();
    if (s == NULL)
        return;
    mxk_shape data = {.ndim = 4, .dims = {1, 1, 28, 28}}, out[2], args[16];
    char **names = NULL;
    uint32_t n = 0;
    CHECK_EQ_INT(infer(s, data, out, args, &names, &n), 431080);
    CHECK(out[0].ndim == 2 && out[0].dims[0] == 1 && out[0].dims[1] == 10);
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(names[i], "fc1_weight"))
            CHECK(args[i].dims[0] == 500 && args[i].dims[1] == 800); /* 50*4*4 */
        else if (!strcmp(names[i], "conv2_weight"))
            CHECK(args[i].dims[0] == 50 && args[i].dims[1] == 20 && args[i].dims[2] == 5);
    mxk_string_list_free(names);
    if (g_save_dir) {
        char path[1024];
        snprintf(path, sizeof path, "%s/lenet-symbol.json", g_save_dir);
        CHECK_EQ_INT(mxk_symbol_save(s, path), MXK_OK);
    }
    mxk_symbol_free(s);
}

static void test_vgg16(void) {
    mxk_symbol *s = vgg16();
    if (s == NULL)
        return;
    mxk_shape data = {.ndim = 4, .dims = {1, 3, 224, 224}}, out[2], args[48];
    char **names = NULL;
    uint32_t n = 0;
    CHECK_EQ_INT(infer(s, data, out, args, &names, &n), 138357544);
    CHECK(out[0].ndim == 2 && out[0].dims[0] == 1 && out[0].dims[1] == 1000);
    for (uint32_t i = 0; i < n; i++)
        if (!strcmp(names[i], "fc6_weight"))
            CHECK(args[i].dims[0] == 4096 && args[i].dims[1] == 25088); /* 512*7*7 */
    mxk_string_list_free(names);
    if (g_save_dir) {
        char path[1024];
        snprintf(path, sizeof path, "%s/vgg16-symbol.json", g_save_dir);
        CHECK_EQ_INT(mxk_symbol_save(s, path), MXK_OK);
    }
    mxk_symbol_free(s);
}

int main(int argc, char **argv) {
    g_save_dir = argc > 1 ? argv[1] : NULL;
    mxk_init_options opt = {.struct_size = sizeof opt, .config_dir = BUILD_CONFDIR};
    if (mxk_init(&opt) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    MXK_RUN(test_lenet);
    MXK_RUN(test_vgg16);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
