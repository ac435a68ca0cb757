/*
 * Stream hooks of the engine over the device backends (see device_streams.h).
 * Semantics: MXNet's ThreadedEnginePerDevice, whose GPU workers each create a
 * stream on their device (upstream src/engine/threaded_engine_perdevice.cc,
 * mshadow::NewStream<gpu>) and wait for it after each synchronous function
 * (src/engine/threaded_engine.h, Stream::Wait).
 */
#include "device_streams.h"

#include "device_lookup.h"
#include "engine.h"
#include "error.h"
#include "registry.h"

/** mxk_engine_stream_hooks.create: the backend's stream_create; no stream without one. */
static mxk_status streams_create(int32_t dev_type, int32_t dev_id, int is_copy_worker,
                                 void **stream, mxk_error_sink *err) {
    *stream = NULL;
    const mxk_device_def *def = mxki_registry_device(dev_type);
    if (def == NULL || def->stream_create == NULL)
        return MXK_OK;
    mxk_error_sink inner;
    mxki_error_sink_clear(&inner);
    mxk_status st = def->stream_create(dev_id, stream, &inner);
    if (st == MXK_OK)
        return MXK_OK;
    *stream = NULL;
    char cs[64];
    return mxki_sink_set(err, st, "the %s backend could not create a %s stream on %s: %s",
                         def->name, is_copy_worker ? "copy" : "compute",
                         mxki_ctx_format((mxk_context){dev_type, dev_id}, cs, sizeof cs),
                         inner.msg[0] ? inner.msg : mxk_status_name(st));
}

/** mxk_engine_stream_hooks.destroy: the backend's stream_destroy, when it has one. */
static void streams_destroy(int32_t dev_type, int32_t dev_id, void *stream) {
    const mxk_device_def *def = mxki_registry_device(dev_type);
    if (def != NULL && def->stream_destroy != NULL)
        def->stream_destroy(dev_id, stream);
}

/** mxk_engine_stream_hooks.synchronize: the backend's synchronize, when it has one. */
static mxk_status streams_synchronize(int32_t dev_type, int32_t dev_id, void *stream,
                                      mxk_error_sink *err) {
    const mxk_device_def *def = mxki_registry_device(dev_type);
    if (def == NULL || def->synchronize == NULL)
        return MXK_OK;
    return def->synchronize(dev_id, stream, err);
}

/** The hooks: static, as mxki_engine_set_stream_hooks requires. */
static const mxk_engine_stream_hooks device_stream_hooks = {
    .create = streams_create,
    .destroy = streams_destroy,
    .synchronize = streams_synchronize,
};

void mxki_device_streams_install(void) {
    mxki_engine_set_stream_hooks(&device_stream_hooks);
}
