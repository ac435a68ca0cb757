/*
 * BucketingModule (train/module_bucket.c; upstream python/mxnet/module/
 * bucketing_module.py): the buckets' executors share the default bucket's
 * parameters and gradients (array identity: the same memory), a bucket no larger
 * than the default allocates no new memory, a larger one once; fit over a
 * BucketSentenceIter gives exactly the parameters and perplexity of a hand-written
 * loop of one plain Module per bucket whose parameters are copied between them (the
 * reference computed another way); and the errors of bad use.
 *
 * The network is a per-token language model (Embedding, FullyConnected over the
 * last axis, SoftmaxOutput over (N*T, V) rows against the (N, T) labels, as
 * example/rnn/bucketing/lstm_bucketing.py's head) whose memory grows with T.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_train.h"
#include "testing.h"
#include "train_test_util.h"

#define V 7 /* vocabulary */
#define E 4 /* embedding */
#define N 3 /* batch */

/** One operator node; inputs positional. */
static mxk_symbol *op(const char *name, const char *opname, const char *k1, const char *v1,
                      const char *k2, const char *v2, uint32_t n, mxk_symbol *const *in) {
    const char *keys[2] = {k1, k2}, *vals[2] = {v1, v2};
    uint32_t na = k2 ? 2 : k1 ? 1 : 0;
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxk_symbol_create(opname, name, na, keys, vals, n, NULL, in, &s), MXK_OK);
    return s;
}

/**
 * sym_gen: data (N, T) -> Embedding -> FullyConnected(V, flatten False) ->
 * Reshape(-1, V) -> SoftmaxOutput(Reshape(label, -1)). Key 99 adds a parameter the
 * default bucket lacks; key 13 fails.
 */
static mxk_status gen(int64_t key, void *user, mxk_symbol **out) {
    int *calls = user;
    (*calls)++;
    if (key == 13)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "no bucket 13 here");
    mxk_symbol *data = NULL, *label = NULL;
    CHECK_EQ_INT(mxk_symbol_variable("data", &data), MXK_OK);
    CHECK_EQ_INT(mxk_symbol_variable("softmax_label", &label), MXK_OK);
    char v[16], e[16];
    snprintf(v, sizeof v, "%d", V);
    snprintf(e, sizeof e, "%d", E);
    mxk_symbol *emb = op("embed", "Embedding", "input_dim", v, "output_dim", e, 1, &data);
    mxk_symbol *h = emb;
    if (key == 99)
        h = op("extra", "FullyConnected", "num_hidden", e, "flatten", "False", 1, &emb);
    mxk_symbol *fc = op("pred", "FullyConnected", "num_hidden", v, "flatten", "False", 1, &h);
    mxk_symbol *flat = op("flat", "Reshape", "shape", "(-1, 7)", NULL, NULL, 1, &fc);
    mxk_symbol *lflat = op("lflat", "Reshape", "shape", "(-1,)", NULL, NULL, 1, &label);
    mxk_symbol *in[2] = {flat, lflat};
    *out = op("softmax", "SoftmaxOutput", NULL, NULL, NULL, NULL, 2, in);
    mxk_symbol *all[] = {data, label, emb, fc, flat, lflat, h != emb ? h : NULL};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        mxk_symbol_free(all[i]);
    return MXK_OK;
}

/** A (rows, cols) shape. */
static mxk_shape shape2(int64_t r, int64_t c) {
    mxk_shape s = {.ndim = 2};
    s.dims[0] = r;
    s.dims[1] = c;
    return s;
}

/** The host data pointer of an array (CPU). */
static const void *ptr(mxk_ndarray *a) {
    void *p = NULL;
    CHECK(a != NULL);
    CHECK_EQ_INT(a ? mxk_ndarray_data(a, &p) : MXK_ERR_INVALID_ARGUMENT, MXK_OK);
    return p;
}

/** Bytes in use in the CPU storage pool after the pending work. */
static uint64_t in_use(void) {
    mxk_storage_stats s;
    mxk_wait_all();
    CHECK_EQ_INT(mxk_storage_get_stats((mxk_context){MXK_DEV_CPU, 0}, &s), MXK_OK);
    return s.bytes_in_use;
}

/** Sharing by identity, memory, switching and the errors. */
static void test_sharing(void) {
    int calls = 0;
    mxk_context cpu = {MXK_DEV_CPU, 0};
    mxkt_module *m = NULL;
    mxk_shape d5 = shape2(N, 5), d3 = shape2(N, 3), d8 = shape2(N, 8), bad = shape2(N + 1, 3);
    CHECK_EQ_INT(mxkt_bucketing_module_create(gen, &calls, 5, NULL, NULL, &cpu, 1, &m), MXK_OK);
    CHECK_EQ_INT(mxkt_module_num_buckets(m), 0);
    CHECK_EQ_INT(mxkt_module_switch_bucket(m, 3, &d3, &d3), MXK_ERR_STATE);
    CHECK(strcmp(mxkt_last_error(), "call bind before switching bucket") == 0);
    CHECK_EQ_INT(mxkt_module_bind(m, &d5, &d5, 1), MXK_OK);
    mxkt_initializer init;
    CHECK_EQ_INT(mxkt_initializer_parse("uniform(0.5)", 1, &init), MXK_OK);
    CHECK_EQ_INT(mxkt_module_init_params(m, &init, 0, NULL, NULL, 0, 0), MXK_OK);
    CHECK_EQ_INT(mxkt_module_num_buckets(m), 1);
    CHECK_EQ_INT(mxkt_module_bucket_key(m), 5);
    mxk_executor *ex5 = mxkt_module_executor(m, 0);
    uint64_t before = in_use();
    CHECK_EQ_INT(mxkt_module_switch_bucket(m, 3, &d3, &d3), MXK_OK);
    /* a smaller bucket takes everything from the default bucket's memory */
    CHECK_EQ_INT(in_use(), before);
    mxk_executor *ex3 = mxkt_module_executor(m, 0);
    CHECK(ex3 != ex5);
    CHECK_EQ_INT(mxkt_module_bucket_key(m), 3);
    const char *shared[] = {"embed_weight", "pred_weight", "pred_bias"};
    for (int i = 0; i < 3; i++) {
        CHECK(ptr(mxk_executor_arg(ex3, shared[i])) == ptr(mxk_executor_arg(ex5, shared[i])));
        CHECK(ptr(mxk_executor_grad(ex3, shared[i])) == ptr(mxk_executor_grad(ex5, shared[i])));
    }
    CHECK(ptr(mxk_executor_arg(ex3, "data")) == ptr(mxk_executor_arg(ex5, "data")));
    /* a larger bucket allocates once; switching back and forth allocates nothing */
    before = in_use();
    CHECK_EQ_INT(mxkt_module_switch_bucket(m, 8, &d8, &d8), MXK_OK);
    uint64_t after8 = in_use();
    CHECK(after8 > before);
    CHECK_EQ_INT(mxkt_module_switch_bucket(m, 5, &d5, &d5), MXK_OK);
    CHECK(mxkt_module_executor(m, 0) == ex5);
    CHECK_EQ_INT(mxkt_module_switch_bucket(m, 3, &d3, &d3), MXK_OK);
    CHECK(mxkt_module_executor(m, 0) == ex3);
    CHECK_EQ_INT(mxkt_module_switch_bucket(m, 8, &d8, &d8), MXK_OK);
    CHECK_EQ_INT(in_use(), after8);
    CHECK_EQ_INT(mxkt_module_num_buckets(m), 3);
    CHECK_EQ_INT(calls, 3);
    /* errors leave the current bucket as it was */
    CHECK_EQ_INT(mxkt_module_switch_bucket(m, 4, &bad, &bad), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "switch_bucket: bucket 4: the data must have the bound batch "
                                    "size 3 as its first dimension") == 0);
    CHECK_EQ_INT(mxkt_module_switch_bucket(m, 13, &d3, &d3), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "BucketingModule: sym_gen(13): no bucket 13 here") == 0);
    CHECK_EQ_INT(mxkt_module_switch_bucket(m, 99, &d3, &d3), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(),
                 "bucket 99: parameter 'extra_weight' is not a parameter of the default bucket") ==
          0);
    CHECK_EQ_INT(mxkt_module_bucket_key(m), 8);
    CHECK_EQ_INT(mxkt_module_num_buckets(m), 3);
    mxkt_module_free(m);

    CHECK_EQ_INT(mxkt_bucketing_module_create(gen, &calls, 0, NULL, NULL, &cpu, 1, &m),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "BucketingModule: the default bucket key must not be 0") == 0);
    CHECK_EQ_INT(mxkt_bucketing_module_create(gen, &calls, 13, NULL, NULL, &cpu, 1, &m),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "BucketingModule: sym_gen(13): no bucket 13 here") == 0);
    mxk_symbol *sym = NULL;
    CHECK_EQ_INT(gen(5, &calls, &sym), MXK_OK);
    CHECK_EQ_INT(mxkt_module_create(sym, NULL, NULL, &cpu, 1, &m), MXK_OK);
    CHECK_EQ_INT(mxkt_module_switch_bucket(m, 3, &d3, &d3), MXK_ERR_STATE);
    CHECK(strcmp(mxkt_last_error(), "switch_bucket: not a BucketingModule") == 0);
    CHECK_EQ_INT(mxkt_module_bucket_key(m), 0);
    mxkt_module_free(m);
    mxk_symbol_free(sym);
}

/** A corpus of sentences of lengths 2..9 over ids 1..V-1. */
static void corpus(mxkt_encoded *e, int64_t *offsets, int32_t *ids, int64_t ns) {
    offsets[0] = 0;
    int64_t k = 0;
    for (int64_t s = 0; s < ns; s++) {
        int64_t len = 2 + (s * 5) % 8;
        for (int64_t t = 0; t < len; t++)
            ids[k++] = (int32_t)(1 + (s * 3 + t * t) % (V - 1));
        offsets[s + 1] = k;
    }
    e->num_sentences = ns;
    e->offsets = offsets;
    e->ids = ids;
}

/** Host copy of a module's parameters (sorted by the module's order). */
static void params_of(mxkt_module *m, float *out, int64_t *n) {
    *n = 0;
    for (uint32_t i = 0; i < mxkt_module_num_params(m); i++) {
        mxk_ndarray *p = mxkt_module_param(m, i);
        uint64_t sz = mxk_ndarray_size(p);
        CHECK_EQ_INT(mxk_ndarray_copy_to_host(p, out + *n, sz * sizeof(float)), MXK_OK);
        *n += (int64_t)sz;
    }
}

/**
 * fit over a BucketSentenceIter (two epochs, SGD) against a hand-written loop: one
 * plain Module per bucket, the parameters copied into the batch's module before its
 * step and out of it after (get_params / set_params), the same batches in the same
 * order (a second iterator with the same seed). Parameters and the training
 * perplexity must agree exactly.
 */
static void test_fit_matches_modules(void) {
    int64_t offsets[41];
    int32_t ids[400];
    mxkt_encoded enc;
    corpus(&enc, offsets, ids, 40);
    int64_t buckets[] = {4, 6, 9};
    mxkt_bucket_iter_options bo = {.batch_size = N,
                                   .buckets = buckets,
                                   .num_buckets = 3,
                                   .invalid_label = 0,
                                   .shuffle = 1,
                                   .seed = 5};
    mxkt_iter *it = NULL, *it2 = NULL;
    CHECK_EQ_INT(mxkt_bucket_sentence_iter_create(&enc, &bo, NULL, &it), MXK_OK);
    CHECK_EQ_INT(mxkt_bucket_sentence_iter_create(&enc, &bo, NULL, &it2), MXK_OK);
    CHECK_EQ_INT(it->default_bucket_key, 9);
    int calls = 0;
    mxk_context cpu = {MXK_DEV_CPU, 0};
    mxkt_initializer init;
    CHECK_EQ_INT(mxkt_initializer_parse("uniform(0.3)", 2, &init), MXK_OK);
    mxkt_optimizer sgd;
    mxkt_optimizer_sgd(&sgd, 0.5, 0.0, 0.0);
    /* BucketingModule.fit */
    mxkt_module *bm = NULL;
    CHECK_EQ_INT(
        mxkt_bucketing_module_create(gen, &calls, it->default_bucket_key, NULL, NULL, &cpu, 1, &bm),
        MXK_OK);
    CHECK_EQ_INT(mxkt_module_bind(bm, &it->data_shape, &it->label_shape, 1), MXK_OK);
    CHECK_EQ_INT(mxkt_module_init_params(bm, &init, 0, NULL, NULL, 0, 0), MXK_OK);
    CHECK_EQ_INT(mxkt_module_init_optimizer(bm, "local", &sgd, 0), MXK_OK);
    uint32_t np = 0;
    char **names = NULL;
    mxk_ndarray **vals = NULL;
    CHECK_EQ_INT(mxkt_module_get_params(bm, &np, &names, &vals), MXK_OK);
    mxkt_metric ppl;
    CHECK_EQ_INT(mxkt_metric_create("perplexity", 0, &ppl), MXK_OK);
    mxkt_fit_options fo;
    memset(&fo, 0, sizeof fo);
    fo.num_epoch = 2;
    fo.metrics = &ppl;
    fo.num_metrics = 1;
    FILE *devnull = fopen("/dev/null", "w");
    fo.log = devnull;
    CHECK_EQ_INT(mxkt_module_fit(bm, it, NULL, &fo), MXK_OK);
    CHECK_EQ_INT(mxkt_module_num_buckets(bm), 3);

    /* the reference: one Module per bucket, parameters carried by hand */
    mxkt_module *pm[3] = {NULL, NULL, NULL};
    for (int b = 0; b < 3; b++) {
        mxk_symbol *sym = NULL;
        CHECK_EQ_INT(gen(buckets[b], &calls, &sym), MXK_OK);
        mxk_shape s = shape2(N, buckets[b]);
        CHECK_EQ_INT(mxkt_module_create(sym, NULL, NULL, &cpu, 1, &pm[b]), MXK_OK);
        CHECK_EQ_INT(mxkt_module_bind(pm[b], &s, &s, 1), MXK_OK);
        CHECK_EQ_INT(mxkt_module_set_params(pm[b], np, (const char *const *)names, vals, 0),
                     MXK_OK);
        CHECK_EQ_INT(mxkt_module_init_optimizer(pm[b], "local", &sgd, 0), MXK_OK);
        mxk_symbol_free(sym);
    }
    mxk_ndarray_list_free(np, vals, names);
    mxkt_metric ref;
    CHECK_EQ_INT(mxkt_metric_create("perplexity", 0, &ref), MXK_OK);
    float labels[N * 9], out[N * 9 * V];
    for (int epoch = 0; epoch < 2; epoch++) {
        mxkt_metric_reset(&ref);
        for (int32_t has = 1;;) {
            CHECK_EQ_INT(mxkt_iter_next(it2, &has), MXK_OK);
            if (!has)
                break;
            int b = it2->bucket_key == 4 ? 0 : it2->bucket_key == 6 ? 1 : 2;
            mxk_ndarray *d = NULL, *l = NULL;
            uint32_t pad = 0;
            CHECK_EQ_INT(it2->batch(it2, &d, &l, &pad), MXK_OK);
            CHECK_EQ_INT(mxkt_module_forward_backward(pm[b], d, l), MXK_OK);
            CHECK_EQ_INT(mxkt_module_update(pm[b]), MXK_OK);
            int64_t n = N * it2->bucket_key, w = 0;
            CHECK_EQ_INT(mxk_ndarray_copy_to_host(l, labels, (uint64_t)n * sizeof(float)), MXK_OK);
            CHECK_EQ_INT(mxkt_module_get_output(pm[b], out, &w), MXK_OK);
            CHECK_EQ_INT(w, V);
            mxkt_metric_update(&ref, labels, out, n, w);
            /* carry the parameters to every other bucket's module */
            CHECK_EQ_INT(mxkt_module_get_params(pm[b], &np, &names, &vals), MXK_OK);
            for (int o = 0; o < 3; o++)
                if (o != b)
                    CHECK_EQ_INT(
                        mxkt_module_set_params(pm[o], np, (const char *const *)names, vals, 0),
                        MXK_OK);
            mxk_ndarray_list_free(np, vals, names);
        }
        CHECK_EQ_INT(mxkt_iter_reset(it2), MXK_OK);
    }
    CHECK_NEAR(fo.last_train[0], mxkt_metric_get(&ref), 1e-9 * mxkt_metric_get(&ref));
    static float pa[V * E + V * E + V], pb[V * E + V * E + V];
    int64_t na = 0, nb = 0;
    params_of(bm, pa, &na);
    params_of(pm[2], pb, &nb);
    CHECK_EQ_INT(na, nb);
    CHECK_EQ_INT(na, V * E + V * E + V);
    for (int64_t i = 0; i < na; i++)
        CHECK_NEAR(pa[i], pb[i], 1e-6);
    /* training moved the parameters: a test that cannot pass by doing nothing */
    CHECK(fo.last_train[0] < (double)V);
    for (int b = 0; b < 3; b++)
        mxkt_module_free(pm[b]);
    mxkt_module_free(bm);
    mxkt_iter_free(it);
    mxkt_iter_free(it2);
    fclose(devnull);
}

int main(void) {
    int rc = tt_init();
    if (rc)
        return rc;
    MXK_RUN(test_sharing);
    MXK_RUN(test_fit_matches_modules);
    return MXK_TEST_EXIT();
}
