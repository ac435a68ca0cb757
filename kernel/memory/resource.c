/*
 * Resource manager: temp space and random streams per device (see resource.h for the
 * contract; MXNet's ResourceManagerImpl in src/resource.cc).
 *
 * Design
 * - One `res_dev` per (dev_type, dev_id), created lazily by the first mxki_resource_get
 *   on that device, after validation against the registry (a backend is registered for
 *   dev_type and 0 <= dev_id < device_count()). Devices and slots live until
 *   mxki_resource_shutdown; `g_lock` guards the device list, slot creation and the
 *   seed. Slot pointers handed out stay valid until shutdown.
 * - Temp space: MXK_CPU_TEMP_COPY (default 4; also used for cpu_pinned) or
 *   MXK_GPU_TEMP_COPY (default 1) slots per device, read when the device's temp slots
 *   are created (integer in [1, 1024]; an invalid value makes mxki_resource_get fail
 *   with MXK_ERR_INVALID_ARGUMENT naming the variable). Handed out round-robin with the
 *   counter incremented before use, as MXNet: with 4 copies the requests get copies
 *   1, 2, 3, 0, 1, ... The buffer only grows: a request that fits reuses it, a larger
 *   one frees it (mxki_storage_free, after synchronising the device when the device is
 *   not a CPU, as MXNet's DirectFree -> cudaFree does, so kernels still queued on a
 *   stream never see their workspace reused) and allocates exactly the requested size.
 * - Random: one slot per device holding an mxk_random (Philox-4x32-10 key and 128-bit
 *   counter). A slot created while the seed is s starts with key(s) and counter 0.
 *   mxki_resource_seed(s) stores s and pushes, per existing random slot, an engine
 *   function that writes the slot's variable and sets key(s), counter 0 (pushed with
 *   MXK_ENGINE_PROP_NO_SKIP so that an error recorded on the variable by a failed
 *   operator cannot cancel the re-seed); when the engine is not running (the push fails
 *   with MXK_ERR_STATE) nothing can be using the streams and they are reset directly.
 *   The seed is 0 until the first call and again after mxki_resource_shutdown.
 *
 * Key rule: key(s) of device (t, d) = s * 127 + d modulo 2^64, for every device type
 * (MXNet's seed * 127 + dev_id, src/resource.cc), so cpu(d) and gpu(d) draw the same
 * numbers from the same seed and stream position: a seeded Dropout mask, uniform or
 * normal draw is identical on both devices.
 *
 * Host draws (mxki_random_uniform / mxki_random_normal): the exact mapping from Philox
 * blocks to numbers is specified in resource.h (a device kernel must reproduce it). In
 * short: a draw of n numbers uses blocks counter + 0 .. ceil(n/4)-1, output i from block
 * i / 4, word i % 4, and advances the counter by ceil(n/4); drawing n then m numbers
 * equals drawing n + m numbers at once only when n is a multiple of 4. The per-element
 * mappings are mxk_philox.h's (mxk_philox_uniform, mxk_philox_normal2), which device
 * kernels share.
 */
#include "resource.h"

#include "device_lookup.h"
#include "env.h"
#include "error.h"
#include "mxk_abi_device.h"
#include "mxk_philox.h"
#include "storage.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Default temp-space copies per CPU (and cpu_pinned) device, as MXNET_CPU_TEMP_COPY. */
#define RES_DEFAULT_CPU_TEMP_COPY 4u
/** Default temp-space copies per GPU, as MXNET_GPU_TEMP_COPY. */
#define RES_DEFAULT_GPU_TEMP_COPY 1u
/** Largest accepted MXK_*_TEMP_COPY. */
#define RES_MAX_TEMP_COPY 1024u

/**
 * A resource slot: one temp-space copy or a device's random stream.
 * `type`, `ctx` and `var` are immutable after creation. `view`, `rng` (and the memory
 * view.ptr points to) are only touched by engine functions that write `var`, by
 * mxki_resource_prepare called from such a function, and at creation / shutdown.
 */
struct mxk_resource_slot {
    int32_t type;              /**< mxk_resource_type */
    mxk_context ctx;           /**< the device */
    const mxk_device_def *def; /**< its backend (for synchronize before a temp regrow) */
    mxk_engine_var *var;       /**< the slot's engine variable (owned) */
    mxk_resource view;         /**< the ABI view handed to kernels */
    mxk_random rng;            /**< random slots: the stream; view.random points here */
};

/** The resources of one device (owned by g_devs; every field guarded by g_lock). */
typedef struct res_dev {
    mxk_context ctx;           /**< the device */
    const mxk_device_def *def; /**< its backend (registry entries never move) */
    uint32_t ntemp;            /**< number of temp copies; 0 until the first temp request */
    mxk_resource_slot *temp;   /**< ntemp slots, in copy order (owned) */
    uint64_t rr; /**< round-robin counter: the k-th request (k >= 1) gets copy k % ntemp */
    mxk_resource_slot *random; /**< the random slot (owned), NULL until requested */
    struct res_dev *next;      /**< next device in g_devs */
} res_dev;

/** Guards g_devs, slot creation and g_seed. */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
/** Devices that have resources (owned). */
static res_dev *g_devs;
/** Seed of the last mxki_resource_seed (0 before any call). */
static uint64_t g_seed;

/* ------------------------------------------------------------------------- */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------- */

/** The Philox key of device ctx under `seed` (the key rule in the file comment). */
static uint64_t res_key(uint64_t seed, mxk_context ctx) {
    return seed * 127u + (uint64_t)(int64_t)ctx.dev_id;
}

/**
 * Number of temp copies for dev_type from MXK_CPU_TEMP_COPY / MXK_GPU_TEMP_COPY into
 * *out. Returns MXK_OK, or MXK_ERR_INVALID_ARGUMENT (last error set) for a bad value.
 */
static mxk_status res_temp_copies(int32_t dev_type, uint32_t *out) {
    int gpu = dev_type == MXK_DEV_GPU;
    uint64_t v = 0;
    mxk_status st = mxki_env_uint64("resource", gpu ? "MXK_GPU_TEMP_COPY" : "MXK_CPU_TEMP_COPY",
                                    gpu ? RES_DEFAULT_GPU_TEMP_COPY : RES_DEFAULT_CPU_TEMP_COPY, 1,
                                    RES_MAX_TEMP_COPY, &v);
    *out = (uint32_t)v;
    return st;
}

/**
 * Initialises slot (zero-filled memory) of `type` on device dev: creates its engine
 * variable and its ABI view. Returns MXK_OK or MXK_ERR_OUT_OF_MEMORY (last error set).
 * g_lock held (random slots read g_seed).
 */
static mxk_status res_slot_init(mxk_resource_slot *slot, const res_dev *dev, int32_t type) {
    slot->type = type;
    slot->ctx = dev->ctx;
    slot->def = dev->def;
    slot->var = mxki_engine_new_var();
    if (slot->var == NULL) {
        char cs[64];
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY,
                             "resource: out of memory creating an engine variable for %s",
                             mxki_ctx_format(dev->ctx, cs, sizeof cs));
    }
    slot->view.struct_size = (uint32_t)sizeof slot->view;
    slot->view.type = type;
    slot->view.ptr = NULL;
    slot->view.bytes = 0;
    if (type == MXK_RESOURCE_RANDOM) {
        slot->rng.key = res_key(g_seed, dev->ctx);
        slot->rng.counter_lo = 0;
        slot->rng.counter_hi = 0;
        slot->view.random = &slot->rng;
    } else {
        slot->view.random = NULL;
    }
    return MXK_OK;
}

/** Frees a slot's temp memory and schedules deletion of its variable (not the slot itself). */
static void res_slot_destroy(mxk_resource_slot *slot) {
    if (slot->view.ptr != NULL)
        mxki_storage_free(slot->ctx, slot->view.ptr);
    slot->view.ptr = NULL;
    slot->view.bytes = 0;
    if (slot->var != NULL)
        mxki_engine_delete_var(slot->var, NULL, NULL, slot->ctx.dev_type, slot->ctx.dev_id);
    slot->var = NULL;
}

/** The device entry of ctx, created (after validation) if needed. g_lock held. */
static res_dev *res_dev_get(mxk_context ctx) {
    for (res_dev *d = g_devs; d != NULL; d = d->next)
        if (d->ctx.dev_type == ctx.dev_type && d->ctx.dev_id == ctx.dev_id)
            return d;
    const mxk_device_def *def = mxki_device_lookup("resource", ctx);
    if (def == NULL)
        return NULL;
    res_dev *d = calloc(1, sizeof *d);
    if (d == NULL) {
        char cs[64];
        mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "resource: out of host memory for %s",
                      mxki_ctx_format(ctx, cs, sizeof cs));
        return NULL;
    }
    d->ctx = ctx;
    d->def = def;
    d->next = g_devs;
    g_devs = d;
    return d;
}

/** Creates dev's temp slots if not yet done. Returns MXK_OK or an error (last error set). */
static mxk_status res_dev_init_temp(res_dev *dev) {
    if (dev->ntemp != 0)
        return MXK_OK;
    uint32_t n;
    mxk_status st = res_temp_copies(dev->ctx.dev_type, &n);
    if (st != MXK_OK)
        return st;
    mxk_resource_slot *slots = calloc(n, sizeof *slots);
    if (slots == NULL) {
        char cs[64];
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "resource: out of host memory for %s",
                             mxki_ctx_format(dev->ctx, cs, sizeof cs));
    }
    for (uint32_t i = 0; i < n; i++) {
        st = res_slot_init(&slots[i], dev, MXK_RESOURCE_TEMP_SPACE);
        if (st != MXK_OK) {
            for (uint32_t j = 0; j < i; j++)
                res_slot_destroy(&slots[j]);
            free(slots);
            return st;
        }
    }
    dev->temp = slots;
    dev->ntemp = n;
    return MXK_OK;
}

/** Creates dev's random slot if not yet done. Returns MXK_OK or an error (last error set). */
static mxk_status res_dev_init_random(res_dev *dev) {
    if (dev->random != NULL)
        return MXK_OK;
    mxk_resource_slot *slot = calloc(1, sizeof *slot);
    if (slot == NULL) {
        char cs[64];
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "resource: out of host memory for %s",
                             mxki_ctx_format(dev->ctx, cs, sizeof cs));
    }
    mxk_status st = res_slot_init(slot, dev, MXK_RESOURCE_RANDOM);
    if (st != MXK_OK) {
        free(slot);
        return st;
    }
    dev->random = slot;
    return MXK_OK;
}

/* ------------------------------------------------------------------------- */
/* Slots                                                                     */
/* ------------------------------------------------------------------------- */

mxk_resource_slot *mxki_resource_get(mxk_context ctx, int32_t type) {
    if (type != MXK_RESOURCE_TEMP_SPACE && type != MXK_RESOURCE_RANDOM) {
        mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                      "resource: unknown resource type %" PRId32
                      " (expected %d = temp space or %d = random)",
                      type, MXK_RESOURCE_TEMP_SPACE, MXK_RESOURCE_RANDOM);
        return NULL;
    }
    mxk_resource_slot *slot = NULL;
    pthread_mutex_lock(&g_lock);
    res_dev *dev = res_dev_get(ctx);
    if (dev != NULL) {
        if (type == MXK_RESOURCE_TEMP_SPACE) {
            if (res_dev_init_temp(dev) == MXK_OK) {
                /* Incremented before use, as MXNet: the first request gets copy 1. */
                slot = &dev->temp[++dev->rr % dev->ntemp];
            }
        } else if (res_dev_init_random(dev) == MXK_OK) {
            slot = dev->random;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return slot;
}

mxk_engine_var *mxki_resource_var(const mxk_resource_slot *slot) {
    return slot != NULL ? slot->var : NULL;
}

mxk_status mxki_resource_prepare(mxk_resource_slot *slot, uint64_t bytes, const mxk_resource **view,
                                 mxk_error_sink *err) {
    if (slot == NULL || view == NULL)
        return mxki_sink_set(err, MXK_ERR_INVALID_ARGUMENT,
                             "resource: prepare: slot and view must not be NULL");
    if (slot->type == MXK_RESOURCE_TEMP_SPACE && bytes > slot->view.bytes) {
        if (slot->view.ptr != NULL) {
            /* Work still queued on a device stream may use the old buffer (cudaFree
             * would synchronise implicitly; the pool does not). */
            if (slot->ctx.dev_type != MXK_DEV_CPU && slot->def->synchronize != NULL) {
                mxk_error_sink serr;
                mxki_error_sink_clear(&serr);
                mxk_status st = slot->def->synchronize(slot->ctx.dev_id, NULL, &serr);
                if (st != MXK_OK) {
                    char cs[64];
                    return mxki_sink_set(err, st,
                                         "resource: synchronising %s before growing its temp "
                                         "space failed: %s",
                                         mxki_ctx_format(slot->ctx, cs, sizeof cs),
                                         serr.msg[0] ? serr.msg : mxk_status_name(st));
                }
            }
            mxki_storage_free(slot->ctx, slot->view.ptr);
            slot->view.ptr = NULL;
            slot->view.bytes = 0;
        }
        void *p = NULL;
        mxk_status st = mxki_storage_alloc(slot->ctx, bytes, &p);
        if (st != MXK_OK)
            return mxki_sink_set(err, st, "temp space: %s", mxki_last_error_message());
        slot->view.ptr = p;
        slot->view.bytes = bytes;
    }
    *view = &slot->view;
    return MXK_OK;
}

/* ------------------------------------------------------------------------- */
/* Seeding and shutdown                                                      */
/* ------------------------------------------------------------------------- */

/** Argument of res_reseed_fn (heap-allocated, freed by the engine with free()). */
typedef struct reseed_arg {
    mxk_resource_slot *slot; /**< the random slot to reset */
    uint64_t key;            /**< its new key */
} reseed_arg;

/** Engine function (writes the slot's var): resets the stream to `key`, counter 0. */
static mxk_status res_reseed_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    (void)err;
    const reseed_arg *a = arg;
    a->slot->rng.key = a->key;
    a->slot->rng.counter_lo = 0;
    a->slot->rng.counter_hi = 0;
    return MXK_OK;
}

mxk_status mxki_resource_seed(uint64_t seed) {
    mxk_status first = MXK_OK;
    pthread_mutex_lock(&g_lock);
    g_seed = seed;
    for (res_dev *d = g_devs; d != NULL; d = d->next) {
        if (d->random == NULL)
            continue;
        reseed_arg *a = malloc(sizeof *a);
        if (a == NULL) {
            if (first == MXK_OK)
                first = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "resource: seed: out of host memory");
            continue;
        }
        a->slot = d->random;
        a->key = res_key(seed, d->ctx);
        mxk_engine_var *var = d->random->var;
        mxk_status st =
            mxki_engine_push_sync(res_reseed_fn, a, free, d->ctx.dev_type, d->ctx.dev_id, NULL, 0,
                                  &var, 1, MXK_ENGINE_PROP_NO_SKIP, 0, "ResourceSeed");
        if (st == MXK_ERR_STATE) {
            /* The engine is not running (before mxk_init / after shutdown): nothing can be
             * using the stream, so reset it here. (The push freed its argument.) */
            d->random->rng.key = res_key(seed, d->ctx);
            d->random->rng.counter_lo = 0;
            d->random->rng.counter_hi = 0;
        } else if (st != MXK_OK && first == MXK_OK) {
            first = st; /* the engine set the last error; arg was freed */
        }
    }
    pthread_mutex_unlock(&g_lock);
    return first;
}

void mxki_resource_shutdown(void) {
    pthread_mutex_lock(&g_lock);
    res_dev *d = g_devs;
    while (d != NULL) {
        res_dev *next = d->next;
        for (uint32_t i = 0; i < d->ntemp; i++)
            res_slot_destroy(&d->temp[i]);
        free(d->temp);
        if (d->random != NULL) {
            res_slot_destroy(d->random);
            free(d->random);
        }
        free(d);
        d = next;
    }
    g_devs = NULL;
    g_seed = 0;
    pthread_mutex_unlock(&g_lock);
}

/* ------------------------------------------------------------------------- */
/* Host draws                                                                */
/* ------------------------------------------------------------------------- */

/** Block b of rng's stream, without advancing it. */
static mxk_philox_block res_block(const mxk_random *rng, uint64_t b) {
    return mxk_philox4x32_10(mxk_philox_counter(rng->counter_lo, rng->counter_hi, b), rng->key);
}

/** Advances rng's 128-bit counter by n blocks (wrapping modulo 2^128). */
static void res_advance(mxk_random *rng, uint64_t n) {
    uint64_t lo = rng->counter_lo + n;
    rng->counter_hi += lo < rng->counter_lo ? 1u : 0u;
    rng->counter_lo = lo;
}

/**
 * Fills out[0..n) with floats uniform in [lo, hi) and advances the stream by ceil(n/4)
 * blocks; the mapping is specified in resource.h.
 */
void mxki_random_uniform(mxk_random *rng, float *out, uint64_t n, float lo, float hi) {
    if (rng == NULL || out == NULL || n == 0)
        return;
    uint64_t nblocks = n / 4 + (n % 4 != 0);
    for (uint64_t b = 0; b < nblocks; b++) {
        mxk_philox_block x = res_block(rng, b);
        for (uint32_t j = 0; j < 4 && b * 4 + j < n; j++)
            out[b * 4 + j] = mxk_philox_uniform(x.v[j], lo, hi);
    }
    res_advance(rng, nblocks);
}

/**
 * Fills out[0..n) with floats normal(mean, std) by Box-Muller (one block gives two pairs,
 * four outputs) and advances the stream by ceil(n/4) blocks; the mapping is specified in
 * resource.h.
 */
void mxki_random_normal(mxk_random *rng, float *out, uint64_t n, float mean, float std) {
    if (rng == NULL || out == NULL || n == 0)
        return;
    uint64_t nblocks = n / 4 + (n % 4 != 0);
    for (uint64_t b = 0; b < nblocks; b++) {
        mxk_philox_block x = res_block(rng, b);
        for (uint32_t h = 0; h < 2 && b * 4 + 2 * h < n; h++) {
            float z[2];
            mxk_philox_normal2(x, h, mean, std, z);
            out[b * 4 + 2 * h] = z[0];
            if (b * 4 + 2 * h + 1 < n)
                out[b * 4 + 2 * h + 1] = z[1];
        }
    }
    res_advance(rng, nblocks);
}

/** Hands out the stream position for device-side generation (see resource.h). */
void mxki_random_reserve(mxk_random *rng, uint64_t n_blocks, uint64_t *key, uint64_t *counter_lo,
                         uint64_t *counter_hi) {
    if (rng == NULL)
        return;
    if (key != NULL)
        *key = rng->key;
    if (counter_lo != NULL)
        *counter_lo = rng->counter_lo;
    if (counter_hi != NULL)
        *counter_hi = rng->counter_hi;
    res_advance(rng, n_blocks);
}
