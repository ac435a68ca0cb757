/*
 * ResNet and ResNeXt of MXNet's example/image-classification/symbols/resnet.py
 * and resnext.py (1.9.1): pre-activation residual units (He et al., "Identity
 * Mappings in Deep Residual Networks") and ResNeXt's post-activation grouped
 * bottleneck units, with upstream's node names and attributes, the CIFAR-style
 * variant for small images and the ImageNet one otherwise.
 */
#include "net_build.h"

/** The depth of a configuration (get_symbol of resnet.py / resnext.py). */
typedef struct res_plan {
    int32_t num_stages, units[4], filters[5], bottleneck;
} res_plan;

/**
 * get_symbol's table: for height <= small_h (28 for resnet, 32 for resnext) 3
 * stages, (L-2)/9 bottleneck units of 64/128/256 filters when L >= 164, else
 * (L-2)/6 basic units of 16/32/64; otherwise 4 stages for L in 18, 34, 50, 101,
 * 152, 200, 269 (bottleneck from 50 on); num_layers 0 is 20 for small images,
 * else 50 (train_cifar10.py / train_imagenet.py use 110 and 50). Other depths
 * fail as upstream:
 * "no experiments done on num_layers L, you can do it yourself".
 */
static int res_plan_of(nb *b, const mxkt_net_config *c, int64_t small_h, res_plan *p) {
    static const int32_t depth[7] = {18, 34, 50, 101, 152, 200, 269};
    static const int32_t units[7][4] = {{2, 2, 2, 2},  {3, 4, 6, 3},   {3, 4, 6, 3},  {3, 4, 23, 3},
                                        {3, 8, 36, 3}, {3, 24, 36, 3}, {3, 30, 48, 8}};
    int32_t L = c->num_layers ? c->num_layers : c->image_shape[1] <= small_h ? 20 : 50;
    if (c->image_shape[1] <= small_h) {
        static const int32_t wide[4] = {16, 64, 128, 256}, narrow[4] = {16, 16, 32, 64};
        p->num_stages = 3;
        p->bottleneck = (L - 2) % 9 == 0 && L >= 164;
        if (!p->bottleneck && !((L - 2) % 6 == 0 && L < 164))
            goto unknown;
        for (int i = 0; i < 4; i++)
            p->filters[i] = p->bottleneck ? wide[i] : narrow[i];
        for (int i = 0; i < 3; i++)
            p->units[i] = (L - 2) / (p->bottleneck ? 9 : 6);
        return 1;
    }
    static const int32_t big[5] = {64, 256, 512, 1024, 2048}, basic[5] = {64, 64, 128, 256, 512};
    p->num_stages = 4;
    p->bottleneck = L >= 50;
    for (int i = 0; i < 5; i++)
        p->filters[i] = p->bottleneck ? big[i] : basic[i];
    for (int d = 0; d < 7; d++)
        if (depth[d] == L) {
            for (int i = 0; i < 4; i++)
                p->units[i] = units[d][i];
            return 1;
        }
unknown:
    nb_fail(b, "%s: no experiments done on num_layers %d, you can do it yourself", c->network, L);
    return 0;
}

/** BatchNorm PREFIX+SUFFIX (eps 2e-5, momentum 0.9) as the residual units write it. */
static mxk_symbol *bn(nb *b, mxk_symbol *x, int fix_gamma, const char *prefix, const char *suffix) {
    return nb_op(b, "BatchNorm", &x, 1, "name=%s%s;fix_gamma=%s;eps=2e-05;momentum=0.9", prefix,
                 suffix, fix_gamma ? "True" : "False");
}

/** ReLU Activation PREFIX+SUFFIX. */
static mxk_symbol *relu(nb *b, mxk_symbol *x, const char *prefix, const char *suffix) {
    return nb_op(b, "Activation", &x, 1, "name=%s%s;act_type=relu", prefix, suffix);
}

/**
 * Convolution PREFIX+SUFFIX without bias (workspace 256): k x k kernel, stride s, pad p
 * (p < 0: no pad attribute, as the shortcuts), groups g (g == 1: no num_group
 * attribute).
 */
static mxk_symbol *conv(nb *b, mxk_symbol *x, const char *prefix, const char *suffix, int32_t nf,
                        int k, int s, int p, int32_t g) {
    char pad[32] = "", group[32] = "";
    if (p >= 0)
        snprintf(pad, sizeof pad, ";pad=(%d, %d)", p, p);
    if (g != 1)
        snprintf(group, sizeof group, ";num_group=%d", g);
    return nb_op(b, "Convolution", &x, 1,
                 "name=%s%s;num_filter=%d%s;kernel=(%d, %d);stride=(%d, %d)%s;no_bias=True;"
                 "workspace=256",
                 prefix, suffix, nf, group, k, k, s, s, pad);
}

/** resnet.py residual_unit: BN-ReLU-conv twice (bottleneck: thrice, 1/4 width). */
static mxk_symbol *resnet_unit(nb *b, mxk_symbol *data, int32_t nf, int s, int match,
                               const char *name, int bottleneck) {
    mxk_symbol *act1 = relu(b, bn(b, data, 0, name, "_bn1"), name, "_relu1");
    mxk_symbol *body;
    if (bottleneck) {
        int32_t q = (int32_t)(nf * 0.25);
        body = conv(b, act1, name, "_conv1", q, 1, 1, 0, 1);
        body = relu(b, bn(b, body, 0, name, "_bn2"), name, "_relu2");
        body = conv(b, body, name, "_conv2", q, 3, s, 1, 1);
        body = relu(b, bn(b, body, 0, name, "_bn3"), name, "_relu3");
        body = conv(b, body, name, "_conv3", nf, 1, 1, 0, 1);
    } else {
        body = conv(b, act1, name, "_conv1", nf, 3, s, 1, 1);
        body = relu(b, bn(b, body, 0, name, "_bn2"), name, "_relu2");
        body = conv(b, body, name, "_conv2", nf, 3, 1, 1, 1);
    }
    mxk_symbol *sc = match ? data : conv(b, act1, name, "_sc", nf, 1, s, -1, 1);
    return nb_plus(b, body, sc);
}

/** resnext.py residual_unit: conv-BN(-ReLU) with a grouped 3x3, BN'd shortcut, ReLU after the sum.
 */
static mxk_symbol *resnext_unit(nb *b, mxk_symbol *data, int32_t nf, int s, int match,
                                const char *name, int bottleneck, int32_t groups) {
    mxk_symbol *body;
    if (bottleneck) {
        int32_t h = (int32_t)(nf * 0.5);
        body = conv(b, data, name, "_conv1", h, 1, 1, 0, 1);
        body = relu(b, bn(b, body, 0, name, "_bn1"), name, "_relu1");
        body = conv(b, body, name, "_conv2", h, 3, s, 1, groups);
        body = relu(b, bn(b, body, 0, name, "_bn2"), name, "_relu2");
        body = conv(b, body, name, "_conv3", nf, 1, 1, 0, 1);
        body = bn(b, body, 0, name, "_bn3");
    } else {
        body = conv(b, data, name, "_conv1", nf, 3, s, 1, 1);
        body = relu(b, bn(b, body, 0, name, "_bn1"), name, "_relu1");
        body = conv(b, body, name, "_conv2", nf, 3, 1, 1, 1);
        body = bn(b, body, 0, name, "_bn2");
    }
    mxk_symbol *sc = data;
    if (!match)
        sc = bn(b, conv(b, data, name, "_sc", nf, 1, s, -1, 1), 0, name, "_sc_bn");
    return relu(b, nb_plus(b, body, sc), name, "_relu");
}

/** The shared body of resnet() and resnext(): stem, stages, (resnet: bn1, relu1), head. */
static mxk_symbol *residual_net(nb *b, const mxkt_net_config *c, int next) {
    res_plan p;
    if (!res_plan_of(b, c, next ? 32 : 28, &p))
        return NULL;
    mxk_symbol *x = nb_op(b, "_copy", (mxk_symbol *[]){nb_var(b, "data")}, 1, "name=id");
    x = bn(b, x, 1, "bn_data", "");
    if (c->image_shape[1] <= 32) {
        x = conv(b, x, "conv0", "", p.filters[0], 3, 1, 1, 1);
    } else {
        x = conv(b, x, "conv0", "", p.filters[0], 7, 2, 3, 1);
        x = relu(b, bn(b, x, 0, "bn0", ""), "relu0", "");
        x = nb_op(b, "Pooling", &x, 1, "kernel=(3, 3);stride=(2, 2);pad=(1, 1);pool_type=max");
    }
    for (int i = 0; i < p.num_stages; i++)
        for (int j = 0; j < (p.units[i] > 1 ? p.units[i] : 1); j++) { /* unit 1, then units-1 */
            char name[64];
            int s = j == 0 && i > 0 ? 2 : 1;
            snprintf(name, sizeof name, "stage%d_unit%d", i + 1, j + 1);
            x = next ? resnext_unit(b, x, p.filters[i + 1], s, j > 0, name, p.bottleneck,
                                    c->num_group)
                     : resnet_unit(b, x, p.filters[i + 1], s, j > 0, name, p.bottleneck);
        }
    if (!next)
        x = relu(b, bn(b, x, 0, "bn1", ""), "relu1", "");
    x = nb_op(b, "Pooling", &x, 1, "name=pool1;global_pool=True;kernel=(7, 7);pool_type=avg");
    x = nb_op(b, "Flatten", &x, 1, "%s", "");
    x = nb_op(b, "FullyConnected", &x, 1, "name=fc1;num_hidden=%d", c->num_classes);
    return nb_op(b, "SoftmaxOutput", &x, 1, "name=softmax");
}

mxk_symbol *nb_resnet(nb *b, const mxkt_net_config *c) {
    return residual_net(b, c, 0);
}

mxk_symbol *nb_resnext(nb *b, const mxkt_net_config *c) {
    return residual_net(b, c, 1);
}
