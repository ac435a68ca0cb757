/*
 * A KVStore transport plugin for test_kvstore ("tkv-mem", raw ABI): it registers
 * the transport "test_mem" (abi/mxk_abi_kvstore.h), an in-memory store that stands
 * in for a dist_sync transport of `workers` workers in which every other worker
 * pushes the same value as this one: push stores value * workers (the aggregate
 * over workers), pull copies the stored value out, init stores a copy. So a value
 * pulled from the kernel that equals the pushed sum times `workers` can only have
 * come back through this transport.
 *
 * Plugin options (mxk_load_plugin): "rank" and "workers" (default 0 and 1), which
 * the transport reports. Push completes from a thread of its own (the contract
 * allows completion from any thread); pull completes in the calling thread.
 * Refusals, to test error paths: init of a non-float32 value (MXK_ERR_TYPE), push
 * of key "fail_push" (completed with MXK_ERR_BACKEND).
 *
 * Every callback is logged (test_transport.h); the test reads the log through
 * the exported tkv_log_* functions.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_plugin.h"
#include "test_transport.h"

static const mxk_host_api *host;
static int32_t g_rank, g_workers = 1;

/* ---- the call log ------------------------------------------------------- */

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static tkv_call *log_items;
static uint32_t log_count, log_capacity;
static int32_t next_instance = 1;

/** The number of float32 elements of `t`. */
static uint64_t t_count(const mxk_tensor *t) {
    uint64_t n = 1;
    for (int32_t i = 0; i < t->shape.ndim; i++)
        n *= (uint64_t)t->shape.dims[i];
    return n;
}

/** Bytes of `t` (float32: 4 per element; other dtypes are sized by the caller's checks). */
static uint64_t t_bytes(const mxk_tensor *t) {
    static const uint64_t size[] = {4, 8, 2, 1, 4, 1, 8}; /* mxk_dtype codes 0..6 */
    uint64_t es = t->dtype >= 0 && t->dtype < 7 ? size[t->dtype] : 0;
    return t_count(t) * es;
}

/** Appends a call; `t` (may be NULL) gives dtype, shape, bytes and the first values. */
static void log_call(const char *op, int32_t instance, const char *key, const mxk_tensor *t,
                     int32_t priority) {
    tkv_call c;
    memset(&c, 0, sizeof c);
    snprintf(c.op, sizeof c.op, "%s", op);
    c.instance = instance;
    if (key != NULL)
        snprintf(c.key, sizeof c.key, "%s", key);
    c.priority = priority;
    c.dtype = -1;
    if (t != NULL) {
        c.dtype = t->dtype;
        c.dev_type = t->dev_type;
        c.shape = t->shape;
        c.bytes = t_bytes(t);
        if (t->dtype == MXK_FLOAT32 && t->data != NULL) {
            uint64_t n = t_count(t);
            c.num_values = n < 8 ? (uint32_t)n : 8;
            memcpy(c.values, t->data, c.num_values * sizeof(float));
        }
    }
    pthread_mutex_lock(&log_lock);
    if (log_count == log_capacity) {
        uint32_t cap = log_capacity ? log_capacity * 2 : 64;
        tkv_call *items = realloc(log_items, cap * sizeof *items);
        if (items == NULL) {
            pthread_mutex_unlock(&log_lock);
            return;
        }
        log_items = items;
        log_capacity = cap;
    }
    log_items[log_count++] = c;
    pthread_mutex_unlock(&log_lock);
}

MXK_PLUGIN_EXPORT uint32_t tkv_log_count(void) {
    pthread_mutex_lock(&log_lock);
    uint32_t n = log_count;
    pthread_mutex_unlock(&log_lock);
    return n;
}

MXK_PLUGIN_EXPORT int tkv_log_get(uint32_t i, tkv_call *out) {
    pthread_mutex_lock(&log_lock);
    int ok = i < log_count;
    if (ok)
        *out = log_items[i];
    pthread_mutex_unlock(&log_lock);
    return ok;
}

MXK_PLUGIN_EXPORT void tkv_log_reset(void) {
    pthread_mutex_lock(&log_lock);
    log_count = 0;
    pthread_mutex_unlock(&log_lock);
}

/* ---- the transport ------------------------------------------------------ */

/** One key: its float32 values. */
typedef struct mem_entry {
    char *key;
    float *data;
    uint64_t count;
} mem_entry;

/** A transport object. */
typedef struct mem_store {
    int32_t instance;
    pthread_mutex_t lock;
    mem_entry *items;
    uint32_t count, capacity;
} mem_store;

/** The entry of `key` (lock held), or NULL. */
static mem_entry *mem_find(mem_store *m, const char *key) {
    for (uint32_t i = 0; i < m->count; i++)
        if (strcmp(m->items[i].key, key) == 0)
            return &m->items[i];
    return NULL;
}

static mxk_status mem_create(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    mem_store *m = calloc(1, sizeof *m);
    if (m == NULL)
        return host->error(err, MXK_ERR_OUT_OF_MEMORY, "test_mem: out of memory");
    pthread_mutex_init(&m->lock, NULL);
    pthread_mutex_lock(&log_lock);
    m->instance = next_instance++;
    pthread_mutex_unlock(&log_lock);
    log_call("create", m->instance, NULL, NULL, 0);
    *out = m;
    return MXK_OK;
}

static void mem_destroy(void *p) {
    mem_store *m = p;
    log_call("destroy", m->instance, NULL, NULL, 0);
    for (uint32_t i = 0; i < m->count; i++) {
        free(m->items[i].key);
        free(m->items[i].data);
    }
    free(m->items);
    pthread_mutex_destroy(&m->lock);
    free(m);
}

static int32_t mem_rank(void *p) {
    log_call("rank", ((mem_store *)p)->instance, NULL, NULL, 0);
    return g_rank;
}

static int32_t mem_num_workers(void *p) {
    log_call("num_workers", ((mem_store *)p)->instance, NULL, NULL, 0);
    return g_workers;
}

static mxk_status mem_init(void *p, const char *key, const mxk_tensor *value, mxk_error_sink *err) {
    mem_store *m = p;
    log_call("init", m->instance, key, value, 0);
    if (value->dtype != MXK_FLOAT32)
        return host->error(err, MXK_ERR_TYPE,
                           "test_mem: init of key %s: float32 only, got dtype %d", key,
                           (int)value->dtype);
    if (value->dev_type != MXK_DEV_CPU && value->dev_type != MXK_DEV_CPU_PINNED)
        return host->error(err, MXK_ERR_UNSUPPORTED, "test_mem: init of key %s: not host memory",
                           key);
    uint64_t n = t_count(value);
    mem_entry e = {.key = strdup(key), .data = malloc(n ? n * sizeof(float) : 1), .count = n};
    mxk_status st = MXK_OK;
    pthread_mutex_lock(&m->lock);
    if (e.key == NULL || e.data == NULL) {
        st = host->error(err, MXK_ERR_OUT_OF_MEMORY, "test_mem: out of memory");
    } else if (mem_find(m, key) != NULL) {
        st = host->error(err, MXK_ERR_STATE, "test_mem: key %s inited twice", key);
    } else if (m->count == m->capacity) {
        uint32_t cap = m->capacity ? m->capacity * 2 : 16;
        mem_entry *items = realloc(m->items, cap * sizeof *items);
        if (items == NULL)
            st = host->error(err, MXK_ERR_OUT_OF_MEMORY, "test_mem: out of memory");
        else {
            m->items = items;
            m->capacity = cap;
        }
    }
    if (st == MXK_OK) {
        memcpy(e.data, value->data, (size_t)(n * sizeof(float)));
        m->items[m->count++] = e;
    } else {
        free(e.key);
        free(e.data);
    }
    pthread_mutex_unlock(&m->lock);
    return st;
}

/** A push, run on a thread of its own. */
typedef struct push_job {
    mem_store *m;
    char key[64];
    const mxk_tensor *value; /* the kernel's, valid until completion */
    mxk_async_handle *done;
} push_job;

/** Stores value * workers for the job's key and completes it. */
static void *push_thread(void *arg) {
    push_job *j = arg;
    char msg[160] = "";
    mxk_status st = MXK_OK;
    pthread_mutex_lock(&j->m->lock);
    mem_entry *e = mem_find(j->m, j->key);
    if (strcmp(j->key, "fail_push") == 0) {
        snprintf(msg, sizeof msg, "test_mem: push of key %s refused", j->key);
        st = MXK_ERR_BACKEND;
    } else if (e == NULL || j->value->dtype != MXK_FLOAT32 || t_count(j->value) != e->count) {
        snprintf(msg, sizeof msg, "test_mem: push of key %s: unknown key or other size", j->key);
        st = MXK_ERR_SHAPE;
    } else {
        const float *v = j->value->data;
        for (uint64_t i = 0; i < e->count; i++)
            e->data[i] = v[i] * (float)g_workers;
    }
    pthread_mutex_unlock(&j->m->lock);
    mxk_async_handle *done = j->done;
    free(j);
    host->async_complete(done, st, st == MXK_OK ? NULL : msg);
    return NULL;
}

static void mem_push(void *p, const char *key, const mxk_tensor *value, int32_t priority,
                     mxk_async_handle *done) {
    mem_store *m = p;
    log_call("push", m->instance, key, value, priority);
    push_job *j = calloc(1, sizeof *j);
    if (j == NULL) {
        host->async_complete(done, MXK_ERR_OUT_OF_MEMORY, "test_mem: out of memory");
        return;
    }
    j->m = m;
    snprintf(j->key, sizeof j->key, "%s", key);
    j->value = value;
    j->done = done;
    pthread_t th;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&th, &attr, push_thread, j) != 0)
        push_thread(j); /* no thread: complete here */
    pthread_attr_destroy(&attr);
}

static void mem_pull(void *p, const char *key, const mxk_tensor *out, int32_t priority,
                     mxk_async_handle *done) {
    mem_store *m = p;
    char msg[160] = "";
    mxk_status st = MXK_OK;
    pthread_mutex_lock(&m->lock);
    mem_entry *e = mem_find(m, key);
    if (e == NULL || out->dtype != MXK_FLOAT32 || t_count(out) != e->count) {
        snprintf(msg, sizeof msg, "test_mem: pull of key %s: unknown key or other size", key);
        st = MXK_ERR_SHAPE;
    } else {
        memcpy(out->data, e->data, (size_t)(e->count * sizeof(float)));
    }
    pthread_mutex_unlock(&m->lock);
    log_call("pull", m->instance, key, out, priority); /* with the values written */
    host->async_complete(done, st, st == MXK_OK ? NULL : msg);
}

static mxk_status mem_barrier(void *p, mxk_error_sink *err) {
    log_call("barrier", ((mem_store *)p)->instance, NULL, NULL, 0);
    return MXK_OK;
}

/* ---- entry points ------------------------------------------------------- */

MXK_PLUGIN_EXPORT const mxk_plugin_info *mxk_plugin_get_info(void) {
    static const mxk_plugin_info info = {
        .struct_size = sizeof(mxk_plugin_info),
        .abi_major = MXK_ABI_MAJOR,
        .abi_minor = MXK_ABI_MINOR,
        .min_host_minor = 0,
        .name = "tkv-mem",
        .version = "0.1.0",
        .description = "KVStore test transport (in-memory, simulated workers)",
        .provides = MXK_PROVIDES_KVSTORE,
    };
    return &info;
}

MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *args,
                                             mxk_error_sink *err) {
    host = args->host;
    const char *r = args->options ? host->attr_get(args->options, "rank") : NULL;
    const char *w = args->options ? host->attr_get(args->options, "workers") : NULL;
    g_rank = r ? atoi(r) : 0;
    g_workers = w ? atoi(w) : 1;
    if (g_workers < 1 || g_rank < 0 || g_rank >= g_workers)
        return host->error(err, MXK_ERR_INVALID_ARGUMENT, "tkv-mem: bad rank %d of %d workers",
                           g_rank, g_workers);
    mxk_kvstore_transport_def d;
    memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    d.abi_minor = MXK_ABI_MINOR;
    d.name = TKV_TRANSPORT;
    d.description = "in-memory test transport";
    d.create = mem_create;
    d.destroy = mem_destroy;
    d.rank = mem_rank;
    d.num_workers = mem_num_workers;
    d.init = mem_init;
    d.push = mem_push;
    d.pull = mem_pull;
    d.barrier = mem_barrier;
    return args->registrar->register_kvstore_transport(args->registrar, &d, err);
}

MXK_PLUGIN_EXPORT void mxk_plugin_shutdown(void) {
    pthread_mutex_lock(&log_lock);
    free(log_items);
    log_items = NULL;
    log_count = log_capacity = 0;
    pthread_mutex_unlock(&log_lock);
}
