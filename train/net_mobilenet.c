/*
 * MobileNet (v1) and MobileNetV2 of MXNet's
 * example/image-classification/symbols/mobilenet.py (get_symbol, resolution 224)
 * and mobilenetv2.py (data 224x224), with upstream's node names and attributes.
 */
#include <math.h>

#include "net_build.h"

/**
 * mobilenet.py Conv NAME: Convolution "NAME_conv2d" (no bias), BatchNorm
 * "NAME_batchnorm" (fix_gamma), ReLU "NAME_relu".
 */
static mxk_symbol *v1_conv(nb *b, mxk_symbol *x, int32_t nf, int k, int s, int32_t g,
                           const char *name) {
    x = nb_op(b, "Convolution", &x, 1,
              "name=%s_conv2d;num_filter=%d;kernel=(%d, %d);num_group=%d;stride=(%d, %d);pad=(%d, "
              "%d);no_bias=True",
              name, nf, k, k, g, s, s, k / 2, k / 2);
    x = nb_op(b, "BatchNorm", &x, 1, "name=%s_batchnorm;fix_gamma=True", name);
    return nb_op(b, "Activation", &x, 1, "name=%s_relu;act_type=relu", name);
}

mxk_symbol *nb_mobilenet(nb *b, const mxkt_net_config *c) {
    /* conv_I_dw (depthwise 3x3, stride) then conv_I (1x1): depth = base * mult, out = depth * out
     */
    static const struct {
        int mult, stride, out;
    } layers[13] = {{1, 1, 2},  {2, 2, 2},  {4, 1, 1},  {4, 2, 2},  {8, 1, 1},
                    {8, 2, 2},  {16, 1, 1}, {16, 1, 1}, {16, 1, 1}, {16, 1, 1},
                    {16, 1, 1}, {16, 2, 2}, {32, 1, 1}};
    double a = c->multiplier;
    if (a != 0.25 && a != 0.5 && a != 0.75 && a != 1.0) {
        nb_fail(b, "mobilenet: Invalid alpha=%g, must be one of 0.25, 0.5, 0.75, 1", a);
        return NULL;
    }
    int32_t base = (int32_t)(32 * a);
    mxk_symbol *x = v1_conv(b, nb_var(b, "data"), base, 3, 2, 1, "conv_1");
    for (int i = 0; i < 13; i++) {
        char name[32];
        int32_t depth = base * layers[i].mult;
        snprintf(name, sizeof name, "conv_%d_dw", i + 2);
        x = v1_conv(b, x, depth, 3, layers[i].stride, depth, name);
        snprintf(name, sizeof name, "conv_%d", i + 2);
        x = v1_conv(b, x, depth * layers[i].out, 1, 1, 1, name);
    }
    x = nb_op(b, "Pooling", &x, 1, "name=global_pool;kernel=(7, 7);stride=(1, 1);pool_type=avg");
    x = nb_op(b, "Flatten", &x, 1, "name=flatten");
    x = nb_op(b, "FullyConnected", &x, 1, "name=fc;num_hidden=%d", c->num_classes);
    return nb_op(b, "SoftmaxOutput", &x, 1, "name=softmax");
}

/**
 * mobilenetv2.py mobilenet_unit PREFIX: Convolution "PREFIX-conv2d" (no bias),
 * BatchNorm "PREFIX-batchnorm" (eps 1e-5), and with act clip(0, 6) "PREFIX-relu6".
 */
static mxk_symbol *v2_unit(nb *b, mxk_symbol *x, int32_t nf, int k, int s, int32_t g, int act,
                           const char *prefix) {
    x = nb_op(b, "Convolution", &x, 1,
              "name=%s-conv2d;num_filter=%d;kernel=(%d, %d);num_group=%d;stride=(%d, %d);pad=(%d, "
              "%d);no_bias=True",
              prefix, nf, k, k, g, s, s, k / 2, k / 2);
    x = nb_op(b, "BatchNorm", &x, 1,
              "name=%s-batchnorm;fix_gamma=False;use_global_stats=False;eps=1e-05", prefix);
    return act ? nb_op(b, "clip", &x, 1, "name=%s-relu6;a_min=0;a_max=6", prefix) : x;
}

/** Python's int(round(x)): nearest, ties to even. */
static int32_t pyround(double x) {
    return (int32_t)nearbyint(x);
}

mxk_symbol *nb_mobilenetv2(nb *b, const mxkt_net_config *c) {
    static const int tcns[7][4] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                                   {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
    double m = c->multiplier;
    int32_t in_c = pyround(32 * m);
    mxk_symbol *x = v2_unit(b, nb_var(b, "data"), in_c, 3, 2, 1, 1, "first-3x3-conv");
    for (int i = 0; i < 7; i++) {
        int32_t out_c = pyround(tcns[i][1] * m);
        for (int j = 0; j < tcns[i][2]; j++) { /* inverted_residual_unit */
            char p[64], q[96];
            snprintf(p, sizeof p, "seq-%d-block%d", i, j);
            int32_t exp = pyround((j == 0 ? in_c : out_c) * (double)tcns[i][0]);
            snprintf(q, sizeof q, "%s-exp", p);
            mxk_symbol *y = v2_unit(b, x, exp, 1, 1, 1, 1, q);
            snprintf(q, sizeof q, "%s-depthwise", p);
            y = v2_unit(b, y, exp, 3, j == 0 ? tcns[i][3] : 1, exp, 1, q);
            snprintf(q, sizeof q, "%s-linear", p);
            y = v2_unit(b, y, out_c, 1, 1, 1, 0, q);
            x = j == 0 ? y
                       : nb_op(b, "elemwise_add", (mxk_symbol *[]){x, y}, 2, "name=%s-shortcut", p);
        }
        in_c = out_c;
    }
    x = v2_unit(b, x, m > 1.0 ? (int32_t)(1280 * m) : 1280, 1, 1, 1, 1, "last-1x1-conv");
    x = nb_op(b, "Pooling", &x, 1,
              "name=global_pool;kernel=(7, 7);stride=(1, 1);pool_type=avg;global_pool=True");
    x = nb_op(b, "Flatten", &x, 1, "name=flatten");
    x = nb_op(b, "FullyConnected", &x, 1, "name=fc;num_hidden=%d", c->num_classes);
    return nb_op(b, "SoftmaxOutput", &x, 1, "name=softmax");
}
