/*
 * Data sources of the Module: the in-memory NDArrayIter (python/mxnet/io/io.py,
 * last_batch_handle="pad") and a wrapper of the kernel's data iterators
 * (mxk_data_iter_*: MNISTIter / CSVIter of plugins/io-recordio, upstream
 * src/io/iter_mnist.cc), both behind the small mxkt_iter vtable.
 */
#include <stdlib.h>
#include <string.h>

#include "train_internal.h"

/** NDArrayIter state. */
typedef struct nd_iter {
    mxkt_iter base;
    float *data, *label;
    int64_t num, sample; /**< samples, floats per sample */
    int64_t lwidth;      /**< labels per sample */
    int64_t *order;
    int64_t cursor; /**< first sample of the next batch */
    int32_t shuffle;
    uint64_t seed, shuffles; /**< shuffle seed; permutations drawn so far */
    uint32_t pad;
    mxk_ndarray *bdata, *blabel;
    float *hdata, *hlabel; /**< host staging of one batch */
} nd_iter;

/**
 * NDArrayIter._shuffle_data: Fisher-Yates over the current order, drawn from the
 * Philox stream of `seed` at the counters of the next permutation, so the k-th
 * permutation of an iterator depends only on the seed and k.
 */
static void nd_shuffle(nd_iter *n) {
    mxkt_shuffle(n->order, n->num, n->seed, 0x5348554646ull, n->shuffles++ * (uint64_t)n->num);
}

/** NDArrayIter.reset: back to the first batch, reshuffled when shuffle is on (1.9.1). */
static mxk_status nd_reset(mxkt_iter *it) {
    nd_iter *n = (nd_iter *)it;
    n->cursor = 0;
    if (n->shuffle)
        nd_shuffle(n);
    return MXK_OK;
}

/** NDArrayIter.next: gathers the next batch (padding the last from the start). */
static mxk_status nd_next(mxkt_iter *it, int32_t *has_next) {
    nd_iter *n = (nd_iter *)it;
    *has_next = 0;
    if (n->cursor >= n->num)
        return MXK_OK;
    int64_t bs = it->batch_size;
    for (int64_t i = 0; i < bs; i++) {
        int64_t src = n->order[(n->cursor + i) % n->num];
        memcpy(n->hdata + i * n->sample, n->data + src * n->sample,
               (size_t)n->sample * sizeof(float));
        memcpy(n->hlabel + i * n->lwidth, n->label + src * n->lwidth,
               (size_t)n->lwidth * sizeof(float));
    }
    mxk_status st = mxk_ndarray_copy_from_host(n->bdata, n->hdata, (uint64_t)(bs * n->sample) * 4);
    if (st == MXK_OK)
        st = mxk_ndarray_copy_from_host(n->blabel, n->hlabel, (uint64_t)(bs * n->lwidth) * 4);
    if (st != MXK_OK)
        return mxkt_kernel_error(st, "NDArrayIter"); /* the cursor stays: next retries */
    int64_t left = n->num - n->cursor;
    n->pad = left < bs ? (uint32_t)(bs - left) : 0;
    n->cursor += bs;
    *has_next = 1;
    return MXK_OK;
}

/** The current batch of an NDArrayIter. */
static mxk_status nd_batch(mxkt_iter *it, mxk_ndarray **data, mxk_ndarray **label, uint32_t *pad) {
    nd_iter *n = (nd_iter *)it;
    *data = n->bdata;
    *label = n->blabel;
    *pad = n->pad;
    return MXK_OK;
}

/** Frees an NDArrayIter. */
static void nd_destroy(mxkt_iter *it) {
    nd_iter *n = (nd_iter *)it;
    mxk_ndarray_free(n->bdata);
    mxk_ndarray_free(n->blabel);
    free(n->data);
    free(n->label);
    free(n->order);
    free(n->hdata);
    free(n->hlabel);
    free(n);
}

/** Creates an NDArrayIter over copies of host data. */
mxk_status mxkt_ndarray_iter_create(const float *data, const mxk_shape *data_shape,
                                    const float *label, int64_t label_width, int64_t batch_size,
                                    int32_t shuffle, uint64_t seed, mxkt_iter **out) {
    if (data_shape->ndim < 1 || data_shape->dims[0] < 1 || batch_size < 1 || label_width < 1)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "NDArrayIter: empty data or batch size");
    nd_iter *n = calloc(1, sizeof *n);
    if (n == NULL)
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "NDArrayIter: out of memory");
    n->num = data_shape->dims[0];
    n->sample = mxkt_shape_size(data_shape) / n->num;
    n->lwidth = label_width;
    n->data = malloc((size_t)(n->num * n->sample) * sizeof(float));
    n->label = malloc((size_t)(n->num * label_width) * sizeof(float));
    n->order = malloc((size_t)n->num * sizeof(int64_t));
    n->hdata = malloc((size_t)(batch_size * n->sample) * sizeof(float));
    n->hlabel = malloc((size_t)(batch_size * label_width) * sizeof(float));
    if (!n->data || !n->label || !n->order || !n->hdata || !n->hlabel) {
        nd_destroy(&n->base);
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "NDArrayIter: out of memory");
    }
    memcpy(n->data, data, (size_t)(n->num * n->sample) * sizeof(float));
    if (label)
        memcpy(n->label, label, (size_t)(n->num * label_width) * sizeof(float));
    else
        memset(n->label, 0, (size_t)(n->num * label_width) * sizeof(float));
    for (int64_t i = 0; i < n->num; i++)
        n->order[i] = i;
    n->shuffle = shuffle != 0;
    n->seed = seed;
    if (shuffle)
        nd_shuffle(n);
    mxkt_iter *b = &n->base;
    b->reset = nd_reset;
    b->next = nd_next;
    b->batch = nd_batch;
    b->destroy = nd_destroy;
    b->batch_size = batch_size;
    b->num_batches = (n->num + batch_size - 1) / batch_size;
    b->data_shape = *data_shape;
    b->data_shape.dims[0] = batch_size;
    memset(&b->label_shape, 0, sizeof b->label_shape);
    b->label_shape.ndim = label_width > 1 ? 2 : 1;
    b->label_shape.dims[0] = batch_size;
    b->label_shape.dims[1] = label_width > 1 ? label_width : 0;
    mxk_context cpu = {MXK_DEV_CPU, 0};
    mxk_status st = mxk_ndarray_create(&b->data_shape, MXK_FLOAT32, cpu, &n->bdata);
    if (st == MXK_OK)
        st = mxk_ndarray_create(&b->label_shape, MXK_FLOAT32, cpu, &n->blabel);
    if (st != MXK_OK) {
        nd_destroy(b);
        return mxkt_kernel_error(st, "NDArrayIter");
    }
    *out = b;
    return MXK_OK;
}

/** A kernel iterator behind the vtable. */
typedef struct kernel_iter {
    mxkt_iter base;
    mxk_data_iter *it;
} kernel_iter;

/** DataIter.reset. */
static mxk_status k_reset(mxkt_iter *it) {
    mxk_status st = mxk_data_iter_reset(((kernel_iter *)it)->it);
    return st == MXK_OK ? st : mxkt_kernel_error(st, "data iterator reset");
}

/** DataIter.next. */
static mxk_status k_next(mxkt_iter *it, int32_t *has_next) {
    mxk_status st = mxk_data_iter_next(((kernel_iter *)it)->it, has_next);
    return st == MXK_OK ? st : mxkt_kernel_error(st, "data iterator");
}

/** The current batch (data 0, label 0, pad). */
static mxk_status k_batch(mxkt_iter *it, mxk_ndarray **data, mxk_ndarray **label, uint32_t *pad) {
    uint32_t nd = 0, nl = 0;
    mxk_ndarray *const *d = NULL, *const *l = NULL;
    mxk_status st = mxk_data_iter_batch(((kernel_iter *)it)->it, &nd, &d, &nl, &l, pad);
    if (st != MXK_OK)
        return mxkt_kernel_error(st, "data iterator batch");
    if (nd < 1)
        return mxkt_error(MXK_ERR_STATE, "data iterator gave no data array");
    *data = d[0];
    *label = nl > 0 ? l[0] : NULL;
    return MXK_OK;
}

/** Frees the wrapper and the kernel iterator. */
static void k_destroy(mxkt_iter *it) {
    mxk_data_iter_free(((kernel_iter *)it)->it);
    free(it);
}

/** Wraps a kernel iterator. */
mxk_status mxkt_kernel_iter_wrap(mxk_data_iter *kit, mxkt_iter **out) {
    uint32_t nd = 0, nl = 0;
    const char *const *dn = NULL, *const *ln = NULL;
    const mxk_shape *ds = NULL, *ls = NULL;
    mxk_status st = mxk_data_iter_describe(kit, &nd, &dn, &ds, &nl, &ln, &ls);
    if (st != MXK_OK)
        return mxkt_kernel_error(st, "data iterator describe");
    if (nd < 1)
        return mxkt_error(MXK_ERR_STATE, "data iterator provides no data");
    kernel_iter *k = calloc(1, sizeof *k);
    if (k == NULL)
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    k->it = kit;
    k->base.reset = k_reset;
    k->base.next = k_next;
    k->base.batch = k_batch;
    k->base.destroy = k_destroy;
    k->base.data_shape = ds[0];
    if (nl > 0)
        k->base.label_shape = ls[0];
    k->base.batch_size = ds[0].dims[0];
    *out = &k->base;
    return MXK_OK;
}

/** Destroys an iterator. */
void mxkt_iter_free(mxkt_iter *it) {
    if (it)
        it->destroy(it);
}

/** DataIter.reset through the vtable. */
mxk_status mxkt_iter_reset(mxkt_iter *it) {
    return it->reset(it);
}

/** DataIter.next through the vtable. */
mxk_status mxkt_iter_next(mxkt_iter *it, int32_t *has_next) {
    return it->next(it, has_next);
}
