/*
 * A little-endian byte builder for hand-made NDArray list fixtures (tests and the
 * fuzz driver's seeds), plus file helpers.
 */
#ifndef MXK_ND_BYTES_H
#define MXK_ND_BYTES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** A growable byte buffer; aborts when out of memory (tests only). */
typedef struct nd_bytes {
    uint8_t *p;
    size_t len, cap;
} nd_bytes;

/** Appends n raw bytes. */
static inline void nb_raw(nd_bytes *b, const void *p, size_t n) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *q = realloc(b->p, cap);
        if (q == NULL)
            abort();
        b->p = q;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

/** Appends a little-endian integer of `size` bytes. */
static inline void nb_le(nd_bytes *b, uint64_t v, size_t size) {
    uint8_t t[8];
    for (size_t i = 0; i < size; i++)
        t[i] = (uint8_t)(v >> (8 * i));
    nb_raw(b, t, size);
}

/** Appends a little-endian uint32. */
static inline void nb_u32(nd_bytes *b, uint32_t v) {
    nb_le(b, v, 4);
}
/** Appends a little-endian int32. */
static inline void nb_i32(nd_bytes *b, int32_t v) {
    nb_le(b, (uint32_t)v, 4);
}
/** Appends a little-endian uint64. */
static inline void nb_u64(nd_bytes *b, uint64_t v) {
    nb_le(b, v, 8);
}
/** Appends a little-endian int64. */
static inline void nb_i64(nd_bytes *b, int64_t v) {
    nb_le(b, (uint64_t)v, 8);
}
/** Appends a float32 in little-endian order. */
static inline void nb_f32(nd_bytes *b, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    nb_u32(b, u);
}
/** Appends a name as uint64 length + bytes. */
static inline void nb_name(nd_bytes *b, const char *s) {
    nb_u64(b, strlen(s));
    nb_raw(b, s, strlen(s));
}
/** Appends the list header (magic 0x112, reserved 0, count). */
static inline void nb_header(nd_bytes *b, uint64_t count) {
    nb_u64(b, 0x112);
    nb_u64(b, 0);
    nb_u64(b, count);
}

/** Writes bytes to a file; returns 0 on success. */
static inline int nb_write_file(const char *path, const void *p, size_t n) {
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -1;
    size_t w = n ? fwrite(p, 1, n, f) : 0;
    return (fclose(f) == 0 && w == n) ? 0 : -1;
}

/** Reads a whole file into a malloc'd buffer (*n bytes); NULL on failure. */
static inline uint8_t *nb_read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return NULL;
    nd_bytes b = {0};
    uint8_t tmp[4096];
    size_t k;
    while ((k = fread(tmp, 1, sizeof tmp, f)) > 0)
        nb_raw(&b, tmp, k);
    fclose(f);
    nb_raw(&b, "", 0);
    *n = b.len;
    if (b.p == NULL)
        b.p = malloc(1);
    return b.p;
}

#endif /* MXK_ND_BYTES_H */
