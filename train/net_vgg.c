/*
 * VGG and AlexNet of MXNet's example/image-classification/symbols/vgg.py and
 * alexnet.py (1.9.1): plain convolution stacks with a dropout classifier, with
 * upstream's node names and attributes.
 */
#include "net_build.h"

/** vgg.py get_classifier + SoftmaxOutput: flatten, fc6/fc7 (4096, ReLU, dropout 0.5), fc8. */
static mxk_symbol *vgg_head(nb *b, mxk_symbol *x, int32_t num_classes) {
    x = nb_op(b, "Flatten", &x, 1, "name=flatten");
    for (int i = 6; i <= 7; i++) {
        x = nb_op(b, "FullyConnected", &x, 1, "name=fc%d;num_hidden=4096", i);
        x = nb_op(b, "Activation", &x, 1, "name=relu%d;act_type=relu", i);
        x = nb_op(b, "Dropout", &x, 1, "name=drop%d;p=0.5", i);
    }
    x = nb_op(b, "FullyConnected", &x, 1, "name=fc8;num_hidden=%d", num_classes);
    return nb_op(b, "SoftmaxOutput", &x, 1, "name=softmax");
}

/** vgg.py: 5 stages of 3x3 convolutions (64..512 filters), each ending in a 2x2 max pool. */
mxk_symbol *nb_vgg(nb *b, const mxkt_net_config *c) {
    static const int32_t filters[5] = {64, 128, 256, 512, 512};
    static const int32_t spec[4][6] = {
        {11, 1, 1, 2, 2, 2}, {13, 2, 2, 2, 2, 2}, {16, 2, 2, 3, 3, 3}, {19, 2, 2, 4, 4, 4}};
    int32_t L = c->num_layers ? c->num_layers : 11;
    const int32_t *layers = NULL;
    for (int k = 0; k < 4; k++)
        if (spec[k][0] == L)
            layers = spec[k] + 1;
    if (layers == NULL) {
        nb_fail(b, "vgg: Invalide num_layers %d. Possible choices are 11,13,16,19.", L);
        return NULL;
    }
    mxk_symbol *x = nb_var(b, "data");
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j < layers[i]; j++) {
            x = nb_op(b, "Convolution", &x, 1,
                      "name=conv%d_%d;kernel=(3, 3);pad=(1, 1);num_filter=%d", i + 1, j + 1,
                      filters[i]);
            if (c->batch_norm)
                x = nb_op(b, "BatchNorm", &x, 1, "name=bn%d_%d", i + 1, j + 1);
            x = nb_op(b, "Activation", &x, 1, "name=relu%d_%d;act_type=relu", i + 1, j + 1);
        }
        x = nb_op(b, "Pooling", &x, 1, "name=pool%d;pool_type=max;kernel=(2, 2);stride=(2, 2)",
                  i + 1);
    }
    return vgg_head(b, x, c->num_classes);
}

/** alexnet.py: a convolution and its automatically named ReLU. */
static mxk_symbol *conv_relu(nb *b, mxk_symbol *x, int i, const char *geometry, int32_t nf) {
    x = nb_op(b, "Convolution", &x, 1, "name=conv%d;%s;num_filter=%d", i, geometry, nf);
    return nb_op(b, "Activation", &x, 1, "act_type=relu");
}

/** alexnet.py: ReLU'd convolutions with LRN and 3x3/2 max pools, then fc1/fc2 (4096) and fc3. */
mxk_symbol *nb_alexnet(nb *b, const mxkt_net_config *c) {
    static const char lrn[] = "alpha=0.0001;beta=0.75;knorm=2;nsize=5";
    static const char pool[] = "pool_type=max;kernel=(3, 3);stride=(2, 2)";
    mxk_symbol *x = nb_var(b, "data");
    x = conv_relu(b, x, 1, "kernel=(11, 11);stride=(4, 4)", 96);
    x = nb_op(b, "LRN", &x, 1, "%s", lrn);
    x = nb_op(b, "Pooling", &x, 1, "%s", pool);
    x = conv_relu(b, x, 2, "kernel=(5, 5);pad=(2, 2)", 256);
    x = nb_op(b, "LRN", &x, 1, "%s", lrn);
    x = nb_op(b, "Pooling", &x, 1, "%s", pool);
    x = conv_relu(b, x, 3, "kernel=(3, 3);pad=(1, 1)", 384);
    x = conv_relu(b, x, 4, "kernel=(3, 3);pad=(1, 1)", 384);
    x = conv_relu(b, x, 5, "kernel=(3, 3);pad=(1, 1)", 256);
    x = nb_op(b, "Pooling", &x, 1, "%s", pool);
    x = nb_op(b, "Flatten", &x, 1, "%s", "");
    for (int i = 1; i <= 2; i++) {
        x = nb_op(b, "FullyConnected", &x, 1, "name=fc%d;num_hidden=4096", i);
        x = nb_op(b, "Activation", &x, 1, "act_type=relu");
        x = nb_op(b, "Dropout", &x, 1, "p=0.5");
    }
    x = nb_op(b, "FullyConnected", &x, 1, "name=fc3;num_hidden=%d", c->num_classes);
    return nb_op(b, "SoftmaxOutput", &x, 1, "name=softmax");
}
