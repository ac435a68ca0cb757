/*
 * ImageRecordIter: MXNet 1.x's image iterator over RecordIO files
 * (src/io/iter_image_recordio_2.cc, ImageRecordIOParser2 + ImageRecordIter2;
 * parameters of ImageRecParserParam, ImageRecordParam, BatchParam,
 * ImageNormalizeParam and DefaultImageAugmentParam in src/io/image_iter_common.h
 * and src/io/image_aug_default.cc).
 *
 * - Records: with path_imgidx, the part's record offsets come from the index,
 *   partitioned by count as dmlc's IndexedRecordIOSplitter; without it, the part
 *   is the byte range dmlc's RecordIOSplitter gives, read sequentially (the
 *   record count is learnt at the end of the first epoch), or with shuffle=True
 *   scanned once at create for its offsets (image_index.h). An epoch visits the
 *   records in file order, or with shuffle=True in a permutation drawn anew each
 *   epoch from (seed, epoch).
 * - Each record is an IRHeader (python/mxnet/recordio.py) and a JPEG or PNG.
 *   Labels: from path_imglist by the header's id when given, else the header's
 *   label (flag 0, label_width must be 1) or its flag labels (flag must equal
 *   label_width), as upstream. The batch index of an example is the header's id.
 * - A batch: the prefetch thread reads the batch's records, then the
 *   preprocess_threads workers (image_pool.h, the prefetch thread being one of
 *   them) decode (image.h; JPEG with DCT scaling to the resize target) and
 *   augment (image_aug.h) each record into its row of the batch.
 * - Determinism: record k of epoch e draws its augmentation from
 *   aug_rng(seed, e, k), so the batches are the same for any thread count
 *   (upstream's per-thread generators make them depend on the scheduling).
 * - Corrupt image (probe or decode fails): an error at next naming the file, the
 *   record id and the byte offset of the record; with skip_corrupt=True or the
 *   environment MXK_IMAGE_SKIP_CORRUPT=1 the record is left out (the batch is
 *   filled from the following records) and counted, the count logged as a warning
 *   at the end of the epoch. Other errors (a RecordIO error, a label mismatch, an
 *   image smaller than data_shape after the augmenters) always fail.
 * - Last batch: with round_batch=True (upstream's default) it is completed with
 *   the first records of the epoch's order (cyclically if the epoch is shorter
 *   than a batch) and the count reported as pad; the next epoch starts at its
 *   first record (upstream continues after the records used as padding). With
 *   round_batch=False it is delivered with its missing rows zero and pad set to
 *   their count (upstream leaves stale rows and reports pad 0).
 * - Output: data (batch, C, H, W) float32 or uint8 (dtype), RGB channel order;
 *   label (batch,) for label_width 1, else (batch, label_width).
 * - mean_img (float32 only, as upstream): an MXNet NDArray file (image_mean.h)
 *   of shape data_shape, subtracted instead of mean_r/g/b/a. When the file does
 *   not exist it is computed at create as upstream's CreateMeanImg does: the
 *   average over the partition of the augmenter chain's output, here before
 *   normalisation (upstream averages after mean_r/g/b and scale/std, the same
 *   with their defaults), and saved there.
 */
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "image_aug.h"
#include "image_index.h"
#include "image_mean.h"
#include "image_pool.h"
#include "io_iter.h"

/** s->n before a sequential first pass has reached the end of the partition. */
#define N_UNKNOWN UINT64_MAX

/** One row of the batch being built: the record and how its processing ended. */
typedef struct img_item {
    uint8_t *rec; /**< a copy of the record */
    size_t len, cap;
    uint64_t offset; /**< byte offset of the record in the file */
    uint64_t pos;    /**< position in the epoch (>= n for padding) */
    int status;      /**< 0 ok, 1 corrupt image (skippable), 2 other error */
    mxk_status code; /**< the error's code (status 1, 2) */
    char msg[PF_MSG_MAX];
} img_item;

/** State of the source (touched by the prefetch thread and, in pool_run, the workers). */
typedef struct img_src {
    char *path;
    rio_reader *r;
    uint64_t *off;   /**< record offsets of the partition, or NULL: read sequentially */
    uint64_t n;      /**< records in the partition (N_UNKNOWN until a sequential pass ends) */
    uint64_t begin;  /**< byte offset of the partition (sequential reading) */
    uint64_t *order; /**< epoch's permutation (shuffle) or NULL */
    img_labels list;
    int has_list;
    aug_params ap;
    uint32_t batch, label_width;
    int shuffle, round_batch, skip_corrupt;
    uint64_t seed, epoch, pos, skipped;
    size_t row_bytes; /**< bytes of one example in the data slot */
    img_pool *pool;
    img_codec **codecs; /**< one per worker */
    img_item *items;    /**< batch rows */
    pf_slot *slot;      /**< the slot being filled (during pool_run) */
    float *mean_img;    /**< the mean image (ap.mean_img), or NULL */
    uint32_t base;      /**< slot row of items[0] (during pool_run) */
} img_src;

/** Frees a source. */
static void src_free(void *p) {
    img_src *s = p;
    if (s == NULL)
        return;
    pool_free(s->pool);
    if (s->codecs)
        for (uint32_t i = 0; s->codecs[i] != NULL; i++)
            img_codec_free(s->codecs[i]);
    free(s->codecs);
    for (uint32_t i = 0; s->items && i < s->batch; i++)
        free(s->items[i].rec);
    free(s->items);
    rio_reader_close(s->r);
    free(s->off);
    free(s->order);
    img_labels_free(&s->list);
    free(s->mean_img);
    free(s->path);
    free(s);
}

/** Draws the order of epoch s->epoch (shuffle) as a Fisher-Yates pass from identity. */
static void draw_order(img_src *s) {
    if (!s->shuffle)
        return;
    aug_rng g;
    aug_rng_seed(&g, s->seed, 2 * s->epoch + 1, UINT64_MAX);
    for (uint64_t i = 0; i < s->n; i++)
        s->order[i] = i;
    for (uint64_t i = s->n; i > 1; i--) {
        uint64_t j = (uint64_t)aug_rng_int(&g, 0, (int64_t)(i - 1)), t = s->order[i - 1];
        s->order[i - 1] = s->order[j];
        s->order[j] = t;
    }
}

/** Fills the label row of a record: from the image list or its IRHeader. Returns 0 or -1. */
static int item_labels(img_src *s, img_item *it, const rio_irheader *h, const uint8_t *labels,
                       float *dst) {
    if (s->has_list) {
        const float *l = img_labels_find(&s->list, h->id);
        if (l == NULL) {
            snprintf(it->msg, sizeof it->msg,
                     "ImageRecordIter: the image list has no label for record id %llu (byte %llu "
                     "of '%s')",
                     (unsigned long long)h->id, (unsigned long long)it->offset, s->path);
            return -1;
        }
        memcpy(dst, l, s->label_width * sizeof *dst);
    } else if (h->flag > 0) {
        if (h->flag != s->label_width) {
            snprintf(it->msg, sizeof it->msg,
                     "ImageRecordIter: record id %llu (byte %llu of '%s') has %u labels but "
                     "label_width is %u",
                     (unsigned long long)h->id, (unsigned long long)it->offset, s->path,
                     (unsigned)h->flag, (unsigned)s->label_width);
            return -1;
        }
        memcpy(dst, labels, s->label_width * sizeof *dst); /* little-endian float32 */
    } else {
        if (s->label_width != 1) {
            snprintf(it->msg, sizeof it->msg,
                     "ImageRecordIter: record id %llu (byte %llu of '%s') has 1 label but "
                     "label_width is %u (give path_imglist, or pack the labels in the record)",
                     (unsigned long long)h->id, (unsigned long long)it->offset, s->path,
                     (unsigned)s->label_width);
            return -1;
        }
        dst[0] = h->label;
    }
    return 0;
}

/** Decodes and augments record `i` of the run into its row (a pool_fn, on any worker). */
static void process_item(void *ctx, uint32_t worker, uint32_t i) {
    img_src *s = ctx;
    img_item *it = &s->items[i];
    uint32_t row = s->base + i;
    char m[PF_MSG_MAX - 200];
    rio_irheader h;
    const uint8_t *labels, *payload;
    size_t plen;
    it->status = 2;
    it->code = MXK_ERR_FORMAT;
    if (rio_irheader_get(it->rec, it->len, &h, &labels, &payload, &plen, m, sizeof m) != 0) {
        snprintf(it->msg, sizeof it->msg, "ImageRecordIter: '%s': record at byte %llu: %s", s->path,
                 (unsigned long long)it->offset, m);
        return;
    }
    s->slot->index[row] = h.id;
    it->code = MXK_ERR_INVALID_ARGUMENT; /* labels that do not fit, an image too small */
    if (item_labels(s, it, &h, labels, s->slot->label + (size_t)row * s->label_width) != 0)
        return;
    img_format fmt;
    uint32_t w, hh, c, mw, mh;
    img_image im = {0};
    if (img_probe(s->codecs[worker], payload, plen, &fmt, &w, &hh, &c, m, sizeof m) != 0 ||
        (aug_decode_hint(&s->ap, w, hh, &mw, &mh),
         img_decode(s->codecs[worker], payload, plen, s->ap.c, mw, mh, &im, m, sizeof m) != 0)) {
        it->status = 1;
        it->code = MXK_ERR_FORMAT;
        snprintf(it->msg, sizeof it->msg, "ImageRecordIter: '%s': record id %llu at byte %llu: %s",
                 s->path, (unsigned long long)h.id, (unsigned long long)it->offset, m);
        return;
    }
    aug_rng g;
    aug_rng_seed(&g, s->seed, 2 * s->epoch, it->pos);
    uint8_t *out = (uint8_t *)s->slot->data + (size_t)row * s->row_bytes;
    if (aug_process(&s->ap, &im, w, hh, &g, out, m, sizeof m) != 0)
        snprintf(it->msg, sizeof it->msg, "ImageRecordIter: '%s': record id %llu at byte %llu: %s",
                 s->path, (unsigned long long)h.id, (unsigned long long)it->offset, m);
    else
        it->status = 0;
    img_free(&im);
}

/**
 * Reads the record at epoch position `pos` into `it` (*got 1), or finds the end
 * of the partition in a sequential first pass (*got 0). Sequential reading
 * wraps to the partition's start at every multiple of the record count (the
 * padding of round_batch). Returns MXK_OK or an error (msg).
 */
static mxk_status read_item(img_src *s, img_item *it, uint64_t pos, int *got, char *msg) {
    const uint8_t *data;
    size_t len;
    int r = -1;
    *got = 1;
    it->pos = pos;
    if (s->off != NULL) {
        it->offset = s->off[s->order ? s->order[pos % s->n] : pos % s->n];
        if (rio_reader_seek(s->r, it->offset, msg, PF_MSG_MAX) == 0)
            r = rio_reader_next(s->r, &data, &len, msg, PF_MSG_MAX);
    } else if (pos == 0 || s->n == N_UNKNOWN || pos % s->n != 0 ||
               rio_reader_seek(s->r, s->begin, msg, PF_MSG_MAX) == 0) {
        it->offset = rio_reader_tell(s->r);
        r = rio_reader_next(s->r, &data, &len, msg, PF_MSG_MAX);
        if (r == 0 && s->n == N_UNKNOWN) {
            *got = 0;
            return MXK_OK;
        }
    }
    if (r <= 0) {
        if (r == 0)
            snprintf(msg, PF_MSG_MAX, "ImageRecordIter: '%s': no record at byte %llu", s->path,
                     (unsigned long long)it->offset);
        return MXK_ERR_FORMAT;
    }
    if (len > it->cap) {
        uint8_t *nb = realloc(it->rec, len);
        if (nb == NULL) {
            snprintf(msg, PF_MSG_MAX, "ImageRecordIter: out of memory");
            return MXK_ERR_OUT_OF_MEMORY;
        }
        it->rec = nb;
        it->cap = len;
    }
    memcpy(it->rec, data, len);
    it->len = len;
    return MXK_OK;
}

/** Moves row `from` of the slot to row `to` (data, label, index). */
static void move_row(img_src *s, pf_slot *slot, uint32_t from, uint32_t to) {
    memmove((uint8_t *)slot->data + (size_t)to * s->row_bytes,
            (uint8_t *)slot->data + (size_t)from * s->row_bytes, s->row_bytes);
    memmove(slot->label + (size_t)to * s->label_width, slot->label + (size_t)from * s->label_width,
            s->label_width * sizeof *slot->label);
    slot->index[to] = slot->index[from];
}

/** Logs the epoch's skipped count (if any) at its end. */
static void end_epoch(img_src *s) {
    if (s->skipped > 0)
        mxk_sdk_log(MXK_LOG_WARNING,
                    "ImageRecordIter: skipped %llu corrupt images of '%s' in epoch %llu",
                    (unsigned long long)s->skipped, s->path, (unsigned long long)s->epoch);
    s->skipped = 0;
}

/** Produces the next batch (prefetch thread); see the top comment for the last batch. */
static mxk_status img_produce(void *p, pf_slot *slot, int *produced, char *msg) {
    img_src *s = p;
    *produced = 0;
    if (s->pos >= s->n) {
        end_epoch(s);
        return MXK_OK;
    }
    uint32_t filled = 0, pad = 0;
    uint64_t barren = 0; /* padding positions in a row without a good image */
    s->slot = slot;
    while (filled < s->batch) {
        int padding = s->pos >= s->n;
        if (padding && (!s->round_batch || filled == 0 || barren >= s->n))
            break;
        uint32_t need = s->batch - filled;
        if (!padding && s->n - s->pos < need)
            need = (uint32_t)(s->n - s->pos);
        for (uint32_t i = 0; i < need; i++) {
            int got;
            mxk_status st = read_item(s, &s->items[i], s->pos + i, &got, msg);
            if (st != MXK_OK)
                return st;
            if (!got) { /* the end of a sequential first pass: now the count is known */
                s->n = s->pos + i;
                need = i;
            }
        }
        s->base = filled;
        pool_run(s->pool, process_item, s, need);
        for (uint32_t i = 0; i < need; i++) {
            img_item *it = &s->items[i];
            if (it->status == 2 || (it->status == 1 && !s->skip_corrupt)) {
                snprintf(msg, PF_MSG_MAX, "%s", it->msg);
                return it->code;
            }
            if (it->status == 1) {
                s->skipped++;
                barren += padding;
                continue;
            }
            if (s->base + i != filled)
                move_row(s, slot, s->base + i, filled);
            filled++;
            pad += padding;
            barren = 0;
        }
        s->pos += need;
    }
    if (filled == 0) {
        end_epoch(s);
        return MXK_OK;
    }
    if (filled < s->batch) { /* round_batch=False, or nothing decodable to pad with */
        size_t rows = s->batch - filled;
        memset((uint8_t *)slot->data + (size_t)filled * s->row_bytes, 0, rows * s->row_bytes);
        memset(slot->label + (size_t)filled * s->label_width, 0,
               rows * s->label_width * sizeof *slot->label);
        memset(slot->index + filled, 0, rows * sizeof *slot->index);
        pad += (uint32_t)rows;
    }
    slot->pad = pad;
    *produced = 1;
    return MXK_OK;
}

/** Goes back to the first record of the epoch (a sequential reader seeks there). */
static mxk_status restart(img_src *s, char *msg) {
    s->pos = 0;
    s->skipped = 0;
    if (s->off == NULL && rio_reader_seek(s->r, s->begin, msg, PF_MSG_MAX) != 0)
        return MXK_ERR_FORMAT;
    return MXK_OK;
}

/** Rewinds (prefetch thread): the next epoch, reshuffled with shuffle=True. */
static mxk_status img_rewind(void *p, char *msg) {
    img_src *s = p;
    end_epoch(s);
    s->epoch++;
    draw_order(s);
    return restart(s, msg);
}

/** Reads a float attribute into a float. */
static mxk_status attr_f(const mxk_attrs *a, const char *key, float *v, mxk_error_sink *err) {
    double d;
    MXK_SDK_CHECK(mxk_sdk_attr_float_finite(a, key, &d, err));
    *v = (float)d;
    return MXK_OK;
}

/** Reads an integer attribute in [lo, hi] into an int32_t. */
static mxk_status attr_i(const mxk_attrs *a, const char *key, int64_t lo, int64_t hi, int32_t *v,
                         mxk_error_sink *err) {
    int64_t x;
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(a, key, lo, hi, &x, err));
    *v = (int32_t)x;
    return MXK_OK;
}

/** Reads the augmenter and normalisation attributes into s->ap. */
static mxk_status read_aug(const mxk_attrs *a, aug_params *ap, mxk_error_sink *err) {
    mxk_shape shape;
    MXK_SDK_CHECK(mxk_sdk_attr_shape(a, "data_shape", &shape, err));
    if (shape.ndim != 3 || (shape.dims[0] != 1 && shape.dims[0] != 3 && shape.dims[0] != 4) ||
        shape.dims[1] < 1 || shape.dims[2] < 1 || shape.dims[1] > 65535 || shape.dims[2] > 65535)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'data_shape': expected (C, H, W) with C 1, 3 or 4 and H, "
                             "W in [1, 65535], got '%s'",
                             mxk_sdk_attr_raw(a, "data_shape"));
    ap->c = (uint32_t)shape.dims[0];
    ap->h = (uint32_t)shape.dims[1];
    ap->w = (uint32_t)shape.dims[2];
    MXK_SDK_CHECK(attr_i(a, "resize", -1, 65535, &ap->resize, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(a, "rand_crop", &ap->rand_crop, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(a, "random_resized_crop", &ap->random_resized_crop, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(a, "rand_mirror", &ap->rand_mirror, err));
    MXK_SDK_CHECK(attr_f(a, "min_random_scale", &ap->min_random_scale, err));
    MXK_SDK_CHECK(attr_f(a, "max_random_scale", &ap->max_random_scale, err));
    MXK_SDK_CHECK(attr_f(a, "max_aspect_ratio", &ap->max_aspect_ratio, err));
    MXK_SDK_CHECK(attr_f(a, "min_aspect_ratio", &ap->min_aspect_ratio, err));
    MXK_SDK_CHECK(attr_f(a, "max_shear_ratio", &ap->max_shear_ratio, err));
    MXK_SDK_CHECK(attr_i(a, "min_crop_size", -1, 65535, &ap->min_crop_size, err));
    MXK_SDK_CHECK(attr_i(a, "max_crop_size", -1, 65535, &ap->max_crop_size, err));
    MXK_SDK_CHECK(attr_i(a, "random_h", 0, 180, &ap->random_h, err));
    MXK_SDK_CHECK(attr_i(a, "random_s", 0, 255, &ap->random_s, err));
    MXK_SDK_CHECK(attr_i(a, "random_l", 0, 255, &ap->random_l, err));
    MXK_SDK_CHECK(attr_f(a, "min_random_area", &ap->min_random_area, err));
    MXK_SDK_CHECK(attr_f(a, "max_random_area", &ap->max_random_area, err));
    MXK_SDK_CHECK(attr_i(a, "max_rotate_angle", 0, 360, &ap->max_rotate_angle, err));
    MXK_SDK_CHECK(attr_f(a, "brightness", &ap->brightness, err));
    MXK_SDK_CHECK(attr_f(a, "contrast", &ap->contrast, err));
    MXK_SDK_CHECK(attr_f(a, "saturation", &ap->saturation, err));
    MXK_SDK_CHECK(attr_f(a, "pca_noise", &ap->pca_noise, err));
    MXK_SDK_CHECK(attr_i(a, "inter_method", 0, 10, &ap->inter_method, err));
    MXK_SDK_CHECK(attr_i(a, "fill_value", 0, 255, &ap->fill_value, err));
    MXK_SDK_CHECK(attr_i(a, "pad", 0, 65535, &ap->pad, err));
    if (ap->inter_method > 4 && ap->inter_method < 9)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'inter_method': expected 0-4, 9 or 10, got %d",
                             (int)ap->inter_method);
    if (ap->min_random_scale <= 0 || ap->min_random_scale > ap->max_random_scale ||
        (ap->min_aspect_ratio == 0 && (ap->max_aspect_ratio < 0 || ap->max_aspect_ratio >= 1)) ||
        ap->min_aspect_ratio < 0 || ap->min_random_area <= 0 ||
        ap->min_random_area > ap->max_random_area || ap->max_random_area > 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "ImageRecordIter: need 0 < min_random_scale <= max_random_scale, "
                             "0 <= max_aspect_ratio < 1 (unless min_aspect_ratio is set) and 0 < "
                             "min_random_area <= max_random_area <= 1");
    if (ap->min_aspect_ratio > 0 && ap->min_aspect_ratio > ap->max_aspect_ratio)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "ImageRecordIter: min_aspect_ratio %g is above max_aspect_ratio %g",
                             ap->min_aspect_ratio, ap->max_aspect_ratio);
    if (ap->max_shear_ratio < 0 || ap->max_shear_ratio > 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'max_shear_ratio': expected [0, 1], got %g",
                             ap->max_shear_ratio);
    if ((ap->min_crop_size != -1 || ap->max_crop_size != -1) &&
        (ap->min_crop_size < 1 || ap->min_crop_size > ap->max_crop_size))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "ImageRecordIter: need 1 <= min_crop_size <= max_crop_size (or both "
                             "-1), got %d and %d",
                             (int)ap->min_crop_size, (int)ap->max_crop_size);
    if (ap->random_resized_crop && (ap->min_random_scale != 1 || ap->max_random_scale != 1 ||
                                    ap->rand_crop || ap->min_crop_size != -1))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "ImageRecordIter: random_resized_crop conflicts with "
                             "min_random_scale, max_random_scale, min_crop_size, max_crop_size and "
                             "rand_crop");
    static const char *const mean_k[4] = {"mean_r", "mean_g", "mean_b", "mean_a"};
    static const char *const std_k[4] = {"std_r", "std_g", "std_b", "std_a"};
    MXK_SDK_CHECK(attr_f(a, "scale", &ap->scale, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(a, "mirror", &ap->mirror, err));
    MXK_SDK_CHECK(attr_f(a, "max_random_contrast", &ap->max_random_contrast, err));
    MXK_SDK_CHECK(attr_f(a, "max_random_illumination", &ap->max_random_illumination, err));
    for (int k = 0; k < 4; k++) {
        MXK_SDK_CHECK(attr_f(a, mean_k[k], &ap->mean[k], err));
        MXK_SDK_CHECK(attr_f(a, std_k[k], &ap->std[k], err));
        if (ap->std[k] == 0)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "attribute '%s': must not be 0",
                                 std_k[k]);
    }
    return MXK_OK;
}

/** Starts the workers and their codecs. */
static mxk_status start_workers(img_src *s, uint32_t threads, mxk_error_sink *err) {
    s->pool = pool_create(threads);
    s->codecs = calloc(threads + 1, sizeof *s->codecs);
    s->items = calloc(s->batch, sizeof *s->items);
    if (s->pool == NULL || s->codecs == NULL || s->items == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY,
                             "ImageRecordIter: cannot start %u preprocess threads",
                             (unsigned)threads);
    for (uint32_t i = 0; i < threads; i++)
        if ((s->codecs[i] = img_codec_new()) == NULL)
            return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY,
                                 "ImageRecordIter: cannot create an image codec");
    return MXK_OK;
}

/** Opens the file, finds the partition's records, reads the image list. */
static mxk_status open_records(img_src *s, const mxk_attrs *a, mxk_error_sink *err) {
    const char *idx, *lst;
    int64_t parts, part;
    MXK_SDK_CHECK(mxk_sdk_attr_string(a, "path_imgidx", &idx, err));
    MXK_SDK_CHECK(mxk_sdk_attr_string(a, "path_imglist", &lst, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(a, "num_parts", 1, INT32_MAX, &parts, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(a, "part_index", 0, parts - 1, &part, err));
    char msg[PF_MSG_MAX];
    int seq = idx[0] == '\0' && !s->shuffle;
    uint64_t end;
    s->n = N_UNKNOWN;
    if (rio_reader_open(s->path, &s->r, msg, sizeof msg) != 0 ||
        (seq ? rio_part_range(s->r, (uint32_t)parts, (uint32_t)part, &s->begin, &end, msg,
                              sizeof msg)
             : rec_offsets(s->r, s->path, idx, (uint32_t)parts, (uint32_t)part, &s->off, &s->n, msg,
                           sizeof msg)) != 0 ||
        (lst[0] != '\0' && img_labels_read(lst, s->label_width, &s->list, msg, sizeof msg) != 0))
        return mxk_sdk_error(err, MXK_ERR_FORMAT, "ImageRecordIter: %s", msg);
    rio_reader_set_end(s->r, seq ? end : UINT64_MAX);
    s->has_list = lst[0] != '\0';
    if (s->shuffle) {
        s->order = malloc((s->n ? s->n : 1) * sizeof *s->order);
        if (s->order == NULL)
            return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "ImageRecordIter: out of memory");
        draw_order(s);
    }
    return MXK_OK;
}

/**
 * Upstream's CreateMeanImg: one pass over the partition (epoch 0's order and
 * draws; padding rows left out) averaging the chain's output before
 * normalisation, then a rewind to the start of epoch 0.
 */
static mxk_status compute_mean(img_src *s, float *mean, mxk_error_sink *err) {
    size_t n = (size_t)s->ap.c * s->ap.h * s->ap.w, rows = 0;
    aug_params keep = s->ap;
    s->ap.out_uint8 = 0;
    s->ap.mean_img = NULL;
    s->ap.scale = 1;
    s->ap.max_random_contrast = s->ap.max_random_illumination = 0;
    for (int k = 0; k < 4; k++)
        s->ap.mean[k] = 0, s->ap.std[k] = 1;
    pf_slot slot = {0};
    double *sum = calloc(n, sizeof *sum);
    slot.data = malloc(n * s->batch * sizeof(float));
    slot.label = malloc((size_t)s->batch * s->label_width * sizeof(float));
    slot.index = malloc(s->batch * sizeof *slot.index);
    char msg[PF_MSG_MAX];
    mxk_status st = MXK_OK;
    if (sum == NULL || slot.data == NULL || slot.label == NULL || slot.index == NULL)
        st = mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "ImageRecordIter: out of memory");
    for (int produced = 1; st == MXK_OK && produced;) {
        st = img_produce(s, &slot, &produced, msg);
        if (st != MXK_OK)
            st = mxk_sdk_error(err, st, "%s", msg);
        for (uint32_t r = 0; st == MXK_OK && produced && r < s->batch - slot.pad; r++, rows++)
            for (size_t i = 0; i < n; i++)
                sum[i] += ((const float *)slot.data)[r * n + i];
    }
    for (size_t i = 0; st == MXK_OK && i < n; i++)
        mean[i] = rows ? (float)(sum[i] / (double)rows) : 0.0f;
    free(sum);
    free(slot.data);
    free(slot.label);
    free(slot.index);
    s->ap = keep;
    if (st == MXK_OK && restart(s, msg) != MXK_OK)
        st = mxk_sdk_error(err, MXK_ERR_FORMAT, "%s", msg);
    return st;
}

/** Loads mean_img, or computes and saves it when the file does not exist. */
static mxk_status load_mean(img_src *s, const char *path, mxk_error_sink *err) {
    char msg[PF_MSG_MAX];
    int exists;
    if (mean_img_read(path, s->ap.c, s->ap.h, s->ap.w, &s->mean_img, &exists, msg, sizeof msg))
        return mxk_sdk_error(err, MXK_ERR_FORMAT, "ImageRecordIter: %s", msg);
    if (!exists) {
        s->mean_img = malloc((size_t)s->ap.c * s->ap.h * s->ap.w * sizeof *s->mean_img);
        if (s->mean_img == NULL)
            return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "ImageRecordIter: out of memory");
        MXK_SDK_CHECK(compute_mean(s, s->mean_img, err));
        if (mean_img_write(path, s->ap.c, s->ap.h, s->ap.w, s->mean_img, msg, sizeof msg) != 0)
            return mxk_sdk_error(err, MXK_ERR_IO, "ImageRecordIter: %s", msg);
        mxk_sdk_log(MXK_LOG_INFO, "ImageRecordIter: saved the mean image of '%s' to '%s'", s->path,
                    path);
    }
    s->ap.mean_img = s->mean_img;
    return MXK_OK;
}

/** ImageRecordIter create. */
static mxk_status img_create(const mxk_attrs *a, void **out, mxk_error_sink *err) {
    img_src *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "ImageRecordIter: out of memory");
    const char *rec, *dname, *lname, *mean, *env = getenv("MXK_IMAGE_SKIP_CORRUPT");
    int64_t batch, lw, seed, threads, prefetch;
    int32_t dtype = 0, verbose = 0;
    mxk_status st;
#define CK(x)                                                                                      \
    if ((st = (x)) != MXK_OK)                                                                      \
        goto fail;
    CK(mxk_sdk_attr_string(a, "path_imgrec", &rec, err));
    CK(mxk_sdk_attr_int_range(a, "batch_size", 1, 1 << 20, &batch, err));
    CK(mxk_sdk_attr_int_range(a, "label_width", 1, 1 << 16, &lw, err));
    CK(mxk_sdk_attr_bool(a, "shuffle", &s->shuffle, err));
    CK(mxk_sdk_attr_int(a, "seed", &seed, err));
    CK(mxk_sdk_attr_int_range(a, "preprocess_threads", 1, 256, &threads, err));
    CK(mxk_sdk_attr_int_range(a, "prefetch_buffer", 1, 1024, &prefetch, err));
    CK(mxk_sdk_attr_bool(a, "round_batch", &s->round_batch, err));
    CK(mxk_sdk_attr_bool(a, "skip_corrupt", &s->skip_corrupt, err));
    CK(mxk_sdk_attr_bool(a, "verbose", &verbose, err));
    CK(mxk_sdk_attr_enum(a, "dtype", "float32|uint8", &dtype, err));
    CK(mxk_sdk_attr_string(a, "data_name", &dname, err));
    CK(mxk_sdk_attr_string(a, "label_name", &lname, err));
    CK(mxk_sdk_attr_string(a, "mean_img", &mean, err));
    CK(read_aug(a, &s->ap, err));
    if (rec[0] == '\0') {
        st = mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                           "ImageRecordIter: path_imgrec is required");
        goto fail;
    }
    s->skip_corrupt |= env != NULL && strcmp(env, "1") == 0;
    s->ap.out_uint8 = dtype == 1;
    s->batch = (uint32_t)batch;
    s->label_width = (uint32_t)lw;
    s->seed = (uint64_t)seed;
    s->row_bytes = (size_t)s->ap.c * s->ap.h * s->ap.w * (s->ap.out_uint8 ? 1 : sizeof(float));
    s->path = strdup(rec);
    if (s->path == NULL) {
        st = mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "ImageRecordIter: out of memory");
        goto fail;
    }
    CK(open_records(s, a, err));
    CK(start_workers(s, (uint32_t)threads, err));
    if (mean[0] != '\0' && !s->ap.out_uint8)
        CK(load_mean(s, mean, err));
#undef CK
    mxk_shape dshape = {0}, lshape = lw == 1 ? mxk_sdk_shape1(batch) : mxk_sdk_shape2(batch, lw);
    dshape.ndim = 4;
    dshape.dims[0] = batch;
    dshape.dims[1] = s->ap.c;
    dshape.dims[2] = s->ap.h;
    dshape.dims[3] = s->ap.w;
    if (verbose && s->off != NULL)
        mxk_sdk_log(MXK_LOG_INFO, "ImageRecordIter: '%s': %llu records in part, %u thread%s",
                    s->path, (unsigned long long)s->n, (unsigned)threads, threads == 1 ? "" : "s");
    else if (verbose)
        mxk_sdk_log(MXK_LOG_INFO, "ImageRecordIter: '%s': part from byte %llu, %u thread%s",
                    s->path, (unsigned long long)s->begin, (unsigned)threads,
                    threads == 1 ? "" : "s");
    st = io_iter_start(s, src_free, img_produce, img_rewind, &dshape,
                       s->ap.out_uint8 ? MXK_UINT8 : MXK_FLOAT32, &lshape, (uint32_t)prefetch, out,
                       err);
    if (st == MXK_OK && (st = io_iter_set_names(*out, dname, lname, err)) != MXK_OK)
        io_iter_destroy(*out);
    return st;
fail:
    src_free(s);
    return st;
}

/** ImageRecordIter's attributes: upstream's names and defaults, plus skip_corrupt. */
static const mxk_attr_def g_img_attrs[] = {
    MXK_SDK_ATTR("path_imgrec", MXK_ATTR_STRING, 0, "", NULL, "the .rec file (required)"),
    MXK_SDK_ATTR("path_imgidx", MXK_ATTR_STRING, 0, "", NULL,
                 "its .idx file: partitions by record count (else by bytes)"),
    MXK_SDK_ATTR("path_imglist", MXK_ATTR_STRING, 0, "", NULL,
                 "image list (index, labels, path): labels by record id instead of the record's"),
    MXK_SDK_ATTR("data_shape", MXK_ATTR_SHAPE, 1, NULL, NULL, "(C, H, W) of one example, C 1/3/4"),
    MXK_SDK_ATTR("batch_size", MXK_ATTR_INT, 1, NULL, NULL, "batch size"),
    MXK_SDK_ATTR("label_width", MXK_ATTR_INT, 0, "1", NULL, "labels per example"),
    MXK_SDK_ATTR("shuffle", MXK_ATTR_BOOL, 0, "False", NULL, "a new random order every epoch"),
    MXK_SDK_ATTR("seed", MXK_ATTR_INT, 0, "0", NULL, "seed of the order and the augmentation"),
    MXK_SDK_ATTR("num_parts", MXK_ATTR_INT, 0, "1", NULL, "number of partitions"),
    MXK_SDK_ATTR("part_index", MXK_ATTR_INT, 0, "0", NULL, "partition to read"),
    MXK_SDK_ATTR("preprocess_threads", MXK_ATTR_INT, 0, "4", NULL,
                 "decoding threads (the output does not depend on it)"),
    MXK_SDK_ATTR("prefetch_buffer", MXK_ATTR_INT, 0, "4", NULL, "batches prefetched"),
    MXK_SDK_ATTR(
        "round_batch", MXK_ATTR_BOOL, 0, "True", NULL,
        "complete the last batch from the epoch's start (else zero rows); pad counts them"),
    MXK_SDK_ATTR("data_name", MXK_ATTR_STRING, 0, "data", NULL, "name of the data array"),
    MXK_SDK_ATTR("label_name", MXK_ATTR_STRING, 0, "softmax_label", NULL,
                 "name of the label array"),
    MXK_SDK_ATTR("dtype", MXK_ATTR_ENUM, 0, "float32", "float32|uint8",
                 "output type; uint8: raw pixels, no mean/std/scale"),
    MXK_SDK_ATTR("verbose", MXK_ATTR_BOOL, 0, "True", NULL, "log a line at creation"),
    MXK_SDK_ATTR("skip_corrupt", MXK_ATTR_BOOL, 0, "False", NULL,
                 "skip and count undecodable images (also MXK_IMAGE_SKIP_CORRUPT=1)"),
    MXK_SDK_ATTR("resize", MXK_ATTR_INT, 0, "-1", NULL, "short side first resized to this"),
    MXK_SDK_ATTR("rand_crop", MXK_ATTR_BOOL, 0, "False", NULL, "random instead of centre crop"),
    MXK_SDK_ATTR("random_resized_crop", MXK_ATTR_BOOL, 0, "False", NULL,
                 "crop a random area / aspect ratio and resize it to data_shape"),
    MXK_SDK_ATTR("min_random_scale", MXK_ATTR_FLOAT, 0, "1", NULL, "smallest random scale"),
    MXK_SDK_ATTR("max_random_scale", MXK_ATTR_FLOAT, 0, "1", NULL, "largest random scale"),
    MXK_SDK_ATTR("max_aspect_ratio", MXK_ATTR_FLOAT, 0, "0", NULL,
                 "aspect ratio drawn in [1 - v, 1 + v]"),
    MXK_SDK_ATTR("min_aspect_ratio", MXK_ATTR_FLOAT, 0, "0", NULL,
                 "> 0: aspect ratio drawn in [v, max_aspect_ratio] instead; 0: unset (upstream's "
                 "None)"),
    MXK_SDK_ATTR("max_shear_ratio", MXK_ATTR_FLOAT, 0, "0", NULL,
                 "shear (x, y) -> (x + m y, y), m in [-v, v]"),
    MXK_SDK_ATTR("min_crop_size", MXK_ATTR_INT, 0, "-1", NULL,
                 "square crop of a random side in [min_crop_size, max_crop_size], resized"),
    MXK_SDK_ATTR("max_crop_size", MXK_ATTR_INT, 0, "-1", NULL, "see min_crop_size (-1: off)"),
    MXK_SDK_ATTR("random_h", MXK_ATTR_INT, 0, "0", NULL, "hue jitter in [-v, v] (HLS, 0-180)"),
    MXK_SDK_ATTR("random_s", MXK_ATTR_INT, 0, "0", NULL, "saturation jitter in [-v, v] (HLS)"),
    MXK_SDK_ATTR("random_l", MXK_ATTR_INT, 0, "0", NULL, "lightness jitter in [-v, v] (HLS)"),
    MXK_SDK_ATTR("min_random_area", MXK_ATTR_FLOAT, 0, "1", NULL,
                 "smallest area fraction (random_resized_crop)"),
    MXK_SDK_ATTR("max_random_area", MXK_ATTR_FLOAT, 0, "1", NULL,
                 "largest area fraction (random_resized_crop)"),
    MXK_SDK_ATTR("rand_mirror", MXK_ATTR_BOOL, 0, "False", NULL, "mirror with probability 1/2"),
    MXK_SDK_ATTR("mirror", MXK_ATTR_BOOL, 0, "False", NULL, "mirror every image"),
    MXK_SDK_ATTR("max_rotate_angle", MXK_ATTR_INT, 0, "0", NULL, "rotate by a random [-v, v] deg"),
    MXK_SDK_ATTR("brightness", MXK_ATTR_FLOAT, 0, "0", NULL, "brightness jitter"),
    MXK_SDK_ATTR("contrast", MXK_ATTR_FLOAT, 0, "0", NULL, "contrast jitter"),
    MXK_SDK_ATTR("saturation", MXK_ATTR_FLOAT, 0, "0", NULL, "saturation jitter"),
    MXK_SDK_ATTR("pca_noise", MXK_ATTR_FLOAT, 0, "0", NULL, "PCA lighting noise level"),
    MXK_SDK_ATTR("inter_method", MXK_ATTR_INT, 0, "1", NULL,
                 "0 NN, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos, 9 auto, 10 random"),
    MXK_SDK_ATTR("fill_value", MXK_ATTR_INT, 0, "255", NULL, "value of padding pixels"),
    MXK_SDK_ATTR("pad", MXK_ATTR_INT, 0, "0", NULL, "pixels of fill_value added on each side"),
    MXK_SDK_ATTR("mean_r", MXK_ATTR_FLOAT, 0, "0", NULL, "mean of R"),
    MXK_SDK_ATTR("mean_g", MXK_ATTR_FLOAT, 0, "0", NULL, "mean of G"),
    MXK_SDK_ATTR("mean_b", MXK_ATTR_FLOAT, 0, "0", NULL, "mean of B"),
    MXK_SDK_ATTR("mean_a", MXK_ATTR_FLOAT, 0, "0", NULL, "mean of alpha"),
    MXK_SDK_ATTR("std_r", MXK_ATTR_FLOAT, 0, "1", NULL, "std of R"),
    MXK_SDK_ATTR("std_g", MXK_ATTR_FLOAT, 0, "1", NULL, "std of G"),
    MXK_SDK_ATTR("std_b", MXK_ATTR_FLOAT, 0, "1", NULL, "std of B"),
    MXK_SDK_ATTR("std_a", MXK_ATTR_FLOAT, 0, "1", NULL, "std of alpha"),
    MXK_SDK_ATTR("scale", MXK_ATTR_FLOAT, 0, "1", NULL, "multiplier after mean and std"),
    MXK_SDK_ATTR("max_random_contrast", MXK_ATTR_FLOAT, 0, "0", NULL,
                 "float output multiplied by 1 + U(-v, v)"),
    MXK_SDK_ATTR("max_random_illumination", MXK_ATTR_FLOAT, 0, "0", NULL,
                 "U(-v, v) * scale / std added to the float output"),
    MXK_SDK_ATTR("mean_img", MXK_ATTR_STRING, 0, "", NULL,
                 "mean image (NDArray file) subtracted instead of mean_r/g/b/a; computed over "
                 "the partition and saved there when absent"),
};

mxk_status io_register_image_rec(mxk_registrar *reg, mxk_error_sink *err) {
    return io_register_iter(reg, "ImageRecordIter",
                            "JPEG/PNG images in RecordIO files, decoded and augmented on worker "
                            "threads (MXNet src/io/iter_image_recordio_2.cc)",
                            g_img_attrs, MXK_SDK_COUNTOF(g_img_attrs), img_create, err);
}
