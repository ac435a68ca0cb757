/*
 * The public file API of libmxk (mxk.h "Files") and the symbol files that use it:
 * mxk_file_write / mxk_file_writer_* / mxk_file_check_target / mxk_file_read,
 * mxk_symbol_save writing only when the JSON changed, and mxk_symbol_load refusing
 * a FIFO, /dev/zero and an oversized file instead of blocking or reading forever.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mxk.h"
#include "testing.h"

/** A per-process temporary directory for the test's files. */
static char tmpdir[256];

/** Path of `name` inside tmpdir. */
static void tmp_path(char *out, size_t size, const char *name) {
    snprintf(out, size, "%s/%s", tmpdir, name);
}

/** Checks the last error message is exactly `want`. */
static void check_message(const char *want) {
    CHECK(strcmp(mxk_get_last_error(), want) == 0);
    if (strcmp(mxk_get_last_error(), want) != 0)
        fprintf(stderr, "got:  %s\nwant: %s\n", mxk_get_last_error(), want);
}

/** 1 when `path` holds exactly `text`. */
static int file_is(const char *path, const char *text) {
    char *data = NULL;
    size_t size = 0;
    int same = mxk_file_read(path, NULL, 1 << 20, &data, &size) == MXK_OK && size == strlen(text) &&
               memcmp(data, text, size) == 0;
    free(data);
    return same;
}

/** mxk_file_write replaces, the streaming writer commits or aborts, check_target refuses. */
static void test_public_writer(void) {
    char path[512], want[1024];
    tmp_path(path, sizeof path, "out.txt");
    CHECK_EQ_INT(mxk_file_write(path, "first\n", 6), MXK_OK);
    CHECK(file_is(path, "first\n"));
    mxk_file_writer *w = NULL;
    CHECK_EQ_INT(mxk_file_writer_open(path, &w), MXK_OK);
    CHECK_EQ_INT(mxk_file_writer_write(w, "sec", 3), MXK_OK);
    CHECK(file_is(path, "first\n")); /* nothing visible before the commit */
    mxk_file_writer_abort(w);
    CHECK(file_is(path, "first\n"));
    CHECK_EQ_INT(mxk_file_writer_open(path, &w), MXK_OK);
    CHECK_EQ_INT(mxk_file_writer_write(w, "sec", 3), MXK_OK);
    CHECK_EQ_INT(mxk_file_writer_write(w, "ond\n", 4), MXK_OK);
    CHECK_EQ_INT(mxk_file_writer_commit(w), MXK_OK);
    CHECK(file_is(path, "second\n"));
    CHECK_EQ_INT(mxk_file_check_target(path), MXK_OK);
    CHECK_EQ_INT(mxk_file_check_target("/dev/null"), MXK_ERR_IO);
    check_message("cannot write '/dev/null': it is a character device, not a regular file");
    tmp_path(path, sizeof path, "no-dir/out.txt");
    CHECK_EQ_INT(mxk_file_check_target(path), MXK_ERR_IO);
    snprintf(want, sizeof want, "cannot write '%s': No such file or directory", path);
    check_message(want);
    CHECK_EQ_INT(mxk_file_write(path, "x", 1), MXK_ERR_IO);
    check_message(want);
    CHECK_EQ_INT(mxk_file_check_target(NULL), MXK_ERR_INVALID_ARGUMENT);
    check_message("cannot write '': the path is empty");
}

/** A JSON file with one variable `name`. */
static mxk_symbol *variable(const char *name) {
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxk_symbol_variable(name, &s), MXK_OK);
    return s;
}

/** mxk_symbol_save leaves a file that already holds its JSON alone, and replaces one that differs.
 */
static void test_symbol_written_only_when_changed(void) {
    char path[512];
    tmp_path(path, sizeof path, "m-symbol.json");
    mxk_symbol *x = variable("x"), *y = variable("y");
    CHECK_EQ_INT(mxk_symbol_save(x, path), MXK_OK);
    const struct timespec old[2] = {{.tv_sec = 946684800}, {.tv_sec = 946684800}}; /* 2000 */
    CHECK(utimensat(AT_FDCWD, path, old, 0) == 0);
    struct stat sb;
    CHECK_EQ_INT(mxk_symbol_save(x, path), MXK_OK);
    CHECK(stat(path, &sb) == 0 && sb.st_mtim.tv_sec == 946684800); /* not written */
    CHECK_EQ_INT(mxk_symbol_save(y, path), MXK_OK);
    CHECK(stat(path, &sb) == 0 && sb.st_mtim.tv_sec != 946684800); /* replaced */
    mxk_symbol *back = NULL;
    CHECK_EQ_INT(mxk_symbol_load(path, &back), MXK_OK);
    char *json = NULL;
    CHECK(back != NULL && mxk_symbol_to_json(back, &json) == MXK_OK && strstr(json, "\"y\""));
    free(json);
    mxk_symbol_free(back);
    mxk_symbol_free(x);
    mxk_symbol_free(y);
}

/** A FIFO, /dev/zero and a file over the limit are refused at once. */
static void test_symbol_load_refuses_special_files(void) {
    char path[512], want[1024];
    mxk_symbol *s = NULL;
    tmp_path(path, sizeof path, "fifo.json");
    CHECK(mkfifo(path, 0600) == 0);
    CHECK_EQ_INT(mxk_symbol_load(path, &s), MXK_ERR_IO);
    snprintf(want, sizeof want, "cannot read symbol file '%s': it is a FIFO, not a regular file",
             path);
    check_message(want);
    CHECK_EQ_INT(mxk_symbol_load("/dev/zero", &s), MXK_ERR_IO);
    check_message(
        "cannot read symbol file '/dev/zero': it is a character device, not a regular file");
    tmp_path(path, sizeof path, "huge.json");
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f)
        fclose(f);
    if (truncate(path, 300 << 20) != 0)
        MXK_SKIP("cannot make a sparse 300 MiB file here");
    CHECK_EQ_INT(mxk_symbol_load(path, &s), MXK_ERR_FORMAT);
    snprintf(want, sizeof want,
             "cannot read symbol file '%s': 314572800 bytes is more than the limit of 268435456 "
             "bytes",
             path);
    check_message(want);
    CHECK(s == NULL);
    unlink(path);
}

int main(void) {
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/mxk_files_api_XXXXXX", base && *base ? base : "/tmp");
    if (mkdtemp(tmpdir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    MXK_RUN(test_public_writer);
    MXK_RUN(test_symbol_written_only_when_changed);
    MXK_RUN(test_symbol_load_refuses_special_files);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return MXK_TEST_EXIT();
}
