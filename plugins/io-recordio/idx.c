/*
 * IDX parsing and MNISTIter's partition of a file (see idx.h). Upstream
 * reference: MXNet src/io/iter_mnist.cc (LoadImage / LoadLabel, which read the
 * same header with ReadInt (big-endian), and GetPart).
 */
#include "idx.h"
#include "io_file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/** Reads exactly n bytes; returns the number read (< n at the end) or -1 on error. */
static int64_t read_full(const idx_reader *r, void *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        int64_t k = r->read(r->ctx, (uint8_t *)buf + got, n - got);
        if (k < 0)
            return -1;
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (int64_t)got;
}

/** The reader's error text, or a generic one. */
static const char *reader_err(const idx_reader *r) {
    const char *m = r->errmsg ? r->errmsg(r->ctx) : NULL;
    return m ? m : "read error";
}

/** Big-endian uint32 at p (IDX header fields; iter_mnist.cc ReadInt). */
static uint32_t be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

int idx_read_header(const idx_reader *r, uint32_t expect_ndim, const char *what, idx_data *out,
                    char *msg, size_t msgsize) {
    memset(out, 0, sizeof *out);
    uint8_t magic[4];
    int64_t k = read_full(r, magic, 4);
    if (k < 0) {
        snprintf(msg, msgsize, "%s: %s", what, reader_err(r));
        return -1;
    }
    if (k < 4) {
        snprintf(msg, msgsize, "%s: truncated IDX header: %lld of 4 magic bytes", what,
                 (long long)k);
        return -1;
    }
    uint32_t m = be32(magic);
    uint32_t want = 0x800u | expect_ndim;
    if (m != want) {
        snprintf(msg, msgsize,
                 "%s: not an IDX %s file: magic 0x%08x, expected 0x%08x (unsigned bytes, %u "
                 "dimension%s)",
                 what, expect_ndim == 1 ? "label" : "image", (unsigned)m, (unsigned)want,
                 (unsigned)expect_ndim, expect_ndim == 1 ? "" : "s");
        return -1;
    }
    uint8_t hdr[12];
    size_t need = 4u * expect_ndim;
    k = read_full(r, hdr, need);
    if (k < 0) {
        snprintf(msg, msgsize, "%s: %s", what, reader_err(r));
        return -1;
    }
    if ((size_t)k < need) {
        snprintf(msg, msgsize, "%s: truncated IDX header: %lld of %zu dimension bytes", what,
                 (long long)k, need);
        return -1;
    }
    out->ndim = expect_ndim;
    uint64_t item = 1;
    for (uint32_t i = 0; i < expect_ndim; i++) {
        out->dims[i] = be32(hdr + 4 * i);
        if (out->dims[i] == 0) {
            snprintf(msg, msgsize, "%s: IDX dimension %u is 0", what, (unsigned)i);
            return -1;
        }
        if (i > 0)
            item *= out->dims[i];
        if (i > 0 && item > IDX_MAX_ITEM) {
            snprintf(msg, msgsize, "%s: IDX example size %llu bytes exceeds the limit %u", what,
                     (unsigned long long)item, (unsigned)IDX_MAX_ITEM);
            return -1;
        }
    }
    if (out->dims[0] > IDX_MAX_COUNT) {
        snprintf(msg, msgsize, "%s: IDX declares %u examples, more than the limit %u", what,
                 (unsigned)out->dims[0], (unsigned)IDX_MAX_COUNT);
        return -1;
    }
    out->item_size = item;
    uint64_t header = 4u + need, declared = (uint64_t)out->dims[0] * item;
    if (r->limit != 0 && (r->limit < header || declared > r->limit - header)) {
        snprintf(msg, msgsize,
                 "%s: the header declares %u examples of %llu bytes (%llu bytes), more than the "
                 "%llu bytes the file can hold after its header",
                 what, (unsigned)out->dims[0], (unsigned long long)item,
                 (unsigned long long)declared,
                 (unsigned long long)(r->limit > header ? r->limit - header : 0));
        return -1;
    }
    return 0;
}

int idx_read(const idx_reader *r, uint32_t expect_ndim, const char *what, uint64_t begin,
             uint64_t end, idx_data *out, char *msg, size_t msgsize) {
    if (idx_read_header(r, expect_ndim, what, out, msg, msgsize) != 0)
        return -1;
    uint64_t count = out->dims[0];
    if (end == UINT64_MAX)
        end = count;
    if (begin > end || end > count) {
        snprintf(msg, msgsize, "%s: slice [%llu, %llu) outside the %llu examples", what,
                 (unsigned long long)begin, (unsigned long long)end, (unsigned long long)count);
        return -1;
    }
    /* Skip the examples before the slice, in bounded chunks. */
    uint8_t skipbuf[8192];
    uint64_t skip = begin * out->item_size;
    while (skip > 0) {
        size_t n = skip < sizeof skipbuf ? (size_t)skip : sizeof skipbuf;
        int64_t k = read_full(r, skipbuf, n);
        if (k < 0) {
            snprintf(msg, msgsize, "%s: %s", what, reader_err(r));
            return -1;
        }
        if ((size_t)k < n) {
            snprintf(msg, msgsize,
                     "%s: truncated IDX data: the header declares %llu examples "
                     "of %llu bytes, the file ends before example %llu",
                     what, (unsigned long long)count, (unsigned long long)out->item_size,
                     (unsigned long long)begin);
            return -1;
        }
        skip -= n;
    }
    /* The buffer grows as data arrives (never trusting the declared size for the
     * allocation): a corrupt header declaring 2^30 examples of a truncated file
     * costs what the file holds, not what it claims. */
    uint64_t bytes = (end - begin) * out->item_size;
    uint64_t cap = bytes < (UINT64_C(1) << 24) ? bytes : (UINT64_C(1) << 24);
    uint8_t *data = malloc(cap ? (size_t)cap : 1);
    uint64_t have = 0;
    while (data != NULL && have < bytes) {
        if (have == cap) {
            uint64_t ncap = cap * 2 < bytes ? cap * 2 : bytes;
            uint8_t *nd = realloc(data, (size_t)ncap);
            if (nd == NULL) {
                free(data);
                data = NULL;
                break;
            }
            data = nd;
            cap = ncap;
        }
        size_t want = (size_t)(cap - have);
        int64_t k = read_full(r, data + have, want);
        if (k < 0) {
            free(data);
            snprintf(msg, msgsize, "%s: %s", what, reader_err(r));
            return -1;
        }
        have += (uint64_t)k;
        if ((size_t)k < want) /* short read: the file ended */
            break;
    }
    if (data == NULL) {
        snprintf(msg, msgsize, "%s: out of memory reading %llu bytes", what,
                 (unsigned long long)bytes);
        return -1;
    }
    if (have < bytes) {
        free(data);
        snprintf(msg, msgsize,
                 "%s: truncated IDX data: the header declares %llu examples of %llu bytes, the "
                 "file ends after %llu of the %llu bytes of examples [%llu, %llu)",
                 what, (unsigned long long)count, (unsigned long long)out->item_size,
                 (unsigned long long)have, (unsigned long long)bytes, (unsigned long long)begin,
                 (unsigned long long)end);
        return -1;
    }
    out->data = data;
    out->begin = begin;
    out->end = end;
    return 0;
}

/** gzread-backed reader state. */
typedef struct gz_ctx {
    gzFile f;
    char err[256];
} gz_ctx;

/** idx_reader.read over gzread (plain files pass through transparently). */
static int64_t gz_read(void *ctx, void *buf, size_t n) {
    gz_ctx *g = ctx;
    size_t got = 0;
    while (got < n) {
        size_t chunk = n - got > (1u << 30) ? (1u << 30) : n - got;
        int k = gzread(g->f, (uint8_t *)buf + got, (unsigned)chunk);
        if (k < 0) {
            int zerr = 0;
            const char *m = gzerror(g->f, &zerr);
            snprintf(g->err, sizeof g->err, "gzip/read error: %s", m ? m : "unknown");
            return -1;
        }
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (int64_t)got;
}

/** idx_reader.errmsg for gz_ctx. */
static const char *gz_errmsg(void *ctx) {
    gz_ctx *g = ctx;
    return g->err[0] ? g->err : NULL;
}

int idx_read_file(const char *path, uint32_t expect_ndim, const char *what,
                  void (*slice)(void *ctx, uint64_t count, uint64_t *begin, uint64_t *end),
                  void *slice_ctx, idx_data *out, char *msg, size_t msgsize) {
    memset(out, 0, sizeof *out);
    gz_ctx g = {0};
    uint64_t size = 0;
    int fd = io_open_regular(path, what, &size, msg, msgsize);
    if (fd < 0)
        return -1;
    errno = 0;
    g.f = gzdopen(fd, "rb");
    if (g.f == NULL) {
        snprintf(msg, msgsize, "%s: cannot open '%s': %s", what, path,
                 errno ? strerror(errno) : "gzdopen failed");
        close(fd);
        return -1;
    }
    gzbuffer(g.f, 1u << 17);
    /* gzdirect right after gzdopen looks at the start: 1 for a plain file */
    uint64_t limit = gzdirect(g.f) ? size : size * IDX_GZIP_MAX_RATIO;
    idx_reader r = {.ctx = &g, .read = gz_read, .errmsg = gz_errmsg, .limit = limit ? limit : 1};
    char where[1024];
    snprintf(where, sizeof where, "%s '%s'", what, path);
    int rc;
    if (slice == NULL) {
        rc = idx_read(&r, expect_ndim, where, 0, UINT64_MAX, out, msg, msgsize);
    } else {
        /* Header first, then the slice the caller computes from the count. */
        rc = idx_read_header(&r, expect_ndim, where, out, msg, msgsize);
        if (rc == 0) {
            idx_data hdr = *out;
            uint64_t b = 0, e = hdr.dims[0];
            slice(slice_ctx, hdr.dims[0], &b, &e);
            gzrewind(g.f);
            rc = idx_read(&r, expect_ndim, where, b, e, out, msg, msgsize);
        }
    }
    gzclose(g.f);
    return rc;
}

void idx_free(idx_data *d) {
    if (d == NULL)
        return;
    free(d->data);
    memset(d, 0, sizeof *d);
}

void idx_part_slice(void *ctx, uint64_t count, uint64_t *begin, uint64_t *end) {
    const idx_part *ps = ctx;
    double step = (double)count / (double)ps->parts;
    *begin = (uint64_t)(step * (double)ps->index);
    *end = ps->index + 1 == ps->parts ? count : (uint64_t)(step * (double)(ps->index + 1));
    if (*end > count)
        *end = count;
    if (*begin > *end)
        *begin = *end;
}
