/*
 * Graph nodes (graph.h): creation of variable and operator nodes, reference
 * counting with an iterative release, output counts.
 *
 * Semantics: nnvm's Node (dmlc/nnvm include/nnvm/node.h): a variable has no
 * operator and one output; an operator node has every output its operator lists
 * (visible and hidden, MXNet's NumOutputs) of which the first num_visible are what
 * a symbol of the node exposes (MXNet's NumVisibleOutputs).
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "graph.h"

/** Allocates a node with refcount 1, a copy of `name` and `attrs` (a new empty dict when NULL). */
static mxk_gnode *node_alloc(const char *name, mxk_attrs *attrs) {
    mxk_gnode *n = calloc(1, sizeof *n);
    char *nm = strdup(name ? name : "");
    if (attrs == NULL)
        attrs = mxki_attrs_new();
    if (n == NULL || nm == NULL || attrs == NULL) {
        free(n);
        free(nm);
        mxki_attrs_free(attrs);
        mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory creating graph node '%s'",
                      name ? name : "");
        return NULL;
    }
    atomic_init(&n->refcount, 1u);
    n->name = nm;
    n->attrs = attrs;
    return n;
}

mxk_gnode *mxki_gnode_variable(const char *name) {
    return node_alloc(name, NULL);
}

mxk_gnode *mxki_gnode_op(mxk_op_params *op, const char *name, mxk_attrs *attrs, uint32_t num_inputs,
                         const mxk_gentry *inputs) {
    mxk_gentry *in = NULL;
    if (num_inputs > 0) {
        in = calloc(num_inputs, sizeof *in);
        if (in == NULL) {
            mxki_op_params_free(op);
            mxki_attrs_free(attrs);
            mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory creating graph node '%s'",
                          name ? name : "");
            return NULL;
        }
    }
    mxk_gnode *n = node_alloc(name, attrs);
    if (n == NULL) {
        free(in);
        mxki_op_params_free(op);
        return NULL;
    }
    n->op = op;
    n->num_inputs = num_inputs;
    n->inputs = in;
    for (uint32_t i = 0; i < num_inputs; i++) {
        in[i] = inputs[i];
        mxki_gnode_retain(in[i].node);
    }
    return n;
}

void mxki_gnode_retain(mxk_gnode *n) {
    if (n != NULL)
        atomic_fetch_add_explicit(&n->refcount, 1u, memory_order_relaxed);
}

/**
 * Drops one reference of `n`; returns 1 when it was the last one (the caller
 * then owns the node's memory). Release/acquire ordering so that the thread
 * freeing the node sees every write made before other threads released it.
 */
static int drop_ref(mxk_gnode *n) {
    /* acq_rel rather than release + an acquire fence: TSan does not model fences. */
    return atomic_fetch_sub_explicit(&n->refcount, 1u, memory_order_acq_rel) == 1u;
}

/**
 * Frees what a dead node owns except its input array and the node itself, and
 * links it in front of the dead list: the `name` slot (no longer needed) holds
 * the next dead node, so releasing a graph of any depth needs no allocation and
 * no recursion. (A pointer to an object converted to char * and back compares
 * equal to the original, C11 6.3.2.3p7.)
 */
static mxk_gnode *push_dead(mxk_gnode *n, mxk_gnode *dead) {
    free(n->name);
    mxki_op_params_free(n->op);
    n->op = NULL;
    mxki_attrs_free(n->attrs);
    n->attrs = NULL;
    n->name = (char *)(void *)dead;
    return n;
}

void mxki_gnode_release(mxk_gnode *n) {
    if (n == NULL || !drop_ref(n))
        return;
    mxk_gnode *dead = push_dead(n, NULL);
    while (dead != NULL) {
        mxk_gnode *d = dead;
        dead = (mxk_gnode *)(void *)d->name;
        for (uint32_t i = 0; i < d->num_inputs; i++) {
            mxk_gnode *in = d->inputs[i].node;
            if (in != NULL && drop_ref(in))
                dead = push_dead(in, dead);
        }
        free(d->inputs);
        free(d);
    }
}

uint32_t mxki_gnode_num_outputs(const mxk_gnode *n) {
    return n->op == NULL ? 1u : n->op->out_names->count;
}

uint32_t mxki_gnode_num_visible(const mxk_gnode *n) {
    return n->op == NULL ? 1u : n->op->num_visible;
}
