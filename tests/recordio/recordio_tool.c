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

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "parts") == 0)
        return parts(argv[2], (uint32_t)atoi(argv[3]));
    int dump = argc == 4 && strcmp(argv[1], "dump") == 0;
    int copy = argc == 6 && strcmp(argv[1], "copy") == 0;
    if (!dump && !copy) {
        fprintf(stderr,
                "usage: recordio_tool dump IDX REC | copy IDX REC OUT_IDX OUT_REC | parts REC N\n");
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
