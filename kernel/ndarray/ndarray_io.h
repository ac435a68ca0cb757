/*
 * NDArray internals shared by ndarray.c, ndarray_io.c, the fuzz target and tests
 * (kernel-internal; not part of the public API).
 *
 * The NDArray list file format is MXNet's (.params), upstream src/ndarray/ndarray.cc
 * (NDArray::Save/Load/LegacyLoad), include/mxnet/tuple.h (TShape::Save/Load),
 * include/mxnet/base.h (Context::Save/Load). All integers are little-endian:
 *
 *   uint64 0x112 | uint64 reserved (0) | uint64 N | N records | uint64 K (0 or N) |
 *   K names (uint64 length + bytes, no terminator)
 *
 * A record starts with a uint32 that is either a magic or, for legacy records, the
 * number of dimensions:
 *   V2 0xF993FAC9 / V3 0xF993FACA: int32 storage type (0 dense), int32 ndim,
 *       ndim x int64 dims, [ndim 0: record ends], int32 dev_type, int32 dev_id,
 *       int32 dtype, elements x dtype size bytes of data (C order).
 *   V1 0xF993FAC8: as V2 without the storage type.
 *   V3 records are written in NumPy shape semantics (mx.npx.save): ndim -1 is the
 *       unknown shape, ndim 0 a 0-d scalar with one element of data, a dim 0 a
 *       zero size; MXNet loads them only with NumPy semantics on (mx.npx.load),
 *       and V2 records only with them off (mx.nd.load).
 *   legacy (no magic): the uint32 is ndim, then ndim x uint32 dims, [ndim 0: record
 *       ends], then context, dtype and data as above.
 */
#ifndef MXK_NDARRAY_IO_H
#define MXK_NDARRAY_IO_H

#include <stddef.h>
#include <stdint.h>

#include "mxk.h"

/** Magic of an NDArray list file (first uint64). */
#define MXK_NDARRAY_LIST_MAGIC 0x112u
/** Record magics: V1 (int64 shapes, no storage type), V2 (storage type), V3 (numpy shape). */
#define MXK_NDARRAY_V1_MAGIC 0xF993FAC8u
#define MXK_NDARRAY_V2_MAGIC 0xF993FAC9u
#define MXK_NDARRAY_V3_MAGIC 0xF993FACAu
/** Largest ndim a record may claim before it is malformed (MXNet's own bound). */
#define MXK_NDARRAY_FILE_MAX_NDIM 32

/**
 * Creates an array with no memory and the unknown shape (ndim 0): what an empty
 * record of a list file loads as (MXNet's `NDArray()`, is_none). It has an engine
 * variable, so waits and saves work; size 0; data pointer NULL.
 * Errors: as mxk_ndarray_create for dtype and ctx. Thread-safe.
 */
mxk_status mxki_ndarray_create_empty(int32_t dtype, mxk_context ctx, mxk_ndarray **out);

/* mxk_ndarray_load_buffer (parse a list in memory) is public: mxk.h. */

/**
 * Serialises arrays (names may be NULL) into a new malloc'd buffer, byte-identical
 * to what mxk_ndarray_save writes (V2 records, or V3 records for every array when
 * one of them is a 0-d scalar, so that mx.npx.load reads the list as mx.npx.save
 * wrote it); *out is freed by the caller with free().
 * Waits for pending writes of every array first and reports their errors.
 * Errors: MXK_ERR_INVALID_ARGUMENT (NULL array or name), MXK_ERR_OUT_OF_MEMORY,
 * errors of pending work. Thread-safe.
 */
mxk_status mxki_ndarray_save_buffer(uint32_t num, mxk_ndarray *const *arrays,
                                    const char *const *names, uint8_t **out, size_t *out_size);

#endif /* MXK_NDARRAY_IO_H */
