/*
 * mxk-cli-write-image OUT W H C SEED: writes a W x H image of C channels (1, 3
 * or 4) with a deterministic pattern depending on SEED, as a PNG (OUT ends in
 * .png or .PNG) or a JPEG (quality 90), through the image codec of
 * plugins/io-recordio/image.h. The command-line tests make their folders of
 * images with it (CI has only the toolchain). Exit status 0, or 1 with a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "image.h"

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: mxk-cli-write-image OUT W H C SEED\n");
        return 1;
    }
    const char *out = argv[1];
    img_image im = {NULL, (uint32_t)atoi(argv[2]), (uint32_t)atoi(argv[3]),
                    (uint32_t)atoi(argv[4])};
    unsigned seed = (unsigned)atoi(argv[5]);
    size_t n = strlen(out);
    img_format fmt = n > 4 && strcasecmp(out + n - 4, ".png") == 0 ? IMG_PNG : IMG_JPEG;
    im.pix = malloc((size_t)im.w * im.h * im.c + 1);
    img_codec *cx = img_codec_new();
    if (im.pix == NULL || cx == NULL) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    for (uint32_t y = 0; y < im.h; y++)
        for (uint32_t x = 0; x < im.w; x++)
            for (uint32_t c = 0; c < im.c; c++)
                im.pix[((size_t)y * im.w + x) * im.c + c] =
                    (uint8_t)(x * (13 + 4 * c) + y * (7 + 9 * c) + seed * 31 + (x * y) % 17);
    uint8_t *data = NULL;
    size_t len = 0;
    char msg[256];
    FILE *f = NULL;
    int ok = img_encode(cx, &im, fmt, fmt == IMG_PNG ? 6 : 90, &data, &len, msg, sizeof msg) == 0;
    if (!ok)
        fprintf(stderr, "%s: %s\n", out, msg);
    else if ((f = fopen(out, "wb")) == NULL || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", out);
        ok = 0;
    }
    free(data);
    free(im.pix);
    img_codec_free(cx);
    return ok ? 0 : 1;
}
