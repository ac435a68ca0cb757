/*
 * Helpers of the iterator tests: writing small IDX / CSV files, and creating,
 * reading and checking iterators through the public API (kernel/include/mxk.h).
 */
#ifndef MXK_IO_TEST_UTIL_H
#define MXK_IO_TEST_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "mxk.h"

/** The test's temporary directory (iot_tmpdir). */
static char iot_dir[256];

/** Creates a fresh temporary directory "$TMPDIR/PREFIX_XXXXXX" (/tmp without TMPDIR);
 * exits 1 on failure. */
static inline void iot_tmpdir(const char *prefix) {
    snprintf(iot_dir, sizeof iot_dir, "%s/%s_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             prefix);
    if (mkdtemp(iot_dir) == NULL) {
        perror("mkdtemp");
        exit(1);
    }
}

/** Removes the temporary directory and what it holds (a message when it cannot). */
static inline void iot_tmpdir_remove(void) {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", iot_dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", iot_dir);
}

/** Path of `name` in the temporary directory (a rotation of 8 static buffers). */
static inline const char *iot_path(const char *name) {
    static char bufs[8][512];
    static int k;
    char *b = bufs[k++ % 8];
    snprintf(b, 512, "%s/%s", iot_dir, name);
    return b;
}

/** Initialises mxk from the build tree's config dir; exits 1 on failure. */
static inline void iot_init(void) {
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = BUILD_CONFDIR};
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        exit(1);
    }
}

/** Writes bytes to path (gzip'd when gz). Returns 0 on success. */
static inline int iot_write(const char *path, const void *buf, size_t n, int gz) {
    if (gz) {
        gzFile f = gzopen(path, "wb");
        if (f == NULL)
            return -1;
        int ok = n == 0 || gzwrite(f, buf, (unsigned)n) == (int)n;
        return gzclose(f) == Z_OK && ok ? 0 : -1;
    }
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    size_t w = fwrite(buf, 1, n, f);
    return fclose(f) == 0 && w == n ? 0 : -1;
}

/** Big-endian uint32 into p. */
static inline void iot_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/**
 * Builds an IDX image file of n images rows x cols in which image i's first
 * pixel is i % 256, its second i / 256, the rest (i + k) % 256; returns a
 * malloc'd buffer and its size.
 */
static inline uint8_t *iot_idx_images(uint32_t n, uint32_t rows, uint32_t cols, size_t *size) {
    size_t item = (size_t)rows * cols;
    *size = 16 + (size_t)n * item;
    uint8_t *b = malloc(*size);
    iot_be32(b, 0x803);
    iot_be32(b + 4, n);
    iot_be32(b + 8, rows);
    iot_be32(b + 12, cols);
    for (uint32_t i = 0; i < n; i++)
        for (size_t k = 0; k < item; k++)
            b[16 + i * item + k] = (uint8_t)(k == 0 ? i % 256 : k == 1 ? i / 256 : (i + k) % 256);
    return b;
}

/** Builds an IDX label file: label i = i % 10. */
static inline uint8_t *iot_idx_labels(uint32_t n, size_t *size) {
    *size = 8 + (size_t)n;
    uint8_t *b = malloc(*size);
    iot_be32(b, 0x801);
    iot_be32(b + 4, n);
    for (uint32_t i = 0; i < n; i++)
        b[8 + i] = (uint8_t)(i % 10);
    return b;
}

/** Creates an iterator from a NULL-terminated key/value list; returns status. */
static inline mxk_status iot_create(const char *type, const char *const *kv, mxk_data_iter **it) {
    const char *keys[32], *vals[32];
    uint32_t n = 0;
    for (; kv[2 * n] != NULL; n++) {
        keys[n] = kv[2 * n];
        vals[n] = kv[2 * n + 1];
    }
    return mxk_data_iter_create(type, n, keys, vals, it);
}

#endif /* MXK_IO_TEST_UTIL_H */
