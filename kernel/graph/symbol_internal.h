/*
 * Symbol helpers shared by the graph sources (kernel-internal): depth-first
 * post-order of a graph, a node -> index map, symbols from output entries, the
 * names MXNet derives from a graph (argument / aux-state classification, output
 * names) and MXNet's hidden attribute keys.
 *
 * Semantics: dmlc/nnvm include/nnvm/graph.h DFSVisit (iterative post-order from
 * the heads, inputs in order, each node once), src/core/symbolic.cc
 * (ListInputs, ListOutputNames, GetInternals), MXNet src/c_api/c_api_common.h
 * kHiddenKeys. Usable by the passes and the executor too (mxki_graph_post_order
 * gives the node order of mxk_igraph, mxki_symbol_input_nodes its argument and
 * aux-state order).
 */
#ifndef MXK_SYMBOL_INTERNAL_H
#define MXK_SYMBOL_INTERNAL_H

#include <stddef.h>

#include "graph.h"

/**
 * Every node reachable from `heads`, in nnvm's DFSVisit order: iterative
 * depth-first post-order, heads in order, each node's inputs in order, each node
 * once. *nodes is a malloc'd array of *num pointers (not retained) that the caller
 * frees with free(). Errors: MXK_ERR_OUT_OF_MEMORY.
 */
mxk_status mxki_graph_post_order(const mxk_gentry *heads, uint32_t num_heads, mxk_gnode ***nodes,
                                 uint32_t *num);

/** An open-addressing map from node pointer to a uint32_t (e.g. the node's index). */
typedef struct mxk_node_index {
    uint32_t capacity; /**< power of two, or 0 before the first insertion */
    uint32_t count;
    const mxk_gnode **keys;
    uint32_t *values;
} mxk_node_index;

/** Initialises an empty map sized for about `expected` entries. MXK_ERR_OUT_OF_MEMORY. */
mxk_status mxki_node_index_init(mxk_node_index *m, uint32_t expected);

/** Sets key -> value (replacing). MXK_ERR_OUT_OF_MEMORY when it must grow and cannot. */
mxk_status mxki_node_index_put(mxk_node_index *m, const mxk_gnode *key, uint32_t value);

/** The value of key, or UINT32_MAX when absent. */
uint32_t mxki_node_index_get(const mxk_node_index *m, const mxk_gnode *key);

/** Frees the map's arrays (the map may be re-initialised). */
void mxki_node_index_free(mxk_node_index *m);

/**
 * A new symbol whose outputs are copies of `entries` (num >= 1); every output
 * node is retained. MXK_ERR_OUT_OF_MEMORY.
 */
mxk_status mxki_symbol_from_entries(uint32_t num, const mxk_gentry *entries, mxk_symbol **out);

/**
 * The node behind every output of `sym` when they all come from one node (a
 * single-output symbol or all outputs of one operator), else NULL (a group).
 * MXNet: the node Symbol::GetAttr / SetAttrs / name work on.
 */
mxk_gnode *mxki_symbol_single_node(const mxk_symbol *sym);

/**
 * The variables of `sym` in nnvm's DFSVisit order, split as MXNet's
 * ListInputs(kReadOnly) / ListInputs(kAuxiliaryStates): a variable that some
 * operator node takes at an aux-state position (input index >= the operator's
 * number of arguments) is an aux state, every other variable an argument.
 * `aux` 0 lists arguments, 1 aux states. *nodes (malloc'd, not retained, freed
 * with free()) gets *num entries. MXK_ERR_OUT_OF_MEMORY.
 */
mxk_status mxki_symbol_input_nodes(const mxk_symbol *sym, int aux, mxk_gnode ***nodes,
                                   uint32_t *num);

/**
 * MXNet's name of an output entry (nnvm ListOutputNames): a variable's own name;
 * for an operator "<node>_<output name>" ("fc1_output"), or the output name alone
 * when the node has no name. Malloc'd; NULL on out-of-memory (last error set).
 */
char *mxki_gentry_output_name(const mxk_gentry *e);

/**
 * MXNet's hidden attribute keys (src/c_api/c_api_common.h kHiddenKeys: ctx_group,
 * lr_mult, wd_mult, force_mirroring, mirror_stage, profiler_scope): key i, or
 * NULL past the end. Stored on nodes as "__key__".
 */
const char *mxki_mxnet_hidden_key(size_t i);

/**
 * Copies every entry of `src` into `dst` (replacing equal keys).
 * MXK_ERR_OUT_OF_MEMORY.
 */
mxk_status mxki_attrs_merge(mxk_attrs *dst, const mxk_attrs *src);

/**
 * MXNet's compose-time hints on variables feeding an operator
 * (FSetInputVarAttrOnCompose, nnvm's Symbol::Compose): for each input of `n` fed by
 * a variable, the operator's mxk_op_def.input_var_attrs (ABI 1.3) gives key/value
 * pairs, set on the variable where it lacks the key (BatchNorm: `__init__` of
 * moving_mean / moving_var). Applied by compose and by the legacy-JSON upgrade
 * (before 0.9.4). Errors: the callback's, prefixed "OP: input I: ";
 * MXK_ERR_ABI "OP: input_var_attrs for input I gave N strings, not key/value
 * pairs"; MXK_ERR_OUT_OF_MEMORY.
 */
mxk_status mxki_gnode_set_input_var_hints(mxk_gnode *n);

/**
 * 1 when an operator must be given all its inputs: MXNet's Compose (nnvm
 * src/core/symbolic.cc) creates variables for missing inputs by the operator's input
 * names (FListInputNames), and refuses ("Not enough argument to call operator X") an
 * operator registered without them that takes more than one input: in MXNet 1.9.1
 * the optimizer updates (src/operator/optimizer_op.cc: sgd_update, sgd_mom_update,
 * adam_update, ...). mxk's operators always have names, so the kernel recognises such
 * an update by what it does: more than one input, no gradient (no_gradient), and its
 * output written in place over an input (forward_inplace). Used by compose and the
 * symbol JSON loader.
 */
int mxki_op_needs_all_inputs(const mxk_op_params *p);

/** Name of input slot `i` of an operator: argument i, or aux state i - number of arguments. */
const char *mxki_op_slot_name(const mxk_op_params *p, uint32_t i);

/**
 * The variable MXNet makes for an operator input that was not given (DefaultVarName,
 * upstream MXNet src/nnvm/legacy_json_util.cc / nnvm src/core/symbolic.cc): named
 * "<node_name>_<arg>" ("<arg>" when node_name is empty), carrying a copy of `attrs`
 * (the node's attributes). Used by compose (missing inputs) and by the legacy-JSON
 * upgrade before 0.9.0 (unstored aux states). A new reference, or NULL on
 * out-of-memory; the caller sets its own message.
 */
mxk_gnode *mxki_gnode_default_var(const char *node_name, const char *arg, const mxk_attrs *attrs);

#endif /* MXK_SYMBOL_INTERNAL_H */
