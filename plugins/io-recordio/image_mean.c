/* The mean image file (image_mean.h). */
#include "image_mean.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_file.h"

/** Reads n bytes; 0 or -1 (short). */
static int get(FILE *f, void *v, size_t n) {
    return fread(v, 1, n, f) == n ? 0 : -1;
}

/** Reads a little-endian unsigned integer of n bytes. */
static int get_le(FILE *f, size_t n, uint64_t *v) {
    uint8_t b[8];
    if (get(f, b, n) != 0)
        return -1;
    *v = 0;
    for (size_t i = n; i-- > 0;)
        *v = *v << 8 | b[i];
    return 0;
}

int mean_img_read(const char *path, uint32_t c, uint32_t h, uint32_t w, float **out, int *exists,
                  char *msg, size_t cap) {
    *out = NULL;
    *exists = 1;
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT) {
        *exists = 0;
        return 0;
    }
    int fd = io_open_regular(path, "mean_img", NULL, msg, cap);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "rb");
    if (f == NULL) {
        if (fd >= 0) {
            snprintf(msg, cap, "mean_img: cannot read '%s': %s", path, strerror(errno));
            close(fd);
        }
        return -1;
    }
    uint64_t magic, reserved, count, rmagic, stype, ndim, dims[3], dev, dtype;
    int ok = get_le(f, 8, &magic) == 0 && get_le(f, 8, &reserved) == 0 &&
             get_le(f, 8, &count) == 0 && get_le(f, 4, &rmagic) == 0 && get_le(f, 4, &stype) == 0 &&
             get_le(f, 4, &ndim) == 0;
    ok = ok && magic == 0x112 && count == 1 && (rmagic == 0xF993FAC9u || rmagic == 0xF993FACAu) &&
         stype == 0 && ndim == 3;
    for (int i = 0; ok && i < 3; i++)
        ok = get_le(f, 8, &dims[i]) == 0;
    ok = ok && get_le(f, 8, &dev) == 0 && get_le(f, 4, &dtype) == 0 && dtype == 0;
    int rc = -1;
    if (!ok) {
        snprintf(msg, cap, "mean_img '%s': not an NDArray file holding one dense float32 array",
                 path);
    } else if (dims[0] != c || dims[1] != h || dims[2] != w) {
        snprintf(msg, cap, "mean_img '%s' has shape (%lld, %lld, %lld), expected (%u, %u, %u)",
                 path, (long long)dims[0], (long long)dims[1], (long long)dims[2], (unsigned)c,
                 (unsigned)h, (unsigned)w);
    } else if ((*out = malloc((size_t)c * h * w * sizeof **out)) == NULL) {
        snprintf(msg, cap, "out of memory");
    } else if (get(f, *out, (size_t)c * h * w * sizeof **out) != 0) {
        snprintf(msg, cap, "mean_img '%s': truncated", path);
    } else {
        rc = 0; /* little-endian hosts only, as the rest of mxk */
    }
    fclose(f);
    if (rc != 0) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

/** Appends n little-endian bytes of v. */
static void put_le(FILE *f, uint64_t v, size_t n) {
    for (size_t i = 0; i < n; i++)
        fputc((int)(v >> (8 * i)) & 0xff, f);
}

int mean_img_write(const char *path, uint32_t c, uint32_t h, uint32_t w, const float *mean,
                   char *msg, size_t cap) {
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (f == NULL) {
        snprintf(msg, cap, "mean_img '%s': cannot write: %s", path, strerror(errno));
        return -1;
    }
    put_le(f, 0x112, 8);
    put_le(f, 0, 8);
    put_le(f, 1, 8);
    put_le(f, 0xF993FAC9u, 4);
    put_le(f, 0, 4); /* dense */
    put_le(f, 3, 4);
    put_le(f, c, 8);
    put_le(f, h, 8);
    put_le(f, w, 8);
    put_le(f, 1, 4); /* cpu */
    put_le(f, 0, 4);
    put_le(f, 0, 4); /* float32 */
    fwrite(mean, sizeof *mean, (size_t)c * h * w, f);
    put_le(f, 1, 8);
    put_le(f, 8, 8);
    fwrite("mean_img", 1, 8, f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        snprintf(msg, cap, "mean_img '%s': cannot write: %s", path, strerror(errno));
        remove(tmp);
        return -1;
    }
    return 0;
}
