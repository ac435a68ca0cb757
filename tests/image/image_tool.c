/*
 * image_tool: the image codecs (plugins/io-recordio/image.h) on files, for
 * image_pil.py, which compares what they give with PIL and djpeg.
 *
 *   image_tool decode IN CHANNELS MIN_W MIN_H OUT.raw    prints "W H C"
 *   image_tool upright IN CHANNELS OUT.raw     decode, then img_orient by the
 *                                              EXIF orientation: "W H C O"
 *   image_tool probe IN                                  prints "FMT W H C"
 *   image_tool resize IN.raw W H C X0 Y0 CW CH OW OH FILTER OUT.raw
 *   image_tool encode IN.raw W H C jpg|png QUALITY OUT
 *
 * .raw files are the pixels, HWC, rows packed. Errors: "error: <message>" on
 * stdout, exit status 1.
 */
#include "image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Reads a whole file (malloc'd; at least 1 byte allocated), or exits. */
static uint8_t *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL || fseek(f, 0, SEEK_END) != 0) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    long n = ftell(f);
    rewind(f);
    uint8_t *d = malloc((size_t)n + 1);
    if (d == NULL || fread(d, 1, (size_t)n, f) != (size_t)n) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    *len = (size_t)n;
    return d;
}

/** Writes len bytes to path, or exits. */
static void spill(const char *path, const uint8_t *d, size_t len) {
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(d, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
}

/** A .raw file as an image of w x h x c (owned by the caller), or exits. */
static img_image load_raw(const char *path, const char *w, const char *h, const char *c) {
    img_image im = {0};
    size_t len;
    im.pix = slurp(path, &len);
    im.w = (uint32_t)atoi(w);
    im.h = (uint32_t)atoi(h);
    im.c = (uint32_t)atoi(c);
    if (len != (size_t)im.w * im.h * im.c) {
        fprintf(stderr, "%s: %zu bytes, not %u x %u x %u\n", path, len, im.w, im.h, im.c);
        exit(2);
    }
    return im;
}

static int run(int argc, char **argv, img_codec *cx, char *msg, size_t cap) {
    const char *cmd = argv[1];
    int upright = strcmp(cmd, "upright") == 0 && argc == 5;
    if ((strcmp(cmd, "decode") == 0 && argc == 7) || upright) {
        size_t len;
        uint8_t *data = slurp(argv[2], &len);
        img_image im;
        int o = img_exif_orientation(data, len);
        uint32_t min_w = upright ? 0 : (uint32_t)atoi(argv[4]),
                 min_h = upright ? 0 : (uint32_t)atoi(argv[5]);
        int rc = img_decode(cx, data, len, (uint32_t)atoi(argv[3]), min_w, min_h, &im, msg, cap);
        free(data);
        if (rc != 0 || (upright && img_orient(&im, o, msg, cap) != 0))
            return -1;
        spill(argv[argc - 1], im.pix, (size_t)im.w * im.h * im.c);
        printf("%u %u %u", im.w, im.h, im.c);
        if (upright)
            printf(" %d", o);
        printf("\n");
        img_free(&im);
        return 0;
    }
    if (strcmp(cmd, "probe") == 0 && argc == 3) {
        size_t len;
        uint8_t *data = slurp(argv[2], &len);
        img_format fmt;
        uint32_t w, h, c;
        int rc = img_probe(cx, data, len, &fmt, &w, &h, &c, msg, cap);
        free(data);
        if (rc == 0)
            printf("%s %u %u %u\n", fmt == IMG_JPEG ? "jpg" : "png", w, h, c);
        return rc;
    }
    if (strcmp(cmd, "resize") == 0 && argc == 14) {
        img_image in = load_raw(argv[2], argv[3], argv[4], argv[5]), out;
        uint32_t a[6];
        for (int i = 0; i < 6; i++)
            a[i] = (uint32_t)atoi(argv[6 + i]);
        int rc = img_resize(&in, a[0], a[1], a[2], a[3], a[4], a[5], (img_filter)atoi(argv[12]),
                            &out, msg, cap);
        img_free(&in);
        if (rc != 0)
            return -1;
        spill(argv[13], out.pix, (size_t)out.w * out.h * out.c);
        img_free(&out);
        return 0;
    }
    if (strcmp(cmd, "encode") == 0 && argc == 9) {
        img_image in = load_raw(argv[2], argv[3], argv[4], argv[5]);
        img_format fmt = strcmp(argv[6], "jpg") == 0 ? IMG_JPEG : IMG_PNG;
        uint8_t *enc;
        size_t len;
        int rc = img_encode(cx, &in, fmt, atoi(argv[7]), &enc, &len, msg, cap);
        img_free(&in);
        if (rc != 0)
            return -1;
        spill(argv[8], enc, len);
        free(enc);
        return 0;
    }
    fprintf(stderr, "usage: see the comment at the top of image_tool.c\n");
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: see the comment at the top of image_tool.c\n");
        return 2;
    }
    img_codec *cx = img_codec_new();
    char msg[256];
    int rc = run(argc, argv, cx, msg, sizeof msg);
    if (rc != 0)
        printf("error: %s\n", msg);
    img_codec_free(cx);
    return rc != 0;
}
