/*
 * NDArray internals (kernel-internal). The public API is in mxk.h.
 *
 * An NDArray is a view (offset, shape, dtype) of a reference-counted chunk of
 * device memory guarded by one engine variable. Views (slices along axis 0,
 * reshapes) share the chunk and therefore the variable, so work on a view is
 * ordered with work on its parent (MXNet's NDArray::Chunk, include/mxnet/ndarray.h).
 * When the last handle to a chunk is freed, deleting the variable is scheduled on
 * the engine (after every pending use) and its deleter returns the memory to the
 * storage pool.
 */
#ifndef MXK_NDARRAY_H
#define MXK_NDARRAY_H

#include <stdatomic.h>
#include <stdbool.h>

#include "engine.h"
#include "mxk.h"
#include "mxk_abi_op.h"

/** Shared storage of one or more NDArray views. */
typedef struct mxk_ndarray_chunk {
    atomic_uint refcount; /**< number of mxk_ndarray handles using the chunk */
    void *data;           /**< device memory from mxki_storage_alloc (NULL when bytes == 0) */
    uint64_t bytes;
    mxk_context ctx;
    mxk_engine_var *var; /**< guards `data` */
} mxk_ndarray_chunk;

/** Definition of the public opaque handle. */
struct mxk_ndarray {
    mxk_ndarray_chunk *chunk;
    uint64_t offset; /**< byte offset of the first element in chunk->data */
    mxk_shape shape;
    int32_t dtype;
    /** A NumPy 0-d array (shape (), loaded from a V3 record of mx.npx.save), held as
     *  shape (1,) since mxk's ndim 0 means unknown; mxk_ndarray_save writes it back as
     *  0-d (ndarray_io.c). Set only by the loader; views and copies do not inherit it. */
    bool scalar;
};

/** Address of the first element (not synchronised: use inside engine functions). */
static inline void *mxk_ndarray_ptr(const mxk_ndarray *a) {
    return a->chunk->data ? (char *)a->chunk->data + a->offset : NULL;
}

/** The engine variable guarding the array's memory. */
static inline mxk_engine_var *mxk_ndarray_var(const mxk_ndarray *a) {
    return a->chunk->var;
}

/** Size of the array in bytes. */
uint64_t mxki_ndarray_bytes(const mxk_ndarray *a);

/** Fills an ABI tensor view of the array (struct_size set, data = mxk_ndarray_ptr). */
void mxki_ndarray_to_tensor(const mxk_ndarray *a, mxk_tensor *t);

/** True when two arrays use the same memory range start (same chunk and offset). */
static inline int mxk_ndarray_same_memory(const mxk_ndarray *a, const mxk_ndarray *b) {
    return a->chunk == b->chunk && a->offset == b->offset;
}

/**
 * Creates another handle on the same view (shares the chunk: refcount + 1).
 * Used by pushed work to keep arrays alive until it completes. NULL on OOM
 * (last error set).
 */
mxk_ndarray *mxki_ndarray_retain_view(const mxk_ndarray *a);

#endif /* MXK_NDARRAY_H */
