/*
 * onednn plugin: the engine, per-thread streams, execution with mxk's thread
 * budget, plain memory descriptors, scratch buffers and error translation
 * (oneDNN 2.x C API, include/dnnl.h).
 */
#include "onednn.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dnnl_debug.h>

static dnnl_engine_t g_engine;
static dnnl_primitive_attr_t g_attr; /* user-managed scratchpad (dn_attr) */

/** Per-thread state: the thread's stream and its scratch buffers. */
typedef struct dn_thread {
    dnnl_stream_t stream;
    void *scratch[4];
    size_t scratch_bytes[4];
} dn_thread;

/*
 * Threads. oneDNN 2.x fixes the thread count of many primitives when their
 * descriptor is created (from omp_get_max_threads() of the creating thread) and
 * starts teams of that size whatever the executing thread's setting, so the budget
 * is applied at both ends: every creation runs with the calling thread's OpenMP
 * count set to the budget last seen (g_budget: ctx->num_threads of the latest
 * execution, before any the online CPUs or MXK_NUM_THREADS), and executions are
 * serialised (g_exec_mu) with a team of the budget, so the engine workers running
 * primitives never have more than one team at a time.
 */
/* The OpenMP 4.5 C API of the runtime oneDNN runs on (libgomp, linked), declared here
 * rather than through the compiler's omp.h, which under clang belongs to another
 * runtime. */
extern void omp_set_num_threads(int num_threads);

static pthread_mutex_t g_exec_mu = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int g_budget;

void dn_threads_for_create(void) {
    int n = g_budget;
    if (n <= 0) {
        const char *env = getenv("MXK_NUM_THREADS");
        long v = env ? strtol(env, NULL, 10) : 0;
        if (v <= 0)
            v = sysconf(_SC_NPROCESSORS_ONLN);
        n = v > 0 && v <= 256 ? (int)v : 1;
    }
    omp_set_num_threads(n);
}

static pthread_key_t g_thread_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

static void thread_free(void *p) {
    dn_thread *t = p;
    if (t->stream)
        dnnl_stream_destroy(t->stream);
    for (int i = 0; i < 4; i++)
        free(t->scratch[i]);
    free(t);
}

static void make_key(void) {
    pthread_key_create(&g_thread_key, thread_free);
}

/* The calling thread's state, created on first use; NULL when out of memory. */
static dn_thread *this_thread(void) {
    pthread_once(&g_key_once, make_key);
    dn_thread *t = pthread_getspecific(g_thread_key);
    if (t == NULL) {
        t = calloc(1, sizeof *t);
        if (t == NULL || pthread_setspecific(g_thread_key, t) != 0) {
            free(t);
            return NULL;
        }
    }
    return t;
}

mxk_status dn_check(dnnl_status_t st, const char *what, mxk_error_sink *err) {
    if (st == dnnl_success)
        return MXK_OK;
    mxk_status code = st == dnnl_out_of_memory   ? MXK_ERR_OUT_OF_MEMORY
                      : st == dnnl_unimplemented ? MXK_ERR_UNSUPPORTED
                                                 : MXK_ERR_INTERNAL;
    return mxk_sdk_error(err, code, "%s: oneDNN %s", what, dnnl_status2str(st));
}

mxk_status dn_init(mxk_error_sink *err) {
    DN_CHECK(dnnl_engine_create(&g_engine, dnnl_cpu, 0), "creating the CPU engine", err);
    DN_CHECK(dnnl_primitive_attr_create(&g_attr), "creating the primitive attributes", err);
    DN_CHECK(dnnl_primitive_attr_set_scratchpad_mode(g_attr, dnnl_scratchpad_mode_user),
             "setting the scratchpad mode", err);
    return MXK_OK;
}

void dn_shutdown(void) {
    if (g_attr)
        dnnl_primitive_attr_destroy(g_attr);
    if (g_engine)
        dnnl_engine_destroy(g_engine);
    g_attr = NULL;
    g_engine = NULL;
}

dnnl_engine_t dn_engine(void) {
    return g_engine;
}

int64_t dn_shape_size(const mxk_shape *s) {
    int64_t n = 1;
    for (int32_t i = 0; i < s->ndim; i++)
        n *= (int64_t)s->dims[i];
    return n;
}

mxk_status dn_md_plain(dnnl_memory_desc_t *md, int ndims, const dnnl_dim_t *dims,
                       mxk_error_sink *err) {
    static const dnnl_format_tag_t tags[7] = {
        dnnl_format_tag_undef, dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef};
    if (ndims < 1 || ndims > 6)
        return mxk_sdk_error(err, MXK_ERR_UNSUPPORTED, "oneDNN: %d dimensions (1 to 6 supported)",
                             ndims);
    DN_CHECK(dnnl_memory_desc_init_by_tag(md, ndims, dims, dnnl_f32, tags[ndims]),
             "memory descriptor", err);
    return MXK_OK;
}

mxk_status dn_md_of_shape(dnnl_memory_desc_t *md, const mxk_shape *s, mxk_error_sink *err) {
    dnnl_dims_t dims = {0}; /* oneDNN's full dims type: the call reads DNNL_MAX_NDIMS entries */
    for (int32_t i = 0; i < s->ndim && i < DNNL_MAX_NDIMS; i++)
        dims[i] = (dnnl_dim_t)s->dims[i];
    return dn_md_plain(md, (int)s->ndim, dims, err);
}

int dn_num_threads(const mxk_op_ctx *ctx) {
    uint32_t n = MXK_SDK_HAS_FIELD(ctx, mxk_op_ctx, num_threads) ? ctx->num_threads : 0;
    if (n == 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        n = c > 0 ? (uint32_t)c : 1;
    }
    return n > 256 ? 256 : (int)n;
}

/* The scratchpad argument `prim` needs (appended at a[n]) unless the caller gave one:
 * returns the new count, or -1 when out of memory. */
static int add_scratchpad(dnnl_primitive_t prim, dn_arg *a, int n, mxk_error_sink *err) {
    for (int i = 0; i < n; i++)
        if (a[i].arg == DNNL_ARG_SCRATCHPAD)
            return n;
    const_dnnl_primitive_desc_t pd = NULL;
    if (dnnl_primitive_get_primitive_desc(prim, &pd) != dnnl_success)
        return n;
    const dnnl_memory_desc_t *md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    size_t bytes = md ? dnnl_memory_desc_get_size(md) : 0;
    if (bytes == 0)
        return n;
    a[n].arg = DNNL_ARG_SCRATCHPAD;
    a[n].md = md;
    a[n].data = dn_scratch(3, bytes, err);
    return a[n].data ? n + 1 : -1;
}

mxk_status dn_execute(const mxk_op_ctx *ctx, dnnl_primitive_t prim, int nargs, const dn_arg *args,
                      mxk_error_sink *err) {
    enum { MAX_ARGS = 24 };
    if (nargs >= MAX_ARGS)
        return mxk_sdk_error(err, MXK_ERR_INTERNAL, "oneDNN: %d arguments (at most %d)", nargs,
                             MAX_ARGS - 1);
    dn_thread *t = this_thread();
    if (t == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN: out of memory");
    if (t->stream == NULL)
        DN_CHECK(dnnl_stream_create(&t->stream, g_engine, dnnl_stream_default_flags),
                 "creating a stream", err);
    dn_arg a[MAX_ARGS];
    memcpy(a, args, sizeof *args * (size_t)nargs);
    nargs = add_scratchpad(prim, a, nargs, err);
    if (nargs < 0)
        return MXK_ERR_OUT_OF_MEMORY;
    dnnl_exec_arg_t ea[MAX_ARGS];
    mxk_status rc = MXK_OK;
    int made = 0;
    for (; made < nargs && rc == MXK_OK; made++) {
        ea[made].arg = a[made].arg;
        rc = dn_check(dnnl_memory_create(&ea[made].memory, a[made].md, g_engine, a[made].data),
                      "memory object", err);
        if (rc != MXK_OK)
            break;
    }
    if (rc == MXK_OK) {
        int team = dn_num_threads(ctx);
        g_budget = team;
        pthread_mutex_lock(&g_exec_mu);
        omp_set_num_threads(team);
        rc = dn_check(dnnl_primitive_execute(prim, t->stream, nargs, ea), "execute", err);
        if (rc == MXK_OK)
            rc = dn_check(dnnl_stream_wait(t->stream), "stream wait", err);
        pthread_mutex_unlock(&g_exec_mu);
    }
    for (int i = 0; i < made; i++)
        dnnl_memory_destroy(ea[i].memory);
    return rc;
}

const_dnnl_primitive_attr_t dn_attr(void) {
    return g_attr;
}

dnnl_status_t dn_pd_create(dnnl_primitive_desc_t *pd, const_dnnl_op_desc_t desc,
                           const_dnnl_primitive_desc_t hint) {
    dn_threads_for_create();
    return dnnl_primitive_desc_create(pd, desc, g_attr, g_engine, hint);
}

dnnl_status_t dn_reorder_pd_create(dnnl_primitive_desc_t *pd, const dnnl_memory_desc_t *from,
                                   const dnnl_memory_desc_t *to) {
    dn_threads_for_create();
    return dnnl_reorder_primitive_desc_create(pd, from, g_engine, to, g_engine, g_attr);
}

mxk_status dn_primitive(dnnl_primitive_t *prim, const_dnnl_primitive_desc_t pd, const char *what,
                        mxk_error_sink *err) {
    dn_threads_for_create();
    DN_CHECK(dnnl_primitive_create(prim, pd), what, err);
    return MXK_OK;
}

const dnnl_memory_desc_t *dn_pd_md(const_dnnl_primitive_desc_t pd, dnnl_query_t what, int index) {
    return dnnl_primitive_desc_query_md(pd, what, index);
}

void *dn_scratch(int slot, size_t bytes, mxk_error_sink *err) {
    dn_thread *t = this_thread();
    if (t == NULL || slot < 0 || slot > 3) {
        mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN: out of memory (scratch)");
        return NULL;
    }
    if (t->scratch_bytes[slot] < bytes) {
        size_t size = (bytes + 63) & ~(size_t)63;
        void *p = NULL;
        if (posix_memalign(&p, 64, size ? size : 64) != 0) {
            mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY,
                          "oneDNN: out of memory (scratch of %zu bytes)", bytes);
            return NULL;
        }
        free(t->scratch[slot]);
        t->scratch[slot] = p;
        t->scratch_bytes[slot] = size;
    }
    return t->scratch[slot];
}

mxk_status dn_register_kernel(mxk_registrar *reg, mxk_op_kernel_def *kdef, mxk_error_sink *err) {
    kdef->dev_type = MXK_DEV_CPU;
    kdef->backend = DN_BACKEND;
    return reg->register_kernel(reg, kdef, err);
}
