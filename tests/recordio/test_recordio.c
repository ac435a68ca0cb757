/*
 * RecordIO through the public API (mxk_recordio.h). The expected bytes are
 * those of dmlc-core's RecordIOWriter (src/recordio.cc), written out by hand;
 * MXNet's own files are checked by tests/conformance/recordio_conform.py.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mxk_recordio.h"
#include "testing.h"

static char dir[256];

/** dir/name into buf. */
static const char *tmp_path(char *buf, const char *name) {
    snprintf(buf, 512, "%s/%s", dir, name);
    return buf;
}

/** Writes raw bytes to a file. */
static void put_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, n, f);
    fclose(f);
}

/** Reads a whole file into a malloc'd buffer. */
static uint8_t *get_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        *n = 0;
        return NULL;
    }
    uint8_t *b = malloc(1 << 20);
    *n = fread(b, 1, 1 << 20, f);
    fclose(f);
    return b;
}

static const uint8_t MAGIC[4] = {0x0a, 0x23, 0xd7, 0xce};

/** Record i of the test set: lengths 0..40, magic words at aligned and unaligned places. */
static size_t make_record(int i, uint8_t *buf) {
    size_t n = (size_t)(i * 7) % 41;
    for (size_t k = 0; k < n; k++)
        buf[k] = (uint8_t)(i * 13 + k);
    if (i % 3 == 0 && n >= 4)
        memcpy(buf, MAGIC, 4);
    if (i % 4 == 1 && n >= 12)
        memcpy(buf + 8, MAGIC, 4);
    if (i % 5 == 2 && n >= 9)
        memcpy(buf + 5, MAGIC, 4); /* unaligned: not split */
    if (i % 7 == 3 && n >= 8) {
        memcpy(buf + n / 4 * 4 - 4, MAGIC, 4); /* the last aligned word */
        memcpy(buf + 4, MAGIC, 4);
    }
    return n;
}

#define N_RECORDS 60

/** Writes the test set to `path`; tell before each record into pos. */
static void write_set(const char *path, uint64_t *pos) {
    mxk_recordio *h;
    CHECK_EQ_INT(mxk_recordio_open(path, "w", &h), MXK_OK);
    uint8_t buf[64];
    for (int i = 0; i < N_RECORDS; i++) {
        CHECK_EQ_INT(mxk_recordio_tell(h, &pos[i]), MXK_OK);
        CHECK_EQ_INT(mxk_recordio_write(h, buf, make_record(i, buf)), MXK_OK);
    }
    CHECK_EQ_INT(mxk_recordio_close(h), MXK_OK);
}

static void test_round_trip(void) {
    char path[512];
    uint64_t pos[N_RECORDS];
    write_set(tmp_path(path, "set.rec"), pos);
    mxk_recordio *h;
    CHECK_EQ_INT(mxk_recordio_open(path, "r", &h), MXK_OK);
    uint8_t want[64];
    for (int i = 0; i < N_RECORDS; i++) {
        uint64_t at;
        CHECK_EQ_INT(mxk_recordio_tell(h, &at), MXK_OK);
        CHECK_EQ_INT(at, pos[i]);
        const void *got;
        size_t n, wn = make_record(i, want);
        CHECK_EQ_INT(mxk_recordio_read(h, &got, &n), MXK_OK);
        CHECK_EQ_INT(n, wn);
        CHECK(n == wn && (n == 0 || memcmp(got, want, n) == 0));
    }
    const void *got;
    size_t n = 1;
    CHECK_EQ_INT(mxk_recordio_read(h, &got, &n), MXK_OK);
    CHECK(got == NULL && n == 0);
    /* seek back to record 9 (multi-part) */
    CHECK_EQ_INT(mxk_recordio_seek(h, pos[9]), MXK_OK);
    size_t wn = make_record(9, want);
    CHECK_EQ_INT(mxk_recordio_read(h, &got, &n), MXK_OK);
    CHECK(n == wn && memcmp(got, want, n) == 0);
    CHECK_EQ_INT(mxk_recordio_close(h), MXK_OK);
}

/** The exact bytes of dmlc's writer for a few payloads. */
static void test_writer_bytes(void) {
    char path[512];
    mxk_recordio *h;
    CHECK_EQ_INT(mxk_recordio_open(tmp_path(path, "bytes.rec"), "w", &h), MXK_OK);
    const uint8_t split[] = {0x0a, 0x23, 0xd7, 0xce, 'a', 'b'};              /* magic, then "ab" */
    const uint8_t mid[] = {'w', 'x', 'y', 'z', 0x0a, 0x23, 0xd7, 0xce, 'q'}; /* magic at 4 */
    CHECK_EQ_INT(mxk_recordio_write(h, "abcde", 5), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_write(h, "", 0), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_write(h, split, sizeof split), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_write(h, mid, sizeof mid), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_write(h, MAGIC, 4), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_close(h), MXK_OK);
    static const uint8_t want[] = {
        0x0a, 0x23, 0xd7, 0xce, 0x05, 0x00, 0x00, 0x00, 'a',  'b',  'c',  'd',
        'e',  0,    0,    0,    0x0a, 0x23, 0xd7, 0xce, 0x00, 0x00, 0x00, 0x00, /* empty record */
        0x0a, 0x23, 0xd7, 0xce, 0x00, 0x00, 0x00, 0x20,                      /* cflag 1, length 0 */
        0x0a, 0x23, 0xd7, 0xce, 0x02, 0x00, 0x00, 0x60, 'a',  'b',  0,    0, /* cflag 3, length 2 */
        0x0a, 0x23, 0xd7, 0xce, 0x04, 0x00, 0x00, 0x20, 'w',  'x',  'y',  'z', /* cflag 1 */
        0x0a, 0x23, 0xd7, 0xce, 0x01, 0x00, 0x00, 0x60, 'q',  0,    0,    0,   /* cflag 3 */
        0x0a, 0x23, 0xd7, 0xce, 0x00, 0x00, 0x00, 0x20, /* the magic alone: cflag 1 */
        0x0a, 0x23, 0xd7, 0xce, 0x00, 0x00, 0x00, 0x60, /* then cflag 3, both empty */
    };
    size_t n;
    uint8_t *got = get_file(path, &n);
    CHECK_EQ_INT(n, sizeof want);
    CHECK(n == sizeof want && memcmp(got, want, n) == 0);
    free(got);
}

static void test_indexed(void) {
    char idx[512], rec[512];
    tmp_path(idx, "ix.idx");
    tmp_path(rec, "ix.rec");
    mxk_recordio *h;
    CHECK_EQ_INT(mxk_recordio_indexed_open(idx, rec, "w", &h), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_write_idx(h, 5, "five", 4), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_write_idx(h, 3, "three", 5), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_write_idx(h, -9, "minus nine", 10), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_close(h), MXK_OK);
    size_t n;
    char *text = (char *)get_file(idx, &n);
    const char want[] = "5\t0\n3\t12\n-9\t28\n";
    CHECK(n == strlen(want) && memcmp(text, want, n) == 0);
    free(text);
    CHECK_EQ_INT(mxk_recordio_indexed_open(idx, rec, "r", &h), MXK_OK);
    const int64_t *keys;
    CHECK_EQ_INT(mxk_recordio_keys(h, &keys, &n), MXK_OK);
    CHECK(n == 3 && keys[0] == 5 && keys[1] == 3 && keys[2] == -9);
    const void *buf;
    CHECK_EQ_INT(mxk_recordio_read_idx(h, 3, &buf, &n), MXK_OK);
    CHECK(n == 5 && memcmp(buf, "three", 5) == 0);
    CHECK_EQ_INT(mxk_recordio_read_idx(h, -9, &buf, &n), MXK_OK);
    CHECK(n == 10 && memcmp(buf, "minus nine", 10) == 0);
    CHECK_EQ_INT(mxk_recordio_read_idx(h, 5, &buf, &n), MXK_OK);
    CHECK(n == 4 && memcmp(buf, "five", 4) == 0);
    CHECK_EQ_INT(mxk_recordio_read_idx(h, 4, &buf, &n), MXK_ERR_NOT_FOUND);
    char msg[1100];
    snprintf(msg, sizeof msg, "key 4 is not in '%s'", idx);
    CHECK(strcmp(mxk_get_last_error(), msg) == 0);
    CHECK_EQ_INT(mxk_recordio_write(h, "x", 1), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxk_get_last_error(), "mxk_recordio_write: the handle is open for reading") == 0);
    CHECK_EQ_INT(mxk_recordio_close(h), MXK_OK);
    /* a repeated key: the last line wins, keys keep both (a Python dict and list) */
    put_file(idx, "3\t0\n3\t12\n", 9);
    CHECK_EQ_INT(mxk_recordio_indexed_open(idx, rec, "r", &h), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_keys(h, &keys, &n), MXK_OK);
    CHECK_EQ_INT(n, 2);
    CHECK_EQ_INT(mxk_recordio_read_idx(h, 3, &buf, &n), MXK_OK);
    CHECK(n == 5 && memcmp(buf, "three", 5) == 0);
    CHECK_EQ_INT(mxk_recordio_close(h), MXK_OK);
}

/** Every record in exactly one part, in order, for num_parts 1..9. */
static void test_partition(void) {
    char path[512];
    uint64_t pos[N_RECORDS];
    write_set(tmp_path(path, "part.rec"), pos);
    uint8_t want[64];
    for (uint32_t parts = 1; parts <= 9; parts++) {
        int next = 0, nonempty = 0;
        for (uint32_t p = 0; p < parts; p++) {
            mxk_recordio *h;
            CHECK_EQ_INT(mxk_recordio_open(path, "r", &h), MXK_OK);
            CHECK_EQ_INT(mxk_recordio_set_part(h, parts, p), MXK_OK);
            const void *got;
            size_t n;
            int count = 0;
            while (mxk_recordio_read(h, &got, &n) == MXK_OK && got != NULL) {
                size_t wn = make_record(next, want);
                CHECK(next < N_RECORDS && n == wn && (n == 0 || memcmp(got, want, n) == 0));
                next++;
                count++;
            }
            nonempty += count > 0;
            CHECK_EQ_INT(mxk_recordio_close(h), MXK_OK);
        }
        CHECK_EQ_INT(next, N_RECORDS);
        CHECK_EQ_INT(nonempty, parts);
    }
    mxk_recordio *h;
    CHECK_EQ_INT(mxk_recordio_open(path, "r", &h), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_set_part(h, 3, 3), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxk_get_last_error(), "part_index 3 is not below num_parts 3") == 0);
    CHECK_EQ_INT(mxk_recordio_set_part(h, 0, 0), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxk_get_last_error(), "num_parts must be at least 1") == 0);
    CHECK_EQ_INT(mxk_recordio_close(h), MXK_OK);
}

/** Reads `bytes` as a .rec file and checks the error of the first bad read. */
static void expect_read_error(const void *bytes, size_t n, int good, const char *fmt) {
    char path[512], msg[1100];
    put_file(tmp_path(path, "bad.rec"), bytes, n);
    mxk_recordio *h;
    CHECK_EQ_INT(mxk_recordio_open(path, "r", &h), MXK_OK);
    const void *buf;
    size_t len;
    for (int i = 0; i < good; i++)
        CHECK_EQ_INT(mxk_recordio_read(h, &buf, &len), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_read(h, &buf, &len), MXK_ERR_FORMAT);
    CHECK(buf == NULL);
    snprintf(msg, sizeof msg, fmt, path);
    if (strcmp(mxk_get_last_error(), msg) != 0) {
        fprintf(stderr, "got:  %s\nwant: %s\n", mxk_get_last_error(), msg);
        CHECK(0);
    }
    CHECK_EQ_INT(mxk_recordio_close(h), MXK_OK);
}

static void test_corrupt(void) {
    const uint8_t ok[] = {0x0a, 0x23, 0xd7, 0xce, 0x05, 0, 0, 0, 'a', 'b', 'c', 'd', 'e', 0, 0, 0};
    uint8_t b[64];
    memcpy(b, ok, 16);
    expect_read_error(b, 16 + 5, 1, "'%s': truncated record header at byte 16 (5 of 8 bytes)");
    b[16] = 0x11;
    memcpy(b + 17, ok + 1, 7);
    expect_read_error(b, 24, 1, "'%s': bad magic 0xced72311 at byte 16 (expected 0xced7230a)");
    expect_read_error(ok, 14, 0, "'%s': record at byte 0 has length 5 but only 6 bytes follow");
    memcpy(b, ok, 8);
    b[4] = 0xff, b[5] = 0xff, b[6] = 0xff, b[7] = 0x1f; /* length 2^29-1 */
    expect_read_error(b, 8, 0,
                      "'%s': record at byte 0 has length 536870911 but only 0 bytes follow");
    memcpy(b, ok, 16);
    b[7] = 0x40; /* cflag 2 first */
    expect_read_error(b, 16, 0,
                      "'%s': record part at byte 0 has cflag 2, expected 0 or 1 (not the start of "
                      "a record)");
    memcpy(b, ok, 16);
    memcpy(b + 16, ok, 16);
    b[7] = 0x20; /* cflag 1, then a cflag 0 */
    expect_read_error(b, 32, 0,
                      "'%s': record part at byte 16 has cflag 0 inside a multi-part record, "
                      "expected 2 or 3");
}

/** Writes an .idx and checks the error of opening or reading through it. */
static void test_bad_index(void) {
    char idx[512], rec[512], msg[2200];
    tmp_path(idx, "bad.idx");
    tmp_path(rec, "ix.rec"); /* from test_indexed: 3 records, 48 bytes */
    mxk_recordio *h;
    put_file(idx, "0\t0\n1\t48\n", 9);
    CHECK_EQ_INT(mxk_recordio_indexed_open(idx, rec, "r", &h), MXK_ERR_FORMAT);
    snprintf(msg, sizeof msg, "'%s':2: offset 48 is past the end of '%s' (48 bytes)", idx, rec);
    CHECK(strcmp(mxk_get_last_error(), msg) == 0);
    CHECK(h == NULL);
    put_file(idx, "0\t0\n1 12\n", 9);
    CHECK_EQ_INT(mxk_recordio_indexed_open(idx, rec, "r", &h), MXK_ERR_FORMAT);
    snprintf(msg, sizeof msg, "'%s':2: expected 'key<TAB>offset'", idx);
    CHECK(strcmp(mxk_get_last_error(), msg) == 0);
    put_file(idx, "0\t0\n1\t8\n", 8);
    CHECK_EQ_INT(mxk_recordio_indexed_open(idx, rec, "r", &h), MXK_OK);
    const void *buf;
    size_t n;
    CHECK_EQ_INT(mxk_recordio_read_idx(h, 1, &buf, &n), MXK_ERR_FORMAT);
    snprintf(msg, sizeof msg,
             "'%s': key 1 points at byte 8 of '%s', which is not the start of a record: '%s': bad "
             "magic 0x65766966 at byte 8 (expected 0xced7230a)",
             idx, rec, rec);
    CHECK(strcmp(mxk_get_last_error(), msg) == 0);
    CHECK_EQ_INT(mxk_recordio_seek(h, 49), MXK_ERR_INVALID_ARGUMENT);
    snprintf(msg, sizeof msg, "cannot seek to byte 49 of '%s': past its end (48 bytes)", rec);
    CHECK(strcmp(mxk_get_last_error(), msg) == 0);
    CHECK_EQ_INT(mxk_recordio_close(h), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_open(dir, "r", &h), MXK_ERR_IO);
    snprintf(msg, sizeof msg, "'%s' is not a regular file", dir);
    CHECK(strcmp(mxk_get_last_error(), msg) == 0);
    char fifo[512];
    CHECK(mkfifo(tmp_path(fifo, "fifo.rec"), 0600) == 0);
    CHECK_EQ_INT(mxk_recordio_open(fifo, "r", &h), MXK_ERR_IO);
    snprintf(msg, sizeof msg, "'%s' is not a regular file", fifo);
    CHECK(strcmp(mxk_get_last_error(), msg) == 0);
    CHECK_EQ_INT(mxk_recordio_open(tmp_path(fifo, "missing.rec"), "r", &h), MXK_ERR_IO);
    snprintf(msg, sizeof msg, "cannot open '%s': No such file or directory", fifo);
    CHECK(strcmp(mxk_get_last_error(), msg) == 0);
    CHECK_EQ_INT(mxk_recordio_open(rec, "a", &h), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxk_get_last_error(), "mxk_recordio_open: mode must be \"r\" or \"w\"") == 0);
}

/** The target is replaced only at close; a failed handle never writes. */
static void test_atomic(void) {
    char path[512];
    tmp_path(path, "atomic.rec");
    put_file(path, "old", 3);
    mxk_recordio *h;
    CHECK_EQ_INT(mxk_recordio_open(path, "w", &h), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_write(h, "new", 3), MXK_OK);
    size_t n;
    uint8_t *got = get_file(path, &n);
    CHECK(n == 3 && memcmp(got, "old", 3) == 0);
    free(got);
    CHECK_EQ_INT(mxk_recordio_write(h, "x", (size_t)1 << 29), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxk_get_last_error(),
                 "record of 536870912 bytes is longer than RecordIO's limit of 536870911 bytes") ==
          0);
    CHECK_EQ_INT(mxk_recordio_close(h), MXK_OK);
    got = get_file(path, &n);
    CHECK_EQ_INT(n, 12);
    free(got);
    char bad[600];
    snprintf(bad, sizeof bad, "%s/no/such/dir/x.rec", dir);
    CHECK(mxk_recordio_open(bad, "w", &h) != MXK_OK);
    CHECK(h == NULL);
}

static void test_pack(void) {
    mxk_irheader hd = {0, 2.5f, 7, 9};
    void *rec;
    size_t n;
    CHECK_EQ_INT(mxk_recordio_pack(&hd, NULL, "img", 3, &rec, &n), MXK_OK);
    static const uint8_t want0[] = {0, 0, 0, 0, 0, 0, 0x20, 0x40, 7, 0, 0,   0,   0,  0,
                                    0, 0, 9, 0, 0, 0, 0,    0,    0, 0, 'i', 'm', 'g'};
    CHECK(n == sizeof want0 && memcmp(rec, want0, n) == 0);
    mxk_irheader back;
    const void *labels, *payload;
    size_t plen;
    CHECK_EQ_INT(mxk_recordio_unpack(rec, n, &back, &labels, &payload, &plen), MXK_OK);
    CHECK(back.flag == 0 && back.label == 2.5f && back.id == 7 && back.id2 == 9);
    CHECK(labels == NULL && plen == 3 && memcmp(payload, "img", 3) == 0);
    mxk_free(rec);
    const float lab[3] = {1.0f, -2.0f, 0.5f};
    mxk_irheader h3 = {3, 0.0f, 1ull << 40, 2};
    CHECK_EQ_INT(mxk_recordio_pack(&h3, lab, "", 0, &rec, &n), MXK_OK);
    CHECK_EQ_INT(n, 36);
    CHECK_EQ_INT(mxk_recordio_unpack(rec, n, &back, &labels, &payload, &plen), MXK_OK);
    float l3[3];
    memcpy(l3, labels, sizeof l3);
    CHECK(back.flag == 3 && back.id == 1ull << 40 && plen == 0);
    CHECK(l3[0] == 1.0f && l3[1] == -2.0f && l3[2] == 0.5f);
    CHECK_EQ_INT(mxk_recordio_unpack(rec, 35, &back, &labels, &payload, &plen), MXK_ERR_FORMAT);
    CHECK(strcmp(mxk_get_last_error(), "record of 35 bytes is too short for its 3 labels") == 0);
    CHECK_EQ_INT(mxk_recordio_unpack(rec, 23, &back, &labels, &payload, &plen), MXK_ERR_FORMAT);
    CHECK(strcmp(mxk_get_last_error(), "record of 23 bytes is shorter than the 24-byte IRHeader") ==
          0);
    mxk_free(rec);
    CHECK_EQ_INT(mxk_recordio_pack(&h3, NULL, "", 0, &rec, &n), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxk_get_last_error(), "mxk_recordio_pack: labels is NULL but flag is 3") == 0);
}

/** Checks that the last error is exactly `want`. */
static int last_error_is(const char *want) {
    if (strcmp(mxk_get_last_error(), want) == 0)
        return 1;
    fprintf(stderr, "last error \"%s\", want \"%s\"\n", mxk_get_last_error(), want);
    return 0;
}

static void test_pack_img(void) {
    uint8_t pix[7 * 5 * 3];
    for (size_t i = 0; i < sizeof pix; i++)
        pix[i] = (uint8_t)(i * 37 % 251);
    const float lab[2] = {3.0f, 4.5f};
    mxk_irheader hd = {2, 0.0f, 42, 1}, back;
    void *rec;
    size_t n;
    /* PNG: exact; the level 95 of pack_img's default is clamped to 9 */
    CHECK_EQ_INT(mxk_recordio_pack_img(&hd, lab, pix, 5, 7, 3, ".PNG", 95, &rec, &n), MXK_OK);
    CHECK(n > 32 && memcmp((uint8_t *)rec + 32, "\x89PNG", 4) == 0);
    const void *labels;
    uint8_t *out;
    uint32_t h, w, c;
    CHECK_EQ_INT(mxk_recordio_unpack_img(rec, n, -1, &back, &labels, &out, &h, &w, &c), MXK_OK);
    float l2[2];
    memcpy(l2, labels, sizeof l2);
    CHECK(back.flag == 2 && back.id == 42 && back.id2 == 1 && l2[0] == 3.0f && l2[1] == 4.5f);
    CHECK(h == 5 && w == 7 && c == 3 && memcmp(out, pix, sizeof pix) == 0);
    mxk_free(out);
    /* iscolor 0: gray; 1 of a gray image: replicated */
    CHECK_EQ_INT(mxk_recordio_unpack_img(rec, n, 0, &back, &labels, &out, &h, &w, &c), MXK_OK);
    CHECK(h == 5 && w == 7 && c == 1);
    mxk_free(out);
    mxk_free(rec);
    uint8_t gray[4 * 3];
    memset(gray, 90, sizeof gray);
    hd = (mxk_irheader){0, 1.5f, 8, 0};
    /* JPEG quality is clamped to [1, 100]: 0 packs as 1, 101 as 100 */
    for (int q = 0; q <= 1; q++) {
        void *r0, *r1;
        size_t n0, n1;
        CHECK_EQ_INT(mxk_recordio_pack_img(&hd, NULL, gray, 3, 4, 1, ".jpg", q ? 101 : 0, &r0, &n0),
                     MXK_OK);
        CHECK_EQ_INT(mxk_recordio_pack_img(&hd, NULL, gray, 3, 4, 1, ".jpg", q ? 100 : 1, &r1, &n1),
                     MXK_OK);
        CHECK(n0 == n1 && memcmp(r0, r1, n0) == 0);
        mxk_free(r0);
        mxk_free(r1);
    }
    CHECK_EQ_INT(mxk_recordio_pack_img(&hd, NULL, gray, 3, 4, 1, ".jpg", 95, &rec, &n), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_unpack_img(rec, n, 1, &back, &labels, &out, &h, &w, &c), MXK_OK);
    CHECK(back.label == 1.5f && labels == NULL && h == 3 && w == 4 && c == 3);
    int all90 = 1; /* a constant block is exact: its DC is a multiple of the quantiser */
    for (size_t i = 0; i < 3 * 4 * 3; i++)
        all90 &= out[i] == 90;
    CHECK(all90);
    mxk_free(out);
    /* errors */
    CHECK_EQ_INT(mxk_recordio_unpack_img(rec, n, 2, &back, &labels, &out, &h, &w, &c),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(last_error_is("mxk_recordio_unpack_img: iscolor 2 is not -1, 0 or 1"));
    CHECK_EQ_INT(mxk_recordio_unpack_img(rec, n - 2, 1, &back, &labels, &out, &h, &w, &c),
                 MXK_ERR_FORMAT);
    CHECK(last_error_is("record id 8: corrupt JPEG: Premature end of JPEG file"));
    CHECK_EQ_INT(mxk_recordio_unpack_img(rec, 26, 1, &back, &labels, &out, &h, &w, &c),
                 MXK_ERR_FORMAT);
    CHECK(last_error_is("record id 8: not a JPEG or PNG image (first bytes FF D8)"));
    CHECK_EQ_INT(mxk_recordio_unpack_img(rec, 20, 1, &back, &labels, &out, &h, &w, &c),
                 MXK_ERR_FORMAT);
    CHECK(last_error_is("record of 20 bytes is shorter than the 24-byte IRHeader"));
    mxk_free(rec);
    CHECK_EQ_INT(mxk_recordio_pack_img(&hd, NULL, gray, 3, 4, 1, ".gif", 0, &rec, &n),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(last_error_is("mxk_recordio_pack_img: unknown image format '.gif' (.jpg or .png)"));
    CHECK_EQ_INT(mxk_recordio_pack_img(&hd, NULL, pix, 5, 7, 4, ".jpeg", 90, &rec, &n),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(last_error_is("mxk_recordio_pack_img: cannot encode a 4-channel image as JPEG"));
    CHECK_EQ_INT(mxk_recordio_pack_img(&hd, NULL, pix, 0, 7, 3, ".png", 3, &rec, &n),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(last_error_is("mxk_recordio_pack_img: cannot encode an image of 7 x 0 x 3"));
    hd.flag = 1;
    CHECK_EQ_INT(mxk_recordio_pack_img(&hd, NULL, pix, 5, 7, 3, ".png", 3, &rec, &n),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(last_error_is("mxk_recordio_pack: labels is NULL but flag is 1"));
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/mxk_recordio_XXXXXX");
    if (mkdtemp(dir) == NULL)
        return 1;
    MXK_RUN(test_round_trip);
    MXK_RUN(test_writer_bytes);
    MXK_RUN(test_indexed);
    MXK_RUN(test_partition);
    MXK_RUN(test_corrupt);
    MXK_RUN(test_bad_index);
    MXK_RUN(test_atomic);
    MXK_RUN(test_pack);
    MXK_RUN(test_pack_img);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return MXK_TEST_EXIT();
}
