/*
 * Small plugins for the loader tests, one source built into several .so files by
 * the TP_VARIANT macro. They use the raw ABI (not the SDK) so each can break one
 * rule on purpose.
 *
 * Variants:
 *   TP_VALID       "tp-valid": a malloc CPU device + operator TestOp (y = x + 1,
 *                  backend "alpha", aliases test_op and _TestOp, input_var_attrs
 *                  giving its input `__init__` ["one", {}] and `__wd_mult__` 0)
 *                  with an attribute schema.
 *   TP_BACKEND_B   "tp-beta": only a kernel for TestOp, registered under its alias
 *                  test_op (y = x + 2, backend "beta").
 *   TP_MAJOR       "tp-major": built for ABI major 2.
 *   TP_NEWER_MINOR "tp-newer": needs a host minor newer than this one.
 *   TP_OLD_MINOR   "tp-old": short structs (an older minor): op and kernel defs
 *                  end right after their last required slot, and a GPU device
 *                  backend (no streams) ends where ABI 1.3 ended it (before
 *                  host_alloc); the bytes after them hold poison that the kernel
 *                  must never read.
 *   TP_NO_HOST_FREE "tp-nohostfree": a GPU device backend with host_alloc but
 *                  without host_free (rejected).
 *   TP_NO_INIT     "tp-noinit": exports info but no init.
 *   TP_INIT_FAIL   "tp-initfail": registers ShouldVanish, then fails.
 *   TP_DUP_OP      "tp-dup": registers an operator named TestOp (clash).
 *   TP_DUP_ALIAS   "tp-dupalias": an operator whose alias _TestOp is TestOp's alias.
 *   TP_BAD_ALIAS   "tp-badalias": an operator whose alias is not a valid name.
 *   TP_REG_FAIL    "tp-regfail": a registration fails, init still returns OK.
 *   TP_NO_INFO     a library without any mxk entry point.
 */
#include <stdlib.h>
#include <string.h>

#include "mxk_plugin.h"

#ifndef TP_NO_INFO

static __attribute__((unused)) const mxk_host_api *host;

/* y = x + k for float32 (WRITE / INPLACE / ADD honoured). */
static __attribute__((unused)) mxk_status add_k(const mxk_forward_args *a, float k) {
    const mxk_tensor *x = a->in_data[0], *y = a->out_data[0];
    uint64_t n = 1;
    for (int32_t i = 0; i < x->shape.ndim; i++)
        n *= (uint64_t)x->shape.dims[i];
    const float *xs = x->data;
    float *ys = y->data;
    for (uint64_t i = 0; i < n; i++) {
        if (a->req[0] == MXK_REQ_ADD)
            ys[i] += xs[i] + k;
        else if (a->req[0] != MXK_REQ_NULL)
            ys[i] = xs[i] + k;
    }
    return MXK_OK;
}

static mxk_status infer_same(const void *param, mxk_shape *in, uint32_t ni, mxk_shape *out,
                             uint32_t no, mxk_shape *aux, uint32_t na, mxk_error_sink *err) {
    if (in[0].ndim == 0)
        in[0] = out[0];
    else if (out[0].ndim == 0)
        out[0] = in[0];
    return MXK_OK;
}

#if defined(TP_VALID) || defined(TP_OLD_MINOR) || defined(TP_DUP_OP) || defined(TP_INIT_FAIL)
static __attribute__((unused)) mxk_status fwd_alpha(const mxk_op_ctx *ctx, const void *param,
                                                    void *state, const mxk_forward_args *a,
                                                    mxk_error_sink *err) {
    return add_k(a, 1.0f);
}
#endif

#ifdef TP_BACKEND_B
static mxk_status fwd_beta(const mxk_op_ctx *ctx, const void *param, void *state,
                           const mxk_forward_args *a, mxk_error_sink *err) {
    return add_k(a, 2.0f);
}
#endif

#if defined(TP_VALID) || defined(TP_OLD_MINOR) || defined(TP_NO_HOST_FREE)
#define TP_DEVICE
#endif

#ifdef TP_VALID
/* StatefulOp: y = x + 1 with a state object that detects concurrent calls (the ABI
 * promises that calls sharing one state never run at the same time). */
#include <stdatomic.h>
#include <time.h>
typedef struct stateful {
    atomic_int inside;
} stateful;
static mxk_status st_create(const void *param, int32_t dev_type, int32_t dev_id,
                            const mxk_shape *in_shapes, const int32_t *in_types, uint32_t num_in,
                            void **state, mxk_error_sink *err) {
    stateful *s = calloc(1, sizeof *s);
    *state = s;
    return s ? MXK_OK : host->error(err, MXK_ERR_OUT_OF_MEMORY, "oom");
}
static void st_destroy(void *state) {
    free(state);
}
static mxk_status st_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                             const mxk_forward_args *a, mxk_error_sink *err) {
    stateful *s = state;
    if (atomic_fetch_add(&s->inside, 1) != 0) {
        atomic_fetch_sub(&s->inside, 1);
        return host->error(err, MXK_ERR_INTERNAL, "two calls shared the state concurrently");
    }
    struct timespec ts = {0, 2000000};
    nanosleep(&ts, NULL);
    atomic_fetch_sub(&s->inside, 1);
    return add_k(a, 1.0f);
}

/* TestOp's input_var_attrs (ABI 1.3): two key/value pairs for input 0. */
static mxk_status test_var_attrs(const void *param, uint32_t index, mxk_name_list *out,
                                 mxk_error_sink *err) {
    static const char *const kv[] = {"__init__", "[\"one\", {}]", "__wd_mult__", "0"};
    mxk_status st = MXK_OK;
    for (int i = 0; i < 4 && index == 0 && st == MXK_OK; i++)
        st = host->name_list_add(out, kv[i], err);
    return st;
}

#endif

#ifdef TP_DEVICE
/* A malloc-based device for tests that load no cpu-blas (tp-valid's CPU, tp-old's GPU). */
static int32_t dev_count(void) {
    return 1;
}
static mxk_status dev_props(int32_t id, mxk_device_props *p, mxk_error_sink *err) {
    strcpy(p->name, "test cpu");
    p->alignment = 64;
    return MXK_OK;
}
static mxk_status dev_alloc(int32_t id, uint64_t bytes, void **ptr, mxk_error_sink *err) {
    *ptr = aligned_alloc(64, (bytes + 63) / 64 * 64);
    return *ptr ? MXK_OK : host->error(err, MXK_ERR_OUT_OF_MEMORY, "oom");
}
static void dev_free(int32_t id, void *ptr) {
    free(ptr);
}
static mxk_status dev_copy(mxk_copy_kind k, void *dst, int32_t dd, const void *src, int32_t sd,
                           uint64_t bytes, void *stream, mxk_error_sink *err) {
    memcpy(dst, src, bytes);
    return MXK_OK;
}
static mxk_status dev_fill(int32_t id, void *ptr, int32_t dtype, uint64_t count, double v,
                           void *stream, mxk_error_sink *err) {
    if (dtype != MXK_FLOAT32)
        return host->error(err, MXK_ERR_UNSUPPORTED, "test device fills float32 only");
    for (uint64_t i = 0; i < count; i++)
        ((float *)ptr)[i] = (float)v;
    return MXK_OK;
}
#endif

#ifdef TP_NO_HOST_FREE
/* host_alloc of tp-nohostfree, which the registrar must refuse without host_free. */
static mxk_status dev_host_alloc(uint64_t bytes, void **ptr, mxk_error_sink *err) {
    return dev_alloc(0, bytes, ptr, err);
}
#endif

#ifdef TP_VALID
/* A registration-only iterator and transport: the loader tests check that every
 * kind of registration crosses the ABI; their behaviour is tested with the real
 * iterator and KVStore plugins. Each call reports that it is a stub. */
static mxk_status it_create(const mxk_attrs *attrs, void **iter, mxk_error_sink *err) {
    return host->error(err, MXK_ERR_UNSUPPORTED, "TestIter is registration-only");
}
static void it_destroy(void *iter) {}
static mxk_status it_reset(void *iter, mxk_error_sink *err) {
    return MXK_OK;
}
static mxk_status it_next(void *iter, int32_t *has_next, mxk_error_sink *err) {
    *has_next = 0;
    return MXK_OK;
}
static mxk_status it_batch(void *iter, mxk_iter_batch *batch, mxk_error_sink *err) {
    return MXK_OK;
}
static mxk_status tr_create(const mxk_attrs *attrs, void **t, mxk_error_sink *err) {
    return host->error(err, MXK_ERR_UNSUPPORTED, "test_transport is registration-only");
}
static void tr_destroy(void *t) {}
static int32_t tr_rank(void *t) {
    return 0;
}
static int32_t tr_workers(void *t) {
    return 1;
}
static mxk_status tr_init(void *t, const char *key, const mxk_tensor *v, mxk_error_sink *err) {
    return MXK_OK;
}
static void tr_push(void *t, const char *key, const mxk_tensor *v, int32_t prio,
                    mxk_async_handle *done) {
    host->async_complete(done, MXK_OK, NULL);
}
static void tr_pull(void *t, const char *key, const mxk_tensor *out, int32_t prio,
                    mxk_async_handle *done) {
    host->async_complete(done, MXK_OK, NULL);
}
static mxk_status tr_barrier(void *t, mxk_error_sink *err) {
    return MXK_OK;
}
#endif

static const mxk_attr_def test_attrs[] = {
    {sizeof(mxk_attr_def), MXK_ABI_MINOR, "mode", MXK_ATTR_ENUM, 0, "fast", "fast|exact", "how"},
    {sizeof(mxk_attr_def), MXK_ABI_MINOR, "scale", MXK_ATTR_FLOAT, 0, "1.0", NULL, "unused"},
};

static __attribute__((unused)) mxk_op_def make_op(const char *name) {
    mxk_op_def d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.abi_minor = MXK_ABI_MINOR;
    d.name = name;
    d.attrs = test_attrs;
    d.num_attrs = 2;
    d.infer_shape = infer_same;
    return d;
}

MXK_PLUGIN_EXPORT const mxk_plugin_info *mxk_plugin_get_info(void) {
    static const mxk_plugin_info info = {
        .struct_size = sizeof(mxk_plugin_info),
#ifdef TP_MAJOR
        .abi_major = MXK_ABI_MAJOR + 1,
#else
        .abi_major = MXK_ABI_MAJOR,
#endif
        .abi_minor = MXK_ABI_MINOR,
#ifdef TP_NEWER_MINOR
        .min_host_minor = MXK_ABI_MINOR + 1,
#else
        .min_host_minor = 0,
#endif
        .name = TP_NAME,
        .version = "1.2.3",
        .description = "loader test plugin",
        .provides = MXK_PROVIDES_OPERATORS,
    };
    return &info;
}

#ifndef TP_NO_INIT
MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args,
                                             mxk_error_sink *err) {
    host = args->host;
    mxk_registrar *reg = args->registrar;
    (void)reg;
    mxk_status rc = MXK_OK;
#if defined(TP_VALID) || defined(TP_DUP_OP)
    mxk_op_def op = make_op("TestOp");
#ifdef TP_VALID
    static const char *const test_aliases[] = {"test_op", "_TestOp", NULL};
    op.aliases = test_aliases;
    op.input_var_attrs = test_var_attrs;
#endif
    rc = reg->register_op(reg, &op, err);
    mxk_op_kernel_def k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    k.abi_minor = MXK_ABI_MINOR;
    k.op_name = "TestOp";
    k.dev_type = MXK_DEV_CPU;
    k.backend = "alpha";
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.forward = fwd_alpha;
    if (rc == MXK_OK)
        rc = reg->register_kernel(reg, &k, err);
#endif
#ifdef TP_VALID
    mxk_op_def sop = make_op("StatefulOp");
    if (rc == MXK_OK)
        rc = reg->register_op(reg, &sop, err);
    mxk_op_kernel_def sk = k;
    sk.op_name = "StatefulOp";
    sk.create_state = st_create;
    sk.destroy_state = st_destroy;
    sk.forward = st_forward;
    if (rc == MXK_OK)
        rc = reg->register_kernel(reg, &sk, err);
    mxk_device_def dev;
    memset(&dev, 0, sizeof dev);
    dev.struct_size = sizeof dev;
    dev.abi_minor = MXK_ABI_MINOR;
    dev.dev_type = MXK_DEV_CPU;
    dev.name = "cpu";
    dev.device_count = dev_count;
    dev.get_properties = dev_props;
    dev.alloc = dev_alloc;
    dev.free = dev_free;
    dev.copy = dev_copy;
    dev.fill = dev_fill;
    if (rc == MXK_OK)
        rc = reg->register_device(reg, &dev, err);
    mxk_iter_def it = {.struct_size = sizeof it,
                       .abi_minor = MXK_ABI_MINOR,
                       .name = "TestIter",
                       .attrs = test_attrs,
                       .num_attrs = 2,
                       .create = it_create,
                       .destroy = it_destroy,
                       .reset = it_reset,
                       .next = it_next,
                       .current = it_batch,
                       .describe = it_batch};
    if (rc == MXK_OK)
        rc = reg->register_iterator(reg, &it, err);
    mxk_kvstore_transport_def tr = {.struct_size = sizeof tr,
                                    .abi_minor = MXK_ABI_MINOR,
                                    .name = "test_transport",
                                    .create = tr_create,
                                    .destroy = tr_destroy,
                                    .rank = tr_rank,
                                    .num_workers = tr_workers,
                                    .init = tr_init,
                                    .push = tr_push,
                                    .pull = tr_pull,
                                    .barrier = tr_barrier};
    if (rc == MXK_OK)
        rc = reg->register_kvstore_transport(reg, &tr, err);
    /* The option "fail" lets a test check that options reach init. */
    const char *opt = host->attr_get(args->options, "fail");
    if (rc == MXK_OK && opt != NULL)
        rc = host->error(err, MXK_ERR_INVALID_ARGUMENT, "option fail=%s was given", opt);
#endif
#ifdef TP_BACKEND_B
    mxk_op_kernel_def k;
    memset(&k, 0, sizeof k);
    k.struct_size = sizeof k;
    k.abi_minor = MXK_ABI_MINOR;
    k.op_name = "test_op";
    k.dev_type = MXK_DEV_CPU;
    k.backend = "beta";
    k.flags = MXK_KERNEL_SUPPORTS_ADDTO;
    k.forward = fwd_beta;
    rc = reg->register_kernel(reg, &k, err);
#endif
#if defined(TP_OLD_MINOR) || defined(TP_NO_HOST_FREE)
    /* A GPU backend without streams. tp-old: as ABI 1.3 wrote it, poison after the
     * end (host_alloc would be garbage); tp-nohostfree: host_alloc without host_free. */
    struct {
        mxk_device_def def;
    } gpu;
    memset(&gpu, 0xA5, sizeof gpu);
    gpu.def.struct_size = (uint32_t)offsetof(mxk_device_def, host_alloc);
    gpu.def.abi_minor = 3;
    gpu.def.dev_type = MXK_DEV_GPU;
    gpu.def.name = "gpu";
    gpu.def.device_count = dev_count;
    gpu.def.get_properties = dev_props;
    gpu.def.alloc = dev_alloc;
    gpu.def.free = dev_free;
    gpu.def.copy = dev_copy;
    gpu.def.fill = dev_fill;
    gpu.def.stream_create = NULL;
    gpu.def.stream_destroy = NULL;
    gpu.def.synchronize = NULL;
#ifdef TP_NO_HOST_FREE
    gpu.def.struct_size = sizeof gpu.def;
    gpu.def.abi_minor = MXK_ABI_MINOR;
    gpu.def.host_alloc = dev_host_alloc;
    gpu.def.host_free = NULL;
#endif
    rc = reg->register_device(reg, &gpu.def, err);
#endif
#ifdef TP_OLD_MINOR
    /* Structs as an older minor wrote them: short, with poison after the end. */
    struct {
        mxk_op_def def;
    } op;
    memset(&op, 0xA5, sizeof op);
    mxk_op_def tmp = make_op("OldOp");
    size_t op_size = offsetof(mxk_op_def, infer_shape) + sizeof tmp.infer_shape;
    memcpy(&op.def, &tmp, op_size);
    op.def.struct_size = (uint32_t)op_size;
    if (rc == MXK_OK)
        rc = reg->register_op(reg, &op.def, err);
    mxk_op_kernel_def k;
    memset(&k, 0xA5, sizeof k);
    size_t k_size = offsetof(mxk_op_kernel_def, forward) + sizeof k.forward;
    k.struct_size = (uint32_t)k_size;
    k.abi_minor = 0;
    k.op_name = "OldOp";
    k.dev_type = MXK_DEV_CPU;
    k.backend = "old";
    k.priority = 0;
    k.flags = 0; /* no add-to support: the kernel emulates it */
    k.supports = NULL;
    k.create_state = NULL;
    k.destroy_state = NULL;
    k.forward = fwd_alpha;
    if (rc == MXK_OK)
        rc = reg->register_kernel(reg, &k, err);
#endif
#if defined(TP_DUP_ALIAS) || defined(TP_BAD_ALIAS)
    mxk_op_def op = make_op("AliasClash");
#ifdef TP_DUP_ALIAS
    static const char *const clash[] = {"alias_clash", "_TestOp", NULL};
#else
    static const char *const clash[] = {"alias_clash", "bad alias", NULL};
#endif
    op.aliases = clash;
    rc = reg->register_op(reg, &op, err);
#endif
#ifdef TP_INIT_FAIL
    mxk_op_def op = make_op("ShouldVanish");
    reg->register_op(reg, &op, err);
    rc = host->error(err, MXK_ERR_BACKEND, "no accelerator found");
#endif
#ifdef TP_REG_FAIL
    mxk_iter_def it;
    memset(&it, 0, sizeof it);
    it.struct_size = sizeof it;
    it.name = "HalfIter"; /* no slots */
    (void)reg->register_iterator(reg, &it, err);
    mxk_op_def op = make_op("bad name!");
    (void)reg->register_op(reg, &op, err); /* ignored on purpose */
    mxk_op_def good = make_op("RegFailGood");
    (void)reg->register_op(reg, &good, err);
    rc = MXK_OK;
#endif
    return rc;
}
#endif /* TP_NO_INIT */

#else /* TP_NO_INFO */
int tp_not_a_plugin(void);
int tp_not_a_plugin(void) {
    return 42;
}
#endif
