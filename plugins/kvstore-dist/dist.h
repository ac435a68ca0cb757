/*
 * Shared declarations of the kvstore-dist plugin: the process-wide MPI state
 * (plugin.c) and the allreduce transport (transport.c).
 *
 * Semantics: MXNet's distributed KVStore (upstream src/kvstore/kvstore_dist.h,
 * python/mxnet/kvstore/kvstore.py, docs "Distributed Training in MXNet"), built as
 * an allreduce per key instead of a parameter server: see transport.c.
 */
#ifndef MXK_KVSTORE_DIST_H
#define MXK_KVSTORE_DIST_H

#include <mpi.h>

#include "mxk_plugin.h"

/** The host table, set by mxk_plugin_init (valid until process exit). */
extern const mxk_host_api *dist_host;

/**
 * What every store's create does first: reads MXK_KVSTORE_TIMEOUT into *timeout
 * (positive seconds, default 60), then initialises MPI once per process, lazily
 * (the first transport create, never at plugin load), asking for
 * MPI_THREAD_MULTIPLE. `name` (the store type) names the store in errors:
 * MXK_ERR_INVALID_ARGUMENT "KVStore NAME: MXK_KVSTORE_TIMEOUT must be a positive
 * number of seconds, got 'V'"; MXK_ERR_STATE when the process was not started by
 * an MPI launcher; MXK_ERR_BACKEND when MPI fails or gives less than
 * MPI_THREAD_MULTIPLE. Thread-safe.
 */
mxk_status dist_mpi_start(const char *name, double *timeout, mxk_error_sink *err);

/** The sum operator for float16 (uint16 bit patterns), valid after dist_mpi_start. */
MPI_Op dist_half_sum_op(void);

/** 64-bit FNV-1a of a string: keys are compared across processes by hash. Pure. */
uint64_t dist_key_hash(const char *s);

/** Writes MPI's text of error code `code` into buf (len bytes) and returns buf. */
const char *dist_mpi_error(int code, char *buf, size_t len);

/*
 * 2-bit gradient compression (compress.c; upstream src/kvstore/gradient_compression.cc
 * and gradient_compression-inl.h): each float32 element of grad + residual becomes
 * one of 0, +threshold, -threshold, in 2 bits, 16 per 32-bit word; the residual
 * keeps what was not sent (error feedback).
 */

/** Number of 32-bit words holding `n` 2-bit codes. Pure. */
size_t dist_2bit_words(size_t n);

/**
 * Quantises n elements: residual += grad; an element >= threshold sends +threshold
 * (residual -= threshold), <= -threshold sends -threshold (residual += threshold),
 * else 0. Writes dist_2bit_words(n) words of codes. Pure apart from its outputs.
 */
void dist_2bit_quantize(const float *grad, float *residual, uint32_t *codes, size_t n,
                        float threshold);

/** Adds the n values that `codes` stand for (0, +threshold, -threshold) to out. */
void dist_2bit_dequantize_add(const uint32_t *codes, float *out, size_t n, float threshold);

/** Registers the transport dist_async (async.c) with the kernel. */
mxk_status dist_register_async(mxk_registrar *reg, mxk_error_sink *err);

/** Registers the transports dist_sync and dist_device_sync with the kernel. */
mxk_status dist_register_transports(mxk_registrar *reg, mxk_error_sink *err);

#endif /* MXK_KVSTORE_DIST_H */
