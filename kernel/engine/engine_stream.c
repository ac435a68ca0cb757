/*
 * Streams of GPU workers (upstream src/engine/threaded_engine_perdevice.cc: every
 * GPU worker creates its own stream on its thread, compute streams for the normal
 * and priority pools and copy streams for the copy pool; src/engine/
 * threaded_engine.h, threaded_engine.cc: RunContext carries the stream and an op's
 * OnComplete follows Stream::Wait for synchronous functions).
 *
 * Design
 * - The engine knows no device backend: the stream hooks (engine.h) create,
 *   synchronise and destroy streams; the kernel installs hooks served by the GPU
 *   backend (kernel/memory/device_streams.c).
 * - A worker opens its stream on its own thread when it starts (a backend may bind
 *   the thread to the device there) and closes it when its pool stops, which
 *   happens only once the engine is idle, so no work is queued on it then.
 * - Completion: after a sync function returns, the worker synchronises its stream
 *   before the op finishes, i.e. before the op's variables are released. So when a
 *   variable is granted to the next op, the writes of the previous ones are done,
 *   whatever stream or device the next op uses; memory freed into the storage pool
 *   or a temp space is idle. The wait blocks this worker only: the other workers
 *   of the device (and their streams) keep running. A failed synchronisation (an
 *   asynchronous kernel fault) becomes the op's error, naming the operator, and
 *   reaches whoever waits for what the op wrote, like any error.
 * - Not event-based yet: recording an event per op and letting dependent ops on
 *   other streams wait for it (cudaStreamWaitEvent) would keep the worker from
 *   blocking, but needs events in the device ABI, a per-variable record of the last
 *   writer's event, and host-side readers (copies to host, waits) that wait for
 *   events too. Synchronising per op is what upstream's engine does for synchronous
 *   functions, and keeps every host-visible contract unchanged.
 * - A failed stream creation is not retried: the worker keeps the message, and
 *   every op given to it fails with it (instead of running without a stream, which
 *   a kernel could not tell from a device without streams).
 */
#include "engine_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Formats the device as "gpu(1)" into buf; returns buf. */
static const char *stream_device(const engine_stream *s, char *buf, size_t size) {
    snprintf(buf, size, "%s(%d)", mxk_dev_type_name(s->dev_type), (int)s->dev_id);
    return buf;
}

void engine_stream_open(engine_stream *s, const mxk_engine_stream_hooks *hooks, int32_t dev_type,
                        int32_t dev_id, int is_copy) {
    memset(s, 0, sizeof *s);
    s->dev_type = dev_type;
    s->dev_id = dev_id;
    if (dev_type != MXK_DEV_GPU || hooks == NULL)
        return;
    mxk_error_sink sink;
    mxki_error_sink_clear(&sink);
    void *stream = NULL;
    mxk_status st = hooks->create(dev_type, dev_id, is_copy, &stream, &sink);
    if (st != MXK_OK) {
        s->failed = st;
        s->failed_msg = strdup(sink.msg[0] ? sink.msg : mxk_status_name(st));
        return;
    }
    s->hooks = stream != NULL ? hooks : NULL;
    s->stream = stream;
}

void engine_stream_close(engine_stream *s) {
    if (s->stream != NULL)
        s->hooks->destroy(s->dev_type, s->dev_id, s->stream);
    free(s->failed_msg);
    memset(s, 0, sizeof *s);
}

bool engine_stream_refuse(const engine_stream *s, engine_op *op) {
    if (s == NULL || s->failed == MXK_OK)
        return false;
    char who[768], dev[48], msg[MXK_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s was not run: the worker of %s has no stream: %s",
             engine_op_describe(op, who, sizeof who), stream_device(s, dev, sizeof dev),
             s->failed_msg ? s->failed_msg : "out of memory");
    engine_op_set_error(op, s->failed, msg);
    return true;
}

mxk_status engine_stream_complete(const engine_stream *s, const engine_op *op, mxk_status st,
                                  mxk_error_sink *sink) {
    if (s == NULL || s->stream == NULL)
        return st;
    mxk_error_sink wait;
    mxki_error_sink_clear(&wait);
    mxk_status ws = s->hooks->synchronize(s->dev_type, s->dev_id, s->stream, &wait);
    if (st != MXK_OK || ws == MXK_OK)
        return st; /* a failed function keeps its own error */
    char who[768], dev[48];
    return mxki_sink_set(sink, ws, "%s: its work on %s's stream failed: %s",
                         engine_op_describe(op, who, sizeof who), stream_device(s, dev, sizeof dev),
                         wait.msg[0] ? wait.msg : mxk_status_name(ws));
}
