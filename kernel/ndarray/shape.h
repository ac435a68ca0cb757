/*
 * Shape and dtype utilities (kernel-internal).
 */
#ifndef MXK_SHAPE_H
#define MXK_SHAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "mxk.h"

/** Number of elements (product of dims; 0 when ndim is 0 or any dim is 0); UINT64_MAX when
 *  the product overflows (no array can have that many: callers that allocate refuse it). */
uint64_t mxki_shape_size(const mxk_shape *s);

/** True when ndim > 0 and every dim is > 0. */
bool mxki_shape_is_complete(const mxk_shape *s);

/** True when both have the same ndim and dims. */
bool mxki_shape_equal(const mxk_shape *a, const mxk_shape *b);

/** Builds a shape from ndim dims (ndim <= MXK_MAX_NDIM, else ndim is clamped). */
mxk_shape mxki_shape_make(int32_t ndim, const int64_t *dims);

/**
 * Writes "(a,b,c)" (MXNet's tuple form; "()" for unknown) into buf of `size` bytes;
 * returns buf.
 */
const char *mxki_shape_format(const mxk_shape *s, char *buf, size_t size);

/* mxk_dtype_size, mxk_dtype_name and mxk_dev_type_name are public (mxk.h). */

#endif /* MXK_SHAPE_H */
