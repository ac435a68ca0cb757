/*
 * Shapes: validation, element counts and "(a,b)" formatting (see shape.h).
 */
#include "shape.h"

#include <stdio.h>
#include <string.h>

uint64_t mxki_shape_size(const mxk_shape *s) {
    if (s->ndim <= 0)
        return 0;
    uint64_t n = 1;
    for (int32_t i = 0; i < s->ndim; i++) {
        if (s->dims[i] <= 0)
            return 0;
        uint64_t d = (uint64_t)s->dims[i];
        n = n > UINT64_MAX / d ? UINT64_MAX : n * d;
    }
    return n;
}

bool mxki_shape_is_complete(const mxk_shape *s) {
    if (s->ndim <= 0)
        return false;
    for (int32_t i = 0; i < s->ndim; i++)
        if (s->dims[i] <= 0)
            return false;
    return true;
}

bool mxki_shape_equal(const mxk_shape *a, const mxk_shape *b) {
    if (a->ndim != b->ndim)
        return false;
    for (int32_t i = 0; i < a->ndim; i++)
        if (a->dims[i] != b->dims[i])
            return false;
    return true;
}

mxk_shape mxki_shape_make(int32_t ndim, const int64_t *dims) {
    mxk_shape s;
    memset(&s, 0, sizeof s);
    if (ndim < 0)
        ndim = 0;
    if (ndim > MXK_MAX_NDIM)
        ndim = MXK_MAX_NDIM;
    s.ndim = ndim;
    for (int32_t i = 0; i < ndim; i++)
        s.dims[i] = dims[i];
    return s;
}

const char *mxki_shape_format(const mxk_shape *s, char *buf, size_t size) {
    size_t pos = 0;
    if (size == 0)
        return buf;
    buf[0] = '\0';
    pos += (size_t)snprintf(buf + pos, size - pos, "(");
    for (int32_t i = 0; i < s->ndim && pos < size; i++)
        pos += (size_t)snprintf(buf + pos, size - pos, i ? ",%lld" : "%lld", (long long)s->dims[i]);
    if (pos < size)
        snprintf(buf + pos, size - pos, ")");
    return buf;
}

size_t mxk_dtype_size(int32_t dtype) {
    switch (dtype) {
    case MXK_FLOAT32:
        return 4;
    case MXK_FLOAT64:
        return 8;
    case MXK_FLOAT16:
        return 2;
    case MXK_UINT8:
        return 1;
    case MXK_INT32:
        return 4;
    case MXK_INT8:
        return 1;
    case MXK_INT64:
        return 8;
    default:
        return 0;
    }
}

const char *mxk_dtype_name(int32_t dtype) {
    switch (dtype) {
    case MXK_FLOAT32:
        return "float32";
    case MXK_FLOAT64:
        return "float64";
    case MXK_FLOAT16:
        return "float16";
    case MXK_UINT8:
        return "uint8";
    case MXK_INT32:
        return "int32";
    case MXK_INT8:
        return "int8";
    case MXK_INT64:
        return "int64";
    default:
        return "unknown";
    }
}

const char *mxk_dev_type_name(int32_t dev_type) {
    switch (dev_type) {
    case MXK_DEV_CPU:
        return "cpu";
    case MXK_DEV_GPU:
        return "gpu";
    case MXK_DEV_CPU_PINNED:
        return "cpu_pinned";
    default:
        return "unknown";
    }
}
