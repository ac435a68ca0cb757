/*
 * A private temporary directory for the files a fuzz target writes (fuzz_mnist_iter,
 * fuzz_csv_iter, fuzz_states, fuzz_idx): created on first use under $TMPDIR (or /tmp) and
 * removed with the files named through it at exit.
 */
#ifndef MXK_FUZZ_TMP_H
#define MXK_FUZZ_TMP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/** Reports a temporary file that cannot be made and aborts. */
static void fuzz_tmp_fail(const char *path, const char *what) {
    fprintf(stderr, "fuzz: %s: %s\n", path, what);
    abort();
}

/** The temporary directory (set once) and the file names written into it. */
static char fuzz_tmp_dir[256];
static const char *fuzz_tmp_names[8];

/** Removes the files written and the temporary directory (at exit). */
static void fuzz_tmp_cleanup(void) {
    char path[512];
    for (int i = 0; i < 8 && fuzz_tmp_names[i] != NULL; i++) {
        snprintf(path, sizeof path, "%s/%s", fuzz_tmp_dir, fuzz_tmp_names[i]);
        unlink(path);
    }
    rmdir(fuzz_tmp_dir);
}

/**
 * The path of `name` (a string literal; at most 8 names, each removed at exit) in
 * the temporary directory, created on first use and removed at exit, into path
 * (room for 512 bytes).
 */
static void fuzz_tmp_path(const char *name, char *path) {
    if (fuzz_tmp_dir[0] == '\0') {
        snprintf(fuzz_tmp_dir, sizeof fuzz_tmp_dir, "%s/mxk_fuzz_XXXXXX",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        if (mkdtemp(fuzz_tmp_dir) == NULL)
            fuzz_tmp_fail(fuzz_tmp_dir, "cannot create the temporary directory");
        atexit(fuzz_tmp_cleanup);
    }
    int k = 0;
    while (k < 7 && fuzz_tmp_names[k] != NULL && strcmp(fuzz_tmp_names[k], name) != 0)
        k++;
    fuzz_tmp_names[k] = name;
    snprintf(path, 512, "%s/%s", fuzz_tmp_dir, name);
}

/** Writes n bytes to `name` in the temporary directory (fuzz_tmp_path). */
static void fuzz_tmp_write(const char *name, const uint8_t *p, size_t n, char *path) {
    fuzz_tmp_path(name, path);
    FILE *f = fopen(path, "wb");
    if (f == NULL || (n > 0 && fwrite(p, 1, n, f) != n) || fclose(f) != 0)
        fuzz_tmp_fail(path, "cannot write a temporary file");
}

#endif /* MXK_FUZZ_TMP_H */
