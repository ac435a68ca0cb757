/*
 * The public RecordIO API (mxk_recordio.h) over the format code shared with the
 * io-recordio plugin (plugins/io-recordio/recordio.c), with MXIndexedRecordIO's
 * semantics (python/mxnet/recordio.py) for the .idx file. Written files go
 * through mxk_file_writer, so they appear only at a successful close. Image
 * records (pack_img, unpack_img) use the image codecs of
 * plugins/io-recordio/image.c.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "image.h"
#include "mxk_recordio.h"
#include "recordio.h"

/** One .idx entry; `order` is its line, so that the last of equal keys wins. */
typedef struct idx_entry {
    int64_t key;
    uint64_t off;
    size_t order;
} idx_entry;

struct mxk_recordio {
    int writing;
    char *path, *idx_path;
    rio_reader *rd;
    mxk_file_writer *w, *widx;
    uint64_t wpos;
    mxk_status werr; /* first write error (MXK_OK: none) */
    int indexed;
    int64_t *keys; /* in file order */
    size_t n, cap;
    idx_entry *sorted; /* reading: by key, then order */
};

/** Sets the last error from a format-code message. */
static mxk_status rio_error(mxk_status code, const char *msg) {
    return mxk_set_error(code, "%s", msg);
}

/** Frees a handle without committing anything. */
static void release(mxk_recordio *h) {
    rio_reader_close(h->rd);
    mxk_file_writer_abort(h->w);
    mxk_file_writer_abort(h->widx);
    free(h->path);
    free(h->idx_path);
    free(h->keys);
    free(h->sorted);
    free(h);
}

/** Opens the .rec half of a handle. */
static mxk_status open_rec(mxk_recordio *h, const char *path) {
    h->path = strdup(path);
    if (h->path == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    if (h->writing)
        return mxk_file_writer_open(path, &h->w);
    char msg[1024];
    if (rio_reader_open(path, &h->rd, msg, sizeof msg) != 0)
        return rio_error(MXK_ERR_IO, msg);
    return MXK_OK;
}

/** Checks the arguments common to both opens and allocates the handle. */
static mxk_status new_handle(const char *fn, const char *path, const char *mode,
                             mxk_recordio **out) {
    if (out == NULL || path == NULL || mode == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: path, mode or out is NULL", fn);
    *out = NULL;
    if (strcmp(mode, "r") != 0 && strcmp(mode, "w") != 0)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: mode must be \"r\" or \"w\"", fn);
    mxk_recordio *h = calloc(1, sizeof *h);
    if (h == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    h->writing = mode[0] == 'w';
    *out = h;
    return MXK_OK;
}

mxk_status mxk_recordio_open(const char *path, const char *mode, mxk_recordio **out) {
    mxk_status st = new_handle("mxk_recordio_open", path, mode, out);
    if (st != MXK_OK)
        return st;
    st = open_rec(*out, path);
    if (st != MXK_OK) {
        release(*out);
        *out = NULL;
    }
    return st;
}

/** Appends a key to the handle's key list. */
static mxk_status push_key(mxk_recordio *h, int64_t key) {
    if (h->n == h->cap) {
        size_t c = h->cap ? 2 * h->cap : 64;
        int64_t *k = realloc(h->keys, c * sizeof *k);
        if (k == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
        h->keys = k;
        h->cap = c;
    }
    h->keys[h->n++] = key;
    return MXK_OK;
}

/** Orders index entries by key, then by line. */
static int cmp_entry(const void *a, const void *b) {
    const idx_entry *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/** Parses "KEY\tOFFSET" (trailing blanks allowed) into e; returns 0 or -1. */
static int parse_line(const char *s, idx_entry *e) {
    char *end;
    errno = 0;
    long long k = strtoll(s, &end, 10);
    if (end == s || *end != '\t' || errno != 0)
        return -1;
    s = end + 1;
    if (*s < '0' || *s > '9')
        return -1;
    unsigned long long o = strtoull(s, &end, 10);
    if (errno != 0)
        return -1;
    while (*end == ' ' || *end == '\r' || *end == '\t')
        end++;
    if (*end != '\0')
        return -1;
    e->key = k;
    e->off = o;
    return 0;
}

/** Reads and checks the .idx file of a reading handle. */
static mxk_status read_index(mxk_recordio *h) {
    char *text;
    size_t size;
    mxk_status st = mxk_file_read(h->idx_path, "RecordIO index", 1ull << 32, &text, &size);
    if (st != MXK_OK)
        return st;
    size_t lines = 0;
    for (size_t i = 0; i < size; i++)
        lines += text[i] == '\n';
    h->sorted = malloc((lines + 1) * sizeof *h->sorted);
    if (h->sorted == NULL) {
        mxk_free(text);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    }
    uint64_t rec_size = rio_reader_size(h->rd);
    char *line = text;
    for (size_t no = 1; line < text + size; no++) {
        char *nl = strchr(line, '\n');
        if (nl != NULL)
            *nl = '\0';
        idx_entry *e = &h->sorted[h->n];
        if (parse_line(line, e) != 0)
            st = mxk_set_error(MXK_ERR_FORMAT, "'%s':%zu: expected 'key<TAB>offset'", h->idx_path,
                               no);
        else if (e->off >= rec_size)
            st = mxk_set_error(MXK_ERR_FORMAT,
                               "'%s':%zu: offset %" PRIu64 " is past the end of '%s' (%" PRIu64
                               " bytes)",
                               h->idx_path, no, e->off, h->path, rec_size);
        else if ((st = push_key(h, e->key)) == MXK_OK)
            e->order = no;
        if (st != MXK_OK)
            break;
        line = nl != NULL ? nl + 1 : text + size;
    }
    mxk_free(text);
    if (st == MXK_OK)
        qsort(h->sorted, h->n, sizeof *h->sorted, cmp_entry);
    return st;
}

mxk_status mxk_recordio_indexed_open(const char *idx_path, const char *rec_path, const char *mode,
                                     mxk_recordio **out) {
    if (idx_path == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_recordio_indexed_open: idx_path is NULL");
    mxk_status st = new_handle("mxk_recordio_indexed_open", rec_path, mode, out);
    if (st != MXK_OK)
        return st;
    mxk_recordio *h = *out;
    h->indexed = 1;
    h->idx_path = strdup(idx_path);
    if (h->idx_path == NULL)
        st = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    if (st == MXK_OK)
        st = open_rec(h, rec_path);
    if (st == MXK_OK)
        st = h->writing ? mxk_file_writer_open(idx_path, &h->widx) : read_index(h);
    if (st != MXK_OK) {
        release(h);
        *out = NULL;
    }
    return st;
}

/** Checks that h is usable in the given direction. */
static mxk_status check(const char *fn, mxk_recordio *h, int writing) {
    if (h == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: the handle is NULL", fn);
    if (h->writing != writing)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: the handle is open for %s", fn,
                             h->writing ? "writing" : "reading");
    return MXK_OK;
}

mxk_status mxk_recordio_read(mxk_recordio *h, const void **buf, size_t *len) {
    mxk_status st = check("mxk_recordio_read", h, 0);
    if (st != MXK_OK)
        return st;
    if (buf == NULL || len == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_recordio_read: buf or len is NULL");
    char msg[1024];
    const uint8_t *data;
    if (rio_reader_next(h->rd, &data, len, msg, sizeof msg) < 0) {
        *buf = NULL;
        return rio_error(MXK_ERR_FORMAT, msg);
    }
    *buf = data;
    return MXK_OK;
}

/** rio_write_fn over the handle's .rec writer; keeps the writer's error in werr. */
static int sink(void *ctx, const void *data, size_t n) {
    mxk_recordio *h = ctx;
    h->werr = mxk_file_writer_write(h->w, data, n);
    return h->werr == MXK_OK ? 0 : -1;
}

mxk_status mxk_recordio_write(mxk_recordio *h, const void *buf, size_t len) {
    mxk_status st = check("mxk_recordio_write", h, 1);
    if (st != MXK_OK)
        return st;
    if (buf == NULL && len > 0)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_recordio_write: buf is NULL");
    char msg[256];
    uint64_t n;
    if (h->werr != MXK_OK)
        return mxk_set_error(h->werr, "'%s' not written: an earlier write failed", h->path);
    if (rio_write_record(sink, h, buf, len, &n, msg, sizeof msg) != 0)
        return msg[0] != '\0' ? rio_error(MXK_ERR_INVALID_ARGUMENT, msg) : h->werr;
    h->wpos += n;
    return MXK_OK;
}

mxk_status mxk_recordio_tell(mxk_recordio *h, uint64_t *pos) {
    if (h == NULL || pos == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_recordio_tell: h or pos is NULL");
    *pos = h->writing ? h->wpos : rio_reader_tell(h->rd);
    return MXK_OK;
}

mxk_status mxk_recordio_seek(mxk_recordio *h, uint64_t pos) {
    mxk_status st = check("mxk_recordio_seek", h, 0);
    if (st != MXK_OK)
        return st;
    char msg[1024];
    if (rio_reader_seek(h->rd, pos, msg, sizeof msg) != 0)
        return rio_error(MXK_ERR_INVALID_ARGUMENT, msg);
    return MXK_OK;
}

mxk_status mxk_recordio_set_part(mxk_recordio *h, uint32_t num_parts, uint32_t part_index) {
    mxk_status st = check("mxk_recordio_set_part", h, 0);
    if (st != MXK_OK)
        return st;
    char msg[1024];
    uint64_t b, e;
    rio_reader_set_end(h->rd, UINT64_MAX);
    if (rio_part_range(h->rd, num_parts, part_index, &b, &e, msg, sizeof msg) != 0)
        return rio_error(MXK_ERR_INVALID_ARGUMENT, msg);
    rio_reader_set_end(h->rd, e);
    return MXK_OK;
}

mxk_status mxk_recordio_close(mxk_recordio *h) {
    if (h == NULL)
        return MXK_OK;
    mxk_status st = MXK_OK;
    if (h->writing && h->werr != MXK_OK) {
        st = mxk_set_error(MXK_ERR_IO, "'%s' not written: an earlier write failed", h->path);
    } else if (h->writing) {
        if (h->widx != NULL) {
            st = mxk_file_writer_commit(h->widx);
            h->widx = NULL;
        }
        if (st == MXK_OK) {
            st = mxk_file_writer_commit(h->w);
            h->w = NULL;
        }
    }
    release(h);
    return st;
}

/** Checks that h is an indexed handle in the given direction. */
static mxk_status check_indexed(const char *fn, mxk_recordio *h, int writing) {
    mxk_status st = check(fn, h, writing);
    if (st == MXK_OK && !h->indexed)
        st = mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: the handle has no index", fn);
    return st;
}

mxk_status mxk_recordio_read_idx(mxk_recordio *h, int64_t key, const void **buf, size_t *len) {
    mxk_status st = check_indexed("mxk_recordio_read_idx", h, 0);
    if (st != MXK_OK)
        return st;
    idx_entry probe = {key, 0, SIZE_MAX};
    size_t lo = 0, hi = h->n; /* first entry after (key, SIZE_MAX) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_entry(&h->sorted[mid], &probe) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || h->sorted[lo - 1].key != key)
        return mxk_set_error(MXK_ERR_NOT_FOUND, "key %" PRId64 " is not in '%s'", key, h->idx_path);
    uint64_t off = h->sorted[lo - 1].off;
    st = mxk_recordio_seek(h, off);
    if (st == MXK_OK)
        st = mxk_recordio_read(h, buf, len);
    if (st == MXK_OK && *buf == NULL)
        st = mxk_set_error(MXK_ERR_FORMAT,
                           "'%s': key %" PRId64 " points at byte %" PRIu64
                           " of '%s', past its part's end",
                           h->idx_path, key, off, h->path);
    else if (st != MXK_OK)
        mxk_error_add_context("'%s': key %" PRId64 " points at byte %" PRIu64
                              " of '%s', which is not the start of a record",
                              h->idx_path, key, off, h->path);
    return st;
}

mxk_status mxk_recordio_write_idx(mxk_recordio *h, int64_t key, const void *buf, size_t len) {
    mxk_status st = check_indexed("mxk_recordio_write_idx", h, 1);
    if (st != MXK_OK)
        return st;
    uint64_t pos = h->wpos;
    st = mxk_recordio_write(h, buf, len);
    if (st != MXK_OK)
        return st;
    char line[64];
    int n = snprintf(line, sizeof line, "%" PRId64 "\t%" PRIu64 "\n", key, pos);
    st = mxk_file_writer_write(h->widx, line, (size_t)n);
    if (st == MXK_OK)
        st = push_key(h, key);
    if (st != MXK_OK)
        h->werr = st;
    return st;
}

mxk_status mxk_recordio_keys(mxk_recordio *h, const int64_t **keys, size_t *n) {
    if (h == NULL || keys == NULL || n == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_recordio_keys: an argument is NULL");
    if (!h->indexed)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_recordio_keys: the handle has no index");
    *keys = h->keys;
    *n = h->n;
    return MXK_OK;
}

mxk_status mxk_recordio_pack(const mxk_irheader *header, const float *labels, const void *payload,
                             size_t len, void **out, size_t *out_len) {
    if (header == NULL || out == NULL || out_len == NULL || (payload == NULL && len > 0))
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_recordio_pack: header, payload, out or out_len is NULL");
    if (labels == NULL && header->flag > 0)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_recordio_pack: labels is NULL but flag is %u", header->flag);
    size_t nl = (size_t)header->flag * 4, total = RIO_IRHEADER_SIZE + nl + len;
    uint8_t *p = malloc(total ? total : 1);
    if (p == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    rio_irheader h = {header->flag, header->label, header->id, header->id2};
    rio_irheader_put(&h, p);
    for (uint32_t i = 0; i < header->flag; i++) {
        uint32_t bits;
        memcpy(&bits, &labels[i], 4);
        for (int b = 0; b < 4; b++)
            p[RIO_IRHEADER_SIZE + 4 * i + (size_t)b] = (uint8_t)(bits >> (8 * b));
    }
    if (len > 0)
        memcpy(p + RIO_IRHEADER_SIZE + nl, payload, len);
    *out = p;
    *out_len = total;
    return MXK_OK;
}

mxk_status mxk_recordio_unpack(const void *rec, size_t len, mxk_irheader *header,
                               const void **labels, const void **payload, size_t *payload_len) {
    if (rec == NULL || header == NULL || labels == NULL || payload == NULL || payload_len == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_recordio_unpack: an argument is NULL");
    rio_irheader h;
    const uint8_t *l, *p;
    char msg[256];
    if (rio_irheader_get(rec, len, &h, &l, &p, payload_len, msg, sizeof msg) != 0)
        return rio_error(MXK_ERR_FORMAT, msg);
    *header = (mxk_irheader){h.flag, h.label, h.id, h.id2};
    *labels = l;
    *payload = p;
    return MXK_OK;
}

/** The image format named by pack_img's img_fmt (".jpg", ".jpeg", ".png", any case). */
static img_format image_format(const char *img_fmt) {
    if (strcasecmp(img_fmt, ".jpg") == 0 || strcasecmp(img_fmt, ".jpeg") == 0)
        return IMG_JPEG;
    return strcasecmp(img_fmt, ".png") == 0 ? IMG_PNG : IMG_UNKNOWN;
}

mxk_status mxk_recordio_pack_img(const mxk_irheader *header, const float *labels,
                                 const uint8_t *pixels, uint32_t height, uint32_t width,
                                 uint32_t channels, const char *img_fmt, int quality, void **out,
                                 size_t *out_len) {
    if (header == NULL || pixels == NULL || img_fmt == NULL || out == NULL || out_len == NULL)
        return mxk_set_error(
            MXK_ERR_INVALID_ARGUMENT,
            "mxk_recordio_pack_img: header, pixels, img_fmt, out or out_len is NULL");
    img_format fmt = image_format(img_fmt);
    if (fmt == IMG_UNKNOWN)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_recordio_pack_img: unknown image format '%s' (.jpg or .png)",
                             img_fmt);
    /* cv::imencode's clamping (modules/imgcodecs/src/grfmt_jpeg.cpp, grfmt_png.cpp) */
    int lo = fmt == IMG_JPEG ? 1 : 0, hi = fmt == IMG_JPEG ? 100 : 9;
    quality = quality < lo ? lo : quality > hi ? hi : quality;
    img_codec *cx = img_codec_new();
    if (cx == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    img_image im = {(uint8_t *)pixels, width, height, channels};
    uint8_t *enc;
    size_t enc_len;
    char msg[256];
    int rc = img_encode(cx, &im, fmt, quality, &enc, &enc_len, msg, sizeof msg);
    img_codec_free(cx);
    if (rc != 0)
        return mxk_set_error(strcmp(msg, "out of memory") == 0 ? MXK_ERR_OUT_OF_MEMORY
                                                               : MXK_ERR_INVALID_ARGUMENT,
                             "mxk_recordio_pack_img: %s", msg);
    mxk_status st = mxk_recordio_pack(header, labels, enc, enc_len, out, out_len);
    free(enc);
    return st;
}

mxk_status mxk_recordio_unpack_img(const void *rec, size_t len, int iscolor, mxk_irheader *header,
                                   const void **labels, uint8_t **pixels, uint32_t *height,
                                   uint32_t *width, uint32_t *channels) {
    if (rec == NULL || header == NULL || labels == NULL || pixels == NULL || height == NULL ||
        width == NULL || channels == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_recordio_unpack_img: an argument is NULL");
    if (iscolor < -1 || iscolor > 1)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_recordio_unpack_img: iscolor %d is not -1, 0 or 1", iscolor);
    const void *payload;
    size_t plen;
    mxk_status st = mxk_recordio_unpack(rec, len, header, labels, &payload, &plen);
    if (st != MXK_OK)
        return st;
    img_codec *cx = img_codec_new();
    if (cx == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    img_image im;
    char msg[256];
    uint32_t want = iscolor == -1 ? 0 : iscolor == 0 ? 1 : 3;
    int rc = img_decode(cx, payload, plen, want, 0, 0, &im, msg, sizeof msg);
    img_codec_free(cx);
    if (rc != 0)
        return mxk_set_error(strcmp(msg, "out of memory") == 0 ? MXK_ERR_OUT_OF_MEMORY
                                                               : MXK_ERR_FORMAT,
                             "record id %llu: %s", (unsigned long long)header->id, msg);
    *pixels = im.pix;
    *height = im.h;
    *width = im.w;
    *channels = im.c;
    return MXK_OK;
}
