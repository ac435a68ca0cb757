/*
 * Data iterators in the kernel (public API in include/mxk.h, "Data iterators"):
 * MXNet's DataIter handle of the C API (src/c_api/c_api.cc MXDataIterCreateIter,
 * MXDataIterNext, MXDataIterGetData/GetLabel/GetPadNum, MXDataIterBeforeFirst)
 * over an iterator type registered by a plugin (abi/mxk_abi_iter.h).
 *
 * The attributes are checked against the type's schema (unknown names list the
 * valid ones; defaults filled) before the plugin's create runs. The plugin's
 * batch tensors are copied into CPU NDArrays owned by this handle, allocated once
 * (from describe's layout) and reused: before each copy the kernel waits until
 * earlier work that reads an array is done (PrefetcherIter's WaitToWrite before
 * recycling, iter_prefetcher.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "error.h"
#include "suggest.h"
#include "mxk.h"
#include "registry.h"

/** One array of a batch: owned name, shape, the NDArray it is copied into. */
typedef struct di_array {
    char *name;
    mxk_shape shape;
    int32_t dtype;
    mxk_ndarray *arr;
} di_array;

/** The public iterator handle. */
struct mxk_data_iter {
    const mxk_iter_entry *entry;
    void *impl;
    uint32_t num_data, num_label;
    di_array *data, *label;
    const char **data_names, **label_names; /**< views of the names, for describe */
    mxk_shape *data_shapes, *label_shapes;
    mxk_ndarray **data_arrs, **label_arrs;
    uint32_t pad;
    int has_batch;
};

/** Element size of a dtype code (0 when unknown). */
static size_t dtype_size(int32_t dtype) {
    switch (dtype) {
    case MXK_FLOAT32:
    case MXK_INT32:
        return 4;
    case MXK_FLOAT64:
    case MXK_INT64:
        return 8;
    case MXK_FLOAT16:
        return 2;
    case MXK_UINT8:
    case MXK_INT8:
        return 1;
    default:
        return 0;
    }
}

/** Iterator type i (an accessor for mxki_suggest_from; table unused). */
static const char *iter_name_at(const void *table, uint32_t i) {
    (void)table;
    return mxk_iterator_name(i);
}

/** Sets the "unknown iterator" error listing the registered types and the nearest. */
static mxk_status unknown_iter(const char *name) {
    char names[1024];
    size_t pos = 0;
    names[0] = '\0';
    for (uint32_t i = 0; pos < sizeof names; i++) {
        const char *n = mxk_iterator_name(i);
        if (n == NULL)
            break;
        pos += (size_t)snprintf(names + pos, sizeof names - pos, i ? ", %s" : "%s", n);
    }
    char hint[256];
    uint32_t count = 0;
    while (mxk_iterator_name(count) != NULL)
        count++;
    mxki_suggest_from(name, NULL, count, iter_name_at, hint, sizeof hint);
    return mxk_set_error(MXK_ERR_NOT_FOUND, "unknown data iterator '%s'; registered: %s%s",
                         name ? name : "(null)",
                         names[0] ? names : "(none: is the io-recordio plugin loaded?)", hint);
}

/** Copies one side (data or label) of describe's layout and allocates its NDArrays. */
static mxk_status take_layout(const char *what, const char *iname, uint32_t n,
                              const char *const *names, const mxk_tensor *const *t, di_array **out,
                              const char ***out_names, mxk_shape **out_shapes,
                              mxk_ndarray ***out_arrs) {
    *out = calloc(n ? n : 1, sizeof **out);
    *out_names = calloc(n ? n : 1, sizeof **out_names);
    *out_shapes = calloc(n ? n : 1, sizeof **out_shapes);
    *out_arrs = calloc(n ? n : 1, sizeof **out_arrs);
    if (!*out || !*out_names || !*out_shapes || !*out_arrs)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of memory", iname);
    for (uint32_t i = 0; i < n; i++) {
        if (names == NULL || names[i] == NULL || t == NULL || t[i] == NULL)
            return mxk_set_error(MXK_ERR_INTERNAL, "%s: describe returned no %s %u", iname, what,
                                 i);
        di_array *a = &(*out)[i];
        a->name = strdup(names[i]);
        if (a->name == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of memory", iname);
        a->shape = t[i]->shape;
        a->dtype = t[i]->dtype;
        if (dtype_size(a->dtype) == 0)
            return mxk_set_error(MXK_ERR_INTERNAL, "%s: %s '%s' has unknown dtype %d", iname, what,
                                 a->name, (int)a->dtype);
        mxk_context cpu = {MXK_DEV_CPU, 0};
        mxk_status st = mxk_ndarray_create(&a->shape, a->dtype, cpu, &a->arr);
        if (st != MXK_OK)
            return st;
        (*out_names)[i] = a->name;
        (*out_shapes)[i] = a->shape;
        (*out_arrs)[i] = a->arr;
    }
    return MXK_OK;
}

mxk_status mxk_data_iter_create(const char *name, uint32_t num_attrs, const char *const *keys,
                                const char *const *vals, mxk_data_iter **out) {
    if (out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_data_iter_create: out is NULL");
    *out = NULL;
    if (num_attrs > 0 && (keys == NULL || vals == NULL))
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_data_iter_create: keys/vals are NULL with %u attributes",
                             num_attrs);
    const mxk_iter_entry *e = name ? mxki_registry_find_iterator(name) : NULL;
    if (e == NULL)
        return unknown_iter(name);
    mxk_attrs *given = mxki_attrs_from_arrays(num_attrs, keys, vals);
    if (given == NULL)
        return mxki_last_error_code() != MXK_OK
                   ? mxki_last_error_code()
                   : mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
    mxk_error_sink sink;
    mxki_error_sink_clear(&sink);
    mxk_attrs *attrs = NULL;
    mxk_status st = mxki_attrs_validate(e->def.attrs, e->def.num_attrs, given, &attrs, &sink);
    mxki_attrs_free(given);
    if (st != MXK_OK)
        return mxki_set_error_from_sink(&sink, "%s: ", name);
    mxk_data_iter *it = calloc(1, sizeof *it);
    if (it == NULL) {
        mxki_attrs_free(attrs);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
    }
    it->entry = e;
    mxki_error_sink_clear(&sink);
    st = e->def.create(attrs, &it->impl, &sink);
    mxki_attrs_free(attrs);
    if (st != MXK_OK) {
        it->impl = NULL;
        free(it);
        return mxki_set_error_from_sink(&sink, "%s: ", name);
    }
    mxk_iter_batch b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    mxki_error_sink_clear(&sink);
    if (e->def.describe(it->impl, &b, &sink) != MXK_OK) {
        st = mxki_set_error_from_sink(&sink, "%s: describe: ", name);
        mxk_data_iter_free(it);
        return st;
    }
    it->num_data = b.num_data;
    it->num_label = b.num_label;
    st = take_layout("data", name, b.num_data, b.data_names, b.data, &it->data, &it->data_names,
                     &it->data_shapes, &it->data_arrs);
    if (st == MXK_OK)
        st = take_layout("label", name, b.num_label, b.label_names, b.label, &it->label,
                         &it->label_names, &it->label_shapes, &it->label_arrs);
    if (st != MXK_OK) {
        mxk_data_iter_free(it);
        return st;
    }
    *out = it;
    return MXK_OK;
}

/** Frees one side's arrays. */
static void free_side(di_array *a, uint32_t n) {
    for (uint32_t i = 0; a && i < n; i++) {
        free(a[i].name);
        mxk_ndarray_free(a[i].arr);
    }
    free(a);
}

void mxk_data_iter_free(mxk_data_iter *it) {
    if (it == NULL)
        return;
    if (it->impl)
        it->entry->def.destroy(it->impl);
    free_side(it->data, it->num_data);
    free_side(it->label, it->num_label);
    free(it->data_names);
    free(it->label_names);
    free(it->data_shapes);
    free(it->label_shapes);
    free(it->data_arrs);
    free(it->label_arrs);
    free(it);
}

mxk_status mxk_data_iter_reset(mxk_data_iter *it) {
    if (it == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_data_iter_reset: it is NULL");
    it->has_batch = 0;
    mxk_error_sink sink;
    mxki_error_sink_clear(&sink);
    if (it->entry->def.reset(it->impl, &sink) != MXK_OK)
        return mxki_set_error_from_sink(&sink, "%s: reset: ", it->entry->def.name);
    return MXK_OK;
}

/** Copies one side of the plugin's batch into the kernel's arrays (shapes must match). */
static mxk_status copy_side(const mxk_data_iter *it, const char *what, di_array *a, uint32_t n,
                            uint32_t got_n, const mxk_tensor *const *t) {
    const char *iname = it->entry->def.name;
    if (got_n != n || (n > 0 && t == NULL))
        return mxk_set_error(MXK_ERR_INTERNAL, "%s: batch has %u %s arrays, describe said %u",
                             iname, got_n, what, n);
    for (uint32_t i = 0; i < n; i++) {
        const mxk_tensor *x = t[i];
        if (x == NULL || x->data == NULL || x->dtype != a[i].dtype ||
            x->shape.ndim != a[i].shape.ndim ||
            memcmp(x->shape.dims, a[i].shape.dims, sizeof(int64_t) * (size_t)x->shape.ndim) != 0)
            return mxk_set_error(MXK_ERR_INTERNAL,
                                 "%s: %s array '%s' of the batch does not match the described "
                                 "layout (or has no data)",
                                 iname, what, a[i].name);
        mxk_status st = mxk_ndarray_wait_to_write(a[i].arr);
        void *dst = NULL;
        if (st == MXK_OK)
            st = mxk_ndarray_data(a[i].arr, &dst);
        if (st != MXK_OK)
            return st;
        memcpy(dst, x->data, (size_t)mxk_ndarray_size(a[i].arr) * dtype_size(a[i].dtype));
    }
    return MXK_OK;
}

mxk_status mxk_data_iter_next(mxk_data_iter *it, int32_t *has_next) {
    if (it == NULL || has_next == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_data_iter_next: %s is NULL",
                             it == NULL ? "it" : "has_next");
    *has_next = 0;
    it->has_batch = 0;
    const char *iname = it->entry->def.name;
    mxk_error_sink sink;
    mxki_error_sink_clear(&sink);
    int32_t hn = 0;
    if (it->entry->def.next(it->impl, &hn, &sink) != MXK_OK)
        return mxki_set_error_from_sink(&sink, "%s: next: ", iname);
    if (!hn)
        return MXK_OK;
    mxk_iter_batch b;
    memset(&b, 0, sizeof b);
    b.struct_size = sizeof b;
    mxki_error_sink_clear(&sink);
    if (it->entry->def.current(it->impl, &b, &sink) != MXK_OK)
        return mxki_set_error_from_sink(&sink, "%s: current batch: ", iname);
    mxk_status st = copy_side(it, "data", it->data, it->num_data, b.num_data, b.data);
    if (st == MXK_OK)
        st = copy_side(it, "label", it->label, it->num_label, b.num_label, b.label);
    if (st != MXK_OK)
        return st;
    it->pad = b.pad;
    it->has_batch = 1;
    *has_next = 1;
    return MXK_OK;
}

mxk_status mxk_data_iter_batch(mxk_data_iter *it, uint32_t *num_data, mxk_ndarray *const **data,
                               uint32_t *num_label, mxk_ndarray *const **label, uint32_t *pad) {
    if (it == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_data_iter_batch: it is NULL");
    if (!it->has_batch)
        return mxk_set_error(MXK_ERR_STATE,
                             "%s: no current batch (call mxk_data_iter_next until it reports one)",
                             it->entry->def.name);
    if (num_data)
        *num_data = it->num_data;
    if (data)
        *data = it->data_arrs;
    if (num_label)
        *num_label = it->num_label;
    if (label)
        *label = it->label_arrs;
    if (pad)
        *pad = it->pad;
    return MXK_OK;
}

mxk_status mxk_data_iter_describe(mxk_data_iter *it, uint32_t *num_data,
                                  const char *const **data_names, const mxk_shape **data_shapes,
                                  uint32_t *num_label, const char *const **label_names,
                                  const mxk_shape **label_shapes) {
    if (it == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_data_iter_describe: it is NULL");
    if (num_data)
        *num_data = it->num_data;
    if (data_names)
        *data_names = it->data_names;
    if (data_shapes)
        *data_shapes = it->data_shapes;
    if (num_label)
        *num_label = it->num_label;
    if (label_names)
        *label_names = it->label_names;
    if (label_shapes)
        *label_shapes = it->label_shapes;
    return MXK_OK;
}
