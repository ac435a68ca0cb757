/*
 * Image codecs and resampling (image.h): JPEG with TurboJPEG, PNG with libpng,
 * resampling with stb_image_resize. What upstream MXNet does with OpenCV in
 * src/io/image_io.cc (cv::imdecode), src/io/image_aug_default.cc (cv::resize)
 * and tools/im2rec.py (cv::imencode).
 */
#include "image.h"
#include "io_msg.h"

#include <png.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#include <stb_image_resize.h>

struct img_codec {
    tjhandle dec, enc;
};

img_codec *img_codec_new(void) {
    img_codec *cx = calloc(1, sizeof *cx);
    if (cx == NULL)
        return NULL;
    cx->dec = tjInitDecompress();
    cx->enc = tjInitCompress();
    if (cx->dec == NULL || cx->enc == NULL) {
        img_codec_free(cx);
        return NULL;
    }
    return cx;
}

void img_codec_free(img_codec *cx) {
    if (cx == NULL)
        return;
    if (cx->dec != NULL)
        tjDestroy(cx->dec);
    if (cx->enc != NULL)
        tjDestroy(cx->enc);
    free(cx);
}

void img_free(img_image *im) {
    if (im == NULL)
        return;
    free(im->pix);
    memset(im, 0, sizeof *im);
}

img_format img_sniff(const uint8_t *data, size_t len) {
    static const uint8_t png_sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (len >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff)
        return IMG_JPEG;
    if (len >= 8 && memcmp(data, png_sig, 8) == 0)
        return IMG_PNG;
    return IMG_UNKNOWN;
}

/** The "not a JPEG or PNG image" error, with the first bytes in hex. */
static int not_an_image(const uint8_t *data, size_t len, char *msg, size_t cap) {
    if (len == 0)
        return io_fail(msg, cap, "not a JPEG or PNG image (empty)");
    char hex[16] = "";
    size_t n = len < 4 ? len : 4, at = 0;
    for (size_t i = 0; i < n; i++)
        at += (size_t)snprintf(hex + at, sizeof hex - at, i ? " %02X" : "%02X", data[i]);
    return io_fail(msg, cap, "not a JPEG or PNG image (first bytes %s)", hex);
}

/** Allocates im->pix for w x h x c, refusing more than IMG_MAX_BYTES. */
static int alloc_image(img_image *im, uint32_t w, uint32_t h, uint32_t c, char *msg, size_t cap) {
    uint64_t bytes = (uint64_t)w * h * c;
    if (w == 0 || h == 0 || bytes > IMG_MAX_BYTES)
        return io_fail(msg, cap, "image of %u x %u x %u is too large", w, h, c);
    im->pix = malloc((size_t)bytes);
    if (im->pix == NULL)
        return io_fail(msg, cap, "out of memory");
    im->w = w;
    im->h = h;
    im->c = c;
    return 0;
}

/* ---- JPEG (TurboJPEG) ------------------------------------------------------ */

/**
 * Fails with "corrupt JPEG: <TurboJPEG's message>" and replaces the decompressor:
 * TurboJPEG 2.1 can leave a handle that failed inside a marker (e.g. a cut DHT
 * segment) failing every later image with the same message.
 */
static int jpeg_fail(img_codec *cx, char *msg, size_t cap) {
    io_fail(msg, cap, "corrupt JPEG: %s", tjGetErrorStr2(cx->dec));
    tjDestroy(cx->dec);
    cx->dec = tjInitDecompress(); /* NULL: the next call fails with "Invalid handle" */
    return -1;
}

/** Size and TurboJPEG colour space (TJCS_*) from the JPEG header. */
static int jpeg_header(img_codec *cx, const uint8_t *data, size_t len, int *w, int *h, int *cs,
                       char *msg, size_t cap) {
    int subsamp = -1;
    *w = *h = 0;
    if (tjDecompressHeader3(cx->dec, data, (unsigned long)len, w, h, &subsamp, cs) != 0)
        return jpeg_fail(cx, msg, cap);
    /* TurboJPEG 2.1 "succeeds" on a file cut in its first marker, setting nothing */
    if (*w < 1 || *h < 1)
        return io_fail(msg, cap, "corrupt JPEG: no frame header");
    return 0;
}

/** A JPEG's own channel count: 1 for grayscale, 3 for colour (YCbCr, RGB, CMYK, YCCK). */
static uint32_t jpeg_channels(int cs) {
    return cs == TJCS_GRAY ? 1 : 3;
}

/**
 * Converts n CMYK pixels, as libjpeg returns them (Adobe's inverted values),
 * to c = 1, 3 or 4 channels as OpenCV does (icvCvt_CMYK2BGR_8u_C4C3R and
 * icvCvt_CMYK2Gray_8u_C4C1R, modules/imgcodecs/src/utils.cpp): each colour
 * k - (255 - v) * k / 256, gray with the fixed-point 0.299/0.587/0.114.
 */
static void cmyk_convert(const uint8_t *cmyk, size_t n, uint32_t c, uint8_t *out) {
    for (size_t i = 0; i < n; i++, cmyk += 4, out += c) {
        int k = cmyk[3], rgb[3];
        for (int j = 0; j < 3; j++)
            rgb[j] = k - ((255 - cmyk[j]) * k >> 8);
        if (c == 1) {
            out[0] = (uint8_t)((rgb[0] * 4899 + rgb[1] * 9617 + rgb[2] * 1868 + 8192) >> 14);
            continue;
        }
        for (int j = 0; j < 3; j++)
            out[j] = (uint8_t)rgb[j];
        if (c == 4)
            out[3] = 255;
    }
}

/**
 * The smallest TurboJPEG scaling factor <= 1 whose result is at least
 * min_w x min_h (1/1 when none is smaller, or when min_w or min_h is 0).
 */
static tjscalingfactor jpeg_scale(int w, int h, uint32_t min_w, uint32_t min_h) {
    tjscalingfactor best = {1, 1};
    if (min_w == 0 || min_h == 0)
        return best;
    int n = 0;
    const tjscalingfactor *sf = tjGetScalingFactors(&n);
    for (int i = 0; i < n; i++) {
        if (sf[i].num > sf[i].denom)
            continue;
        int sw = TJSCALED(w, sf[i]), sh = TJSCALED(h, sf[i]);
        if ((uint32_t)sw >= min_w && (uint32_t)sh >= min_h && sw < TJSCALED(w, best))
            best = sf[i];
    }
    return best;
}

/**
 * TurboJPEG reports libjpeg's warnings as errors after decoding the whole image.
 * "Corrupt JPEG data: N extraneous bytes before marker" leaves the pixels
 * intact (OpenCV and PIL decode such files silently), so it is not an error;
 * every other warning (premature end of file or of a data segment, a bad
 * Huffman code) means damaged pixels and is one.
 */
static int jpeg_warning_is_harmless(tjhandle h) {
    return tjGetErrorCode(h) == TJERR_WARNING && strstr(tjGetErrorStr2(h), "extraneous bytes");
}

static int jpeg_decode(img_codec *cx, const uint8_t *data, size_t len, uint32_t channels,
                       uint32_t min_w, uint32_t min_h, img_image *out, char *msg, size_t cap) {
    int w, h, cs = -1;
    if (jpeg_header(cx, data, len, &w, &h, &cs, msg, cap) != 0)
        return -1;
    uint32_t c = channels != 0 ? channels : jpeg_channels(cs);
    tjscalingfactor sf = jpeg_scale(w, h, min_w, min_h);
    int sw = TJSCALED(w, sf), sh = TJSCALED(h, sf);
    if (alloc_image(out, (uint32_t)sw, (uint32_t)sh, c, msg, cap) != 0)
        return -1;
    /* libjpeg converts CMYK / YCCK to CMYK only: decode that, then convert */
    int cmyk = cs == TJCS_CMYK || cs == TJCS_YCCK;
    img_image raw = *out;
    if (cmyk && alloc_image(&raw, (uint32_t)sw, (uint32_t)sh, 4, msg, cap) != 0) {
        img_free(out);
        return -1;
    }
    int pf = cmyk ? TJPF_CMYK : c == 1 ? TJPF_GRAY : c == 3 ? TJPF_RGB : TJPF_RGBA;
    int rc = tjDecompress2(cx->dec, data, (unsigned long)len, raw.pix, sw, sw * (int)raw.c, sh, pf,
                           TJFLAG_LIMITSCANS);
    if (rc != 0 && !jpeg_warning_is_harmless(cx->dec)) {
        if (cmyk)
            img_free(&raw);
        img_free(out);
        return jpeg_fail(cx, msg, cap);
    }
    if (cmyk) {
        cmyk_convert(raw.pix, (size_t)sw * sh, c, out->pix);
        img_free(&raw);
    }
    return 0;
}

static int jpeg_encode(img_codec *cx, const img_image *in, int quality, uint8_t **out, size_t *len,
                       char *msg, size_t cap) {
    if (quality < 1 || quality > 100)
        return io_fail(msg, cap, "JPEG quality %d is not in [1, 100]", quality);
    if (in->c != 1 && in->c != 3)
        return io_fail(msg, cap, "cannot encode a %u-channel image as JPEG", in->c);
    int subsamp = in->c == 1 ? TJSAMP_GRAY : TJSAMP_420;
    unsigned long size = tjBufSize((int)in->w, (int)in->h, subsamp);
    uint8_t *buf = size == (unsigned long)-1 ? NULL : malloc(size);
    if (buf == NULL)
        return io_fail(msg, cap, "out of memory");
    if (tjCompress2(cx->enc, in->pix, (int)in->w, (int)(in->w * in->c), (int)in->h,
                    in->c == 1 ? TJPF_GRAY : TJPF_RGB, &buf, &size, subsamp, quality,
                    TJFLAG_NOREALLOC) != 0) {
        free(buf);
        return io_fail(msg, cap, "cannot encode JPEG: %s", tjGetErrorStr2(cx->enc));
    }
    *out = buf;
    *len = size;
    return 0;
}

/* ---- PNG (libpng) ---------------------------------------------------------- */

/** State shared with libpng's callbacks; in memory, so it survives longjmp. */
typedef struct png_io {
    const uint8_t *data; /**< reading: the file; writing: unused */
    size_t len, pos;     /**< reading: size and position; writing: bytes written */
    uint8_t *buf;        /**< writing: the output (malloc'd), of capacity bufcap */
    size_t bufcap;
    png_bytep *rows; /**< row pointers of the image being read or written */
    char err[160];   /**< libpng's error message, or ours */
    int ours;        /**< err is ours (not the file's fault): no "corrupt PNG: " */
} png_io;

/** Stops libpng with one of our own messages (too large, out of memory). */
static void png_fail_ours(png_structp png, const char *text) {
    ((png_io *)png_get_error_ptr(png))->ours = 1;
    png_error(png, text);
}

static void png_on_error(png_structp png, png_const_charp text) {
    png_io *io = png_get_error_ptr(png);
    snprintf(io->err, sizeof io->err, "%s", text);
    png_longjmp(png, 1);
}

static void png_on_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text; /* warnings (e.g. a bad ancillary chunk) leave the pixels intact */
}

static void png_on_read(png_structp png, png_bytep dst, size_t n) {
    png_io *io = png_get_io_ptr(png);
    if (n > io->len - io->pos)
        png_error(png, "truncated file");
    memcpy(dst, io->data + io->pos, n);
    io->pos += n;
}

/** Channels of the file's own pixels: 4 with alpha (or tRNS), 1 for gray, else 3. */
static uint32_t png_file_channels(png_structp png, png_infop info) {
    int ct = png_get_color_type(png, info);
    if ((ct & PNG_COLOR_MASK_ALPHA) || png_get_valid(png, info, PNG_INFO_tRNS))
        return 4;
    return ct == PNG_COLOR_TYPE_GRAY ? 1 : 3;
}

/**
 * Sets libpng's transforms for `c` output channels: palette and low-bit gray
 * expanded, 16 bits stripped to 8 (the high byte, as OpenCV), gray <-> RGB
 * (RGB to gray at 0.299/0.587/0.114, as OpenCV's PNG decoder), alpha (or tRNS)
 * kept for 4 channels, dropped otherwise, opaque alpha added when missing.
 */
static void png_set_transforms(png_structp png, png_infop info, uint32_t c) {
    int ct = png_get_color_type(png, info);
    int has_trns = png_get_valid(png, info, PNG_INFO_tRNS) != 0;
    if (ct == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(png);
    if (ct == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8)
        png_set_expand_gray_1_2_4_to_8(png);
    png_set_strip_16(png);
    if (c == 4 && has_trns)
        png_set_tRNS_to_alpha(png);
    if (c != 4) /* also the alpha that png_set_palette_to_rgb makes of a tRNS */
        png_set_strip_alpha(png);
    if (c == 1 && (ct & PNG_COLOR_MASK_COLOR))
        png_set_rgb_to_gray_fixed(png, 1, 29900, 58700);
    if (c != 1 && !(ct & PNG_COLOR_MASK_COLOR))
        png_set_gray_to_rgb(png);
    if (c == 4 && !(ct & PNG_COLOR_MASK_ALPHA) && !has_trns)
        png_set_add_alpha(png, 0xff, PNG_FILLER_AFTER);
    png_set_interlace_handling(png);
}

/**
 * Reads a PNG's header, and with `out` its pixels as `channels` channels (0:
 * the file's own). Returns 0 or -1 with the message.
 */
static int png_read(const uint8_t *data, size_t len, uint32_t channels, uint32_t *w, uint32_t *h,
                    uint32_t *c, img_image *out, char *msg, size_t cap) {
    png_io io = {.data = data, .len = len};
    png_structp png =
        png_create_read_struct(PNG_LIBPNG_VER_STRING, &io, png_on_error, png_on_warning);
    png_infop info = png == NULL ? NULL : png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_read_struct(&png, NULL, NULL);
        return io_fail(msg, cap, "out of memory");
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(io.rows);
        if (out != NULL)
            img_free(out);
        return io.ours ? io_fail(msg, cap, "%s", io.err)
                       : io_fail(msg, cap, "corrupt PNG: %s", io.err);
    }
    png_set_read_fn(png, &io, png_on_read);
    png_set_user_limits(png, PNG_UINT_31_MAX, PNG_UINT_31_MAX); /* IMG_MAX_BYTES decides */
    png_read_info(png, info);
    *w = png_get_image_width(png, info);
    *h = png_get_image_height(png, info);
    *c = channels != 0 ? channels : png_file_channels(png, info);
    if (out != NULL) {
        png_set_transforms(png, info, *c);
        png_read_update_info(png, info);
        char amsg[96];
        if (alloc_image(out, *w, *h, *c, amsg, sizeof amsg) != 0)
            png_fail_ours(png, amsg);
        if (png_get_rowbytes(png, info) != (size_t)*w * *c)
            png_error(png, "unexpected row size after transforms");
        io.rows = malloc(sizeof *io.rows * *h);
        if (io.rows == NULL)
            png_fail_ours(png, "out of memory");
        for (uint32_t y = 0; y < *h; y++)
            io.rows[y] = out->pix + (size_t)y * *w * *c;
        png_read_image(png, io.rows);
        png_read_end(png, NULL);
    }
    png_destroy_read_struct(&png, &info, NULL);
    free(io.rows);
    return 0;
}

static void png_on_write(png_structp png, png_bytep src, size_t n) {
    png_io *io = png_get_io_ptr(png);
    if (n > io->bufcap - io->len) {
        size_t ncap = io->bufcap * 2 + n;
        uint8_t *nb = realloc(io->buf, ncap);
        if (nb == NULL)
            png_error(png, "out of memory");
        io->buf = nb;
        io->bufcap = ncap;
    }
    memcpy(io->buf + io->len, src, n);
    io->len += n;
}

static void png_on_flush(png_structp png) {
    (void)png;
}

static int png_encode(const img_image *in, int level, uint8_t **out, size_t *len, char *msg,
                      size_t cap) {
    if (level < 0 || level > 9)
        return io_fail(msg, cap, "PNG compression level %d is not in [0, 9]", level);
    if (in->c != 1 && in->c != 3 && in->c != 4)
        return io_fail(msg, cap, "cannot encode a %u-channel image as PNG", in->c);
    png_io io = {0};
    png_structp png =
        png_create_write_struct(PNG_LIBPNG_VER_STRING, &io, png_on_error, png_on_warning);
    png_infop info = png == NULL ? NULL : png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_write_struct(&png, NULL);
        return io_fail(msg, cap, "out of memory");
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(io.rows);
        free(io.buf);
        return io_fail(msg, cap, "cannot encode PNG: %s", io.err);
    }
    png_set_write_fn(png, &io, png_on_write, png_on_flush);
    png_set_compression_level(png, level);
    int ct = in->c == 1   ? PNG_COLOR_TYPE_GRAY
             : in->c == 3 ? PNG_COLOR_TYPE_RGB
                          : PNG_COLOR_TYPE_RGBA;
    png_set_IHDR(png, info, in->w, in->h, 8, ct, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    io.rows = malloc(sizeof *io.rows * in->h);
    if (io.rows == NULL)
        png_error(png, "out of memory");
    for (uint32_t y = 0; y < in->h; y++)
        io.rows[y] = in->pix + (size_t)y * in->w * in->c;
    png_write_info(png, info);
    png_write_image(png, io.rows);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(io.rows);
    *out = io.buf;
    *len = io.len;
    return 0;
}

/* ---- Dispatch -------------------------------------------------------------- */

int img_probe(img_codec *cx, const uint8_t *data, size_t len, img_format *fmt, uint32_t *w,
              uint32_t *h, uint32_t *c, char *msg, size_t cap) {
    *fmt = img_sniff(data, len);
    if (*fmt == IMG_JPEG) {
        int jw, jh, cs;
        if (jpeg_header(cx, data, len, &jw, &jh, &cs, msg, cap) != 0)
            return -1;
        *w = (uint32_t)jw;
        *h = (uint32_t)jh;
        *c = jpeg_channels(cs);
        return 0;
    }
    if (*fmt == IMG_PNG)
        return png_read(data, len, 0, w, h, c, NULL, msg, cap);
    return not_an_image(data, len, msg, cap);
}

int img_decode(img_codec *cx, const uint8_t *data, size_t len, uint32_t channels, uint32_t min_w,
               uint32_t min_h, img_image *out, char *msg, size_t cap) {
    memset(out, 0, sizeof *out);
    if (channels != 0 && channels != 1 && channels != 3 && channels != 4)
        return io_fail(msg, cap, "cannot decode to %u channels (0, 1, 3 or 4)", channels);
    img_format fmt = img_sniff(data, len);
    if (fmt == IMG_JPEG)
        return jpeg_decode(cx, data, len, channels, min_w, min_h, out, msg, cap);
    uint32_t w = 0, h = 0, c = 0;
    if (fmt == IMG_PNG)
        return png_read(data, len, channels, &w, &h, &c, out, msg, cap);
    return not_an_image(data, len, msg, cap);
}

int img_encode(img_codec *cx, const img_image *in, img_format fmt, int quality, uint8_t **out,
               size_t *len, char *msg, size_t cap) {
    *out = NULL;
    *len = 0;
    if (in->w == 0 || in->h == 0 || (uint64_t)in->w * in->h * in->c > IMG_MAX_BYTES)
        return io_fail(msg, cap, "cannot encode an image of %u x %u x %u", in->w, in->h, in->c);
    if (fmt == IMG_JPEG)
        return jpeg_encode(cx, in, quality, out, len, msg, cap);
    if (fmt == IMG_PNG)
        return png_encode(in, quality, out, len, msg, cap);
    return io_fail(msg, cap, "unknown image format %d", (int)fmt);
}

/* ---- Resampling ------------------------------------------------------------ */

/** stb_image_resize's filter for `f` (see img_resize in image.h). */
static stbir_filter stb_filter(img_filter f) {
    switch (f) {
    case IMG_AREA:
        return STBIR_FILTER_BOX;
    case IMG_CUBIC:
    case IMG_LANCZOS:
        return STBIR_FILTER_CATMULLROM;
    default:
        return STBIR_FILTER_TRIANGLE;
    }
}

int img_resize(const img_image *in, uint32_t x0, uint32_t y0, uint32_t cw, uint32_t ch, uint32_t w,
               uint32_t h, img_filter filter, img_image *out, char *msg, size_t cap) {
    memset(out, 0, sizeof *out);
    if (cw == 0 || ch == 0 || (uint64_t)x0 + cw > in->w || (uint64_t)y0 + ch > in->h)
        return io_fail(msg, cap, "resize region (%u, %u) + %u x %u lies outside the %u x %u image",
                       x0, y0, cw, ch, in->w, in->h);
    if (w == 0 || h == 0 || (uint64_t)w * h * in->c > IMG_MAX_BYTES)
        return io_fail(msg, cap, "cannot resize to %u x %u", w, h);
    if (filter < IMG_NEAREST || filter > IMG_LANCZOS)
        return io_fail(msg, cap, "unknown resampling filter %d", (int)filter);
    if (alloc_image(out, w, h, in->c, msg, cap) != 0)
        return -1;
    size_t c = in->c, istride = (size_t)in->w * c, ostride = (size_t)w * c;
    const uint8_t *src = in->pix + (size_t)y0 * istride + (size_t)x0 * c;
    if (cw == w && ch == h) {
        for (uint32_t y = 0; y < h; y++)
            memcpy(out->pix + y * ostride, src + y * istride, ostride);
        return 0;
    }
    if (filter == IMG_NEAREST) {
        /* OpenCV's INTER_NEAREST: source index floor(dst * src_size / dst_size) */
        for (uint32_t y = 0; y < h; y++) {
            const uint8_t *srow = src + (size_t)((uint64_t)y * ch / h) * istride;
            uint8_t *drow = out->pix + y * ostride;
            for (uint32_t x = 0; x < w; x++)
                memcpy(drow + x * c, srow + (size_t)((uint64_t)x * cw / w) * c, c);
        }
        return 0;
    }
    stbir_filter f = stb_filter(filter);
    if (!stbir_resize(src, (int)cw, (int)ch, (int)istride, out->pix, (int)w, (int)h, (int)ostride,
                      STBIR_TYPE_UINT8, (int)c, STBIR_ALPHA_CHANNEL_NONE, 0, STBIR_EDGE_CLAMP,
                      STBIR_EDGE_CLAMP, f, f, STBIR_COLORSPACE_LINEAR, NULL)) {
        img_free(out);
        return io_fail(msg, cap, "out of memory");
    }
    return 0;
}
