/* Record offsets of a partition and image-list labels (image_index.h). */
#include "image_index.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io_file.h"

/** Appends v to a growing array (*a, *n, *cap). Returns 0 or -1 when out of memory. */
static int push_u64(uint64_t **a, uint64_t *n, uint64_t *cap, uint64_t v) {
    if (*n == *cap) {
        uint64_t nc = *cap ? *cap * 2 : 1024;
        uint64_t *na = realloc(*a, nc * sizeof *na);
        if (na == NULL)
            return -1;
        *a = na;
        *cap = nc;
    }
    (*a)[(*n)++] = v;
    return 0;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/**
 * Calls fn(ctx, line, number) for every non-blank line of the text file `path`
 * (opened with io_open_regular, `what` naming it: a FIFO or a directory is
 * refused, never waited on) until fn returns non-zero. Returns 0, or -1 with a
 * message (the open's, or fn's in msg).
 */
static int each_line(const char *path, const char *what,
                     int (*fn)(void *ctx, char *line, uint64_t no), void *ctx, char *msg,
                     size_t cap) {
    int fd = io_open_regular(path, what, NULL, msg, cap);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
    if (f == NULL) {
        if (fd >= 0) {
            snprintf(msg, cap, "'%s': cannot read: %s", path, strerror(errno));
            close(fd);
        }
        return -1;
    }
    char *line = NULL;
    size_t lcap = 0;
    uint64_t no = 0;
    int rc = 0;
    while (rc == 0 && getline(&line, &lcap, f) >= 0)
        if (++no, strspn(line, " \t\r\n") != strlen(line))
            rc = fn(ctx, line, no);
    free(line);
    fclose(f);
    return rc;
}

/** The state of read_idx's line callback. */
typedef struct idx_ctx {
    const char *idx_path, *rec_path;
    uint64_t rec_size, n, cap;
    uint64_t *off;
    char *msg;
    size_t msg_cap;
} idx_ctx;

/** One `key<TAB>offset` line of an .idx file. */
static int idx_line(void *p, char *line, uint64_t no) {
    idx_ctx *x = p;
    char *s = line + strspn(line, " \t\r\n"), *end;
    errno = 0;
    (void)strtoll(s, &end, 10);
    char *q = end;
    unsigned long long o = q > s && *q == '\t' ? strtoull(q + 1, &end, 10) : 0;
    if (q == s || *q != '\t' || end == q + 1 || errno != 0 ||
        strspn(end, " \t\r\n") != strlen(end)) {
        snprintf(x->msg, x->msg_cap, "'%s':%llu: expected 'key<TAB>offset'", x->idx_path,
                 (unsigned long long)no);
        return -1;
    }
    if (o % 4 != 0 || o >= x->rec_size) {
        snprintf(x->msg, x->msg_cap,
                 "'%s':%llu: offset %llu is not a multiple of 4 or lies past the end of '%s' "
                 "(%llu bytes)",
                 x->idx_path, (unsigned long long)no, o, x->rec_path,
                 (unsigned long long)x->rec_size);
        return -1;
    }
    if (push_u64(&x->off, &x->n, &x->cap, o) != 0) {
        snprintf(x->msg, x->msg_cap, "out of memory");
        return -1;
    }
    return 0;
}

/** Reads the offsets of an .idx file, sorted. */
static int read_idx(const char *idx_path, const char *rec_path, uint64_t rec_size, uint64_t **off,
                    uint64_t *n, char *msg, size_t cap) {
    idx_ctx x = {idx_path, rec_path, rec_size, 0, 0, NULL, msg, cap};
    int rc = each_line(idx_path, "path_imgidx", idx_line, &x, msg, cap);
    if (rc == 0 && x.n > 1)
        qsort(x.off, x.n, sizeof *x.off, cmp_u64);
    *off = x.off;
    *n = x.n;
    return rc;
}
int rec_offsets(rio_reader *r, const char *rec_path, const char *idx_path, uint32_t num_parts,
                uint32_t part_index, uint64_t **off, uint64_t *n, char *msg, size_t cap) {
    *off = NULL;
    *n = 0;
    if (idx_path != NULL && idx_path[0] != '\0') {
        uint64_t total;
        if (read_idx(idx_path, rec_path, rio_reader_size(r), off, &total, msg, cap) != 0) {
            free(*off);
            *off = NULL;
            return -1;
        }
        uint64_t step = (total + num_parts - 1) / num_parts;
        uint64_t b = step * part_index < total ? step * part_index : total;
        uint64_t e = step * (part_index + 1) < total ? step * (part_index + 1) : total;
        memmove(*off, *off + b, (e - b) * sizeof **off);
        *n = e - b;
        return 0;
    }
    uint64_t b, e, acap = 0;
    if (rio_part_range(r, num_parts, part_index, &b, &e, msg, cap) != 0)
        return -1;
    rio_reader_set_end(r, e);
    for (;;) {
        uint64_t at = rio_reader_tell(r);
        const uint8_t *data;
        size_t len;
        int got = rio_reader_next(r, &data, &len, msg, cap);
        if (got < 0) {
            free(*off);
            *off = NULL;
            *n = 0;
            return -1;
        }
        if (got == 0)
            return 0;
        if (push_u64(off, n, &acap, at) != 0) {
            snprintf(msg, cap, "out of memory");
            free(*off);
            *off = NULL;
            *n = 0;
            return -1;
        }
    }
}

/** An image index and the list line it came from. */
typedef struct id_line {
    uint64_t id, line;
} id_line;

static int cmp_id_line(const void *a, const void *b) {
    const id_line *x = a, *y = b;
    return x->id != y->id ? (x->id < y->id ? -1 : 1) : (x->line < y->line ? -1 : x->line > y->line);
}

/** Sorts ids / labels together by id, keeping the last line of equal ids. Returns 0 or -1 (out of
 * memory). */
static int sort_labels(img_labels *l) {
    id_line *perm = malloc((l->n ? l->n : 1) * sizeof *perm);
    float *lab = malloc((l->n ? l->n : 1) * l->width * sizeof *lab + 1);
    if (perm == NULL || lab == NULL) {
        free(perm);
        free(lab);
        return -1;
    }
    for (uint64_t i = 0; i < l->n; i++)
        perm[i] = (id_line){l->ids[i], i};
    qsort(perm, l->n, sizeof *perm, cmp_id_line);
    uint64_t m = 0;
    for (uint64_t i = 0; i < l->n; i++) {
        if (i + 1 < l->n && perm[i + 1].id == perm[i].id)
            continue; /* a later line has the same index */
        l->ids[m] = perm[i].id;
        memcpy(lab + m * l->width, l->labels + perm[i].line * l->width, l->width * sizeof *lab);
        m++;
    }
    free(l->labels);
    l->labels = lab;
    l->n = m;
    free(perm);
    return 0;
}

/** The state of img_labels_read's line callback. */
typedef struct lst_ctx {
    const char *path;
    img_labels *out;
    uint64_t icap, lab_cap;
    char *msg;
    size_t msg_cap;
} lst_ctx;

/** One `index<TAB>labels...<TAB>path` line of an image list. */
static int lst_line(void *p, char *line, uint64_t no) {
    lst_ctx *x = p;
    img_labels *l = x->out;
    char *end;
    errno = 0;
    unsigned long long id = strtoull(line, &end, 10);
    int ok = end != line && errno == 0;
    if (ok && push_u64(&l->ids, &l->n, &x->icap, id) != 0) {
        snprintf(x->msg, x->msg_cap, "out of memory");
        return -1;
    }
    if (ok && l->n * l->width > x->lab_cap) {
        uint64_t nc = x->lab_cap ? x->lab_cap * 2 : 1024 * (uint64_t)l->width;
        float *nl = realloc(l->labels, nc * sizeof *nl);
        if (nl == NULL) {
            snprintf(x->msg, x->msg_cap, "out of memory");
            return -1;
        }
        l->labels = nl;
        x->lab_cap = nc;
    }
    for (uint32_t k = 0; ok && k < l->width; k++) {
        char *s = end;
        float v = strtof(s, &end);
        ok = end != s && (*end == '\0' || strchr(" \t\r\n", *end) != NULL);
        if (ok)
            l->labels[(l->n - 1) * l->width + k] = v;
    }
    if (!ok) {
        snprintf(x->msg, x->msg_cap, "'%s':%llu: expected an image index and %u labels", x->path,
                 (unsigned long long)no, (unsigned)l->width);
        return -1;
    }
    return 0;
}

int img_labels_read(const char *path, uint32_t width, img_labels *out, char *msg, size_t cap) {
    memset(out, 0, sizeof *out);
    out->width = width;
    lst_ctx x = {path, out, 0, 0, msg, cap};
    int rc = each_line(path, "path_imglist", lst_line, &x, msg, cap);
    if (rc == 0 && sort_labels(out) != 0) {
        snprintf(msg, cap, "out of memory");
        rc = -1;
    }
    if (rc != 0)
        img_labels_free(out);
    return rc;
}

const float *img_labels_find(const img_labels *l, uint64_t id) {
    uint64_t lo = 0, hi = l->n;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (l->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < l->n && l->ids[lo] == id ? l->labels + lo * l->width : NULL;
}

void img_labels_free(img_labels *l) {
    free(l->ids);
    free(l->labels);
    memset(l, 0, sizeof *l);
}
