/*
 * io-recordio plugin: entry points (abi/mxk_plugin.h) and the iterator wrapper
 * shared by MNISTIter, CSVIter and ImageRecordIter (io_iter.h).
 *
 * MXNet's iterators are a source (src/io/iter_mnist.cc, src/io/iter_csv.cc +
 * iter_batchloader.h) composed with PrefetcherIter (src/io/iter_prefetcher.h);
 * here each source produces whole batches on the prefetch thread and
 * this file hands them out through the ABI's iterator contract.
 */
#include <stdlib.h>
#include <string.h>

#include "io_iter.h"

const char *const io_data_names[1] = {"data"};
const char *const io_label_names[1] = {"softmax_label"};

/** Static description of the plugin. */
static const mxk_plugin_info g_info = {
    .struct_size = sizeof(mxk_plugin_info),
    .abi_major = MXK_ABI_MAJOR,
    .abi_minor = MXK_ABI_MINOR,
    .min_host_minor = 0,
    .name = "io-recordio",
    .version = "0.1.0",
    .description = "Data iterators: MNISTIter (IDX, gzip'd or plain), CSVIter and ImageRecordIter",
    .provides = MXK_PROVIDES_ITERATORS,
};

MXK_PLUGIN_EXPORT const mxk_plugin_info *mxk_plugin_get_info(void);
MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args, mxk_error_sink *err);

/** Returns the plugin's static description (side-effect free). */
MXK_PLUGIN_EXPORT const mxk_plugin_info *mxk_plugin_get_info(void) {
    return &g_info;
}

/** Initialises the plugin: checks the host table, stores it, registers the iterators. */
MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args,
                                             mxk_error_sink *err) {
    if (args == NULL || args->host == NULL || args->registrar == NULL)
        return MXK_ERR_INVALID_ARGUMENT;
    MXK_SDK_CHECK(mxk_sdk_check_host(args->host, MXK_SDK_HOST_SLOT_END(attr_value), err));
    mxk_sdk_set_host(args->host);
    MXK_SDK_CHECK(io_register_mnist(args->registrar, err));
    MXK_SDK_CHECK(io_register_csv(args->registrar, err));
    MXK_SDK_CHECK(io_register_image_rec(args->registrar, err));
    return MXK_OK;
}

mxk_status io_register_iter(mxk_registrar *reg, const char *name, const char *description,
                            const mxk_attr_def *attrs, uint32_t num_attrs,
                            mxk_status (*create)(const mxk_attrs *attrs, void **out,
                                                 mxk_error_sink *err),
                            mxk_error_sink *err) {
    mxk_iter_def def;
    mxk_sdk_iter_def_init(&def);
    def.name = name;
    def.description = description;
    def.attrs = attrs;
    def.num_attrs = num_attrs;
    def.create = create;
    def.destroy = io_iter_destroy;
    def.reset = io_iter_reset;
    def.next = io_iter_next;
    def.current = io_iter_current;
    def.describe = io_iter_describe;
    return reg->register_iterator(reg, &def, err);
}

/** Fills a CPU tensor header of `dtype` (data set per batch). */
static void tensor_init(mxk_tensor *t, const mxk_shape *shape, mxk_dtype dtype) {
    memset(t, 0, sizeof *t);
    t->struct_size = sizeof *t;
    t->dtype = dtype;
    t->shape = *shape;
    t->dev_type = MXK_DEV_CPU;
    t->dev_id = 0;
}

mxk_status io_iter_start(void *src, void (*src_free)(void *),
                         mxk_status (*produce)(void *, pf_slot *, int *, char *),
                         mxk_status (*rewind)(void *, char *), const mxk_shape *data_shape,
                         mxk_dtype data_dtype, const mxk_shape *label_shape,
                         uint32_t prefetch_buffer, void **out, mxk_error_sink *err) {
    io_iter *it = calloc(1, sizeof *it);
    if (it == NULL) {
        src_free(src);
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "out of memory");
    }
    it->src = src;
    it->src_free = src_free;
    it->data_shape = *data_shape;
    it->label_shape = *label_shape;
    it->batch_size = (uint32_t)data_shape->dims[0];
    tensor_init(&it->data_t, data_shape, data_dtype);
    tensor_init(&it->label_t, label_shape, MXK_FLOAT32);
    it->data_p[0] = &it->data_t;
    it->label_p[0] = &it->label_t;
    tensor_init(&it->desc_data_t, data_shape, data_dtype); /* layout only: data stays NULL */
    tensor_init(&it->desc_label_t, label_shape, MXK_FLOAT32);
    it->data_name_p[0] = io_data_names[0];
    it->label_name_p[0] = io_label_names[0];
    it->desc_data_p[0] = &it->desc_data_t;
    it->desc_label_p[0] = &it->desc_label_t;
    char msg[PF_MSG_MAX];
    pf_source s = {.ctx = src, .produce = produce, .rewind = rewind};
    uint64_t elem = data_dtype == MXK_UINT8 ? 1 : sizeof(float);
    mxk_status st = pf_create(&it->pf, s, prefetch_buffer, mxk_sdk_shape_count(data_shape) * elem,
                              mxk_sdk_shape_count(label_shape), it->batch_size, msg);
    if (st != MXK_OK) {
        src_free(src);
        free(it);
        return mxk_sdk_error(err, st, "%s", msg);
    }
    *out = it;
    return MXK_OK;
}

void io_iter_destroy(void *p) {
    io_iter *it = p;
    if (it == NULL)
        return;
    pf_destroy(&it->pf);
    it->src_free(it->src);
    free(it->names[0]);
    free(it->names[1]);
    free(it);
}

mxk_status io_iter_set_names(void *p, const char *data_name, const char *label_name,
                             mxk_error_sink *err) {
    io_iter *it = p;
    const char *want[2] = {data_name, label_name};
    for (int k = 0; k < 2; k++) {
        free(it->names[k]);
        it->names[k] = strdup(want[k]);
        if (it->names[k] == NULL)
            return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "out of memory");
    }
    it->data_name_p[0] = it->names[0];
    it->label_name_p[0] = it->names[1];
    return MXK_OK;
}

mxk_status io_iter_reset(void *p, mxk_error_sink *err) {
    io_iter *it = p;
    char msg[PF_MSG_MAX];
    it->cur = NULL;
    mxk_status st = pf_reset(&it->pf, msg);
    return st == MXK_OK ? MXK_OK : mxk_sdk_error(err, st, "%s", msg);
}

mxk_status io_iter_next(void *p, int32_t *has_next, mxk_error_sink *err) {
    io_iter *it = p;
    char msg[PF_MSG_MAX];
    it->cur = NULL;
    mxk_status st = pf_next(&it->pf, &it->cur, has_next, msg);
    return st == MXK_OK ? MXK_OK : mxk_sdk_error(err, st, "%s", msg);
}

/** Fills the fields of `b` that describe and current share (tensors from the iterator). */
static void fill_batch(io_iter *it, mxk_iter_batch *b) {
    b->num_data = 1;
    b->data_names = it->data_name_p;
    b->data = it->data_p;
    b->num_label = 1;
    b->label_names = it->label_name_p;
    b->label = it->label_p;
}

mxk_status io_iter_current(void *p, mxk_iter_batch *b, mxk_error_sink *err) {
    io_iter *it = p;
    if (it->cur == NULL)
        return mxk_sdk_error(err, MXK_ERR_STATE, "no current batch: call next first");
    if (b == NULL || b->struct_size < offsetof(mxk_iter_batch, index) + sizeof b->index)
        return mxk_sdk_error(err, MXK_ERR_ABI, "mxk_iter_batch too small");
    it->data_t.data = it->cur->data;
    it->label_t.data = it->cur->label;
    fill_batch(it, b);
    b->pad = it->cur->pad;
    b->num_index = it->batch_size;
    b->index = it->cur->index;
    return MXK_OK;
}

mxk_status io_iter_describe(void *p, mxk_iter_batch *b, mxk_error_sink *err) {
    io_iter *it = p;
    if (b == NULL || b->struct_size < offsetof(mxk_iter_batch, index) + sizeof b->index)
        return mxk_sdk_error(err, MXK_ERR_ABI, "mxk_iter_batch too small");
    fill_batch(it, b);
    b->data = it->desc_data_p;
    b->label = it->desc_label_p;
    b->pad = 0;
    b->num_index = 0;
    b->index = NULL;
    return MXK_OK;
}
