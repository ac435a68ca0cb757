/*
 * CSVIter: MXNet's src/io/iter_csv.cc with the batching of
 * src/io/iter_batchloader.h (errors of the producer thread as in upstream
 * docs/static_site/src/pages/api/architecture/exception_handling.md).
 *
 * - data_csv / label_csv: files of comma-separated numbers, one example per
 *   line (blank lines skipped); each data row has exactly prod(data_shape)
 *   values, each label row prod(label_shape). label_csv "NULL" (the default):
 *   every label is 0. (Upstream also accepts a directory; mxk takes files.)
 * - Rows are read on the prefetch thread as batches are produced (streaming, as
 *   upstream's parser), so a bad row or a missing label is an error of the next()
 *   whose batch needs it (or earlier, since the producer runs ahead), and is
 *   sticky afterwards.
 * - round_batch=True: a short last batch wraps around to the first rows and
 *   reports pad = the number of wrapped rows; that epoch then ends, and the next
 *   reset() does not rewind (the next epoch continues after the wrapped rows).
 *   round_batch=False: the short batch reports pad = batch_size - filled; the
 *   padded slots hold stale rows of the previous batch (upstream's behaviour);
 *   reset() rewinds.
 * - Shapes: data (batch, data_shape...); label (batch,) when label_shape is (1,)
 *   (upstream's C API squeezes it), else (batch, label_shape...). index: row
 *   number from 0.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_file.h"
#include "io_iter.h"

/** Bytes a line may take per value of its row (a float written with "%.17g" takes at
 * most 24, and a separator with spaces the rest). */
#define CSV_BYTES_PER_VALUE 64u
/** Bytes a line may take beyond CSV_BYTES_PER_VALUE per value (spaces, line end). */
#define CSV_LINE_SLACK 4096u

/** One CSV file read line by line. */
typedef struct csv_file {
    FILE *f;
    char *path;
    char *line;
    size_t cap;
    size_t max_line; /**< longest line accepted, in bytes (with its newline) */
    uint64_t lineno;
} csv_file;

/** State of one CSV source (touched only by the prefetch thread after create). */
typedef struct csv_src {
    csv_file data, label;
    int has_label;
    uint64_t data_elems, label_elems;
    uint32_t batch;
    int round_batch;
    float *out_data, *out_label; /**< upstream's out_ buffer (stale rows survive) */
    uint64_t *out_index;
    uint64_t row;          /**< id of the next row */
    uint32_t num_overflow; /**< rows wrapped into the last batch (iter_batchloader.h) */
} csv_src;

/** Closes a file and frees its buffers. */
static void csv_file_close(csv_file *cf) {
    if (cf->f)
        fclose(cf->f);
    free(cf->path);
    free(cf->line);
    memset(cf, 0, sizeof *cf);
}

/** Frees a source. */
static void csv_free(void *p) {
    csv_src *s = p;
    if (s == NULL)
        return;
    csv_file_close(&s->data);
    csv_file_close(&s->label);
    free(s->out_data);
    free(s->out_label);
    free(s->out_index);
    free(s);
}

/**
 * Reads one line (without its newline) into cf->line, at most cf->max_line bytes:
 * 1 read, 0 end of file, -1 error (msg set: a read error, a line longer than the
 * bound, a NUL byte).
 */
static int csv_read_line(csv_file *cf, const char *what, char *msg) {
    size_t n = 0;
    int c;
    errno = 0;
    while ((c = getc_unlocked(cf->f)) != EOF && c != '\n') {
        if (c == '\0') {
            snprintf(msg, PF_MSG_MAX, "CSVIter: %s '%s' line %llu: a NUL byte (not a text file)",
                     what, cf->path, (unsigned long long)cf->lineno + 1);
            return -1;
        }
        if (n + 1 >= cf->max_line) {
            snprintf(msg, PF_MSG_MAX,
                     "CSVIter: %s '%s' line %llu is longer than %zu bytes (%u per value of the "
                     "row's shape, plus %u)",
                     what, cf->path, (unsigned long long)cf->lineno + 1, cf->max_line - 1,
                     CSV_BYTES_PER_VALUE, CSV_LINE_SLACK);
            return -1;
        }
        if (n + 2 > cf->cap) {
            size_t ncap = cf->cap * 2;
            char *nl = realloc(cf->line, ncap);
            if (nl == NULL) {
                snprintf(msg, PF_MSG_MAX, "CSVIter: %s '%s': out of memory", what, cf->path);
                return -1;
            }
            cf->line = nl;
            cf->cap = ncap;
        }
        cf->line[n++] = (char)c;
    }
    if (ferror(cf->f)) {
        snprintf(msg, PF_MSG_MAX, "CSVIter: reading %s '%s': %s", what, cf->path,
                 strerror(errno ? errno : EIO));
        return -1;
    }
    if (c == EOF && n == 0)
        return 0;
    cf->line[n] = '\0';
    return 1;
}

/** Reads the next non-blank line: 1 read, 0 end of file, -1 error (msg set). */
static int csv_getline(csv_file *cf, const char *what, char *msg) {
    for (;;) {
        int r = csv_read_line(cf, what, msg);
        if (r <= 0)
            return r;
        cf->lineno++;
        const char *q = cf->line;
        while (*q == ' ' || *q == '\t' || *q == '\r' || *q == '\n')
            q++;
        if (*q != '\0')
            return 1;
    }
}

/** Parses the current line of cf into exactly `n` floats; -1 with msg otherwise. */
static int csv_parse(csv_file *cf, const char *what, const char *shape_attr, float *out, uint64_t n,
                     char *msg) {
    const char *p = cf->line;
    uint64_t k = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        char *end;
        float v = strtof(p, &end);
        if (end == p) {
            snprintf(msg, PF_MSG_MAX, "CSVIter: %s '%s' line %llu: value %llu is not a number",
                     what, cf->path, (unsigned long long)cf->lineno, (unsigned long long)k + 1);
            return -1;
        }
        if (k < n)
            out[k] = v;
        k++;
        p = end;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '\0' || *p == '\n' || *p == '\r')
            break;
        snprintf(msg, PF_MSG_MAX, "CSVIter: %s '%s' line %llu: unexpected character '%c'", what,
                 cf->path, (unsigned long long)cf->lineno, *p);
        return -1;
    }
    if (k != n) {
        snprintf(msg, PF_MSG_MAX,
                 "CSVIter: %s '%s' line %llu has %llu values but %s needs %llu (the data size in "
                 "CSV does not match the size of the shape)",
                 what, cf->path, (unsigned long long)cf->lineno, (unsigned long long)k, shape_attr,
                 (unsigned long long)n);
        return -1;
    }
    return 0;
}

/** Reads the next example into row `slot` of the out buffers: 1, 0 (end), -1 (error). */
static int csv_base_next(csv_src *s, uint32_t slot, char *msg) {
    int r = csv_getline(&s->data, "data_csv", msg);
    if (r <= 0)
        return r;
    if (csv_parse(&s->data, "data_csv", "data_shape", s->out_data + slot * s->data_elems,
                  s->data_elems, msg) != 0)
        return -1;
    float *lab = s->out_label + slot * s->label_elems;
    if (s->has_label) {
        r = csv_getline(&s->label, "label_csv", msg);
        if (r < 0)
            return -1;
        if (r == 0) {
            snprintf(msg, PF_MSG_MAX,
                     "CSVIter: label_csv '%s' has fewer rows than data_csv '%s': no label for "
                     "row %llu (line %llu of data_csv)",
                     s->label.path, s->data.path, (unsigned long long)s->row,
                     (unsigned long long)s->data.lineno);
            return -1;
        }
        if (csv_parse(&s->label, "label_csv", "label_shape", lab, s->label_elems, msg) != 0)
            return -1;
    } else {
        memset(lab, 0, s->label_elems * sizeof *lab);
    }
    s->out_index[slot] = s->row++;
    return 1;
}

/** Rewinds the files to the first row (the base iterator's BeforeFirst). */
static int csv_base_before_first(csv_src *s, char *msg) {
    rewind(s->data.f);
    s->data.lineno = 0;
    if (s->has_label) {
        rewind(s->label.f);
        s->label.lineno = 0;
    }
    s->row = 0;
    return 0;
}

/** Copies the out buffers into a prefetch slot. */
static void csv_emit(const csv_src *s, pf_slot *slot, uint32_t pad) {
    memcpy(slot->data, s->out_data, (size_t)s->batch * s->data_elems * sizeof(float));
    memcpy(slot->label, s->out_label, (size_t)s->batch * s->label_elems * sizeof(float));
    memcpy(slot->index, s->out_index, (size_t)s->batch * sizeof(uint64_t));
    slot->pad = pad;
}

/** BatchLoader::Next (iter_batchloader.h), on the prefetch thread. */
static mxk_status csv_produce(void *p, pf_slot *slot, int *produced, char *msg) {
    csv_src *s = p;
    *produced = 0;
    if (s->num_overflow != 0)
        return MXK_OK;
    uint32_t top = 0;
    while (top < s->batch) {
        int r = csv_base_next(s, top, msg);
        if (r < 0)
            return MXK_ERR_FORMAT;
        if (r == 0)
            break;
        top++;
    }
    if (top == s->batch) {
        csv_emit(s, slot, 0);
        *produced = 1;
        return MXK_OK;
    }
    if (top == 0)
        return MXK_OK;
    uint32_t pad;
    if (s->round_batch) {
        s->num_overflow = 0;
        csv_base_before_first(s, msg);
        for (; top < s->batch; top++, s->num_overflow++) {
            int r = csv_base_next(s, top, msg);
            if (r < 0)
                return MXK_ERR_FORMAT;
            if (r == 0) {
                snprintf(msg, PF_MSG_MAX,
                         "CSVIter: round_batch: data_csv '%s' has fewer rows than batch_size "
                         "%u, cannot fill a batch",
                         s->data.path, (unsigned)s->batch);
                return MXK_ERR_INVALID_ARGUMENT;
            }
        }
        pad = s->num_overflow;
    } else {
        pad = s->batch - top;
    }
    csv_emit(s, slot, pad);
    *produced = 1;
    return MXK_OK;
}

/** BatchLoader::BeforeFirst: no rewind right after a wrap-around (round_batch). */
static mxk_status csv_rewind(void *p, char *msg) {
    csv_src *s = p;
    if (!s->round_batch || s->num_overflow == 0)
        csv_base_before_first(s, msg);
    else
        s->num_overflow = 0;
    return MXK_OK;
}

/**
 * Opens one CSV file (io_open_regular: a FIFO or device is refused, never waited
 * on) whose rows have `values` values each; lines longer than CSV_BYTES_PER_VALUE
 * per value plus CSV_LINE_SLACK bytes are refused when read.
 */
static mxk_status csv_open(csv_file *cf, const char *path, const char *attr, uint64_t values,
                           mxk_error_sink *err) {
    cf->path = strdup(path);
    cf->cap = 256;
    cf->line = malloc(cf->cap);
    if (cf->path == NULL || cf->line == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "CSVIter: out of memory");
    cf->max_line = (size_t)(values * CSV_BYTES_PER_VALUE + CSV_LINE_SLACK);
    char what[64], msg[PF_MSG_MAX];
    snprintf(what, sizeof what, "CSVIter: %s", attr);
    int fd = io_open_regular(path, what, NULL, msg, sizeof msg);
    if (fd < 0)
        return mxk_sdk_error(err, MXK_ERR_IO, "%s", msg);
    cf->f = fdopen(fd, "rb");
    if (cf->f == NULL) {
        close(fd);
        return mxk_sdk_error(err, MXK_ERR_IO, "CSVIter: %s: cannot open '%s': %s", attr, path,
                             strerror(errno));
    }
    return MXK_OK;
}

/** Checks a per-example shape attribute (1..MXK_MAX_NDIM-1 positive dims); returns prod. */
static mxk_status check_shape(const char *attr, const mxk_shape *sh, uint64_t *prod,
                              mxk_error_sink *err) {
    if (sh->ndim < 1 || sh->ndim > MXK_MAX_NDIM - 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "CSVIter: attribute '%s' must have 1 to %d dimensions, got %d", attr,
                             MXK_MAX_NDIM - 1, (int)sh->ndim);
    *prod = 1;
    for (int32_t i = 0; i < sh->ndim; i++) {
        if (sh->dims[i] <= 0 || sh->dims[i] > (1 << 24))
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "CSVIter: attribute '%s': dimension %d must be in [1, 2^24], got "
                                 "%lld",
                                 attr, (int)i, (long long)sh->dims[i]);
        *prod *= (uint64_t)sh->dims[i];
    }
    if (*prod > (1u << 26))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "CSVIter: attribute '%s': %llu values per row is too many", attr,
                             (unsigned long long)*prod);
    return MXK_OK;
}

/** CSVIter create: opens the files, checks shapes, starts the prefetcher. */
static mxk_status csv_create(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    const char *data_csv, *label_csv;
    mxk_shape dsh, lsh;
    int64_t batch, prefetch;
    int32_t round_batch;
    MXK_SDK_CHECK(mxk_sdk_attr_string(attrs, "data_csv", &data_csv, err));
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "data_shape", &dsh, err));
    MXK_SDK_CHECK(mxk_sdk_attr_string(attrs, "label_csv", &label_csv, err));
    MXK_SDK_CHECK(mxk_sdk_attr_shape(attrs, "label_shape", &lsh, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "batch_size", 1, 1 << 24, &batch, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "round_batch", &round_batch, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "prefetch_buffer", 1, 1024, &prefetch, err));
    uint64_t de, le;
    MXK_SDK_CHECK(check_shape("data_shape", &dsh, &de, err));
    MXK_SDK_CHECK(check_shape("label_shape", &lsh, &le, err));
    if ((uint64_t)batch * (de > le ? de : le) > (UINT64_C(1) << 32))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "CSVIter: batch_size %lld x %llu values per row is too large",
                             (long long)batch, (unsigned long long)(de > le ? de : le));

    csv_src *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "CSVIter: out of memory");
    s->data_elems = de;
    s->label_elems = le;
    s->batch = (uint32_t)batch;
    s->round_batch = round_batch;
    s->has_label = strcmp(label_csv, "NULL") != 0 && label_csv[0] != '\0';
    mxk_status st = csv_open(&s->data, data_csv, "data_csv", de, err);
    if (st == MXK_OK && s->has_label)
        st = csv_open(&s->label, label_csv, "label_csv", le, err);
    if (st == MXK_OK) {
        s->out_data = calloc((size_t)batch * de, sizeof(float));
        s->out_label = calloc((size_t)batch * le, sizeof(float));
        s->out_index = calloc((size_t)batch, sizeof(uint64_t));
        if (!s->out_data || !s->out_label || !s->out_index)
            st = mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "CSVIter: out of memory");
    }
    if (st != MXK_OK) {
        csv_free(s);
        return st;
    }
    mxk_shape dshape = {0}, lshape = {0};
    dshape.ndim = dsh.ndim + 1;
    dshape.dims[0] = batch;
    for (int32_t i = 0; i < dsh.ndim; i++)
        dshape.dims[i + 1] = dsh.dims[i];
    if (lsh.ndim == 1 && lsh.dims[0] == 1) {
        lshape = mxk_sdk_shape1(batch);
    } else {
        lshape.ndim = lsh.ndim + 1;
        lshape.dims[0] = batch;
        for (int32_t i = 0; i < lsh.ndim; i++)
            lshape.dims[i + 1] = lsh.dims[i];
    }
    return io_iter_start(s, csv_free, csv_produce, csv_rewind, &dshape, MXK_FLOAT32, &lshape,
                         (uint32_t)prefetch, out, err);
}

/** CSVIter's attribute schema (upstream CSVIterParam + BatchParam + prefetch). */
static const mxk_attr_def g_csv_attrs[] = {
    MXK_SDK_ATTR("data_csv", MXK_ATTR_STRING, 1, NULL, NULL, "CSV file of the data"),
    MXK_SDK_ATTR("data_shape", MXK_ATTR_SHAPE, 1, NULL, NULL, "shape of one example"),
    MXK_SDK_ATTR("label_csv", MXK_ATTR_STRING, 0, "NULL", NULL,
                 "CSV file of the labels; NULL: all labels 0"),
    MXK_SDK_ATTR("label_shape", MXK_ATTR_SHAPE, 0, "(1,)", NULL, "shape of one label"),
    MXK_SDK_ATTR("batch_size", MXK_ATTR_INT, 1, NULL, NULL, "batch size"),
    MXK_SDK_ATTR("round_batch", MXK_ATTR_BOOL, 0, "True", NULL,
                 "wrap around to fill the last batch (else pad it)"),
    MXK_SDK_ATTR("prefetch_buffer", MXK_ATTR_INT, 0, "4", NULL, "batches prefetched"),
};

mxk_status io_register_csv(mxk_registrar *reg, mxk_error_sink *err) {
    return io_register_iter(reg, "CSVIter",
                            "Rows of comma-separated values (MXNet src/io/iter_csv.cc)",
                            g_csv_attrs, MXK_SDK_COUNTOF(g_csv_attrs), csv_create, err);
}
