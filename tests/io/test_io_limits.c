/*
 * Bad input to the io-recordio iterators is a clear error, never a hang or an
 * allocation the file cannot back: a FIFO, a character device or a directory
 * given as an IDX or CSV file is refused by name at create (a FIFO used to block
 * open() forever); an IDX header declaring more examples than the file can hold
 * (a plain file: its size; gzip'd: 1032 times its size, deflate's largest ratio)
 * is refused before the data is allocated; a CSV line longer than its row can
 * need, or holding a NUL byte, is refused at next. Upstream MXNet
 * (src/io/iter_mnist.cc, src/io/iter_csv.cc) has none of these checks.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_test_util.h"
#include "testing.h"

/** Expects MNISTIter on (img, lbl) to fail at create with `code` and exactly `text` in it. */
static void expect_mnist(const char *img, const char *lbl, mxk_status code, const char *text) {
    const char *kv[] = {"image", img, "label", lbl, "silent", "True", NULL};
    mxk_data_iter *it = NULL;
    CHECK_EQ_INT(iot_create("MNISTIter", kv, &it), code);
    CHECK(it == NULL);
    CHECK_CONTAINS(mxk_get_last_error(), text);
    mxk_data_iter_free(it);
}

/** CSVIter over `data` with data_shape (3,) and batch 1. */
static mxk_status csv_create(const char *data, mxk_data_iter **it) {
    const char *kv[] = {"data_csv", data, "data_shape", "(3,)", "batch_size", "1", NULL};
    return iot_create("CSVIter", kv, it);
}

/** Reads `data` with CSVIter (shape (3,), batch 1) until the end or an error; returns rows. */
static int csv_rows(const char *data, mxk_status *st) {
    mxk_data_iter *it = NULL;
    *st = csv_create(data, &it);
    int rows = 0;
    int32_t has = 1;
    while (*st == MXK_OK && (*st = mxk_data_iter_next(it, &has)) == MXK_OK && has)
        rows++;
    mxk_data_iter_free(it);
    return rows;
}

static void test_special_files_refused(void) {
    char want[700];
    size_t sl, si;
    uint8_t *lbl = iot_idx_labels(4, &sl), *img = iot_idx_images(4, 2, 2, &si);
    CHECK_EQ_INT(iot_write(iot_path("lbl"), lbl, sl, 0), 0);
    CHECK_EQ_INT(iot_write(iot_path("img"), img, si, 0), 0);
    free(lbl);
    free(img);
    if (mkfifo(iot_path("fifo"), 0600) != 0)
        MXK_SKIP("mkfifo failed: no FIFO in the temp dir");
    snprintf(want, sizeof want, "MNISTIter image file: '%s' is not a regular file (a FIFO)",
             iot_path("fifo"));
    expect_mnist(iot_path("fifo"), iot_path("lbl"), MXK_ERR_FORMAT, want);
    snprintf(want, sizeof want, "MNISTIter label file: '%s' is not a regular file (a FIFO)",
             iot_path("fifo"));
    expect_mnist(iot_path("img"), iot_path("fifo"), MXK_ERR_FORMAT, want);
    snprintf(want, sizeof want, "MNISTIter image file: '%s' is not a regular file (a directory)",
             iot_dir);
    expect_mnist(iot_dir, iot_path("lbl"), MXK_ERR_FORMAT, want);
    /* a symlink to a regular file is read through */
    CHECK_EQ_INT(symlink(iot_path("img"), iot_path("img_link")), 0);
    const char *kv[] = {"image", iot_path("img_link"), "label", iot_path("lbl"), "silent", "True",
                        NULL};
    mxk_data_iter *it = NULL;
    CHECK_EQ_INT(iot_create("MNISTIter", kv, &it), MXK_OK);
    mxk_data_iter_free(it);
    it = NULL;
    CHECK_EQ_INT(csv_create(iot_path("fifo"), &it), MXK_ERR_IO);
    snprintf(want, sizeof want, "CSVIter: data_csv: '%s' is not a regular file (a FIFO)",
             iot_path("fifo"));
    CHECK_CONTAINS(mxk_get_last_error(), want);
    CHECK_EQ_INT(csv_create("/dev/zero", &it), MXK_ERR_IO);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "CSVIter: data_csv: '/dev/zero' is not a regular file (a character device)");
    CHECK(it == NULL);
}

/**
 * Expects MNISTIter on (img, lbl) to refuse the ROLE file at `path` declaring `count`
 * examples of `item` bytes when it can hold `held` bytes after its header.
 */
static void expect_too_big(const char *img, const char *lbl, const char *role, const char *path,
                           unsigned long long count, unsigned long long item,
                           unsigned long long held) {
    char want[700];
    snprintf(want, sizeof want,
             "MNISTIter %s file '%s': the header declares %llu examples of %llu bytes (%llu "
             "bytes), more than the %llu bytes the file can hold after its header",
             role, path, count, item, count * item, held);
    expect_mnist(img, lbl, MXK_ERR_FORMAT, want);
}

static void test_idx_sizes_bounded_by_the_file(void) {
    /* plain: 100 images of 4x3 declared, 50 present: 1200 bytes declared, 600 held */
    size_t si, sl;
    uint8_t *img = iot_idx_images(50, 4, 3, &si);
    iot_be32(img + 4, 100);
    CHECK_EQ_INT(iot_write(iot_path("img_lying"), img, si, 0), 0);
    uint8_t *lbl = iot_idx_labels(100, &sl);
    CHECK_EQ_INT(iot_write(iot_path("lbl100"), lbl, sl, 0), 0);
    expect_too_big(iot_path("img_lying"), iot_path("lbl100"), "image", iot_path("img_lying"), 100,
                   12, 600);
    /* gzip'd: 2^30 images of 28x28 declared in a file of a few hundred bytes */
    uint8_t hdr[16 + 784];
    memset(hdr, 7, sizeof hdr);
    iot_be32(hdr, 0x803);
    iot_be32(hdr + 4, 1u << 30);
    iot_be32(hdr + 8, 28);
    iot_be32(hdr + 12, 28);
    CHECK_EQ_INT(iot_write(iot_path("img_bomb.gz"), hdr, sizeof hdr, 1), 0);
    struct stat st;
    CHECK_EQ_INT(stat(iot_path("img_bomb.gz"), &st), 0);
    expect_too_big(iot_path("img_bomb.gz"), iot_path("lbl100"), "image", iot_path("img_bomb.gz"),
                   1ull << 30, 784, (unsigned long long)st.st_size * 1032ull - 16ull);
    /* labels: 2^20 declared in a 108-byte plain file */
    iot_be32(lbl + 4, 1u << 20);
    CHECK_EQ_INT(iot_write(iot_path("lbl_lying"), lbl, sl, 0), 0);
    expect_too_big(iot_path("img"), iot_path("lbl_lying"), "label", iot_path("lbl_lying"), 1u << 20,
                   1, 100);
    free(img);
    free(lbl);
}

static void test_csv_lines_bounded(void) {
    /* shape (3,): 3 * 64 + 4096 = 4288 bytes with the newline, so 4287 of text at most */
    char *line = malloc(6000);
    memset(line, ' ', 6000);
    memcpy(line, "1,2,3", 5);
    line[4287] = '\n';
    CHECK_EQ_INT(iot_write(iot_path("ok.csv"), line, 4288, 0), 0);
    line[4287] = ' ';
    line[5999] = '\n';
    CHECK_EQ_INT(iot_write(iot_path("long.csv"), line, 6000, 0), 0);
    free(line);
    mxk_status st;
    CHECK_EQ_INT(csv_rows(iot_path("ok.csv"), &st), 1);
    CHECK_EQ_INT(st, MXK_OK);
    CHECK_EQ_INT(csv_rows(iot_path("long.csv"), &st), 0);
    CHECK_EQ_INT(st, MXK_ERR_FORMAT);
    char want[700];
    snprintf(want, sizeof want,
             "CSVIter: data_csv '%s' line 1 is longer than 4287 bytes (64 per value of the "
             "row's shape, plus 4096)",
             iot_path("long.csv"));
    CHECK_CONTAINS(mxk_get_last_error(), want);
    CHECK_EQ_INT(iot_write(iot_path("nul.csv"), "1,2,3\n4,\0,6\n", 12, 0), 0);
    CHECK(csv_rows(iot_path("nul.csv"), &st) <= 1);
    CHECK_EQ_INT(st, MXK_ERR_FORMAT);
    snprintf(want, sizeof want, "CSVIter: data_csv '%s' line 2: a NUL byte (not a text file)",
             iot_path("nul.csv"));
    CHECK_CONTAINS(mxk_get_last_error(), want);
}

int main(void) {
    iot_tmpdir("mxk_io_limits");
    iot_init();
    MXK_RUN(test_special_files_refused);
    MXK_RUN(test_idx_sizes_bounded_by_the_file);
    MXK_RUN(test_csv_lines_bounded);
    mxk_shutdown();
    iot_tmpdir_remove();
    return MXK_TEST_EXIT();
}
