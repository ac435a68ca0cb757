/*
 * The gradient plan: the forward+backward schedule of a bound graph (graph.h).
 *
 * Semantics: MXNet's explicit backward graph
 * (docs/static_site/src/pages/api/architecture/note_memory.md "explicit backward graph"; nnvm
 * src/pass/gradient.cc; src/executor/graph_executor.cc InitFullGraph; python/mxnet/executor.py
 * grad_req and backward's out_grads). Each operator's backward reads only what its
 * DeclareBackwardDependency names (include/mxnet/operator.h; mxk_op_def.backward_dependency):
 * out_grad of its visible outputs, in_data, out_data. An entry read by several operators gets its
 * gradient from an add-to chain (first contribution WRITE, later ones ADD): note_memory.md's
 * gradient-aggregation node, realised as MXNet's kAddTo accumulation. Gradients stop at operators
 * whose no_gradient callback says so (BlockGrad-like) and at arguments whose request is null; only
 * steps on a path from a gradient source (a head gradient or a loss, i.e. a backward that reads no
 * out_grad) to a wanted argument gradient are scheduled (nnvm's gradient pass
 * only builds nodes that reach the xs).
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "graph.h"

/** Sets an out-of-memory error for the gradient plan. */
static mxk_status oom(void) {
    return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "gradient plan: out of memory");
}

/** Name of a node for messages. */
static const char *node_name(const mxk_gnode *n) {
    return n->name ? n->name : "";
}

/** 1 when gradients flow through operator node `n` (mxk_op_def.no_gradient absent or 0). */
static int differentiable(const mxk_gnode *n) {
    const mxk_op_def *d = &n->op->op->def;
    return d->no_gradient == NULL || d->no_gradient(n->op->param) == 0;
}

/**
 * Backward dependency flags of every operator node, concatenated: node i's
 * out_grad flags at og + og_off[i] (num_visible), in_data at id + id_off[i]
 * (arguments), out_data at od + od_off[i] (all outputs). An operator without the
 * callback needs everything (MXNet's default DeclareBackwardDependency).
 */
typedef struct dep_flags {
    uint32_t *og_off, *id_off, *od_off;
    uint8_t *og, *id, *od;
} dep_flags;

/** Frees dependency flags. */
static void dep_flags_free(dep_flags *f) {
    free(f->og_off);
    free(f->id_off);
    free(f->od_off);
    free(f->og);
    free(f->id);
    free(f->od);
}

/** Fills dependency flags for all operator nodes (see dep_flags). */
static mxk_status dep_flags_build(const mxk_igraph *g, dep_flags *f) {
    uint32_t n = g->num_nodes;
    memset(f, 0, sizeof *f);
    f->og_off = malloc((n + 1) * sizeof *f->og_off);
    f->id_off = malloc((n + 1) * sizeof *f->id_off);
    f->od_off = malloc((n + 1) * sizeof *f->od_off);
    if (!f->og_off || !f->id_off || !f->od_off)
        return oom();
    f->og_off[0] = f->id_off[0] = f->od_off[0] = 0;
    for (uint32_t i = 0; i < n; i++) {
        const mxk_op_params *p = g->nodes[i]->op;
        f->og_off[i + 1] = f->og_off[i] + (p ? p->num_visible : 0);
        f->id_off[i + 1] = f->id_off[i] + (p ? p->in_names->count : 0);
        f->od_off[i + 1] = f->od_off[i] + (p ? p->out_names->count : 0);
    }
    f->og = calloc(f->og_off[n] + 1, 1);
    f->id = calloc(f->id_off[n] + 1, 1);
    f->od = calloc(f->od_off[n] + 1, 1);
    if (!f->og || !f->id || !f->od)
        return oom();
    for (uint32_t i = 0; i < n; i++) {
        const mxk_op_params *p = g->nodes[i]->op;
        if (p == NULL)
            continue;
        uint32_t nv = p->num_visible, ni = p->in_names->count, no = p->out_names->count;
        if (p->op->def.backward_dependency == NULL) {
            memset(f->og + f->og_off[i], 1, nv);
            memset(f->id + f->id_off[i], 1, ni);
            memset(f->od + f->od_off[i], 1, no);
        } else {
            p->op->def.backward_dependency(p->param, nv, ni, no, f->og + f->og_off[i],
                                           f->id + f->id_off[i], f->od + f->od_off[i]);
        }
    }
    return MXK_OK;
}

/** Allocates the arrays of one step. */
static mxk_status step_init(mxk_exec_step *s, uint32_t node, uint32_t backward, uint32_t num_in,
                            uint32_t num_out) {
    s->node = node;
    s->backward = backward;
    s->num_in = num_in;
    s->num_out = num_out;
    s->in = malloc((num_in + 1) * sizeof *s->in);
    s->out = malloc((num_out + 1) * sizeof *s->out);
    s->req = malloc((num_out + 1) * sizeof *s->req);
    if (!s->in || !s->out || !s->req)
        return oom();
    return MXK_OK;
}

/** Working state of one plan build. */
typedef struct grad_build {
    const mxk_igraph *g;
    const mxk_op_req *reqs; /**< per argument, or NULL */
    dep_flags dep;
    uint32_t *var_arg;   /**< per node: argument index of a variable, or UINT32_MAX */
    uint8_t *gw;         /**< per forward entry: a gradient of it is wanted */
    uint8_t *signal;     /**< per forward entry: some gradient flows into it */
    uint8_t *active;     /**< per node: has a backward step */
    uint8_t *is_head;    /**< per gradient entry: it is a head-gradient entry */
    uint8_t *written;    /**< per gradient entry: a contribution was already scheduled */
    uint32_t *fwd_reads; /**< per forward entry: number of reads by steps and heads */
} grad_build;

/** Frees the working state. */
static void grad_build_free(grad_build *b) {
    dep_flags_free(&b->dep);
    free(b->var_arg);
    free(b->gw);
    free(b->signal);
    free(b->active);
    free(b->is_head);
    free(b->written);
    free(b->fwd_reads);
}

/** 1 when any argument input of operator node `nid` has a wanted gradient. */
static int any_input_wanted(const grad_build *b, uint32_t nid) {
    const mxk_igraph *g = b->g;
    uint32_t ni = g->nodes[nid]->op->in_names->count;
    for (uint32_t k = 0; k < ni && k < g->nodes[nid]->num_inputs; k++)
        if (b->gw[g->in_entries[g->in_ptr[nid] + k]])
            return 1;
    return 0;
}

/**
 * Forward sweep: which entries want a gradient. A variable's entry when it is an
 * argument with a request other than null; an operator's visible output j when
 * the operator is differentiable, reads out_grad[j] in backward and some argument
 * input wants a gradient.
 */
static void mark_wanted(grad_build *b) {
    const mxk_igraph *g = b->g;
    for (uint32_t i = 0; i < g->num_nodes; i++) {
        const mxk_gnode *n = g->nodes[i];
        if (n->op == NULL) {
            uint32_t a = b->var_arg[i];
            b->gw[g->entry_ptr[i]] = a != UINT32_MAX && b->reqs[a] != MXK_REQ_NULL;
            continue;
        }
        if (!differentiable(n) || !any_input_wanted(b, i))
            continue;
        for (uint32_t j = 0; j < n->op->num_visible; j++)
            b->gw[g->entry_ptr[i] + j] = b->dep.og[b->dep.og_off[i] + j];
    }
}

/**
 * Reverse sweep: which nodes get a backward step. Graph outputs that want a
 * gradient receive a head gradient; a node is active when it is differentiable,
 * some argument input wants a gradient, and a gradient reaches it (it reads no
 * out_grad at all, i.e. it is a loss, or an out_grad it reads has a gradient);
 * an active node contributes to each wanted input.
 */
static void mark_active(grad_build *b) {
    const mxk_igraph *g = b->g;
    for (uint32_t h = 0; h < g->num_outputs; h++)
        if (b->gw[g->outputs[h]])
            b->signal[g->outputs[h]] = 1;
    for (uint32_t i = g->num_nodes; i-- > 0;) {
        const mxk_gnode *n = g->nodes[i];
        if (n->op == NULL || !differentiable(n) || !any_input_wanted(b, i))
            continue;
        int source = 1, reached = 0;
        for (uint32_t j = 0; j < n->op->num_visible; j++)
            if (b->dep.og[b->dep.og_off[i] + j]) {
                source = 0;
                reached |= b->signal[g->entry_ptr[i] + j];
            }
        if (!source && !reached)
            continue;
        b->active[i] = 1;
        uint32_t ni = n->op->in_names->count;
        for (uint32_t k = 0; k < ni; k++) {
            uint32_t e = g->in_entries[g->in_ptr[i] + k];
            if (b->gw[e])
                b->signal[e] = 1;
        }
    }
}

/**
 * Numbers gradient entries (forward entry order) and head gradients. An entry
 * listed several times as a graph output (a GRU's last output and its state) has
 * one head-gradient entry for all of them: the executor copies the first head
 * gradient into it and adds the others (MXNet sums them, nnvm
 * src/pass/gradient.cc aggregating the output gradients of one entry). Errors
 * (MXK_ERR_UNSUPPORTED): a variable listed as a graph output whose gradient is
 * wanted (it would need a copy step, which the schedule does not have).
 */
static mxk_status number_gradients(grad_build *b, mxk_grad_plan *p) {
    const mxk_igraph *g = b->g;
    uint32_t E = g->num_entries, count = 0;
    for (uint32_t e = 0; e < E; e++) {
        p->grad_of[e] = UINT32_MAX;
        if (!b->gw[e])
            continue;
        uint32_t nid = mxk_igraph_entry_node(g, e);
        if (g->nodes[nid]->op == NULL || b->signal[e])
            p->grad_of[e] = E + count++;
    }
    p->num_full_entries = E + count;
    p->grad_src = malloc((count + 1) * sizeof *p->grad_src);
    b->is_head = calloc(count + 1, 1);
    b->written = calloc(count + 1, 1);
    if (!p->grad_src || !b->is_head || !b->written)
        return oom();
    for (uint32_t e = 0; e < E; e++)
        if (p->grad_of[e] != UINT32_MAX)
            p->grad_src[p->grad_of[e] - E] = e;
    for (uint32_t h = 0; h < g->num_outputs; h++) {
        uint32_t e = g->outputs[h];
        p->head_grad[h] = UINT32_MAX;
        if (!b->gw[e])
            continue;
        const mxk_gnode *n = g->nodes[mxk_igraph_entry_node(g, e)];
        if (n->op == NULL)
            return mxk_set_error(MXK_ERR_UNSUPPORTED,
                                 "gradient plan: output %u is the variable '%s', whose gradient "
                                 "is requested; a variable output cannot also receive a head "
                                 "gradient (set its grad_req to null)",
                                 (unsigned)h, node_name(n));
        p->head_grad[h] = p->grad_of[e];
        b->is_head[p->grad_of[e] - E] = 1;
    }
    return MXK_OK;
}

/**
 * The request of a contribution to gradient entry `gid`: ADD into a head gradient
 * (it already holds the head gradient) and into an argument gradient bound with
 * ADD; otherwise WRITE for the first contribution in schedule order, ADD later.
 */
static mxk_op_req contribution_req(grad_build *b, const mxk_grad_plan *p, uint32_t gid) {
    uint32_t k = gid - p->num_fwd_entries;
    mxk_op_req r = MXK_REQ_WRITE;
    if (b->is_head[k] || b->written[k])
        r = MXK_REQ_ADD;
    else {
        uint32_t nid = mxk_igraph_entry_node(b->g, p->grad_src[k]);
        if (b->g->nodes[nid]->op == NULL && b->reqs[b->var_arg[nid]] == MXK_REQ_ADD)
            r = MXK_REQ_ADD;
    }
    b->written[k] = 1;
    return r;
}

/** Fills backward step `s` of active node `nid` (layout in graph.h). */
static mxk_status build_backward_step(grad_build *b, mxk_grad_plan *p, uint32_t nid,
                                      mxk_exec_step *s) {
    const mxk_igraph *g = b->g;
    const mxk_op_params *op = g->nodes[nid]->op;
    uint32_t nv = op->num_visible, ni = op->in_names->count, no = op->out_names->count;
    mxk_status st = step_init(s, nid, 1, nv + ni + no, ni);
    if (st != MXK_OK)
        return st;
    const uint32_t *in = &g->in_entries[g->in_ptr[nid]];
    uint32_t base = g->entry_ptr[nid];
    for (uint32_t j = 0; j < nv; j++)
        s->in[j] = b->dep.og[b->dep.og_off[nid] + j] ? p->grad_of[base + j] : UINT32_MAX;
    for (uint32_t k = 0; k < ni; k++)
        s->in[nv + k] = b->dep.id[b->dep.id_off[nid] + k] ? in[k] : UINT32_MAX;
    for (uint32_t j = 0; j < no; j++)
        s->in[nv + ni + j] = b->dep.od[b->dep.od_off[nid] + j] ? base + j : UINT32_MAX;
    for (uint32_t k = 0; k < ni; k++) {
        uint32_t gid = b->gw[in[k]] ? p->grad_of[in[k]] : UINT32_MAX;
        s->out[k] = gid;
        s->req[k] = gid == UINT32_MAX ? MXK_REQ_NULL : contribution_req(b, p, gid);
    }
    return MXK_OK;
}

/**
 * Sets the request of forward outputs that no step reads and that are not graph
 * outputs to null (MXNet: an entry never referenced gets kNullOp).
 */
static mxk_status null_unread_outputs(grad_build *b, mxk_grad_plan *p) {
    const mxk_igraph *g = b->g;
    b->fwd_reads = calloc(g->num_entries + 1, sizeof *b->fwd_reads);
    if (b->fwd_reads == NULL)
        return oom();
    for (uint32_t h = 0; h < g->num_outputs; h++)
        b->fwd_reads[g->outputs[h]]++;
    for (uint32_t i = 0; i < p->num_steps; i++)
        for (uint32_t k = 0; k < p->steps[i].num_in; k++) {
            uint32_t e = p->steps[i].in[k];
            if (e < g->num_entries)
                b->fwd_reads[e]++;
        }
    for (uint32_t i = 0; i < p->num_fwd_steps; i++) {
        mxk_exec_step *s = &p->steps[i];
        for (uint32_t j = 0; j < s->num_out; j++)
            if (b->fwd_reads[s->out[j]] == 0)
                s->req[j] = MXK_REQ_NULL;
    }
    return MXK_OK;
}

/** Builds the plan into `p` (allocated, zeroed, num_fwd_entries set). */
static mxk_status build(grad_build *b, mxk_grad_plan *p) {
    const mxk_igraph *g = b->g;
    uint32_t E = g->num_entries, N = g->num_nodes;
    p->grad_of = malloc((E + 1) * sizeof *p->grad_of);
    p->head_grad = malloc((g->num_outputs + 1) * sizeof *p->head_grad);
    p->arg_grad = malloc((g->num_args + 1) * sizeof *p->arg_grad);
    p->arg_req = malloc((g->num_args + 1) * sizeof *p->arg_req);
    b->var_arg = malloc((N + 1) * sizeof *b->var_arg);
    b->gw = calloc(E + 1, 1);
    b->signal = calloc(E + 1, 1);
    b->active = calloc(N + 1, 1);
    if (!p->grad_of || !p->head_grad || !p->arg_grad || !p->arg_req || !b->var_arg || !b->gw ||
        !b->signal || !b->active)
        return oom();
    p->num_heads = g->num_outputs;
    for (uint32_t i = 0; i < N; i++)
        b->var_arg[i] = UINT32_MAX;
    for (uint32_t a = 0; a < g->num_args; a++) {
        b->var_arg[g->arg_nodes[a]] = a;
        p->arg_req[a] = b->reqs ? b->reqs[a] : MXK_REQ_NULL;
    }
    int want = 0;
    for (uint32_t a = 0; b->reqs && a < g->num_args; a++)
        want |= b->reqs[a] != MXK_REQ_NULL;
    if (!want)
        b->reqs = NULL;

    uint32_t num_ops = 0;
    for (uint32_t i = 0; i < N; i++)
        num_ops += g->nodes[i]->op != NULL;
    mxk_status st = MXK_OK;
    if (b->reqs != NULL) {
        st = dep_flags_build(g, &b->dep);
        if (st != MXK_OK)
            return st;
        mark_wanted(b);
        mark_active(b);
        st = number_gradients(b, p);
        if (st != MXK_OK)
            return st;
    } else {
        for (uint32_t e = 0; e < E; e++)
            p->grad_of[e] = UINT32_MAX;
        for (uint32_t h = 0; h < g->num_outputs; h++)
            p->head_grad[h] = UINT32_MAX;
        p->num_full_entries = E;
        p->grad_src = malloc(sizeof *p->grad_src);
        if (p->grad_src == NULL)
            return oom();
    }
    uint32_t num_bwd = 0;
    for (uint32_t i = 0; i < N; i++)
        num_bwd += b->active[i];
    p->steps = calloc(num_ops + num_bwd + 1, sizeof *p->steps);
    if (p->steps == NULL)
        return oom();
    for (uint32_t i = 0; i < N; i++) {
        const mxk_gnode *n = g->nodes[i];
        if (n->op == NULL)
            continue;
        mxk_exec_step *s = &p->steps[p->num_steps++];
        uint32_t no = n->op->out_names->count;
        st = step_init(s, i, 0, n->num_inputs, no);
        if (st != MXK_OK)
            return st;
        memcpy(s->in, &g->in_entries[g->in_ptr[i]], n->num_inputs * sizeof *s->in);
        for (uint32_t j = 0; j < no; j++) {
            s->out[j] = g->entry_ptr[i] + j;
            s->req[j] = MXK_REQ_WRITE;
        }
    }
    p->num_fwd_steps = p->num_steps;
    for (uint32_t i = N; i-- > 0;) {
        if (!b->active[i])
            continue;
        st = build_backward_step(b, p, i, &p->steps[p->num_steps++]);
        if (st != MXK_OK)
            return st;
    }
    for (uint32_t a = 0; a < g->num_args; a++) {
        uint32_t e = g->entry_ptr[g->arg_nodes[a]];
        p->arg_grad[a] = p->arg_req[a] != MXK_REQ_NULL ? p->grad_of[e] : UINT32_MAX;
    }
    return null_unread_outputs(b, p);
}

/** Validates the requests and builds the schedule (graph.h). */
mxk_status mxki_grad_plan_build(const mxk_igraph *g, const mxk_op_req *arg_reqs,
                                mxk_grad_plan **out) {
    if (g == NULL || out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "gradient plan: graph or out is NULL");
    *out = NULL;
    for (uint32_t a = 0; arg_reqs && a < g->num_args; a++)
        if (arg_reqs[a] != MXK_REQ_NULL && arg_reqs[a] != MXK_REQ_WRITE &&
            arg_reqs[a] != MXK_REQ_ADD)
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                                 "Gradient request can only be nullop, add, write (argument "
                                 "'%s' has %d)",
                                 node_name(g->nodes[g->arg_nodes[a]]), (int)arg_reqs[a]);
    mxk_grad_plan *p = calloc(1, sizeof *p);
    if (p == NULL)
        return oom();
    p->num_fwd_entries = g->num_entries;
    grad_build b;
    memset(&b, 0, sizeof b);
    b.g = g;
    b.reqs = arg_reqs;
    mxk_status st = build(&b, p);
    grad_build_free(&b);
    if (st != MXK_OK) {
        mxki_grad_plan_free(p);
        return st;
    }
    *out = p;
    return MXK_OK;
}

/** Frees a gradient plan and its steps (graph.h). */
void mxki_grad_plan_free(mxk_grad_plan *p) {
    if (p == NULL)
        return;
    for (uint32_t i = 0; p->steps && i < p->num_steps; i++) {
        free(p->steps[i].in);
        free(p->steps[i].out);
        free(p->steps[i].req);
    }
    free(p->steps);
    free(p->grad_of);
    free(p->grad_src);
    free(p->head_grad);
    free(p->arg_grad);
    free(p->arg_req);
    free(p);
}

/** Forward shapes/types to the full entry space (graph.h). */
void mxki_grad_plan_expand(const mxk_grad_plan *p, const mxk_shape *fwd_shapes,
                           const int32_t *fwd_types, mxk_shape *full_shapes, int32_t *full_types) {
    for (uint32_t e = 0; e < p->num_full_entries; e++) {
        uint32_t src = e < p->num_fwd_entries ? e : p->grad_src[e - p->num_fwd_entries];
        if (fwd_shapes && full_shapes)
            full_shapes[e] = fwd_shapes[src];
        if (fwd_types && full_types)
            full_types[e] = fwd_types[src];
    }
}

/** Marks user-bound entries (graph.h; MXNet kExternalStorageID). */
void mxki_grad_plan_mark_external(const mxk_igraph *g, const mxk_grad_plan *p, uint8_t *external) {
    memset(external, 0, p->num_full_entries);
    for (uint32_t a = 0; a < g->num_args; a++) {
        external[g->entry_ptr[g->arg_nodes[a]]] = 1;
        if (p->arg_grad[a] != UINT32_MAX)
            external[p->arg_grad[a]] = 1;
    }
    for (uint32_t a = 0; a < g->num_aux; a++)
        external[g->entry_ptr[g->aux_nodes[a]]] = 1;
    for (uint32_t h = 0; h < p->num_heads; h++)
        if (p->head_grad[h] != UINT32_MAX)
            external[p->head_grad[h]] = 1;
}
