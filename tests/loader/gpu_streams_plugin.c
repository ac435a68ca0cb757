/*
 * "tp-gpustreams": a fake GPU for test_gpu_streams.c, the ABI 1.4 way (raw ABI):
 * a device backend over host memory with streams and pinned memory, and two
 * operators with GPU kernels only:
 *   StreamProbe  y = x + 1, after checking that ctx->stream is a stream that the
 *                calling thread created and that host->current_stream returns it
 *                (MXK_ERR_INTERNAL naming the broken promise otherwise);
 *   StreamFault  y = x + 1, and marks its stream faulty: the next synchronize of the
 *                stream fails as an asynchronous kernel fault would.
 * Streams and pinned blocks are counted; tp_gpu_counts (exported) reads the counts.
 * Semantics checked: MXNet's ThreadedEnginePerDevice GPU workers (upstream
 * src/engine/threaded_engine_perdevice.cc), PinnedMemoryStorage.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_plugin.h"

static const mxk_host_api *host;

/** A fake stream: its creator thread and whether the work queued on it faulted. */
typedef struct tp_stream {
    pthread_t creator;
    atomic_int fault;
} tp_stream;

/** Counts of streams and pinned blocks. */
static atomic_int streams_created, streams_destroyed, pinned_allocs, pinned_frees;

/** Reads the counts (for the test program, through dlsym). */
MXK_PLUGIN_EXPORT void tp_gpu_counts(int *created, int *destroyed, int *pinned, int *unpinned);
MXK_PLUGIN_EXPORT void tp_gpu_counts(int *created, int *destroyed, int *pinned, int *unpinned) {
    *created = atomic_load(&streams_created);
    *destroyed = atomic_load(&streams_destroyed);
    *pinned = atomic_load(&pinned_allocs);
    *unpinned = atomic_load(&pinned_frees);
}

/** device_count: one GPU. */
static int32_t dev_count(void) {
    return 1;
}

/** get_properties: a name and 64-byte alignment. */
static mxk_status dev_props(int32_t id, mxk_device_props *p, mxk_error_sink *err) {
    strcpy(p->name, "tp-gpustreams");
    p->alignment = 64;
    return MXK_OK;
}

/** alloc: host memory standing in for device memory. */
static mxk_status dev_alloc(int32_t id, uint64_t bytes, void **ptr, mxk_error_sink *err) {
    *ptr = aligned_alloc(64, (bytes + 63) / 64 * 64);
    return *ptr ? MXK_OK : host->error(err, MXK_ERR_OUT_OF_MEMORY, "out of memory");
}

/** free. */
static void dev_free(int32_t id, void *ptr) {
    free(ptr);
}

/** copy: memcpy, whatever the direction. */
static mxk_status dev_copy(mxk_copy_kind k, void *dst, int32_t dd, const void *src, int32_t sd,
                           uint64_t bytes, void *stream, mxk_error_sink *err) {
    memcpy(dst, src, bytes);
    return MXK_OK;
}

/** fill: float32 only. */
static mxk_status dev_fill(int32_t id, void *ptr, int32_t dtype, uint64_t count, double v,
                           void *stream, mxk_error_sink *err) {
    if (dtype != MXK_FLOAT32)
        return host->error(err, MXK_ERR_UNSUPPORTED, "tp-gpustreams fills float32 only");
    for (uint64_t i = 0; i < count; i++)
        ((float *)ptr)[i] = (float)v;
    return MXK_OK;
}

/** stream_create: a stream owned by the calling thread. */
static mxk_status dev_stream_create(int32_t id, void **stream, mxk_error_sink *err) {
    tp_stream *s = calloc(1, sizeof *s);
    if (s == NULL)
        return host->error(err, MXK_ERR_OUT_OF_MEMORY, "out of memory");
    s->creator = pthread_self();
    atomic_fetch_add(&streams_created, 1);
    *stream = s;
    return MXK_OK;
}

/** stream_destroy. */
static void dev_stream_destroy(int32_t id, void *stream) {
    atomic_fetch_add(&streams_destroyed, 1);
    free(stream);
}

/** synchronize: reports (once) the fault that StreamFault left on the stream. */
static mxk_status dev_synchronize(int32_t id, void *stream, mxk_error_sink *err) {
    tp_stream *s = stream;
    if (s != NULL && atomic_exchange(&s->fault, 0))
        return host->error(err, MXK_ERR_BACKEND,
                           "tp-gpustreams: an illegal memory access was encountered");
    return MXK_OK;
}

/** host_alloc: counted host memory. */
static mxk_status dev_host_alloc(uint64_t bytes, void **ptr, mxk_error_sink *err) {
    mxk_status st = dev_alloc(0, bytes, ptr, err);
    if (st == MXK_OK)
        atomic_fetch_add(&pinned_allocs, 1);
    return st;
}

/** host_free. */
static void dev_host_free(void *ptr) {
    if (ptr != NULL)
        atomic_fetch_add(&pinned_frees, 1);
    free(ptr);
}

/** infer_shape: y has x's shape. */
static mxk_status infer_same(const void *param, mxk_shape *in, uint32_t ni, mxk_shape *out,
                             uint32_t no, mxk_shape *aux, uint32_t na, mxk_error_sink *err) {
    if (in[0].ndim == 0)
        in[0] = out[0];
    else if (out[0].ndim == 0)
        out[0] = in[0];
    return MXK_OK;
}

/** y = x + 1 (float32; WRITE / INPLACE; the kernel has no add-to). */
static void add_one(const mxk_forward_args *a) {
    const mxk_tensor *x = a->in_data[0], *y = a->out_data[0];
    uint64_t n = 1;
    for (int32_t i = 0; i < x->shape.ndim; i++)
        n *= (uint64_t)x->shape.dims[i];
    for (uint64_t i = 0; i < n && a->req[0] != MXK_REQ_NULL; i++)
        ((float *)y->data)[i] = ((const float *)x->data)[i] + 1.0f;
}

/** Checks the kernel's stream (see the file comment); MXK_OK or MXK_ERR_INTERNAL. */
static mxk_status check_stream(const mxk_op_ctx *ctx, mxk_error_sink *err) {
    const tp_stream *s = ctx->stream;
    if (s == NULL)
        return host->error(err, MXK_ERR_INTERNAL, "ctx->stream is NULL");
    if (host->current_stream(MXK_DEV_GPU, ctx->dev_id) != ctx->stream)
        return host->error(err, MXK_ERR_INTERNAL, "host->current_stream is not ctx->stream");
    if (host->current_stream(MXK_DEV_CPU, 0) != NULL)
        return host->error(err, MXK_ERR_INTERNAL, "the CPU has a current stream");
    if (!pthread_equal(s->creator, pthread_self()))
        return host->error(err, MXK_ERR_INTERNAL, "ctx->stream was created by another thread");
    return MXK_OK;
}

/** StreamProbe's GPU kernel. */
static mxk_status probe_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                                const mxk_forward_args *a, mxk_error_sink *err) {
    mxk_status st = check_stream(ctx, err);
    if (st == MXK_OK)
        add_one(a);
    return st;
}

/** StreamFault's GPU kernel: returns at once, as if its launch had faulted later. */
static mxk_status fault_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                                const mxk_forward_args *a, mxk_error_sink *err) {
    mxk_status st = check_stream(ctx, err);
    if (st == MXK_OK) {
        add_one(a);
        atomic_store(&((tp_stream *)ctx->stream)->fault, 1);
    }
    return st;
}

/** Registers operator `name` (one input, one output) and its GPU kernel. */
static mxk_status register_gpu_op(mxk_registrar *reg, const char *name,
                                  mxk_status (*forward)(const mxk_op_ctx *, const void *, void *,
                                                        const mxk_forward_args *, mxk_error_sink *),
                                  mxk_error_sink *err) {
    mxk_op_def d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.abi_minor = MXK_ABI_MINOR;
    d.name = name;
    d.infer_shape = infer_same;
    mxk_status rc = reg->register_op(reg, &d, err);
    mxk_op_kernel_def k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    k.abi_minor = MXK_ABI_MINOR;
    k.op_name = name;
    k.dev_type = MXK_DEV_GPU;
    k.backend = "tp-gpustreams";
    k.forward = forward;
    return rc == MXK_OK ? reg->register_kernel(reg, &k, err) : rc;
}

/** Constant description. */
MXK_PLUGIN_EXPORT const mxk_plugin_info *mxk_plugin_get_info(void) {
    static const mxk_plugin_info info = {
        .struct_size = sizeof(mxk_plugin_info),
        .abi_major = MXK_ABI_MAJOR,
        .abi_minor = MXK_ABI_MINOR,
        .min_host_minor = 4,
        .name = "tp-gpustreams",
        .version = "1.0.0",
        .description = "fake GPU with streams and pinned memory",
        .provides = MXK_PROVIDES_OPERATORS | MXK_PROVIDES_KERNELS | MXK_PROVIDES_DEVICES,
    };
    return &info;
}

/** Registers the GPU backend and the two operators. */
MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args,
                                             mxk_error_sink *err) {
    host = args->host;
    mxk_registrar *reg = args->registrar;
    mxk_device_def dev;
    memset(&dev, 0, sizeof dev);
    dev.struct_size = sizeof dev;
    dev.abi_minor = MXK_ABI_MINOR;
    dev.dev_type = MXK_DEV_GPU;
    dev.name = "gpu";
    dev.device_count = dev_count;
    dev.get_properties = dev_props;
    dev.alloc = dev_alloc;
    dev.free = dev_free;
    dev.copy = dev_copy;
    dev.fill = dev_fill;
    dev.stream_create = dev_stream_create;
    dev.stream_destroy = dev_stream_destroy;
    dev.synchronize = dev_synchronize;
    dev.host_alloc = dev_host_alloc;
    dev.host_free = dev_host_free;
    mxk_status rc = reg->register_device(reg, &dev, err);
    if (rc == MXK_OK)
        rc = register_gpu_op(reg, "StreamProbe", probe_forward, err);
    if (rc == MXK_OK)
        rc = register_gpu_op(reg, "StreamFault", fault_forward, err);
    return rc;
}
