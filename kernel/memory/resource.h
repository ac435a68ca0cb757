/*
 * Resource manager (kernel-internal): temporary workspace and random streams per
 * device, handed to operator kernels that request them.
 *
 * Semantics: MXNet's ResourceManager (include/mxnet/resource.h, src/resource.cc).
 * Each device has MXK_CPU_TEMP_COPY (default 4)
 * / MXK_GPU_TEMP_COPY (default 1) temp-space slots handed out round-robin, and one
 * random slot. Every slot has its own engine variable that operators using it list
 * as written, so users of one slot are serialised (which makes random draws
 * reproducible). Copies are handed out with the counter incremented before use (with
 * 4 copies the first request gets copy 1, as MXNet). Temp space only grows: a request
 * that fits reuses the buffer, a larger one replaces it with exactly the requested size
 * (the old buffer goes back to the storage pool, after synchronising a non-CPU device).
 *
 * Random streams are Philox-4x32-10 (abi/mxk_philox.h): the key of device
 * (type t, id d) after mxk_random_seed(s) is s * 127 + d modulo 2^64 whatever the
 * type (cpu(d) and gpu(d) draw alike); the seed is 0 until the first mxki_resource_seed (and again
 * after mxki_resource_shutdown). Draws advance a 128-bit counter by ceil(n/4) blocks, so the
 * numbers depend only on the seed and the order of draws on the stream, never on thread
 * count. Each draw starts on a fresh block: drawing n then m numbers equals drawing
 * n + m at once only when n is a multiple of 4. The exact mappings (for device kernels
 * that must reproduce them) are documented at the functions below.
 *
 * Environment: MXK_CPU_TEMP_COPY (also for cpu_pinned), MXK_GPU_TEMP_COPY, integers in
 * [1, 1024], read when a device's temp slots are created; an invalid value makes
 * mxki_resource_get fail with MXK_ERR_INVALID_ARGUMENT naming it.
 *
 * Thread safety: acquiring slots and seeding are thread-safe; using a slot's buffer or
 * stream is only valid inside an engine function that writes the slot's variable.
 */
#ifndef MXK_RESOURCE_H
#define MXK_RESOURCE_H

#include "engine.h"
#include "mxk.h"
#include "mxk_abi_op.h"

/** A resource slot owned by the manager (lives until mxki_resource_shutdown). */
typedef struct mxk_resource_slot mxk_resource_slot;

/** Definition of the ABI's opaque random stream. */
struct mxk_random {
    uint64_t key;
    uint64_t counter_lo;
    uint64_t counter_hi;
};

/**
 * Gets a slot of `type` (mxk_resource_type) for ctx: temp space round-robin over
 * the device's copies, random the device's stream. The slot is owned by the manager
 * and valid until mxki_resource_shutdown. Returns NULL and sets the last error for an
 * unknown type (MXK_ERR_INVALID_ARGUMENT), an unknown device type or dev_id out of
 * range (MXK_ERR_NOT_FOUND, messages as the storage manager's with "resource: "),
 * an invalid MXK_*_TEMP_COPY, or out of memory.
 */
mxk_resource_slot *mxki_resource_get(mxk_context ctx, int32_t type);

/** The engine variable guarding the slot (list it as written). */
mxk_engine_var *mxki_resource_var(const mxk_resource_slot *slot);

/**
 * Makes the slot's temp space at least `bytes` (no-op for random slots) and returns
 * the ABI view handed to kernels (owned by the slot; valid until the next prepare of
 * the slot). view->bytes is the size of the buffer (the largest request so far).
 * Call only inside an engine function writing the slot's var. Errors into `err`:
 * MXK_ERR_OUT_OF_MEMORY (the storage manager's message; the slot is then empty),
 * MXK_ERR_INVALID_ARGUMENT for NULL slot/view.
 */
mxk_status mxki_resource_prepare(mxk_resource_slot *slot, uint64_t bytes, const mxk_resource **view,
                                 mxk_error_sink *err);

/**
 * Re-seeds every random stream (pushed as writes of the streams' variables, so draws
 * pushed before it use the old stream and draws pushed after it the new one; the
 * pushes run even if an earlier operator failed on the variable). Streams created
 * later start from this seed. With the engine not running, resets them directly.
 * Errors: what the engine's push returned (last error set).
 */
mxk_status mxki_resource_seed(uint64_t seed);

/**
 * Frees every slot's memory and variable and forgets all devices and the seed (at
 * mxk_shutdown, after the engine is idle or stopped; before mxki_storage_shutdown).
 * Slot pointers handed out before become invalid.
 */
void mxki_resource_shutdown(void);

/*
 * Host services on a stream (mxk_host_api's random_*). A draw of n numbers from a
 * stream with key K and counter C (128-bit, counter_lo/counter_hi) uses the blocks
 *   X_b = mxk_philox4x32_10(mxk_philox_counter(C_lo, C_hi, b), K), b = 0 .. ceil(n/4)-1,
 * output i coming from block i / 4, word x_{i%4}; the unused words of the last block are
 * discarded and C advances by ceil(n/4). All arithmetic below is IEEE binary64 without
 * contraction (mxk_philox.h's mxk_philox_uniform and mxk_philox_normal2 compute one
 * element or pair, on the host and on a device). NULL rng or out: no-op.
 * Not thread-safe per stream (the slot's engine variable serialises its users).
 */

/**
 * n floats uniform in [lo, hi): out[i] = (float)((double)lo + ((double)hi - (double)lo)
 * * (double)mxk_philox_to_unit_float(x_{i%4})); a value that rounds to hi or above is
 * replaced by the largest float below hi. If !(hi > lo) every output is lo.
 */
void mxki_random_uniform(mxk_random *rng, float *out, uint64_t n, float lo, float hi);

/**
 * n floats normal(mean, std) by Box-Muller. Per block, with u_k = ((double)x_k + 0.5) *
 * 2^-32 in (0, 1) (so log(0) cannot happen; tails reach about 6.7 sigma):
 *   r0 = sqrt(-2 log u0), t0 = 2 pi u1, r1 = sqrt(-2 log u2), t1 = 2 pi u3,
 *   z = {r0 cos t0, r0 sin t0, r1 cos t1, r1 sin t1},
 *   out[4b + j] = (float)((double)mean + (double)std * z_j),
 * with 2 pi = 6.283185307179586 (the double nearest). A device kernel reproduces the
 * values up to the last-ulp differences of its log/sqrt/sin/cos.
 */
void mxki_random_normal(mxk_random *rng, float *out, uint64_t n, float mean, float std);

/**
 * Reserves n_blocks blocks for device-side generation: returns the stream's key and the
 * counter the next host draw would have used (block i of the reservation is
 * mxk_philox4x32_10(mxk_philox_counter(*counter_lo, *counter_hi, i), *key)), then
 * advances the counter by n_blocks (modulo 2^128). Output pointers may be NULL.
 */
void mxki_random_reserve(mxk_random *rng, uint64_t n_blocks, uint64_t *key, uint64_t *counter_lo,
                         uint64_t *counter_hi);

#endif /* MXK_RESOURCE_H */
