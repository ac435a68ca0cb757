/*
 * The graph executor's internals (kernel-internal; public API in mxk.h "Executor").
 *
 * Semantics: MXNet's GraphExecutor (upstream src/executor/graph_executor.cc:
 * Init/InitArguments/InitDataEntryMemory/InitCachedOps/RunOps/Backward/Reshape/
 * Print; src/c_api/c_api_executor.cc; python/mxnet/executor.py).
 *
 * Layout of the implementation:
 *   executor.c         bind (the core all entry points share), simple_bind, free,
 *                      arrays by name, copy_params_from, reresolve
 *   executor_memory.c  the memory pool: one NDArray chunk per storage block of the
 *                      memory plan, lent to executors bound with shared_exec,
 *                      and typed views of chunks
 *   executor_run.c     forward, backward, the monitor callback, and the cached helper
 *                      ops (head-gradient copies, zero fills)
 *   executor_reshape.c reshape
 *   executor_debug.c   debug_str and plan bytes
 *   executor_profile.c the per-node profiler and backend queries
 *
 * Data model: a bound executor keeps the indexed graph, the gradient plan (its
 * schedule of forward and backward steps) and the memory plan of its symbol; an
 * array per entry of the full entry space (bound arrays for arguments, aux states
 * and argument gradients, executor-owned arrays for head gradients, typed views of
 * pool chunks for internal entries); an operator instance per operator node; and a
 * prepared call (op_instance.h) per step, pushed as a cached engine op, so forward
 * and backward allocate nothing once each mode has run once.
 *
 * Threading: one executor must not be used from two threads at once; executors that
 * share memory (shared_exec, reshape) must not run concurrently.
 */
#ifndef MXK_EXECUTOR_INTERNAL_H
#define MXK_EXECUTOR_INTERNAL_H

#include "engine.h"
#include "graph.h"
#include "ndarray.h"
#include "op_instance.h"

/** A cached copy of a user's head gradient into the executor's head-gradient array. */
typedef struct exec_head_copy {
    struct exec_copy_arg *arg; /**< the cached op's argument (owned by the op), or NULL */
    mxk_engine_cached_op *op;  /**< copies arg->src into the head-gradient array */
} exec_head_copy;

/** Definition of the public opaque mxk_executor. */
struct mxk_executor {
    mxk_context ctx;
    mxk_symbol *sym; /**< the executor's own reference to the graph's nodes */
    mxk_igraph *g;
    mxk_grad_plan *plan;
    mxk_mem_plan *mem;
    uint32_t num_entries; /**< full entry space: plan->num_full_entries */
    mxk_shape *shapes;    /**< per full entry */
    int32_t *types;       /**< per full entry */

    uint32_t num_args, num_aux, num_outputs;
    char **arg_names; /**< per argument (igraph order), owned */
    char **aux_names;
    char **out_names;      /**< MXNet's output names ("fc1_output"), owned */
    mxk_ndarray **args;    /**< executor-owned handles (views of what was bound) */
    mxk_ndarray **grads;   /**< per argument, NULL where no gradient array was bound */
    mxk_op_req *grad_reqs; /**< per argument, as bound (NULL where no gradient array) */
    mxk_ndarray **aux;

    mxk_ndarray **entry; /**< per full entry: an owned handle, or NULL (never materialised) */

    /** Storage blocks: blocks[b] is the chunk (1-D uint8) behind block b of the plan. */
    mxk_ndarray **blocks;
    /**
     * The pool this executor lends (InitDataEntryMemory): its own blocks plus chunks appended by
     * executors bound with this one as shared_exec. Owned handles.
     */
    mxk_ndarray **pool;
    uint32_t pool_len, pool_cap;

    mxk_op_instance **inst; /**< per node, NULL for variables */
    mxk_op_call **calls;    /**< per step of the schedule */
    mxk_ndarray **zeros;    /**< per step: owned zero arrays of absent out_grads (list) */
    uint32_t num_zeros, cap_zeros;

    exec_head_copy *heads; /**< per output */
    /** Cached zero fills of argument gradients that no step writes (WRITE requests). */
    mxk_engine_cached_op **fills;
    uint32_t num_fills;
    uint32_t num_bwd_steps; /**< backward steps of the schedule */

    mxk_monitor_fn monitor;
    void *monitor_user;
    int32_t monitor_all;
    int32_t profiling; /**< mxk_executor_set_profiling: 1 while the calls count */
};

/* ---- executor.c ---- */

/**
 * Binds `sym` with arguments, gradients (entries may be NULL), requests (one per
 * argument; ignored where no gradient array is given) and aux states. Takes
 * ownership of every handle in args/grads/aux (also on failure) and of nothing
 * else. The core of bind, simple_bind and reshape.
 */
mxk_status mxki_exec_bind_owned(const mxk_symbol *sym, mxk_context ctx, uint32_t num_args,
                                mxk_ndarray **args, mxk_ndarray **grads, const mxk_op_req *reqs,
                                uint32_t num_aux, mxk_ndarray **aux, mxk_executor *shared_exec,
                                mxk_executor **out);

/**
 * Frees every handle in args and grads (num_args each) and in aux (num_aux): the
 * handles mxki_exec_bind_owned would have taken when the caller fails before binding.
 * Any of the arrays may be NULL (nothing to free there); the arrays themselves stay
 * the caller's. The failure path of bind, simple_bind and reshape.
 */
void mxki_exec_free_handles(uint32_t num_args, mxk_ndarray **args, mxk_ndarray **grads,
                            uint32_t num_aux, mxk_ndarray **aux);

/**
 * Checks the named shapes given to simple_bind / reshape: every name present
 * (MXK_ERR_INVALID_ARGUMENT "<who>: shape name <i> is NULL", also when `names` or
 * `shapes` is NULL) and none given twice (MXNet's "Duplicate shapes are provided for
 * argument <name> in <where>").
 */
mxk_status mxki_exec_check_shape_names(uint32_t num, const char *const *names,
                                       const mxk_shape *shapes, const char *who, const char *where);

/** Index of argument `name`, or UINT32_MAX. */
uint32_t mxki_exec_find_arg(const mxk_executor *ex, const char *name);

/** Index of aux state `name`, or UINT32_MAX. */
uint32_t mxki_exec_find_aux(const mxk_executor *ex, const char *name);

/* ---- executor_memory.c ---- */

/**
 * A new handle viewing `base`'s memory from its offset with another shape and dtype
 * (fewer or equal bytes; NDArray::AsArray / Reshape to a prefix). NULL on OOM or when
 * the view would not fit (last error set).
 */
mxk_ndarray *mxki_exec_typed_view(const mxk_ndarray *base, const mxk_shape *shape, int32_t dtype);

/**
 * Allocates ex->blocks for ex->mem (InitDataEntryMemory): blocks by size, largest first, each
 * taking the smallest chunk of shared_exec's pool that fits on the same device (best fit, each
 * chunk once); otherwise a new chunk, appended to shared_exec's pool. The executor's own pool
 * starts as its blocks. Errors: storage errors, OOM.
 */
mxk_status mxki_exec_alloc_blocks(mxk_executor *ex, mxk_executor *shared_exec);

/**
 * The memory limit of bind, in bytes: MXK_MEM_LIMIT (a byte count), else the
 * physical memory (sysconf _SC_PHYS_PAGES x _SC_PAGE_SIZE; UINT64_MAX when unknown).
 * A bad value is warned about once and ignored. Read at every call. Thread-safe.
 */
uint64_t mxki_exec_mem_limit(void);

/**
 * Refuses to allocate `bytes` over mxki_exec_mem_limit(), before anything is
 * allocated, so a graph no memory can hold is an error at bind instead of an
 * out-of-memory kill while the arrays are filled. `what` says what needs the bytes
 * ("bind: the memory plan"); `largest` is the entry of `g` (forward or, with plan
 * `p`, gradient entry; UINT32_MAX: none) of `largest_bytes` that is named.
 * MXK_ERR_OUT_OF_MEMORY: "<what> needs N bytes, more than the memory limit of L
 * bytes (MXK_MEM_LIMIT); the largest array is the output of FullyConnected 'fc1'
 * (B bytes)" (or "argument 'fc1_weight' of FullyConnected 'fc1'", "the gradient of
 * ..."); a byte count of UINT64_MAX (overflowed) is written "over 18446744073709551615".
 * Upstream has no such check (it lets the allocation fail).
 */
mxk_status mxki_exec_check_mem_limit(const mxk_igraph *g, const mxk_grad_plan *p, const char *what,
                                     uint64_t bytes, uint32_t largest, uint64_t largest_bytes);

/* ---- executor_run.c ---- */

/** Prepares the head-gradient copies and the zero fills (after the calls). */
mxk_status mxki_exec_prepare_backward_helpers(mxk_executor *ex);

/** Frees the head-gradient copies and zero fills (their args go when their work is done). */
void mxki_exec_free_backward_helpers(mxk_executor *ex);

#endif /* MXK_EXECUTOR_INTERNAL_H */
