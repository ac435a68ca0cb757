/*
 * Writes small MXNet NDArray list files (.params) for the `mxk ndarray` tests,
 * byte by byte, independently of libmxk (so the tool is checked against the
 * format, not against the library's own writer).
 *
 *   write_params KIND PATH
 *
 * KIND:
 *   abc        {"a": float32 [1,2,3]}: 85 bytes, the smallest named V2 file
 *   multi      named arrays of several dtypes (float64, int32, float16, uint8, float32,
 *              int64 with the extreme values)
 *   unnamed    two float32 arrays without names
 *   truncated  the first 50 bytes of `abc`
 *   badmagic   `abc` with the list magic 0x113 instead of 0x112
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/** A byte buffer being written. */
typedef struct buf {
    unsigned char data[4096];
    size_t n;
} buf;

/** Appends `size` bytes of the little-endian value v. */
static void put_le(buf *b, uint64_t v, size_t size) {
    for (size_t i = 0; i < size && b->n < sizeof b->data; i++)
        b->data[b->n++] = (unsigned char)(v >> (8 * i));
}

/** Appends raw bytes. */
static void put_bytes(buf *b, const void *p, size_t size) {
    if (b->n + size <= sizeof b->data) {
        memcpy(b->data + b->n, p, size);
        b->n += size;
    }
}

/** Appends a float32 (host byte order is little-endian on every supported target). */
static void put_f32(buf *b, float v) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    put_le(b, u, 4);
}

/** Appends a float64. */
static void put_f64(buf *b, double v) {
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    put_le(b, u, 8);
}

/** Appends the list header: magic 0x112, reserved 0, array count. */
static void put_header(buf *b, uint64_t count) {
    put_le(b, 0x112, 8);
    put_le(b, 0, 8);
    put_le(b, count, 8);
}

/**
 * Appends a V2 dense array record header on cpu(0): magic, storage type 0, shape,
 * context, type flag. The caller appends the data.
 */
static void put_record(buf *b, int32_t type_flag, int ndim, const int64_t *dims) {
    put_le(b, 0xF993FAC9u, 4);
    put_le(b, 0, 4); /* dense */
    put_le(b, (uint32_t)ndim, 4);
    for (int d = 0; d < ndim; d++)
        put_le(b, (uint64_t)dims[d], 8);
    put_le(b, 1, 4); /* cpu */
    put_le(b, 0, 4); /* dev_id 0 */
    put_le(b, (uint32_t)type_flag, 4);
}

/** Appends the name list. */
static void put_names(buf *b, size_t n, const char *const *names) {
    put_le(b, n, 8);
    for (size_t i = 0; i < n; i++) {
        put_le(b, strlen(names[i]), 8);
        put_bytes(b, names[i], strlen(names[i]));
    }
}

/** {"a": float32 [1,2,3]}. */
static void write_abc(buf *b) {
    static const int64_t dims[] = {3};
    static const char *const names[] = {"a"};
    put_header(b, 1);
    put_record(b, 0, 1, dims);
    put_f32(b, 1.0f);
    put_f32(b, 2.0f);
    put_f32(b, 3.0f);
    put_names(b, 1, names);
}

/** Several dtypes, named as a checkpoint's parameters. */
static void write_multi(buf *b) {
    static const char *const names[] = {"arg:w", "aux:n", "arg:h", "arg:u", "arg:big", "aux:i64"};
    put_header(b, 6);

    static const int64_t w_dims[] = {2, 2};
    put_record(b, 1, 2, w_dims); /* float64 */
    put_f64(b, -1.5);
    put_f64(b, 0.0);
    put_f64(b, 2.5);
    put_f64(b, 4.0);

    static const int64_t n_dims[] = {3};
    put_record(b, 4, 1, n_dims); /* int32 */
    put_le(b, 7, 4);
    put_le(b, (uint32_t)-3, 4);
    put_le(b, 5, 4);

    static const int64_t h_dims[] = {2};
    put_record(b, 2, 1, h_dims); /* float16: 0.5, -2 */
    put_le(b, 0x3800, 2);
    put_le(b, 0xC000, 2);

    static const int64_t u_dims[] = {1, 4};
    put_record(b, 3, 2, u_dims); /* uint8 */
    static const unsigned char u[] = {0, 255, 3, 9};
    put_bytes(b, u, sizeof u);

    static const int64_t big_dims[] = {2, 3};
    put_record(b, 0, 2, big_dims); /* float32 0..5 */
    for (int i = 0; i < 6; i++)
        put_f32(b, (float)i);

    static const int64_t i64_dims[] = {3};
    put_record(b, 6, 1, i64_dims); /* int64: 2^63-1, -2^63, 5 (not exact in a double) */
    put_le(b, (uint64_t)INT64_MAX, 8);
    put_le(b, (uint64_t)INT64_MIN, 8);
    put_le(b, 5, 8);

    put_names(b, 6, names);
}

/** Two unnamed float32 arrays: [0.25] and [[-1, 1]]. */
static void write_unnamed(buf *b) {
    static const int64_t d0[] = {1};
    static const int64_t d1[] = {1, 2};
    put_header(b, 2);
    put_record(b, 0, 1, d0);
    put_f32(b, 0.25f);
    put_record(b, 0, 2, d1);
    put_f32(b, -1.0f);
    put_f32(b, 1.0f);
    put_names(b, 0, NULL);
}

/** Entry point: writes the file of the requested kind. */
int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: write_params abc|multi|unnamed|truncated|badmagic PATH\n");
        return 2;
    }
    static buf b;
    const char *kind = argv[1];
    if (strcmp(kind, "abc") == 0) {
        write_abc(&b);
        if (b.n != 85) {
            fprintf(stderr, "write_params: abc is %zu bytes, expected 85\n", b.n);
            return 1;
        }
    } else if (strcmp(kind, "multi") == 0) {
        write_multi(&b);
    } else if (strcmp(kind, "unnamed") == 0) {
        write_unnamed(&b);
    } else if (strcmp(kind, "truncated") == 0) {
        write_abc(&b);
        b.n = 50;
    } else if (strcmp(kind, "badmagic") == 0) {
        write_abc(&b);
        b.data[0] = 0x13;
    } else {
        fprintf(stderr, "write_params: unknown kind '%s'\n", kind);
        return 2;
    }
    FILE *f = fopen(argv[2], "wb");
    if (f == NULL || fwrite(b.data, 1, b.n, f) != b.n || fclose(f) != 0) {
        perror(argv[2]);
        return 1;
    }
    return 0;
}
