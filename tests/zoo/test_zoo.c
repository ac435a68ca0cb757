/*
 * The model-zoo builders of mxk_train (mxkt_net_create) against upstream:
 * each network of tests/zoo/fixtures/ (written by MXNet 1.9.1's
 * example/image-classification/symbols/ through gen_fixtures.py) is built
 * with the same configuration, and both graphs, serialised by mxk, must be the
 * same JSON: node names, operators, attributes (variables' too), inputs and
 * heads. Bad configurations get upstream's errors.
 *
 *   test_zoo FIXTURE_DIR
 */
#include <stdlib.h>
#include <string.h>

#include "mxk_train.h"
#include "testing.h"

static const char *fixture_dir;

/** One fixture: its file stem and the configuration gen_fixtures.py used. */
typedef struct zoo_case {
    const char *file, *network;
    int32_t num_classes, num_layers;
    int64_t c, h, w;
    int32_t batch_norm, num_group;
    double multiplier;
} zoo_case;

static const zoo_case cases[] = {
    {"resnet20_28", "resnet", 10, 20, 1, 28, 28, 0, 32, 1},
    {"resnet18_224", "resnet", 1000, 18, 3, 224, 224, 0, 32, 1},
    {"resnet50_224", "resnet", 1000, 50, 3, 224, 224, 0, 32, 1},
    {"resnext50_224", "resnext", 1000, 50, 3, 224, 224, 0, 32, 1},
    {"resnext20_28", "resnext", 10, 20, 1, 28, 28, 0, 32, 1},
    {"vgg11", "vgg", 10, 11, 3, 32, 32, 0, 32, 1},
    {"vgg13_bn", "vgg", 10, 13, 3, 32, 32, 1, 32, 1},
    {"alexnet", "alexnet", 10, 0, 3, 224, 224, 0, 32, 1},
    {"googlenet", "googlenet", 10, 0, 3, 224, 224, 0, 32, 1},
    {"inception_bn_28", "inception-bn", 10, 0, 1, 28, 28, 0, 32, 1},
    {"inception_bn_224", "inception-bn", 1000, 0, 3, 224, 224, 0, 32, 1},
    {"inception_v3", "inception-v3", 1000, 0, 3, 299, 299, 0, 32, 1},
    {"mobilenet", "mobilenet", 1000, 0, 3, 224, 224, 0, 32, 0.25},
    {"mobilenetv2", "mobilenetv2", 1000, 0, 3, 224, 224, 0, 32, 0.5},
};

/** The configuration of a case. */
static mxkt_net_config config_of(const zoo_case *z) {
    mxkt_net_config c;
    mxkt_net_config_default(&c, z->network);
    c.num_classes = z->num_classes;
    c.num_layers = z->num_layers;
    c.image_shape[0] = z->c;
    c.image_shape[1] = z->h;
    c.image_shape[2] = z->w;
    c.batch_norm = z->batch_norm;
    c.num_group = z->num_group;
    c.multiplier = z->multiplier;
    return c;
}

/** Prints where two JSON texts first differ (with context), for a failing case. */
static void show_difference(const char *name, const char *want, const char *got) {
    size_t i = 0;
    while (want[i] && want[i] == got[i])
        i++;
    size_t from = i > 120 ? i - 120 : 0;
    fprintf(stderr, "%s: differs at byte %zu\n  upstream: %.240s\n  mxk:      %.240s\n", name, i,
            want + from, got + from);
}

/** Every fixture equals the builder's graph. */
static void test_fixtures(void) {
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const zoo_case *z = &cases[k];
        char path[4096];
        snprintf(path, sizeof path, "%s/%s.json", fixture_dir, z->file);
        mxk_symbol *up = NULL, *ours = NULL;
        char *want = NULL, *got = NULL;
        mxkt_net_config c = config_of(z);
        CHECK_EQ_INT(mxk_symbol_load(path, &up), MXK_OK);
        mxk_status st = mxkt_net_create(&c, &ours);
        if (st != MXK_OK)
            fprintf(stderr, "%s: %s\n", z->file, mxkt_last_error());
        CHECK_EQ_INT(st, MXK_OK);
        if (up && ours && mxk_symbol_to_json(up, &want) == MXK_OK &&
            mxk_symbol_to_json(ours, &got) == MXK_OK && strcmp(want, got) != 0) {
            show_difference(z->file, want, got);
            CHECK(!"the builder's graph equals upstream's");
        }
        free(want);
        free(got);
        mxk_symbol_free(up);
        mxk_symbol_free(ours);
    }
}

/** Builds `network` with one field changed and checks the error. */
static void check_error(mxkt_net_config c, mxk_status want, const char *msg) {
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxkt_net_create(&c, &s), want);
    CHECK(s == NULL);
    CHECK_CONTAINS(mxkt_last_error(), msg);
}

/** Bad configurations: upstream's messages where upstream checks, ranges otherwise. */
static void test_errors(void) {
    mxkt_net_config c;
    mxkt_net_config_default(&c, "resnet-9");
    check_error(c, MXK_ERR_INVALID_ARGUMENT,
                "unknown network 'resnet-9' (mlp, lenet, resnet, resnext, vgg");
    mxkt_net_config_default(&c, "resnet");
    c.num_layers = 21;
    check_error(c, MXK_ERR_INVALID_ARGUMENT,
                "resnet: no experiments done on num_layers 21, you can do it yourself");
    c.image_shape[1] = c.image_shape[2] = 224;
    c.num_layers = 20;
    check_error(c, MXK_ERR_INVALID_ARGUMENT,
                "resnet: no experiments done on num_layers 20, you can do it yourself");
    mxkt_net_config_default(&c, "resnext");
    c.num_layers = 166; /* (166 - 2) % 9 != 0 and >= 164 */
    check_error(c, MXK_ERR_INVALID_ARGUMENT,
                "resnext: no experiments done on num_layers 166, you can do it yourself");
    mxkt_net_config_default(&c, "vgg");
    c.num_layers = 12;
    check_error(c, MXK_ERR_INVALID_ARGUMENT,
                "vgg: Invalide num_layers 12. Possible choices are 11,13,16,19.");
    mxkt_net_config_default(&c, "mobilenet");
    c.multiplier = 0.3;
    check_error(c, MXK_ERR_INVALID_ARGUMENT,
                "mobilenet: Invalid alpha=0.3, must be one of 0.25, 0.5, 0.75, 1");
    mxkt_net_config_default(&c, "mobilenetv2");
    c.multiplier = 0;
    check_error(c, MXK_ERR_INVALID_ARGUMENT, "mobilenetv2: multiplier 0 is not in (0, 16]");
    mxkt_net_config_default(&c, "lenet");
    c.num_classes = 0;
    check_error(c, MXK_ERR_INVALID_ARGUMENT, "lenet: num_classes 0 is not in [1, 65536]");
    mxkt_net_config_default(&c, "resnet");
    c.image_shape[0] = 0;
    check_error(c, MXK_ERR_INVALID_ARGUMENT,
                "resnet: image_shape 0,28,28: each dim must be in [1, 65536]");
    c.image_shape[0] = 1;
    c.num_group = 0;
    check_error(c, MXK_ERR_INVALID_ARGUMENT, "resnet: num_group 0 is not in [1, 65536]");
    c.num_group = 32;
    c.num_layers = -1;
    check_error(c, MXK_ERR_INVALID_ARGUMENT, "resnet: num_layers -1 is not in [0, 65536]");
}

/** Defaults: resnet/resnext 20 layers for 28x28 (3 stages of 3 units), 50 at 224; vgg 11. */
static void test_defaults(void) {
    static const struct {
        const char *network;
        int64_t h;
        const char *node; /* the last unit's name */
        const char *absent;
    } d[] = {{"resnet", 28, "stage3_unit3_conv2", "stage3_unit4_conv1"},
             {"resnet", 224, "stage4_unit3_conv3", "stage4_unit4_conv1"},
             {"resnext", 28, "stage3_unit3_conv2", "stage3_unit4_conv1"},
             {"vgg", 28, "conv5_2", "conv5_3"}};
    for (size_t k = 0; k < sizeof d / sizeof d[0]; k++) {
        mxkt_net_config c;
        mxkt_net_config_default(&c, d[k].network);
        c.image_shape[1] = c.image_shape[2] = d[k].h;
        mxk_symbol *s = NULL;
        char *json = NULL;
        CHECK_EQ_INT(mxkt_net_create(&c, &s), MXK_OK);
        CHECK_EQ_INT(mxk_symbol_to_json(s, &json), MXK_OK);
        char want[64], absent[64];
        snprintf(want, sizeof want, "\"%s\"", d[k].node);
        snprintf(absent, sizeof absent, "\"%s\"", d[k].absent);
        CHECK_CONTAINS(json, want);
        CHECK(json == NULL || strstr(json, absent) == NULL);
        free(json);
        mxk_symbol_free(s);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_zoo FIXTURE_DIR\n");
        return 2;
    }
    fixture_dir = argv[1];
    mxk_init_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.config_dir = BUILD_CONFDIR;
    if (mxk_init(&o) != MXK_OK || mxk_op_kernel_count("Convolution") == 0) {
        fprintf(stderr, "cpu-blas not loaded from %s: %s\n", BUILD_CONFDIR, mxk_get_last_error());
        return 77;
    }
    MXK_RUN(test_fixtures);
    MXK_RUN(test_errors);
    MXK_RUN(test_defaults);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
