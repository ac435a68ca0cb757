/*
 * IDX files (the MNIST / Fashion-MNIST container), read through zlib's gzread so
 * that gzip'd and plain files both work.
 *
 * Layout (Y. LeCun's MNIST page; upstream MXNet src/io/iter_mnist.cc reads the
 * same): a 4-byte magic 0x00 0x00 <type> <ndim>, then ndim big-endian uint32
 * dimensions, then prod(dims) elements of <type> in row-major order. Only type
 * 0x08 (unsigned byte) is accepted, which is what MNIST-style files use. Upstream
 * reads the magic and ignores it; mxk checks it, the dimensions and the data
 * length, so that a corrupt or truncated file is a clear error, never a crash.
 */
#ifndef MXK_IO_IDX_H
#define MXK_IO_IDX_H

#include <stddef.h>
#include <stdint.h>

/** Most examples an IDX file may declare (guards size arithmetic). */
#define IDX_MAX_COUNT (UINT32_C(1) << 30)
/** Most bytes one example (prod of the dims after the first) may have. */
#define IDX_MAX_ITEM (UINT32_C(1) << 24)

/** Most bytes deflate can expand one compressed byte into (zlib's technical details: the
 * limit of its compression ratio is 1032:1): a gzip file of S bytes holds at most
 * S * IDX_GZIP_MAX_RATIO bytes of data. */
#define IDX_GZIP_MAX_RATIO 1032u

/**
 * A source of bytes: read(ctx, buf, n) returns the number of bytes read (less
 * than n only at the end of the data) or -1 on an error, with a description
 * through errmsg (may be NULL). `limit`, when not 0, is the most bytes the source
 * can yield (a plain file: its size; a gzip file: its size times
 * IDX_GZIP_MAX_RATIO): a header declaring more is refused before anything is
 * allocated. Lets the parser run on files (gzread) and on memory (the fuzz
 * target) alike.
 */
typedef struct idx_reader {
    void *ctx;
    int64_t (*read)(void *ctx, void *buf, size_t n);
    const char *(*errmsg)(void *ctx);
    uint64_t limit;
} idx_reader;

/**
 * One parsed IDX file, restricted to examples [begin, end) of its first dimension.
 * `data` holds (end - begin) * item_size bytes (malloc'd; free with idx_free).
 */
typedef struct idx_data {
    uint32_t ndim;       /**< from the magic: 1 for labels, 3 for images */
    uint32_t dims[3];    /**< dims[0] = examples in the file */
    uint64_t item_size;  /**< bytes per example: prod(dims[1..]) */
    uint64_t begin, end; /**< the slice that was kept */
    uint8_t *data;
} idx_data;

/**
 * Reads the header only (magic and dims) from `r` into `out` (data NULL, begin =
 * end = 0). `expect_ndim` is 1 (labels) or 3 (images). `what` names the file in
 * messages. Returns 0, or -1 with a message in msg (size msgsize): a wrong magic,
 * a dimension of 0, more than IDX_MAX_COUNT examples or IDX_MAX_ITEM bytes per
 * example, a truncated header, a read error, or (with r->limit) "WHAT: the header
 * declares N examples of M bytes (T bytes), more than the L bytes the file can
 * hold after its header".
 */
int idx_read_header(const idx_reader *r, uint32_t expect_ndim, const char *what, idx_data *out,
                    char *msg, size_t msgsize);

/**
 * Reads the header and then the examples [begin, end) (after the header is read,
 * `end` == UINT64_MAX means "to the end"; the slice must lie within dims[0]).
 * Examples before `begin` are read and discarded. Returns 0, or -1 with a message
 * (wrong magic, a dimension of 0 or too large, truncated header or data, read errors).
 */
int idx_read(const idx_reader *r, uint32_t expect_ndim, const char *what, uint64_t begin,
             uint64_t end, idx_data *out, char *msg, size_t msgsize);

/**
 * Opens `path` (gzip'd or plain) with io_open_regular (io_file.h: never blocks on
 * a FIFO; anything but a regular file is refused) and reads it as idx_read does,
 * with the reader's limit set from the file's size (plain: the size; gzip'd: the
 * size times IDX_GZIP_MAX_RATIO), so a header declaring more examples than the
 * file can hold is refused before any allocation; `begin`/`end` are computed by
 * the caller from the count via `slice`: when slice != NULL it is called with
 * dims[0] after the header is read and returns [begin, end). Errors (-1, message
 * in msg): io_open_regular's, "WHAT: cannot open 'PATH': ..." when zlib cannot
 * take the descriptor, and idx_read's.
 */
int idx_read_file(const char *path, uint32_t expect_ndim, const char *what,
                  void (*slice)(void *ctx, uint64_t count, uint64_t *begin, uint64_t *end),
                  void *slice_ctx, idx_data *out, char *msg, size_t msgsize);

/** Frees the data of `d` (not `d` itself) and zeroes it. */
void idx_free(idx_data *d);

/** One partition of a file's examples: part `index` (0-based) of `parts`. */
typedef struct idx_part {
    uint64_t parts; /**< number of parts, >= 1 (MNISTIter's num_parts) */
    uint64_t index; /**< part to keep, < parts (MNISTIter's part_index) */
} idx_part;

/**
 * MNISTIter's partition, an idx_read_file slice callback (ctx: a const idx_part *):
 * examples [floor(count/parts*index), floor(count/parts*(index+1))) computed in
 * double, as upstream MNISTIter::GetPart (src/io/iter_mnist.cc), except that the
 * last part always ends at `count`. Parts are contiguous, disjoint and cover the
 * file; the result is clamped so that begin <= end <= count.
 */
void idx_part_slice(void *ctx, uint64_t count, uint64_t *begin, uint64_t *end);

#endif /* MXK_IO_IDX_H */
