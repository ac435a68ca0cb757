/*
 * The symbolic graph (kernel-internal): nodes and symbols, the indexed graph the
 * passes work on, and the products of the passes (shapes/types, the gradient
 * plan, the memory plan) that the executor consumes.
 *
 * Semantics: nnvm/MXNet symbols (upstream docs/static_site/src/pages/api/architecture
 * overview.md "Symbol" and note_memory.md; dmlc/nnvm src/core/symbolic.cc,
 * src/nnvm/plan_memory.cc, src/executor/graph_executor.cc, python/mxnet/executor.py;
 * the JSON of src/nnvm/legacy_json_util.cc).
 *
 * Ownership: nodes are reference-counted and immutable after creation except for
 * their attribute dictionary (set_attr) and name; a symbol holds references on its
 * output nodes, a node on its input nodes. Threading: a symbol may be read from
 * several threads; mutating calls (set_attr) need external synchronisation.
 */
#ifndef MXK_GRAPH_H
#define MXK_GRAPH_H

#include <stdatomic.h>

#include "mxk.h"
#include "operator.h"

/* ------------------------------------------------------------------------- */
/* Nodes and symbols                                                         */
/* ------------------------------------------------------------------------- */

typedef struct mxk_gnode mxk_gnode;

/** One output of a node: (node, output index). Holds no reference by itself. */
typedef struct mxk_gentry {
    mxk_gnode *node;
    uint32_t index;
} mxk_gentry;

/** A graph node: an operator application or a variable. */
struct mxk_gnode {
    atomic_uint refcount;
    char *name;
    /** Operator with validated attributes, or NULL for a variable. */
    mxk_op_params *op;
    /**
     * The node's string attributes as the user gave them (MXNet "attrs"): for an
     * operator node its parameters (e.g. num_hidden) plus hidden keys (__lr_mult__),
     * for a variable its user attributes (__shape__, __lr_mult__, __wd_mult__,
     * __ctx_group__, __init__, __dtype__). Never NULL.
     */
    mxk_attrs *attrs;
    uint32_t num_inputs;
    mxk_gentry *inputs; /**< each input node is retained by this node */
};

/** Definition of the public opaque mxk_symbol: a list of output entries. */
struct mxk_symbol {
    uint32_t num_outputs;
    mxk_gentry *outputs; /**< each output node is retained by the symbol */
};

/** Creates a variable node (refcount 1). NULL on OOM (last error set). */
mxk_gnode *mxki_gnode_variable(const char *name);

/**
 * Creates an operator node (refcount 1) taking ownership of `op` and `attrs`
 * (also on failure) and retaining every input node. NULL on OOM.
 */
mxk_gnode *mxki_gnode_op(mxk_op_params *op, const char *name, mxk_attrs *attrs, uint32_t num_inputs,
                         const mxk_gentry *inputs);

/** Adds a reference. */
void mxki_gnode_retain(mxk_gnode *n);

/** Drops a reference; frees the node (and releases its inputs) at zero. Iterative, so deep
 *  chains do not overflow the stack. NULL: no-op. */
void mxki_gnode_release(mxk_gnode *n);

/** Number of outputs of a node: all of an operator's outputs (visible and hidden); 1 for a
 *  variable. */
uint32_t mxki_gnode_num_outputs(const mxk_gnode *n);

/** Number of visible outputs (what a symbol of this node exposes). */
uint32_t mxki_gnode_num_visible(const mxk_gnode *n);

/* ------------------------------------------------------------------------- */
/* Indexed graph                                                             */
/* ------------------------------------------------------------------------- */

/**
 * A symbol flattened for the passes: nodes in topological order (depth-first
 * post-order from the outputs, inputs in order, as nnvm's DFSVisit), entries
 * numbered by node_row_ptr (every output of every node, hidden ones included).
 */
typedef struct mxk_igraph {
    uint32_t num_nodes;
    mxk_gnode **nodes;    /**< topological order; not retained (the symbol keeps them) */
    uint32_t *entry_ptr;  /**< num_nodes + 1 prefix sums of node output counts */
    uint32_t num_entries; /**< entry_ptr[num_nodes] */
    uint32_t *in_ptr; /**< num_nodes + 1: node i's inputs are in_entries[in_ptr[i]..in_ptr[i+1]) */
    uint32_t *in_entries; /**< entry id of each input */
    uint32_t num_outputs;
    uint32_t *outputs; /**< entry ids of the symbol's outputs */
    uint32_t num_args;
    uint32_t *arg_nodes; /**< variable node ids in list_arguments order */
    uint32_t num_aux;
    uint32_t *aux_nodes; /**< variable node ids in list_auxiliary_states order */
} mxk_igraph;

/**
 * Builds the indexed graph of a symbol. Variables used as an operator's aux-state
 * inputs (input index >= the operator's argument count) are aux states; every other
 * variable is an argument (first visit order; a variable output is an argument).
 * Errors: MXK_ERR_INVALID_ARGUMENT when one variable is used both as an argument
 * and as an aux state (message names it and both nodes), or a node reads an output
 * index its input does not have; MXK_ERR_FORMAT for a cycle (not constructible
 * through the symbol API); MXK_ERR_OUT_OF_MEMORY.
 */
mxk_status mxki_igraph_build(const mxk_symbol *sym, mxk_igraph **out);

/** Frees an indexed graph. NULL: no-op. */
void mxki_igraph_free(mxk_igraph *g);

/** Entry id of output `index` of node `node_id`. */
static inline uint32_t mxk_igraph_entry(const mxk_igraph *g, uint32_t node_id, uint32_t index) {
    return g->entry_ptr[node_id] + index;
}

/** The node producing forward entry `e` (< num_entries): binary search in entry_ptr. */
static inline uint32_t mxk_igraph_entry_node(const mxk_igraph *g, uint32_t e) {
    uint32_t lo = 0, hi = g->num_nodes;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (g->entry_ptr[mid] <= e)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* ------------------------------------------------------------------------- */
/* Shape and type inference                                                  */
/* ------------------------------------------------------------------------- */

/**
 * Infers the shape of every entry (num_entries slots, in/out; unknown shapes ndim 0,
 * unknown dims 0; variables' `__shape__` attributes fill their entries when still
 * unknown) by running every operator's inference forwards and backwards until
 * nothing changes; results merge into the slots (a known dim never changes).
 * *num_unknown (may be NULL) receives the number of entries still incomplete (0 =
 * complete; incomplete is not an error). Inconsistency: MXK_ERR_SHAPE, message
 * "Error in operator <node>: <op>: <detail>", e.g. "Error in operator fc1:
 * FullyConnected: argument 'weight': expected (5,20), got (5,30)". A `__shape__`
 * that does not parse: MXK_ERR_INVALID_ARGUMENT naming the variable.
 */
mxk_status mxki_igraph_infer_shape(const mxk_igraph *g, mxk_shape *shapes, uint32_t *num_unknown);

/**
 * Same for dtypes (-1 unknown; `__dtype__` attributes, the numeric code MXNet writes
 * or a dtype name, fill unknown variable entries; MXK_ERR_TYPE with the same message
 * form).
 */
mxk_status mxki_igraph_infer_type(const mxk_igraph *g, int32_t *types, uint32_t *num_unknown);

/* ------------------------------------------------------------------------- */
/* Gradient plan                                                             */
/* ------------------------------------------------------------------------- */

/**
 * One step of the forward+backward schedule: the forward or the backward of one
 * operator node. Entry ids index the *full* entry space: [0, g->num_entries) are
 * forward entries; [g->num_entries, num_full_entries) are gradient entries and
 * head-gradient placeholders (see mxk_grad_plan).
 *
 * Forward step: in = the node's inputs (args then aux, as the operator lists
 * them), out = all its outputs, req per output: WRITE, or NULL for an output that
 * no step reads and that is not a graph output (MXNet gives never-referenced
 * entries kNullOp; the memory plan still gives it a block, released at once).
 * Backward step: in = out_grad (visible outputs; UINT32_MAX where the operator did
 * not declare it, or where no gradient flows into that output: the executor then
 * passes zeros, as MXNet's zero gradient), then in_data (arguments only), then
 * out_data (all outputs), UINT32_MAX where the operator did not declare it: this
 * is exactly the numbering of backward in-place hints (mxk_inplace_pair). Aux
 * states are not listed: they are the forward step's inputs past the arguments.
 * out = one gradient entry per argument input (UINT32_MAX where no gradient is
 * needed), with a req each: WRITE for the first contribution to a gradient entry,
 * ADD for later contributions (the gradient-aggregation node of an entry with
 * several consumers is this add-to chain), NULL where not needed. One step may
 * name the same gradient entry twice (x * x): the first WRITE, the later ADD; the
 * executor must hand the later ones a temporary and add it after the kernel (as
 * for kernels without MXK_KERNEL_SUPPORTS_ADDTO). The memory plan's `inplace`
 * flag tells where a WRITE output shares its input's block (use MXK_REQ_INPLACE).
 */
typedef struct mxk_exec_step {
    uint32_t node;     /**< forward node id in the indexed graph */
    uint32_t backward; /**< 0 forward, 1 backward */
    uint32_t num_in;
    uint32_t *in;
    uint32_t num_out;
    uint32_t *out;
    mxk_op_req *req; /**< num_out entries */
} mxk_exec_step;

/**
 * The schedule of a bound graph: forward steps in topological order, then (when any
 * gradient is wanted) backward steps in reverse topological order, pruned to what
 * reaches a wanted gradient. Gradients stop at BlockGrad-like operators
 * (op->def.no_gradient returning 1) and at arguments with grad_req null. A node
 * gets a backward step when it is differentiable, some argument input wants a
 * gradient, and a gradient reaches it: its backward reads no out_grad at all (a
 * loss such as SoftmaxOutput; also an operator like cpu-blas's BlockGrad, whose
 * backward writes zeros without declaring out_grad: it cannot be told apart, so it
 * gets a step; set no_gradient to prune it), or an out_grad it reads has a gradient.
 *
 * Gradient entries exist for arguments with a request other than null (external:
 * bound by the user; an argument gradient that no step writes, e.g. behind a
 * no_gradient operator, must be zero-filled by the executor for WRITE and left
 * alone for ADD) and for operator outputs whose gradient some backward step reads
 * and some step writes. Head gradients: a graph output whose gradient is read by
 * its producer's backward has a head-gradient entry, which is also its gradient
 * entry (head_grad[h] == grad_of[outputs[h]]): the executor copies the user's head
 * gradient into it before backward (an executor-owned buffer, MXNet's head-grad
 * arrays), and internal consumers of that output add (ADD) their contributions to it.
 * Argument gradients bound with ADD get ADD for every contribution.
 */
typedef struct mxk_grad_plan {
    uint32_t num_fwd_entries;  /**< = g->num_entries */
    uint32_t num_full_entries; /**< forward + gradient entries + head-gradient entries */
    uint32_t *grad_of;         /**< per forward entry: its gradient entry, or UINT32_MAX */
    uint32_t *grad_src;        /**< per gradient entry (index id - num_fwd_entries): the forward
                                    entry it is the gradient of (same shape and dtype) */
    uint32_t num_heads;        /**< = g->num_outputs */
    uint32_t *head_grad;       /**< per graph output: its head-gradient entry, or UINT32_MAX
                                    when the loss operator ignores it (outputs of one entry
                                    share it) */
    uint32_t num_steps;
    uint32_t num_fwd_steps; /**< steps [0, num_fwd_steps) are forward */
    mxk_exec_step *steps;
    uint32_t *arg_grad;  /**< per argument: gradient entry, or UINT32_MAX (null req) */
    mxk_op_req *arg_req; /**< per argument: the request the user asked for */
} mxk_grad_plan;

/**
 * Builds the schedule for `g` given one request per argument (g->num_args
 * mxk_op_req values, list_arguments order; NULL or all null = no gradients,
 * forward only). Backward dependencies come from each operator's
 * backward_dependency. Whether the operator has a backward kernel is not known
 * here (checked at bind). Errors: MXK_ERR_INVALID_ARGUMENT for a request other than
 * null/write/add ("Gradient request can only be nullop, add, write");
 * MXK_ERR_UNSUPPORTED when a gradient is wanted through a variable listed as a
 * graph output (it would need a copy step); MXK_ERR_OUT_OF_MEMORY. An entry listed
 * several times as an output has one head-gradient entry (head_grad repeats it):
 * the executor sums the head gradients into it.
 */
mxk_status mxki_grad_plan_build(const mxk_igraph *g, const mxk_op_req *arg_reqs,
                                mxk_grad_plan **out);

/**
 * Expands forward-entry shapes and dtypes to the full entry space (a gradient entry
 * has its forward entry's shape and dtype). Either pair may be NULL.
 */
void mxki_grad_plan_expand(const mxk_grad_plan *p, const mxk_shape *fwd_shapes,
                           const int32_t *fwd_types, mxk_shape *full_shapes, int32_t *full_types);

/**
 * Marks (1) the entries an executor binds outside the memory pool: argument and
 * aux-state entries, argument gradients and head gradients (MXNet
 * graph_executor.cc: kExternalStorageID for bound arrays; head gradients get
 * dedicated arrays). `external` has p->num_full_entries bytes; all others are 0.
 */
void mxki_grad_plan_mark_external(const mxk_igraph *g, const mxk_grad_plan *p, uint8_t *external);

/** Frees a plan. NULL: no-op. */
void mxki_grad_plan_free(mxk_grad_plan *p);

/* ------------------------------------------------------------------------- */
/* Memory plan                                                               */
/* ------------------------------------------------------------------------- */

/** Storage of one entry in a memory plan. */
enum {
    MXK_STORAGE_EXTERNAL = -1, /**< bound by the user (args, aux, arg gradients, head grads) */
    MXK_STORAGE_NONE = -2      /**< never materialised: not external and no step writes it */
};

/**
 * The static memory plan of a schedule (upstream note_memory.md and
 * src/nnvm/plan_memory.cc): every internal entry
 * gets a storage block id. The simulation walks the steps in schedule order with a
 * reference count per entry (reads by steps, ADD writes, +1 per graph output: graph
 * outputs stay readable after forward and after backward, as MXNet's Module reads
 * them for its metric). Entries kept for backward (declared backward dependencies)
 * are read by their backward step, so they live until it.
 * In-place: an output takes its input's block when the operator's hint allows it,
 * the output's request is WRITE, element counts and dtype widths match, and either
 * the input block has no other pending reader and every earlier user of the block is
 * an ancestor of the step (note_memory.md's in-place trap), or the pair is an identity with equal
 * size and dtype (shared even with other consumers: the values are equal).
 * Sharing: a block whose last reader has run is reused by a later entry, best fit by
 * size ([size, size*range] smallest first, then [size/range, size) largest first;
 * MXK_EXEC_MATCH_RANGE, default 16, 0 disables sharing; bytes = elements x dtype
 * size), but only when every step that used the block is an ancestor of the step
 * taking it in the step dependency graph (edges from the last writer of each entry a
 * step reads or writes), so two steps that may run in parallel never share memory:
 * engine dependencies on per-entry (or per-block) variables are then enough.
 * Outputs nobody reads (forward req NULL) still get a block, released at once.
 */
typedef struct mxk_mem_plan {
    uint32_t num_entries; /**< = plan->num_full_entries */
    int32_t *storage;     /**< per entry: block id >= 0, MXK_STORAGE_EXTERNAL or _NONE */
    uint8_t *inplace;     /**< per entry: 1 when it took an input's block in place (the step
                               writing it should pass MXK_REQ_INPLACE instead of WRITE) */
    uint32_t num_blocks;
    uint64_t *block_bytes;  /**< per block: the largest entry it holds, in bytes */
    uint64_t total_bytes;   /**< sum of block_bytes (UINT64_MAX when the sum overflows) */
    uint64_t naive_bytes;   /**< one block per internal entry (no reuse, no in-place) */
    uint32_t largest_entry; /**< the internal entry of most bytes (first of equals); UINT32_MAX:
                                 none */
    uint64_t largest_bytes; /**< its bytes (UINT64_MAX when its size overflows) */
} mxk_mem_plan;

/**
 * Plans memory for a schedule over `g` with entry shapes and types (full entry
 * space, p->num_full_entries each: forward entries, then gradient entries with their
 * forward entry's shape/type, see mxki_grad_plan_expand). `external[e]` (may be NULL:
 * none) marks entries bound by the user (mxki_grad_plan_mark_external). Shapes
 * should be complete; an unknown one counts as 0 bytes. Errors:
 * MXK_ERR_INVALID_ARGUMENT (NULL arguments), MXK_ERR_OUT_OF_MEMORY.
 */
mxk_status mxki_mem_plan_build(const mxk_igraph *g, const mxk_grad_plan *p, const mxk_shape *shapes,
                               const int32_t *types, const uint8_t *external, mxk_mem_plan **out);

/** Frees a plan. NULL: no-op. */
void mxki_mem_plan_free(mxk_mem_plan *m);

/**
 * Bytes of an array of shape `s` and dtype `t`: elements x dtype size (4 when the
 * dtype is unknown, -1); 0 for an unknown shape (ndim 0 or a dim <= 0); UINT64_MAX
 * when the product overflows 64 bits (more than any memory limit).
 */
uint64_t mxki_mem_entry_bytes(const mxk_shape *s, int32_t t);

#endif /* MXK_GRAPH_H */
