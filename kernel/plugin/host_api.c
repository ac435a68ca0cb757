/*
 * The host API handed to plugins (abi/mxk_abi_host.h): logging, engine, storage and
 * resources on the plugin's behalf (see host_api.h).
 */
#include "host_api.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "engine.h"
#include "env.h"
#include "error.h"
#include "storage.h"

static _Thread_local struct {
    int32_t dev_type, dev_id;
    void *stream;
} tl_stream;

void mxki_host_set_current_stream(int32_t dev_type, int32_t dev_id, void *stream) {
    tl_stream.dev_type = dev_type;
    tl_stream.dev_id = dev_id;
    tl_stream.stream = stream;
}

static void *host_current_stream(int32_t dev_type, int32_t dev_id) {
    if (tl_stream.dev_type == dev_type && tl_stream.dev_id == dev_id)
        return tl_stream.stream;
    return NULL;
}

static mxk_status host_error(mxk_error_sink *sink, mxk_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    mxki_sink_vset(sink, code, fmt, ap);
    va_end(ap);
    return code;
}

static const char *host_attr_get(const mxk_attrs *a, const char *key) {
    return mxki_attrs_get(a, key);
}

/*
 * The raw value of `key` into *v for a typed getter writing to `out`. Errors (into
 * err): MXK_ERR_INVALID_ARGUMENT for a NULL key or out, MXK_ERR_NOT_FOUND
 * "attribute '<key>' is not set".
 */
static mxk_status require(const mxk_attrs *a, const char *key, const void *out, const char **v,
                          mxk_error_sink *err) {
    if (key == NULL || out == NULL)
        return mxki_sink_set(err, MXK_ERR_INVALID_ARGUMENT, "attribute getter: the %s is NULL",
                             key == NULL ? "attribute name" : "output pointer");
    *v = mxki_attrs_get(a, key);
    if (*v == NULL)
        return mxki_sink_set(err, MXK_ERR_NOT_FOUND, "attribute '%s' is not set", key);
    return MXK_OK;
}

static mxk_status host_attr_get_int(const mxk_attrs *a, const char *key, int64_t *value,
                                    mxk_error_sink *err) {
    const char *v = NULL;
    mxk_status st = require(a, key, value, &v, err);
    return st != MXK_OK ? st : mxki_parse_int(key, v, value, err);
}

static mxk_status host_attr_get_float(const mxk_attrs *a, const char *key, double *value,
                                      mxk_error_sink *err) {
    const char *v = NULL;
    mxk_status st = require(a, key, value, &v, err);
    return st != MXK_OK ? st : mxki_parse_float(key, v, value, err);
}

static mxk_status host_attr_get_bool(const mxk_attrs *a, const char *key, int32_t *value,
                                     mxk_error_sink *err) {
    const char *v = NULL;
    mxk_status st = require(a, key, value, &v, err);
    return st != MXK_OK ? st : mxki_parse_bool(key, v, value, err);
}

static mxk_status host_attr_get_shape(const mxk_attrs *a, const char *key, mxk_shape *value,
                                      mxk_error_sink *err) {
    const char *v = NULL;
    mxk_status st = require(a, key, value, &v, err);
    return st != MXK_OK ? st : mxki_parse_shape(key, v, value, err);
}

static uint32_t host_attr_count(const mxk_attrs *a) {
    return a ? a->count : 0;
}

static const char *host_attr_key(const mxk_attrs *a, uint32_t i) {
    return a && i < a->count ? a->keys[i] : NULL;
}

static const char *host_attr_value(const mxk_attrs *a, uint32_t i) {
    return a && i < a->count ? a->values[i] : NULL;
}

static mxk_status host_storage_alloc(int32_t dev_type, int32_t dev_id, uint64_t bytes, void **ptr,
                                     mxk_error_sink *err) {
    mxk_context ctx = {dev_type, dev_id};
    mxk_status rc = mxki_storage_alloc(ctx, bytes, ptr);
    if (rc != MXK_OK)
        mxki_sink_set(err, rc, "%s", mxki_last_error_message());
    return rc;
}

static void host_storage_free(int32_t dev_type, int32_t dev_id, void *ptr) {
    mxk_context ctx = {dev_type, dev_id};
    mxki_storage_free(ctx, ptr);
}

static mxk_status host_temp_space(const mxk_op_ctx *ctx, uint64_t bytes, void **ptr,
                                  mxk_error_sink *err) {
    const mxk_op_call_ctx *call = (const mxk_op_call_ctx *)ctx;
    if (ctx == NULL || call->temp_slot == NULL)
        return mxki_sink_set(err, MXK_ERR_STATE,
                             "temp_space: the operator did not request MXK_RESOURCE_TEMP_SPACE");
    const mxk_resource *view;
    mxk_status rc = mxki_resource_prepare(call->temp_slot, bytes, &view, err);
    if (rc == MXK_OK)
        *ptr = view->ptr;
    return rc;
}

/* Adapter from the plugin-facing engine function to the engine's async function. */
typedef struct plugin_push {
    mxk_host_engine_fn fn;
    void *arg;
    void (*arg_free)(void *);
} plugin_push;

static void plugin_push_run(void *arg, const mxk_run_ctx *rctx, mxk_async_handle *done) {
    plugin_push *p = arg;
    p->fn(p->arg, rctx->dev_type, rctx->dev_id, rctx->stream, done);
}

static void plugin_push_free(void *arg) {
    plugin_push *p = arg;
    if (p->arg_free)
        p->arg_free(p->arg);
    free(p);
}

static mxk_status host_engine_push(mxk_host_engine_fn fn, void *arg, void (*arg_free)(void *),
                                   int32_t dev_type, int32_t dev_id,
                                   mxk_engine_var *const *read_vars, uint32_t num_read,
                                   mxk_engine_var *const *write_vars, uint32_t num_write,
                                   int32_t priority, const char *name, mxk_error_sink *err) {
    plugin_push *p = malloc(sizeof *p);
    if (p == NULL || fn == NULL) {
        free(p);
        if (arg_free)
            arg_free(arg);
        return mxki_sink_set(err, fn ? MXK_ERR_OUT_OF_MEMORY : MXK_ERR_INVALID_ARGUMENT,
                             "engine_push: %s", fn ? "out of memory" : "NULL function");
    }
    p->fn = fn;
    p->arg = arg;
    p->arg_free = arg_free;
    mxk_engine_push_desc d;
    memset(&d, 0, sizeof d);
    d.async_fn = plugin_push_run;
    d.arg = p;
    d.arg_free = plugin_push_free;
    d.dev_type = dev_type;
    d.dev_id = dev_id;
    d.read_vars = read_vars;
    d.num_read = num_read;
    d.write_vars = write_vars;
    d.num_write = num_write;
    d.priority = priority;
    d.name = name;
    mxk_status rc = mxki_engine_push(&d);
    if (rc != MXK_OK)
        mxki_sink_set(err, rc, "%s", mxki_last_error_message());
    return rc;
}

static void host_engine_delete_var(mxk_engine_var *var) {
    mxki_engine_delete_var(var, NULL, NULL, MXK_DEV_CPU, 0);
}

static mxk_status host_engine_wait_var(mxk_engine_var *var, mxk_error_sink *err) {
    mxk_status rc = mxki_engine_wait_var(var);
    if (rc != MXK_OK)
        mxki_sink_set(err, rc, "%s", mxki_last_error_message());
    return rc;
}

static mxk_status host_name_list_add(mxk_name_list *l, const char *name, mxk_error_sink *err) {
    return mxki_name_list_add(l, name, err);
}

static const mxk_host_api host_table = {
    .struct_size = sizeof(mxk_host_api),
    .abi_minor = MXK_ABI_MINOR,
    .error = host_error,
    .log = mxki_log,
    .attr_get = host_attr_get,
    .attr_get_int = host_attr_get_int,
    .attr_get_float = host_attr_get_float,
    .attr_get_bool = host_attr_get_bool,
    .attr_get_shape = host_attr_get_shape,
    .attr_count = host_attr_count,
    .attr_key = host_attr_key,
    .attr_value = host_attr_value,
    .name_list_add = host_name_list_add,
    .storage_alloc = host_storage_alloc,
    .storage_free = host_storage_free,
    .temp_space = host_temp_space,
    .random_uniform = mxki_random_uniform,
    .random_normal = mxki_random_normal,
    .random_reserve = mxki_random_reserve,
    .current_stream = host_current_stream,
    .engine_new_var = mxki_engine_new_var,
    .engine_delete_var = host_engine_delete_var,
    .engine_push = host_engine_push,
    .engine_wait_var = host_engine_wait_var,
    .async_complete = mxki_engine_complete,
};

const mxk_host_api *mxki_host_api_table(void) {
    return &host_table;
}
