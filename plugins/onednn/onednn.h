/*
 * onednn plugin: internal declarations shared by its source files.
 *
 * The plugin registers oneDNN (Intel's Deep Neural Network Library, 2.x C API,
 * <dnnl.h>) kernels for operators that another plugin defines (cpu-blas): the
 * operator definitions (attributes, inference, backward dependencies) stay one
 * truth there; each kernel here parses the attributes it needs itself
 * (mxk_op_kernel_def.parse_param, ABI 1.2) and declines, through `supports`,
 * every configuration it does not handle, so the next backend in the preference
 * list runs it. Every dn_*.c family file registers its kernels from one
 * dn_register_* function that plugin.c calls. Nothing here is exported.
 *
 * Primitives: each bound node creates its primitives once (in create_state, or at
 * its first call for a given write request) and keeps them in its state;
 * oneDNN's own primitive cache (bounded LRU, DNNL_PRIMITIVE_CACHE_CAPACITY,
 * default 1024 entries) makes identical configurations share one compiled
 * primitive across nodes.
 *
 * Threads: oneDNN here runs on GNU OpenMP, and 2.x fixes many primitives' team
 * size when their descriptor is created. One budget, ctx->num_threads (mxk's
 * MXK_NUM_THREADS knob), applies at both ends: descriptors and primitives are
 * created with the calling thread's OpenMP count set to it (dn_threads_for_create),
 * and dn_execute runs one primitive at a time with a team of that size, so the
 * engine workers running primitives never exceed the knob together.
 */
#ifndef MXK_ONEDNN_H
#define MXK_ONEDNN_H

#include <stddef.h>
#include <stdint.h>

#include <dnnl.h>

#include "mxk_sdk.h"

/** Backend name of every kernel this plugin registers. */
#define DN_BACKEND "onednn"

/* --- dn_common.c ------------------------------------------------------------- */

/** Creates the CPU engine (once, from init). MXK_ERR_INTERNAL with oneDNN's status. */
mxk_status dn_init(mxk_error_sink *err);

/** Destroys the engine (from mxk_plugin_shutdown). */
void dn_shutdown(void);

/** The CPU engine made by dn_init. */
dnnl_engine_t dn_engine(void);

/**
 * Turns a oneDNN status into mxk's: dnnl_success is MXK_OK; anything else writes
 * "WHAT: oneDNN STATUS" (dnnl_status2str) into err and returns MXK_ERR_INTERNAL
 * (MXK_ERR_OUT_OF_MEMORY for dnnl_out_of_memory, MXK_ERR_UNSUPPORTED for
 * dnnl_unimplemented).
 */
mxk_status dn_check(dnnl_status_t st, const char *what, mxk_error_sink *err);

/** Fails the enclosing function with dn_check's status unless `call` succeeds. */
#define DN_CHECK(call, what, err)                                                                  \
    do {                                                                                           \
        mxk_status dn_rc_ = dn_check((call), (what), (err));                                       \
        if (dn_rc_ != MXK_OK)                                                                      \
            return dn_rc_;                                                                         \
    } while (0)

/**
 * A plain (row-major, dense) float32 memory descriptor of `ndims` (1 to 6) dims
 * (tags a, ab, abc, ...). MXK_ERR_UNSUPPORTED outside 1..6 dims.
 */
mxk_status dn_md_plain(dnnl_memory_desc_t *md, int ndims, const dnnl_dim_t *dims,
                       mxk_error_sink *err);

/** dn_md_plain over an mxk_shape (its ndim and dims). */
mxk_status dn_md_of_shape(dnnl_memory_desc_t *md, const mxk_shape *s, mxk_error_sink *err);

/** Number of elements of a shape (1 for ndim 0). */
int64_t dn_shape_size(const mxk_shape *s);

/**
 * One argument of dn_execute: oneDNN's argument index (DNNL_ARG_SRC, ...), the
 * memory descriptor and the data pointer (the descriptor says how it is laid out).
 */
typedef struct dn_arg {
    int arg;
    const dnnl_memory_desc_t *md;
    void *data;
} dn_arg;

/**
 * Executes `prim` on the calling thread's stream with the given arguments (memory
 * objects are wrapped around the pointers for this call; at most 23; the
 * primitive's scratchpad is added from scratch slot 3 unless given) and waits for
 * it, with an
 * OpenMP team of dn_num_threads(ctx), one primitive at a time in the process (see
 * the header comment). Thread-safe. Errors: dn_check's.
 */
mxk_status dn_execute(const mxk_op_ctx *ctx, dnnl_primitive_t prim, int nargs, const dn_arg *args,
                      mxk_error_sink *err);

/** The threads a kernel call may use: ctx->num_threads, or the online CPUs when 0. */
int dn_num_threads(const mxk_op_ctx *ctx);

/**
 * Sets the calling thread's OpenMP thread count to the budget of the latest
 * execution (before any: MXK_NUM_THREADS, else the online CPUs). Call right before
 * creating a primitive descriptor or primitive other than through dn_pd_create,
 * dn_reorder_pd_create and dn_primitive, which call it.
 */
void dn_threads_for_create(void);

/**
 * dnnl_primitive_desc_create on the plugin's engine with a user-managed scratchpad,
 * which dn_execute supplies. Every primitive of the plugin is made this way (or by
 * dn_reorder_pd_create): oneDNN 2.x's library-managed scratchpad belongs to the
 * thread that created the primitive, so a primitive made in create_state and run
 * on an engine worker would read a NULL scratchpad. Returns oneDNN's status.
 */
dnnl_status_t dn_pd_create(dnnl_primitive_desc_t *pd, const_dnnl_op_desc_t desc,
                           const_dnnl_primitive_desc_t hint);

/** A reorder primitive descriptor from `from` to `to` on the plugin's engine, as dn_pd_create. */
dnnl_status_t dn_reorder_pd_create(dnnl_primitive_desc_t *pd, const dnnl_memory_desc_t *from,
                                   const dnnl_memory_desc_t *to);

/** The attributes dn_pd_create uses (user scratchpad), for the sum and concat descriptors. */
const_dnnl_primitive_attr_t dn_attr(void);

/**
 * Creates a primitive from a primitive descriptor; on failure destroys nothing.
 * `what` names it for the error.
 */
mxk_status dn_primitive(dnnl_primitive_t *prim, const_dnnl_primitive_desc_t pd, const char *what,
                        mxk_error_sink *err);

/** The memory descriptor a primitive descriptor wants for `what` (dnnl_query_*_md, index). */
const dnnl_memory_desc_t *dn_pd_md(const_dnnl_primitive_desc_t pd, dnnl_query_t what, int index);

/**
 * Scratch memory of at least `bytes` for one call (a grow-only per-thread buffer
 * of the plugin, 64-byte aligned); NULL with MXK_ERR_OUT_OF_MEMORY in err.
 * Valid until the next dn_scratch call on this thread with the same `slot` (0..2
 * for kernels; dn_execute uses slot 3 for the primitives' scratchpads).
 */
void *dn_scratch(int slot, size_t bytes, mxk_error_sink *err);

/**
 * Registers `kdef` for its op_name on MXK_DEV_CPU with backend "onednn" (both set
 * here). The operator may come from a plugin loaded later: kernels resolve by name.
 */
mxk_status dn_register_kernel(mxk_registrar *reg, mxk_op_kernel_def *kdef, mxk_error_sink *err);

/* --- family registrations (one per dn_*.c file) ------------------------------ */

/** Convolution and Deconvolution (dn_conv.c). */
mxk_status dn_register_conv(mxk_registrar *reg, mxk_error_sink *err);
/** FullyConnected (dn_fc.c). */
mxk_status dn_register_fc(mxk_registrar *reg, mxk_error_sink *err);
/** Activation and LeakyReLU (dn_eltwise.c). */
mxk_status dn_register_eltwise(mxk_registrar *reg, mxk_error_sink *err);
/** elemwise_add, add_n / ElementWiseSum and Concat (dn_sum.c). */
mxk_status dn_register_sum(mxk_registrar *reg, mxk_error_sink *err);
/** Pooling (dn_pool.c). */
mxk_status dn_register_pool(mxk_registrar *reg, mxk_error_sink *err);
/** BatchNorm (dn_bn.c). */
mxk_status dn_register_bn(mxk_registrar *reg, mxk_error_sink *err);
/** LRN (dn_lrn.c). */
mxk_status dn_register_lrn(mxk_registrar *reg, mxk_error_sink *err);
/** softmax, log_softmax and SoftmaxOutput (dn_softmax.c). */
mxk_status dn_register_softmax(mxk_registrar *reg, mxk_error_sink *err);
/** RNN (dn_rnn.c). */
mxk_status dn_register_rnn(mxk_registrar *reg, mxk_error_sink *err);

#endif /* MXK_ONEDNN_H */
