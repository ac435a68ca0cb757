/*
 * RecordIO reader, writer, partitioning and IRHeader (recordio.h). Semantics of
 * dmlc-core src/recordio.cc (RecordIOWriter::WriteRecord, RecordIOReader::
 * NextRecord), src/io/recordio_split.cc (SeekRecordBegin), src/io/input_split_base.cc
 * (ResetPartition) and python/mxnet/recordio.py (pack, unpack).
 */
#define _FILE_OFFSET_BITS 64
#define _POSIX_C_SOURCE 200809L
#include "io_msg.h"
#include "recordio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct rio_reader {
    FILE *f;
    char *path;
    uint64_t size, pos, end;
    uint8_t *buf;
    size_t cap;
};

/** Little-endian uint32 at p. */
static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/** Stores v little-endian at p. */
static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/** Stores v little-endian at p. */
static void put64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/** Little-endian uint64 at p. */
static uint64_t le64(const uint8_t *p) {
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

int rio_reader_open(const char *path, rio_reader **out, char *msg, size_t cap) {
    *out = NULL;
    /* non-blocking open, so that a FIFO is refused rather than waited on */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return io_fail(msg, cap, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return io_fail(msg, cap, "'%s' is not a regular file", path);
    }
    FILE *f = fdopen(fd, "rb");
    if (f == NULL) {
        close(fd);
        return io_fail(msg, cap, "cannot open '%s': %s", path, strerror(errno));
    }
    rio_reader *r = calloc(1, sizeof *r);
    char *p = strdup(path);
    if (r == NULL || p == NULL) {
        free(r);
        free(p);
        fclose(f);
        return io_fail(msg, cap, "out of memory");
    }
    r->f = f;
    r->path = p;
    r->size = (uint64_t)st.st_size;
    r->end = UINT64_MAX;
    *out = r;
    return 0;
}

void rio_reader_close(rio_reader *r) {
    if (r == NULL)
        return;
    fclose(r->f);
    free(r->path);
    free(r->buf);
    free(r);
}

uint64_t rio_reader_size(const rio_reader *r) {
    return r->size;
}

uint64_t rio_reader_tell(const rio_reader *r) {
    return r->pos;
}

void rio_reader_set_end(rio_reader *r, uint64_t end) {
    r->end = end;
}

int rio_reader_seek(rio_reader *r, uint64_t pos, char *msg, size_t cap) {
    if (pos > r->size)
        return io_fail(msg, cap, "cannot seek to byte %llu of '%s': past its end (%llu bytes)",
                       (unsigned long long)pos, r->path, (unsigned long long)r->size);
    if (fseeko(r->f, (off_t)pos, SEEK_SET) != 0)
        return io_fail(msg, cap, "cannot seek to byte %llu of '%s': %s", (unsigned long long)pos,
                       r->path, strerror(errno));
    r->pos = pos;
    return 0;
}

/** Reads n bytes at the current position; returns how many were read. */
static size_t read_some(rio_reader *r, void *dst, size_t n) {
    size_t k = fread(dst, 1, n, r->f);
    r->pos += k;
    return k;
}

/** Makes the buffer hold at least n bytes. */
static int reserve(rio_reader *r, size_t n, char *msg, size_t cap) {
    if (n <= r->cap)
        return 0;
    size_t c = r->cap ? r->cap : 256;
    while (c < n)
        c *= 2;
    uint8_t *b = realloc(r->buf, c);
    if (b == NULL)
        return io_fail(msg, cap, "out of memory");
    r->buf = b;
    r->cap = c;
    return 0;
}

int rio_reader_next(rio_reader *r, const uint8_t **data, size_t *len, char *msg, size_t cap) {
    *data = NULL;
    *len = 0;
    if (r->pos >= r->end || r->pos >= r->size)
        return 0;
    size_t size = 0;
    for (int part = 0;; part++) {
        uint64_t at = r->pos;
        uint8_t head[8];
        size_t got = read_some(r, head, sizeof head);
        if (got != sizeof head)
            return io_fail(msg, cap, "'%s': truncated record header at byte %llu (%zu of 8 bytes)",
                           r->path, (unsigned long long)at, got);
        uint32_t magic = le32(head), lrec = le32(head + 4);
        if (magic != RIO_MAGIC)
            return io_fail(msg, cap, "'%s': bad magic 0x%08x at byte %llu (expected 0x%08x)",
                           r->path, magic, (unsigned long long)at, RIO_MAGIC);
        uint32_t cflag = lrec >> 29, plen = lrec & RIO_MAX_LEN;
        uint64_t padded = ((uint64_t)plen + 3) / 4 * 4;
        if (part == 0 && cflag != 0 && cflag != 1)
            return io_fail(msg, cap,
                           "'%s': record part at byte %llu has cflag %u, expected 0 or 1 (not the "
                           "start of a record)",
                           r->path, (unsigned long long)at, cflag);
        if (part > 0 && cflag != 2 && cflag != 3)
            return io_fail(
                msg, cap,
                "'%s': record part at byte %llu has cflag %u inside a multi-part record, "
                "expected 2 or 3",
                r->path, (unsigned long long)at, cflag);
        if (padded > r->size - r->pos)
            return io_fail(
                msg, cap, "'%s': record at byte %llu has length %u but only %llu bytes follow",
                r->path, (unsigned long long)at, plen, (unsigned long long)(r->size - r->pos));
        if (reserve(r, size + (size_t)padded + 4, msg, cap) != 0)
            return -1;
        if (read_some(r, r->buf + size, (size_t)padded) != padded)
            return io_fail(msg, cap, "'%s': record at byte %llu ends early (the file shrank)",
                           r->path, (unsigned long long)at);
        size += plen;
        if (cflag == 0 || cflag == 3)
            break;
        put32(r->buf + size, RIO_MAGIC);
        size += 4;
    }
    *data = r->buf;
    *len = size;
    return 1;
}

/**
 * dmlc's RecordIOSplitter::SeekRecordBegin from `from` (a multiple of 4): the
 * first record head at or after it, or the end of the file.
 */
static int seek_record_begin(rio_reader *r, uint64_t from, uint64_t *head, char *msg, size_t cap) {
    if (rio_reader_seek(r, from, msg, cap) != 0)
        return -1;
    uint8_t w[4];
    while (read_some(r, w, 4) == 4) {
        if (le32(w) != RIO_MAGIC)
            continue;
        if (read_some(r, w, 4) != 4)
            break;
        uint32_t cflag = le32(w) >> 29;
        if (cflag == 0 || cflag == 1) {
            *head = r->pos - 8;
            return 0;
        }
    }
    *head = r->size;
    return 0;
}

int rio_part_range(rio_reader *r, uint32_t num_parts, uint32_t part_index, uint64_t *begin,
                   uint64_t *end, char *msg, size_t cap) {
    if (num_parts < 1)
        return io_fail(msg, cap, "num_parts must be at least 1");
    if (part_index >= num_parts)
        return io_fail(msg, cap, "part_index %u is not below num_parts %u", part_index, num_parts);
    uint64_t total = r->size, step = (total + num_parts - 1) / num_parts;
    step = (step + 3) / 4 * 4;
    uint64_t b = step * part_index, e = step * (part_index + 1);
    b = b < total ? b : total;
    e = e < total ? e : total;
    if (e != total && seek_record_begin(r, e, &e, msg, cap) != 0)
        return -1;
    if (b != 0 && seek_record_begin(r, b, &b, msg, cap) != 0)
        return -1;
    /* only in a corrupt file (a magic word read as a length) can the begin pass the end */
    *begin = b;
    *end = e > b ? e : b;
    return rio_reader_seek(r, b, msg, cap);
}

/** Writes the 8-byte head of a part. */
static int write_head(rio_write_fn write, void *ctx, uint32_t cflag, uint32_t len) {
    uint8_t head[8];
    put32(head, RIO_MAGIC);
    put32(head + 4, cflag << 29 | len);
    return write(ctx, head, sizeof head);
}

int rio_write_record(rio_write_fn write, void *ctx, const void *data, size_t len, uint64_t *written,
                     char *msg, size_t cap) {
    if (cap > 0)
        msg[0] = '\0';
    if (len > RIO_MAX_LEN)
        return io_fail(msg, cap, "record of %zu bytes is longer than RecordIO's limit of %u bytes",
                       len, RIO_MAX_LEN);
    const uint8_t *p = data;
    uint32_t n = (uint32_t)len, lower = n / 4 * 4, upper = (n + 3) / 4 * 4, dptr = 0;
    uint64_t out = 0;
    for (uint32_t i = 0; i < lower; i += 4) {
        if (le32(p + i) != RIO_MAGIC)
            continue;
        if (write_head(write, ctx, dptr == 0 ? 1U : 2U, i - dptr) != 0 ||
            (i != dptr && write(ctx, p + dptr, i - dptr) != 0))
            return -1;
        out += 8 + (i - dptr);
        dptr = i + 4;
    }
    static const uint8_t zero[4] = {0};
    if (write_head(write, ctx, dptr != 0 ? 3U : 0U, n - dptr) != 0 ||
        (n != dptr && write(ctx, p + dptr, n - dptr) != 0) ||
        (upper != n && write(ctx, zero, upper - n) != 0))
        return -1;
    out += 8 + (upper - dptr);
    if (written != NULL)
        *written = out;
    return 0;
}

void rio_irheader_put(const rio_irheader *h, uint8_t *out) {
    uint32_t lbits;
    memcpy(&lbits, &h->label, 4);
    put32(out, h->flag);
    put32(out + 4, lbits);
    put64(out + 8, h->id);
    put64(out + 16, h->id2);
}

int rio_irheader_get(const uint8_t *rec, size_t len, rio_irheader *h, const uint8_t **labels,
                     const uint8_t **payload, size_t *payload_len, char *msg, size_t cap) {
    if (len < RIO_IRHEADER_SIZE)
        return io_fail(msg, cap, "record of %zu bytes is shorter than the 24-byte IRHeader", len);
    h->flag = le32(rec);
    uint32_t lbits = le32(rec + 4);
    memcpy(&h->label, &lbits, 4);
    h->id = le64(rec + 8);
    h->id2 = le64(rec + 16);
    size_t nl = (size_t)h->flag * 4;
    if (nl > len - RIO_IRHEADER_SIZE)
        return io_fail(msg, cap, "record of %zu bytes is too short for its %u labels", len,
                       h->flag);
    *labels = h->flag > 0 ? rec + RIO_IRHEADER_SIZE : NULL;
    *payload = rec + RIO_IRHEADER_SIZE + nl;
    *payload_len = len - RIO_IRHEADER_SIZE - nl;
    return 0;
}
