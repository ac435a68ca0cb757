/*
 * NDArray list files (MXNet .params): save/load round trips in every dtype, the
 * 85-byte worked example, hand-built V1 / legacy / V3 fixtures, empty arrays, and
 * malformed files (truncation at every byte, bad magic, name count mismatch, bad
 * dtype, sparse records, absurd counts), plus file errors.
 */
#include "nd_bytes.h"
#include "nd_test_util.h"

#include <sys/stat.h>
#include <unistd.h>

/** A per-process temporary directory for the test's files. */
static char tmpdir[256];

/** Path of `name` inside tmpdir (static buffer per call site is not needed: caller's). */
static void tmp_path(char *out, size_t size, const char *name) {
    snprintf(out, size, "%s/%s", tmpdir, name);
}

/** Fills n bytes with a deterministic pattern (xorshift), seeded. */
static void pattern(uint8_t *p, size_t n, uint64_t seed) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (uint8_t)x;
    }
}

/** Checks that a loaded array has shape s, dtype dt, lives on cpu(0) and holds `bytes`. */
static void check_array(mxk_ndarray *a, const mxk_shape *s, int32_t dt, const void *bytes) {
    mxk_shape got = mxk_ndarray_shape(a);
    CHECK(mxki_shape_equal(&got, s));
    CHECK_EQ_INT(mxk_ndarray_dtype(a), dt);
    CHECK_EQ_INT(mxk_ndarray_context(a).dev_type, MXK_DEV_CPU);
    CHECK_EQ_INT(mxk_ndarray_context(a).dev_id, 0);
    uint64_t n = mxki_ndarray_bytes(a);
    if (n == 0)
        return;
    uint8_t *buf = malloc((size_t)n);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(a, buf, n), MXK_OK);
    CHECK(memcmp(buf, bytes, (size_t)n) == 0);
    free(buf);
}

/** Save/load in every dtype, with and without names, bit-exact and byte-stable. */
static void test_roundtrip_all_dtypes(void) {
    const mxk_shape shapes[7] = {nd_shape(2, 2, 3, 0, 0), nd_shape(1, 5, 0, 0, 0),
                                 nd_shape(4, 2, 1, 3, 2), nd_shape(3, 1, 1, 1, 0),
                                 nd_shape(2, 0, 3, 0, 0), nd_shape(1, 17, 0, 0, 0),
                                 nd_shape(2, 3, 3, 0, 0)};
    mxk_ndarray *arrs[7];
    uint8_t *data[7];
    const char *names[7] = {
        "arg:fc1_weight",       "arg:fc1_bias", "aux:bn_moving_mean", "x", "", "h",
        "arg:\xc3\xa9t\xc3\xa9"};
    for (int32_t dt = 0; dt < 7; dt++) {
        arrs[dt] = NULL;
        uint64_t n = mxki_shape_size(&shapes[dt]) * mxk_dtype_size(dt);
        data[dt] = malloc(n ? (size_t)n : 1);
        pattern(data[dt], (size_t)n, (uint64_t)dt + 1); /* arbitrary bits, NaNs included */
        if (mxk_ndarray_create(&shapes[dt], dt, nd_cpu(), &arrs[dt]) == MXK_OK)
            CHECK_EQ_INT(mxk_ndarray_copy_from_host(arrs[dt], data[dt], n), MXK_OK);
        else
            CHECK(0);
    }
    for (int with_names = 0; with_names < 2; with_names++) {
        char path[512];
        tmp_path(path, sizeof path, with_names ? "all_named.params" : "all.params");
        CHECK_EQ_INT(mxk_ndarray_save(path, 7, arrs, with_names ? names : NULL), MXK_OK);
        uint32_t num = 0;
        mxk_ndarray **out = NULL;
        char **onames = (char **)&onames;
        CHECK_EQ_INT(mxk_ndarray_load(path, &num, &out, &onames), MXK_OK);
        CHECK_EQ_INT(num, 7);
        if (with_names) {
            CHECK(onames != NULL);
            for (int i = 0; onames && i < 7; i++)
                CHECK(strcmp(onames[i], names[i]) == 0);
        } else {
            CHECK(onames == NULL);
        }
        for (int32_t dt = 0; out && dt < 7 && dt < (int32_t)num; dt++)
            check_array(out[dt], &shapes[dt], dt, data[dt]);
        /* Saving what was loaded gives the same bytes (the context is cpu(0) in both). */
        uint8_t *b1 = NULL, *b2 = NULL;
        size_t n1 = 0, n2 = 0;
        CHECK_EQ_INT(mxki_ndarray_save_buffer(7, arrs, with_names ? names : NULL, &b1, &n1),
                     MXK_OK);
        CHECK_EQ_INT(mxki_ndarray_save_buffer(num, out, (const char *const *)onames, &b2, &n2),
                     MXK_OK);
        size_t fn = 0;
        uint8_t *fb = nb_read_file(path, &fn);
        CHECK(n1 == n2 && n1 == fn && memcmp(b1, b2, n1) == 0 && memcmp(b1, fb, n1) == 0);
        free(b1);
        free(b2);
        free(fb);
        mxk_ndarray_list_free(num, out, onames);
    }
    for (int dt = 0; dt < 7; dt++) {
        mxk_ndarray_free(arrs[dt]);
        free(data[dt]);
    }
}

/** An 85-byte file as MXNet's NDArray::Save writes {"a": float32 [1,2,3] on cpu(0)}. */
/* clang-format off */
static const uint8_t example85[85] = {
    0x12, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* list magic 0x112 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* reserved */
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 1 array */
    0xc9, 0xfa, 0x93, 0xf9,                         /* V2 magic */
    0x00, 0x00, 0x00, 0x00,                         /* dense */
    0x01, 0x00, 0x00, 0x00,                         /* ndim 1 */
    0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* dim 3 */
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* cpu(0) */
    0x00, 0x00, 0x00, 0x00,                         /* float32 */
    0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x40, /* 1, 2, 3 */
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* 1 name */
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* length 1 */
    0x61,                                           /* "a" */
};
/* clang-format on */

/** The 85-byte example is written byte-exact and loads back. */
static void test_example_85_bytes(void) {
    mxk_shape s = nd_shape(1, 3, 0, 0, 0);
    float v[3] = {1, 2, 3};
    mxk_ndarray *a = nd_from(&s, MXK_FLOAT32, nd_cpu(), v);
    const char *names[1] = {"a"};
    char path[512];
    tmp_path(path, sizeof path, "example.params");
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &a, names), MXK_OK);
    size_t n = 0;
    uint8_t *b = nb_read_file(path, &n);
    CHECK_EQ_INT(n, 85);
    CHECK(b != NULL && n == 85 && memcmp(b, example85, 85) == 0);
    free(b);
    uint32_t num = 0;
    mxk_ndarray **out = NULL;
    char **on = NULL;
    CHECK_EQ_INT(mxk_ndarray_load_buffer(example85, 85, NULL, &num, &out, &on), MXK_OK);
    CHECK_EQ_INT(num, 1);
    if (num == 1) {
        CHECK(strcmp(on[0], "a") == 0);
        check_array(out[0], &s, MXK_FLOAT32, v);
    }
    mxk_ndarray_list_free(num, out, on);
    mxk_ndarray_free(a);
}

/** A device array is saved with its real context and loads on the CPU. */
static void test_device_array_saved_with_its_context(void) {
    mxk_shape s = nd_shape(1, 2, 0, 0, 0);
    int32_t v[2] = {-5, 77};
    mxk_ndarray *g = nd_from(&s, MXK_INT32, nd_gpu(1), v);
    uint8_t *b = NULL;
    size_t n = 0;
    CHECK_EQ_INT(mxki_ndarray_save_buffer(1, &g, NULL, &b, &n), MXK_OK);
    /* header 24 | magic 4, stype 4, ndim 4, dim 8 | ctx 8 | dtype 4 | data 8 | names 8 */
    CHECK_EQ_INT(n, 24 + 20 + 8 + 4 + 8 + 8);
    if (n == 72) {
        CHECK(b[44] == 2 && b[48] == 1); /* gpu(1) */
        CHECK(b[52] == 4);               /* int32 */
        int32_t d[2];
        memcpy(d, b + 56, 8);
        CHECK(d[0] == -5 && d[1] == 77);
    }
    uint32_t num = 0;
    mxk_ndarray **out = NULL;
    char **on = NULL;
    CHECK_EQ_INT(mxk_ndarray_load_buffer(b, n, NULL, &num, &out, &on), MXK_OK);
    if (num == 1)
        check_array(out[0], &s, MXK_INT32, v); /* loaded onto the CPU */
    mxk_ndarray_list_free(num, out, on);
    free(b);
    mxk_ndarray_free(g);
}

/** A hand-built V1 file (int64 shapes, no storage type) loads with names and values. */
static void test_v1_fixture(void) {
    nd_bytes b = {0};
    nb_header(&b, 2);
    /* V1: magic, int32 ndim, int64 dims, ctx, dtype, data. */
    nb_u32(&b, 0xF993FAC8u);
    nb_i32(&b, 2);
    nb_i64(&b, 2);
    nb_i64(&b, 2);
    nb_i32(&b, 1);
    nb_i32(&b, 0);
    nb_i32(&b, MXK_FLOAT32);
    const float w[4] = {0.5f, -1.5f, 2.25f, 1e-3f};
    for (int i = 0; i < 4; i++)
        nb_f32(&b, w[i]);
    nb_u32(&b, 0xF993FAC8u);
    nb_i32(&b, 1);
    nb_i64(&b, 3);
    nb_i32(&b, 2); /* saved on gpu(0): loads on the CPU */
    nb_i32(&b, 0);
    nb_i32(&b, MXK_INT32);
    for (int32_t i = 7; i <= 9; i++)
        nb_i32(&b, i);
    nb_u64(&b, 2);
    nb_name(&b, "arg:w");
    nb_name(&b, "aux:m");
    char path[512];
    tmp_path(path, sizeof path, "v1.params");
    CHECK(nb_write_file(path, b.p, b.len) == 0);
    uint32_t num = 0;
    mxk_ndarray **out = NULL;
    char **on = NULL;
    CHECK_EQ_INT(mxk_ndarray_load(path, &num, &out, &on), MXK_OK);
    CHECK_EQ_INT(num, 2);
    if (num == 2 && on) {
        CHECK(strcmp(on[0], "arg:w") == 0 && strcmp(on[1], "aux:m") == 0);
        mxk_shape s0 = nd_shape(2, 2, 2, 0, 0), s1 = nd_shape(1, 3, 0, 0, 0);
        const int32_t m[3] = {7, 8, 9};
        check_array(out[0], &s0, MXK_FLOAT32, w);
        check_array(out[1], &s1, MXK_INT32, m);
    }
    mxk_ndarray_list_free(num, out, on);
    free(b.p);
}

/** A hand-built legacy file (uint32 ndim/dims, no magic) loads, empty record included. */
static void test_legacy_fixture(void) {
    nd_bytes b = {0};
    nb_header(&b, 3);
    /* Legacy: uint32 ndim, uint32 dims, ctx, dtype, data. */
    nb_u32(&b, 2);
    nb_u32(&b, 2);
    nb_u32(&b, 3);
    nb_i32(&b, 1);
    nb_i32(&b, 0);
    nb_i32(&b, MXK_FLOAT32);
    const float x[6] = {1, 2, 3, 4, 5, 6};
    for (int i = 0; i < 6; i++)
        nb_f32(&b, x[i]);
    nb_u32(&b, 0); /* an empty legacy record: ends after ndim */
    nb_u32(&b, 1);
    nb_u32(&b, 2);
    nb_i32(&b, 1);
    nb_i32(&b, 0);
    nb_i32(&b, MXK_FLOAT64);
    nb_le(&b, 0x400921FB54442D18ull, 8); /* pi */
    nb_le(&b, 0xC000000000000000ull, 8); /* -2 */
    nb_u64(&b, 3);
    nb_name(&b, "x");
    nb_name(&b, "none");
    nb_name(&b, "d");
    uint32_t num = 0;
    mxk_ndarray **out = NULL;
    char **on = NULL;
    CHECK_EQ_INT(mxk_ndarray_load_buffer(b.p, b.len, "legacy fixture", &num, &out, &on), MXK_OK);
    CHECK_EQ_INT(num, 3);
    if (num == 3 && on) {
        CHECK(strcmp(on[0], "x") == 0 && strcmp(on[1], "none") == 0 && strcmp(on[2], "d") == 0);
        mxk_shape s0 = nd_shape(2, 2, 3, 0, 0), s2 = nd_shape(1, 2, 0, 0, 0);
        check_array(out[0], &s0, MXK_FLOAT32, x);
        CHECK_EQ_INT(mxk_ndarray_shape(out[1]).ndim, 0);
        CHECK_EQ_INT(mxk_ndarray_size(out[1]), 0);
        const double d[2] = {3.141592653589793, -2.0};
        check_array(out[2], &s2, MXK_FLOAT64, d);
    }
    mxk_ndarray_list_free(num, out, on);
    free(b.p);
}

/** V3 dense records load; unknown shapes are empty (0-d scalars: test_ndarray_scalar.c). */
static void test_v3_records(void) {
    nd_bytes b = {0};
    nb_header(&b, 2);
    nb_u32(&b, 0xF993FACAu); /* V3 dense (2,) float32 */
    nb_i32(&b, 0);
    nb_i32(&b, 1);
    nb_i64(&b, 2);
    nb_i32(&b, 1);
    nb_i32(&b, 0);
    nb_i32(&b, MXK_FLOAT32);
    nb_f32(&b, 4.0f);
    nb_f32(&b, -8.0f);
    nb_u32(&b, 0xF993FACAu); /* V3 unknown shape (ndim -1): empty */
    nb_i32(&b, 0);
    nb_i32(&b, -1);
    nb_u64(&b, 0);
    uint32_t num = 0;
    mxk_ndarray **out = NULL;
    char **on = NULL;
    CHECK_EQ_INT(mxk_ndarray_load_buffer(b.p, b.len, NULL, &num, &out, &on), MXK_OK);
    CHECK_EQ_INT(num, 2);
    CHECK(on == NULL);
    if (num == 2) {
        mxk_shape s = nd_shape(1, 2, 0, 0, 0);
        const float v[2] = {4, -8};
        check_array(out[0], &s, MXK_FLOAT32, v);
        CHECK_EQ_INT(mxk_ndarray_shape(out[1]).ndim, 0);
    }
    mxk_ndarray_list_free(num, out, on);
    free(b.p);
}

/** Empty arrays are written as 12-byte records and load back empty; empty lists. */
static void test_empty_roundtrip(void) {
    mxk_ndarray *e = NULL, *a = NULL;
    CHECK_EQ_INT(mxki_ndarray_create_empty(MXK_FLOAT32, nd_cpu(), &e), MXK_OK);
    mxk_shape s = nd_shape(1, 1, 0, 0, 0);
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_INT8, nd_cpu(), -7, &a), MXK_OK);
    mxk_ndarray *arrs[3] = {e, a, e};
    uint8_t *b = NULL;
    size_t n = 0;
    CHECK_EQ_INT(mxki_ndarray_save_buffer(3, arrs, NULL, &b, &n), MXK_OK);
    /* 24 header + 12 (empty) + 4+4+4+8+8+4+1 (int8 (1,)) + 12 (empty) + 8 (no names) */
    CHECK_EQ_INT(n, 24 + 12 + 33 + 12 + 8);
    if (n >= 36) {
        const uint8_t empty_rec[12] = {0xc9, 0xfa, 0x93, 0xf9, 0, 0, 0, 0, 0, 0, 0, 0};
        CHECK(memcmp(b + 24, empty_rec, 12) == 0);
    }
    uint32_t num = 0;
    mxk_ndarray **out = NULL;
    char **on = NULL;
    CHECK_EQ_INT(mxk_ndarray_load_buffer(b, n, NULL, &num, &out, &on), MXK_OK);
    CHECK_EQ_INT(num, 3);
    if (num == 3) {
        CHECK_EQ_INT(mxk_ndarray_shape(out[0]).ndim, 0);
        CHECK_EQ_INT(mxk_ndarray_shape(out[2]).ndim, 0);
        const int8_t m7 = -7;
        check_array(out[1], &s, MXK_INT8, &m7);
        CHECK_EQ_INT(mxk_ndarray_wait_to_read(out[0]), MXK_OK);
    }
    mxk_ndarray_list_free(num, out, on);
    free(b);
    mxk_ndarray_free(e);
    mxk_ndarray_free(a);

    /* An empty list. */
    CHECK_EQ_INT(mxki_ndarray_save_buffer(0, NULL, NULL, &b, &n), MXK_OK);
    CHECK_EQ_INT(n, 32);
    CHECK_EQ_INT(mxk_ndarray_load_buffer(b, n, NULL, &num, &out, &on), MXK_OK);
    CHECK_EQ_INT(num, 0);
    CHECK(out == NULL && on == NULL);
    free(b);
}

/** A valid file with several records and names, used by the malformed-input tests. */
static void build_valid(nd_bytes *out) {
    mxk_shape s1 = nd_shape(2, 2, 2, 0, 0), s2 = nd_shape(1, 3, 0, 0, 0);
    float f[4] = {1, 2, 3, 4};
    int64_t l[3] = {-1, 0, 1};
    mxk_ndarray *a = nd_from(&s1, MXK_FLOAT32, nd_cpu(), f),
                *c = nd_from(&s2, MXK_INT64, nd_cpu(), l), *e = NULL;
    mxki_ndarray_create_empty(MXK_FLOAT32, nd_cpu(), &e);
    mxk_ndarray *arrs[3] = {a, e, c};
    const char *names[3] = {"arg:a", "aux:e", "c"};
    uint8_t *b = NULL;
    size_t n = 0;
    CHECK_EQ_INT(mxki_ndarray_save_buffer(3, arrs, names, &b, &n), MXK_OK);
    memset(out, 0, sizeof *out);
    nb_raw(out, b, n);
    free(b);
    mxk_ndarray_free(a);
    mxk_ndarray_free(c);
    mxk_ndarray_free(e);
}

/** Every truncation of a valid file is a format error (memory) or format/IO (file). */
static void test_truncated_every_byte(void) {
    nd_bytes v;
    build_valid(&v);
    uint32_t num = 0;
    mxk_ndarray **out = NULL;
    char **on = NULL;
    CHECK_EQ_INT(mxk_ndarray_load_buffer(v.p, v.len, NULL, &num, &out, &on), MXK_OK);
    mxk_ndarray_list_free(num, out, on);
    char path[512];
    tmp_path(path, sizeof path, "trunc.params");
    int bad = 0;
    for (size_t len = 0; len < v.len; len++) {
        /* From memory (an exact-size heap copy so ASan sees any over-read)... */
        uint8_t *copy = malloc(len ? len : 1);
        memcpy(copy, v.p, len);
        mxk_status st = mxk_ndarray_load_buffer(copy, len, NULL, &num, &out, &on);
        free(copy);
        if (st != MXK_ERR_FORMAT || num != 0 || out != NULL || on != NULL) {
            if (bad++ < 5)
                fprintf(stderr, "truncated at %zu: status %d (%s)\n", len, (int)st,
                        mxki_last_error_message());
        }
        if (len == 50)
            CHECK_CONTAINS(mxki_last_error_message(),
                           "Invalid NDArray file format: array 0: truncated: a dimension needs 8 "
                           "bytes at offset 44 but only 6 remain (memory buffer)");
        /* ...and from a file. */
        CHECK(nb_write_file(path, v.p, len) == 0);
        st = mxk_ndarray_load(path, &num, &out, &on);
        if (st != MXK_ERR_FORMAT && st != MXK_ERR_IO) {
            if (bad++ < 5)
                fprintf(stderr, "file truncated at %zu: status %d\n", len, (int)st);
        }
    }
    CHECK_EQ_INT(bad, 0);
    CHECK_CONTAINS(mxki_last_error_message(),
                   "Invalid NDArray file format: name 2: length 1 at offset");
    free(v.p);
}

/** A bad list magic gives the exact message, naming the file. */
static void test_bad_magic_exact_message(void) {
    nd_bytes v;
    build_valid(&v);
    v.p[0] = 0x13;
    char path[512], want[1024];
    tmp_path(path, sizeof path, "badmagic.params");
    CHECK(nb_write_file(path, v.p, v.len) == 0);
    uint32_t num = 7;
    mxk_ndarray **out = NULL;
    char **on = NULL;
    CHECK_EQ_INT(mxk_ndarray_load(path, &num, &out, &on), MXK_ERR_FORMAT);
    snprintf(want, sizeof want,
             "Invalid NDArray file format: header: bad magic 0x113 at offset 0 (expected 0x112) "
             "(file '%s')",
             path);
    CHECK(strcmp(mxki_last_error_message(), want) == 0);
    if (strcmp(mxki_last_error_message(), want) != 0)
        fprintf(stderr, "got:  %s\nwant: %s\n", mxki_last_error_message(), want);
    CHECK(num == 0 && out == NULL && on == NULL);
    free(v.p);
}

/** A name count that is neither 0 nor the array count: exact message. */
static void test_name_count_mismatch_exact_message(void) {
    nd_bytes b = {0};
    nb_header(&b, 2);
    for (int i = 0; i < 2; i++) {
        nb_u32(&b, 0xF993FAC9u);
        nb_i32(&b, 0);
        nb_i32(&b, 1);
        nb_i64(&b, 1);
        nb_i32(&b, 1);
        nb_i32(&b, 0);
        nb_i32(&b, MXK_UINT8);
        nb_raw(&b, "\x05", 1);
    }
    size_t at = b.len;
    nb_u64(&b, 1);
    nb_name(&b, "only_one");
    uint32_t num = 0;
    mxk_ndarray **out = NULL;
    char **on = NULL;
    CHECK_EQ_INT(mxk_ndarray_load_buffer(b.p, b.len, "x.params", &num, &out, &on), MXK_ERR_FORMAT);
    char want[512];
    snprintf(want, sizeof want,
             "Invalid NDArray file format: names: name count 1 at offset %zu does not match the "
             "array count 2 (x.params)",
             at);
    CHECK(strcmp(mxki_last_error_message(), want) == 0);
    if (strcmp(mxki_last_error_message(), want) != 0)
        fprintf(stderr, "got:  %s\nwant: %s\n", mxki_last_error_message(), want);
    free(b.p);
}

/** One V2 record header up to (not including) ndim, for the malformed cases. */
static void v2_start(nd_bytes *b, int32_t stype) {
    nb_u32(b, 0xF993FAC9u);
    nb_i32(b, stype);
}

/** Loads b and checks the status and a fragment of the message. */
static void expect_load(nd_bytes *b, mxk_status want, const char *fragment) {
    uint32_t num = 0;
    mxk_ndarray **out = NULL;
    char **on = NULL;
    mxk_status st = mxk_ndarray_load_buffer(b->p, b->len, NULL, &num, &out, &on);
    CHECK_EQ_INT(st, want);
    CHECK_CONTAINS(mxki_last_error_message(), fragment);
    if (st == MXK_OK)
        mxk_ndarray_list_free(num, out, on);
    free(b->p);
    memset(b, 0, sizeof *b);
}

/** Bad dtype, sparse storage, absurd counts/ndims/dims/sizes, legacy words, V3 rules. */
static void test_malformed_records(void) {
    nd_bytes b = {0};
    /* Unknown dtype code. */
    nb_header(&b, 1);
    v2_start(&b, 0);
    nb_i32(&b, 1);
    nb_i64(&b, 1);
    nb_i32(&b, 1);
    nb_i32(&b, 0);
    nb_i32(&b, 7);
    nb_u32(&b, 0);
    nb_u64(&b, 0);
    expect_load(&b, MXK_ERR_FORMAT, "Invalid NDArray file format: array 0: unknown dtype code 7");

    /* Sparse storage. */
    nb_header(&b, 1);
    v2_start(&b, 1);
    nb_i32(&b, 1);
    nb_i64(&b, 4);
    expect_load(&b, MXK_ERR_UNSUPPORTED, "row_sparse storage (type 1) is not supported");
    nb_header(&b, 1);
    v2_start(&b, 2);
    expect_load(&b, MXK_ERR_UNSUPPORTED, "csr storage");
    nb_header(&b, 1);
    v2_start(&b, 5);
    expect_load(&b, MXK_ERR_FORMAT, "unknown storage type 5");

    /* Absurd counts: no allocation before the check. */
    nb_header(&b, 1ull << 60);
    expect_load(&b, MXK_ERR_FORMAT, "array count 1152921504606846976 at offset 16");
    nb_header(&b, 0);
    nb_u64(&b, 1ull << 60);
    expect_load(&b, MXK_ERR_FORMAT, "name count 1152921504606846976");
    nb_header(&b, 1);
    v2_start(&b, 0);
    nb_i32(&b, 0); /* empty */
    nb_u64(&b, 1);
    nb_u64(&b, 1ull << 60);
    expect_load(&b, MXK_ERR_FORMAT, "name 0: length 1152921504606846976");
    nb_header(&b, 1);
    v2_start(&b, 0);
    nb_i32(&b, 1000);
    expect_load(&b, MXK_ERR_FORMAT, "ndim 1000 at offset 32 exceeds 32");
    nb_header(&b, 1);
    v2_start(&b, 0);
    nb_i32(&b, 9);
    expect_load(&b, MXK_ERR_UNSUPPORTED, "9 dimensions; mxk supports at most 8");
    nb_header(&b, 1);
    v2_start(&b, 0);
    nb_i32(&b, -5);
    expect_load(&b, MXK_ERR_FORMAT, "ndim -5");
    nb_header(&b, 1);
    v2_start(&b, 0);
    nb_i32(&b, 2);
    nb_i64(&b, 3);
    nb_i64(&b, -3);
    expect_load(&b, MXK_ERR_FORMAT, "dimension 1 is -3");
    nb_header(&b, 1);
    v2_start(&b, 0);
    nb_i32(&b, 3);
    nb_i64(&b, 1ll << 40);
    nb_i64(&b, 1ll << 40);
    nb_i64(&b, 1ll << 40);
    expect_load(&b, MXK_ERR_FORMAT, "more elements than fit in 64 bits");
    nb_header(&b, 1);
    v2_start(&b, 0);
    nb_i32(&b, 2);
    nb_i64(&b, 1ll << 30);
    nb_i64(&b, 1ll << 30);
    nb_i32(&b, 1);
    nb_i32(&b, 0);
    nb_i32(&b, MXK_FLOAT64);
    nb_u64(&b, 0);
    expect_load(&b, MXK_ERR_FORMAT, "needs 9223372036854775808 bytes");
    nb_header(&b, 1);
    v2_start(&b, 0);
    nb_i32(&b, 2);
    nb_i64(&b, 1ll << 31);
    nb_i64(&b, 1ll << 31);
    nb_i32(&b, 1);
    nb_i32(&b, 0);
    nb_i32(&b, MXK_FLOAT64);
    expect_load(&b, MXK_ERR_FORMAT, "is larger than 2^64 bytes");
    nb_header(&b, 1);
    v2_start(&b, 0);
    nb_i32(&b, 2);
    nb_i64(&b, 1000);
    nb_i64(&b, 1000);
    nb_i32(&b, 1);
    nb_i32(&b, 0);
    nb_i32(&b, MXK_FLOAT32);
    nb_u64(&b, 0);
    expect_load(&b, MXK_ERR_FORMAT, "needs 4000000 bytes at offset 64 but only 8 remain");
    /* Legacy first words beyond any ndim. */
    nb_header(&b, 1);
    nb_u32(&b, 1000);
    expect_load(&b, MXK_ERR_FORMAT, "first word 0x000003e8 at offset 24");
    nb_header(&b, 1);
    nb_u32(&b, 12);
    expect_load(&b, MXK_ERR_UNSUPPORTED, "legacy record has 12 dimensions");
    /* A V3 record must be dense. */
    nb_header(&b, 1);
    nb_u32(&b, 0xF993FACAu);
    nb_i32(&b, 1);
    expect_load(&b, MXK_ERR_FORMAT, "V3 record with storage type 1");
    /* Bytes after the names are an error (upstream ignores them). */
    nb_header(&b, 0);
    nb_u64(&b, 0);
    nb_raw(&b, "junk", 4);
    expect_load(&b, MXK_ERR_FORMAT,
                "Invalid NDArray file format: end: 4 bytes after the last name at offset 32 (the "
                "list ends there) (memory buffer)");
    /* Arguments. */
    uint32_t num;
    mxk_ndarray **out;
    char **on;
    CHECK_EQ_INT(mxk_ndarray_load_buffer(NULL, 0, NULL, &num, &out, &on), MXK_ERR_FORMAT);
    CHECK_EQ_INT(mxk_ndarray_load_buffer(NULL, 4, NULL, &num, &out, &on), MXK_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(mxk_ndarray_load_buffer(example85, 85, NULL, NULL, &out, &on),
                 MXK_ERR_INVALID_ARGUMENT);
}

/** File errors are MXK_ERR_IO naming the path and the system error. */
static void test_file_errors(void) {
    char path[512];
    uint32_t num;
    mxk_ndarray **out;
    char **on;
    tmp_path(path, sizeof path, "does-not-exist.params");
    CHECK_EQ_INT(mxk_ndarray_load(path, &num, &out, &on), MXK_ERR_IO);
    CHECK_CONTAINS(mxki_last_error_message(), path);
    CHECK_CONTAINS(mxki_last_error_message(), "No such file or directory");
    CHECK_EQ_INT(mxk_ndarray_load(tmpdir, &num, &out, &on), MXK_ERR_IO);
    CHECK_CONTAINS(mxki_last_error_message(), "it is a directory, not a regular file");

    mxk_shape s = nd_shape(1, 2, 0, 0, 0);
    mxk_ndarray *a = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_FLOAT32, nd_cpu(), 1, &a), MXK_OK);
    tmp_path(path, sizeof path, "no-such-dir/x.params");
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &a, NULL), MXK_ERR_IO);
    CHECK_CONTAINS(mxki_last_error_message(), path);
    CHECK_CONTAINS(mxki_last_error_message(), "No such file or directory");
    const char *names[1] = {NULL};
    tmp_path(path, sizeof path, "nullname.params");
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &a, names), MXK_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(mxk_ndarray_save(NULL, 1, &a, NULL), MXK_ERR_INVALID_ARGUMENT);
    mxk_ndarray_free(a);
}

/** save reports an error of pending work and writes nothing. */
static void test_save_reports_pending_error(void) {
    mxk_shape s = nd_shape(1, 2, 0, 0, 0);
    mxk_ndarray *a = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_FLOAT32, nd_cpu(), 1, &a), MXK_OK);
    CHECK_EQ_INT(nd_push_failing_write(a, "injected failure before save"), MXK_OK);
    char path[512];
    tmp_path(path, sizeof path, "pending.params");
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &a, NULL), MXK_ERR_BACKEND);
    CHECK_CONTAINS(mxki_last_error_message(), "injected failure before save");
    struct stat sb;
    CHECK(stat(path, &sb) != 0); /* nothing written */
    /* the array stays failed until it is written again (kernel/engine) */
    const float two[2] = {2.0f, 2.0f};
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(a, two, sizeof two), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_save(path, 1, &a, NULL), MXK_OK);
    CHECK(stat(path, &sb) == 0);
    mxk_ndarray_free(a);
}

/** Removes the test's files and directory. */
static void cleanup(void) {
    const char *files[] = {"all.params",   "all_named.params", "example.params", "v1.params",
                           "trunc.params", "badmagic.params",  "pending.params", "nullname.params"};
    char path[512];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        tmp_path(path, sizeof path, files[i]);
        unlink(path);
    }
    rmdir(tmpdir);
}

int main(void) {
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/mxk_ndarray_io_XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    nd_start();
    MXK_RUN(test_roundtrip_all_dtypes);
    MXK_RUN(test_example_85_bytes);
    MXK_RUN(test_device_array_saved_with_its_context);
    MXK_RUN(test_v1_fixture);
    MXK_RUN(test_legacy_fixture);
    MXK_RUN(test_v3_records);
    MXK_RUN(test_empty_roundtrip);
    MXK_RUN(test_truncated_every_byte);
    MXK_RUN(test_bad_magic_exact_message);
    MXK_RUN(test_name_count_mismatch_exact_message);
    MXK_RUN(test_malformed_records);
    MXK_RUN(test_file_errors);
    MXK_RUN(test_save_reports_pending_error);
    nd_stop();
    cleanup();
    return MXK_TEST_EXIT();
}
