/*
 * Storage manager (kernel-internal): a pooled allocator per device on top of the
 * device backend's raw alloc/free (registry), with statistics.
 *
 * Semantics: MXNet's Storage (include/mxnet/storage.h, src/storage/
 * pooled_storage_manager.h, src/storage/storage.cc). Pooling rounds sizes
 * as MXNet's "Naive" GPU pool does: up to a multiple of the page size
 * (MXK_MEM_POOL_PAGE_SIZE, default 4096), and above MXK_MEM_LARGE_ALLOC_ROUND_SIZE
 * (default 2 MiB) to a multiple of that; freed blocks are kept per exact rounded
 * size and reused (most recently freed first). MXK_STORAGE_POOL=0 turns pooling off
 * for debugging: sizes are not rounded and every free is a raw free. The variables are
 * read once, at the first allocation; an invalid value makes allocations fail with
 * MXK_ERR_INVALID_ARGUMENT naming it ("storage: NAME=\"VALUE\" is invalid: expected an
 * integer in [MIN, MAX]"; POOL and GUARD take 0 or 1). On a raw allocation failure with
 * MXK_ERR_OUT_OF_MEMORY the device's pool is released and the allocation retried once.
 *
 * Guard (MXK_STORAGE_GUARD=1, default 0; read with the other variables): every block
 * on a host device (cpu, cpu_pinned; device memory cannot be read by the host) gets
 * red zones filled with the canary byte 0xFD: 64 bytes before the user bytes and at
 * least 64 after them (up to the end of the pooled block), armed again at every
 * allocation. mxki_storage_guard_verify checks them; the engine does after every
 * write of a variable that guards a block (mxki_engine_var_set_guard, engine.h), and
 * mxki_storage_free logs (ERROR) damage still there when a block is freed: "storage
 * guard: block PTR of N bytes on cpu(0) was written outside its bounds: canary damaged
 * at byte offset OFF (found when it was freed)" (temp space, plugin allocations,
 * arrays written without being declared written).
 * The red zones count in the block's size (statistics, rounding).
 *
 * Pinned memory (cpu_pinned(N), MXNet's PinnedMemoryStorage,
 * src/storage/pinned_memory_storage.h): served by the first of the GPU and CPU
 * backends that has host_alloc/host_free (ABI 1.4) and a device; without one, by the
 * CPU backend's alloc/free, as ordinary host memory. N must be a device of that
 * backend ("storage: device cpu_pinned(N) does not exist: pinned memory comes from
 * the gpu backend, which has 2 device(s)"). Pooled and counted apart from cpu(N). The backend is
 * chosen at the device's first allocation (again after mxki_storage_shutdown forgot
 * the device).
 *
 * Block sizes are kept in a host-side map (never in device memory). Statistics per
 * device: see mxk_storage_stats in mxk.h; bytes are rounded sizes (requested sizes
 * with pooling off); raw_allocs counts every call of the backend's alloc, failed ones
 * included.
 *
 * Thread safety: all functions but mxki_storage_shutdown are thread-safe (one lock per
 * device pool; the backend's alloc/free run under it).
 */
#ifndef MXK_STORAGE_H
#define MXK_STORAGE_H

#include "mxk.h"

/**
 * Allocates `bytes` on ctx. bytes == 0 gives *ptr = NULL and MXK_OK (as MXNet).
 * The caller owns the block until mxki_storage_free(ctx, *ptr). *ptr is NULL on error.
 * Errors (last error set): MXK_ERR_NOT_FOUND (no backend for the device type, or
 * dev_id out of range: "storage: no device backend is registered for device type 2
 * (gpu)", "storage: device cpu(5) does not exist: the cpu backend has 2 device(s)"),
 * MXK_ERR_OUT_OF_MEMORY (names the device and the size: "storage: out of memory on
 * gpu(0): could not allocate N bytes (block of M bytes), also after releasing the pool
 * and retrying: <backend message>"), another backend error as the backend returned it,
 * MXK_ERR_INVALID_ARGUMENT (ptr NULL, or an invalid environment variable).
 */
mxk_status mxki_storage_alloc(mxk_context ctx, uint64_t bytes, void **ptr);

/**
 * Returns ptr (from mxki_storage_alloc on ctx) to the pool (to the backend with pooling
 * off). NULL: no-op. A pointer that is not a live block of ctx (double free, wrong
 * device) is left alone; the thread's last error (MXK_ERR_INVALID_ARGUMENT) and stderr
 * say so.
 */
void mxki_storage_free(mxk_context ctx, void *ptr);

/**
 * Whether blocks allocated on ctx get red zones: MXK_STORAGE_GUARD=1 (and valid
 * storage settings) and ctx is a host device. Thread-safe.
 */
int mxki_storage_guarded(mxk_context ctx);

/**
 * Checks the red zones of `ptr`, a live block of ctx. Returns MXK_OK when they are
 * intact or the block is not guarded (*bytes = 0 then); MXK_ERR_INTERNAL when a canary
 * is damaged, with *bytes the block's requested size and *offset the first damaged
 * byte in memory order of the zone after the user bytes (>= *bytes), else of the zone
 * before them (< 0), counted from their first byte. The zones are armed again, so each damage is
 * reported once. Does not set the last error (the caller names the culprit).
 * Thread-safe; the caller must know that nothing writes the block meanwhile.
 */
mxk_status mxki_storage_guard_verify(mxk_context ctx, const void *ptr, uint64_t *bytes,
                                     int64_t *offset);

/** Frees every pooled (unused) block of ctx back to the backend. */
void mxki_storage_release_pool(mxk_context ctx);

/**
 * Releases all pools of all devices (mxk_shutdown). Blocks still in use are kept (and
 * can still be freed); a device with no block in use is forgotten (its statistics read
 * as zeros until it is used again). Must not run concurrently with any other storage
 * call; call it after mxki_resource_shutdown.
 */
void mxki_storage_shutdown(void);

#endif /* MXK_STORAGE_H */
