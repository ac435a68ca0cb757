/*
 * MNISTIter and CSVIter through the public API, on small generated files:
 * shapes, scaling, shuffle determinism, partitions, reset, the dropped tail,
 * gzip'd and plain files, corrupt IDX files, CSVIter's round_batch / pad rules,
 * the first example of upstream
 * docs/static_site/src/pages/api/architecture/exception_handling.md (missing
 * labels raise at next and stay sticky) and MNISTIter's log line. Upstream references:
 * src/io/iter_mnist.cc, src/io/iter_csv.cc, src/io/iter_batchloader.h,
 * tests/python/unittest/test_io.py.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io_test_util.h"
#include "testing.h"

#define N_IMG 50u

/** Writes the standard fixtures: 50 images 4x3, gzip'd and plain, plus labels. */
static void write_fixtures(void) {
    size_t si, sl;
    uint8_t *img = iot_idx_images(N_IMG, 4, 3, &si);
    uint8_t *lbl = iot_idx_labels(N_IMG, &sl);
    iot_write(iot_path("img.gz"), img, si, 1);
    iot_write(iot_path("lbl.gz"), lbl, sl, 1);
    iot_write(iot_path("img"), img, si, 0);
    iot_write(iot_path("lbl"), lbl, sl, 0);
    /* corrupt variants */
    uint8_t *bad = malloc(si);
    memcpy(bad, img, si);
    bad[3] = 0x01; /* magic 0x801 on an image file */
    iot_write(iot_path("img_badmagic"), bad, si, 0);
    iot_write(iot_path("img_trunc_hdr.gz"), img, 10, 1);
    iot_write(iot_path("img_trunc_data.gz"), img, si - 5, 1);
    iot_write(iot_path("img_empty"), img, 0, 0);
    memcpy(bad, img, si);
    iot_be32(bad + 4, 0); /* zero examples */
    iot_write(iot_path("img_zero"), bad, si, 0);
    memcpy(bad, img, si);
    iot_be32(bad + 8, 0x7fffffff); /* absurd rows */
    iot_write(iot_path("img_huge"), bad, si, 0);
    size_t sl2;
    uint8_t *lbl2 = iot_idx_labels(N_IMG - 1, &sl2);
    iot_write(iot_path("lbl_short"), lbl2, sl2, 0);
    iot_write(iot_path("not_gzip.gz"), "\x1f\x8b\x08\x00garbage-garbage-garbage", 27, 0);
    free(bad);
    free(img);
    free(lbl);
    free(lbl2);
}

/**
 * Reads one epoch of an MNISTIter: ids of the examples (pixel-coded) into ids, and
 * when `pads` is not NULL each batch's pad into pads[batch] (at most 16); returns
 * batches.
 */
static int read_epoch_pads(mxk_data_iter *it, uint32_t *ids, uint32_t max_ids, uint32_t *nids,
                           uint32_t *pads) {
    int batches = 0;
    *nids = 0;
    for (;;) {
        int32_t has = 0;
        if (mxk_data_iter_next(it, &has) != MXK_OK) {
            fprintf(stderr, "next: %s\n", mxk_get_last_error());
            return -1;
        }
        if (!has)
            break;
        uint32_t nd, nl, pad;
        mxk_ndarray *const *d, *const *l;
        if (mxk_data_iter_batch(it, &nd, &d, &nl, &l, &pad) != MXK_OK)
            return -1;
        if (pads && batches < 16)
            pads[batches] = pad;
        mxk_shape s = mxk_ndarray_shape(d[0]);
        uint64_t item = mxk_ndarray_size(d[0]) / (uint64_t)s.dims[0];
        float *x, *y;
        mxk_ndarray_data(d[0], (void **)&x);
        mxk_ndarray_data(l[0], (void **)&y);
        for (int64_t b = 0; b < s.dims[0]; b++) {
            uint32_t id = (uint32_t)(x[b * item] * 256.0f + 0.5f) +
                          256u * (uint32_t)(x[b * item + 1] * 256.0f + 0.5f);
            if ((uint32_t)y[b] != id % 10)
                fprintf(stderr, "label %g != id %u %% 10\n", y[b], id), id = UINT32_MAX;
            if (*nids < max_ids)
                ids[(*nids)++] = id;
        }
        batches++;
    }
    return batches;
}

/** read_epoch_pads without the pads. */
static int read_epoch(mxk_data_iter *it, uint32_t *ids, uint32_t max_ids, uint32_t *nids) {
    return read_epoch_pads(it, ids, max_ids, nids, NULL);
}

static mxk_data_iter *mnist(const char *img, const char *lbl, const char *batch,
                            const char *shuffle, const char *seed, const char *flat,
                            const char *parts, const char *part) {
    const char *kv[] = {"image",  img,    "label", lbl,  "batch_size", batch, "shuffle",    shuffle,
                        "seed",   seed,   "flat",  flat, "num_parts",  parts, "part_index", part,
                        "silent", "True", NULL};
    mxk_data_iter *it = NULL;
    if (iot_create("MNISTIter", kv, &it) != MXK_OK)
        fprintf(stderr, "create: %s\n", mxk_get_last_error());
    return it;
}

static void test_shapes_and_values(void) {
    mxk_data_iter *it =
        mnist(iot_path("img.gz"), iot_path("lbl.gz"), "5", "False", "0", "False", "1", "0");
    CHECK(it != NULL);
    if (!it)
        return;
    uint32_t nd, nl;
    const char *const *dn, *const *ln;
    const mxk_shape *ds, *ls;
    CHECK_EQ_INT(mxk_data_iter_describe(it, &nd, &dn, &ds, &nl, &ln, &ls), MXK_OK);
    CHECK_EQ_INT(nd, 1);
    CHECK_EQ_INT(nl, 1);
    CHECK(strcmp(dn[0], "data") == 0 && strcmp(ln[0], "softmax_label") == 0);
    CHECK_EQ_INT(ds[0].ndim, 4);
    CHECK(ds[0].dims[0] == 5 && ds[0].dims[1] == 1 && ds[0].dims[2] == 4 && ds[0].dims[3] == 3);
    CHECK_EQ_INT(ls[0].ndim, 1);
    CHECK_EQ_INT(ls[0].dims[0], 5);
    uint32_t pad = 9;
    CHECK_EQ_INT(mxk_data_iter_batch(it, NULL, NULL, NULL, NULL, &pad), MXK_ERR_STATE);
    int32_t has = 0;
    CHECK_EQ_INT(mxk_data_iter_next(it, &has), MXK_OK);
    CHECK_EQ_INT(has, 1);
    mxk_ndarray *const *d, *const *l;
    CHECK_EQ_INT(mxk_data_iter_batch(it, &nd, &d, &nl, &l, &pad), MXK_OK);
    CHECK_EQ_INT(pad, 0);
    mxk_ndarray *d0 = d[0];
    float *x;
    CHECK_EQ_INT(mxk_ndarray_data(d[0], (void **)&x), MXK_OK);
    /* example 0: pixels 0, 0, then (0+k)%256; scaled by 1/256 (iter_mnist.cc) */
    CHECK_NEAR(x[0], 0.0, 0);
    CHECK_NEAR(x[5], 5.0 / 256.0, 1e-7);
    CHECK_NEAR(x[12 + 0], 1.0 / 256.0, 1e-7); /* example 1 */
    for (uint64_t i = 0; i < mxk_ndarray_size(d[0]); i++)
        CHECK(x[i] >= 0.0f && x[i] <= 1.0f);
    CHECK_EQ_INT(mxk_data_iter_next(it, &has), MXK_OK);
    CHECK_EQ_INT(mxk_data_iter_batch(it, &nd, &d, &nl, &l, &pad), MXK_OK);
    CHECK(d[0] == d0); /* arrays allocated once, reused */
    mxk_data_iter_free(it);

    it = mnist(iot_path("img"), iot_path("lbl"), "7", "False", "0", "True", "1", "0");
    CHECK(it != NULL);
    if (!it)
        return;
    CHECK_EQ_INT(mxk_data_iter_describe(it, &nd, &dn, &ds, &nl, &ln, &ls), MXK_OK);
    CHECK_EQ_INT(ds[0].ndim, 2);
    CHECK(ds[0].dims[0] == 7 && ds[0].dims[1] == 12);
    uint32_t ids[64], n;
    CHECK_EQ_INT(read_epoch(it, ids, 64, &n), 7); /* 50 / 7: tail of 1 dropped */
    CHECK_EQ_INT(n, 49);
    for (uint32_t i = 0; i < n; i++)
        CHECK_EQ_INT(ids[i], i); /* no shuffle: file order */
    mxk_data_iter_free(it);
}

static void test_gzip_and_plain_agree(void) {
    mxk_data_iter *a =
        mnist(iot_path("img.gz"), iot_path("lbl.gz"), "10", "True", "3", "True", "1", "0");
    mxk_data_iter *b = mnist(iot_path("img"), iot_path("lbl"), "10", "True", "3", "True", "1", "0");
    CHECK(a && b);
    if (a && b) {
        uint32_t ia[64], ib[64], na, nb;
        CHECK_EQ_INT(read_epoch(a, ia, 64, &na), 5);
        CHECK_EQ_INT(read_epoch(b, ib, 64, &nb), 5);
        CHECK(na == nb && memcmp(ia, ib, na * sizeof *ia) == 0);
    }
    mxk_data_iter_free(a);
    mxk_data_iter_free(b);
}

static void test_seed_determinism(void) {
    uint32_t o1[64], o2[64], o3[64], n1, n2, n3;
    mxk_data_iter *it =
        mnist(iot_path("img.gz"), iot_path("lbl.gz"), "1", "True", "42", "True", "1", "0");
    CHECK_EQ_INT(read_epoch(it, o1, 64, &n1), N_IMG);
    mxk_data_iter_free(it);
    it = mnist(iot_path("img.gz"), iot_path("lbl.gz"), "1", "True", "42", "True", "1", "0");
    CHECK_EQ_INT(read_epoch(it, o2, 64, &n2), N_IMG);
    mxk_data_iter_free(it);
    it = mnist(iot_path("img.gz"), iot_path("lbl.gz"), "1", "True", "43", "True", "1", "0");
    CHECK_EQ_INT(read_epoch(it, o3, 64, &n3), N_IMG);
    mxk_data_iter_free(it);
    CHECK(n1 == N_IMG && n2 == N_IMG && n3 == N_IMG);
    CHECK(memcmp(o1, o2, sizeof(uint32_t) * N_IMG) == 0);
    CHECK(memcmp(o1, o3, sizeof(uint32_t) * N_IMG) != 0);
    /* a permutation, not the identity */
    int seen[N_IMG] = {0}, identity = 1;
    for (uint32_t i = 0; i < N_IMG; i++) {
        if (o1[i] < N_IMG)
            seen[o1[i]]++;
        identity &= o1[i] == i;
    }
    for (uint32_t i = 0; i < N_IMG; i++)
        CHECK_EQ_INT(seen[i], 1);
    CHECK(!identity);
}

static void test_reset_rewinds_same_order(void) {
    mxk_data_iter *it =
        mnist(iot_path("img.gz"), iot_path("lbl.gz"), "4", "True", "7", "True", "1", "0");
    CHECK(it != NULL);
    if (!it)
        return;
    uint32_t a[64], b[64], na, nb;
    CHECK_EQ_INT(read_epoch(it, a, 64, &na), 12);
    CHECK_EQ_INT(mxk_data_iter_reset(it), MXK_OK);
    CHECK_EQ_INT(read_epoch(it, b, 64, &nb), 12);
    CHECK(na == nb && memcmp(a, b, na * sizeof *a) == 0);
    /* reset in the middle of an epoch */
    int32_t has;
    for (int i = 0; i < 3; i++)
        mxk_data_iter_next(it, &has);
    CHECK_EQ_INT(mxk_data_iter_reset(it), MXK_OK);
    CHECK_EQ_INT(read_epoch(it, b, 64, &nb), 12);
    CHECK(na == nb && memcmp(a, b, na * sizeof *a) == 0);
    /* next after the end keeps saying 0 */
    CHECK_EQ_INT(mxk_data_iter_next(it, &has), MXK_OK);
    CHECK_EQ_INT(has, 0);
    mxk_data_iter_free(it);
}

static void test_partitions_disjoint_and_covering(void) {
    for (uint32_t parts = 1; parts <= 4; parts++) {
        int seen[N_IMG] = {0};
        uint32_t total = 0;
        for (uint32_t k = 0; k < parts; k++) {
            char sp[8], sk[8];
            snprintf(sp, sizeof sp, "%u", parts);
            snprintf(sk, sizeof sk, "%u", k);
            mxk_data_iter *it =
                mnist(iot_path("img.gz"), iot_path("lbl.gz"), "1", "True", "5", "True", sp, sk);
            CHECK(it != NULL);
            if (!it)
                return;
            uint32_t ids[64], n;
            read_epoch(it, ids, 64, &n);
            /* contiguous slice [floor(50/parts*k), floor(50/parts*(k+1))) */
            uint32_t lo = (uint32_t)((double)N_IMG / parts * k);
            uint32_t hi = k + 1 == parts ? N_IMG : (uint32_t)((double)N_IMG / parts * (k + 1));
            CHECK_EQ_INT(n, hi - lo);
            for (uint32_t i = 0; i < n; i++) {
                CHECK(ids[i] >= lo && ids[i] < hi);
                if (ids[i] < N_IMG)
                    seen[ids[i]]++;
            }
            total += n;
            mxk_data_iter_free(it);
        }
        CHECK_EQ_INT(total, N_IMG);
        for (uint32_t i = 0; i < N_IMG; i++)
            CHECK_EQ_INT(seen[i], 1);
    }
    /* 10 items in 3 parts: [0,3), [3,6), [6,10) (iter_mnist.cc) -- via 50: [0,16) [16,33) [33,50)
     */
    mxk_data_iter *it =
        mnist(iot_path("img"), iot_path("lbl"), "1", "False", "0", "True", "3", "1");
    uint32_t ids[64], n;
    read_epoch(it, ids, 64, &n);
    CHECK(n == 17 && ids[0] == 16 && ids[16] == 32);
    mxk_data_iter_free(it);
    mxk_data_iter *bad = NULL;
    const char *kv[] = {
        "image", iot_path("img"), "label", iot_path("lbl"), "num_parts", "2", "part_index", "2",
        NULL};
    CHECK_EQ_INT(iot_create("MNISTIter", kv, &bad), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "part_index");
}

/** Expects MNISTIter creation on (img, lbl) to fail with `code` and `text` in the message. */
static void expect_bad(const char *img, const char *lbl, mxk_status code, const char *text) {
    const char *kv[] = {"image", img, "label", lbl, "silent", "1", NULL};
    mxk_data_iter *it = NULL;
    mxk_status st = iot_create("MNISTIter", kv, &it);
    CHECK_EQ_INT(st, code);
    CHECK(it == NULL);
    CHECK_CONTAINS(mxk_get_last_error(), text);
    if (st != code)
        fprintf(stderr, "  (%s)\n", mxk_get_last_error());
    mxk_data_iter_free(it);
}

static void test_corrupt_idx_is_a_clear_error(void) {
    expect_bad(iot_path("img_badmagic"), iot_path("lbl"), MXK_ERR_FORMAT,
               "magic 0x00000801, expected 0x00000803");
    expect_bad(iot_path("img"), iot_path("img"), MXK_ERR_FORMAT, "not an IDX label file");
    expect_bad(iot_path("img_trunc_hdr.gz"), iot_path("lbl"), MXK_ERR_FORMAT,
               "truncated IDX header");
    expect_bad(iot_path("img_trunc_data.gz"), iot_path("lbl"), MXK_ERR_FORMAT,
               "truncated IDX data");
    expect_bad(iot_path("img_empty"), iot_path("lbl"), MXK_ERR_FORMAT,
               "truncated IDX header: 0 of 4");
    expect_bad(iot_path("img_zero"), iot_path("lbl"), MXK_ERR_FORMAT, "dimension 0 is 0");
    expect_bad(iot_path("img_huge"), iot_path("lbl"), MXK_ERR_FORMAT, "exceeds the limit");
    expect_bad(iot_path("img"), iot_path("lbl_short"), MXK_ERR_FORMAT,
               "holds 50 images but the label file");
    expect_bad(iot_path("missing"), iot_path("lbl"), MXK_ERR_FORMAT, "cannot open");
    expect_bad(iot_path("not_gzip.gz"), iot_path("lbl"), MXK_ERR_FORMAT, "MNISTIter image file");
}

static void test_attribute_errors(void) {
    mxk_data_iter *it = NULL;
    const char *kv[] = {"image", iot_path("img"), "batchsize", "3", NULL};
    CHECK_EQ_INT(iot_create("MNISTIter", kv, &it), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "batch_size");
    const char *kv2[] = {"image", iot_path("img"), "label", iot_path("lbl"), "batch_size", "0",
                         NULL};
    CHECK_EQ_INT(iot_create("MNISTIter", kv2, &it), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "batch_size");
    const char *kv3[] = {NULL};
    CHECK_EQ_INT(iot_create("NoSuchIter", kv3, &it), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "MNISTIter");
    CHECK_EQ_INT(iot_create("CSVIter", kv3, &it), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "data_csv");
}

/** MNISTIter over the fixtures with round_batch and num_examples set (unshuffled unless seed). */
static mxk_data_iter *mnist_padded(const char *batch, const char *round, const char *num,
                                   const char *shuffle) {
    const char *kv[] = {
        "image", iot_path("img"), "label", iot_path("lbl"), "batch_size", batch,          "shuffle",
        shuffle, "silent",        "True",  "round_batch",   round,        "num_examples", num,
        NULL};
    mxk_data_iter *it = NULL;
    if (iot_create("MNISTIter", kv, &it) != MXK_OK)
        fprintf(stderr, "create: %s\n", mxk_get_last_error());
    return it;
}

/**
 * round_batch=True pads the last batch with the first examples of the order
 * (NDArrayIter's last_batch_handle='pad'), cyclically when the batch is larger
 * than the data, reports the pad, and reset rewinds; num_examples keeps exactly
 * the first N of the (shuffled) order; more than the file holds is refused.
 */
static void test_mnist_round_batch_and_num_examples(void) {
    uint32_t ids[256], n = 0, pads[16];
    /* 50 at batch 20: 20, 20, 10 real + 10 pad (examples 0..9 again); a batch larger
     * than the data: one batch, 70 pad rows cycling through the 50; exactly 45: 20,
     * 20, 5 real + 15 pad (examples 0..14); each twice (reset rewinds) */
    static const struct {
        const char *batch, *num;
        uint32_t size, batches, last_pad, used;
    } cases[] = {
        {"20", "0", 20, 3, 10, 50}, {"120", "0", 120, 1, 70, 50}, {"20", "45", 20, 3, 15, 45}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        mxk_data_iter *it = mnist_padded(cases[c].batch, "True", cases[c].num, "False");
        for (int epoch = 0; epoch < 2; epoch++) {
            CHECK_EQ_INT(read_epoch_pads(it, ids, 256, &n, pads), (int)cases[c].batches);
            CHECK_EQ_INT(mxk_data_iter_reset(it), MXK_OK);
            CHECK_EQ_INT(n, cases[c].batches * cases[c].size);
            for (uint32_t b = 0; b < cases[c].batches; b++)
                CHECK_EQ_INT(pads[b], b + 1 == cases[c].batches ? cases[c].last_pad : 0);
            for (uint32_t i = 0; i < n; i++)
                CHECK_EQ_INT(ids[i], i % cases[c].used);
        }
        mxk_data_iter_free(it);
    }
    /* without round_batch the tail is dropped */
    mxk_data_iter *it = mnist_padded("20", "False", "45", "False");
    CHECK_EQ_INT(read_epoch(it, ids, 256, &n), 2);
    mxk_data_iter_free(it);
    /* shuffled: the first 45 of the same permutation */
    uint32_t all[64], some[64], na = 0, ns = 0;
    it = mnist_padded("5", "True", "0", "True");
    CHECK_EQ_INT(read_epoch(it, all, 64, &na), 10);
    mxk_data_iter_free(it);
    it = mnist_padded("5", "True", "45", "True");
    CHECK_EQ_INT(read_epoch(it, some, 64, &ns), 9);
    mxk_data_iter_free(it);
    CHECK(na == 50 && ns == 45 && memcmp(all, some, 45 * sizeof *all) == 0);
    mxk_data_iter *bad = NULL;
    const char *kv[] = {"image", iot_path("img"), "label", iot_path("lbl"), "num_examples", "51",
                        NULL};
    CHECK_EQ_INT(iot_create("MNISTIter", kv, &bad), MXK_ERR_INVALID_ARGUMENT);
    char want[600];
    snprintf(want, sizeof want,
             "num_examples 51 is more than the 50 examples of '%s' (part 0 of 1)", iot_path("img"));
    CHECK_CONTAINS(mxk_get_last_error(), want);
}

/* ---- CSVIter ---- */

/** Creates a CSVIter over data/label files with data_shape (3,), batch 3. */
static mxk_data_iter *csv(const char *data, const char *label, const char *batch,
                          const char *round) {
    const char *kv[] = {"data_csv",   data,  "label_csv",   label, "data_shape", "(3,)",
                        "batch_size", batch, "round_batch", round, NULL};
    mxk_data_iter *it = NULL;
    if (iot_create("CSVIter", kv, &it) != MXK_OK)
        fprintf(stderr, "create: %s\n", mxk_get_last_error());
    return it;
}

/** Next batch: returns row ids (first value of each row / 10) as digits, pad in *pad; "" at end. */
static const char *csv_next(mxk_data_iter *it, uint32_t *pad) {
    static char buf[32];
    int32_t has = 0;
    buf[0] = '\0';
    if (mxk_data_iter_next(it, &has) != MXK_OK)
        return "ERR";
    if (!has)
        return buf;
    mxk_ndarray *const *d, *const *l;
    uint32_t nd, nl;
    mxk_data_iter_batch(it, &nd, &d, &nl, &l, pad);
    float *x, *y;
    mxk_ndarray_data(d[0], (void **)&x);
    mxk_ndarray_data(l[0], (void **)&y);
    int64_t b = mxk_ndarray_shape(d[0]).dims[0];
    for (int64_t i = 0; i < b; i++) {
        buf[i] = (char)('0' + (int)(x[i * 3] / 10));
        if ((int)y[i] != (int)(x[i * 3] / 10) * 100 && y[i] != 0)
            buf[i] = '?';
    }
    buf[b] = '\0';
    return buf;
}

static void test_csv_round_batch(void) {
    /* rows r1..r4 = "10,11,12" ... "40,41,42"; labels 100..400 */
    FILE *f = fopen(iot_path("d4.csv"), "w");
    fprintf(f, "10,11,12\n20, 21, 22\r\n\n30,31,32\n40,41,42\n");
    fclose(f);
    f = fopen(iot_path("l4.csv"), "w");
    fprintf(f, "100\n200\n300\n400\n");
    fclose(f);
    mxk_data_iter *it = csv(iot_path("d4.csv"), iot_path("l4.csv"), "3", "True");
    CHECK(it != NULL);
    if (!it)
        return;
    uint32_t nd, nl;
    const char *const *dn, *const *ln;
    const mxk_shape *ds, *ls;
    mxk_data_iter_describe(it, &nd, &dn, &ds, &nl, &ln, &ls);
    CHECK(ds[0].ndim == 2 && ds[0].dims[0] == 3 && ds[0].dims[1] == 3);
    CHECK(ls[0].ndim == 1 && ls[0].dims[0] == 3);
    uint32_t pad = 99;
    CHECK(strcmp(csv_next(it, &pad), "123") == 0);
    CHECK_EQ_INT(pad, 0);
    CHECK(strcmp(csv_next(it, &pad), "412") == 0);
    CHECK_EQ_INT(pad, 2);
    CHECK(strcmp(csv_next(it, &pad), "") == 0);
    /* after a wrap, reset does not rewind: the next epoch continues at r3 */
    CHECK_EQ_INT(mxk_data_iter_reset(it), MXK_OK);
    CHECK(strcmp(csv_next(it, &pad), "341") == 0);
    CHECK_EQ_INT(pad, 1); /* r1 wrapped in again (iter_batchloader.h) */
    mxk_data_iter_free(it);

    it = csv(iot_path("d4.csv"), iot_path("l4.csv"), "3", "False");
    CHECK(it != NULL);
    if (!it)
        return;
    CHECK(strcmp(csv_next(it, &pad), "123") == 0);
    CHECK(strcmp(csv_next(it, &pad), "423") == 0); /* stale rows in the padded slots */
    CHECK_EQ_INT(pad, 2);
    CHECK(strcmp(csv_next(it, &pad), "") == 0);
    CHECK_EQ_INT(mxk_data_iter_reset(it), MXK_OK);
    CHECK(strcmp(csv_next(it, &pad), "123") == 0);
    mxk_data_iter_free(it);

    /* no label file: labels are 0 */
    it = csv(iot_path("d4.csv"), "NULL", "2", "True");
    CHECK(it != NULL);
    CHECK(it && strcmp(csv_next(it, &pad), "12") == 0);
    mxk_data_iter_free(it);

    /* a row of the wrong width is an error at next, naming the line */
    f = fopen(iot_path("dbad.csv"), "w");
    fprintf(f, "1,2,3\n4,5\n");
    fclose(f);
    it = csv(iot_path("dbad.csv"), "NULL", "1", "True");
    CHECK(it != NULL);
    if (it) {
        int32_t has;
        mxk_status st = MXK_OK;
        for (int i = 0; i < 3 && st == MXK_OK; i++)
            st = mxk_data_iter_next(it, &has);
        CHECK_EQ_INT(st, MXK_ERR_FORMAT);
        CHECK_CONTAINS(mxk_get_last_error(), "line 2 has 2 values but data_shape needs 3");
        mxk_data_iter_free(it);
    }
    mxk_data_iter *bad = NULL;
    const char *kv[] = {"data_csv", iot_path("nope.csv"), "data_shape", "(3,)", "batch_size", "1",
                        NULL};
    CHECK_EQ_INT(iot_create("CSVIter", kv, &bad), MXK_ERR_IO);
    CHECK_CONTAINS(mxk_get_last_error(), "cannot open");
}

/*
 * Seed exception_handling E1: data.csv has 8 rows of 1..10, label.csv fewer rows,
 * batch_size 4. The error comes no later than the next() whose batch holds the
 * first unlabelled row, that batch is never delivered, and every later call fails.
 */
static void test_csv_e1_missing_labels_sticky(void) {
    FILE *f = fopen(iot_path("e1d.csv"), "w");
    for (int i = 0; i < 8; i++)
        fprintf(f, "1,2,3,4,5,6,7,8,9,10\n");
    fclose(f);
    f = fopen(iot_path("e1l.csv"), "w");
    for (int i = 0; i < 5; i++)
        fprintf(f, "%d\n", i);
    fclose(f);
    for (int round = 0; round < 2; round++) {
        const char *kv[] = {"data_csv",    iot_path("e1d.csv"),      "data_shape", "(1,10)",
                            "label_csv",   iot_path("e1l.csv"),      "batch_size", "4",
                            "round_batch", round ? "True" : "False", NULL};
        mxk_data_iter *it = NULL;
        CHECK_EQ_INT(iot_create("CSVIter", kv, &it), MXK_OK);
        if (!it)
            return;
        int32_t has = 0;
        int delivered = 0;
        mxk_status st = MXK_OK;
        for (int i = 0; i < 2 && st == MXK_OK; i++) {
            st = mxk_data_iter_next(it, &has);
            if (st == MXK_OK && has)
                delivered++;
        }
        CHECK_EQ_INT(st, MXK_ERR_FORMAT);
        CHECK(delivered <= 1);
        CHECK_CONTAINS(mxk_get_last_error(), "fewer rows than data_csv");
        CHECK_CONTAINS(mxk_get_last_error(), "no label for row 5");
        /* sticky: next and reset keep failing */
        for (int i = 0; i < 3; i++) {
            CHECK_EQ_INT(mxk_data_iter_next(it, &has), MXK_ERR_FORMAT);
            CHECK_EQ_INT(mxk_data_iter_reset(it), MXK_ERR_FORMAT);
            CHECK_CONTAINS(mxk_get_last_error(), "no label for row 5");
        }
        mxk_data_iter_free(it);
    }
}

/**
 * Creates MNISTIter (batch 5, no shuffle, silent=False) at log level `level` and
 * checks that what it writes to stderr is exactly `expected`.
 */
static void expect_mnist_log(const char *level, const char *flat, const char *parts,
                             const char *part, const char *expected) {
    char got[2048] = "";
    const char *old = getenv("MXK_LOG_LEVEL");
    char *saved_level = old ? strdup(old) : NULL;
    setenv("MXK_LOG_LEVEL", level, 1);
    mxk_t_capture cap;
    CHECK(mxk_t_capture_begin(&cap));
    const char *kv[] = {
        "image", iot_path("img"), "label", iot_path("lbl"), "batch_size", "5",          "shuffle",
        "False", "flat",          flat,    "num_parts",     parts,        "part_index", part,
        NULL};
    mxk_data_iter *it = NULL;
    mxk_status st = iot_create("MNISTIter", kv, &it);
    mxk_t_capture_end(&cap, got, sizeof got);
    if (saved_level)
        setenv("MXK_LOG_LEVEL", saved_level, 1);
    else
        unsetenv("MXK_LOG_LEVEL");
    free(saved_level);
    CHECK_EQ_INT(st, MXK_OK);
    mxk_data_iter_free(it);
    if (strcmp(got, expected) != 0) {
        fprintf(stderr, "MNISTIter log:\n  got      \"%s\"\n  expected \"%s\"\n", got, expected);
        CHECK(strcmp(got, expected) == 0);
    }
}

/* silent=False logs upstream's line (iter_mnist.cc): the partition's count, the
 * data shape, FlatTo2D with flat; the partition only at debug level. */
static void test_mnist_log_line(void) {
    expect_mnist_log("info", "False", "1", "0",
                     "[mxk INFO] MNISTIter: load 50 images, shuffle=0, shape=(5,1,4,3)\n");
    expect_mnist_log("info", "True", "3", "1",
                     "[mxk INFO] MNISTIter: load 17 images, shuffle=0, shape=(5,12)\n");
    expect_mnist_log("debug", "False", "3", "2",
                     "[mxk INFO] MNISTIter: load 17 images, shuffle=0, shape=(5,1,4,3)\n"
                     "[mxk DEBUG] MNISTIter: part 2 of 3: examples [33, 50) of 50\n");
}

/* Destroying an iterator mid-epoch (producer blocked on a full queue) is clean. */
static void test_free_mid_epoch(void) {
    for (int i = 0; i < 20; i++) {
        mxk_data_iter *it =
            mnist(iot_path("img.gz"), iot_path("lbl.gz"), "1", "True", "1", "True", "1", "0");
        int32_t has;
        if (i % 2)
            mxk_data_iter_next(it, &has);
        mxk_data_iter_free(it);
    }
    const char *kv[] = {"image", iot_path("img"),   "label", iot_path("lbl"), "batch_size",
                        "1",     "prefetch_buffer", "1",     "silent",        "1",
                        NULL};
    mxk_data_iter *it = NULL;
    CHECK_EQ_INT(iot_create("MNISTIter", kv, &it), MXK_OK);
    uint32_t ids[64], n;
    CHECK_EQ_INT(read_epoch(it, ids, 64, &n), N_IMG);
    mxk_data_iter_free(it);
}

int main(void) {
    iot_tmpdir("mxk_io_test");
    write_fixtures();
    iot_init();
    MXK_RUN(test_shapes_and_values);
    MXK_RUN(test_gzip_and_plain_agree);
    MXK_RUN(test_seed_determinism);
    MXK_RUN(test_reset_rewinds_same_order);
    MXK_RUN(test_partitions_disjoint_and_covering);
    MXK_RUN(test_mnist_round_batch_and_num_examples);
    MXK_RUN(test_corrupt_idx_is_a_clear_error);
    MXK_RUN(test_attribute_errors);
    MXK_RUN(test_csv_round_batch);
    MXK_RUN(test_csv_e1_missing_labels_sticky);
    MXK_RUN(test_free_mid_epoch);
    MXK_RUN(test_mnist_log_line);
    mxk_shutdown();
    iot_tmpdir_remove();
    return MXK_TEST_EXIT();
}
