/*
 * classify: the class of one Fashion-MNIST image, from a checkpoint that
 * `mxk train --model-prefix PREFIX` wrote, through the predict-only C API
 * (kernel/include/mxk.h mxk_predictor_*; upstream's counterpart is
 * example/image-classification/predict-cpp with include/mxnet/c_predict_api.h).
 *
 *   classify PREFIX EPOCH IMAGES INDEX
 *
 * reads PREFIX-symbol.json and PREFIX-EPOCH.params (EPOCH as 4 digits), image
 * INDEX (0-based) of the IDX image file IMAGES (gzip'ed or not, e.g.
 * /usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz), scales its pixels
 * by 1/256 as MNISTIter does, and prints "class C probability P". The config dir
 * (plugins) is found as by every mxk program: $MXK_CONFIG_DIR, else the install's.
 * Exit status 1 with the library's message on stderr when anything fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

#include "mxk.h"

/** Reads image `index` of an IDX image file (16-byte header, 28x28 bytes each) as floats. */
static int read_image(const char *path, long index, float *x) {
    unsigned char px[784];
    gzFile f = gzopen(path, "rb");
    int ok = f && index >= 0 && gzseek(f, 16 + 784L * index, SEEK_SET) >= 0 &&
             gzread(f, px, sizeof px) == (int)sizeof px;
    if (f)
        gzclose(f);
    for (int i = 0; ok && i < 784; i++)
        x[i] = px[i] / 256.0f;
    if (!ok)
        fprintf(stderr, "classify: cannot read image %ld of '%s'\n", index, path);
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: classify PREFIX EPOCH IMAGES INDEX\n");
        return 2;
    }
    char symbol_path[4096], params_path[4096], *json = NULL, *params = NULL;
    size_t json_size = 0, params_size = 0;
    float x[784], prob[10];
    if (!read_image(argv[3], atol(argv[4]), x))
        return 1;
    snprintf(symbol_path, sizeof symbol_path, "%s-symbol.json", argv[1]);
    snprintf(params_path, sizeof params_path, "%s-%04d.params", argv[1], atoi(argv[2]));
    const char *inputs[] = {"data"};
    mxk_shape shape = {.ndim = 4, .dims = {1, 1, 28, 28}};
    mxk_context cpu = {MXK_DEV_CPU, 0};
    mxk_predictor *p = NULL;

    /* Each step runs when the ones before succeeded. */
    mxk_status st = mxk_init(NULL);
    if (st == MXK_OK)
        st = mxk_file_read(symbol_path, "symbol file", 1 << 26, &json, &json_size);
    if (st == MXK_OK)
        st = mxk_file_read(params_path, "parameter file", 1u << 31, &params, &params_size);
    if (st == MXK_OK)
        st = mxk_predictor_create(json, params, params_size, cpu, 1, inputs, &shape, 0, NULL, &p);
    if (st == MXK_OK)
        st = mxk_predictor_set_input(p, "data", x, 784);
    if (st == MXK_OK)
        st = mxk_predictor_forward(p);
    if (st == MXK_OK)
        st = mxk_predictor_get_output(p, 0, prob, 10);
    if (st == MXK_OK) {
        int best = 0;
        for (int c = 1; c < 10; c++)
            if (prob[c] > prob[best])
                best = c;
        printf("class %d probability %f\n", best, prob[best]);
    } else {
        fprintf(stderr, "classify: %s\n", mxk_get_last_error());
    }
    mxk_predictor_free(p);
    mxk_free(json);
    mxk_free(params);
    mxk_shutdown();
    return st == MXK_OK ? 0 : 1;
}
