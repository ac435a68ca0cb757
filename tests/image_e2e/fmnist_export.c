/*
 * fmnist_export: writes a Fashion-MNIST (or MNIST) IDX pair as a folder of image
 * files by class, the layout `mxk im2rec --list --recursive` lists (upstream
 * tools/im2rec.py: one sub-folder per class, labels from the sorted folder names):
 *
 *   fmnist_export IMAGES LABELS OUT_DIR png|jpg [N]
 *
 * writes OUT_DIR/<label>/<i>.<ext> for the first N examples (all by default),
 * <i> the example's position zero-padded to 5 digits so that the file order is
 * the IDX order; PNG losslessly, JPEG at quality 95 (gray). Uses the IDX reader
 * of plugins/io-recordio (idx.h) and the image codecs (image.h). Exits 0, or 1
 * with a message on stderr.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "idx.h"
#include "image.h"

/** Creates `path` as a directory (an existing one is fine). Returns 0 or -1 (reported). */
static int make_dir(const char *path) {
    if (mkdir(path, 0755) == 0 || errno == EEXIST)
        return 0;
    fprintf(stderr, "fmnist_export: cannot create '%s': %s\n", path, strerror(errno));
    return -1;
}

/** Writes n bytes to `path`. Returns 0 or -1 (reported). */
static int write_file(const char *path, const uint8_t *data, size_t n) {
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(data, 1, n, f) == n;
    if (f && fclose(f) != 0)
        ok = 0;
    if (!ok)
        fprintf(stderr, "fmnist_export: cannot write '%s': %s\n", path, strerror(errno));
    return ok ? 0 : -1;
}

int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: fmnist_export IMAGES LABELS OUT_DIR png|jpg [N]\n");
        return 2;
    }
    img_format fmt = strcmp(argv[4], "png") == 0 ? IMG_PNG : IMG_JPEG;
    char msg[1024];
    idx_data img = {0}, lbl = {0};
    if (idx_read_file(argv[1], 3, "images", NULL, NULL, &img, msg, sizeof msg) != 0 ||
        idx_read_file(argv[2], 1, "labels", NULL, NULL, &lbl, msg, sizeof msg) != 0) {
        fprintf(stderr, "fmnist_export: %s\n", msg);
        return 1;
    }
    uint64_t n = img.end - img.begin;
    if (argc == 6 && strtoull(argv[5], NULL, 10) < n)
        n = strtoull(argv[5], NULL, 10);
    img_codec *cx = img_codec_new();
    int rc = cx == NULL || make_dir(argv[3]) != 0;
    for (uint64_t i = 0; i < n && rc == 0; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%u", argv[3], (unsigned)lbl.data[i]);
        img_image im = {img.data + i * img.item_size, img.dims[2], img.dims[1], 1};
        uint8_t *enc = NULL;
        size_t len = 0;
        rc = make_dir(path) != 0;
        if (rc == 0 &&
            img_encode(cx, &im, fmt, fmt == IMG_PNG ? 6 : 95, &enc, &len, msg, sizeof msg) != 0) {
            fprintf(stderr, "fmnist_export: example %llu: %s\n", (unsigned long long)i, msg);
            rc = 1;
        }
        snprintf(path + strlen(path), sizeof path - strlen(path), "/%05llu.%s",
                 (unsigned long long)i, fmt == IMG_PNG ? "png" : "jpg");
        if (rc == 0)
            rc = write_file(path, enc, len) != 0;
        free(enc);
    }
    img_codec_free(cx);
    idx_free(&img);
    idx_free(&lbl);
    return rc ? 1 : 0;
}
