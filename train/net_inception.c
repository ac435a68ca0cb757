/*
 * GoogLeNet, Inception-BN and Inception-v3 of MXNet's
 * example/image-classification/symbols/googlenet.py, inception-bn.py and
 * inception-v3.py (1.9.1): towers of convolutions joined by Concat, with
 * upstream's node names and attributes.
 */
#include "net_build.h"

/** Geometry of a convolution or pooling: kernel, stride, pad (rows, columns). */
typedef struct geo {
    int kh, kw, sh, sw, ph, pw;
} geo;

/** k x k kernel, stride s, pad p. */
static geo sq(int k, int s, int p) {
    return (geo){k, k, s, s, p, p};
}

/** The three conv factories: googlenet's (conv, ReLU), inception-bn's (conv, BN, ReLU), v3's. */
typedef enum style { GOOGLENET, INCEPTION_BN, INCEPTION_V3 } style;

/**
 * ConvFactory / Conv of the three files, node NAME+SUFFIX: googlenet "conv_N",
 * "relu_N"; inception-bn "conv_N", "bn_N" (eps 1e-10 + 1e-5, momentum 0.9),
 * "relu_N"; inception-v3 "N_conv2d" (no bias), "N_batchnorm" (fix_gamma),
 * "N_relu". Kernel, stride and pad are always written, as upstream passes them.
 */
static mxk_symbol *cf(nb *b, style st, mxk_symbol *x, int32_t nf, geo g, const char *name,
                      const char *suffix) {
    char full[160], conv[176];
    snprintf(full, sizeof full, "%s%s", name, suffix);
    snprintf(conv, sizeof conv, st == INCEPTION_V3 ? "%s_conv2d" : "conv_%s", full);
    x = nb_op(b, "Convolution", &x, 1,
              "name=%s;num_filter=%d;kernel=(%d, %d);stride=(%d, %d);pad=(%d, %d)%s", conv, nf,
              g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, st == INCEPTION_V3 ? ";no_bias=True" : "");
    if (st == INCEPTION_BN)
        x = nb_op(b, "BatchNorm", &x, 1,
                  "name=bn_%s;fix_gamma=False;eps=1.0000100000000001e-05;momentum=0.9", full);
    if (st == INCEPTION_V3) {
        x = nb_op(b, "BatchNorm", &x, 1, "name=%s_batchnorm;fix_gamma=True", full);
        return nb_op(b, "Activation", &x, 1, "name=%s_relu;act_type=relu", full);
    }
    return nb_op(b, "Activation", &x, 1, "name=relu_%s;act_type=relu", full);
}

/** Pooling `type` (max, avg) NAME (NULL: automatic); pad < 0 in g: no pad attribute. */
static mxk_symbol *pool(nb *b, mxk_symbol *x, const char *type, geo g, const char *name) {
    char pad[32] = "", nm[160] = "";
    if (g.ph >= 0)
        snprintf(pad, sizeof pad, ";pad=(%d, %d)", g.ph, g.pw);
    if (name)
        snprintf(nm, sizeof nm, "name=%s;", name);
    return nb_op(b, "Pooling", &x, 1, "%skernel=(%d, %d);stride=(%d, %d)%s;pool_type=%s", nm, g.kh,
                 g.kw, g.sh, g.sw, pad, type);
}

/** The pool branch of a block: Pooling "TYPE_pool_NAME_pool". */
static mxk_symbol *block_pool(nb *b, mxk_symbol *x, const char *type, geo g, const char *name) {
    char nm[160];
    snprintf(nm, sizeof nm, "%s_pool_%s_pool", type, name);
    return pool(b, x, type, g, nm);
}

/** Concat of n towers named FMT % NAME. */
static mxk_symbol *concat(nb *b, mxk_symbol *const *t, uint32_t n, const char *prefix,
                          const char *name, const char *suffix) {
    return nb_op(b, "Concat", t, n, "name=%s%s%s;num_args=%u", prefix, name, suffix, n);
}

/** Names "NAME_TAIL" into buf. */
static const char *cat(char *buf, size_t size, const char *name, const char *tail) {
    snprintf(buf, size, "%s_%s", name, tail);
    return buf;
}

/**
 * googlenet.py InceptionFactory and inception-bn.py InceptionFactoryA: 1x1, 3x3
 * reduce + 3x3, 5x5 (googlenet) or double 3x3 (inception-bn) reduce + tower, pool
 * + 1x1 projection.
 */
static mxk_symbol *inception_a(nb *b, style st, mxk_symbol *d, const int32_t n[6], const char *pt,
                               const char *name) {
    char t[160];
    mxk_symbol *tw[4];
    tw[0] = cf(b, st, d, n[0], sq(1, 1, 0), cat(t, sizeof t, name, "1x1"), "");
    tw[1] = cf(b, st, d, n[1], sq(1, 1, 0), cat(t, sizeof t, name, "3x3"), "_reduce");
    tw[1] = cf(b, st, tw[1], n[2], sq(3, 1, 1), t, "");
    if (st == GOOGLENET) {
        tw[2] = cf(b, st, d, n[3], sq(1, 1, 0), cat(t, sizeof t, name, "5x5"), "_reduce");
        tw[2] = cf(b, st, tw[2], n[4], sq(5, 1, 2), t, "");
    } else {
        tw[2] = cf(b, st, d, n[3], sq(1, 1, 0), cat(t, sizeof t, name, "double_3x3"), "_reduce");
        tw[2] = cf(b, st, tw[2], n[4], sq(3, 1, 1), cat(t, sizeof t, name, "double_3x3_0"), "");
        tw[2] = cf(b, st, tw[2], n[4], sq(3, 1, 1), cat(t, sizeof t, name, "double_3x3_1"), "");
    }
    tw[3] = cf(b, st, block_pool(b, d, pt, sq(3, 1, 1), name), n[5], sq(1, 1, 0),
               cat(t, sizeof t, name, "proj"), "");
    return concat(b, tw, 4, "ch_concat_", name, "_chconcat");
}

/** The shared tail: Flatten, FullyConnected, SoftmaxOutput ("flatten" named or automatic). */
static mxk_symbol *head(nb *b, mxk_symbol *x, const char *flatten, const char *fc,
                        int32_t classes) {
    x = flatten ? nb_op(b, "Flatten", &x, 1, "name=%s", flatten)
                : nb_op(b, "Flatten", &x, 1, "%s", "");
    x = fc ? nb_op(b, "FullyConnected", &x, 1, "name=%s;num_hidden=%d", fc, classes)
           : nb_op(b, "FullyConnected", &x, 1, "num_hidden=%d", classes);
    return nb_op(b, "SoftmaxOutput", &x, 1, "name=softmax");
}

mxk_symbol *nb_googlenet(nb *b, const mxkt_net_config *c) {
    static const struct {
        const char *name;
        int32_t n[6];
        int pool_after; /* a 3x3/2 max pool follows */
    } blocks[9] = {
        {"in3a", {64, 96, 128, 16, 32, 32}, 0},     {"in3b", {128, 128, 192, 32, 96, 64}, 1},
        {"in4a", {192, 96, 208, 16, 48, 64}, 0},    {"in4b", {160, 112, 224, 24, 64, 64}, 0},
        {"in4c", {128, 128, 256, 24, 64, 64}, 0},   {"in4d", {112, 144, 288, 32, 64, 64}, 0},
        {"in4e", {256, 160, 320, 32, 128, 128}, 1}, {"in5a", {256, 160, 320, 32, 128, 128}, 0},
        {"in5b", {384, 192, 384, 48, 128, 128}, 0}};
    geo p3 = {3, 3, 2, 2, -1, -1};
    mxk_symbol *x = nb_var(b, "data");
    x = cf(b, GOOGLENET, x, 64, sq(7, 2, 3), "conv1", "");
    x = pool(b, x, "max", p3, NULL);
    x = cf(b, GOOGLENET, x, 64, sq(1, 1, 0), "conv2", "");
    x = cf(b, GOOGLENET, x, 192, sq(3, 1, 1), "conv3", "");
    x = pool(b, x, "max", p3, NULL);
    for (int i = 0; i < 9; i++) {
        x = inception_a(b, GOOGLENET, x, blocks[i].n, "max", blocks[i].name);
        if (blocks[i].pool_after)
            x = pool(b, x, "max", p3, NULL);
    }
    x = nb_op(b, "Pooling", &x, 1, "kernel=(7, 7);stride=(1, 1);global_pool=True;pool_type=avg");
    return head(b, x, NULL, NULL, c->num_classes);
}

/** inception-bn.py InceptionFactoryB: strided 3x3 and double 3x3 towers and a max pool. */
static mxk_symbol *inception_bn_b(nb *b, mxk_symbol *d, int32_t n3r, int32_t n3, int32_t nd3r,
                                  int32_t nd3, const char *name) {
    char t[160];
    mxk_symbol *tw[3];
    tw[0] = cf(b, INCEPTION_BN, d, n3r, sq(1, 1, 0), cat(t, sizeof t, name, "3x3"), "_reduce");
    tw[0] = cf(b, INCEPTION_BN, tw[0], n3, sq(3, 2, 1), t, "");
    tw[1] =
        cf(b, INCEPTION_BN, d, nd3r, sq(1, 1, 0), cat(t, sizeof t, name, "double_3x3"), "_reduce");
    tw[1] =
        cf(b, INCEPTION_BN, tw[1], nd3, sq(3, 1, 1), cat(t, sizeof t, name, "double_3x3_0"), "");
    tw[1] =
        cf(b, INCEPTION_BN, tw[1], nd3, sq(3, 2, 1), cat(t, sizeof t, name, "double_3x3_1"), "");
    snprintf(t, sizeof t, "max_pool_%s_pool", name);
    tw[2] = pool(b, d, "max", sq(3, 2, 1), t);
    return concat(b, tw, 3, "ch_concat_", name, "_chconcat");
}

/** inception-bn.py SimpleFactory (ch3 > 0: 1x1 and 3x3) or DownsampleFactory (ch3 == 0). */
static mxk_symbol *inception_bn_small(nb *b, mxk_symbol *d, int32_t ch1, int32_t ch3,
                                      const char *name) {
    char t[160];
    mxk_symbol *tw[2];
    if (ch3 > 0) {
        tw[0] = cf(b, INCEPTION_BN, d, ch1, sq(1, 1, 0), cat(t, sizeof t, name, "1x1"), "");
        tw[1] = cf(b, INCEPTION_BN, d, ch3, sq(3, 1, 1), cat(t, sizeof t, name, "3x3"), "");
    } else {
        tw[0] = cf(b, INCEPTION_BN, d, ch1, sq(3, 2, 1), cat(t, sizeof t, name, "conv"), "");
        tw[1] = pool(b, d, "max", sq(3, 2, 1), cat(t, sizeof t, name, "pool"));
    }
    return concat(b, tw, 2, "", name, "_ch_concat");
}

mxk_symbol *nb_inception_bn(nb *b, const mxkt_net_config *c) {
    mxk_symbol *x = nb_var(b, "data");
    if (c->image_shape[1] <= 28) {
        static const struct {
            const char *name;
            int32_t ch1, ch3; /* ch3 0: DownsampleFactory */
        } small[10] = {{"in3a", 32, 32},   {"in3b", 32, 48},  {"in3c", 80, 0},  {"in4a", 112, 48},
                       {"in4b", 96, 64},   {"in4c", 80, 80},  {"in4d", 48, 96}, {"in4e", 96, 0},
                       {"in5a", 176, 160}, {"in5b", 176, 160}};
        x = cf(b, INCEPTION_BN, x, 96, sq(3, 1, 1), "1", "");
        for (int i = 0; i < 10; i++)
            x = inception_bn_small(b, x, small[i].ch1, small[i].ch3, small[i].name);
        x = nb_op(b, "Pooling", &x, 1, "name=global_pool;pool_type=avg;kernel=(7, 7)");
        return head(b, x, NULL, NULL, c->num_classes);
    }
    static const struct {
        const char *name;
        int32_t n[6]; /* n[5] 0: InceptionFactoryB of n[0..3] */
        const char *pool;
    } blocks[10] = {{"3a", {64, 64, 64, 64, 96, 32}, "avg"},
                    {"3b", {64, 64, 96, 64, 96, 64}, "avg"},
                    {"3c", {128, 160, 64, 96, 0, 0}, NULL},
                    {"4a", {224, 64, 96, 96, 128, 128}, "avg"},
                    {"4b", {192, 96, 128, 96, 128, 128}, "avg"},
                    {"4c", {160, 128, 160, 128, 160, 128}, "avg"},
                    {"4d", {96, 128, 192, 160, 192, 128}, "avg"},
                    {"4e", {128, 192, 192, 256, 0, 0}, NULL},
                    {"5a", {352, 192, 320, 160, 224, 128}, "avg"},
                    {"5b", {352, 192, 320, 192, 224, 128}, "max"}};
    geo p3 = {3, 3, 2, 2, -1, -1};
    x = cf(b, INCEPTION_BN, x, 64, sq(7, 2, 3), "1", "");
    x = pool(b, x, "max", p3, "pool_1");
    x = cf(b, INCEPTION_BN, x, 64, sq(1, 1, 0), "2_red", "");
    x = cf(b, INCEPTION_BN, x, 192, sq(3, 1, 1), "2", "");
    x = pool(b, x, "max", p3, "pool_2");
    for (int i = 0; i < 10; i++)
        x = blocks[i].pool
                ? inception_a(b, INCEPTION_BN, x, blocks[i].n, blocks[i].pool, blocks[i].name)
                : inception_bn_b(b, x, blocks[i].n[0], blocks[i].n[1], blocks[i].n[2],
                                 blocks[i].n[3], blocks[i].name);
    x = nb_op(b, "Pooling", &x, 1, "name=global_pool;kernel=(7, 7);stride=(1, 1);pool_type=avg");
    return head(b, x, NULL, NULL, c->num_classes);
}

/** inception-v3.py Conv NAME+SUFFIX (with kernel kh x kw, stride s, pad ph, pw). */
static mxk_symbol *v3(nb *b, mxk_symbol *x, int32_t nf, geo g, const char *name, const char *tail,
                      const char *suffix) {
    char t[160];
    return cf(b, INCEPTION_V3, x, nf, g, tail ? cat(t, sizeof t, name, tail) : name, suffix);
}

/** 1x1, 1x7, 7x1, 1x3, 3x1 with the pads that keep the size. */
static const geo one = {1, 1, 1, 1, 0, 0}, row7 = {1, 7, 1, 1, 0, 3}, col7 = {7, 1, 1, 1, 3, 0},
                 row3 = {1, 3, 1, 1, 0, 1}, col3 = {3, 1, 1, 1, 1, 0};

/** Inception7A: 1x1, 5x5, double 3x3 and pool-projection towers. */
static mxk_symbol *v3_a(nb *b, mxk_symbol *d, int32_t proj, const char *name) {
    mxk_symbol *t[4];
    t[0] = v3(b, d, 64, one, name, "conv", "");
    t[1] = v3(b, d, 48, one, name, "tower", "_conv");
    t[1] = v3(b, t[1], 64, sq(5, 1, 2), name, "tower", "_conv_1");
    t[2] = v3(b, d, 64, one, name, "tower_1", "_conv");
    t[2] = v3(b, t[2], 96, sq(3, 1, 1), name, "tower_1", "_conv_1");
    t[2] = v3(b, t[2], 96, sq(3, 1, 1), name, "tower_1", "_conv_2");
    t[3] = v3(b, block_pool(b, d, "avg", sq(3, 1, 1), name), proj, one, name, "tower_2", "_conv");
    return concat(b, t, 4, "ch_concat_", name, "_chconcat");
}

/** Inception7C: 1x1, 7x7 factorised twice, pool-projection (n: 1x1, d7 x3, q7 x5). */
static mxk_symbol *v3_c(nb *b, mxk_symbol *d, int32_t n7, const char *name) {
    mxk_symbol *t[4];
    t[0] = v3(b, d, 192, one, name, "conv", "");
    t[1] = v3(b, d, n7, one, name, "tower", "_conv");
    t[1] = v3(b, t[1], n7, row7, name, "tower", "_conv_1");
    t[1] = v3(b, t[1], 192, col7, name, "tower", "_conv_2");
    t[2] = v3(b, d, n7, one, name, "tower_1", "_conv");
    t[2] = v3(b, t[2], n7, col7, name, "tower_1", "_conv_1");
    t[2] = v3(b, t[2], n7, row7, name, "tower_1", "_conv_2");
    t[2] = v3(b, t[2], n7, col7, name, "tower_1", "_conv_3");
    t[2] = v3(b, t[2], 192, row7, name, "tower_1", "_conv_4");
    t[3] = v3(b, block_pool(b, d, "avg", sq(3, 1, 1), name), 192, one, name, "tower_2", "_conv");
    return concat(b, t, 4, "ch_concat_", name, "_chconcat");
}

/** Inception7E: 1x1, split 3x3, double split 3x3, pool-projection (pool: avg or max). */
static mxk_symbol *v3_e(nb *b, mxk_symbol *d, const char *pt, const char *name) {
    mxk_symbol *t[6];
    t[0] = v3(b, d, 320, one, name, "conv", "");
    mxk_symbol *d3 = v3(b, d, 384, one, name, "tower", "_conv");
    t[1] = v3(b, d3, 384, row3, name, "tower", "_mixed_conv");
    t[2] = v3(b, d3, 384, col3, name, "tower", "_mixed_conv_1");
    mxk_symbol *q = v3(b, d, 448, one, name, "tower_1", "_conv");
    q = v3(b, q, 384, sq(3, 1, 1), name, "tower_1", "_conv_1");
    t[3] = v3(b, q, 384, row3, name, "tower_1", "_mixed_conv");
    t[4] = v3(b, q, 384, col3, name, "tower_1", "_mixed_conv_1");
    t[5] = v3(b, block_pool(b, d, pt, sq(3, 1, 1), name), 192, one, name, "tower_2", "_conv");
    return concat(b, t, 6, "ch_concat_", name, "_chconcat");
}

mxk_symbol *nb_inception_v3(nb *b, const mxkt_net_config *c) {
    mxk_symbol *x = nb_op(b, "_copy", (mxk_symbol *[]){nb_var(b, "data")}, 1, "name=id");
    geo p3 = {3, 3, 2, 2, -1, -1};
    x = v3(b, x, 32, sq(3, 2, 0), "conv", NULL, "");
    x = v3(b, x, 32, sq(3, 1, 0), "conv_1", NULL, "");
    x = v3(b, x, 64, sq(3, 1, 1), "conv_2", NULL, "");
    x = pool(b, x, "max", p3, "pool");
    x = v3(b, x, 80, one, "conv_3", NULL, "");
    x = v3(b, x, 192, sq(3, 1, 0), "conv_4", NULL, "");
    x = pool(b, x, "max", p3, "pool1");
    x = v3_a(b, x, 32, "mixed");
    x = v3_a(b, x, 64, "mixed_1");
    x = v3_a(b, x, 64, "mixed_2");
    { /* Inception7B "mixed_3" */
        mxk_symbol *t[3];
        t[0] = v3(b, x, 384, sq(3, 2, 0), "mixed_3", "conv", "");
        t[1] = v3(b, x, 64, one, "mixed_3", "tower", "_conv");
        t[1] = v3(b, t[1], 96, sq(3, 1, 1), "mixed_3", "tower", "_conv_1");
        t[1] = v3(b, t[1], 96, sq(3, 2, 0), "mixed_3", "tower", "_conv_2");
        t[2] = pool(b, x, "max", sq(3, 2, 0), "max_pool_mixed_3_pool");
        x = concat(b, t, 3, "ch_concat_", "mixed_3", "_chconcat");
    }
    x = v3_c(b, x, 128, "mixed_4");
    x = v3_c(b, x, 160, "mixed_5");
    x = v3_c(b, x, 160, "mixed_6");
    x = v3_c(b, x, 192, "mixed_7");
    { /* Inception7D "mixed_8" */
        mxk_symbol *t[3];
        t[0] = v3(b, x, 192, one, "mixed_8", "tower", "_conv");
        t[0] = v3(b, t[0], 320, sq(3, 2, 0), "mixed_8", "tower", "_conv_1");
        t[1] = v3(b, x, 192, one, "mixed_8", "tower_1", "_conv");
        t[1] = v3(b, t[1], 192, row7, "mixed_8", "tower_1", "_conv_1");
        t[1] = v3(b, t[1], 192, col7, "mixed_8", "tower_1", "_conv_2");
        t[1] = v3(b, t[1], 192, sq(3, 2, 0), "mixed_8", "tower_1", "_conv_3");
        t[2] = pool(b, x, "max", p3, "max_pool_mixed_8_pool");
        x = concat(b, t, 3, "ch_concat_", "mixed_8", "_chconcat");
    }
    x = v3_e(b, x, "avg", "mixed_9");
    x = v3_e(b, x, "max", "mixed_10");
    x = nb_op(b, "Pooling", &x, 1, "name=global_pool;kernel=(8, 8);stride=(1, 1);pool_type=avg");
    return head(b, x, "flatten", "fc1", c->num_classes);
}
