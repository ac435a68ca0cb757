/*
 * The reference networks of the seed (digest operators-kvstore-module.md §5):
 * the MNIST MLP of MXNet.jl's tutorial (docs/tutorial/mnist.rst) and its LeNet
 * (examples/mnist/lenet.jl), named as upstream names them.
 */
#include <string.h>

#include "train_internal.h"

/** Applies `op` named `name` to `in` with attributes (NULL-terminated key, value list). */
static mxk_status layer(const char *op, const char *name, mxk_symbol *in, const char *const *kv,
                        mxk_symbol **out) {
    const char *keys[8], *vals[8];
    uint32_t n = 0;
    for (; kv && kv[2 * n] && n < 8; n++) {
        keys[n] = kv[2 * n];
        vals[n] = kv[2 * n + 1];
    }
    mxk_status st = mxk_symbol_create(op, name, n, keys, vals, 1, NULL, &in, out);
    mxk_symbol_free(in);
    return st == MXK_OK ? st : mxkt_kernel_error(st, name);
}

/** data → fc1(128) → relu → fc2(64) → relu → fc3(10) → SoftmaxOutput "softmax". */
mxk_status mxkt_net_mlp(mxk_symbol **out) {
    mxk_symbol *s = NULL;
    mxk_status st = mxk_symbol_variable("data", &s);
    if (st != MXK_OK)
        return mxkt_kernel_error(st, "data");
    static const char *const fc1[] = {"num_hidden", "128", NULL};
    static const char *const fc2[] = {"num_hidden", "64", NULL};
    static const char *const fc3[] = {"num_hidden", "10", NULL};
    static const char *const relu[] = {"act_type", "relu", NULL};
    MXKT_CHECK(layer("FullyConnected", "fc1", s, fc1, &s));
    MXKT_CHECK(layer("Activation", "relu1", s, relu, &s));
    MXKT_CHECK(layer("FullyConnected", "fc2", s, fc2, &s));
    MXKT_CHECK(layer("Activation", "relu2", s, relu, &s));
    MXKT_CHECK(layer("FullyConnected", "fc3", s, fc3, &s));
    MXKT_CHECK(layer("SoftmaxOutput", "softmax", s, NULL, &s));
    *out = s;
    return MXK_OK;
}

/** LeNet: conv 5x5x20 tanh pool 2/2, conv 5x5x50 tanh pool 2/2, fc 500 tanh, fc 10, softmax. */
mxk_status mxkt_net_lenet(mxk_symbol **out) {
    mxk_symbol *s = NULL;
    mxk_status st = mxk_symbol_variable("data", &s);
    if (st != MXK_OK)
        return mxkt_kernel_error(st, "data");
    static const char *const c0[] = {"kernel", "(5,5)", "num_filter", "20", NULL};
    static const char *const c1[] = {"kernel", "(5,5)", "num_filter", "50", NULL};
    static const char *const pool[] = {"pool_type", "max",   "kernel", "(2,2)",
                                       "stride",    "(2,2)", NULL};
    static const char *const tanh_[] = {"act_type", "tanh", NULL};
    static const char *const f0[] = {"num_hidden", "500", NULL};
    static const char *const f1[] = {"num_hidden", "10", NULL};
    MXKT_CHECK(layer("Convolution", "convolution0", s, c0, &s));
    MXKT_CHECK(layer("Activation", "activation0", s, tanh_, &s));
    MXKT_CHECK(layer("Pooling", "pooling0", s, pool, &s));
    MXKT_CHECK(layer("Convolution", "convolution1", s, c1, &s));
    MXKT_CHECK(layer("Activation", "activation1", s, tanh_, &s));
    MXKT_CHECK(layer("Pooling", "pooling1", s, pool, &s));
    MXKT_CHECK(layer("Flatten", "flatten0", s, NULL, &s));
    MXKT_CHECK(layer("FullyConnected", "fullyconnected0", s, f0, &s));
    MXKT_CHECK(layer("Activation", "activation2", s, tanh_, &s));
    MXKT_CHECK(layer("FullyConnected", "fullyconnected1", s, f1, &s));
    MXKT_CHECK(layer("SoftmaxOutput", "softmax", s, NULL, &s));
    *out = s;
    return MXK_OK;
}
