/*
 * ImageRecordIter (plugins/io-recordio/image_iter.c) through the public API, on
 * small .rec files of PNG images with known pixels (written here with image.h's
 * img_encode and mxk_recordio_pack): normalisation, centre / random crops,
 * mirror, pad, resize, labels (record, multi-label, image list), uint8, the last
 * batch, shuffle, partitions, thread-count independence, corrupt images and
 * mean_img.
 * Upstream semantics: src/io/iter_image_recordio_2.cc, src/io/image_aug_default.cc.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../plugins/io-recordio/image.h"
#include "io/io_test_util.h"
#include "mxk_recordio.h"
#include "testing.h"

#define W 6u
#define H 5u
#define MAXN 64u

/** Pixel k of (x, y) of image i: distinct per image, position and channel. */
static uint8_t px(uint32_t i, uint32_t x, uint32_t y, uint32_t k) {
    return (uint8_t)(x * 7 + y * 13 + k * 50 + i * 31 + 3);
}

/** Offsets of the records of the last write_rec (for error messages). */
static uint64_t g_off[MAXN];

/**
 * Writes n records of WxH RGB PNGs (id i, label i, or `nlab` labels i*10+j when
 * nlab > 0) to NAME.rec (and NAME.idx with `idx`); record `bad` (if < n) holds
 * "notanimage" instead of a PNG.
 */
static void write_rec(const char *name, uint32_t n, uint32_t nlab, int idx, uint32_t bad) {
    char rec[64], ix[64];
    snprintf(rec, sizeof rec, "%s.rec", name);
    snprintf(ix, sizeof ix, "%s.idx", name);
    mxk_recordio *h;
    if (idx)
        CHECK_EQ_INT(mxk_recordio_indexed_open(iot_path(ix), iot_path(rec), "w", &h), MXK_OK);
    else
        CHECK_EQ_INT(mxk_recordio_open(iot_path(rec), "w", &h), MXK_OK);
    img_codec *cx = img_codec_new();
    char msg[256];
    for (uint32_t i = 0; i < n; i++) {
        uint8_t pix[W * H * 3];
        for (uint32_t y = 0; y < H; y++)
            for (uint32_t x = 0; x < W; x++)
                for (uint32_t k = 0; k < 3; k++)
                    pix[(y * W + x) * 3 + k] = px(i, x, y, k);
        img_image im = {pix, W, H, 3};
        uint8_t *png = NULL;
        size_t len = 0;
        CHECK_EQ_INT(img_encode(cx, &im, IMG_PNG, 3, &png, &len, msg, sizeof msg), 0);
        float labels[4];
        for (uint32_t j = 0; j < nlab; j++)
            labels[j] = (float)(i * 10 + j);
        mxk_irheader hd = {nlab, nlab ? 0.0f : (float)i, i, 0};
        void *out;
        size_t olen;
        CHECK_EQ_INT(mxk_recordio_pack(&hd, nlab ? labels : NULL,
                                       i == bad ? (const void *)"notanimage" : (const void *)png,
                                       i == bad ? 10 : len, &out, &olen),
                     MXK_OK);
        CHECK_EQ_INT(mxk_recordio_tell(h, &g_off[i]), MXK_OK);
        if (idx)
            CHECK_EQ_INT(mxk_recordio_write_idx(h, i, out, olen), MXK_OK);
        else
            CHECK_EQ_INT(mxk_recordio_write(h, out, olen), MXK_OK);
        mxk_free(out);
        free(png);
    }
    img_codec_free(cx);
    CHECK_EQ_INT(mxk_recordio_close(h), MXK_OK);
}

/** One epoch of an iterator, flattened; index: the record id, from the first label. */
typedef struct epoch {
    uint32_t rows, batches;
    float data[MAXN * 3 * 16 * 16];
    uint8_t bytes[MAXN * 3 * 16 * 16];
    float label[MAXN * 4];
    uint64_t index[MAXN];
    uint32_t pad[MAXN];
} epoch;

static epoch g_a, g_b;

/** Reads one epoch (all rows, padded ones included) of `it` into e. */
static mxk_status read_epoch(mxk_data_iter *it, epoch *e) {
    memset(e, 0, sizeof *e);
    int32_t has;
    mxk_status st;
    while ((st = mxk_data_iter_next(it, &has)) == MXK_OK && has) {
        mxk_ndarray *const *d, *const *l;
        uint32_t nd, nl, pad;
        CHECK_EQ_INT(mxk_data_iter_batch(it, &nd, &d, &nl, &l, &pad), MXK_OK);
        mxk_shape s = mxk_ndarray_shape(d[0]);
        uint64_t per = mxk_ndarray_size(d[0]) / (uint64_t)s.dims[0];
        uint64_t lper = mxk_ndarray_size(l[0]) / (uint64_t)s.dims[0];
        void *x;
        float *y;
        mxk_ndarray_data(d[0], &x);
        mxk_ndarray_data(l[0], (void **)&y);
        for (int64_t b = 0; b < s.dims[0] && e->rows < MAXN; b++, e->rows++) {
            if (mxk_ndarray_dtype(d[0]) == MXK_UINT8)
                memcpy(e->bytes + e->rows * per, (uint8_t *)x + b * per, per);
            else
                memcpy(e->data + e->rows * per, (float *)x + b * per, per * sizeof(float));
            memcpy(e->label + e->rows * lper, y + b * lper, lper * sizeof(float));
            e->index[e->rows] = (uint64_t)y[b * lper]; /* label i of record i: its id */
        }
        e->pad[e->batches++] = pad;
    }
    return st;
}

/** Creates an ImageRecordIter on NAME.rec with extra key/value pairs. */
static mxk_status make(const char *name, const char *const *kv, mxk_data_iter **it) {
    const char *all[64];
    static char rec[8][256];
    static int k;
    char *r = rec[k++ % 8];
    snprintf(r, 256, "%s", iot_path(name));
    uint32_t n = 0;
    all[n++] = "path_imgrec";
    all[n++] = r;
    all[n++] = "verbose";
    all[n++] = "False";
    for (; kv[0]; kv += 2) {
        all[n++] = kv[0];
        all[n++] = kv[1];
    }
    all[n] = NULL;
    return iot_create("ImageRecordIter", all, it);
}

/** Reads one epoch of a fresh iterator; returns the status of the epoch. */
static mxk_status run(const char *name, const char *const *kv, epoch *e) {
    mxk_data_iter *it = NULL;
    mxk_status st = make(name, kv, &it);
    if (st == MXK_OK)
        st = read_epoch(it, e);
    mxk_data_iter_free(it);
    return st;
}

/** No augmentation: centre crop, (pixel - mean) * (scale / std), CHW, labels, index, pad. */
static void test_normalise_centre_crop(void) {
    const char *kv[] = {"data_shape",  "(3,3,4)", "batch_size",
                        "2",           "mean_r",  "10",
                        "mean_g",      "20",      "mean_b",
                        "30.5",        "std_r",   "2",
                        "std_g",       "3",       "std_b",
                        "4",           "scale",   "0.5",
                        "round_batch", "False",   "preprocess_threads",
                        "2",           NULL};
    CHECK_EQ_INT(run("a.rec", kv, &g_a), MXK_OK);
    CHECK_EQ_INT(g_a.batches, 3);
    CHECK_EQ_INT(g_a.pad[0], 0);
    CHECK_EQ_INT(g_a.pad[2], 1);
    const float mean[3] = {10, 20, 30.5f}, mult[3] = {0.5f / 2, 0.5f / 3, 0.5f / 4};
    int bad = 0;
    for (uint32_t i = 0; i < 5; i++) {
        CHECK_EQ_INT(g_a.label[i], i);
        CHECK_EQ_INT(g_a.index[i], i);
        for (uint32_t k = 0; k < 3; k++)
            for (uint32_t y = 0; y < 3; y++)
                for (uint32_t x = 0; x < 4; x++) /* centre: x0 = (6-4)/2, y0 = (5-3)/2 */
                    bad += g_a.data[i * 36 + k * 12 + y * 4 + x] !=
                           ((float)px(i, x + 1, y + 1, k) - mean[k]) * mult[k];
    }
    CHECK_EQ_INT(bad, 0);
    for (uint32_t j = 5 * 36; j < 6 * 36; j++) /* the padded row is zero */
        bad += g_a.data[j] != 0;
    CHECK_EQ_INT(bad, 0);
    /* round_batch (the default): the last batch ends with record 0, pad 1 */
    const char *kv2[] = {"data_shape", "(3,3,4)", "batch_size", "2", NULL};
    CHECK_EQ_INT(run("a.rec", kv2, &g_b), MXK_OK);
    CHECK_EQ_INT(g_b.batches, 3);
    CHECK_EQ_INT(g_b.pad[2], 1);
    CHECK_EQ_INT(g_b.index[5], 0);
    CHECK_EQ_INT(g_b.data[5 * 36], px(0, 1, 1, 0));
    /* a second epoch after reset is the same (read in file order again) */
    mxk_data_iter *it;
    CHECK_EQ_INT(make("a.rec", kv2, &it), MXK_OK);
    CHECK_EQ_INT(read_epoch(it, &g_a), MXK_OK);
    CHECK_EQ_INT(mxk_data_iter_reset(it), MXK_OK);
    CHECK_EQ_INT(read_epoch(it, &g_b), MXK_OK);
    mxk_data_iter_free(it);
    CHECK_EQ_INT(g_b.rows, 6);
    CHECK(memcmp(&g_a, &g_b, sizeof g_a) == 0);
    /* a batch larger than the file: padded cyclically (0..4, 0..4, 0, 1), pad 7 */
    const char *kv3[] = {"data_shape", "(3,3,4)", "batch_size", "12", NULL};
    CHECK_EQ_INT(run("a.rec", kv3, &g_a), MXK_OK);
    CHECK_EQ_INT(g_a.batches, 1);
    CHECK_EQ_INT(g_a.pad[0], 7);
    for (uint32_t r = 0; r < 12; r++)
        CHECK_EQ_INT(g_a.index[r], r % 5);
}

/** Finds (x0, y0, mirrored) such that example e of `ep` is that crop of image `i`; 0 if none. */
static int find_crop(const epoch *ep, uint32_t e, uint32_t i, uint32_t ch, uint32_t cw, int *x0,
                     int *y0, int *mir) {
    for (int m = 0; m < 2; m++)
        for (uint32_t y = 0; y + ch <= H; y++)
            for (uint32_t x = 0; x + cw <= W; x++) {
                int ok = 1;
                for (uint32_t k = 0; k < 3 && ok; k++)
                    for (uint32_t yy = 0; yy < ch && ok; yy++)
                        for (uint32_t xx = 0; xx < cw && ok; xx++) {
                            uint32_t sx = m ? x + cw - 1 - xx : x + xx;
                            ok = ep->data[e * 3 * ch * cw + k * ch * cw + yy * cw + xx] ==
                                 px(i, sx, y + yy, k);
                        }
                if (ok) {
                    *x0 = (int)x, *y0 = (int)y, *mir = m;
                    return 1;
                }
            }
    return 0;
}

/** rand_crop / rand_mirror: every example is a crop (mirrored or not) of its image. */
static void test_random_crop_and_mirror(void) {
    const char *kv[] = {"data_shape",  "(3,2,3)", "batch_size", "4", "rand_crop", "True",
                        "rand_mirror", "True",    "seed",       "7", NULL};
    CHECK_EQ_INT(run("b.rec", kv, &g_a), MXK_OK);
    int off_centre = 0, mirrored = 0, plain = 0;
    for (uint32_t e = 0; e < 16; e++) {
        int x = 0, y = 0, m = 0;
        CHECK(find_crop(&g_a, e, (uint32_t)g_a.index[e], 2, 3, &x, &y, &m));
        off_centre += x != 1 || y != 1;
        mirrored += m;
        plain += !m;
    }
    CHECK(off_centre > 0);
    CHECK(mirrored > 0 && plain > 0);
    /* without them: all centred, none mirrored */
    const char *kv2[] = {"data_shape", "(3,2,3)", "batch_size", "4", NULL};
    CHECK_EQ_INT(run("b.rec", kv2, &g_a), MXK_OK);
    for (uint32_t e = 0; e < 16; e++) {
        int x = -1, y = -1, m = -1;
        CHECK(find_crop(&g_a, e, e, 2, 3, &x, &y, &m) && x == 1 && y == 1 && m == 0);
    }
}

/**
 * mirror: every example mirrored. max_random_contrast / max_random_illumination:
 * each example is c * (pixel - mean) + i with c in [1 - 0.5, 1 + 0.5], i in
 * [-3, 3], not all c equal (upstream's RGBA_MULT / RGBA_BIAS with scale 1, std 1).
 */
static void test_mirror_contrast_illumination(void) {
    const char *kv[] = {"data_shape", "(3,2,3)", "batch_size", "4", "mirror", "True", NULL};
    CHECK_EQ_INT(run("b.rec", kv, &g_a), MXK_OK);
    for (uint32_t e = 0; e < 16; e++) {
        int x = -1, y = -1, m = -1;
        CHECK(find_crop(&g_a, e, e, 2, 3, &x, &y, &m) && x == 1 && y == 1 && m == 1);
    }
    const char *kv2[] = {"data_shape",
                         "(3,5,6)",
                         "batch_size",
                         "4",
                         "max_random_contrast",
                         "0.5",
                         "max_random_illumination",
                         "3",
                         "mean_g",
                         "40",
                         NULL};
    CHECK_EQ_INT(run("b.rec", kv2, &g_a), MXK_OK);
    int distinct = 0, bad = 0;
    float first = 0;
    for (uint32_t e = 0; e < 16; e++) {
        const float *d = g_a.data + e * 90;
        float p0 = px(e, 0, 0, 1) - 40.0f, p1 = px(e, 1, 0, 1) - 40.0f;
        float c = (d[30 + 1] - d[30]) / (p1 - p0), i = d[30] - c * p0;
        bad += !(c >= 0.5f - 1e-4f && c <= 1.5f + 1e-4f && i >= -3.001f && i <= 3.001f);
        for (uint32_t y = 0; y < H; y++)
            for (uint32_t x = 0; x < W; x++)
                bad += fabsf(d[30 + y * W + x] - (c * (px(e, x, y, 1) - 40.0f) + i)) > 1e-3f;
        distinct += e > 0 && c != first;
        if (e == 0)
            first = c;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(distinct > 0);
}

/** pad with fill_value: the (H+2) x (W+2) padded image, border = fill_value. */
static void test_pad_fill(void) {
    const char *kv[] = {"data_shape", "(3,7,8)", "batch_size", "1",     "pad", "1",
                        "fill_value", "9",       "dtype",      "uint8", NULL};
    CHECK_EQ_INT(run("a.rec", kv, &g_a), MXK_OK);
    int bad = 0;
    for (uint32_t k = 0; k < 3; k++)
        for (uint32_t y = 0; y < 7; y++)
            for (uint32_t x = 0; x < 8; x++) {
                int in = x >= 1 && x <= W && y >= 1 && y <= H;
                uint8_t want = in ? px(2, x - 1, y - 1, k) : 9;
                bad += g_a.bytes[2 * 168 + k * 56 + y * 8 + x] != want;
            }
    CHECK_EQ_INT(bad, 0);
}

/** uint8: raw pixels, mean/std/scale ignored (upstream's uint8 output). */
static void test_uint8(void) {
    const char *kv[] = {"data_shape", "(3,5,6)", "batch_size", "5", "dtype", "uint8",
                        "mean_r",     "100",     "scale",      "3", NULL};
    CHECK_EQ_INT(run("a.rec", kv, &g_a), MXK_OK);
    int bad = 0;
    for (uint32_t i = 0; i < 5; i++)
        for (uint32_t k = 0; k < 3; k++)
            for (uint32_t y = 0; y < H; y++)
                for (uint32_t x = 0; x < W; x++)
                    bad += g_a.bytes[i * 90 + k * 30 + y * 6 + x] != px(i, x, y, k);
    CHECK_EQ_INT(bad, 0);
}

/** resize: short side 3 (6x5 -> 3 * 6 / 5 = 3 wide... 3x3), then the centre crop. */
static void test_resize(void) {
    const char *kv[] = {"data_shape", "(3,3,3)", "batch_size", "1", "resize",
                        "3",          "dtype",   "uint8",      NULL};
    CHECK_EQ_INT(run("a.rec", kv, &g_a), MXK_OK);
    /* reference: the same resampling called directly (upstream's new size:
     * resize * cols / rows = 3 * 6 / 5 = 3, rows 3; inter_method 1 = bilinear) */
    uint8_t pix[W * H * 3];
    for (uint32_t y = 0; y < H; y++)
        for (uint32_t x = 0; x < W; x++)
            for (uint32_t k = 0; k < 3; k++)
                pix[(y * W + x) * 3 + k] = px(1, x, y, k);
    img_image im = {pix, W, H, 3}, out = {0};
    char msg[128];
    CHECK_EQ_INT(img_resize(&im, 0, 0, W, H, 3, 3, IMG_BILINEAR, &out, msg, sizeof msg), 0);
    int bad = 0;
    for (uint32_t k = 0; k < 3; k++)
        for (uint32_t y = 0; y < 3; y++)
            for (uint32_t x = 0; x < 3; x++)
                bad += g_a.bytes[27 + k * 9 + y * 3 + x] != out.pix[(y * 3 + x) * 3 + k];
    CHECK_EQ_INT(bad, 0);
    img_free(&out);
}

/** label_width: multi-label records, the image list, and the mismatch error. */
static void test_labels(void) {
    const char *kv[] = {"data_shape", "(3,5,6)", "batch_size", "2", "label_width", "3", NULL};
    CHECK_EQ_INT(run("m.rec", kv, &g_a), MXK_OK);
    int bad = 0;
    for (uint32_t i = 0; i < 4; i++)
        for (uint32_t j = 0; j < 3; j++)
            bad += g_a.label[i * 3 + j] != (float)(i * 10 + j);
    CHECK_EQ_INT(bad, 0);
    /* an image list overrides the record's labels, by record id */
    FILE *f = fopen(iot_path("m.lst"), "w");
    for (uint32_t i = 0; i < 4; i++)
        fprintf(f, "%u\t%u.5\t-%u\t7\timg%u.png\n", 3 - i, 3 - i, 3 - i, 3 - i);
    fclose(f);
    char lst[256];
    snprintf(lst, sizeof lst, "%s", iot_path("m.lst"));
    const char *kv2[] = {"data_shape", "(3,5,6)",      "batch_size", "2", "label_width",
                         "3",          "path_imglist", lst,          NULL};
    CHECK_EQ_INT(run("m.rec", kv2, &g_a), MXK_OK);
    for (uint32_t i = 0; i < 4; i++) {
        bad += g_a.label[i * 3] != (float)i + 0.5f;
        bad += g_a.label[i * 3 + 1] != -(float)i;
        bad += g_a.label[i * 3 + 2] != 7;
    }
    CHECK_EQ_INT(bad, 0);
    const char *kv3[] = {"data_shape", "(3,5,6)", "batch_size", "2", "label_width", "2", NULL};
    CHECK_EQ_INT(run("m.rec", kv3, &g_a), MXK_ERR_INVALID_ARGUMENT);
    char want[512];
    snprintf(want, sizeof want,
             "ImageRecordIter: record id 0 (byte 0 of '%s') has 3 labels but label_width is 2",
             iot_path("m.rec"));
    CHECK_CONTAINS(mxk_get_last_error(), want);
    /* a list without a record's id */
    f = fopen(iot_path("short.lst"), "w");
    fprintf(f, "0\t1\tx.png\n");
    fclose(f);
    snprintf(lst, sizeof lst, "%s", iot_path("short.lst"));
    const char *kv4[] = {"data_shape", "(3,5,6)", "batch_size", "2", "path_imglist", lst, NULL};
    CHECK_EQ_INT(run("m.rec", kv4, &g_a), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "the image list has no label for record id 1");
}

/** shuffle: each epoch is a permutation, epochs differ, a seed repeats. */
static void test_shuffle(void) {
    const char *kv[] = {"data_shape", "(3,1,1)", "batch_size", "4", "shuffle",
                        "True",       "seed",    "3",          NULL};
    mxk_data_iter *it;
    CHECK_EQ_INT(make("s.rec", kv, &it), MXK_OK);
    CHECK_EQ_INT(read_epoch(it, &g_a), MXK_OK);
    CHECK_EQ_INT(mxk_data_iter_reset(it), MXK_OK);
    CHECK_EQ_INT(read_epoch(it, &g_b), MXK_OK);
    mxk_data_iter_free(it);
    CHECK_EQ_INT(g_a.rows, 32);
    uint32_t seen_a = 0, seen_b = 0, same = 0, ident = 0;
    for (uint32_t r = 0; r < 32; r++) {
        seen_a |= 1u << g_a.index[r];
        seen_b |= 1u << g_b.index[r];
        same += g_a.index[r] == g_b.index[r];
        ident += g_a.index[r] == r;
        CHECK_EQ_INT(g_a.label[r], g_a.index[r]);
    }
    CHECK_EQ_INT(seen_a, 0xffffffffu);
    CHECK_EQ_INT(seen_b, 0xffffffffu);
    CHECK(same < 32 && ident < 32);
    static epoch again;
    CHECK_EQ_INT(run("s.rec", kv, &again), MXK_OK);
    CHECK(memcmp(again.index, g_a.index, sizeof g_a.index) == 0);
}

/** num_parts: parts are disjoint and cover the file, with and without the .idx. */
static void test_partitions(void) {
    for (int withidx = 0; withidx < 2; withidx++) {
        uint32_t seen = 0, total = 0;
        char idx[256];
        snprintf(idx, sizeof idx, "%s", iot_path("s.idx"));
        for (int p = 0; p < 3; p++) {
            char ps[8];
            snprintf(ps, sizeof ps, "%d", p);
            const char *kv[] = {
                "data_shape", "(3,1,1)",    "batch_size", "1",           "num_parts",
                "3",          "part_index", ps,           "path_imgidx", withidx ? idx : "",
                NULL};
            CHECK_EQ_INT(run("s.rec", kv, &g_a), MXK_OK);
            for (uint32_t r = 0; r < g_a.rows; r++) {
                CHECK((seen & (1u << g_a.index[r])) == 0);
                seen |= 1u << g_a.index[r];
            }
            total += g_a.rows;
            if (withidx) /* by count: ceil(32 / 3) = 11, 11, 10 */
                CHECK_EQ_INT(g_a.rows, p < 2 ? 11 : 10);
        }
        CHECK_EQ_INT(total, 32);
        CHECK_EQ_INT(seen, 0xffffffffu);
    }
}

/** preprocess_threads 1 and 3 give identical batches, augmentation included. */
static void test_threads_identical(void) {
    const char *kv1[] = {"data_shape",         "(3,3,4)", "batch_size",  "5",
                         "rand_crop",          "True",    "rand_mirror", "True",
                         "brightness",         "0.3",     "contrast",    "0.3",
                         "saturation",         "0.3",     "pca_noise",   "0.1",
                         "max_rotate_angle",   "10",      "shuffle",     "True",
                         "preprocess_threads", "1",       NULL};
    const char *kv3[] = {"data_shape",         "(3,3,4)", "batch_size",  "5",
                         "rand_crop",          "True",    "rand_mirror", "True",
                         "brightness",         "0.3",     "contrast",    "0.3",
                         "saturation",         "0.3",     "pca_noise",   "0.1",
                         "max_rotate_angle",   "10",      "shuffle",     "True",
                         "preprocess_threads", "3",       NULL};
    CHECK_EQ_INT(run("s.rec", kv1, &g_a), MXK_OK);
    CHECK_EQ_INT(run("s.rec", kv3, &g_b), MXK_OK);
    CHECK_EQ_INT(g_a.rows, 35);
    CHECK(memcmp(g_a.data, g_b.data, sizeof g_a.data) == 0);
    CHECK(memcmp(g_a.index, g_b.index, sizeof g_a.index) == 0);
}

/** A corrupt image: the error names file, record id and offset; skip_corrupt leaves it out. */
static void test_corrupt(void) {
    write_rec("c", 6, 0, 0, 2);
    const char *kv[] = {"data_shape", "(3,5,6)", "batch_size", "2", NULL};
    CHECK_EQ_INT(run("c.rec", kv, &g_a), MXK_ERR_FORMAT);
    char want[512];
    snprintf(want, sizeof want,
             "ImageRecordIter: '%s': record id 2 at byte %llu: not a JPEG or PNG image (first "
             "bytes 6E 6F 74 61)",
             iot_path("c.rec"), (unsigned long long)g_off[2]);
    CHECK_CONTAINS(mxk_get_last_error(), want);
    const char *kv2[] = {"data_shape", "(3,5,6)",     "batch_size", "2", "skip_corrupt",
                         "True",       "round_batch", "False",      NULL};
    CHECK_EQ_INT(run("c.rec", kv2, &g_a), MXK_OK);
    CHECK_EQ_INT(g_a.batches, 3);
    CHECK_EQ_INT(g_a.pad[2], 1);
    const uint64_t want_ids[5] = {0, 1, 3, 4, 5};
    for (uint32_t r = 0; r < 5; r++)
        CHECK_EQ_INT(g_a.index[r], want_ids[r]);
    /* a record too short for its IRHeader is a RecordIO-level error, never skipped */
    mxk_recordio *h;
    CHECK_EQ_INT(mxk_recordio_open(iot_path("short.rec"), "w", &h), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_write(h, "0123456789", 10), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_close(h), MXK_OK);
    CHECK_EQ_INT(run("short.rec", kv2, &g_a), MXK_ERR_FORMAT);
    snprintf(want, sizeof want,
             "ImageRecordIter: '%s': record at byte 0: record of 10 bytes is shorter than the "
             "24-byte IRHeader",
             iot_path("short.rec"));
    CHECK_CONTAINS(mxk_get_last_error(), want);
    setenv("MXK_IMAGE_SKIP_CORRUPT", "1", 1);
    CHECK_EQ_INT(run("c.rec", kv, &g_a), MXK_OK);
    unsetenv("MXK_IMAGE_SKIP_CORRUPT");
    CHECK_EQ_INT(g_a.rows, 6);
    CHECK_EQ_INT(g_a.pad[2], 1);
    CHECK_EQ_INT(g_a.index[5], 0); /* round_batch: padded with the first record */
}

/**
 * mean_img: computed over the part when absent (the average of the centre
 * crops), saved, read back; subtracted instead of mean_r/g/b; a file of another
 * shape is refused.
 */
static void test_mean_img(void) {
    char mean[256];
    snprintf(mean, sizeof mean, "%s", iot_path("mean.nd"));
    const char *kv[] = {"data_shape", "(3,3,4)", "batch_size", "2", "mean_img", mean,
                        "mean_r",     "50",      "scale",      "2", NULL};
    for (int pass = 0; pass < 2; pass++) { /* computed, then read from the file */
        CHECK_EQ_INT(run("a.rec", kv, &g_a), MXK_OK);
        CHECK(access(mean, R_OK) == 0);
        int bad = 0;
        for (uint32_t k = 0; k < 3; k++)
            for (uint32_t y = 0; y < 3; y++)
                for (uint32_t x = 0; x < 4; x++) {
                    double sum = 0;
                    for (uint32_t i = 0; i < 5; i++)
                        sum += px(i, x + 1, y + 1, k);
                    float m = (float)(sum / 5);
                    for (uint32_t i = 0; i < 5; i++)
                        bad += g_a.data[i * 36 + k * 12 + y * 4 + x] !=
                               ((float)px(i, x + 1, y + 1, k) - m) * 2.0f;
                }
        CHECK_EQ_INT(bad, 0);
    }
    const char *kv2[] = {"data_shape", "(3,2,2)", "batch_size", "2", "mean_img", mean, NULL};
    CHECK_EQ_INT(run("a.rec", kv2, &g_a), MXK_ERR_FORMAT);
    char want[512];
    snprintf(want, sizeof want,
             "ImageRecordIter: mean_img '%s' has shape (3, 3, 4), expected (3, 2, 2)", mean);
    CHECK_CONTAINS(mxk_get_last_error(), want);
    iot_write(iot_path("bad.nd"), "not an ndarray file at all", 26, 0);
    const char *kv3[] = {"data_shape", "(3,2,2)",          "batch_size", "2",
                         "mean_img",   iot_path("bad.nd"), NULL};
    CHECK_EQ_INT(run("a.rec", kv3, &g_a), MXK_ERR_FORMAT);
    CHECK_CONTAINS(mxk_get_last_error(), "not an NDArray file holding one dense float32 array");
}

/** Attribute errors and the described layout (names, shapes, dtype). */
static void test_attributes(void) {
    mxk_data_iter *it;
    const char *kv[] = {"data_shape", "(2,3,4)", "batch_size", "2", NULL};
    CHECK_EQ_INT(make("a.rec", kv, &it), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "attribute 'data_shape': expected (C, H, W) with C 1, "
                                         "3 or 4");
    const char *kv2[] = {"data_shape", "(3,3,4)", "batch_size", "2", "inter_method", "5", NULL};
    CHECK_EQ_INT(make("a.rec", kv2, &it), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "attribute 'inter_method': expected 0-4, 9 or 10, got 5");
    const char *kv3[] = {"data_shape",  "(3,3,4)", "batch_size",   "2",
                         "data_name",   "img",     "label_name",   "lab",
                         "label_width", "2",       "path_imglist", iot_path("m.lst"),
                         NULL};
    CHECK_EQ_INT(make("a.rec", kv3, &it), MXK_OK);
    uint32_t nd, nl;
    const char *const *dn, *const *ln;
    const mxk_shape *ds, *ls;
    CHECK_EQ_INT(mxk_data_iter_describe(it, &nd, &dn, &ds, &nl, &ln, &ls), MXK_OK);
    CHECK(strcmp(dn[0], "img") == 0 && strcmp(ln[0], "lab") == 0);
    CHECK_EQ_INT(ds[0].ndim, 4);
    CHECK_EQ_INT(ds[0].dims[1] * 100 + ds[0].dims[2] * 10 + ds[0].dims[3], 334);
    CHECK_EQ_INT(ls[0].ndim, 2);
    mxk_data_iter_free(it);
    const char *kv4[] = {"data_shape", "(3,3,4)", "batch_size", "2", NULL};
    CHECK_EQ_INT(make("missing.rec", kv4, &it), MXK_ERR_FORMAT);
    CHECK_CONTAINS(mxk_get_last_error(), "ImageRecordIter: cannot open");
    /* a FIFO as the index, list or mean image is refused, never waited on */
    CHECK_EQ_INT(mkfifo(iot_path("fifo"), 0600), 0);
    const char *keys[3] = {"path_imgidx", "path_imglist", "mean_img"};
    for (int k = 0; k < 3; k++) {
        char fifo[256], want[512];
        snprintf(fifo, sizeof fifo, "%s", iot_path("fifo"));
        const char *kv5[] = {"data_shape", "(3,3,4)", "batch_size", "2", keys[k], fifo, NULL};
        CHECK_EQ_INT(make("a.rec", kv5, &it), MXK_ERR_FORMAT);
        snprintf(want, sizeof want, "ImageRecordIter: %s: '%s' is not a regular file (a FIFO)",
                 keys[k], fifo);
        CHECK_CONTAINS(mxk_get_last_error(), want);
    }
}

int main(void) {
    iot_tmpdir("mxk_image_iter");
    iot_init();
    write_rec("a", 5, 0, 0, 99);
    write_rec("b", 16, 0, 0, 99);
    write_rec("m", 4, 3, 0, 99);
    write_rec("s", 32, 0, 1, 99);
    MXK_RUN(test_normalise_centre_crop);
    MXK_RUN(test_random_crop_and_mirror);
    MXK_RUN(test_mirror_contrast_illumination);
    MXK_RUN(test_pad_fill);
    MXK_RUN(test_uint8);
    MXK_RUN(test_resize);
    MXK_RUN(test_labels);
    MXK_RUN(test_shuffle);
    MXK_RUN(test_partitions);
    MXK_RUN(test_threads_identical);
    MXK_RUN(test_corrupt);
    MXK_RUN(test_mean_img);
    MXK_RUN(test_attributes);
    mxk_shutdown();
    iot_tmpdir_remove();
    return MXK_TEST_EXIT();
}
