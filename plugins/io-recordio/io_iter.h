/*
 * The part every iterator of this plugin shares: a prefetcher over a batch
 * source, fixed data/label layouts, and the mxk_iter_def callbacks
 * (abi/mxk_abi_iter.h) on top. Mirrors MXNet's composition of a source iterator
 * with PrefetcherIter (src/io/iter_prefetcher.h) as in iter_mnist.cc /
 * iter_csv.cc's registration.
 */
#ifndef MXK_IO_ITER_H
#define MXK_IO_ITER_H

#include "mxk_sdk.h"
#include "prefetch.h"

/** A running iterator: source, prefetcher, layouts and the current batch. */
typedef struct io_iter {
    void *src;                /**< the source's state */
    void (*src_free)(void *); /**< frees it (after the prefetcher has stopped) */
    prefetcher pf;
    mxk_shape data_shape;  /**< full batch shape of "data" */
    mxk_shape label_shape; /**< full batch shape of "softmax_label" */
    uint32_t batch_size;
    mxk_tensor data_t, label_t; /**< tensors of the current batch */
    const mxk_tensor *data_p[1], *label_p[1];
    mxk_tensor desc_data_t, desc_label_t; /**< layouts for describe (data NULL) */
    const mxk_tensor *desc_data_p[1], *desc_label_p[1];
    const pf_slot *cur; /**< current slot or NULL */
    char *names[2];     /**< data and label names set by io_iter_set_names (owned), or NULL */
    const char *data_name_p[1], *label_name_p[1];
} io_iter;

/** Names of the data and label arrays (MXNet's defaults). */
extern const char *const io_data_names[1];
extern const char *const io_label_names[1];

/**
 * Creates the iterator around `src`, with `prefetch_buffer` slots whose data is
 * `data_dtype` (MXK_FLOAT32 or MXK_UINT8) and whose label is float32, and
 * stores it in *out. On failure calls src_free(src) and reports into err.
 */
mxk_status io_iter_start(void *src, void (*src_free)(void *),
                         mxk_status (*produce)(void *, pf_slot *, int *, char *),
                         mxk_status (*rewind)(void *, char *), const mxk_shape *data_shape,
                         mxk_dtype data_dtype, const mxk_shape *label_shape,
                         uint32_t prefetch_buffer, void **out, mxk_error_sink *err);
/**
 * Renames the data and label arrays (upstream's data_name / label_name; the
 * defaults are io_data_names / io_label_names). Copies the strings. Returns
 * MXK_OK or MXK_ERR_OUT_OF_MEMORY (reported into err). Call before the first
 * describe, on the creating thread.
 */
mxk_status io_iter_set_names(void *it, const char *data_name, const char *label_name,
                             mxk_error_sink *err);
/** mxk_iter_def.destroy. */
void io_iter_destroy(void *it);
/** mxk_iter_def.reset. */
mxk_status io_iter_reset(void *it, mxk_error_sink *err);
/** mxk_iter_def.next. */
mxk_status io_iter_next(void *it, int32_t *has_next, mxk_error_sink *err);
/** mxk_iter_def.current. */
mxk_status io_iter_current(void *it, mxk_iter_batch *batch, mxk_error_sink *err);
/** mxk_iter_def.describe. */
mxk_status io_iter_describe(void *it, mxk_iter_batch *batch, mxk_error_sink *err);

/**
 * Registers an iterator type `name` whose create returns an io_iter (through
 * io_iter_start) and whose other callbacks are the io_iter_* functions above:
 * upstream's MXNET_REGISTER_IO_ITER with a PrefetcherIter body. The registrar
 * copies the definition.
 */
mxk_status io_register_iter(mxk_registrar *reg, const char *name, const char *description,
                            const mxk_attr_def *attrs, uint32_t num_attrs,
                            mxk_status (*create)(const mxk_attrs *attrs, void **out,
                                                 mxk_error_sink *err),
                            mxk_error_sink *err);
/** Registers MNISTIter (mnist_iter.c). */
mxk_status io_register_mnist(mxk_registrar *reg, mxk_error_sink *err);
/** Registers CSVIter (csv_iter.c). */
mxk_status io_register_csv(mxk_registrar *reg, mxk_error_sink *err);
/** Registers ImageRecordIter (image_iter.c). */
mxk_status io_register_image_rec(mxk_registrar *reg, mxk_error_sink *err);

#endif /* MXK_IO_ITER_H */
