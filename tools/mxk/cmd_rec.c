/*
 * `mxk rec ls|cat|verify FILE.rec`: inspects a RecordIO file of images (made by
 * `mxk im2rec`, upstream tools/im2rec.py or python/mxnet/recordio.py's
 * MXIndexedRecordIO + pack_img) through mxk_recordio.h and the image codec
 * (plugins/io-recordio/image.h). The index is FILE.idx beside FILE.rec (FILE.rec
 * with .rec replaced; --idx names another), used when it exists.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli.h"
#include "image.h"
#include "mxk_recordio.h"

/** The command line of `mxk rec`. */
typedef struct rec_args {
    const char *action; /**< "ls", "cat" or "verify" */
    const char *rec;    /**< FILE.rec */
    const char *idx;    /**< --idx, NULL: FILE.idx when it exists */
    int64_t index;      /**< cat --index K */
    uint64_t offset;    /**< cat --offset O */
    int by_index;       /**< --index given */
    int by_offset;      /**< --offset given */
    const char *output; /**< cat --output FILE, NULL: stdout */
    int json;           /**< --json */
} rec_args;

/** One record as ls and verify see it. */
typedef struct rec_info {
    uint64_t offset, end; /**< its byte range */
    mxk_irheader hdr;
    const void *labels; /**< hdr.flag float32 labels (unaligned) */
    const uint8_t *payload;
    size_t payload_len;
    img_format fmt; /**< IMG_UNKNOWN: not an image */
    uint32_t w, h, c;
} rec_info;

/** A key of the .idx and the end offset of the record it points at. */
typedef struct key_end {
    uint64_t end;
    int64_t key;
} key_end;

/** qsort order of key_end: by end offset. */
static int cmp_key_end(const void *a, const void *b) {
    const key_end *x = a, *y = b;
    return x->end < y->end ? -1 : x->end > y->end;
}

/** The index path: --idx, or FILE.rec's .idx when it exists (malloc'd; NULL: none). */
static char *index_path(const rec_args *a, int *oom) {
    *oom = 0;
    if (a->idx != NULL) {
        char *s = strdup(a->idx);
        *oom = s == NULL;
        return s;
    }
    size_t n = strlen(a->rec);
    char *s = malloc(n + 5);
    if (s == NULL) {
        *oom = 1;
        return NULL;
    }
    strcpy(s, a->rec);
    if (n > 4 && strcmp(s + n - 4, ".rec") == 0)
        strcpy(s + n - 4, ".idx");
    else
        strcat(s, ".idx");
    struct stat st;
    if (stat(s, &st) != 0) {
        free(s);
        return NULL;
    }
    return s;
}

/** Opens the file (with its index when there is one). CLI_OK or CLI_ERROR. */
static int open_rec(const rec_args *a, mxk_recordio **h, char **idx) {
    int oom;
    *idx = index_path(a, &oom);
    if (oom)
        return cli_error("out of memory");
    mxk_status st =
        *idx ? mxk_recordio_indexed_open(*idx, a->rec, "r", h) : mxk_recordio_open(a->rec, "r", h);
    if (st != MXK_OK) {
        free(*idx);
        *idx = NULL;
        return cli_api_error(st, "cannot read '%s'", a->rec);
    }
    return CLI_OK;
}

/**
 * The keys of the index with the end offset of their records, sorted by end,
 * into *out (*n entries; none without an index). Reads each keyed record (the
 * kernel checks that its offset is a record's start). CLI_OK or CLI_ERROR.
 */
static int index_ends(mxk_recordio *h, const char *idx, key_end **out, size_t *n) {
    *out = NULL;
    *n = 0;
    if (idx == NULL)
        return CLI_OK;
    const int64_t *keys;
    size_t nk;
    mxk_status st = mxk_recordio_keys(h, &keys, &nk);
    if (st != MXK_OK)
        return cli_api_error(st, "cannot read '%s'", idx);
    key_end *ke = malloc((nk ? nk : 1) * sizeof *ke);
    if (ke == NULL)
        return cli_error("out of memory");
    for (size_t i = 0; i < nk; i++) {
        const void *buf;
        size_t len;
        if ((st = mxk_recordio_read_idx(h, keys[i], &buf, &len)) != MXK_OK ||
            (st = mxk_recordio_tell(h, &ke[i].end)) != MXK_OK) {
            free(ke);
            return cli_api_error(st, "cannot read key %" PRId64 " of '%s'", keys[i], idx);
        }
        ke[i].key = keys[i];
    }
    qsort(ke, nk, sizeof *ke, cmp_key_end);
    *out = ke;
    *n = nk;
    return mxk_recordio_seek(h, 0) == MXK_OK ? CLI_OK : cli_api_error(MXK_ERR_IO, "seek");
}

/** The first key whose record ends at `end`, or NULL. */
static const key_end *find_key(const key_end *ke, size_t n, uint64_t end) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ke[mid].end < end)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && ke[lo].end == end ? &ke[lo] : NULL;
}

/**
 * Reads the next record into *ri (1), or the end (0), or reports the error
 * (-1). The payload is probed with `cx` (not an image: fmt IMG_UNKNOWN).
 */
static int next_record(mxk_recordio *h, const char *rec, img_codec *cx, size_t num, rec_info *ri) {
    const void *buf;
    size_t len;
    mxk_status st;
    memset(ri, 0, sizeof *ri);
    if ((st = mxk_recordio_tell(h, &ri->offset)) != MXK_OK ||
        (st = mxk_recordio_read(h, &buf, &len)) != MXK_OK) {
        cli_api_error(st, "cannot read '%s'", rec);
        return -1;
    }
    if (buf == NULL)
        return 0;
    mxk_recordio_tell(h, &ri->end);
    const void *payload;
    if ((st = mxk_recordio_unpack(buf, len, &ri->hdr, &ri->labels, &payload, &ri->payload_len)) !=
        MXK_OK) {
        cli_error("'%s': record %zu at byte %" PRIu64 ": %s", rec, num, ri->offset,
                  mxk_get_last_error());
        return -1;
    }
    ri->payload = payload;
    char msg[256];
    if (img_probe(cx, ri->payload, ri->payload_len, &ri->fmt, &ri->w, &ri->h, &ri->c, msg,
                  sizeof msg) != 0)
        ri->fmt = IMG_UNKNOWN;
    return 1;
}

/** Label i of a record (flag > 0: from the label array; else hdr.label). */
static double label_at(const rec_info *ri, uint32_t i) {
    float v = ri->hdr.label;
    if (ri->hdr.flag > 0)
        memcpy(&v, (const uint8_t *)ri->labels + 4 * (size_t)i, 4);
    return cli_float_shortest(v);
}

/** "jpeg", "png", or NULL for anything else. */
static const char *format_name(img_format f) {
    return f == IMG_JPEG ? "jpeg" : f == IMG_PNG ? "png" : NULL;
}

/** The JSON object of a record (key: NULL when it has none). */
static json_t *record_json(const rec_info *ri, const key_end *key) {
    json_t *label;
    if (ri->hdr.flag == 0) {
        label = cli_json_number(label_at(ri, 0));
    } else {
        label = json_array();
        for (uint32_t i = 0; i < ri->hdr.flag; i++)
            json_array_append_new(label, cli_json_number(label_at(ri, i)));
    }
    const char *fmt = format_name(ri->fmt);
    return json_pack("{s:o, s:I, s:I, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:I}", "key",
                     key ? json_integer(key->key) : json_null(), "offset", (json_int_t)ri->offset,
                     "flag", (json_int_t)ri->hdr.flag, "label", label, "id", (json_int_t)ri->hdr.id,
                     "id2", (json_int_t)ri->hdr.id2, "format", fmt ? json_string(fmt) : json_null(),
                     "width", fmt ? json_integer(ri->w) : json_null(), "height",
                     fmt ? json_integer(ri->h) : json_null(), "channels",
                     fmt ? json_integer(ri->c) : json_null(), "bytes", (json_int_t)ri->payload_len);
}

/** Prints a record's line of `mxk rec ls`. */
static void print_record(const rec_info *ri, const key_end *key) {
    char keys[32], labels[256], size[64], num[32];
    snprintf(keys, sizeof keys, key ? "%" PRId64 : "-", key ? key->key : 0);
    labels[0] = '\0';
    uint32_t nl = ri->hdr.flag ? ri->hdr.flag : 1;
    for (uint32_t i = 0; i < nl && strlen(labels) + 40 < sizeof labels; i++) {
        cli_format_number(label_at(ri, i), num, sizeof num);
        strcat(labels, i ? "," : "");
        strcat(labels, num);
    }
    if (nl > 0 && strlen(labels) + 40 >= sizeof labels)
        strcat(labels, ",...");
    const char *fmt = format_name(ri->fmt);
    if (fmt)
        snprintf(size, sizeof size, "%ux%ux%u", ri->w, ri->h, ri->c);
    else
        snprintf(size, sizeof size, "-");
    printf("%-8s %12" PRIu64 " %4u %-12s %8" PRIu64 " %6" PRIu64 " %-6s %-14s %zu\n", keys,
           ri->offset, ri->hdr.flag, labels, ri->hdr.id, ri->hdr.id2, fmt ? fmt : "-", size,
           ri->payload_len);
}

/** `mxk rec ls` and `mxk rec verify`: one pass over the records. */
static int scan(const rec_args *a) {
    mxk_recordio *h = NULL;
    char *idx = NULL;
    key_end *ke = NULL;
    size_t nk = 0, num = 0, images = 0;
    int verify = strcmp(a->action, "verify") == 0;
    img_codec *cx = img_codec_new();
    json_t *records = a->json && !verify ? json_array() : NULL;
    uint64_t end = 0, *spans = NULL; /* verify: each record's offset and end */
    int rc =
        cx == NULL || (a->json && !verify && records == NULL) ? cli_error("out of memory") : CLI_OK;
    if (rc == CLI_OK)
        rc = open_rec(a, &h, &idx);
    if (rc == CLI_OK && !verify) /* verify checks the records first, the index after */
        rc = index_ends(h, idx, &ke, &nk);
    if (rc == CLI_OK && !verify && !a->json)
        printf("%-8s %12s %4s %-12s %8s %6s %-6s %-14s %s\n", "key", "offset", "flag", "label",
               "id", "id2", "format", "size", "bytes");
    for (rec_info ri; rc == CLI_OK; num++) {
        int r = next_record(h, a->rec, cx, num, &ri);
        if (r <= 0) {
            rc = r < 0 ? CLI_ERROR : CLI_OK;
            break;
        }
        end = ri.end;
        const key_end *key = find_key(ke, nk, ri.end);
        if (verify) {
            char msg[512];
            img_image im = {0};
            if (img_decode(cx, ri.payload, ri.payload_len, 0, 0, 0, &im, msg, sizeof msg) != 0)
                rc = cli_error("'%s': record %zu (id %" PRIu64 ") at byte %" PRIu64 ": %s", a->rec,
                               num, ri.hdr.id, ri.offset, msg);
            else
                images++;
            img_free(&im);
            if (rc == CLI_OK && num % 1024 == 0) {
                uint64_t *grown = realloc(spans, (num + 1024) * 2 * sizeof *spans);
                if (grown == NULL)
                    rc = cli_error("out of memory");
                spans = grown ? grown : spans;
            }
            if (rc == CLI_OK) {
                spans[2 * num] = ri.offset;
                spans[2 * num + 1] = ri.end;
            }
        } else if (records != NULL) {
            json_array_append_new(records, record_json(&ri, key));
        } else {
            print_record(&ri, key);
        }
    }
    if (rc == CLI_OK && verify) /* every key at a record's start, every record keyed */
        rc = index_ends(h, idx, &ke, &nk);
    for (size_t i = 0; rc == CLI_OK && verify && idx != NULL && i < num; i++)
        if (find_key(ke, nk, spans[2 * i + 1]) == NULL)
            rc = cli_error("'%s': record %zu at byte %" PRIu64 " has no key in '%s'", a->rec, i,
                           spans[2 * i], idx);
    if (rc == CLI_OK && a->json)
        rc = cli_json_print(
            verify ? json_pack("{s:s, s:o, s:b, s:I, s:I, s:I, s:I}", "file", a->rec, "idx",
                               idx ? json_string(idx) : json_null(), "ok", 1, "records",
                               (json_int_t)num, "images", (json_int_t)images, "keys",
                               (json_int_t)nk, "bytes", (json_int_t)end)
                   : json_pack("{s:s, s:o, s:o, s:I, s:I}", "file", a->rec, "idx",
                               idx ? json_string(idx) : json_null(), "records", records, "count",
                               (json_int_t)num, "bytes", (json_int_t)end),
            0);
    else if (rc == CLI_OK && verify)
        printf("%s: OK, %zu records, %zu images decoded%s%s%s\n", a->rec, num, images,
               idx ? ", every record keyed in " : "", idx ? idx : "", idx ? "" : " (no index)");
    else if (rc == CLI_OK)
        printf("%zu records, %" PRIu64 " bytes%s%s\n", num, end, idx ? ", index " : "",
               idx ? idx : "");
    if (a->json && !verify && rc != CLI_OK)
        json_decref(records);
    free(spans);
    free(ke);
    mxk_recordio_close(h);
    free(idx);
    img_codec_free(cx);
    return rc;
}

/** `mxk rec cat`: one record's payload to stdout or --output. */
static int cat(const rec_args *a) {
    mxk_recordio *h = NULL;
    char *idx = NULL;
    int rc = open_rec(a, &h, &idx);
    const void *buf = NULL;
    size_t len = 0;
    mxk_status st = MXK_OK;
    rec_info ri = {0};
    if (rc == CLI_OK && a->by_index && idx == NULL)
        rc = cli_error("'%s' has no index (FILE.idx or --idx): use --offset", a->rec);
    if (rc == CLI_OK) {
        if (a->by_index)
            st = mxk_recordio_read_idx(h, a->index, &buf, &len);
        else if ((st = mxk_recordio_seek(h, a->offset)) == MXK_OK)
            st = mxk_recordio_read(h, &buf, &len);
        if (st != MXK_OK)
            rc = cli_api_error(st, "cannot read '%s'", a->rec);
        else if (buf == NULL)
            rc = cli_error("'%s': no record at byte %" PRIu64 " (the end of the file)", a->rec,
                           a->offset);
    }
    const void *labels, *payload = NULL;
    if (rc == CLI_OK &&
        (st = mxk_recordio_unpack(buf, len, &ri.hdr, &labels, &payload, &ri.payload_len)) != MXK_OK)
        rc = cli_api_error(st, "cannot unpack the record");
    if (rc == CLI_OK && a->output != NULL &&
        (st = mxk_file_write(a->output, payload, ri.payload_len)) != MXK_OK)
        rc = cli_api_error(st, "cannot write '%s'", a->output);
    if (rc == CLI_OK && a->output == NULL &&
        (fwrite(payload, 1, ri.payload_len, stdout) != ri.payload_len || fflush(stdout) != 0))
        rc = cli_error("cannot write the record to stdout");
    if (rc == CLI_OK && a->output != NULL) {
        img_codec *cx = img_codec_new();
        char msg[256];
        ri.labels = labels;
        ri.payload = payload;
        if (cx == NULL || img_probe(cx, ri.payload, ri.payload_len, &ri.fmt, &ri.w, &ri.h, &ri.c,
                                    msg, sizeof msg) != 0)
            ri.fmt = IMG_UNKNOWN;
        img_codec_free(cx);
        mxk_recordio_tell(h, &ri.end);
        if (a->json) {
            json_t *o = record_json(&ri, NULL);
            json_object_del(o, "key");
            json_object_del(o, "offset");
            json_object_set_new(o, "output", json_string(a->output));
            rc = cli_json_print(o, 0);
        } else {
            const char *fmt = format_name(ri.fmt);
            printf("wrote %s: %zu bytes (%s", a->output, ri.payload_len,
                   fmt ? fmt : "not an image");
            if (fmt)
                printf(" %ux%ux%u", ri.w, ri.h, ri.c);
            printf("), record id %" PRIu64 "\n", ri.hdr.id);
        }
    }
    mxk_recordio_close(h);
    free(idx);
    return rc;
}

/** Runs `mxk rec ACTION FILE.rec [options]`. */
static int run_rec(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    rec_args a = {.json = g->json};
    int positional = 0;
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        int r;
        if (!positional && strcmp(argv[i], "--") == 0) {
            positional = 1;
            continue;
        }
        if (!positional && cli_is_option(argv[i])) {
            const char *name = argv[i];
            if ((r = cli_option_value(argc, argv, &i, name, &v)) < 0 || v == NULL)
                return cli_reject_argument(self, name);
            uint64_t u;
            if (strcmp(name, "--idx") == 0) {
                a.idx = v;
            } else if (strcmp(name, "--output") == 0 || strcmp(name, "-o") == 0) {
                a.output = v;
            } else if (strcmp(name, "--offset") == 0) {
                if (!cli_parse_uint(v, UINT64_MAX, &a.offset))
                    return cli_usage_error(self, "--offset expects a byte offset, got '%s'", v);
                a.by_offset = 1;
            } else if (strcmp(name, "--index") == 0) {
                int neg = v[0] == '-';
                if (!cli_parse_uint(v + neg, INT64_MAX, &u))
                    return cli_usage_error(self, "--index expects an integer key, got '%s'", v);
                a.index = neg ? -(int64_t)u : (int64_t)u;
                a.by_index = 1;
            } else {
                return cli_reject_argument(self, name);
            }
        } else if (a.action == NULL) {
            a.action = argv[i];
        } else if (a.rec == NULL) {
            a.rec = argv[i];
        } else {
            return cli_reject_argument(self, argv[i]);
        }
    }
    if (a.action == NULL || (strcmp(a.action, "ls") != 0 && strcmp(a.action, "cat") != 0 &&
                             strcmp(a.action, "verify") != 0))
        return cli_usage_error(self,
                               a.action ? "unknown action '%s': ls, cat or verify"
                                        : "give an action: ls, cat or verify%s",
                               a.action ? a.action : "");
    if (a.rec == NULL)
        return cli_usage_error(self, "give the file (FILE.rec)");
    int is_cat = strcmp(a.action, "cat") == 0;
    if (!is_cat && (a.by_index || a.by_offset || a.output))
        return cli_usage_error(self, "--index, --offset and --output are options of 'cat'");
    if (is_cat && a.by_index + a.by_offset != 1)
        return cli_usage_error(self, "cat needs one of --index K or --offset O");
    if (is_cat && a.json && a.output == NULL)
        return cli_usage_error(self, "cat --json needs --output (the payload is binary)");
    return is_cat ? cat(&a) : scan(&a);
}

/** The `rec` command. */
const cli_command cli_cmd_rec = {
    .name = "rec",
    .summary = "list, extract and check the records of a RecordIO file (.rec)",
    .usage = "mxk rec ls FILE.rec [--idx IDX] [--json]\n"
             "       mxk rec cat FILE.rec --index K|--offset O [-o FILE] [--json]\n"
             "       mxk rec verify FILE.rec [--idx IDX] [--json]",
    .help = "Inspects a RecordIO file of images, as written by 'mxk im2rec', MXNet's\n"
            "tools/im2rec.py or mx.recordio.MXIndexedRecordIO with pack_img. The index\n"
            "FILE.idx beside FILE.rec ('KEY<TAB>OFFSET' lines) is used when it exists.\n"
            "\n"
            "Actions:\n"
            "  ls       one line per record, in file order: its index key ('-' without\n"
            "           an index or when no key points at it), byte offset, the IRHeader's\n"
            "           flag, label(s) (flag > 0: the flag labels stored ahead of the\n"
            "           image), id and id2, the payload's format (jpeg, png, '-' for\n"
            "           anything else), its size WxHxC and bytes; then the count\n"
            "  cat      writes the payload of one record (the image file, without the\n"
            "           IRHeader and labels) to stdout or --output\n"
            "  verify   reads every record, checks its header and decodes its image\n"
            "           (a payload that is not a JPEG or PNG counts as damage), then\n"
            "           checks the index: every key points at a record's start and\n"
            "           every record has a key. The first damage found is reported\n"
            "           with the record's number, id and byte offset; exit status 1\n"
            "\n"
            "Options:\n"
            "  --idx IDX          the index file (default: FILE.idx when it exists)\n"
            "  --index K          cat: the record of key K in the index\n"
            "  --offset O         cat: the record starting at byte O\n"
            "  -o, --output FILE  cat: write the payload to FILE (atomically) and print\n"
            "                     what it is, instead of writing it to stdout\n"
            "\n"
            "--json prints, for ls, {\"file\", \"idx\", \"records\": [{\"key\", \"offset\",\n"
            "\"flag\", \"label\" (a number, or a list when flag > 0), \"id\", \"id2\",\n"
            "\"format\", \"width\", \"height\", \"channels\" (null when not an image),\n"
            "\"bytes\"}], \"count\", \"bytes\"}; for verify {\"file\", \"idx\", \"ok\",\n"
            "\"records\", \"images\", \"keys\", \"bytes\"}; for cat (with --output) the\n"
            "record's fields and \"output\".\n",
    .run = run_rec,
};
