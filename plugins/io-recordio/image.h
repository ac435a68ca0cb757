/*
 * Image codecs and resampling for the RecordIO image pipeline: what upstream
 * MXNet does with OpenCV's cv::imdecode / cv::imencode / cv::resize
 * (src/io/image_io.cc, src/io/image_aug_default.cc, tools/im2rec.py,
 * python/mxnet/recordio.py's pack_img / unpack_img), here with the libraries
 * Debian ships: JPEG with libjpeg-turbo's TurboJPEG API (turbojpeg.h), PNG with
 * libpng, resampling with stb_image_resize (libstb-dev's header, compiled in by
 * image_stb.c). No kernel dependencies: the io-recordio plugin
 * (ImageRecordIter), libmxk (mxk_recordio_pack_img / unpack_img) and the `mxk
 * im2rec` command each compile image.c, image_exif.c and image_stb.c
 * (MXK_IMAGE_SOURCES).
 *
 * Pixels are 8-bit, interleaved HWC, rows packed (stride w*c), channels in RGB
 * order (1: gray, 3: RGB, 4: RGBA). Upstream's OpenCV arrays are BGR; the files
 * on disk are the same standard JPEG/PNG either way.
 *
 * Errors: functions returning int give 0 on success and -1 on error with a
 * message written into the caller's buffer (msg, cap; always NUL-terminated
 * when cap > 0). Thread safety: an img_codec is used by one thread at a time
 * (each worker thread owns one); everything else is reentrant.
 */
#ifndef MXK_IO_IMAGE_H
#define MXK_IO_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/** An 8-bit image: h rows of w pixels of c channels, interleaved, rows packed. */
typedef struct img_image {
    uint8_t *pix; /**< h*w*c bytes, owned (img_free) */
    uint32_t w, h, c;
} img_image;

/**
 * The most bytes (w*h*c) an image may have: 2^31 - 1, because TurboJPEG and
 * stb_image_resize take int sizes and strides. img_decode refuses a larger
 * image from its header, before allocating anything; img_resize and img_encode
 * refuse larger sizes too. (OpenCV's own limit, CV_IO_MAX_IMAGE_PIXELS, is 2^30
 * pixels.)
 */
#define IMG_MAX_BYTES ((uint64_t)INT32_MAX)

/** Encoded formats. */
typedef enum img_format { IMG_UNKNOWN = 0, IMG_JPEG = 1, IMG_PNG = 2 } img_format;

/**
 * Resampling filters, numbered as MXNet's inter_method (cv::InterpolationFlags
 * INTER_NEAREST .. INTER_LANCZOS4): 0 nearest, 1 bilinear, 2 bicubic, 3 area,
 * 4 Lanczos. See img_resize for how each maps onto stb_image_resize.
 */
typedef enum img_filter {
    IMG_NEAREST = 0,
    IMG_BILINEAR = 1,
    IMG_CUBIC = 2,
    IMG_AREA = 3,
    IMG_LANCZOS = 4
} img_filter;

/** Per-thread codec state (TurboJPEG's compressor and decompressor handles). */
typedef struct img_codec img_codec;

/** Creates a codec; NULL when out of memory or TurboJPEG cannot initialise. */
img_codec *img_codec_new(void);

/** Frees a codec (NULL: no-op). */
void img_codec_free(img_codec *cx);

/** Frees an image's pixels and zeroes it (NULL or empty: no-op). */
void img_free(img_image *im);

/** The format of an encoded buffer from its signature (JPEG: FF D8 FF; PNG: 8 bytes). */
img_format img_sniff(const uint8_t *data, size_t len);

/**
 * Reads the format, size and channel count of an encoded JPEG or PNG without
 * decoding the pixels; *c is what img_decode gives for channels 0 (1 gray, 3
 * colour, 4 with alpha). Errors: "not a JPEG or PNG image (first bytes XX XX
 * XX XX)", "corrupt JPEG: <tjGetErrorStr2>" ("corrupt JPEG: no frame header"
 * for a file cut before its size), "corrupt PNG: <libpng message>".
 */
int img_probe(img_codec *cx, const uint8_t *data, size_t len, img_format *fmt, uint32_t *w,
              uint32_t *h, uint32_t *c, char *msg, size_t cap);

/**
 * Decodes a JPEG or PNG into *out (allocated; the caller frees it with img_free).
 * channels: 1 (gray: JPEG luma / PNG converted with libpng's rgb_to_gray at the
 * ITU-R 601 weights), 3 (RGB; gray expanded), 4 (RGBA), or 0 (the file's own:
 * 1 for gray, 3 for colour, 4 with alpha). 16-bit PNGs are stripped to 8 bits,
 * palettes expanded, alpha dropped unless 4 channels are asked for.
 * min_w, min_h: when both are > 0 and the image is a JPEG, decode with
 * TurboJPEG's DCT-domain scaling at the smallest of its scaling factors whose
 * result is at least min_w x min_h (MXNet decodes full size and resizes; this
 * is the same picture, faster); 0, 0: full size. PNG always decodes full size.
 * JPEG pixels are libjpeg-turbo's accurate integer IDCT with fancy upsampling
 * (the defaults of TurboJPEG, djpeg, PIL and OpenCV: identical pixels); gray
 * from a colour JPEG is its luma (Y) channel, as libjpeg's JCS_GRAYSCALE
 * output that OpenCV's IMREAD_GRAYSCALE also takes; CMYK and YCCK JPEGs are
 * converted to RGB or gray with OpenCV's formulas. PNG pixels equal OpenCV's
 * too (both are libpng's transforms). A libjpeg warning other than
 * "extraneous bytes before marker" (which leaves the pixels intact) is an
 * error: OpenCV would return a partly gray image for a truncated file. A
 * progressive JPEG of more than 500 scans is refused (TJFLAG_LIMITSCANS: such
 * files take quadratic time, a known denial of service; real ones have about
 * 10). EXIF
 * orientation is not applied, as MXNet's own cv::imdecode (ImageRecordIter,
 * mx.image.imdecode) does not; see img_exif_orientation.
 * Errors name the library's complaint: "corrupt JPEG: <tjGetErrorStr2>",
 * "corrupt PNG: <libpng message>" (e.g. "corrupt PNG: truncated file"),
 * "not a JPEG or PNG image (first bytes XX XX XX XX)" ("(empty)" for len 0),
 * "image of W x H x C is too large" (over IMG_MAX_BYTES), "cannot decode to C
 * channels (0, 1, 3 or 4)", "out of memory". *out is zeroed on error. A
 * truncated or damaged file is an error, never a crash.
 */
int img_decode(img_codec *cx, const uint8_t *data, size_t len, uint32_t channels, uint32_t min_w,
               uint32_t min_h, img_image *out, char *msg, size_t cap);

/**
 * Encodes `in` (c = 1, 3 or 4; 4 only for PNG) as `fmt` into *out (malloc'd,
 * the caller frees it) of *len bytes. quality: JPEG 1..100 (4:2:0 subsampling
 * for colour, as OpenCV's default), PNG compression level 0..9 (upstream
 * im2rec's --quality doubles as both). *out is NULL and *len 0 on error.
 * Errors: "JPEG quality Q is not in [1, 100]", "PNG compression level Q is
 * not in [0, 9]", "cannot encode a C-channel image as JPEG" (or "as PNG"),
 * "cannot encode an image of W x H x C" (empty or over IMG_MAX_BYTES),
 * "unknown image format F", "cannot encode JPEG: <tjGetErrorStr2>",
 * "cannot encode PNG: <libpng message>" ("cannot encode PNG: out of memory"),
 * "out of memory".
 */
int img_encode(img_codec *cx, const img_image *in, img_format fmt, int quality, uint8_t **out,
               size_t *len, char *msg, size_t cap);

/**
 * Resamples the region [x0, x0+cw) x [y0, y0+ch) of `in` to w x h with `filter`
 * into *out (allocated; same channel count). The whole image is x0 = y0 = 0,
 * cw = in->w, ch = in->h. A region of the output's size is a plain copy.
 * Errors: "resize region ... lies outside the W x H image", "cannot resize to
 * W x H", "out of memory".
 */
int img_resize(const img_image *in, uint32_t x0, uint32_t y0, uint32_t cw, uint32_t ch, uint32_t w,
               uint32_t h, img_filter filter, img_image *out, char *msg, size_t cap);

/**
 * The EXIF orientation of a JPEG (TIFF tag 0x0112 in IFD0 of its APP1 "Exif"
 * segment): 1 (upright) to 8, or 1 when the file has none, is not a JPEG or
 * the segment cannot be read (never an error; reads only within len). Upstream
 * im2rec.py reads images with cv2.imread, which applies it
 * (modules/imgcodecs/src/loadsave.cpp ApplyExifOrientation); MXNet's
 * ImageRecordIter decodes with its own OpenCV build, which does not.
 */
int img_exif_orientation(const uint8_t *data, size_t len);

/**
 * Turns *im upright for EXIF orientation `orientation`, as OpenCV's
 * ApplyExifOrientation: 2 mirror, 3 rotate 180, 4 flip vertically, 5
 * transpose, 6 rotate 90 clockwise, 7 transverse, 8 rotate 90 counter-
 * clockwise (5-8 swap w and h); 1 or any other value: unchanged. Replaces
 * im->pix (the old pixels are freed). Errors: "out of memory" (im unchanged).
 */
int img_orient(img_image *im, int orientation, char *msg, size_t cap);

#endif /* MXK_IO_IMAGE_H */
