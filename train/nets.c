/*
 * The networks of mxk_train (mxk_train.h "Networks"): MXNet.jl's MNIST MLP and LeNet
 * (julia/docs/src/tutorial/mnist.md, julia/examples/mnist/mlp.jl and lenet.jl) and the
 * dispatch of mxkt_net_create to the model-zoo builders (net_*.c).
 */
#include <string.h>

#include "net_build.h"

/** data → fc1(128) → relu → fc2(64) → relu → fc3(10) → SoftmaxOutput "softmax". */
static mxk_symbol *nb_mlp(nb *b, const mxkt_net_config *c) {
    mxk_symbol *x = nb_var(b, "data");
    x = nb_op(b, "FullyConnected", &x, 1, "name=fc1;num_hidden=128");
    x = nb_op(b, "Activation", &x, 1, "name=relu1;act_type=relu");
    x = nb_op(b, "FullyConnected", &x, 1, "name=fc2;num_hidden=64");
    x = nb_op(b, "Activation", &x, 1, "name=relu2;act_type=relu");
    x = nb_op(b, "FullyConnected", &x, 1, "name=fc3;num_hidden=%d", c->num_classes);
    return nb_op(b, "SoftmaxOutput", &x, 1, "name=softmax");
}

/** LeNet: conv 5x5x20 tanh pool 2/2, conv 5x5x50 tanh pool 2/2, fc 500 tanh, fc 10, softmax. */
static mxk_symbol *nb_lenet(nb *b, const mxkt_net_config *c) {
    static const char pool[] = "pool_type=max;kernel=(2,2);stride=(2,2)";
    mxk_symbol *x = nb_var(b, "data");
    x = nb_op(b, "Convolution", &x, 1, "name=convolution0;kernel=(5,5);num_filter=20");
    x = nb_op(b, "Activation", &x, 1, "name=activation0;act_type=tanh");
    x = nb_op(b, "Pooling", &x, 1, "name=pooling0;%s", pool);
    x = nb_op(b, "Convolution", &x, 1, "name=convolution1;kernel=(5,5);num_filter=50");
    x = nb_op(b, "Activation", &x, 1, "name=activation1;act_type=tanh");
    x = nb_op(b, "Pooling", &x, 1, "name=pooling1;%s", pool);
    x = nb_op(b, "Flatten", &x, 1, "name=flatten0");
    x = nb_op(b, "FullyConnected", &x, 1, "name=fullyconnected0;num_hidden=500");
    x = nb_op(b, "Activation", &x, 1, "name=activation2;act_type=tanh");
    x = nb_op(b, "FullyConnected", &x, 1, "name=fullyconnected1;num_hidden=%d", c->num_classes);
    return nb_op(b, "SoftmaxOutput", &x, 1, "name=softmax");
}

/** A network of mxkt_net_create: its name and builder. */
typedef struct net_entry {
    const char *name;
    mxk_symbol *(*build)(nb *b, const mxkt_net_config *c);
} net_entry;

static const net_entry nets[] = {
    {"mlp", nb_mlp},
    {"lenet", nb_lenet},
    {"resnet", nb_resnet},
    {"resnext", nb_resnext},
    {"vgg", nb_vgg},
    {"alexnet", nb_alexnet},
    {"googlenet", nb_googlenet},
    {"inception-bn", nb_inception_bn},
    {"inception-v3", nb_inception_v3},
    {"mobilenet", nb_mobilenet},
    {"mobilenetv2", nb_mobilenetv2},
};

const char *mxkt_net_names(void) {
    return "mlp, lenet, resnet, resnext, vgg, alexnet, googlenet, inception-bn, inception-v3, "
           "mobilenet, mobilenetv2";
}

void mxkt_net_config_default(mxkt_net_config *c, const char *network) {
    memset(c, 0, sizeof *c);
    c->network = network;
    c->num_classes = 10;
    c->image_shape[0] = 1;
    c->image_shape[1] = 28;
    c->image_shape[2] = 28;
    c->num_group = 32;
    c->multiplier = 1.0;
}

mxk_status mxkt_net_create(const mxkt_net_config *c, mxk_symbol **out) {
    const net_entry *e = NULL;
    for (size_t i = 0; c->network && i < sizeof nets / sizeof nets[0]; i++)
        if (strcmp(c->network, nets[i].name) == 0)
            e = &nets[i];
    if (e == NULL)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "unknown network '%s' (%s)",
                          c->network ? c->network : "(null)", mxkt_net_names());
    if (c->num_classes < 1 || c->num_classes > MXKT_NET_MAX_DIM)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "%s: num_classes %d is not in [1, %d]", e->name,
                          c->num_classes, MXKT_NET_MAX_DIM);
    for (int i = 0; i < 3; i++)
        if (c->image_shape[i] < 1 || c->image_shape[i] > MXKT_NET_MAX_DIM)
            return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                              "%s: image_shape %lld,%lld,%lld: each dim must be in [1, %d]",
                              e->name, (long long)c->image_shape[0], (long long)c->image_shape[1],
                              (long long)c->image_shape[2], MXKT_NET_MAX_DIM);
    if (c->num_layers < 0 || c->num_layers > MXKT_NET_MAX_DIM)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "%s: num_layers %d is not in [0, %d]", e->name,
                          c->num_layers, MXKT_NET_MAX_DIM);
    if (c->num_group < 1 || c->num_group > MXKT_NET_MAX_DIM)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "%s: num_group %d is not in [1, %d]", e->name,
                          c->num_group, MXKT_NET_MAX_DIM);
    if (!(c->multiplier > 0.0 && c->multiplier <= 16.0))
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "%s: multiplier %g is not in (0, 16]", e->name,
                          c->multiplier);
    nb b;
    memset(&b, 0, sizeof b);
    return nb_finish(&b, e->build(&b, c), out);
}

mxk_status mxkt_net_mlp(mxk_symbol **out) {
    mxkt_net_config c;
    mxkt_net_config_default(&c, "mlp");
    return mxkt_net_create(&c, out);
}

mxk_status mxkt_net_lenet(mxk_symbol **out) {
    mxkt_net_config c;
    mxkt_net_config_default(&c, "lenet");
    return mxkt_net_create(&c, out);
}
