/*
 * mxk plugin ABI 1.0: the data iterator contract.
 *
 * Semantics: MXNet's DataIter (include/mxnet/io.h; upstream
 * docs/static_site/src/pages/api/architecture/note_data_loading.md):
 * create from string attributes, reset (BeforeFirst), next, read the current
 * batch (data, label, pad, index). Errors of a producer thread surface at the
 * next call of next/reset (exception_handling.md, same folder) and stay sticky until the
 * iterator is destroyed or re-created.
 *
 * Ownership: an iterator object is created and destroyed by the plugin; batch
 * tensors live in iterator-owned host (CPU) memory, valid until the next call of
 * next/reset/destroy on that iterator. Threading: one iterator is used by one
 * thread at a time; distinct iterators may be used concurrently.
 */
#ifndef MXK_ABI_ITER_H
#define MXK_ABI_ITER_H

#include "mxk_abi_base.h"
#include "mxk_abi_op.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * A batch (or, from describe, its layout: the same with data pointers NULL).
 * All arrays are owned by the iterator.
 */
typedef struct mxk_iter_batch {
    uint32_t struct_size;
    uint32_t num_data;
    const char *const *data_names; /**< e.g. {"data"} */
    const mxk_tensor *const *data; /**< batch-first tensors on CPU */
    uint32_t num_label;
    const char *const *label_names; /**< e.g. {"softmax_label"} */
    const mxk_tensor *const *label;
    uint32_t pad; /**< trailing examples that are padding */
    uint32_t num_index;
    const uint64_t *index; /**< example ids of the batch, or NULL */
} mxk_iter_batch;

/** A data iterator type. */
typedef struct mxk_iter_def {
    uint32_t struct_size;
    uint32_t abi_minor;
    const char *name; /**< unique, e.g. "MNISTIter" */
    const char *description;
    const mxk_attr_def *attrs; /**< schema; the kernel validates and fills defaults */
    uint32_t num_attrs;
    /** Creates an iterator (read the attributes through the host table). */
    mxk_status (*create)(const mxk_attrs *attrs, void **iter, mxk_error_sink *err);
    /** Destroys it (stops producer threads). */
    void (*destroy)(void *iter);
    /** Rewinds to the first batch (BeforeFirst). */
    mxk_status (*reset)(void *iter, mxk_error_sink *err);
    /** Advances; *has_next = 1 if a batch is now current, 0 at the end of the epoch. */
    mxk_status (*next)(void *iter, int32_t *has_next, mxk_error_sink *err);
    /** Fills `batch` (struct_size preset) with the current batch. */
    mxk_status (*current)(void *iter, mxk_iter_batch *batch, mxk_error_sink *err);
    /** Fills `batch` with names and shapes of data and label (data pointers NULL). */
    mxk_status (*describe)(void *iter, mxk_iter_batch *batch, mxk_error_sink *err);
} mxk_iter_def;

#ifdef __cplusplus
}
#endif

#endif /* MXK_ABI_ITER_H */
