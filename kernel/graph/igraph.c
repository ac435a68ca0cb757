/*
 * The indexed graph: a symbol flattened into topologically ordered nodes and
 * numbered entries, the form every pass works on (graph.h).
 *
 * Semantics: nnvm's IndexedGraph (dmlc/nnvm include/nnvm/graph.h,
 * src/core/graph.cc) built by a depth-first post-order walk from the outputs that
 * visits inputs in order (nnvm's DFSVisit / PostOrderDFSVisit in
 * include/nnvm/graph.h); argument and auxiliary-state lists as Symbol::ListInputs
 * (src/core/symbolic.cc): variables in visit order, those an operator takes as
 * auxiliary states (MXNet's mutated inputs) listed apart.
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "graph.h"

/* ------------------------------------------------------------------------- */
/* Pointer -> id map (open addressing)                                       */
/* ------------------------------------------------------------------------- */

/** A growable open-addressing hash map from node pointers to uint32 values. */
typedef struct ptr_map {
    uint32_t capacity; /**< power of two; 0 before the first insert */
    uint32_t count;
    const void **keys; /**< NULL = empty slot */
    uint32_t *values;
} ptr_map;

/** Slot index of a pointer hash (Fibonacci hashing of the address). */
static uint32_t ptr_hash(const void *p, uint32_t capacity) {
    uint64_t h = (uint64_t)(uintptr_t)p * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(h >> 32) & (capacity - 1);
}

/** Looks up `key`; returns 1 and sets *value when present. */
static int ptr_map_get(const ptr_map *m, const void *key, uint32_t *value) {
    if (m->capacity == 0)
        return 0;
    for (uint32_t i = ptr_hash(key, m->capacity);; i = (i + 1) & (m->capacity - 1)) {
        if (m->keys[i] == NULL)
            return 0;
        if (m->keys[i] == key) {
            *value = m->values[i];
            return 1;
        }
    }
}

/** Inserts or replaces `key` -> `value`, growing at 50% load. 0 on OOM. */
static int ptr_map_put(ptr_map *m, const void *key, uint32_t value) {
    if (2 * (m->count + 1) > m->capacity) {
        uint32_t cap = m->capacity ? 2 * m->capacity : 64;
        const void **keys = calloc(cap, sizeof *keys);
        uint32_t *values = calloc(cap, sizeof *values);
        if (keys == NULL || values == NULL) {
            free(keys);
            free(values);
            return 0;
        }
        for (uint32_t i = 0; i < m->capacity; i++) {
            if (m->keys[i] == NULL)
                continue;
            uint32_t j = ptr_hash(m->keys[i], cap);
            while (keys[j] != NULL)
                j = (j + 1) & (cap - 1);
            keys[j] = m->keys[i];
            values[j] = m->values[i];
        }
        free(m->keys);
        free(m->values);
        m->keys = keys;
        m->values = values;
        m->capacity = cap;
    }
    uint32_t i = ptr_hash(key, m->capacity);
    while (m->keys[i] != NULL && m->keys[i] != key)
        i = (i + 1) & (m->capacity - 1);
    if (m->keys[i] == NULL)
        m->count++;
    m->keys[i] = key;
    m->values[i] = value;
    return 1;
}

/** Frees the map's arrays. */
static void ptr_map_free(ptr_map *m) {
    free(m->keys);
    free(m->values);
    memset(m, 0, sizeof *m);
}

/* ------------------------------------------------------------------------- */
/* Building                                                                  */
/* ------------------------------------------------------------------------- */

/** Number of outputs of a node (all outputs of an operator, 1 for a variable); graph.h. */
static uint32_t node_num_outputs(const mxk_gnode *n) {
    return n->op ? n->op->out_names->count : 1u;
}

/** Number of argument (non-aux) inputs of an operator node (its op's in_names). */
static uint32_t node_num_args(const mxk_gnode *n) {
    return n->op ? n->op->in_names->count : 0u;
}

/** A DFS stack frame: the node and the next input to visit (nnvm PostOrderDFSVisit). */
typedef struct dfs_frame {
    mxk_gnode *node;
    uint32_t next;
} dfs_frame;

/** Visit marks in the map: ids >= DFS_ON_STACK are nodes still on the stack. */
#define DFS_ON_STACK UINT32_MAX

/** Sets an out-of-memory error for the indexed graph build. */
static mxk_status oom(void) {
    return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "indexed graph: out of memory");
}

/**
 * Post-order DFS from the symbol's output nodes, inputs in order (nnvm DFSVisit):
 * fills g->nodes / g->num_nodes and `ids` (node -> topological id). Iterative, so
 * deep chains do not overflow the C stack. Cycles cannot arise from immutable
 * nodes, but a node met while still on the stack is reported as MXK_ERR_FORMAT.
 */
static mxk_status topo_sort(const mxk_symbol *sym, mxk_igraph *g, ptr_map *ids) {
    uint32_t cap_nodes = 64, cap_stack = 64, depth = 0;
    g->nodes = malloc(cap_nodes * sizeof *g->nodes);
    dfs_frame *stack = malloc(cap_stack * sizeof *stack);
    if (g->nodes == NULL || stack == NULL) {
        free(stack);
        return oom();
    }
    mxk_status st = MXK_OK;
    for (uint32_t h = 0; h < sym->num_outputs && st == MXK_OK; h++) {
        mxk_gnode *head = sym->outputs[h].node;
        uint32_t mark;
        if (head == NULL) {
            st = mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "indexed graph: output %u has no node",
                               (unsigned)h);
            break;
        }
        if (ptr_map_get(ids, head, &mark))
            continue;
        if (!ptr_map_put(ids, head, DFS_ON_STACK)) {
            st = oom();
            break;
        }
        stack[depth++] = (dfs_frame){head, 0};
        while (depth > 0) {
            dfs_frame *top = &stack[depth - 1];
            if (top->next == top->node->num_inputs) {
                if (g->num_nodes == cap_nodes) {
                    cap_nodes *= 2;
                    mxk_gnode **nn = realloc(g->nodes, cap_nodes * sizeof *nn);
                    if (nn == NULL) {
                        st = oom();
                        break;
                    }
                    g->nodes = nn;
                }
                if (!ptr_map_put(ids, top->node, g->num_nodes)) {
                    st = oom();
                    break;
                }
                g->nodes[g->num_nodes++] = top->node;
                depth--;
                continue;
            }
            mxk_gnode *in = top->node->inputs[top->next++].node;
            if (in == NULL) {
                st = mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                                   "indexed graph: node '%s' has a "
                                   "missing input %u",
                                   top->node->name ? top->node->name : "",
                                   (unsigned)(top->next - 1));
                break;
            }
            if (ptr_map_get(ids, in, &mark)) {
                if (mark == DFS_ON_STACK) {
                    st = mxk_set_error(MXK_ERR_FORMAT, "indexed graph: cycle through node '%s'",
                                       in->name ? in->name : "");
                    break;
                }
                continue;
            }
            if (!ptr_map_put(ids, in, DFS_ON_STACK)) {
                st = oom();
                break;
            }
            if (depth == cap_stack) {
                cap_stack *= 2;
                dfs_frame *ns = realloc(stack, cap_stack * sizeof *ns);
                if (ns == NULL) {
                    st = oom();
                    break;
                }
                stack = ns;
            }
            stack[depth++] = (dfs_frame){in, 0};
        }
    }
    free(stack);
    return st;
}

/**
 * Fills entry numbering (entry_ptr), input entries (in_ptr/in_entries) and the
 * output entries from the topological order. Input indices past a node's outputs
 * are MXK_ERR_INVALID_ARGUMENT.
 */
static mxk_status number_entries(const mxk_symbol *sym, mxk_igraph *g, const ptr_map *ids) {
    uint32_t n = g->num_nodes;
    g->entry_ptr = malloc((n + 1) * sizeof *g->entry_ptr);
    g->in_ptr = malloc((n + 1) * sizeof *g->in_ptr);
    if (g->entry_ptr == NULL || g->in_ptr == NULL)
        return oom();
    g->entry_ptr[0] = 0;
    g->in_ptr[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
        g->entry_ptr[i + 1] = g->entry_ptr[i] + node_num_outputs(g->nodes[i]);
        g->in_ptr[i + 1] = g->in_ptr[i] + g->nodes[i]->num_inputs;
    }
    g->num_entries = g->entry_ptr[n];
    g->in_entries = malloc((g->in_ptr[n] + 1) * sizeof *g->in_entries);
    g->outputs = malloc((sym->num_outputs + 1) * sizeof *g->outputs);
    if (g->in_entries == NULL || g->outputs == NULL)
        return oom();
    for (uint32_t i = 0; i < n; i++) {
        const mxk_gnode *node = g->nodes[i];
        for (uint32_t k = 0; k < node->num_inputs; k++) {
            uint32_t src = 0;
            ptr_map_get(ids, node->inputs[k].node, &src);
            if (node->inputs[k].index >= node_num_outputs(g->nodes[src]))
                return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                                     "indexed graph: input %u of node '%s' reads output %u of "
                                     "'%s', which has %u outputs",
                                     (unsigned)k, node->name ? node->name : "",
                                     (unsigned)node->inputs[k].index,
                                     g->nodes[src]->name ? g->nodes[src]->name : "",
                                     (unsigned)node_num_outputs(g->nodes[src]));
            g->in_entries[g->in_ptr[i] + k] = g->entry_ptr[src] + node->inputs[k].index;
        }
    }
    g->num_outputs = sym->num_outputs;
    for (uint32_t h = 0; h < sym->num_outputs; h++) {
        uint32_t src = 0;
        ptr_map_get(ids, sym->outputs[h].node, &src);
        if (sym->outputs[h].index >= node_num_outputs(g->nodes[src]))
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                                 "indexed graph: output %u reads output %u of '%s', which has "
                                 "%u outputs",
                                 (unsigned)h, (unsigned)sym->outputs[h].index,
                                 g->nodes[src]->name ? g->nodes[src]->name : "",
                                 (unsigned)node_num_outputs(g->nodes[src]));
        g->outputs[h] = g->entry_ptr[src] + sym->outputs[h].index;
    }
    return MXK_OK;
}

/** Per-variable use: where it was first seen as an argument / an aux state. */
typedef struct var_use {
    uint32_t as_arg; /**< node id of the first operator taking it as an argument, or UINT32_MAX */
    uint32_t as_aux; /**< node id of the first operator taking it as an aux state, or UINT32_MAX */
} var_use;

/**
 * Splits the variables into arguments and aux states (Symbol::ListInputs: visit
 * order; an operator's inputs past its argument count are its aux states). A
 * variable that is a graph output counts as an argument. One variable used both
 * ways: MXK_ERR_INVALID_ARGUMENT naming it and both operators.
 */
static mxk_status classify_variables(mxk_igraph *g) {
    uint32_t n = g->num_nodes;
    var_use *use = malloc((n + 1) * sizeof *use);
    if (use == NULL)
        return oom();
    for (uint32_t i = 0; i < n; i++)
        use[i] = (var_use){UINT32_MAX, UINT32_MAX};
    /* entry -> node: entries of a variable are entry_ptr[i] (one output) */
    for (uint32_t i = 0; i < n; i++) {
        const mxk_gnode *node = g->nodes[i];
        if (node->op == NULL)
            continue;
        uint32_t nargs = node_num_args(node);
        for (uint32_t k = 0; k < node->num_inputs; k++) {
            uint32_t e = g->in_entries[g->in_ptr[i] + k];
            /* binary search the producing node of entry e */
            uint32_t lo = 0, hi = n;
            while (hi - lo > 1) {
                uint32_t mid = (lo + hi) / 2;
                if (g->entry_ptr[mid] <= e)
                    lo = mid;
                else
                    hi = mid;
            }
            if (g->nodes[lo]->op != NULL)
                continue;
            uint32_t *slot = k < nargs ? &use[lo].as_arg : &use[lo].as_aux;
            if (*slot == UINT32_MAX)
                *slot = i;
        }
    }
    uint32_t num_vars = 0;
    for (uint32_t i = 0; i < n; i++)
        num_vars += g->nodes[i]->op == NULL;
    g->arg_nodes = malloc((num_vars + 1) * sizeof *g->arg_nodes);
    g->aux_nodes = malloc((num_vars + 1) * sizeof *g->aux_nodes);
    if (g->arg_nodes == NULL || g->aux_nodes == NULL) {
        free(use);
        return oom();
    }
    mxk_status st = MXK_OK;
    for (uint32_t i = 0; i < n && st == MXK_OK; i++) {
        const mxk_gnode *node = g->nodes[i];
        if (node->op != NULL)
            continue;
        if (use[i].as_aux != UINT32_MAX && use[i].as_arg != UINT32_MAX) {
            st = mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                               "variable '%s' is used both as an argument (of node '%s') and as "
                               "an auxiliary state (of node '%s')",
                               node->name ? node->name : "", g->nodes[use[i].as_arg]->name,
                               g->nodes[use[i].as_aux]->name);
            break;
        }
        if (use[i].as_aux != UINT32_MAX) {
            /* An aux state stays one when it is also a graph output (get_internals() of a
             * BatchNorm net), as in MXNet: nnvm's IndexedGraph classifies variables by
             * the mutable inputs of their consumers only (src/executor/graph_executor.cc). */
            g->aux_nodes[g->num_aux++] = i;
        } else {
            g->arg_nodes[g->num_args++] = i;
        }
    }
    free(use);
    return st;
}

/** Builds the indexed graph (graph.h): DFS order, entry numbering, argument/aux split. */
mxk_status mxki_igraph_build(const mxk_symbol *sym, mxk_igraph **out) {
    if (out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "indexed graph: out is NULL");
    *out = NULL;
    if (sym == NULL || (sym->num_outputs > 0 && sym->outputs == NULL))
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "indexed graph: symbol is NULL");
    mxk_igraph *g = calloc(1, sizeof *g);
    if (g == NULL)
        return oom();
    ptr_map ids = {0};
    mxk_status st = topo_sort(sym, g, &ids);
    if (st == MXK_OK)
        st = number_entries(sym, g, &ids);
    ptr_map_free(&ids);
    if (st == MXK_OK)
        st = classify_variables(g);
    if (st != MXK_OK) {
        mxki_igraph_free(g);
        return st;
    }
    *out = g;
    return MXK_OK;
}

/** Frees an indexed graph (graph.h). */
void mxki_igraph_free(mxk_igraph *g) {
    if (g == NULL)
        return;
    free(g->nodes);
    free(g->entry_ptr);
    free(g->in_ptr);
    free(g->in_entries);
    free(g->outputs);
    free(g->arg_nodes);
    free(g->aux_nodes);
    free(g);
}
