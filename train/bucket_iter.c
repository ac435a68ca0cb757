/*
 * BucketSentenceIter (python/mxnet/rnn/io.py): encoded sentences padded into
 * buckets of lengths, served as batches of one bucket with the next-token label.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "train_internal.h"

/** Philox streams of the shuffles: the batch order, and each bucket's rows (+ bucket). */
#define STREAM_BATCHES 0x42415443480000ull
#define STREAM_ROWS 0x524f57530000ull

/** One bucket: its padded sentences and their batch arrays. */
typedef struct bucket {
    int64_t key;    /**< the length */
    int64_t count;  /**< sentences */
    float *rows;    /**< count x key, padded with invalid_label */
    int64_t *order; /**< row order (shuffled in place, as upstream's np.random.shuffle) */
    mxk_ndarray *data, *label;
    mxk_shape shape; /**< of data and label */
} bucket;

/** BucketSentenceIter state. */
typedef struct bucket_iter {
    mxkt_iter base;
    bucket *b;
    int64_t nb;
    int64_t (*batches)[2]; /**< (bucket, first row) of every batch */
    int64_t *border;       /**< serving order of the batches (shuffled in place) */
    int64_t nbatches, cursor, cur;
    float invalid_label;
    int32_t time_major, shuffle;
    uint64_t seed, shuffles;
    float *hdata, *hlabel; /**< host staging of one batch */
} bucket_iter;

/** Upstream's reset shuffle: the batch order, then every bucket's rows. */
static void bi_shuffle(bucket_iter *s) {
    uint64_t k = s->shuffles++;
    mxkt_shuffle(s->border, s->nbatches, s->seed, STREAM_BATCHES, k * (uint64_t)s->nbatches);
    for (int64_t i = 0; i < s->nb; i++)
        mxkt_shuffle(s->b[i].order, s->b[i].count, s->seed, STREAM_ROWS + (uint64_t)i,
                     k * (uint64_t)s->b[i].count);
}

/** DataIter.reset: back to the first batch, reshuffled when shuffle is on. */
static mxk_status bi_reset(mxkt_iter *it) {
    bucket_iter *s = (bucket_iter *)it;
    s->cursor = 0;
    if (s->shuffle)
        bi_shuffle(s);
    return MXK_OK;
}

/** DataIter.next: the next batch's data and shifted label in its bucket's arrays. */
static mxk_status bi_next(mxkt_iter *it, int32_t *has_next) {
    bucket_iter *s = (bucket_iter *)it;
    *has_next = 0;
    if (s->cursor >= s->nbatches)
        return MXK_OK;
    const int64_t *at_batch = s->batches[s->border[s->cursor]];
    bucket *b = &s->b[at_batch[0]];
    int64_t first = at_batch[1], bs = it->batch_size, T = b->key;
    for (int64_t r = 0; r < bs; r++) {
        const float *row = b->rows + b->order[first + r] * T;
        for (int64_t t = 0; t < T; t++) {
            int64_t at = s->time_major ? t * bs + r : r * T + t;
            s->hdata[at] = row[t];
            s->hlabel[at] = t + 1 < T ? row[t + 1] : s->invalid_label;
        }
    }
    uint64_t bytes = (uint64_t)(bs * T) * sizeof(float);
    mxk_status st = mxk_ndarray_copy_from_host(b->data, s->hdata, bytes);
    if (st == MXK_OK)
        st = mxk_ndarray_copy_from_host(b->label, s->hlabel, bytes);
    if (st != MXK_OK)
        return mxkt_kernel_error(st, "BucketSentenceIter"); /* the cursor stays: next retries */
    s->cur = at_batch[0];
    s->cursor++;
    it->bucket_key = T;
    it->batch_data_shape = it->batch_label_shape = b->shape;
    *has_next = 1;
    return MXK_OK;
}

/** The current batch (its bucket's arrays; pad 0). */
static mxk_status bi_batch(mxkt_iter *it, mxk_ndarray **data, mxk_ndarray **label, uint32_t *pad) {
    bucket_iter *s = (bucket_iter *)it;
    *data = s->b[s->cur].data;
    *label = s->b[s->cur].label;
    *pad = 0;
    return MXK_OK;
}

/** Frees a BucketSentenceIter. */
static void bi_destroy(mxkt_iter *it) {
    bucket_iter *s = (bucket_iter *)it;
    for (int64_t i = 0; s->b && i < s->nb; i++) {
        free(s->b[i].rows);
        free(s->b[i].order);
        mxk_ndarray_free(s->b[i].data);
        mxk_ndarray_free(s->b[i].label);
    }
    free(s->b);
    free(s->batches);
    free(s->border);
    free(s->hdata);
    free(s->hlabel);
    free(s);
}

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/**
 * The sorted bucket lengths in *keys (*n of them): the given ones, or every length
 * >= 1 that at least batch_size sentences have (upstream's np.bincount choice).
 */
static mxk_status choose_buckets(const mxkt_encoded *e, const mxkt_bucket_iter_options *o,
                                 int64_t **keys, int64_t *n) {
    int64_t maxlen = 0, *counts = NULL;
    if (o->num_buckets == 0) {
        for (int64_t i = 0; i < e->num_sentences; i++)
            if (e->offsets[i + 1] - e->offsets[i] > maxlen)
                maxlen = e->offsets[i + 1] - e->offsets[i];
        counts = calloc((size_t)maxlen + 1, sizeof *counts);
    }
    *keys = malloc((o->num_buckets ? o->num_buckets : (size_t)maxlen + 1) * sizeof **keys);
    if (*keys == NULL || (o->num_buckets == 0 && counts == NULL)) {
        free(counts);
        free(*keys);
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "BucketSentenceIter: out of memory");
    }
    *n = 0;
    if (o->num_buckets) {
        memcpy(*keys, o->buckets, o->num_buckets * sizeof **keys);
        *n = o->num_buckets;
    } else {
        for (int64_t i = 0; i < e->num_sentences; i++)
            counts[e->offsets[i + 1] - e->offsets[i]]++;
        for (int64_t len = 1; len <= maxlen; len++)
            if (counts[len] >= o->batch_size)
                (*keys)[(*n)++] = len;
        free(counts);
    }
    qsort(*keys, (size_t)*n, sizeof **keys, cmp_i64);
    return MXK_OK;
}

/** Index of the first key >= len (bisect_left), n when none. */
static int64_t bisect_left(const int64_t *keys, int64_t n, int64_t len) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = (lo + hi) / 2;
        if (keys[mid] < len)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/**
 * Fills the buckets of `keys` that receive a sentence (upstream drops the others),
 * the batch list and the batch arrays.
 */
static mxk_status fill_buckets(bucket_iter *s, const mxkt_encoded *e, const int64_t *keys,
                               int64_t nkeys, int64_t *discarded) {
    int64_t *count = calloc((size_t)nkeys + 1, sizeof *count);
    s->b = calloc((size_t)nkeys + 1, sizeof *s->b);
    if (count == NULL || s->b == NULL) {
        free(count);
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "BucketSentenceIter: out of memory");
    }
    for (int64_t i = 0; i < e->num_sentences; i++)
        count[bisect_left(keys, nkeys, e->offsets[i + 1] - e->offsets[i])]++;
    *discarded = count[nkeys];
    int64_t nbatches = 0;
    for (int64_t k = 0; k < nkeys; k++) {
        if (count[k] == 0)
            continue;
        bucket *b = &s->b[s->nb++];
        b->key = keys[k];
        b->rows = malloc((size_t)(count[k] * b->key) * sizeof(float));
        b->order = malloc((size_t)count[k] * sizeof(int64_t));
        if (b->rows == NULL || b->order == NULL) {
            free(count);
            return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "BucketSentenceIter: out of memory");
        }
        nbatches += count[k] / s->base.batch_size;
    }
    /* count[k] becomes the index of bucket k among the kept ones */
    for (int64_t k = 0, kept = 0; k < nkeys; k++)
        count[k] = count[k] ? kept++ : -1;
    for (int64_t i = 0; i < e->num_sentences; i++) {
        const int32_t *ids = e->ids + e->offsets[i];
        int64_t len = e->offsets[i + 1] - e->offsets[i], k = bisect_left(keys, nkeys, len);
        if (k == nkeys)
            continue;
        bucket *b = &s->b[count[k]];
        float *row = b->rows + b->count * b->key;
        for (int64_t t = 0; t < b->key; t++)
            row[t] = t < len ? (float)ids[t] : s->invalid_label;
        b->order[b->count] = b->count;
        b->count++;
    }
    free(count);
    s->batches = malloc((size_t)(nbatches ? nbatches : 1) * sizeof *s->batches);
    s->border = malloc((size_t)(nbatches ? nbatches : 1) * sizeof *s->border);
    if (s->batches == NULL || s->border == NULL)
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "BucketSentenceIter: out of memory");
    int64_t bs = s->base.batch_size;
    for (int64_t i = 0; i < s->nb; i++)
        for (int64_t j = 0; j + bs <= s->b[i].count; j += bs) {
            s->border[s->nbatches] = s->nbatches;
            s->batches[s->nbatches][0] = i;
            s->batches[s->nbatches++][1] = j;
        }
    mxk_context cpu = {MXK_DEV_CPU, 0};
    for (int64_t i = 0; i < s->nb; i++) {
        bucket *b = &s->b[i];
        b->shape.ndim = 2;
        b->shape.dims[s->time_major] = bs;
        b->shape.dims[1 - s->time_major] = b->key;
        mxk_status st = mxk_ndarray_create(&b->shape, MXK_FLOAT32, cpu, &b->data);
        if (st == MXK_OK)
            st = mxk_ndarray_create(&b->shape, MXK_FLOAT32, cpu, &b->label);
        if (st != MXK_OK)
            return mxkt_kernel_error(st, "BucketSentenceIter");
    }
    return MXK_OK;
}

/** Creates a BucketSentenceIter. */
mxk_status mxkt_bucket_sentence_iter_create(const mxkt_encoded *sentences,
                                            const mxkt_bucket_iter_options *o, int64_t *discarded,
                                            mxkt_iter **out) {
    const char *layout = o->layout ? o->layout : "NT";
    if (o->batch_size < 1)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "BucketSentenceIter: batch size must be >= 1");
    for (uint32_t i = 0; i < o->num_buckets; i++)
        if (o->buckets[i] < 1)
            return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                              "BucketSentenceIter: bucket lengths must be >= 1");
    if (strcmp(layout, "NT") != 0 && strcmp(layout, "TN") != 0)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "BucketSentenceIter: invalid layout '%s': must be NT (batch major) "
                          "or TN (time major)",
                          layout);
    if (!mxkt_offsets_valid(sentences->offsets, sentences->num_sentences))
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "BucketSentenceIter: bad sentence offsets");
    int64_t *keys = NULL, nkeys = 0, ndiscard = 0;
    MXKT_CHECK(choose_buckets(sentences, o, &keys, &nkeys));
    bucket_iter *s = calloc(1, sizeof *s);
    if (s == NULL) {
        free(keys);
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "BucketSentenceIter: out of memory");
    }
    mxkt_iter *b = &s->base;
    b->reset = bi_reset;
    b->next = bi_next;
    b->batch = bi_batch;
    b->destroy = bi_destroy;
    b->batch_size = o->batch_size;
    s->invalid_label = o->invalid_label;
    s->time_major = layout[0] == 'T';
    s->shuffle = o->shuffle != 0;
    s->seed = o->seed;
    mxk_status st = fill_buckets(s, sentences, keys, nkeys, &ndiscard);
    free(keys);
    if (st == MXK_OK) {
        fprintf(stderr, "WARNING: discarded %lld sentences longer than the largest bucket.\n",
                (long long)ndiscard);
        if (discarded)
            *discarded = ndiscard;
        if (s->nb == 0)
            st = mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                            "BucketSentenceIter: no bucket holds a sentence (%lld discarded)",
                            (long long)ndiscard);
    }
    if (st == MXK_OK) {
        bucket *largest = &s->b[s->nb - 1];
        size_t n = (size_t)(largest->key * o->batch_size);
        s->hdata = malloc(n * sizeof(float));
        s->hlabel = malloc(n * sizeof(float));
        if (s->hdata == NULL || s->hlabel == NULL)
            st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "BucketSentenceIter: out of memory");
        b->default_bucket_key = largest->key;
        b->data_shape = b->label_shape = b->batch_data_shape = b->batch_label_shape =
            largest->shape;
        b->num_batches = s->nbatches;
    }
    if (st != MXK_OK) {
        bi_destroy(b);
        return st;
    }
    if (s->shuffle)
        bi_shuffle(s);
    *out = b;
    return MXK_OK;
}
