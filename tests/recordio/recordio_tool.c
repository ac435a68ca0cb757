/*
 * The mxk side of the RecordIO conformance test (recordio_conform.py), through
 * the public API only:
 *   recordio_tool dump IDX REC            one line per key in .idx order:
 *       "KEY FLAG LABEL ID ID2 L1 L2 ... | PAYLOAD_HEX" (%.9g floats), then one
 *       line "raw N" with the count of a sequential read of REC
 *   recordio_tool copy IDX REC OUT_IDX OUT_REC
 *       reads every record by key and writes them in the same order with
 *       mxk_recordio_write_idx (the bytes must equal MXNet's)
 *   recordio_tool parts REC N
 *       for each part k of N (mxk_recordio_set_part), one line of the IRHeader
 *       ids of its records, space-separated
 *   recordio_tool unpackimg REC ISCOLOR
 *       each record through mxk_recordio_unpack_img, one line
 *       "ID FLAG LABEL L1 ... : H W C | PIXELS_HEX" (HWC, RGB)
 *   recordio_tool packimg SPEC OUT_REC FMT QUALITY
 *       SPEC lines "ID FLAG LABEL L1 ... : H W C | PIXELS_HEX" packed with
 *       mxk_recordio_pack_img and written in order to OUT_REC
 * Exit 1 with mxk_get_last_error() on stderr on any error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_recordio.h"

/** Prints the last error and exits. */
static void die(const char *what) {
    fprintf(stderr, "recordio_tool: %s: %s\n", what, mxk_get_last_error());
    exit(1);
}

/** Prints one record as a dump line. */
static void print_record(long long key, const void *rec, size_t len) {
    mxk_irheader h;
    const void *labels, *payload;
    size_t plen;
    if (mxk_recordio_unpack(rec, len, &h, &labels, &payload, &plen) != MXK_OK)
        die("unpack");
    printf("%lld %u %.9g %llu %llu", key, h.flag, (double)h.label, (unsigned long long)h.id,
           (unsigned long long)h.id2);
    for (uint32_t i = 0; i < h.flag; i++) {
        float f;
        memcpy(&f, (const char *)labels + 4 * i, 4);
        printf(" %.9g", (double)f);
    }
    printf(" |");
    for (size_t i = 0; i < plen; i++)
        printf("%s%02x", i ? "" : " ", ((const unsigned char *)payload)[i]);
    printf("\n");
}

/** The `parts` command. */
static int parts(const char *path, uint32_t n) {
    for (uint32_t k = 0; k < n; k++) {
        mxk_recordio *h;
        if (mxk_recordio_open(path, "r", &h) != MXK_OK || mxk_recordio_set_part(h, n, k) != MXK_OK)
            die("part");
        const void *rec;
        size_t len;
        const char *sep = "";
        while (mxk_recordio_read(h, &rec, &len) == MXK_OK && rec != NULL) {
            mxk_irheader hd;
            const void *labels, *payload;
            size_t plen;
            if (mxk_recordio_unpack(rec, len, &hd, &labels, &payload, &plen) != MXK_OK)
                die("unpack");
            printf("%s%llu", sep, (unsigned long long)hd.id);
            sep = " ";
        }
        printf("\n");
        if (mxk_recordio_close(h) != MXK_OK)
            die("close");
    }
    return 0;
}

/** The `unpackimg` command. */
static int unpackimg(const char *path, int iscolor) {
    mxk_recordio *h;
    if (mxk_recordio_open(path, "r", &h) != MXK_OK)
        die("open");
    const void *rec;
    size_t len;
    while (mxk_recordio_read(h, &rec, &len) == MXK_OK && rec != NULL) {
        mxk_irheader hd;
        const void *labels;
        uint8_t *pix;
        uint32_t ih, iw, ic;
        if (mxk_recordio_unpack_img(rec, len, iscolor, &hd, &labels, &pix, &ih, &iw, &ic) != MXK_OK)
            die("unpack_img");
        printf("%llu %u %.9g", (unsigned long long)hd.id, hd.flag, (double)hd.label);
        for (uint32_t i = 0; i < hd.flag; i++) {
            float f;
            memcpy(&f, (const char *)labels + 4 * i, 4);
            printf(" %.9g", (double)f);
        }
        printf(" : %u %u %u |", ih, iw, ic);
        for (size_t i = 0; i < (size_t)ih * iw * ic; i++)
            printf("%s%02x", i ? "" : " ", pix[i]);
        printf("\n");
        mxk_free(pix);
    }
    if (mxk_recordio_close(h) != MXK_OK)
        die("close");
    return 0;
}

/** The `packimg` command. */
static int packimg(const char *spec, const char *path, const char *fmt, int quality) {
    FILE *f = fopen(spec, "r");
    mxk_recordio *w;
    if (f == NULL || mxk_recordio_open(path, "w", &w) != MXK_OK)
        die("open");
    static char line[1 << 20];
    while (fgets(line, sizeof line, f) != NULL) {
        char *p = line;
        unsigned long long id = strtoull(p, &p, 10);
        mxk_irheader hd = {(uint32_t)strtoul(p, &p, 10), strtof(p, &p), id, 0};
        float labels[16];
        for (uint32_t i = 0; i < hd.flag && i < 16; i++)
            labels[i] = strtof(p, &p);
        p = strchr(p, ':') + 1;
        uint32_t ih = (uint32_t)strtoul(p, &p, 10), iw = (uint32_t)strtoul(p, &p, 10),
                 ic = (uint32_t)strtoul(p, &p, 10);
        p = strchr(p, '|') + 2;
        size_t n = (size_t)ih * iw * ic;
        uint8_t *pix = malloc(n);
        for (size_t i = 0; i < n; i++) {
            unsigned v;
            sscanf(p + 2 * i, "%2x", &v);
            pix[i] = (uint8_t)v;
        }
        void *rec;
        size_t len;
        if (mxk_recordio_pack_img(&hd, labels, pix, ih, iw, ic, fmt, quality, &rec, &len) != MXK_OK)
            die("pack_img");
        if (mxk_recordio_write(w, rec, len) != MXK_OK)
            die("write");
        mxk_free(rec);
        free(pix);
    }
    fclose(f);
    if (mxk_recordio_close(w) != MXK_OK)
        die("close");
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "parts") == 0)
        return parts(argv[2], (uint32_t)atoi(argv[3]));
    if (argc == 4 && strcmp(argv[1], "unpackimg") == 0)
        return unpackimg(argv[2], atoi(argv[3]));
    if (argc == 6 && strcmp(argv[1], "packimg") == 0)
        return packimg(argv[2], argv[3], argv[4], atoi(argv[5]));
    int dump = argc == 4 && strcmp(argv[1], "dump") == 0;
    int copy = argc == 6 && strcmp(argv[1], "copy") == 0;
    if (!dump && !copy) {
        fprintf(stderr,
                "usage: recordio_tool dump IDX REC | copy IDX REC OUT_IDX OUT_REC | parts REC N | "
                "unpackimg REC ISCOLOR | packimg SPEC OUT_REC FMT QUALITY\n");
        return 2;
    }
    mxk_recordio *in, *out = NULL;
    if (mxk_recordio_indexed_open(argv[2], argv[3], "r", &in) != MXK_OK)
        die("open");
    if (copy && mxk_recordio_indexed_open(argv[4], argv[5], "w", &out) != MXK_OK)
        die("open for writing");
    const int64_t *keys;
    size_t n;
    if (mxk_recordio_keys(in, &keys, &n) != MXK_OK)
        die("keys");
    for (size_t i = 0; i < n; i++) {
        const void *rec;
        size_t len;
        if (mxk_recordio_read_idx(in, keys[i], &rec, &len) != MXK_OK)
            die("read_idx");
        if (dump)
            print_record((long long)keys[i], rec, len);
        else if (mxk_recordio_write_idx(out, keys[i], rec, len) != MXK_OK)
            die("write_idx");
    }
    if (dump) {
        const void *rec;
        size_t len, count = 0;
        if (mxk_recordio_seek(in, 0) != MXK_OK)
            die("seek");
        while (mxk_recordio_read(in, &rec, &len) == MXK_OK && rec != NULL)
            count++;
        printf("raw %zu\n", count);
    }
    if (mxk_recordio_close(out) != MXK_OK)
        die("close");
    mxk_recordio_close(in);
    return 0;
}
