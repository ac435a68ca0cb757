/*
 * Storage manager: a pooled allocator per device on top of the device backend's raw
 * alloc/free (see storage.h for the contract; MXNet's GPUPooledStorageManager, "Naive"
 * strategy, upstream src/storage/pooled_storage_manager.h).
 *
 * Design
 * - One `storage_dev` per (dev_type, dev_id), created lazily by the first allocation on
 *   that device after the device was validated against the registry (a backend is
 *   registered for dev_type and 0 <= dev_id < device_count()). cpu_pinned devices are
 *   served by the backend chosen then (upstream src/storage/storage.cc picks
 *   PinnedMemoryStorage, cudaHostAlloc, with CUDA and CPU memory without): the
 *   host_alloc/host_free of the GPU backend (ABI 1.4), else the CPU backend's
 *   alloc/free; the device keeps that backend until it is forgotten. Devices live in a
 *   prepend-only singly linked list: lookups walk it without a lock (nodes are published
 *   with release stores and never change their key); insertions take `g_devs_lock`.
 * - Block sizes are never stored in device memory (it may be GPU memory): every device
 *   keeps a hash map `live` from each handed-out pointer to its size (open addressing,
 *   linear probing, backward-shift deletion).
 * - Freed blocks are kept in `buckets`, one per exact rounded size, sorted by size
 *   (binary search); each bucket is a LIFO stack of pointers, so the most recently
 *   freed (cache-warm) block is reused first.
 * - One mutex per device guards its map, buckets and statistics. The backend's alloc
 *   and free are called with that mutex held (as MXNet does), which keeps the
 *   out-of-memory path (release the pool, retry once) atomic.
 * - Bookkeeping never fails after a raw allocation succeeded: the map is grown before
 *   the backend is called; if a bucket cannot grow on free, the block is freed raw.
 *
 * Configuration (environment, read once at the first allocation of the process):
 * - MXK_STORAGE_POOL: 1 (default) pools; 0 disables pooling: allocations are
 *   neither rounded nor reused, every free is a raw free (for memory debuggers).
 * - MXK_STORAGE_GUARD: 0 (default) or 1: red zones around host blocks (storage.h).
 * - MXK_MEM_POOL_PAGE_SIZE: bytes, integer >= 32 (default 4096). Sizes are rounded up
 *   to a multiple of it.
 * - MXK_MEM_LARGE_ALLOC_ROUND_SIZE: bytes, integer >= 1 (default 2097152). A page-rounded
 *   size above it is rounded up to a multiple of it instead.
 *   Examples with the defaults: 1 -> 4096, 4097 -> 8192, 2097152 -> 2097152,
 *   2097153 -> 4194304.
 * An invalid value makes every allocation fail with MXK_ERR_INVALID_ARGUMENT naming the
 * variable and the value (the process-wide setting cannot be half applied).
 *
 * Statistics (mxk_storage_stats, per device):
 * - bytes_in_use: sum of the sizes of blocks handed out and not freed (rounded sizes
 *   when pooling, requested sizes when MXK_STORAGE_POOL=0);
 * - bytes_pooled: sum of the sizes of freed blocks kept for reuse;
 * - peak_in_use: maximum bytes_in_use seen;
 * - raw_allocs: number of calls of the backend's alloc, failed ones included (so an
 *   allocation that succeeded on the retry after an out-of-memory counts 2);
 * - pool_hits: allocations served from the pool without calling the backend.
 */
#include "storage.h"

#include "device_lookup.h"
#include "env.h"
#include "error.h"
#include "mxk_abi_device.h"
#include "registry.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------- */
/* Configuration                                                             */
/* ------------------------------------------------------------------------- */

/** Default page size of the pool's rounding (bytes), as MXNet's MXNET_GPU_MEM_POOL_PAGE_SIZE. */
#define STORAGE_DEFAULT_PAGE_SIZE 4096u
/** Default large-allocation rounding (bytes), as MXNET_GPU_MEM_LARGE_ALLOC_ROUND_SIZE. */
#define STORAGE_DEFAULT_LARGE_ROUND 2097152u
/** Smallest page size accepted (MXNet's lower bound). */
#define STORAGE_MIN_PAGE_SIZE 32u
/** Largest page size / large rounding accepted (1 TiB): keeps the rounding arithmetic exact. */
#define STORAGE_MAX_ROUND ((uint64_t)1 << 40)

/**
 * Process-wide pool configuration, read from the environment once (storage_config()).
 * Immutable after initialisation, so it is read without a lock.
 */
typedef struct storage_config {
    uint64_t pooled;      /**< 1: pool (default); 0: MXK_STORAGE_POOL=0 */
    uint64_t guard;       /**< 1: red zones around host blocks (MXK_STORAGE_GUARD=1) */
    uint64_t page_size;   /**< bytes, >= 32 */
    uint64_t large_round; /**< bytes, >= 1 */
    char error[256];      /**< non-empty when an environment variable was invalid */
} storage_config;

static storage_config g_config;
static pthread_once_t g_config_once = PTHREAD_ONCE_INIT;

/**
 * Reads the integer setting `name` in [min, max] (*out keeps its default when unset or
 * empty) with mxki_env_uint64. Returns 0 on success, -1 after writing the message
 * naming the variable and its value into g_config.error.
 */
static int env_setting(const char *name, uint64_t min, uint64_t max, uint64_t *out) {
    if (mxki_env_uint64("storage", name, *out, min, max, out) == MXK_OK)
        return 0;
    snprintf(g_config.error, sizeof g_config.error, "%s", mxki_last_error_message());
    return -1;
}

/** pthread_once initialiser of g_config: the first invalid variable stops the reading. */
static void storage_config_init(void) {
    g_config.pooled = 1;
    g_config.guard = 0;
    g_config.page_size = STORAGE_DEFAULT_PAGE_SIZE;
    g_config.large_round = STORAGE_DEFAULT_LARGE_ROUND;
    g_config.error[0] = '\0';
    if (env_setting("MXK_STORAGE_POOL", 0, 1, &g_config.pooled) == 0 &&
        env_setting("MXK_STORAGE_GUARD", 0, 1, &g_config.guard) == 0 &&
        env_setting("MXK_MEM_POOL_PAGE_SIZE", STORAGE_MIN_PAGE_SIZE, STORAGE_MAX_ROUND,
                    &g_config.page_size) == 0)
        env_setting("MXK_MEM_LARGE_ALLOC_ROUND_SIZE", 1, STORAGE_MAX_ROUND, &g_config.large_round);
}

/** The process-wide configuration (initialised on first use; thread-safe). */
static const storage_config *storage_config_get(void) {
    pthread_once(&g_config_once, storage_config_init);
    return &g_config;
}

/** Bytes of the red zone before a guarded block's user bytes (keeps 64-byte alignment). */
#define GUARD_FRONT 64u
/** Least bytes of the red zone after a guarded block's user bytes. */
#define GUARD_BACK 64u
/** The canary byte filling red zones (MSVC's "no man's land" value). */
#define GUARD_CANARY 0xFDu

/** Whether blocks on ctx get red zones: the guard is on and the memory is host memory. */
static int guarded_device(const storage_config *cfg, mxk_context ctx) {
    return cfg->guard && (ctx.dev_type == MXK_DEV_CPU || ctx.dev_type == MXK_DEV_CPU_PINNED);
}

/** Rounds `v` up to a multiple of `m` (m > 0); the caller guarantees no overflow. */
static uint64_t round_up(uint64_t v, uint64_t m) {
    return (v + m - 1) / m * m;
}

/**
 * The pool's block size for a request of `bytes` (> 0) under `cfg`, MXNet's Naive
 * rounding; `bytes` itself when pooling is off. Returns 0 when the rounded size does
 * not fit in 64 bits.
 */
static uint64_t storage_round(const storage_config *cfg, uint64_t bytes) {
    if (!cfg->pooled)
        return bytes;
    /* page_size, large_round <= 2^40: the sums below cannot wrap for bytes <= 2^62. */
    if (bytes > ((uint64_t)1 << 62))
        return 0;
    uint64_t r = round_up(bytes, cfg->page_size);
    if (r > cfg->large_round)
        r = round_up(r, cfg->large_round);
    return r;
}

/* ------------------------------------------------------------------------- */
/* Device names and validation                                               */
/* ------------------------------------------------------------------------- */

/**
 * The backend of cpu_pinned memory (storage.h): the first of the GPU and CPU backends
 * with host_alloc and at least one device (*host_alloc = true), else the CPU backend
 * (its ordinary alloc). ctx.dev_id must be a device of that backend. NULL with the
 * last error set (MXK_ERR_NOT_FOUND) otherwise.
 */
static const mxk_device_def *pinned_backend(mxk_context ctx, bool *host_alloc) {
    static const int32_t types[] = {MXK_DEV_GPU, MXK_DEV_CPU};
    const mxk_device_def *def = NULL;
    for (size_t i = 0; i < sizeof types / sizeof types[0] && def == NULL; i++) {
        def = mxki_registry_device(types[i]);
        if (def != NULL && (def->host_alloc == NULL || def->device_count() <= 0))
            def = NULL;
    }
    *host_alloc = def != NULL;
    if (def == NULL)
        def = mxki_registry_device(MXK_DEV_CPU);
    if (def == NULL) {
        mxk_set_error(MXK_ERR_NOT_FOUND, "storage: no device backend is registered for device "
                                         "type 1 (cpu), which serves cpu_pinned memory");
        return NULL;
    }
    int32_t count = def->device_count();
    if (ctx.dev_id < 0 || ctx.dev_id >= count) {
        mxk_set_error(MXK_ERR_NOT_FOUND,
                      "storage: device cpu_pinned(%" PRId32 ") does not exist: pinned memory "
                      "comes from the %s backend, which has %" PRId32 " device(s)",
                      ctx.dev_id, def->name, count);
        return NULL;
    }
    return def;
}

/**
 * Looks up the backend of ctx.dev_type and checks ctx.dev_id against its device count
 * (cpu_pinned: pinned_backend; *host_alloc says whether it serves host_alloc memory).
 * Returns the backend, or NULL with the last error set: MXK_ERR_NOT_FOUND
 * "storage: no device backend is registered for device type 2 (gpu)" or
 * "storage: device gpu(3) does not exist: the gpu backend has 2 device(s)"
 * (mxki_device_lookup), and MXK_ERR_BACKEND for a backend without alloc/free.
 */
static const mxk_device_def *storage_validate(mxk_context ctx, bool *host_alloc) {
    *host_alloc = false;
    const mxk_device_def *def = ctx.dev_type == MXK_DEV_CPU_PINNED
                                    ? pinned_backend(ctx, host_alloc)
                                    : mxki_device_lookup("storage", ctx);
    if (def == NULL)
        return NULL;
    if (def->alloc == NULL || def->free == NULL) {
        mxk_set_error(MXK_ERR_BACKEND, "storage: the %s backend has no alloc/free functions",
                      def->name ? def->name : "(unnamed)");
        return NULL;
    }
    return def;
}

/* ------------------------------------------------------------------------- */
/* Pointer -> size map                                                       */
/* ------------------------------------------------------------------------- */

/**
 * Open-addressing hash map from a live block's address (never 0) to its size in
 * bytes. Capacity is 0 or a power of two; the load factor stays <= 3/4. Not
 * thread-safe (guarded by the device's lock).
 */
typedef struct ptr_map {
    uintptr_t *keys; /**< 0 marks an empty slot */
    uint64_t *vals;  /**< block sizes in bytes */
    uint64_t *reqs;  /**< guarded blocks: the requested (user) bytes; 0: not guarded */
    size_t cap;      /**< number of slots */
    size_t count;    /**< number of entries */
} ptr_map;

/** Home slot of key k in a map of capacity cap (Fibonacci hashing of the address). */
static size_t ptr_map_home(uintptr_t k, size_t cap) {
    uint64_t h = (uint64_t)k * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

/** Slot index of key k, or SIZE_MAX when absent. */
static size_t ptr_map_find(const ptr_map *m, uintptr_t k) {
    if (m->cap == 0)
        return SIZE_MAX;
    for (size_t i = ptr_map_home(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->keys[i] == k)
            return i;
        if (m->keys[i] == 0)
            return SIZE_MAX;
    }
}

/** Inserts (k, v) into a map known to have a free slot and not to contain k. */
static void ptr_map_put_nogrow(ptr_map *m, uintptr_t k, uint64_t v, uint64_t req) {
    size_t i = ptr_map_home(k, m->cap);
    while (m->keys[i] != 0)
        i = (i + 1) & (m->cap - 1);
    m->keys[i] = k;
    m->vals[i] = v;
    m->reqs[i] = req;
    m->count++;
}

/**
 * Makes room for one more entry without exceeding the load factor. Returns 0, or -1
 * when out of host memory (the map is unchanged).
 */
static int ptr_map_reserve_one(ptr_map *m) {
    if ((m->count + 1) * 4 <= m->cap * 3)
        return 0;
    size_t ncap = m->cap ? m->cap * 2 : 64;
    uintptr_t *nk = calloc(ncap, sizeof *nk);
    uint64_t *nv = malloc(ncap * sizeof *nv);
    uint64_t *nr = malloc(ncap * sizeof *nr);
    if (nk == NULL || nv == NULL || nr == NULL) {
        free(nk);
        free(nv);
        free(nr);
        return -1;
    }
    ptr_map old = *m;
    m->keys = nk;
    m->vals = nv;
    m->reqs = nr;
    m->cap = ncap;
    m->count = 0;
    for (size_t i = 0; i < old.cap; i++)
        if (old.keys[i] != 0)
            ptr_map_put_nogrow(m, old.keys[i], old.vals[i], old.reqs[i]);
    free(old.keys);
    free(old.vals);
    free(old.reqs);
    return 0;
}

/** Removes the entry in slot i (backward-shift deletion keeps probe chains intact). */
static void ptr_map_remove_at(ptr_map *m, size_t i) {
    size_t mask = m->cap - 1;
    size_t j = i;
    for (;;) {
        j = (j + 1) & mask;
        if (m->keys[j] == 0)
            break;
        size_t home = ptr_map_home(m->keys[j], m->cap);
        /* Move entry j into the hole i unless its home lies cyclically in (i, j]. */
        int in_between = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
        if (!in_between) {
            m->keys[i] = m->keys[j];
            m->vals[i] = m->vals[j];
            m->reqs[i] = m->reqs[j];
            i = j;
        }
    }
    m->keys[i] = 0;
    m->count--;
}

/** Frees the map's arrays and empties it. */
static void ptr_map_destroy(ptr_map *m) {
    free(m->keys);
    free(m->vals);
    free(m->reqs);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------------------- */
/* Devices                                                                   */
/* ------------------------------------------------------------------------- */

/** Freed blocks of one exact size, reused last in first out. */
typedef struct pool_bucket {
    uint64_t size; /**< block size in bytes (rounded) */
    void **ptrs;   /**< the blocks; owned by the pool until handed out or released */
    size_t n;      /**< number of blocks */
    size_t cap;    /**< capacity of ptrs */
} pool_bucket;

/**
 * The storage state of one device. `dev_type`, `dev_id`, `def` and `next` are immutable
 * once the device is published; everything else is guarded by `lock`.
 */
typedef struct storage_dev {
    mxk_context ctx;           /**< the device */
    const mxk_device_def *def; /**< its backend (registry entries never move) */
    bool host_alloc;           /**< cpu_pinned served by def's host_alloc/host_free */
    pthread_mutex_t lock;      /**< guards the fields below */
    ptr_map live;              /**< handed-out blocks: address -> size */
    pool_bucket *buckets;      /**< sorted by size; empty buckets are kept until release */
    size_t nbuckets, cap_buckets;
    mxk_storage_stats stats;  /**< see the file comment */
    struct storage_dev *next; /**< next device in g_devs */
} storage_dev;

/** Head of the device list (prepend-only; read without a lock with acquire loads). */
static _Atomic(storage_dev *) g_devs;
/** Serialises insertions into g_devs and mxki_storage_shutdown. */
static pthread_mutex_t g_devs_lock = PTHREAD_MUTEX_INITIALIZER;

/** The device ctx, or NULL when it was never used. Thread-safe, lock-free. */
static storage_dev *storage_find(mxk_context ctx) {
    for (storage_dev *d = atomic_load_explicit(&g_devs, memory_order_acquire); d; d = d->next)
        if (d->ctx.dev_type == ctx.dev_type && d->ctx.dev_id == ctx.dev_id)
            return d;
    return NULL;
}

/**
 * The device ctx, created (after validation) if needed. Returns NULL with the last
 * error set when the device is invalid or host memory is exhausted.
 */
static storage_dev *storage_get(mxk_context ctx) {
    storage_dev *d = storage_find(ctx);
    if (d != NULL)
        return d;
    bool host_alloc = false;
    const mxk_device_def *def = storage_validate(ctx, &host_alloc);
    if (def == NULL)
        return NULL;
    pthread_mutex_lock(&g_devs_lock);
    d = storage_find(ctx);
    if (d == NULL) {
        d = calloc(1, sizeof *d);
        if (d == NULL) {
            pthread_mutex_unlock(&g_devs_lock);
            char cs[64];
            mxk_set_error(MXK_ERR_OUT_OF_MEMORY,
                          "storage: out of host memory creating the pool of %s",
                          mxki_ctx_format(ctx, cs, sizeof cs));
            return NULL;
        }
        d->ctx = ctx;
        d->def = def;
        d->host_alloc = host_alloc;
        pthread_mutex_init(&d->lock, NULL);
        d->next = atomic_load_explicit(&g_devs, memory_order_relaxed);
        atomic_store_explicit(&g_devs, d, memory_order_release);
    }
    pthread_mutex_unlock(&g_devs_lock);
    return d;
}

/** Index of the bucket of `size`, or the insertion point (with *found = 0). Lock held. */
static size_t bucket_search(const storage_dev *d, uint64_t size, int *found) {
    size_t lo = 0, hi = d->nbuckets;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (d->buckets[mid].size < size)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < d->nbuckets && d->buckets[lo].size == size;
    return lo;
}

/**
 * Keeps block p of `size` bytes in the pool. Returns 0, or -1 when host memory for the
 * bookkeeping is exhausted (the caller then frees p raw). Lock held.
 */
static int pool_push(storage_dev *d, void *p, uint64_t size) {
    int found;
    size_t i = bucket_search(d, size, &found);
    if (!found) {
        if (d->nbuckets == d->cap_buckets) {
            size_t ncap = d->cap_buckets ? d->cap_buckets * 2 : 16;
            pool_bucket *nb = realloc(d->buckets, ncap * sizeof *nb);
            if (nb == NULL)
                return -1;
            d->buckets = nb;
            d->cap_buckets = ncap;
        }
        memmove(&d->buckets[i + 1], &d->buckets[i], (d->nbuckets - i) * sizeof *d->buckets);
        d->buckets[i] = (pool_bucket){.size = size};
        d->nbuckets++;
    }
    pool_bucket *b = &d->buckets[i];
    if (b->n == b->cap) {
        size_t ncap = b->cap ? b->cap * 2 : 4;
        void **np = realloc(b->ptrs, ncap * sizeof *np);
        if (np == NULL)
            return -1; /* an empty new bucket stays; it is harmless and reused */
        b->ptrs = np;
        b->cap = ncap;
    }
    b->ptrs[b->n++] = p;
    d->stats.bytes_pooled += size;
    return 0;
}

/** Takes a pooled block of exactly `size` bytes, or NULL when none is kept. Lock held. */
static void *pool_pop(storage_dev *d, uint64_t size) {
    int found;
    size_t i = bucket_search(d, size, &found);
    if (!found || d->buckets[i].n == 0)
        return NULL;
    d->stats.bytes_pooled -= size;
    return d->buckets[i].ptrs[--d->buckets[i].n];
}

/** Gives block p back to the backend: its host_free for pinned memory, else its free. */
static void raw_free(storage_dev *d, void *p) {
    if (d->host_alloc)
        d->def->host_free(p);
    else
        d->def->free(d->ctx.dev_id, p);
}

/** Frees every pooled block back to the backend and drops the buckets. Lock held. */
static void pool_release(storage_dev *d) {
    for (size_t i = 0; i < d->nbuckets; i++) {
        pool_bucket *b = &d->buckets[i];
        for (size_t j = 0; j < b->n; j++)
            raw_free(d, b->ptrs[j]);
        free(b->ptrs);
    }
    free(d->buckets);
    d->buckets = NULL;
    d->nbuckets = d->cap_buckets = 0;
    d->stats.bytes_pooled = 0;
}

/**
 * Calls the backend's alloc for `size` bytes; on MXK_ERR_OUT_OF_MEMORY releases the
 * pool and retries once. Returns MXK_OK with *ptr set, or the error with the last
 * error set (naming the device, the requested and the block size). Lock held.
 */
static mxk_status raw_alloc(storage_dev *d, uint64_t bytes, uint64_t size, void **ptr) {
    mxk_error_sink err;
    for (int attempt = 0; attempt < 2; attempt++) {
        mxki_error_sink_clear(&err);
        void *p = NULL;
        d->stats.raw_allocs++;
        mxk_status st = d->host_alloc ? d->def->host_alloc(size, &p, &err)
                                      : d->def->alloc(d->ctx.dev_id, size, &p, &err);
        if (st == MXK_OK && p != NULL) {
            *ptr = p;
            return MXK_OK;
        }
        if (st == MXK_OK) { /* success without memory: a backend bug */
            mxki_sink_set(&err, MXK_ERR_BACKEND, "alloc returned MXK_OK and a NULL pointer");
            st = MXK_ERR_BACKEND;
        }
        if (st != MXK_ERR_OUT_OF_MEMORY || attempt == 1) {
            char cs[64];
            return mxk_set_error(st,
                                 "storage: %s on %s: could not allocate %" PRIu64
                                 " bytes (block of %" PRIu64 " bytes)%s: %s",
                                 st == MXK_ERR_OUT_OF_MEMORY ? "out of memory"
                                                             : "allocation failed",
                                 mxki_ctx_format(d->ctx, cs, sizeof cs), bytes, size,
                                 attempt == 1 ? ", also after releasing the pool and retrying" : "",
                                 err.msg[0] ? err.msg : mxk_status_name(st));
        }
        /* Out of memory: give the pooled blocks back to the backend and retry once. */
        pool_release(d);
    }
    return mxk_set_error(MXK_ERR_INTERNAL,
                         "storage: the allocation retry loop ended"); /* not reached */
}

/* ------------------------------------------------------------------------- */
/* Guard                                                                     */
/* ------------------------------------------------------------------------- */

/** Fills the red zones of raw block `raw` of `size` bytes whose user part has `bytes`. */
static void guard_arm(void *raw, uint64_t size, uint64_t bytes) {
    memset(raw, GUARD_CANARY, GUARD_FRONT);
    memset((char *)raw + GUARD_FRONT + bytes, GUARD_CANARY, size - GUARD_FRONT - bytes);
}

/**
 * Offset (from the user bytes' start) of the first damaged canary in memory order,
 * the zone after the user bytes checked first; 0 with *damaged = 0 when both zones
 * are intact.
 */
static int64_t guard_damage(const unsigned char *raw, uint64_t size, uint64_t bytes, int *damaged) {
    *damaged = 1;
    const unsigned char *user = raw + GUARD_FRONT;
    for (uint64_t j = bytes; j < size - GUARD_FRONT; j++)
        if (user[j] != GUARD_CANARY)
            return (int64_t)j;
    for (uint64_t j = 0; j < GUARD_FRONT; j++)
        if (raw[j] != GUARD_CANARY)
            return (int64_t)j - GUARD_FRONT;
    *damaged = 0;
    return 0;
}

/* ------------------------------------------------------------------------- */
/* API                                                                       */
/* ------------------------------------------------------------------------- */

int mxki_storage_guarded(mxk_context ctx) {
    const storage_config *cfg = storage_config_get();
    return cfg->error[0] == '\0' && guarded_device(cfg, ctx);
}

mxk_status mxki_storage_guard_verify(mxk_context ctx, const void *ptr, uint64_t *bytes,
                                     int64_t *offset) {
    *bytes = 0;
    *offset = 0;
    storage_dev *d = ptr ? storage_find(ctx) : NULL;
    if (d == NULL)
        return MXK_OK;
    int damaged = 0;
    pthread_mutex_lock(&d->lock);
    size_t i = ptr_map_find(&d->live, (uintptr_t)ptr);
    if (i != SIZE_MAX && d->live.reqs[i] != 0) {
        unsigned char *raw = (unsigned char *)ptr - GUARD_FRONT;
        *bytes = d->live.reqs[i];
        *offset = guard_damage(raw, d->live.vals[i], *bytes, &damaged);
        if (damaged)
            guard_arm(raw, d->live.vals[i], *bytes); /* report each overrun once */
    }
    pthread_mutex_unlock(&d->lock);
    return damaged ? MXK_ERR_INTERNAL : MXK_OK;
}

mxk_status mxki_storage_alloc(mxk_context ctx, uint64_t bytes, void **ptr) {
    if (ptr == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "storage: alloc: ptr is NULL");
    *ptr = NULL;
    if (bytes == 0)
        return MXK_OK;
    const storage_config *cfg = storage_config_get();
    if (cfg->error[0] != '\0')
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s", cfg->error);
    storage_dev *d = storage_get(ctx);
    if (d == NULL)
        return mxki_last_error_code();
    int guard = guarded_device(cfg, ctx);
    /* Guarded: the red zones around the user bytes are part of the block. */
    uint64_t want = !guard                        ? bytes
                    : bytes > ((uint64_t)1 << 62) ? 0
                                                  : bytes + GUARD_FRONT + GUARD_BACK;
    uint64_t size = want ? storage_round(cfg, want) : 0;
    if (size == 0) {
        char cs[64];
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY,
                             "storage: out of memory on %s: cannot allocate %" PRIu64
                             " bytes (larger than any device)",
                             mxki_ctx_format(ctx, cs, sizeof cs), bytes);
    }

    pthread_mutex_lock(&d->lock);
    if (ptr_map_reserve_one(&d->live) != 0) {
        pthread_mutex_unlock(&d->lock);
        char cs[64];
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY,
                             "storage: out of host memory for the bookkeeping of %s",
                             mxki_ctx_format(ctx, cs, sizeof cs));
    }
    void *p = cfg->pooled ? pool_pop(d, size) : NULL;
    if (p != NULL) {
        d->stats.pool_hits++;
    } else {
        mxk_status st = raw_alloc(d, bytes, size, &p);
        if (st != MXK_OK) {
            pthread_mutex_unlock(&d->lock);
            return st;
        }
    }
    if (guard) {
        guard_arm(p, size, bytes);
        p = (char *)p + GUARD_FRONT;
    }
    if (ptr_map_find(&d->live, (uintptr_t)p) != SIZE_MAX) {
        /* The backend handed out a block that is still in use: never hand it out twice. */
        pthread_mutex_unlock(&d->lock);
        char cs[64];
        return mxk_set_error(
            MXK_ERR_INTERNAL, "storage: the %s backend returned block %p on %s, which is in use",
            d->def->name ? d->def->name : "(unnamed)", p, mxki_ctx_format(ctx, cs, sizeof cs));
    }
    ptr_map_put_nogrow(&d->live, (uintptr_t)p, size, guard ? bytes : 0);
    d->stats.bytes_in_use += size;
    if (d->stats.bytes_in_use > d->stats.peak_in_use)
        d->stats.peak_in_use = d->stats.bytes_in_use;
    pthread_mutex_unlock(&d->lock);
    *ptr = p;
    return MXK_OK;
}

void mxki_storage_free(mxk_context ctx, void *ptr) {
    if (ptr == NULL)
        return;
    storage_dev *d = storage_find(ctx);
    size_t i = SIZE_MAX;
    if (d != NULL) {
        pthread_mutex_lock(&d->lock);
        i = ptr_map_find(&d->live, (uintptr_t)ptr);
    }
    if (i == SIZE_MAX) {
        if (d != NULL)
            pthread_mutex_unlock(&d->lock);
        /* Not ours: freeing it would corrupt the backend; report and leave it. */
        char cs[64];
        mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                      "storage: free of %p on %s: not a block allocated on this device and "
                      "still in use (double free or wrong device)",
                      ptr, mxki_ctx_format(ctx, cs, sizeof cs));
        mxki_log(MXK_LOG_ERROR, "%s", mxki_last_error_message());
        return;
    }
    uint64_t size = d->live.vals[i], bytes = d->live.reqs[i];
    if (bytes != 0) { /* guarded: a write outside it that no engine check saw is reported */
        int damaged = 0;
        int64_t off = guard_damage((unsigned char *)ptr - GUARD_FRONT, size, bytes, &damaged);
        char cs[64];
        if (damaged)
            mxki_log(MXK_LOG_ERROR,
                     "storage guard: block %p of %" PRIu64 " bytes on %s was written outside its "
                     "bounds: canary damaged at byte offset %" PRId64 " (found when it was freed)",
                     ptr, bytes, mxki_ctx_format(ctx, cs, sizeof cs), off);
        ptr = (char *)ptr - GUARD_FRONT; /* the raw block */
    }
    ptr_map_remove_at(&d->live, i);
    d->stats.bytes_in_use -= size;
    if (!storage_config_get()->pooled || pool_push(d, ptr, size) != 0)
        raw_free(d, ptr);
    pthread_mutex_unlock(&d->lock);
}

void mxki_storage_release_pool(mxk_context ctx) {
    storage_dev *d = storage_find(ctx);
    if (d == NULL)
        return;
    pthread_mutex_lock(&d->lock);
    pool_release(d);
    pthread_mutex_unlock(&d->lock);
}

void mxki_storage_shutdown(void) {
    pthread_mutex_lock(&g_devs_lock);
    storage_dev *keep = NULL, *d = atomic_load_explicit(&g_devs, memory_order_acquire);
    while (d != NULL) {
        storage_dev *next = d->next;
        pthread_mutex_lock(&d->lock);
        pool_release(d);
        int in_use = d->live.count != 0;
        pthread_mutex_unlock(&d->lock);
        if (in_use) {
            d->next = keep;
            keep = d;
        } else {
            ptr_map_destroy(&d->live);
            pthread_mutex_destroy(&d->lock);
            free(d);
        }
        d = next;
    }
    atomic_store_explicit(&g_devs, keep, memory_order_release);
    pthread_mutex_unlock(&g_devs_lock);
}

mxk_status mxk_storage_get_stats(mxk_context ctx, mxk_storage_stats *out) {
    if (out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_storage_get_stats: out is NULL");
    memset(out, 0, sizeof *out);
    storage_dev *d = storage_find(ctx);
    if (d == NULL)
        return MXK_OK;
    pthread_mutex_lock(&d->lock);
    *out = d->stats;
    pthread_mutex_unlock(&d->lock);
    return MXK_OK;
}
