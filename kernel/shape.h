/*
 * Shape and dtype utilities (kernel-internal).
 */
#ifndef MXK_SHAPE_H
#define MXK_SHAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "mxk_abi_base.h"

/** Number of elements (product of dims; 0 when ndim is 0 or any dim is 0). */
uint64_t mxk_shape_size(const mxk_shape *s);

/** True when ndim > 0 and every dim is > 0. */
bool mxk_shape_is_complete(const mxk_shape *s);

/** True when both have the same ndim and dims. */
bool mxk_shape_equal(const mxk_shape *a, const mxk_shape *b);

/** Builds a shape from ndim dims (ndim <= MXK_MAX_NDIM, else ndim is clamped). */
mxk_shape mxk_shape_make(int32_t ndim, const int64_t *dims);

/**
 * Writes "(a,b,c)" (MXNet's tuple form; "()" for unknown) into buf of `size` bytes;
 * returns buf.
 */
const char *mxk_shape_format(const mxk_shape *s, char *buf, size_t size);

/** Size in bytes of one element of dtype, or 0 for an unknown code. */
size_t mxk_dtype_size(int32_t dtype);

/** Name of a dtype ("float32"), or "unknown". */
const char *mxk_dtype_name(int32_t dtype);

/** Name of a device type ("cpu", "gpu", "cpu_pinned"), or "unknown". */
const char *mxk_dev_type_name(int32_t dev_type);

#endif /* MXK_SHAPE_H */
