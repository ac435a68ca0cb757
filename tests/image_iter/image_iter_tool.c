/*
 * Runs one epoch of an ImageRecordIter for image_iter_conform.py: the
 * attributes are KEY=VALUE arguments; the batches' data (raw, float32 or uint8)
 * goes to OUT.data, their labels (float32) to OUT.label, and one line per batch
 * "pad P" to stdout. Exit 0, or 1 with the error on stderr.
 *
 * Usage: image_iter_tool OUT KEY=VALUE...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk.h"

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: image_iter_tool OUT KEY=VALUE...\n");
        return 2;
    }
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = BUILD_CONFDIR};
    const char *keys[64], *vals[64];
    uint32_t n = 0;
    for (int i = 2; i < argc && n < 64; i++, n++) {
        char *eq = strchr(argv[i], '=');
        if (eq == NULL) {
            fprintf(stderr, "not KEY=VALUE: %s\n", argv[i]);
            return 2;
        }
        *eq = '\0';
        keys[n] = argv[i];
        vals[n] = eq + 1;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s.data", argv[1]);
    FILE *fd = fopen(path, "wb");
    snprintf(path, sizeof path, "%s.label", argv[1]);
    FILE *fl = fopen(path, "wb");
    mxk_data_iter *it = NULL;
    int32_t has = 0;
    mxk_status st = fd && fl ? mxk_init(&o) : MXK_ERR_IO;
    if (st == MXK_OK)
        st = mxk_data_iter_create("ImageRecordIter", n, keys, vals, &it);
    while (st == MXK_OK && (st = mxk_data_iter_next(it, &has)) == MXK_OK && has) {
        mxk_ndarray *const *d, *const *l;
        uint32_t pad;
        void *x, *y;
        st = mxk_data_iter_batch(it, NULL, &d, NULL, &l, &pad);
        if (st == MXK_OK && (st = mxk_ndarray_data(d[0], &x)) == MXK_OK &&
            (st = mxk_ndarray_data(l[0], &y)) == MXK_OK) {
            size_t el = mxk_ndarray_dtype(d[0]) == MXK_UINT8 ? 1 : 4;
            fwrite(x, el, mxk_ndarray_size(d[0]), fd);
            fwrite(y, 4, mxk_ndarray_size(l[0]), fl);
            printf("pad %u\n", pad);
        }
    }
    if (st != MXK_OK)
        fprintf(stderr, "error: %s\n", fd && fl ? mxk_get_last_error() : "cannot write OUT");
    mxk_data_iter_free(it);
    if (fd)
        fclose(fd);
    if (fl)
        fclose(fl);
    mxk_shutdown();
    return st == MXK_OK ? 0 : 1;
}
