/*
 * EXIF orientation (image.h: img_exif_orientation, img_orient): what
 * cv2.imread does to a photo in upstream tools/im2rec.py (OpenCV's
 * modules/imgcodecs/src/exif.cpp reads the tag, loadsave.cpp
 * ApplyExifOrientation turns the image).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

/** 16 or 32 bits at p, big-endian when be, else little-endian. */
static uint32_t get(const uint8_t *p, int bytes, int be) {
    uint32_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint32_t)p[be ? i : bytes - 1 - i] << (8 * (bytes - 1 - i));
    return v;
}

/** The orientation tag of a TIFF block (the APP1 segment after "Exif\0\0"), or 1. */
static int tiff_orientation(const uint8_t *t, size_t n) {
    if (n < 8 || !(memcmp(t, "II*\0", 4) == 0 || memcmp(t, "MM\0*", 4) == 0))
        return 1;
    int be = t[0] == 'M';
    uint32_t ifd = get(t + 4, 4, be);
    if (ifd > n - 2)
        return 1;
    uint32_t count = get(t + ifd, 2, be);
    for (uint32_t i = 0; i < count; i++) {
        size_t e = ifd + 2 + (size_t)i * 12;
        if (e + 12 > n)
            return 1;
        /* tag 0x0112, type SHORT (3), count 1: the value is in the first 2 bytes */
        if (get(t + e, 2, be) == 0x0112 && get(t + e + 2, 2, be) == 3) {
            uint32_t v = get(t + e + 8, 2, be);
            return v >= 1 && v <= 8 ? (int)v : 1;
        }
    }
    return 1;
}

int img_exif_orientation(const uint8_t *data, size_t len) {
    if (img_sniff(data, len) != IMG_JPEG)
        return 1;
    size_t at = 2;
    /* markers up to the first scan: FF xx, then a 2-byte length that counts itself */
    while (at + 4 <= len && data[at] == 0xff) {
        uint8_t marker = data[at + 1];
        size_t seg = (size_t)data[at + 2] << 8 | data[at + 3];
        if (marker == 0xda || seg < 2 || at + 2 + seg > len)
            return 1;
        if (marker == 0xe1 && seg >= 8 && memcmp(data + at + 4, "Exif\0\0", 6) == 0)
            return tiff_orientation(data + at + 10, seg - 8);
        at += 2 + seg;
    }
    return 1;
}

int img_orient(img_image *im, int orientation, char *msg, size_t cap) {
    if (orientation < 2 || orientation > 8)
        return 0;
    size_t c = im->c, w = im->w, h = im->h, bytes = w * h * c;
    uint8_t *out = malloc(bytes > 0 ? bytes : 1);
    if (out == NULL) {
        if (cap > 0)
            snprintf(msg, cap, "out of memory");
        return -1;
    }
    /* 5-8 transpose; then 2, 3, 6, 7 mirror the columns, 3, 4, 7, 8 the rows */
    int swap = orientation >= 5, flip_x = (0xcc >> orientation) & 1,
        flip_y = (0x198 >> orientation) & 1;
    size_t ow = swap ? h : w, oh = swap ? w : h;
    for (size_t y = 0; y < h; y++) {
        for (size_t x = 0; x < w; x++) {
            size_t ox = swap ? y : x, oy = swap ? x : y; /* where pixel (x, y) lands */
            ox = flip_x ? ow - 1 - ox : ox;
            oy = flip_y ? oh - 1 - oy : oy;
            memcpy(out + (oy * ow + ox) * c, im->pix + (y * w + x) * c, c);
        }
    }
    free(im->pix);
    im->pix = out;
    if (swap) {
        im->w = (uint32_t)h;
        im->h = (uint32_t)w;
    }
    return 0;
}
