/*
 * MNISTIter on the real Fashion-MNIST (Debian's dataset-fashion-mnist, gzip'd
 * IDX files under /usr/share/datasets/fashion-mnist or $MXK_FASHION_MNIST_DIR):
 * batch counts (600 of 100 for train, 100 for t10k), shapes flat and not, value
 * range [0,1], labels 0..9, each class present; prints MNISTIter throughput
 * (batches/s, flat=True, batch 100). Exits 77 (skipped) when the data is missing.
 * Upstream reference: src/io/iter_mnist.cc, tests/python/unittest/test_io.py
 * (test_MNISTIter).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io_test_util.h"
#include "testing.h"

static char g_img[512], g_lbl[512], g_timg[512], g_tlbl[512];

/** Runs one epoch; checks shapes/values when `check`; returns batches or -1. */
static int epoch(mxk_data_iter *it, int flat, int check, int *hist) {
    int batches = 0;
    for (;;) {
        int32_t has = 0;
        if (mxk_data_iter_next(it, &has) != MXK_OK) {
            fprintf(stderr, "next: %s\n", mxk_get_last_error());
            return -1;
        }
        if (!has)
            return batches;
        batches++;
        if (!check)
            continue;
        uint32_t nd, nl, pad;
        mxk_ndarray *const *d, *const *l;
        CHECK_EQ_INT(mxk_data_iter_batch(it, &nd, &d, &nl, &l, &pad), MXK_OK);
        CHECK_EQ_INT(pad, 0);
        mxk_shape s = mxk_ndarray_shape(d[0]);
        if (flat)
            CHECK(s.ndim == 2 && s.dims[0] == 100 && s.dims[1] == 784);
        else
            CHECK(s.ndim == 4 && s.dims[0] == 100 && s.dims[1] == 1 && s.dims[2] == 28 &&
                  s.dims[3] == 28);
        float *x, *y;
        mxk_ndarray_data(d[0], (void **)&x);
        mxk_ndarray_data(l[0], (void **)&y);
        float lo = 1, hi = 0;
        for (uint64_t i = 0; i < mxk_ndarray_size(d[0]); i++) {
            lo = x[i] < lo ? x[i] : lo;
            hi = x[i] > hi ? x[i] : hi;
        }
        CHECK(lo >= 0.0f && hi <= 1.0f && hi > 0.5f);
        for (int i = 0; i < 100; i++) {
            CHECK(y[i] >= 0 && y[i] <= 9 && y[i] == (float)(int)y[i]);
            if (y[i] >= 0 && y[i] <= 9)
                hist[(int)y[i]]++;
        }
    }
}

static mxk_data_iter *open_iter(const char *img, const char *lbl, const char *flat) {
    const char *kv[] = {"image", img,  "label",  lbl,    "batch_size", "100",
                        "flat",  flat, "silent", "True", NULL};
    mxk_data_iter *it = NULL;
    if (iot_create("MNISTIter", kv, &it) != MXK_OK)
        fprintf(stderr, "create: %s\n", mxk_get_last_error());
    return it;
}

static void test_train_and_test_counts(void) {
    int hist[10] = {0};
    mxk_data_iter *it = open_iter(g_img, g_lbl, "False");
    CHECK(it != NULL);
    if (!it)
        return;
    CHECK_EQ_INT(epoch(it, 0, 1, hist), 600);
    for (int c = 0; c < 10; c++)
        CHECK_EQ_INT(hist[c], 6000); /* Fashion-MNIST is balanced */
    mxk_data_iter_free(it);
    memset(hist, 0, sizeof hist);
    it = open_iter(g_timg, g_tlbl, "True");
    CHECK(it != NULL);
    if (!it)
        return;
    CHECK_EQ_INT(epoch(it, 1, 1, hist), 100);
    for (int c = 0; c < 10; c++)
        CHECK_EQ_INT(hist[c], 1000);
    CHECK_EQ_INT(mxk_data_iter_reset(it), MXK_OK);
    CHECK_EQ_INT(epoch(it, 1, 0, hist), 100);
    mxk_data_iter_free(it);
    /* batch 128: 468 batches, 96 dropped (src/io/iter_mnist.cc drops the last partial one) */
    const char *kv[] = {"image", g_img, "label", g_lbl, "batch_size", "128", "silent", "1", NULL};
    CHECK_EQ_INT(iot_create("MNISTIter", kv, &it), MXK_OK);
    CHECK_EQ_INT(epoch(it, 0, 0, hist), 468);
    mxk_data_iter_free(it);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_throughput(void) {
    int hist[10];
    double t0 = now_s();
    mxk_data_iter *it = open_iter(g_img, g_lbl, "True");
    double t1 = now_s();
    CHECK(it != NULL);
    if (!it)
        return;
    int total = 0;
    const int epochs = 3;
    for (int e = 0; e < epochs; e++) {
        total += epoch(it, 1, 0, hist);
        mxk_data_iter_reset(it);
    }
    double t2 = now_s();
    CHECK_EQ_INT(total, 600 * epochs);
    printf("MNISTIter train: create (gunzip + parse 60000 images) %.3f s; %d batches of 100 "
           "(flat) in %.3f s: %.0f batches/s, %.0f samples/s\n",
           t1 - t0, total, t2 - t1, total / (t2 - t1), 100.0 * total / (t2 - t1));
    mxk_data_iter_free(it);
}

int main(void) {
    const char *dir = getenv("MXK_FASHION_MNIST_DIR");
    if (dir == NULL || dir[0] == '\0')
        dir = "/usr/share/datasets/fashion-mnist";
    snprintf(g_img, sizeof g_img, "%s/train-images-idx3-ubyte.gz", dir);
    snprintf(g_lbl, sizeof g_lbl, "%s/train-labels-idx1-ubyte.gz", dir);
    snprintf(g_timg, sizeof g_timg, "%s/t10k-images-idx3-ubyte.gz", dir);
    snprintf(g_tlbl, sizeof g_tlbl, "%s/t10k-labels-idx1-ubyte.gz", dir);
    if (access(g_img, R_OK) || access(g_lbl, R_OK) || access(g_timg, R_OK) ||
        access(g_tlbl, R_OK)) {
        printf("SKIP: Fashion-MNIST not found in %s (apt-get install dataset-fashion-mnist, or "
               "set MXK_FASHION_MNIST_DIR)\n",
               dir);
        return 77;
    }
    iot_init();
    MXK_RUN(test_train_and_test_counts);
    MXK_RUN(test_throughput);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
