/*
 * The augmenter chain (image_aug.h). Upstream: src/io/image_aug_default.cc
 * (DefaultImageAugmenter::Process) and src/io/iter_image_recordio_2.cc
 * (ProcessImage).
 */
#include "image_aug.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** splitmix64's output function. */
static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void aug_rng_seed(aug_rng *r, uint64_t seed, uint64_t stream, uint64_t pos) {
    r->s = mix64(mix64(mix64(seed) ^ stream) ^ pos);
}

uint64_t aug_rng_next(aug_rng *r) {
    r->s += 0x9e3779b97f4a7c15ULL;
    return mix64(r->s);
}

float aug_rng_uniform(aug_rng *r) {
    return (float)(aug_rng_next(r) >> 40) * (1.0f / 16777216.0f);
}

int64_t aug_rng_int(aug_rng *r, int64_t lo, int64_t hi) {
    uint64_t range = (uint64_t)(hi - lo) + 1;
    return range == 0 ? (int64_t)aug_rng_next(r) : lo + (int64_t)(aug_rng_next(r) % range);
}

/** Standard normal times sigma (Box-Muller). */
static float rng_normal(aug_rng *r, float sigma) {
    double u1 = ((double)(aug_rng_next(r) >> 11) + 1.0) * (1.0 / 9007199254740992.0);
    double u2 = (double)(aug_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
    return (float)(sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2)) * sigma;
}

/** A byte from a real value: rounded to nearest (even on ties), saturated (cv::saturate_cast). */
static uint8_t sat_u8(float v) {
    long x = lrintf(v);
    return (uint8_t)(x < 0 ? 0 : x > 255 ? 255 : x);
}

/** Upstream's GetInterMethod: 9 cubic to enlarge, area to shrink, else linear; 10 random. */
static img_filter pick_filter(const aug_params *p, uint32_t ow, uint32_t oh, uint32_t nw,
                              uint32_t nh, aug_rng *rng) {
    int32_t m = p->inter_method;
    if (m == 9)
        m = nw > ow && nh > oh ? IMG_CUBIC : nw < ow && nh < oh ? IMG_AREA : IMG_BILINEAR;
    else if (m == 10)
        m = (int32_t)aug_rng_int(rng, 0, 4);
    return m >= 0 && m <= 4 ? (img_filter)m : IMG_BILINEAR; /* img_filter is cv's numbering */
}

/** The image a step works on: the decoded one (not owned) or one a step made. */
typedef struct work {
    img_image own;        /**< pixels made by a step (owned), or empty */
    const img_image *cur; /**< the current image: the source or &own */
} work;

/** Makes `next` (owned) the current image. */
static void work_set(work *wk, img_image *next) {
    img_free(&wk->own);
    wk->own = *next;
    wk->cur = &wk->own;
}

/** Replaces the current image by its region (x0, y0, cw, ch) resampled to w x h. */
static int resize_to(work *wk, uint32_t x0, uint32_t y0, uint32_t cw, uint32_t ch, uint32_t w,
                     uint32_t h, img_filter f, char *msg, size_t cap) {
    img_image out = {0};
    if (img_resize(wk->cur, x0, y0, cw, ch, w, h, f, &out, msg, cap) != 0)
        return -1;
    work_set(wk, &out);
    return 0;
}

/** Allocates a w x h x c image filled with `v`. */
static int img_filled(img_image *im, uint32_t w, uint32_t h, uint32_t c, int32_t v, char *msg,
                      size_t cap) {
    im->w = w, im->h = h, im->c = c;
    im->pix = malloc((size_t)w * h * c + 1);
    if (im->pix == NULL) {
        snprintf(msg, cap, "out of memory");
        return -1;
    }
    memset(im->pix, sat_u8((float)v), (size_t)w * h * c);
    return 0;
}

/**
 * cv::warpAffine(src, dst, M, (nw, nh), bilinear, BORDER_CONSTANT fill): each
 * output pixel samples the input at M^-1 (x, y), outside pixels being `fill`.
 */
static int warp_affine(work *wk, const float M[6], uint32_t nw, uint32_t nh, int32_t fill,
                       char *msg, size_t cap) {
    const img_image *im = wk->cur;
    img_image out;
    if (img_filled(&out, nw, nh, im->c, fill, msg, cap) != 0)
        return -1;
    double det = (double)M[0] * M[4] - (double)M[1] * M[3];
    if (det != 0.0) {
        double i0 = M[4] / det, i1 = -M[1] / det, i3 = -M[3] / det, i4 = M[0] / det;
        double i2 = -(i0 * M[2] + i1 * M[5]), i5 = -(i3 * M[2] + i4 * M[5]);
        float bg = (float)sat_u8((float)fill);
        for (uint32_t y = 0; y < nh; y++)
            for (uint32_t x = 0; x < nw; x++) {
                double sx = i0 * x + i1 * y + i2, sy = i3 * x + i4 * y + i5;
                double fx0 = floor(sx), fy0 = floor(sy);
                if (fx0 < -1 || fy0 < -1 || fx0 >= im->w || fy0 >= im->h)
                    continue;
                long x0 = (long)fx0, y0 = (long)fy0;
                float ax = (float)(sx - fx0), ay = (float)(sy - fy0);
                for (uint32_t k = 0; k < im->c; k++) {
                    float v[4];
                    for (int n = 0; n < 4; n++) {
                        long xx = x0 + (n & 1), yy = y0 + (n >> 1);
                        v[n] = xx < 0 || yy < 0 || xx >= (long)im->w || yy >= (long)im->h
                                   ? bg
                                   : im->pix[((size_t)yy * im->w + (size_t)xx) * im->c + k];
                    }
                    float top = v[0] + (v[1] - v[0]) * ax, bot = v[2] + (v[3] - v[2]) * ax;
                    out.pix[((size_t)y * nw + x) * im->c + k] = sat_u8(top + (bot - top) * ay);
                }
            }
    }
    work_set(wk, &out);
    return 0;
}

/**
 * The aspect ratio range of upstream's Process: [min_aspect_ratio,
 * max_aspect_ratio] when min_aspect_ratio is set, else [1 - max, 1 + max].
 */
static void aspect_range(const aug_params *p, float *lo, float *hi) {
    *lo = p->min_aspect_ratio > 0 ? p->min_aspect_ratio : 1 - p->max_aspect_ratio;
    *hi = p->min_aspect_ratio > 0 ? p->max_aspect_ratio : 1 + p->max_aspect_ratio;
}

/** The shear / rotate / random scale / aspect ratio step of upstream's Process (its M and size). */
static int random_warp(const aug_params *p, work *wk, aug_rng *rng, char *msg, size_t cap) {
    const img_image *im = wk->cur;
    float lo_ratio, hi_ratio, sh = 0;
    aspect_range(p, &lo_ratio, &hi_ratio);
    if (p->max_shear_ratio > 0) /* drawn only when asked, so other draws keep their order */
        sh = aug_rng_uniform(rng) * p->max_shear_ratio * 2 - p->max_shear_ratio;
    int angle = (int)aug_rng_int(rng, -p->max_rotate_angle, p->max_rotate_angle);
    float a = (float)cos(angle / 180.0 * M_PI), b = (float)sin(angle / 180.0 * M_PI);
    float scale = 1.0f, ratio = 1.0f;
    if (!p->random_resized_crop) {
        scale = aug_rng_uniform(rng) * (p->max_random_scale - p->min_random_scale) +
                p->min_random_scale;
        ratio = aug_rng_uniform(rng) * (hi_ratio - lo_ratio) + lo_ratio;
    }
    float hs = 2 * scale / (1 + ratio), ws = ratio * hs;
    float nw = scale * (float)im->w, nh = scale * (float)im->h;
    float M[6] = {hs * a - sh * b * ws, hs * b + sh * a * ws, 0, -b * ws, a * ws, 0};
    M[2] = (nw - (M[0] * (float)im->w + M[1] * (float)im->h)) / 2;
    M[5] = (nh - (M[3] * (float)im->w + M[4] * (float)im->h)) / 2;
    if (nw < 1 || nh < 1) {
        snprintf(msg, cap, "random scale %g leaves no pixel of a %u x %u image", scale,
                 (unsigned)im->w, (unsigned)im->h);
        return -1;
    }
    return warp_affine(wk, M, (uint32_t)nw, (uint32_t)nh, p->fill_value, msg, cap);
}

/** cv::copyMakeBorder with a constant: `pad` pixels of fill_value on each side. */
static int pad_image(work *wk, uint32_t pad, int32_t fill, char *msg, size_t cap) {
    const img_image *im = wk->cur;
    img_image out;
    if (img_filled(&out, im->w + 2 * pad, im->h + 2 * pad, im->c, fill, msg, cap) != 0)
        return -1;
    for (uint32_t y = 0; y < im->h; y++)
        memcpy(out.pix + (((size_t)(y + pad) * out.w) + pad) * im->c,
               im->pix + (size_t)y * im->w * im->c, (size_t)im->w * im->c);
    work_set(wk, &out);
    return 0;
}

/** Upstream's random_resized_crop: 10 tries of (area, ratio, swap); 1 when it cropped. */
static int random_resized_crop(const aug_params *p, work *wk, aug_rng *rng, char *msg, size_t cap) {
    float lo_ratio, hi_ratio;
    aspect_range(p, &lo_ratio, &hi_ratio);
    if (p->max_random_area == 1.0f && p->min_random_area == 1.0f && lo_ratio == 1.0f &&
        hi_ratio == 1.0f)
        return 0;
    uint32_t w = wk->cur->w, h = wk->cur->h;
    float area = (float)w * (float)h;
    for (int i = 0; i < 10; i++) {
        float ra =
            p->min_random_area + aug_rng_uniform(rng) * (p->max_random_area - p->min_random_area);
        float ratio = lo_ratio + aug_rng_uniform(rng) * (hi_ratio - lo_ratio);
        float target = area * ra;
        long ya = lroundf(sqrtf(target / ratio)), xa = lroundf(sqrtf(target * ratio));
        if (aug_rng_uniform(rng) > 0.5f) {
            long t = ya;
            ya = xa;
            xa = t;
        }
        if (ya >= 1 && xa >= 1 && ya <= (long)h && xa <= (long)w) {
            uint32_t y = (uint32_t)aug_rng_int(rng, 0, (long)h - ya);
            uint32_t x = (uint32_t)aug_rng_int(rng, 0, (long)w - xa);
            img_filter f = pick_filter(p, (uint32_t)xa, (uint32_t)ya, p->w, p->h, rng);
            return resize_to(wk, x, y, (uint32_t)xa, (uint32_t)ya, p->w, p->h, f, msg, cap) ? -1
                                                                                            : 1;
        }
    }
    return 0;
}

/**
 * Upstream's min/max_crop_size crop: a square of a random side in [min, max]
 * (random or centred position) resized to (h, w). Errors: "image of W x H is
 * smaller than max_crop_size S".
 */
static int crop_size_crop(const aug_params *p, work *wk, aug_rng *rng, char *msg, size_t cap) {
    const img_image *im = wk->cur;
    if (im->w < (uint32_t)p->max_crop_size || im->h < (uint32_t)p->max_crop_size) {
        snprintf(msg, cap, "image of %u x %u is smaller than max_crop_size %d", (unsigned)im->w,
                 (unsigned)im->h, (int)p->max_crop_size);
        return -1;
    }
    uint32_t size = (uint32_t)aug_rng_int(rng, p->min_crop_size, p->max_crop_size);
    uint32_t y = im->h - size, x = im->w - size;
    if (p->rand_crop) {
        y = (uint32_t)aug_rng_int(rng, 0, y);
        x = (uint32_t)aug_rng_int(rng, 0, x);
    } else {
        y /= 2;
        x /= 2;
    }
    img_filter f = pick_filter(p, size, size, p->w, p->h, rng);
    return resize_to(wk, x, y, size, size, p->w, p->h, f, msg, cap);
}

/**
 * The plain crop: upscales a side shorter than the output, then picks the
 * window (random or centred) at (*x0, *y0) of the current image.
 */
static int crop(const aug_params *p, work *wk, aug_rng *rng, uint32_t *x0, uint32_t *y0, char *msg,
                size_t cap) {
    const img_image *im = wk->cur;
    img_filter f = pick_filter(p, im->w, im->h, p->w, p->h, rng);
    if (im->h < p->h) {
        uint32_t nw = (uint32_t)((float)p->h / (float)im->h * (float)im->w);
        if (resize_to(wk, 0, 0, im->w, im->h, nw, p->h, f, msg, cap) != 0)
            return -1;
        im = wk->cur;
    }
    if (im->w < p->w) {
        uint32_t nh = (uint32_t)((float)p->w / (float)im->w * (float)im->h);
        if (resize_to(wk, 0, 0, im->w, im->h, p->w, nh, f, msg, cap) != 0)
            return -1;
        im = wk->cur;
    }
    if (im->h < p->h || im->w < p->w) {
        snprintf(msg, cap, "image of %u x %u is smaller than the %u x %u output", (unsigned)im->w,
                 (unsigned)im->h, (unsigned)p->w, (unsigned)p->h);
        return -1;
    }
    *y0 = im->h - p->h;
    *x0 = im->w - p->w;
    if (p->rand_crop) {
        *y0 = (uint32_t)aug_rng_int(rng, 0, *y0);
        *x0 = (uint32_t)aug_rng_int(rng, 0, *x0);
    } else {
        *y0 /= 2;
        *x0 /= 2;
    }
    return 0;
}

/** Gray level of pixel `px` (OpenCV's fixed-point RGB2GRAY on R, G, B; gray images: itself). */
static float gray_of(const uint8_t *px, uint32_t c) {
    if (c < 3)
        return px[0];
    return (float)((px[0] * 4899 + px[1] * 9617 + px[2] * 1868 + 8192) >> 14);
}

/** Brightness, contrast, saturation in a random order (upstream's colour jitter). */
static void color_jitter(const aug_params *p, img_image *im, aug_rng *rng) {
    float ab = 1 + p->brightness * (2 * aug_rng_uniform(rng) - 1);
    float ac = 1 + p->contrast * (2 * aug_rng_uniform(rng) - 1);
    float as = 1 + p->saturation * (2 * aug_rng_uniform(rng) - 1);
    int order[3] = {0, 1, 2};
    for (int i = 2; i > 0; i--) {
        int j = (int)aug_rng_int(rng, 0, i), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    uint32_t cc = im->c < 3 ? 1 : 3; /* colour channels */
    size_t n = (size_t)im->w * im->h;
    for (int o = 0; o < 3; o++) {
        if (order[o] == 0) {
            for (size_t i = 0; i < n; i++)
                for (uint32_t k = 0; k < cc; k++)
                    im->pix[i * im->c + k] = sat_u8(im->pix[i * im->c + k] * ab);
        } else if (order[o] == 1) {
            double sum = 0;
            for (size_t i = 0; i < n; i++)
                sum += gray_of(im->pix + i * im->c, im->c);
            float beta = (1 - ac) * (float)(sum / (double)(n ? n : 1));
            for (size_t i = 0; i < n; i++)
                for (uint32_t k = 0; k < cc; k++)
                    im->pix[i * im->c + k] = sat_u8(im->pix[i * im->c + k] * ac + beta);
        } else if (cc == 3) {
            for (size_t i = 0; i < n; i++) {
                float g = gray_of(im->pix + i * im->c, im->c);
                for (uint32_t k = 0; k < 3; k++)
                    im->pix[i * im->c + k] = sat_u8(im->pix[i * im->c + k] * as + g * (1 - as));
            }
        }
    }
}

void aug_rgb_to_hls(const uint8_t rgb[3], uint8_t hls[3]) {
    float r = rgb[0] * (1.f / 255.f), g = rgb[1] * (1.f / 255.f), b = rgb[2] * (1.f / 255.f);
    float vmax = fmaxf(r, fmaxf(g, b)), vmin = fminf(r, fminf(g, b)), diff = vmax - vmin;
    float h = 0, s = 0, l = (vmax + vmin) * 0.5f;
    if (diff > 1.1920929e-07f) { /* FLT_EPSILON, as OpenCV's RGB2HLS_f */
        s = l < 0.5f ? diff / (vmax + vmin) : diff / (2 - vmax - vmin);
        diff = 60.f / diff;
        h = vmax == r   ? (g - b) * diff
            : vmax == g ? (b - r) * diff + 120.f
                        : (r - g) * diff + 240.f;
        if (h < 0)
            h += 360.f;
    }
    hls[0] = sat_u8(h * 0.5f);
    hls[1] = sat_u8(l * 255.f);
    hls[2] = sat_u8(s * 255.f);
}

void aug_hls_to_rgb(const uint8_t hls[3], uint8_t rgb[3]) {
    /* OpenCV's HLS2RGB_f: the sector gives which of tab[] each of b, g, r takes */
    static const int sector_data[6][3] = {{1, 3, 0}, {1, 0, 2}, {3, 0, 1},
                                          {0, 2, 1}, {0, 1, 3}, {2, 1, 0}};
    float h = hls[0], l = hls[1] * (1.f / 255.f), s = hls[2] * (1.f / 255.f), bgr[3];
    if (s == 0) {
        bgr[0] = bgr[1] = bgr[2] = l;
    } else {
        float p2 = l <= 0.5f ? l * (1 + s) : l + s - l * s, p1 = 2 * l - p2;
        h *= 6.f / 180.f;
        while (h >= 6)
            h -= 6;
        int sector = (int)floorf(h);
        h -= (float)sector;
        float tab[4] = {p2, p1, p1 + (p2 - p1) * (1 - h), p1 + (p2 - p1) * h};
        for (int k = 0; k < 3; k++)
            bgr[k] = tab[sector_data[sector][k]];
    }
    for (int k = 0; k < 3; k++)
        rgb[k] = sat_u8(bgr[2 - k] * 255.f);
}

/**
 * Upstream's random_h/s/l: one offset per image for H, L and S (each the mean of
 * 1 and 4 uniform draws, to favour small values, as upstream), added in OpenCV's
 * HLS space with H clamped to [0, 180] and L, S to [0, 255]. Colour images only
 * (upstream's BGR2HLS needs 3 channels; alpha is kept).
 */
static void hls_jitter(const aug_params *p, img_image *im, aug_rng *rng) {
    float rv[3];
    for (int k = 0; k < 3; k++) {
        float u = aug_rng_uniform(rng);
        rv[k] = (u + 4 * aug_rng_uniform(rng)) / 5;
    }
    int add[3] = {(int)(rv[0] * (float)p->random_h * 2 - (float)p->random_h),
                  (int)(rv[2] * (float)p->random_l * 2 - (float)p->random_l),
                  (int)(rv[1] * (float)p->random_s * 2 - (float)p->random_s)};
    static const int limit[3] = {180, 255, 255};
    if (im->c < 3)
        return;
    size_t n = (size_t)im->w * im->h;
    for (size_t i = 0; i < n; i++) {
        uint8_t *px = im->pix + i * im->c, hls[3];
        aug_rgb_to_hls(px, hls);
        for (int k = 0; k < 3; k++) {
            int v = hls[k] + add[k];
            hls[k] = (uint8_t)(v < 0 ? 0 : v > limit[k] ? limit[k] : v);
        }
        aug_hls_to_rgb(hls, px);
    }
}

/** AlexNet-style PCA lighting noise with upstream's eigen vectors and values (R, G, B rows). */
static void pca_noise(const aug_params *p, img_image *im, aug_rng *rng) {
    static const float eig[3][3] = {{55.46f * -0.5675f, 4.794f * 0.7192f, 1.148f * 0.4009f},
                                    {55.46f * -0.5808f, 4.794f * -0.0045f, 1.148f * -0.8140f},
                                    {55.46f * -0.5836f, 4.794f * -0.6948f, 1.148f * 0.4203f}};
    float al[3];
    for (int k = 0; k < 3; k++)
        al[k] = rng_normal(rng, p->pca_noise);
    if (im->c < 3)
        return;
    float add[3];
    for (int k = 0; k < 3; k++)
        add[k] = eig[k][0] * al[0] + eig[k][1] * al[1] + eig[k][2] * al[2];
    size_t n = (size_t)im->w * im->h;
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            int v = (int)(im->pix[i * im->c + k] + add[k]); /* upstream: int += float */
            im->pix[i * im->c + k] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
}

/**
 * ProcessImage: the h x w window at (x0, y0) of `im`, HWC -> CHW, mirrored or
 * not, raw (uint8) or (pixel - mean) * (cs / std) + il / std (float32).
 */
static void write_out(const aug_params *p, const img_image *im, uint32_t x0, uint32_t y0,
                      int mirror, float cs, float il, void *out) {
    size_t plane = (size_t)p->h * p->w, c = im->c;
    for (uint32_t k = 0; k < p->c; k++)
        for (uint32_t y = 0; y < p->h; y++) {
            const uint8_t *s = im->pix + ((size_t)(y0 + y) * im->w + x0) * c + k;
            size_t o = k * plane + (size_t)y * p->w;
            ptrdiff_t step = mirror ? -1 : 1;
            if (mirror)
                o += p->w - 1;
            if (p->out_uint8) {
                uint8_t *d = (uint8_t *)out + o;
                for (uint32_t x = 0; x < p->w; x++, d += step)
                    *d = s[x * c];
            } else {
                float *d = (float *)out + o, m = p->mean[k];
                float mult = cs / p->std[k], bias = il / p->std[k]; /* RGBA_MULT, RGBA_BIAS */
                const float *mi = p->mean_img ? p->mean_img + k * plane + (size_t)y * p->w : NULL;
                for (uint32_t x = 0; x < p->w; x++, d += step)
                    *d = ((float)s[x * c] - (mi ? mi[x] : m)) * mult + bias;
            }
        }
}

void aug_decode_hint(const aug_params *p, uint32_t w, uint32_t h, uint32_t *min_w,
                     uint32_t *min_h) {
    *min_w = *min_h = 0;
    if (p->resize <= 0 || w == 0 || h == 0)
        return;
    uint64_t r = (uint64_t)p->resize; /* upstream: int arithmetic, resize * rows / cols */
    *min_w = h > w ? (uint32_t)r : (uint32_t)(r * w / h);
    *min_h = h > w ? (uint32_t)(r * h / w) : (uint32_t)r;
}

int aug_process(const aug_params *p, const img_image *src, uint32_t orig_w, uint32_t orig_h,
                aug_rng *rng, void *out, char *msg, size_t cap) {
    work wk = {{0}, src};
    int rc = -1;
    uint32_t nw, nh, x0 = 0, y0 = 0;
    aug_decode_hint(p, orig_w, orig_h, &nw, &nh);
    img_filter f = pick_filter(p, orig_w, orig_h, nw, nh, rng);
    if (nw != 0 && (nw != src->w || nh != src->h) &&
        resize_to(&wk, 0, 0, src->w, src->h, nw, nh, f, msg, cap) != 0)
        goto done;
    float lo_ratio, hi_ratio;
    aspect_range(p, &lo_ratio, &hi_ratio);
    if ((p->max_rotate_angle > 0 || p->max_shear_ratio > 0 || p->max_random_scale != 1.0f ||
         p->min_random_scale != 1.0f ||
         (!p->random_resized_crop && (lo_ratio != 1.0f || hi_ratio != 1.0f))) &&
        random_warp(p, &wk, rng, msg, cap) != 0)
        goto done;
    if (p->pad > 0 && pad_image(&wk, (uint32_t)p->pad, p->fill_value, msg, cap) != 0)
        goto done;
    int cropped = p->random_resized_crop ? random_resized_crop(p, &wk, rng, msg, cap) : 0;
    if (!p->random_resized_crop && (p->min_crop_size != -1 || p->max_crop_size != -1))
        cropped = crop_size_crop(p, &wk, rng, msg, cap) == 0 ? 1 : -1;
    if (cropped < 0 || (!cropped && crop(p, &wk, rng, &x0, &y0, msg, cap) != 0))
        goto done;
    int jitter = p->brightness > 0 || p->contrast > 0 || p->saturation > 0;
    int hls = p->random_h != 0 || p->random_s != 0 || p->random_l != 0;
    if (jitter || hls || p->pca_noise > 0) { /* on a copy of the window */
        if ((wk.cur->w != p->w || wk.cur->h != p->h) &&
            resize_to(&wk, x0, y0, p->w, p->h, p->w, p->h, IMG_NEAREST, msg, cap) != 0)
            goto done;
        if (wk.cur != &wk.own && resize_to(&wk, 0, 0, p->w, p->h, p->w, p->h, IMG_NEAREST, msg,
                                           cap) != 0) /* still the source: copy it */
            goto done;
        x0 = y0 = 0;
        if (jitter)
            color_jitter(p, &wk.own, rng);
        if (hls)
            hls_jitter(p, &wk.own, rng);
        if (p->pca_noise > 0)
            pca_noise(p, &wk.own, rng);
    }
    int mirror = (p->rand_mirror && aug_rng_uniform(rng) < 0.5f) || p->mirror;
    float mc = p->max_random_contrast, mi = p->max_random_illumination, cs = p->scale, il = 0;
    if (!p->out_uint8 && (mc > 0 || mi > 0)) {
        cs = (aug_rng_uniform(rng) * mc * 2 - mc + 1) * p->scale;
        il = (aug_rng_uniform(rng) * mi * 2 - mi) * p->scale;
    }
    write_out(p, wk.cur, x0, y0, mirror, cs, il, out);
    rc = 0;
done:
    img_free(&wk.own);
    return rc;
}
