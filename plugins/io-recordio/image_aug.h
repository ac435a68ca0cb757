/*
 * ImageRecordIter's augmenter chain and output conversion: upstream MXNet's
 * DefaultImageAugmenter::Process (src/io/image_aug_default.cc) followed by
 * ImageRecordIOParser2::ProcessImage (src/io/iter_image_recordio_2.cc: mirror,
 * mean / std / scale, HWC -> CHW), as one pure function of (decoded image,
 * parameters, random generator). Images are RGB (image.h); upstream works on
 * OpenCV's BGR and swaps to RGB when writing the output, so the output channel
 * order (R, G, B[, A]) and mean_r/g/b/a apply to the same channels as upstream.
 *
 * Deliberate differences from upstream, all documented in
 * plugins/io-recordio/README.md:
 * - Randomness: an aug_rng seeded by (seed, epoch, position in the epoch) per
 *   record, so the output does not depend on the thread count (upstream keeps one
 *   std::mt19937 per OpenMP thread, seeded (i + 1) * 111, so its draws depend on
 *   which thread takes which record). The draws are therefore not upstream's.
 * - Resampling: stb_image_resize (image.h's img_resize) instead of cv::resize,
 *   and the affine warp (rotation, random scale, aspect ratio) samples
 *   bilinearly in floating point whatever inter_method says, where cv::warpAffine
 *   uses the method in fixed point: pixels differ by a few levels.
 * - Colour jitter (brightness, contrast, saturation) computes gray with the
 *   ITU-R 601 weights on R, G, B; upstream applies CV_RGB2GRAY to its BGR image,
 *   i.e. weighs blue by 0.299 and red by 0.114. It changes the colour channels
 *   only (upstream also scales alpha in brightness/contrast and fails on 4
 *   channels in saturation); on one channel, saturation is a no-op.
 * - PCA noise applies to the R, G, B channels (skipped for gray images, where
 *   upstream reads past its pixels).
 * Thread safety: reentrant; each call owns its rng.
 */
#ifndef MXK_IO_IMAGE_AUG_H
#define MXK_IO_IMAGE_AUG_H

#include <stdint.h>

#include "image.h"

/** A small deterministic generator (splitmix64): one per record. */
typedef struct aug_rng {
    uint64_t s;
} aug_rng;

/** Seeds `r` from (seed, stream, pos) so that different triples give independent streams. */
void aug_rng_seed(aug_rng *r, uint64_t seed, uint64_t stream, uint64_t pos);
/** Next 64 random bits. */
uint64_t aug_rng_next(aug_rng *r);
/** Uniform float in [0, 1) (24 bits). */
float aug_rng_uniform(aug_rng *r);
/** Uniform integer in [lo, hi] (lo <= hi). */
int64_t aug_rng_int(aug_rng *r, int64_t lo, int64_t hi);

/** Parameters of the chain (ImageRecordIter's attributes, checked by the caller). */
typedef struct aug_params {
    uint32_t c, h, w;  /**< data_shape (C, H, W); c in {1, 3, 4} */
    int32_t resize;    /**< short side before anything else; <= 0: off */
    int32_t rand_crop; /**< random instead of centre crop */
    int32_t random_resized_crop;
    int32_t rand_mirror; /**< mirror with probability 1/2 */
    float min_random_scale, max_random_scale;
    float max_aspect_ratio; /**< aspect ratio in [1 - m, 1 + m], or [min_aspect_ratio, m] */
    float min_aspect_ratio; /**< > 0: the range's low end (upstream's optional); 0: unset */
    float max_shear_ratio;  /**< shear (x, y) -> (x + m y, y), m in [-v, v], in the warp */
    int32_t min_crop_size, max_crop_size; /**< square crop of a random size in [min, max]
                                             resized to (h, w); -1, -1: off */
    int32_t random_h, random_s, random_l; /**< HLS jitter: added to H (0-180), S, L (0-255) */
    float min_random_area, max_random_area;
    int32_t max_rotate_angle;
    float brightness, contrast, saturation, pca_noise;
    int32_t inter_method; /**< upstream's numbers: 0 NN, 1 linear, 2 cubic, 3 area, 4 Lanczos, 9
                             auto, 10 random */
    int32_t fill_value;   /**< padding / warp border value */
    int32_t pad;          /**< border added on each side before cropping */
    int32_t out_uint8;    /**< 1: raw bytes out (no normalisation, as upstream's uint8) */
    float mean[4];        /**< mean_r, mean_g, mean_b, mean_a */
    float std[4];         /**< std_r, std_g, std_b, std_a (non-zero) */
    float scale;          /**< multiplier after mean and std */
    int32_t mirror;       /**< always mirror (upstream's `mirror`) */
    float max_random_contrast, max_random_illumination; /**< ImageNormalizeParam's */
    const float *mean_img; /**< c*h*w CHW mean image replacing `mean`, or NULL */
} aug_params;

/**
 * OpenCV's 8-bit RGB -> HLS (cv::cvtColor COLOR_RGB2HLS): H in [0, 180) (degrees
 * / 2), L and S in [0, 255], each rounded as cv::saturate_cast. Upstream's
 * random_h/s/l jitter goes through it and back (aug_hls_to_rgb).
 */
void aug_rgb_to_hls(const uint8_t rgb[3], uint8_t hls[3]);

/** OpenCV's 8-bit HLS -> RGB (COLOR_HLS2RGB), the inverse of aug_rgb_to_hls. */
void aug_hls_to_rgb(const uint8_t hls[3], uint8_t rgb[3]);

/**
 * The size to ask img_decode for (its min_w, min_h) for an image of w x h: with
 * `resize`, the size the short side resize produces (DCT scaling to at least
 * that size cannot change what the resize computes but its resampling); else
 * 0, 0 (full size).
 */
void aug_decode_hint(const aug_params *p, uint32_t w, uint32_t h, uint32_t *min_w, uint32_t *min_h);

/**
 * Runs the chain on `src` (p->c channels; decoded from an image of orig_w x
 * orig_h, possibly smaller through DCT scaling) and writes one example into
 * `out`: c*h*w float32 (normalised) or uint8 (out_uint8), CHW. The order and
 * semantics are upstream's: resize (short side to `resize`, from the original
 * size), affine warp (rotate, random scale, aspect ratio; border fill_value),
 * pad, random resized crop (10 tries, else the plain crop) or the random-size
 * square crop (min/max_crop_size) resized to (h, w), else upscale when smaller
 * than (h, w) and crop (random or centre), brightness / contrast / saturation in
 * random order, HLS jitter (random_h/s/l), PCA noise, mirror, then (pixel - mean) * c * scale / std
 * + i * scale / std, with c = 1 + U(-max_random_contrast, max_random_contrast) and i =
 * U(-max_random_illumination, max_random_illumination) (upstream's RGBA_MULT and RGBA_BIAS; c = 1,
 * i = 0 without them), the mean being mean_img at the pixel's unmirrored position when given
 * (upstream). Errors (-1, message in msg): img_resize's, "out of memory".
 */
int aug_process(const aug_params *p, const img_image *src, uint32_t orig_w, uint32_t orig_h,
                aug_rng *rng, void *out, char *msg, size_t cap);

#endif /* MXK_IO_IMAGE_AUG_H */
