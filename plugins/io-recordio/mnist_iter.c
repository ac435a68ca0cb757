/*
 * MNISTIter: MXNet's src/io/iter_mnist.cc.
 *
 * - image / label: IDX files, gzip'd or plain (zlib's gzread reads both).
 * - Partition (num_parts, part_index): examples [floor(n/k*i), floor(n/k*(i+1)))
 *   computed in double, as upstream: contiguous, disjoint, covering
 *   (idx_part_slice, idx.h).
 * - Scaling: pixel byte / 256 (upstream `img_ *= 1.0f / 256.0f`), so values lie
 *   in [0, 255/256]. Labels are float32 class ids.
 * - Shuffle (shuffle=True): once, at create, over the partition, with MT19937
 *   seeded by `seed` (upstream std::mt19937(seed)) and a Fisher-Yates pass whose
 *   bounded draws use rejection sampling (see shuffle()). The order is therefore
 *   deterministic for a seed on every platform, but not the same permutation as
 *   libstdc++'s std::shuffle. reset() only rewinds: every epoch has the same order.
 * - Shapes: data (batch, 1, rows, cols), or (batch, rows*cols) with flat=True;
 *   label (batch,) (upstream (batch, 1), squeezed by the C API).
 * - Last batch: an incomplete tail is dropped (no padding), as upstream: 60000
 *   at batch 128 gives 468 batches. round_batch=True (mxk's, named after
 *   BatchParam's round_batch of src/io/iter_batchloader.h) pads it instead as
 *   NDArrayIter's last_batch_handle='pad' does (python/mxnet/io/io.py): the
 *   missing rows are the first examples of the order (cyclically when the batch
 *   is larger than the epoch), reported as DataBatch.pad; reset() rewinds.
 * - num_examples (mxk's; 0 = all): an epoch delivers the first N examples of
 *   the (shuffled) part; more than the part holds is an error at create.
 * - index: the example's position in the file.
 * - Log (silent=False): upstream's INFO line, "MNISTIter: load N images,
 *   shuffle=S, shape=(B,1,R,C)" ("(B,R*C)" with flat), N counting the partition;
 *   the partition itself goes to a DEBUG line (MXK_LOG_LEVEL=debug).
 * Images are kept as bytes (a quarter of upstream's float copy) and converted per
 * batch on the prefetch thread.
 */
#include <stdlib.h>
#include <string.h>

#include "idx.h"
#include "io_iter.h"

/** State of one MNIST source (touched only by the prefetch thread after create). */
typedef struct mnist_src {
    idx_data img, lbl;
    uint32_t *order; /**< shuffled positions within the partition; NULL: file order */
    uint64_t n;      /**< examples an epoch delivers: the first n of the order */
    uint64_t item;   /**< bytes per image */
    uint32_t batch;
    int round_batch; /**< pad the last batch (else drop it) */
    uint64_t pos;    /**< next position in the order */
} mnist_src;

/** MT19937 (Matsumoto & Nishimura 1998), the generator of upstream's std::mt19937. */
typedef struct mt19937 {
    uint32_t mt[624];
    uint32_t i;
} mt19937;

/** Seeds with the standard init_genrand recurrence (std::mt19937(seed)). */
static void mt_seed(mt19937 *g, uint32_t seed) {
    g->mt[0] = seed;
    for (uint32_t i = 1; i < 624; i++)
        g->mt[i] = 1812433253u * (g->mt[i - 1] ^ (g->mt[i - 1] >> 30)) + i;
    g->i = 624;
}

/** Next 32-bit output (genrand_int32). */
static uint32_t mt_next(mt19937 *g) {
    if (g->i >= 624) {
        for (uint32_t k = 0; k < 624; k++) {
            uint32_t y = (g->mt[k] & 0x80000000u) | (g->mt[(k + 1) % 624] & 0x7fffffffu);
            g->mt[k] = g->mt[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        g->i = 0;
    }
    uint32_t y = g->mt[g->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

/**
 * Fisher-Yates shuffle of a[0..n) with MT19937(seed): for i = n-1 down to 1, j
 * uniform in [0, i] by rejection (draws >= the largest multiple of i+1 below
 * 2^32 are redrawn, then j = draw % (i+1)), swap a[i], a[j].
 */
static void shuffle(uint32_t *a, uint64_t n, uint32_t seed) {
    mt19937 *g = malloc(sizeof *g);
    if (g == NULL || n < 2) {
        free(g);
        return;
    }
    mt_seed(g, seed);
    for (uint64_t i = n - 1; i > 0; i--) {
        uint64_t range = i + 1;
        uint64_t limit = (UINT64_C(1) << 32) - ((UINT64_C(1) << 32) % range);
        uint64_t r;
        do
            r = mt_next(g);
        while (r >= limit);
        uint64_t j = r % range;
        uint32_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
    free(g);
}

/** Frees a source. */
static void mnist_free(void *p) {
    mnist_src *s = p;
    if (s == NULL)
        return;
    idx_free(&s->img);
    idx_free(&s->lbl);
    free(s->order);
    free(s);
}

/**
 * Produces the next batch (prefetch thread). An incomplete tail is dropped (the
 * epoch ends), or with round_batch filled with examples from the start of the
 * order, cyclically when the batch is larger than the epoch, and reported as pad.
 */
static mxk_status mnist_produce(void *p, pf_slot *slot, int *produced, char *msg) {
    mnist_src *s = p;
    uint64_t left = s->n - s->pos;
    if (left == 0 || (left < s->batch && !s->round_batch)) {
        *produced = 0;
        return MXK_OK;
    }
    const float scale = 1.0f / 256.0f;
    for (uint32_t b = 0; b < s->batch; b++) {
        uint64_t at = (s->pos + b) % s->n;
        uint32_t e = s->order ? s->order[at] : (uint32_t)at;
        const uint8_t *src = s->img.data + (uint64_t)e * s->item;
        float *dst = (float *)slot->data + (uint64_t)b * s->item;
        for (uint64_t k = 0; k < s->item; k++)
            dst[k] = (float)src[k] * scale;
        slot->label[b] = (float)s->lbl.data[e];
        slot->index[b] = s->img.begin + e;
    }
    slot->pad = left < s->batch ? (uint32_t)(s->batch - left) : 0;
    s->pos += left < s->batch ? left : s->batch;
    *produced = 1;
    return MXK_OK;
}

/** Rewinds (prefetch thread): same order again, as upstream's BeforeFirst. */
static mxk_status mnist_rewind(void *p, char *msg) {
    ((mnist_src *)p)->pos = 0;
    return MXK_OK;
}

/** MNISTIter create: reads and checks both files, shuffles, starts the prefetcher. */
static mxk_status mnist_create(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    const char *image, *label;
    int64_t batch, seed, num_parts, part_index, prefetch, num_examples;
    int32_t do_shuffle, flat, silent, round_batch;
    MXK_SDK_CHECK(mxk_sdk_attr_string(attrs, "image", &image, err));
    MXK_SDK_CHECK(mxk_sdk_attr_string(attrs, "label", &label, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "batch_size", 1, INT32_MAX, &batch, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "shuffle", &do_shuffle, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "flat", &flat, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int(attrs, "seed", &seed, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "silent", &silent, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_parts", 1, INT32_MAX, &num_parts, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "part_index", 0, num_parts - 1, &part_index, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "prefetch_buffer", 1, 1024, &prefetch, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "round_batch", &round_batch, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_examples", 0, INT32_MAX, &num_examples, err));

    mnist_src *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "MNISTIter: out of memory");
    char msg[1024];
    idx_part ps = {(uint64_t)num_parts, (uint64_t)part_index};
    if (idx_read_file(image, 3, "MNISTIter image file", idx_part_slice, &ps, &s->img, msg,
                      sizeof msg) != 0 ||
        idx_read_file(label, 1, "MNISTIter label file", idx_part_slice, &ps, &s->lbl, msg,
                      sizeof msg) != 0) {
        mnist_free(s);
        return mxk_sdk_error(err, MXK_ERR_FORMAT, "%s", msg);
    }
    if (s->img.dims[0] != s->lbl.dims[0]) {
        uint32_t ni = s->img.dims[0], nl = s->lbl.dims[0];
        mnist_free(s);
        return mxk_sdk_error(err, MXK_ERR_FORMAT,
                             "MNISTIter: the image file '%s' holds %u images but the label file "
                             "'%s' holds %u labels",
                             image, (unsigned)ni, label, (unsigned)nl);
    }
    uint64_t part_n = s->img.end - s->img.begin;
    if ((uint64_t)num_examples > part_n) {
        mnist_free(s);
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "num_examples %lld is more than the %llu examples of "
                             "'%s' (part %lld of %lld)",
                             (long long)num_examples, (unsigned long long)part_n, image,
                             (long long)part_index, (long long)num_parts);
    }
    s->n = num_examples > 0 ? (uint64_t)num_examples : part_n;
    s->item = s->img.item_size;
    s->batch = (uint32_t)batch;
    s->round_batch = round_batch;
    if (do_shuffle) { /* 4 bytes an example, so only when shuffling */
        s->order = malloc((part_n ? part_n : 1) * sizeof *s->order);
        if (s->order == NULL) {
            mnist_free(s);
            return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "MNISTIter: out of memory");
        }
        for (uint64_t i = 0; i < part_n; i++)
            s->order[i] = (uint32_t)i;
        shuffle(s->order, part_n, (uint32_t)seed);
    }
    mxk_shape dshape = {0}, lshape = mxk_sdk_shape1(batch);
    if (flat) {
        dshape = mxk_sdk_shape2(batch, (int64_t)s->item);
    } else {
        dshape.ndim = 4;
        dshape.dims[0] = batch;
        dshape.dims[1] = 1;
        dshape.dims[2] = s->img.dims[1];
        dshape.dims[3] = s->img.dims[2];
    }
    if (!silent) {
        /* Upstream's line: the partition's count and batch_data_'s shape (FlatTo2D with flat). */
        char shape[128];
        mxk_sdk_log(MXK_LOG_INFO, "MNISTIter: load %llu images, shuffle=%d, shape=%s",
                    (unsigned long long)part_n, do_shuffle,
                    mxk_sdk_shape_format(&dshape, shape, sizeof shape));
        mxk_sdk_log(MXK_LOG_DEBUG, "MNISTIter: part %lld of %lld: examples [%llu, %llu) of %u",
                    (long long)part_index, (long long)num_parts, (unsigned long long)s->img.begin,
                    (unsigned long long)s->img.end, (unsigned)s->img.dims[0]);
    }
    return io_iter_start(s, mnist_free, mnist_produce, mnist_rewind, &dshape, MXK_FLOAT32, &lshape,
                         (uint32_t)prefetch, out, err);
}

/** MNISTIter's attribute schema (names and defaults of upstream's MNISTParam + prefetch). */
static const mxk_attr_def g_mnist_attrs[] = {
    MXK_SDK_ATTR("image", MXK_ATTR_STRING, 0, "./train-images-idx3-ubyte", NULL,
                 "IDX image file (gzip'd or plain); data = pixel byte / 256, in [0, 255/256], "
                 "as upstream (no other scaling or mean subtraction)"),
    MXK_SDK_ATTR("label", MXK_ATTR_STRING, 0, "./train-labels-idx1-ubyte", NULL,
                 "IDX label file (gzip'd or plain)"),
    MXK_SDK_ATTR("batch_size", MXK_ATTR_INT, 0, "128", NULL, "batch size"),
    MXK_SDK_ATTR("shuffle", MXK_ATTR_BOOL, 0, "True", NULL, "shuffle once at creation"),
    MXK_SDK_ATTR("flat", MXK_ATTR_BOOL, 0, "False", NULL,
                 "data as (batch, rows*cols) instead of (batch, 1, rows, cols)"),
    MXK_SDK_ATTR("seed", MXK_ATTR_INT, 0, "0", NULL, "shuffle seed (MT19937)"),
    MXK_SDK_ATTR("silent", MXK_ATTR_BOOL, 0, "False", NULL, "no log line at creation"),
    MXK_SDK_ATTR("num_parts", MXK_ATTR_INT, 0, "1", NULL, "number of partitions"),
    MXK_SDK_ATTR("part_index", MXK_ATTR_INT, 0, "0", NULL, "partition to read"),
    MXK_SDK_ATTR("prefetch_buffer", MXK_ATTR_INT, 0, "4", NULL, "batches prefetched"),
    MXK_SDK_ATTR("round_batch", MXK_ATTR_BOOL, 0, "False", NULL,
                 "pad the last batch from the start of the order (else drop it, as upstream)"),
    MXK_SDK_ATTR("num_examples", MXK_ATTR_INT, 0, "0", NULL,
                 "examples per epoch: the first N of the (shuffled) part; 0: all"),
};

mxk_status io_register_mnist(mxk_registrar *reg, mxk_error_sink *err) {
    return io_register_iter(reg, "MNISTIter",
                            "MNIST-format IDX images and labels (MXNet src/io/iter_mnist.cc)",
                            g_mnist_attrs, MXK_SDK_COUNTOF(g_mnist_attrs), mnist_create, err);
}
