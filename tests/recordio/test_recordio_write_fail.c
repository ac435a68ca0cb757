/*
 * RecordIO writing when the disk fails (kernel/ndarray/file_io.h's write hook,
 * so this links the white-box kernel): the write or close that meets the error
 * reports the file writer's message, later writes and the close refuse, and
 * neither the .rec nor the .idx appears; an earlier file of the name is kept.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file_io.h"
#include "mxk_recordio.h"
#include "testing.h"

static char dir[256];

/** Fails every write with ENOSPC. */
static ssize_t full_disk(int fd, const void *p, size_t n) {
    (void)fd, (void)p, (void)n;
    errno = ENOSPC;
    return -1;
}

/** Reads a whole small file into buf (NUL-terminated); returns its size or -1 when absent. */
static long slurp(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    size_t n = fread(buf, 1, cap - 1, f);
    buf[n] = '\0';
    fclose(f);
    return (long)n;
}

/** Big records: the buffered writer meets the error during a write. */
static void test_fail_in_write(void) {
    char rec[512], idx[512], want[1200], got[64];
    snprintf(rec, sizeof rec, "%s/big.rec", dir);
    snprintf(idx, sizeof idx, "%s/big.idx", dir);
    FILE *f = fopen(rec, "wb");
    fputs("old", f);
    fclose(f);
    size_t n = 1 << 20;
    char *buf = calloc(1, n);
    mxk_recordio *h;
    CHECK_EQ_INT(mxk_recordio_indexed_open(idx, rec, "w", &h), MXK_OK);
    mxki_file_io_set_write_hook(full_disk);
    mxk_status st = MXK_OK;
    for (int i = 0; i < 8 && st == MXK_OK; i++)
        st = mxk_recordio_write_idx(h, i, buf, n);
    CHECK_EQ_INT(st, MXK_ERR_IO);
    snprintf(want, sizeof want, "cannot write '%s': No space left on device", rec);
    CHECK(strcmp(mxk_get_last_error(), want) == 0);
    CHECK_EQ_INT(mxk_recordio_write_idx(h, 9, buf, 4), MXK_ERR_IO);
    snprintf(want, sizeof want, "'%s' not written: an earlier write failed", rec);
    CHECK(strcmp(mxk_get_last_error(), want) == 0);
    CHECK_EQ_INT(mxk_recordio_close(h), MXK_ERR_IO);
    CHECK(strcmp(mxk_get_last_error(), want) == 0);
    mxki_file_io_set_write_hook(NULL);
    CHECK(slurp(rec, got, sizeof got) == 3 && strcmp(got, "old") == 0);
    CHECK(slurp(idx, got, sizeof got) == -1);
    free(buf);
}

/** Small records: the error comes at close (the .idx is committed first). */
static void test_fail_at_close(void) {
    char rec[512], idx[512], want[1200], got[64];
    snprintf(rec, sizeof rec, "%s/small.rec", dir);
    snprintf(idx, sizeof idx, "%s/small.idx", dir);
    mxk_recordio *h;
    CHECK_EQ_INT(mxk_recordio_indexed_open(idx, rec, "w", &h), MXK_OK);
    CHECK_EQ_INT(mxk_recordio_write_idx(h, 1, "one", 3), MXK_OK);
    mxki_file_io_set_write_hook(full_disk);
    CHECK_EQ_INT(mxk_recordio_close(h), MXK_ERR_IO);
    mxki_file_io_set_write_hook(NULL);
    snprintf(want, sizeof want, "cannot write '%s': No space left on device", idx);
    CHECK(strcmp(mxk_get_last_error(), want) == 0);
    CHECK(slurp(rec, got, sizeof got) == -1);
    CHECK(slurp(idx, got, sizeof got) == -1);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/mxk_recordio_wf_XXXXXX");
    if (mkdtemp(dir) == NULL)
        return 1;
    MXK_RUN(test_fail_in_write);
    MXK_RUN(test_fail_at_close);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return MXK_TEST_EXIT();
}
