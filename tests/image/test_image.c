/*
 * The image codecs (plugins/io-recordio/image.h) on synthetic images: encode /
 * decode round trips (PNG exact; JPEG of a constant gray image exact, since its
 * only coefficient, the DC, is a multiple of the quantiser), resampling against
 * closed forms, and the exact error for each kind of bad input, including sizes
 * refused before anything is allocated (ASan in CI would abort on the huge
 * allocation otherwise). Pixels against PIL and djpeg: image_pil.py.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "testing.h"

static img_codec *cx;
static char msg[256];

/** Checks that `call` fails with exactly `want` as its message. */
#define CHECK_ERR(call, want)                                                                      \
    do {                                                                                           \
        msg[0] = 0;                                                                                \
        int rc_ = (call);                                                                          \
        if (rc_ != -1 || strcmp(msg, want) != 0) {                                                 \
            fprintf(stderr, "%s:%d: %s gave %d \"%s\", want \"%s\"\n", __FILE__, __LINE__, #call,  \
                    rc_, msg, want);                                                               \
            mxk_t_failed_checks++;                                                                 \
        }                                                                                          \
    } while (0)

/** A w x h x c image of a smooth pattern (owned: img_free). */
static img_image pattern(uint32_t w, uint32_t h, uint32_t c) {
    img_image im = {malloc((size_t)w * h * c), w, h, c};
    for (uint32_t y = 0; y < h; y++)
        for (uint32_t x = 0; x < w; x++)
            for (uint32_t k = 0; k < c; k++)
                im.pix[((size_t)y * w + x) * c + k] = (uint8_t)(x * 5 + y * 3 + k * 60);
    return im;
}

/** Encodes im as fmt, or fails the test and returns NULL. */
static uint8_t *encode(const img_image *im, img_format fmt, int q, size_t *len) {
    uint8_t *out = NULL;
    if (img_encode(cx, im, fmt, q, &out, len, msg, sizeof msg) != 0) {
        fprintf(stderr, "encode: %s\n", msg);
        mxk_t_failed_checks++;
    }
    return out;
}

static int same(const img_image *a, const img_image *b) {
    return a->w == b->w && a->h == b->h && a->c == b->c &&
           memcmp(a->pix, b->pix, (size_t)a->w * a->h * a->c) == 0;
}

static void test_png_round_trip(void) {
    for (uint32_t c = 1; c <= 4; c++) {
        if (c == 2)
            continue;
        img_image im = pattern(37, 23, c), back;
        size_t len;
        uint8_t *png = encode(&im, IMG_PNG, c == 3 ? 9 : 0, &len);
        CHECK(img_sniff(png, len) == IMG_PNG);
        img_format fmt;
        uint32_t w, h, pc;
        CHECK(img_probe(cx, png, len, &fmt, &w, &h, &pc, msg, sizeof msg) == 0);
        CHECK(fmt == IMG_PNG && w == 37 && h == 23 && pc == c);
        CHECK(img_decode(cx, png, len, 0, 0, 0, &back, msg, sizeof msg) == 0);
        CHECK(same(&im, &back));
        img_free(&back);
        CHECK(img_decode(cx, png, len, c, 10, 10, &back, msg, sizeof msg) == 0); /* full size */
        CHECK(same(&im, &back));
        img_free(&back);
        free(png);
        img_free(&im);
    }
}

static void test_jpeg_constant_exact(void) {
    img_image im = pattern(40, 24, 1), back;
    memset(im.pix, 200, 40 * 24);
    size_t len;
    uint8_t *jpg = encode(&im, IMG_JPEG, 95, &len);
    CHECK(img_sniff(jpg, len) == IMG_JPEG);
    CHECK(img_decode(cx, jpg, len, 0, 0, 0, &back, msg, sizeof msg) == 0);
    CHECK(same(&im, &back));
    img_free(&back);
    /* gray to RGB replicates; 1/8 scaling of 40 x 24 gives 5 x 3 */
    CHECK(img_decode(cx, jpg, len, 3, 5, 3, &back, msg, sizeof msg) == 0);
    CHECK(back.w == 5 && back.h == 3 && back.c == 3);
    int all200 = 1;
    for (size_t i = 0; i < 5 * 3 * 3; i++)
        all200 &= back.pix[i] == 200;
    CHECK(all200);
    img_free(&back);
    /* the smallest k/8 >= 11 x 3 is 3/8: 15 x 9 */
    CHECK(img_decode(cx, jpg, len, 1, 11, 3, &back, msg, sizeof msg) == 0);
    CHECK(back.w == 15 && back.h == 9 && back.c == 1);
    img_free(&back);
    free(jpg);
    img_free(&im);
}

static void test_resize_closed_forms(void) {
    img_image im = pattern(8, 6, 3), out;
    /* a region of the output's size is a copy */
    CHECK(img_resize(&im, 2, 1, 4, 3, 4, 3, IMG_CUBIC, &out, msg, sizeof msg) == 0);
    for (uint32_t y = 0; y < 3; y++)
        CHECK(memcmp(out.pix + y * 12, im.pix + ((y + 1) * 8 + 2) * 3, 12) == 0);
    img_free(&out);
    /* nearest: source floor(x * cw / w) */
    CHECK(img_resize(&im, 0, 0, 8, 6, 3, 4, IMG_NEAREST, &out, msg, sizeof msg) == 0);
    int ok = 1;
    for (uint32_t y = 0; y < 4; y++)
        for (uint32_t x = 0; x < 3; x++)
            ok &= memcmp(out.pix + (y * 3 + x) * 3, im.pix + ((y * 6 / 4) * 8 + x * 8 / 3) * 3,
                         3) == 0;
    CHECK(ok);
    img_free(&out);
    /* area at 1/2: 2x2 block means (exact here: the pattern is linear, sums even) */
    memset(im.pix, 0, 8 * 6 * 3);
    for (uint32_t i = 0; i < 8 * 6; i++)
        im.pix[i * 3] = (uint8_t)(i % 2 ? 100 : 50);
    CHECK(img_resize(&im, 0, 0, 8, 6, 4, 3, IMG_AREA, &out, msg, sizeof msg) == 0);
    ok = 1;
    for (uint32_t i = 0; i < 4 * 3; i++)
        ok &= out.pix[i * 3] == 75 && out.pix[i * 3 + 1] == 0;
    CHECK(ok);
    img_free(&out);
    /* stb_image_resize 0.97's assert on the weight sum, off (image_stb.c): 7 -> 5 */
    CHECK(img_resize(&im, 0, 0, 7, 3, 5, 3, IMG_BILINEAR, &out, msg, sizeof msg) == 0);
    img_free(&out);
    img_image wide = pattern(300, 2, 1); /* and 300 -> 224, a usual crop */
    CHECK(img_resize(&wide, 0, 0, 300, 2, 224, 2, IMG_BILINEAR, &out, msg, sizeof msg) == 0);
    img_free(&out);
    img_free(&wide);
    /* every filter keeps a constant image constant */
    memset(im.pix, 77, 8 * 6 * 3);
    for (int f = IMG_NEAREST; f <= IMG_LANCZOS; f++) {
        CHECK(img_resize(&im, 1, 1, 5, 4, 13, 2, (img_filter)f, &out, msg, sizeof msg) == 0);
        ok = out.w == 13 && out.h == 2 && out.c == 3;
        for (uint32_t i = 0; ok && i < 13 * 2 * 3; i++)
            ok &= out.pix[i] == 77;
        CHECK(ok);
        img_free(&out);
    }
    img_free(&im);
}

/** Big-endian 32 bits at p. */
static void put_be32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}

/** The PNG CRC-32 (ISO 3309) of n bytes. */
static uint32_t crc32_of(const uint8_t *p, size_t n) {
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
    }
    return ~c;
}

static void test_decode_errors(void) {
    img_image out;
    const uint8_t junk[] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc};
    CHECK_ERR(img_decode(cx, junk, 0, 0, 0, 0, &out, msg, sizeof msg),
              "not a JPEG or PNG image (empty)");
    CHECK_ERR(img_decode(cx, junk, sizeof junk, 0, 0, 0, &out, msg, sizeof msg),
              "not a JPEG or PNG image (first bytes 12 34 56 78)");
    CHECK_ERR(img_decode(cx, junk, 2, 0, 0, 0, &out, msg, sizeof msg),
              "not a JPEG or PNG image (first bytes 12 34)");
    CHECK(out.pix == NULL);

    img_image im = pattern(64, 48, 3);
    size_t jlen, plen;
    uint8_t *jpg = encode(&im, IMG_JPEG, 90, &jlen), *png = encode(&im, IMG_PNG, 6, &plen);
    CHECK_ERR(img_decode(cx, jpg, jlen, 2, 0, 0, &out, msg, sizeof msg),
              "cannot decode to 2 channels (0, 1, 3 or 4)");
    CHECK_ERR(img_decode(cx, jpg, jlen / 2, 3, 0, 0, &out, msg, sizeof msg),
              "corrupt JPEG: Premature end of JPEG file");
    CHECK(out.pix == NULL);
    CHECK_ERR(img_decode(cx, jpg, 3, 3, 0, 0, &out, msg, sizeof msg),
              "corrupt JPEG: no frame header");
    CHECK_ERR(img_decode(cx, jpg, 40, 3, 0, 0, &out, msg, sizeof msg),
              "corrupt JPEG: no frame header");
    /* a file cut inside its DHT segment, then a whole one: the codec recovers */
    size_t dht = 2;
    while (dht + 4 < jlen && !(jpg[dht] == 0xff && jpg[dht + 1] == 0xc4))
        dht += 2 + ((size_t)jpg[dht + 2] << 8 | jpg[dht + 3]);
    CHECK(dht + 40 < jlen);
    CHECK_ERR(img_decode(cx, jpg, dht + 10, 3, 0, 0, &out, msg, sizeof msg),
              "corrupt JPEG: Bogus Huffman table definition");
    CHECK(img_decode(cx, jpg, jlen, 3, 0, 0, &out, msg, sizeof msg) == 0);
    img_free(&out);
    CHECK_ERR(img_decode(cx, png, plen / 2, 3, 0, 0, &out, msg, sizeof msg),
              "corrupt PNG: truncated file");
    CHECK_ERR(img_decode(cx, png, 20, 3, 0, 0, &out, msg, sizeof msg),
              "corrupt PNG: truncated file");
    uint8_t *bad = malloc(plen);
    memcpy(bad, png, plen);
    bad[29] ^= 1; /* the IHDR CRC */
    CHECK_ERR(img_decode(cx, bad, plen, 3, 0, 0, &out, msg, sizeof msg),
              "corrupt PNG: IHDR: CRC error");
    free(bad);

    /* sizes refused from the header, before allocating */
    uint8_t *big = malloc(plen);
    memcpy(big, png, plen);
    put_be32(big + 16, 100000);
    put_be32(big + 20, 100000);
    put_be32(big + 29, crc32_of(big + 12, 17));
    uint32_t w, h, c;
    img_format fmt;
    CHECK(img_probe(cx, big, plen, &fmt, &w, &h, &c, msg, sizeof msg) == 0);
    CHECK(fmt == IMG_PNG && w == 100000 && h == 100000 && c == 3);
    CHECK_ERR(img_decode(cx, big, plen, 0, 0, 0, &out, msg, sizeof msg),
              "image of 100000 x 100000 x 3 is too large");
    CHECK_ERR(img_decode(cx, big, plen, 1, 0, 0, &out, msg, sizeof msg),
              "image of 100000 x 100000 x 1 is too large");
    free(big);
    big = malloc(jlen);
    memcpy(big, jpg, jlen);
    size_t sof = 2;
    while (sof + 9 < jlen && !(big[sof] == 0xff && big[sof + 1] == 0xc0))
        sof += 2 + ((size_t)big[sof + 2] << 8 | big[sof + 3]);
    CHECK(sof + 9 < jlen);
    big[sof + 5] = big[sof + 7] = 0xff; /* 65500 x 65500, libjpeg's largest */
    big[sof + 6] = big[sof + 8] = 0xdc;
    CHECK_ERR(img_decode(cx, big, jlen, 0, 0, 0, &out, msg, sizeof msg),
              "image of 65500 x 65500 x 3 is too large");
    free(big);
    free(jpg);
    free(png);
    img_free(&im);
}

static void test_encode_and_resize_errors(void) {
    img_image im = pattern(4, 4, 4), two = pattern(4, 4, 2), out;
    uint8_t *enc = (uint8_t *)1;
    size_t len = 1;
    CHECK_ERR(img_encode(cx, &im, IMG_JPEG, 90, &enc, &len, msg, sizeof msg),
              "cannot encode a 4-channel image as JPEG");
    CHECK(enc == NULL && len == 0);
    CHECK_ERR(img_encode(cx, &two, IMG_PNG, 3, &enc, &len, msg, sizeof msg),
              "cannot encode a 2-channel image as PNG");
    im.c = 3;
    CHECK_ERR(img_encode(cx, &im, IMG_JPEG, 0, &enc, &len, msg, sizeof msg),
              "JPEG quality 0 is not in [1, 100]");
    CHECK_ERR(img_encode(cx, &im, IMG_JPEG, 101, &enc, &len, msg, sizeof msg),
              "JPEG quality 101 is not in [1, 100]");
    CHECK_ERR(img_encode(cx, &im, IMG_PNG, 10, &enc, &len, msg, sizeof msg),
              "PNG compression level 10 is not in [0, 9]");
    CHECK_ERR(img_encode(cx, &im, IMG_UNKNOWN, 3, &enc, &len, msg, sizeof msg),
              "unknown image format 0");
    img_image empty = {im.pix, 0, 4, 3};
    CHECK_ERR(img_encode(cx, &empty, IMG_PNG, 3, &enc, &len, msg, sizeof msg),
              "cannot encode an image of 0 x 4 x 3");

    CHECK_ERR(img_resize(&im, 1, 0, 4, 4, 2, 2, IMG_BILINEAR, &out, msg, sizeof msg),
              "resize region (1, 0) + 4 x 4 lies outside the 4 x 4 image");
    CHECK_ERR(img_resize(&im, 0, 0, 0, 4, 2, 2, IMG_BILINEAR, &out, msg, sizeof msg),
              "resize region (0, 0) + 0 x 4 lies outside the 4 x 4 image");
    CHECK_ERR(img_resize(&im, 0, 0, 4, 4, 0, 2, IMG_BILINEAR, &out, msg, sizeof msg),
              "cannot resize to 0 x 2");
    CHECK_ERR(img_resize(&im, 0, 0, 4, 4, 65536, 65536, IMG_BILINEAR, &out, msg, sizeof msg),
              "cannot resize to 65536 x 65536");
    CHECK_ERR(img_resize(&im, 0, 0, 4, 4, 2, 2, (img_filter)5, &out, msg, sizeof msg),
              "unknown resampling filter 5");
    CHECK(out.pix == NULL);
    img_free(&im);
    img_free(&two);
}

static void test_exif(void) {
    /* SOI, APP1 "Exif" with a little-endian TIFF whose IFD0 holds orientation 6 */
    uint8_t jpg[] = {0xff, 0xd8, 0xff, 0xe1, 0, 34, 'E', 'x', 'i',  'f',  0,    0,   'I', 'I',
                     '*',  0,    8,    0,    0, 0,  1,   0,   0x12, 0x01, 3,    0,   1,   0,
                     0,    0,    6,    0,    0, 0,  0,   0,   0,    0,    0xff, 0xd9};
    CHECK_EQ_INT(img_exif_orientation(jpg, sizeof jpg), 6);
    CHECK_EQ_INT(img_exif_orientation(jpg, 30), 1); /* segment cut: not read */
    jpg[30] = 9;                                    /* out of range */
    CHECK_EQ_INT(img_exif_orientation(jpg, sizeof jpg), 1);
    jpg[30] = 8;
    jpg[16] = 200; /* IFD0 past the segment */
    CHECK_EQ_INT(img_exif_orientation(jpg, sizeof jpg), 1);
    jpg[16] = 8;
    jpg[5] = 200; /* segment longer than the file */
    CHECK_EQ_INT(img_exif_orientation(jpg, sizeof jpg), 1);
    CHECK_EQ_INT(img_exif_orientation(jpg, 0), 1);
    /* rotate 90 clockwise (6): row r of the 3 x 2 input becomes column 1 - r */
    img_image im = pattern(3, 2, 1);
    const uint8_t a[6] = {im.pix[0], im.pix[1], im.pix[2], im.pix[3], im.pix[4], im.pix[5]};
    CHECK(img_orient(&im, 6, msg, sizeof msg) == 0);
    const uint8_t want6[6] = {a[3], a[0], a[4], a[1], a[5], a[2]};
    CHECK(im.w == 2 && im.h == 3 && memcmp(im.pix, want6, 6) == 0);
    CHECK(img_orient(&im, 8, msg, sizeof msg) == 0); /* and back */
    CHECK(im.w == 3 && im.h == 2 && memcmp(im.pix, a, 6) == 0);
    CHECK(img_orient(&im, 1, msg, sizeof msg) == 0 && memcmp(im.pix, a, 6) == 0);
    img_free(&im);
}

int main(void) {
    cx = img_codec_new();
    MXK_RUN(test_png_round_trip);
    MXK_RUN(test_jpeg_constant_exact);
    MXK_RUN(test_resize_closed_forms);
    MXK_RUN(test_decode_errors);
    MXK_RUN(test_encode_and_resize_errors);
    MXK_RUN(test_exif);
    img_codec_free(cx);
    return MXK_TEST_EXIT();
}
