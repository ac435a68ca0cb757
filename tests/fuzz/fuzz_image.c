/*
 * Fuzz target for the image codecs of the io-recordio plugin
 * (plugins/io-recordio/image.c: img_probe, img_decode over TurboJPEG and
 * libpng, then img_resize and img_encode of what decoded; image_exif.c:
 * img_exif_orientation, img_orient).
 *
 * Input: one control byte, then the encoded image. Control bits 0-1 pick the
 * channels asked of img_decode (0, 1, 3, 4); bits 2-7, when not 0, a DCT
 * scaling target of (bits 2-7) x (bits 2-7) pixels.
 *
 * Properties checked on every input: every call returns 0 or -1, never
 * crashes; -1 comes with a message and leaves no pixels; a decoded image has
 * the channels asked for (or 1, 3, 4 for 0) and, when the header probed, the
 * probed size (PNG, unscaled JPEG) or a size between the target and the probed
 * one (scaled JPEG); it resizes to 5 x 3 and survives a PNG round trip
 * exactly; the EXIF orientation is 1..8 and img_orient by it keeps the
 * pixel count (swapping w and h for 5..8). An image the header says needs more than FUZZ_MAX_BYTES
 * is only probed (and decoded when over IMG_MAX_BYTES, which is refused before allocating): a
 * 40-byte file may claim gigabytes, which libFuzzer's memory limit would report.
 *
 * Two builds, as the other fuzz targets: libFuzzer (MXK_FUZZ) and the
 * standalone ctest driver (MXK_FUZZ_STANDALONE) that runs seeds (tiny JPEGs
 * and PNGs made by img_encode), every truncation, every single-byte
 * replacement and fixed-seed random mutations through fuzz_driver.h.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_target.h"
#include "image.h"

#define FUZZ_MAX_BYTES ((uint64_t)1 << 24)

static img_codec *codec;

/** Reports a broken property and aborts (libFuzzer saves the input). */
static void fuzz_fail(const char *what, const char *msg) {
    fprintf(stderr, "fuzz_image: %s (message: %s)\n", what, msg);
    abort();
}

/** Checks a call's result: 0, or -1 with a message. */
static void check_rc(int rc, const char *msg, const char *what) {
    if (rc != 0 && rc != -1)
        fuzz_fail(what, "unexpected return value");
    if (rc == -1 && msg[0] == 0)
        fuzz_fail(what, "an error without a message");
}

/** Resizes `im` and round-trips it through PNG; both must succeed exactly. */
static void check_decoded(const img_image *im) {
    char msg[256] = "";
    img_image small, back;
    if (img_resize(im, 0, 0, im->w, im->h, 5, 3, IMG_BILINEAR, &small, msg, sizeof msg) != 0)
        fuzz_fail("resizing a decoded image failed", msg);
    uint8_t *png;
    size_t len;
    if (img_encode(codec, &small, IMG_PNG, 1, &png, &len, msg, sizeof msg) != 0)
        fuzz_fail("encoding a decoded image failed", msg);
    if (img_decode(codec, png, len, 0, 0, 0, &back, msg, sizeof msg) != 0)
        fuzz_fail("decoding our own PNG failed", msg);
    if (back.w != 5 || back.h != 3 || back.c != small.c || memcmp(back.pix, small.pix, 15 * back.c))
        fuzz_fail("the PNG round trip changed the pixels", "");
    img_free(&back);
    free(png);
    img_free(&small);
}

/** Runs one input; returns 0 when it decoded, else -1. */
static int run_one(const uint8_t *data, size_t size) {
    if (size == 0)
        return -1;
    if (codec == NULL && (codec = img_codec_new()) == NULL)
        fuzz_fail("img_codec_new failed", "");
    static const uint32_t chans[4] = {0, 1, 3, 4};
    uint32_t want = chans[data[0] & 3], target = data[0] >> 2;
    const uint8_t *img = data + 1;
    size_t n = size - 1;
    char msg[256] = "";
    img_format fmt;
    uint32_t pw = 0, ph = 0, pc = 0;
    int prc = img_probe(codec, img, n, &fmt, &pw, &ph, &pc, msg, sizeof msg);
    check_rc(prc, msg, "img_probe");
    if (prc == 0 && (pw == 0 || ph == 0 || (pc != 1 && pc != 3 && pc != 4)))
        fuzz_fail("img_probe gave an impossible image", "");
    int o = img_exif_orientation(img, n);
    if (o < 1 || o > 8)
        fuzz_fail("EXIF orientation out of range", "");
    uint64_t bytes = (uint64_t)pw * ph * 4;
    if (prc == 0 && bytes > FUZZ_MAX_BYTES && bytes / 4 * (want ? want : pc) <= IMG_MAX_BYTES)
        return -1;
    img_image out;
    msg[0] = 0;
    int rc = img_decode(codec, img, n, want, target, target, &out, msg, sizeof msg);
    check_rc(rc, msg, "img_decode");
    if (rc != 0) {
        if (out.pix != NULL)
            fuzz_fail("a failed decode left pixels", msg);
        return -1;
    }
    if (prc != 0)
        fuzz_fail("decoded what did not probe", "");
    if (out.c != (want ? want : pc))
        fuzz_fail("decoded to the wrong channel count", "");
    int scaled = fmt == IMG_JPEG && target > 0;
    if (!scaled && (out.w != pw || out.h != ph))
        fuzz_fail("decoded to a size other than the probed one", "");
    if (scaled && (out.w > pw || out.h > ph ||
                   ((out.w < target || out.h < target) && (out.w != pw || out.h != ph))))
        fuzz_fail("scaled below the target or above the image", "");
    check_decoded(&out);
    uint32_t w0 = out.w, h0 = out.h;
    if (img_orient(&out, o, msg, sizeof msg) != 0)
        fuzz_fail("img_orient failed", msg);
    if (o >= 5 ? (out.w != h0 || out.h != w0) : (out.w != w0 || out.h != h0))
        fuzz_fail("img_orient gave the wrong size", "");
    img_free(&out);
    return 0;
}

MXK_FUZZ_TARGET(run_one)

#ifdef MXK_FUZZ_STANDALONE

#include "fuzz_driver.h"

/** A seed: control byte `ctl`, then a w x h x c pattern encoded as fmt. */
static fuzz_seed make_seed(uint8_t ctl, uint32_t w, uint32_t h, uint32_t c, img_format fmt,
                           const char *label) {
    if (codec == NULL)
        codec = img_codec_new();
    img_image im = {malloc((size_t)w * h * c), w, h, c};
    for (size_t i = 0; i < (size_t)w * h * c; i++)
        im.pix[i] = (uint8_t)(i * 29 + i / 7);
    uint8_t *enc;
    size_t len;
    char msg[256];
    if (img_encode(codec, &im, fmt, fmt == IMG_JPEG ? 80 : 6, &enc, &len, msg, sizeof msg) != 0)
        fuzz_fail("cannot make a seed", msg);
    img_free(&im);
    fuzz_seed s = {malloc(len + 1), len + 1, label};
    s.p[0] = ctl;
    memcpy(s.p + 1, enc, len);
    free(enc);
    if (run_one(s.p, s.n) != 0)
        fuzz_fail("a valid seed failed", label);
    return s;
}

/** The seed `s` with an APP1 Exif segment (orientation 6) after its SOI. */
static fuzz_seed with_exif(fuzz_seed s, const char *label) {
    static const uint8_t app1[] = {0xff, 0xe1, 0, 34, 'E', 'x', 'i', 'f', 0,    0,    'I', 'I',
                                   '*',  0,    8, 0,  0,   0,   1,   0,   0x12, 0x01, 3,   0,
                                   1,    0,    0, 0,  6,   0,   0,   0,   0,    0,    0,   0};
    fuzz_seed e = {malloc(s.n + sizeof app1), s.n + sizeof app1, label};
    memcpy(e.p, s.p, 3); /* control byte, SOI */
    memcpy(e.p + 3, app1, sizeof app1);
    memcpy(e.p + 3 + sizeof app1, s.p + 3, s.n - 3);
    free(s.p);
    if (run_one(e.p, e.n) != 0)
        fuzz_fail("a valid seed failed", label);
    return e;
}

/** Inputs that decoded. */
static unsigned long n_ok;

/** Runs one input and counts it. */
static void drive(const uint8_t *p, size_t n) {
    n_ok += run_one(p, n) == 0;
}

/** Single-byte replacements: the control byte is flipped, image bytes set. */
static uint8_t replace_byte(size_t at, int r, uint8_t orig) {
    static const uint8_t vals[] = {0x00, 0x01, 0x08, 0x7f, 0x80, 0xc0, 0xd8, 0xff};
    return at == 0 ? (uint8_t)(orig ^ vals[r]) : vals[r];
}

/** The image target for the shared driver. */
static const fuzz_target target = {
    .run = drive,
    .seed_ext = ".img",
    .per_byte = 8,
    .replace = replace_byte,
    .random_runs = 2000,
    .slack = 0,
    .mutate = fuzz_mutate_after_control,
    .rng_init = 0x9e3779b97f4a7c15ull,
    .rng_per_seed = 1,
};

int main(int argc, char **argv) {
    fuzz_seed seeds[5] = {
        make_seed(0x02, 40, 24, 3, IMG_JPEG, "rgb-jpeg"),
        make_seed(0x0d, 9, 6, 1, IMG_JPEG, "gray-jpeg-scaled"),
        make_seed(0x00, 5, 4, 4, IMG_PNG, "rgba-png"),
        make_seed(0x03, 6, 3, 1, IMG_PNG, "gray-png"),
        with_exif(make_seed(0x00, 7, 5, 3, IMG_JPEG, ""), "exif-jpeg"),
    };
    int rc = fuzz_main(&target, argc, argv, seeds, 5);
    printf("fuzz_image: %lu inputs, %lu decoded, the rest rejected cleanly\n", fuzz_n_inputs, n_ok);
    img_codec_free(codec);
    return rc;
}
#endif /* MXK_FUZZ_STANDALONE */
