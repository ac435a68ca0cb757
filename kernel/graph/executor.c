/*
 * The graph executor: bind, simple_bind, free, arrays by name, copy_params_from and
 * reresolve (public API in mxk.h "Executor"; internals in executor_internal.h).
 *
 * Source: upstream src/executor/graph_executor.cc (GraphExecutor::Init,
 * InitArguments, InitDataEntryMemory, InitCachedOps), src/c_api/c_api_executor.cc
 * (MXExecutorBindEX, MXExecutorSimpleBindEx), python/mxnet/executor.py
 * (copy_params_from).
 *
 * Bind, step by step: the indexed graph of the symbol; shapes and types of every
 * entry inferred from the bound arrays; the gradient plan for the requests (an
 * argument without a gradient array gets null); shapes and types expanded to the
 * gradient entries; the memory plan; an operator instance per operator node (the
 * kernel resolved by the backend preference); one pool chunk per storage block
 * (executor_memory.c) and an array per entry; one prepared call per step of the
 * schedule; the helpers of backward (executor_run.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "executor_internal.h"
#include "shape.h"
#include "symbol_internal.h"

/* ------------------------------------------------------------------------- */
/* Helpers                                                                   */
/* ------------------------------------------------------------------------- */

/** strdup that sets the last error on failure. */
static char *dup_str(const char *s) {
    char *d = strdup(s ? s : "");
    if (d == NULL)
        mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    return d;
}

/** Frees an array of `n` owned strings (entries may be NULL) and the array. */
static void free_strs(char **v, uint32_t n) {
    if (v == NULL)
        return;
    for (uint32_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/** Frees `n` owned handles (entries may be NULL) and the array. */
static void free_arrays(mxk_ndarray **v, uint32_t n) {
    if (v == NULL)
        return;
    for (uint32_t i = 0; i < n; i++)
        mxk_ndarray_free(v[i]);
    free(v);
}

/**
 * Prefixes the thread's last error with "<what> '<node>': " keeping its code.
 * Returns the code.
 */
static mxk_status node_error(const char *what, const char *node) {
    mxk_status code = mxki_last_error_code();
    char msg[MXK_ERROR_MSG_MAX];
    snprintf(msg, sizeof msg, "%s", mxki_last_error_message());
    return mxk_set_error(code == MXK_OK ? MXK_ERR_INTERNAL : code, "%s '%s': %s", what, node, msg);
}

/** Formats a shape in MXNet's message form with unknown dims as -1: "(-1,4)". */
static const char *shape_str(const mxk_shape *s, char *buf, size_t size) {
    size_t n = (size_t)snprintf(buf, size, "(");
    for (int32_t i = 0; i < s->ndim && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", i ? "," : "",
                              s->dims[i] > 0 ? (long long)s->dims[i] : -1LL);
    if (n < size)
        snprintf(buf + n, size - n, ")");
    return buf;
}

uint32_t mxki_exec_find_arg(const mxk_executor *ex, const char *name) {
    for (uint32_t i = 0; name && ex->arg_names && i < ex->num_args; i++)
        if (strcmp(ex->arg_names[i], name) == 0)
            return i;
    return UINT32_MAX;
}

uint32_t mxki_exec_find_aux(const mxk_executor *ex, const char *name) {
    for (uint32_t i = 0; name && ex->aux_names && i < ex->num_aux; i++)
        if (strcmp(ex->aux_names[i], name) == 0)
            return i;
    return UINT32_MAX;
}

/* ------------------------------------------------------------------------- */
/* Free                                                                      */
/* ------------------------------------------------------------------------- */

void mxk_executor_free(mxk_executor *ex) {
    if (ex == NULL)
        return;
    /* Everything below is reference-counted or released by the engine after the
     * work pushed so far: nothing waits here. */
    mxki_exec_free_backward_helpers(ex);
    if (ex->calls)
        for (uint32_t s = 0; s < ex->plan->num_steps; s++)
            mxki_op_call_free(ex->calls[s]);
    free(ex->calls);
    if (ex->inst)
        for (uint32_t n = 0; n < ex->g->num_nodes; n++)
            mxk_op_instance_free(ex->inst[n]);
    free(ex->inst);
    free_arrays(ex->entry, ex->num_entries);
    free_arrays(ex->zeros, ex->num_zeros);
    free_arrays(ex->blocks, ex->mem ? ex->mem->num_blocks : 0);
    free_arrays(ex->pool, ex->pool_len);
    free_arrays(ex->args, ex->num_args);
    free_arrays(ex->grads, ex->num_args);
    free_arrays(ex->aux, ex->num_aux);
    free(ex->grad_reqs);
    free_strs(ex->arg_names, ex->num_args);
    free_strs(ex->aux_names, ex->num_aux);
    free_strs(ex->out_names, ex->num_outputs);
    free(ex->shapes);
    free(ex->types);
    mxki_mem_plan_free(ex->mem);
    mxki_grad_plan_free(ex->plan);
    mxki_igraph_free(ex->g);
    mxk_symbol_free(ex->sym);
    free(ex);
}

/* ------------------------------------------------------------------------- */
/* Bind                                                                      */
/* ------------------------------------------------------------------------- */

/** Infers the forward entries' shapes and types from the bound arrays (all must be known). */
static mxk_status infer_forward(mxk_executor *ex, mxk_shape *fs, int32_t *ft) {
    const mxk_igraph *g = ex->g;
    for (uint32_t e = 0; e < g->num_entries; e++)
        ft[e] = -1;
    for (uint32_t i = 0; i < g->num_args; i++) {
        uint32_t e = mxk_igraph_entry(g, g->arg_nodes[i], 0);
        fs[e] = ex->args[i]->shape;
        ft[e] = ex->args[i]->dtype;
    }
    for (uint32_t i = 0; i < g->num_aux; i++) {
        uint32_t e = mxk_igraph_entry(g, g->aux_nodes[i], 0);
        fs[e] = ex->aux[i]->shape;
        ft[e] = ex->aux[i]->dtype;
    }
    uint32_t unknown = 0;
    mxk_status rc = mxki_igraph_infer_shape(g, fs, &unknown);
    if (rc != MXK_OK)
        return rc;
    if (unknown != 0) {
        char list[1024] = "", sb[128];
        size_t len = 0;
        uint32_t shown = 0;
        for (uint32_t n = 0; n < g->num_nodes && len < sizeof list; n++)
            for (uint32_t k = g->entry_ptr[n]; k < g->entry_ptr[n + 1] && len < sizeof list; k++)
                if (!mxki_shape_is_complete(&fs[k])) {
                    if (shown++ == 10) {
                        len += (size_t)snprintf(list + len, sizeof list - len, "...");
                        break;
                    }
                    mxk_gentry en = {g->nodes[n], k - g->entry_ptr[n]};
                    char *name = mxki_gentry_output_name(&en);
                    len += (size_t)snprintf(list + len, sizeof list - len, "%s: %s, ",
                                            name ? name : "?", shape_str(&fs[k], sb, sizeof sb));
                    free(name);
                }
        return mxk_set_error(MXK_ERR_SHAPE,
                             "InferShape pass cannot decide shapes for the following entries "
                             "(-1 means unknown dimensions):\n%s",
                             list);
    }
    rc = mxki_igraph_infer_type(g, ft, &unknown);
    if (rc != MXK_OK)
        return rc;
    if (unknown != 0)
        return mxk_set_error(MXK_ERR_TYPE,
                             "InferType pass cannot decide dtypes for %u entries of the graph",
                             unknown);
    return MXK_OK;
}

/** Records an owned zero array of a slot shape (an absent out_grad) in ex->zeros. */
static mxk_ndarray *new_zeros(mxk_executor *ex, const mxk_shape *shape, int32_t dtype) {
    if (ex->num_zeros == ex->cap_zeros) {
        uint32_t cap = ex->cap_zeros ? 2 * ex->cap_zeros : 8;
        mxk_ndarray **z = realloc(ex->zeros, cap * sizeof *z);
        if (z == NULL) {
            mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
            return NULL;
        }
        ex->zeros = z;
        ex->cap_zeros = cap;
    }
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_full(shape, dtype, ex->ctx, 0.0, &a) != MXK_OK)
        return NULL;
    ex->zeros[ex->num_zeros++] = a;
    return a;
}

/** The entry's array, or an internal error when it was never materialised. */
static mxk_status entry_array(mxk_executor *ex, uint32_t e, uint32_t step, mxk_ndarray **out) {
    *out = e < ex->num_entries ? ex->entry[e] : NULL;
    if (*out == NULL)
        return mxk_set_error(MXK_ERR_INTERNAL,
                             "executor: entry %u used by step %u of node '%s' has no memory", e,
                             step, ex->g->nodes[ex->plan->steps[step].node]->name);
    return MXK_OK;
}

/** Prepares the call of one step. */
static mxk_status prepare_step(mxk_executor *ex, uint32_t s) {
    const mxk_exec_step *st = &ex->plan->steps[s];
    const mxk_igraph *g = ex->g;
    mxk_op_instance *inst = ex->inst[st->node];
    const char *node = g->nodes[st->node]->name;
    uint32_t nv = inst->num_visible, ni = inst->num_in, no = inst->num_out, na = inst->num_aux;
    uint32_t n = nv + 3 * ni + no + na + 1;
    mxk_ndarray **a = calloc(n, sizeof *a);
    mxk_op_req *req = calloc(st->num_out + 1, sizeof *req);
    mxk_status rc = MXK_OK;
    if (a == NULL || req == NULL)
        rc = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    for (uint32_t k = 0; rc == MXK_OK && k < st->num_out; k++)
        req[k] = st->out[k] == UINT32_MAX ? MXK_REQ_NULL : st->req[k];
    if (rc == MXK_OK && !st->backward) {
        if (st->num_in != ni + na || st->num_out != no)
            rc = mxk_set_error(MXK_ERR_INTERNAL,
                               "executor: forward step of '%s' has %u inputs "
                               "and %u outputs, the operator %u and %u",
                               node, st->num_in, st->num_out, ni + na, no);
        for (uint32_t k = 0; rc == MXK_OK && k < st->num_in; k++)
            rc = entry_array(ex, st->in[k], s, k < ni ? &a[k] : &a[ni + no + (k - ni)]);
        for (uint32_t k = 0; rc == MXK_OK && k < no; k++) {
            rc = entry_array(ex, st->out[k], s, &a[ni + k]);
            if (rc == MXK_OK && req[k] == MXK_REQ_WRITE && ex->mem->inplace[st->out[k]])
                req[k] = MXK_REQ_INPLACE;
        }
        if (rc == MXK_OK)
            rc = mxki_op_call_prepare_forward(inst, a, a + ni, req, a + ni + no, &ex->calls[s]);
        if (rc == MXK_OK)
            mxki_op_call_set_node(ex->calls[s], node);
    } else if (rc == MXK_OK) {
        if (st->num_in != nv + ni + no || st->num_out != ni)
            rc = mxk_set_error(MXK_ERR_INTERNAL,
                               "executor: backward step of '%s' has %u inputs "
                               "and %u outputs, the operator needs %u and %u",
                               node, st->num_in, st->num_out, nv + ni + no, ni);
        mxk_ndarray **og = a, **id = a + nv, **od = a + nv + ni, **ig = a + nv + ni + no;
        mxk_ndarray **ax = a + nv + 2 * ni + no;
        for (uint32_t k = 0; rc == MXK_OK && k < nv + ni + no; k++) {
            uint32_t e = st->in[k];
            if (e != UINT32_MAX)
                rc = entry_array(ex, e, s, &a[k]);
            else if (k < nv && inst->need_out_grad[k]) {
                /* No gradient flows into this output: MXNet's zero gradient. */
                og[k] = new_zeros(ex, &inst->out_shapes[k], inst->out_types[k]);
                rc = og[k] ? MXK_OK : mxki_last_error_code();
            }
        }
        for (uint32_t k = 0; rc == MXK_OK && k < ni; k++)
            if (st->out[k] != UINT32_MAX && req[k] != MXK_REQ_NULL)
                rc = entry_array(ex, st->out[k], s, &ig[k]);
        const uint32_t *fin = g->in_entries + g->in_ptr[st->node];
        for (uint32_t k = 0; rc == MXK_OK && k < na; k++)
            rc = entry_array(ex, fin[ni + k], s, &ax[k]);
        if (rc == MXK_OK)
            rc = mxki_op_call_prepare_backward(inst, og, id, od, ig, req, ax, &ex->calls[s]);
        if (rc == MXK_OK)
            mxki_op_call_set_node(ex->calls[s], node);
    }
    free(a);
    free(req);
    return rc == MXK_OK ? MXK_OK : node_error(st->backward ? "backward of node" : "node", node);
}

/** Creates the operator instance of every operator node. */
static mxk_status create_instances(mxk_executor *ex) {
    const mxk_igraph *g = ex->g;
    ex->inst = calloc(g->num_nodes ? g->num_nodes : 1, sizeof *ex->inst);
    if (ex->inst == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    for (uint32_t n = 0; n < g->num_nodes; n++) {
        const mxk_gnode *node = g->nodes[n];
        if (node->op == NULL)
            continue;
        mxk_op_params *p = NULL;
        mxk_status rc = mxki_op_params_create(node->op->op->def.name, node->op->attrs, &p);
        if (rc != MXK_OK)
            return node_error("node", node->name);
        uint32_t ni = p->in_names->count;
        mxk_shape shapes[MXK_MAX_INPLACE * 16];
        int32_t types[MXK_MAX_INPLACE * 16];
        if (ni > sizeof shapes / sizeof shapes[0]) {
            mxki_op_params_free(p);
            return mxk_set_error(MXK_ERR_UNSUPPORTED, "node '%s': more than %zu inputs", node->name,
                                 sizeof shapes / sizeof shapes[0]);
        }
        const uint32_t *in = g->in_entries + g->in_ptr[n];
        for (uint32_t k = 0; k < ni; k++) {
            shapes[k] = ex->shapes[in[k]];
            types[k] = ex->types[in[k]];
        }
        /* the graph's inferred outputs, for operators whose outputs do not follow from
         * their inputs alone (_zeros with a 0 dim) */
        rc = mxki_op_instance_from_params(p, ex->ctx, shapes, types, ex->shapes + g->entry_ptr[n],
                                          &ex->inst[n]);
        if (rc != MXK_OK)
            return node_error("node", node->name);
    }
    return MXK_OK;
}

/** Makes the array of every entry: bound arrays, head gradients, views of blocks. */
static mxk_status make_entries(mxk_executor *ex) {
    const mxk_igraph *g = ex->g;
    const mxk_grad_plan *p = ex->plan;
    ex->entry = calloc(ex->num_entries ? ex->num_entries : 1, sizeof *ex->entry);
    if (ex->entry == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    for (uint32_t i = 0; i < g->num_args; i++) {
        uint32_t e = mxk_igraph_entry(g, g->arg_nodes[i], 0);
        if ((ex->entry[e] = mxki_ndarray_retain_view(ex->args[i])) == NULL)
            return mxki_last_error_code();
        uint32_t ge = p->arg_grad[i];
        if (ge == UINT32_MAX)
            continue;
        if (ex->grads[i] == NULL)
            return mxk_set_error(MXK_ERR_INTERNAL,
                                 "executor: argument '%s' has a gradient entry "
                                 "but no gradient array",
                                 ex->arg_names[i]);
        if ((ex->entry[ge] = mxki_ndarray_retain_view(ex->grads[i])) == NULL)
            return mxki_last_error_code();
    }
    for (uint32_t i = 0; i < g->num_aux; i++) {
        uint32_t e = mxk_igraph_entry(g, g->aux_nodes[i], 0);
        if ((ex->entry[e] = mxki_ndarray_retain_view(ex->aux[i])) == NULL)
            return mxki_last_error_code();
    }
    /* Head gradients: dedicated arrays outside the pool (upstream InitDataEntryMemory). */
    for (uint32_t h = 0; h < p->num_heads; h++) {
        uint32_t e = p->head_grad[h];
        if (e == UINT32_MAX || ex->entry[e] != NULL)
            continue;
        mxk_status rc = mxk_ndarray_create(&ex->shapes[e], ex->types[e], ex->ctx, &ex->entry[e]);
        if (rc != MXK_OK)
            return rc;
    }
    for (uint32_t e = 0; e < ex->num_entries; e++) {
        int32_t b = ex->mem->storage[e];
        if (ex->entry[e] != NULL || b < 0)
            continue;
        if ((uint32_t)b >= ex->mem->num_blocks)
            return mxk_set_error(MXK_ERR_INTERNAL, "executor: entry %u has block %d of %u", e, b,
                                 ex->mem->num_blocks);
        ex->entry[e] = mxki_exec_typed_view(ex->blocks[b], &ex->shapes[e], ex->types[e]);
        if (ex->entry[e] == NULL)
            return mxki_last_error_code();
    }
    return MXK_OK;
}

/** Fills the name lists (arguments, aux states, outputs). */
static mxk_status make_names(mxk_executor *ex) {
    const mxk_igraph *g = ex->g;
    ex->arg_names = calloc(g->num_args + 1, sizeof(char *));
    ex->aux_names = calloc(g->num_aux + 1, sizeof(char *));
    ex->out_names = calloc(g->num_outputs + 1, sizeof(char *));
    if (!ex->arg_names || !ex->aux_names || !ex->out_names)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    for (uint32_t i = 0; i < g->num_args; i++)
        if ((ex->arg_names[i] = dup_str(g->nodes[g->arg_nodes[i]]->name)) == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    for (uint32_t i = 0; i < g->num_aux; i++)
        if ((ex->aux_names[i] = dup_str(g->nodes[g->aux_nodes[i]]->name)) == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    ex->num_outputs = g->num_outputs;
    for (uint32_t i = 0; i < g->num_outputs; i++)
        if ((ex->out_names[i] = mxki_gentry_output_name(&ex->sym->outputs[i])) == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    return MXK_OK;
}

/** Checks that every backward step's kernel has a backward (after bind or reresolve). */
static mxk_status check_backward_kernels(const mxk_executor *ex) {
    for (uint32_t s = ex->plan->num_fwd_steps; s < ex->plan->num_steps; s++) {
        const mxk_op_instance *inst = ex->inst[ex->plan->steps[s].node];
        if (inst->kernel->def.backward == NULL)
            return mxk_set_error(MXK_ERR_UNSUPPORTED,
                                 "node '%s': operator %s has no backward on backend '%s', but a "
                                 "gradient must flow through it",
                                 ex->g->nodes[ex->plan->steps[s].node]->name,
                                 inst->params->op->def.name, inst->kernel->def.backend);
    }
    return MXK_OK;
}

/** The bind flow after the arrays are in place (ex->args/grads/aux/grad_reqs). */
static mxk_status bind_graph(mxk_executor *ex, mxk_executor *shared) {
    const mxk_igraph *g = ex->g;
    mxk_status rc = make_names(ex);
    mxk_shape *fs = calloc(g->num_entries + 1, sizeof *fs);
    int32_t *ft = calloc(g->num_entries + 1, sizeof *ft);
    uint8_t *ext = NULL;
    if (rc == MXK_OK && (fs == NULL || ft == NULL))
        rc = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    if (rc == MXK_OK)
        rc = infer_forward(ex, fs, ft);
    int any_grad = 0;
    for (uint32_t i = 0; i < ex->num_args; i++)
        any_grad |= ex->grad_reqs[i] != MXK_REQ_NULL;
    if (rc == MXK_OK)
        rc = mxki_grad_plan_build(g, any_grad ? ex->grad_reqs : NULL, &ex->plan);
    if (rc == MXK_OK) {
        ex->num_entries = ex->plan->num_full_entries;
        ex->shapes = calloc(ex->num_entries + 1, sizeof *ex->shapes);
        ex->types = calloc(ex->num_entries + 1, sizeof *ex->types);
        ext = calloc(ex->num_entries + 1, 1);
        if (ex->shapes == NULL || ex->types == NULL || ext == NULL)
            rc = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    }
    if (rc == MXK_OK) {
        mxki_grad_plan_expand(ex->plan, fs, ft, ex->shapes, ex->types);
        mxki_grad_plan_mark_external(g, ex->plan, ext);
        rc = mxki_mem_plan_build(g, ex->plan, ex->shapes, ex->types, ext, &ex->mem);
    }
    if (rc == MXK_OK)
        rc = mxki_exec_check_mem_limit(g, ex->plan, "bind: the memory plan", ex->mem->total_bytes,
                                       ex->mem->largest_entry, ex->mem->largest_bytes);
    free(fs);
    free(ft);
    free(ext);
    if (rc == MXK_OK)
        rc = create_instances(ex);
    if (rc == MXK_OK)
        rc = check_backward_kernels(ex);
    if (rc == MXK_OK)
        rc = mxki_exec_alloc_blocks(ex, shared);
    if (rc == MXK_OK)
        rc = make_entries(ex);
    if (rc == MXK_OK) {
        ex->calls = calloc(ex->plan->num_steps + 1, sizeof *ex->calls);
        if (ex->calls == NULL)
            rc = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    }
    for (uint32_t s = 0; rc == MXK_OK && s < ex->plan->num_steps; s++)
        rc = prepare_step(ex, s);
    if (rc == MXK_OK) {
        ex->num_bwd_steps = ex->plan->num_steps - ex->plan->num_fwd_steps;
        rc = mxki_exec_prepare_backward_helpers(ex);
    }
    return rc;
}

/** Frees the handles bind would have taken (executor_internal.h). */
void mxki_exec_free_handles(uint32_t num_args, mxk_ndarray **args, mxk_ndarray **grads,
                            uint32_t num_aux, mxk_ndarray **aux) {
    for (uint32_t i = 0; i < num_args; i++) {
        mxk_ndarray_free(args ? args[i] : NULL);
        mxk_ndarray_free(grads ? grads[i] : NULL);
    }
    for (uint32_t i = 0; aux != NULL && i < num_aux; i++)
        mxk_ndarray_free(aux[i]);
}

mxk_status mxki_exec_bind_owned(const mxk_symbol *sym, mxk_context ctx, uint32_t num_args,
                                mxk_ndarray **args, mxk_ndarray **grads, const mxk_op_req *reqs,
                                uint32_t num_aux, mxk_ndarray **aux, mxk_executor *shared,
                                mxk_executor **out) {
    *out = NULL;
    mxk_executor *ex = calloc(1, sizeof *ex);
    mxk_status rc = MXK_OK;
    if (ex != NULL) {
        ex->ctx = ctx;
        ex->num_args = num_args;
        ex->num_aux = num_aux;
        ex->args = calloc(num_args + 1, sizeof *ex->args);
        ex->grads = calloc(num_args + 1, sizeof *ex->grads);
        ex->grad_reqs = calloc(num_args + 1, sizeof *ex->grad_reqs);
        ex->aux = calloc(num_aux + 1, sizeof *ex->aux);
    }
    if (ex == NULL || !ex->args || !ex->grads || !ex->grad_reqs || !ex->aux) {
        mxki_exec_free_handles(num_args, args, grads, num_aux, aux);
        mxk_executor_free(ex);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    }
    /* The executor owns the handles from here on (freed with it on failure). */
    for (uint32_t i = 0; i < num_args; i++) {
        ex->args[i] = args[i];
        ex->grads[i] = grads ? grads[i] : NULL;
        ex->grad_reqs[i] = ex->grads[i] ? (reqs ? reqs[i] : MXK_REQ_WRITE) : MXK_REQ_NULL;
    }
    for (uint32_t i = 0; i < num_aux; i++)
        ex->aux[i] = aux[i];
    if (sym->num_outputs == 0)
        rc = mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "bind: the symbol has no outputs");
    if (rc == MXK_OK)
        rc = mxki_symbol_from_entries(sym->num_outputs, sym->outputs, &ex->sym);
    if (rc == MXK_OK)
        rc = mxki_igraph_build(ex->sym, &ex->g);
    if (rc == MXK_OK && num_args != ex->g->num_args)
        rc = mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                           "Length of args does not match the number of arguments (%u given, the "
                           "symbol has %u)",
                           num_args, ex->g->num_args);
    if (rc == MXK_OK && num_aux != ex->g->num_aux)
        rc = mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                           "Length of aux_states does not match the number of arguments (%u "
                           "given, the symbol has %u)",
                           num_aux, ex->g->num_aux);
    for (uint32_t i = 0; rc == MXK_OK && i < num_args; i++)
        if (ex->grad_reqs[i] != MXK_REQ_NULL && ex->grad_reqs[i] != MXK_REQ_WRITE &&
            ex->grad_reqs[i] != MXK_REQ_ADD)
            rc = mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                               "grad_req must be in {'null': 0, 'write': 1, 'add': 3} (argument "
                               "'%s' has %d)",
                               ex->g->nodes[ex->g->arg_nodes[i]]->name, (int)ex->grad_reqs[i]);
    if (rc == MXK_OK)
        rc = bind_graph(ex, shared);
    if (rc != MXK_OK) {
        mxk_executor_free(ex);
        return rc;
    }
    *out = ex;
    return MXK_OK;
}

/** Checks that `v` (count n, may be NULL when n is 0) holds no NULL; names the list. */
static mxk_status check_list(mxk_ndarray *const *v, uint32_t n, const char *list) {
    if (n > 0 && v == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "Only accept list of NDArrays or dict of str to NDArray (%s is NULL "
                             "but %u arrays are expected)",
                             list, n);
    for (uint32_t i = 0; i < n; i++)
        if (v[i] == NULL)
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                                 "Only accept list of NDArrays or dict of str to NDArray (%s[%u] "
                                 "is NULL)",
                                 list, i);
    return MXK_OK;
}

mxk_status mxk_executor_bind(const mxk_symbol *sym, mxk_context ctx, uint32_t num_args,
                             mxk_ndarray *const *args, mxk_ndarray *const *arg_grads,
                             const mxk_op_req *grad_reqs, uint32_t num_aux, mxk_ndarray *const *aux,
                             mxk_executor *shared_exec, mxk_executor **out) {
    if (out == NULL || sym == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_executor_bind: %s is NULL",
                             out ? "sym" : "out");
    *out = NULL;
    mxk_status rc = check_list(args, num_args, "args");
    if (rc == MXK_OK)
        rc = check_list(aux, num_aux, "aux_states");
    if (rc != MXK_OK)
        return rc;
    mxk_ndarray **a = calloc(num_args + 1, sizeof *a), **gr = calloc(num_args + 1, sizeof *gr);
    mxk_ndarray **x = calloc(num_aux + 1, sizeof *x);
    mxk_op_req *r = calloc(num_args + 1, sizeof *r);
    if (a == NULL || gr == NULL || x == NULL || r == NULL)
        rc = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    /* The executor holds its own handles on the bound arrays (same memory). */
    for (uint32_t i = 0; rc == MXK_OK && i < num_args; i++) {
        a[i] = mxki_ndarray_retain_view(args[i]);
        if (arg_grads && arg_grads[i])
            gr[i] = mxki_ndarray_retain_view(arg_grads[i]);
        r[i] = grad_reqs ? (mxk_op_req)grad_reqs[i] : MXK_REQ_WRITE;
        if (a[i] == NULL || (arg_grads && arg_grads[i] && gr[i] == NULL))
            rc = mxki_last_error_code();
    }
    for (uint32_t i = 0; rc == MXK_OK && i < num_aux; i++)
        if ((x[i] = mxki_ndarray_retain_view(aux[i])) == NULL)
            rc = mxki_last_error_code();
    if (rc == MXK_OK)
        rc = mxki_exec_bind_owned(sym, ctx, num_args, a, gr, r, num_aux, x, shared_exec, out);
    else
        mxki_exec_free_handles(num_args, a, gr, num_aux, x);
    free(a);
    free(gr);
    free(x);
    free(r);
    return rc;
}

/* ------------------------------------------------------------------------- */
/* simple_bind                                                               */
/* ------------------------------------------------------------------------- */

/** Parses a grad_req string ("null", "write", "add"); -1 when invalid. */
static int parse_req(const char *s) {
    if (strcmp(s, "null") == 0)
        return MXK_REQ_NULL;
    if (strcmp(s, "write") == 0)
        return MXK_REQ_WRITE;
    if (strcmp(s, "add") == 0)
        return MXK_REQ_ADD;
    return -1;
}

/**
 * An array of `shape`/`dtype` for simple_bind: a prefix view of `reuse` when it is
 * given, has the dtype and at least as many elements (shared_buffer's "reshape or
 * create", upstream src/common/exec_utils.h ReshapeOrCreate), else new zeros.
 */
static mxk_status reuse_or_zeros(const mxk_ndarray *reuse, const mxk_shape *shape, int32_t dtype,
                                 mxk_context ctx, mxk_ndarray **out) {
    mxk_context rc_ctx = reuse ? mxk_ndarray_context(reuse) : ctx;
    if (reuse != NULL && reuse->dtype == dtype && rc_ctx.dev_type == ctx.dev_type &&
        rc_ctx.dev_id == ctx.dev_id && mxk_ndarray_size(reuse) >= mxki_shape_size(shape)) {
        *out = mxki_exec_typed_view(reuse, shape, dtype);
        return *out ? MXK_OK : mxki_last_error_code();
    }
    return mxk_ndarray_full(shape, dtype, ctx, 0.0, out);
}

/** Checks the names of simple_bind / reshape shapes (executor_internal.h). */
mxk_status mxki_exec_check_shape_names(uint32_t num, const char *const *names,
                                       const mxk_shape *shapes, const char *who,
                                       const char *where) {
    for (uint32_t i = 0; i < num; i++) {
        if (names == NULL || names[i] == NULL || shapes == NULL)
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: shape name %u is NULL", who, i);
        for (uint32_t j = 0; j < i; j++)
            if (strcmp(names[i], names[j]) == 0)
                return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                                     "Duplicate shapes are provided for argument %s in %s",
                                     names[i], where);
    }
    return MXK_OK;
}

/** Shapes/types of arguments and aux states for simple_bind (inference from given shapes). */
static mxk_status simple_infer(const mxk_igraph *g, uint32_t num_shapes, const char *const *names,
                               const mxk_shape *shapes, mxk_shape *fs, int32_t *ft) {
    mxk_status rc =
        mxki_exec_check_shape_names(num_shapes, names, shapes, "simple_bind", "simple_bind");
    if (rc != MXK_OK)
        return rc;
    for (uint32_t e = 0; e < g->num_entries; e++)
        ft[e] = -1;
    /* Names are matched against the arguments and aux states; others are ignored (MXNet). */
    for (uint32_t n = 0; n < g->num_nodes; n++) {
        if (g->nodes[n]->op != NULL)
            continue;
        for (uint32_t i = 0; i < num_shapes; i++)
            if (strcmp(g->nodes[n]->name, names[i]) == 0)
                fs[mxk_igraph_entry(g, n, 0)] = shapes[i];
    }
    uint32_t unknown = 0;
    rc = mxki_igraph_infer_shape(g, fs, &unknown);
    if (rc != MXK_OK)
        return rc;
    uint32_t unknown_args = 0;
    char list[1024] = "", sb[128];
    size_t len = 0;
    for (int aux = 0; aux < 2; aux++) {
        uint32_t cnt = aux ? g->num_aux : g->num_args;
        const uint32_t *ids = aux ? g->aux_nodes : g->arg_nodes;
        for (uint32_t i = 0; i < cnt; i++) {
            uint32_t e = mxk_igraph_entry(g, ids[i], 0);
            if (mxki_shape_is_complete(&fs[e]))
                continue;
            if (unknown_args++ == 10)
                len += (size_t)snprintf(list + len, sizeof list - len, "...");
            else if (unknown_args < 10 && len < sizeof list)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s: %s, ",
                                        g->nodes[ids[i]]->name, shape_str(&fs[e], sb, sizeof sb));
        }
    }
    if (unknown_args != 0)
        return mxk_set_error(MXK_ERR_SHAPE,
                             "InferShape pass cannot decide shapes for the following arguments "
                             "(-1 means unknown dimensions). Please consider providing them as "
                             "inputs:\n%s",
                             list);
    /* dtypes: __dtype__ attributes, inference, then float32 for what stays unknown. */
    rc = mxki_igraph_infer_type(g, ft, &unknown);
    if (rc != MXK_OK)
        return rc;
    if (unknown != 0) {
        for (int aux = 0; aux < 2; aux++) {
            uint32_t cnt = aux ? g->num_aux : g->num_args;
            const uint32_t *ids = aux ? g->aux_nodes : g->arg_nodes;
            for (uint32_t i = 0; i < cnt; i++) {
                uint32_t e = mxk_igraph_entry(g, ids[i], 0);
                if (ft[e] < 0)
                    ft[e] = MXK_FLOAT32;
            }
        }
        rc = mxki_igraph_infer_type(g, ft, &unknown);
    }
    return rc;
}

/**
 * Checks the bytes simple_bind is about to allocate (arguments, gradients where
 * requested, aux states; arrays reused from shared_exec counted too) against the
 * memory limit, before any is allocated (mxki_exec_check_mem_limit).
 */
static mxk_status check_simple_bind_bytes(const mxk_igraph *g, const mxk_shape *fs,
                                          const int32_t *ft, const mxk_op_req *reqs) {
    uint64_t total = 0, largest_bytes = 0;
    uint32_t largest = UINT32_MAX;
    for (uint32_t k = 0; k < g->num_args + g->num_aux; k++) {
        int is_arg = k < g->num_args;
        uint32_t e =
            mxk_igraph_entry(g, is_arg ? g->arg_nodes[k] : g->aux_nodes[k - g->num_args], 0);
        uint64_t b = mxki_mem_entry_bytes(&fs[e], ft[e]);
        if (b > largest_bytes || largest == UINT32_MAX) {
            largest = e;
            largest_bytes = b;
        }
        for (int copy = 0; copy < (is_arg && reqs[k] != MXK_REQ_NULL ? 2 : 1); copy++)
            if (__builtin_add_overflow(total, b, &total))
                total = UINT64_MAX;
    }
    return mxki_exec_check_mem_limit(g, NULL,
                                     "simple_bind: the arguments, gradients and auxiliary states",
                                     total, largest, largest_bytes);
}

mxk_status mxk_executor_simple_bind(const mxk_symbol *sym, mxk_context ctx, uint32_t num_shapes,
                                    const char *const *names, const mxk_shape *shapes,
                                    const char *grad_req, uint32_t num_reqs,
                                    const char *const *req_names, const char *const *req_values,
                                    mxk_executor *shared_exec, mxk_executor **out) {
    if (out == NULL || sym == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_executor_simple_bind: %s is NULL",
                             out ? "sym" : "out");
    *out = NULL;
    const char *greq = grad_req ? grad_req : "write";
    int def_req = parse_req(greq);
    if (def_req < 0)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "grad_req=%s is not a valid input in simple_bind; only 'null', "
                             "'write', and 'add' are supported",
                             greq);
    for (uint32_t i = 0; i < num_reqs; i++)
        if (req_names == NULL || req_values == NULL || req_names[i] == NULL ||
            req_values[i] == NULL || parse_req(req_values[i]) < 0)
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                                 "grad_req=%s is not a valid input in simple_bind; only 'null', "
                                 "'write', and 'add' are supported",
                                 req_values && req_values[i] ? req_values[i] : "(null)");
    mxk_igraph *g = NULL;
    mxk_status rc = mxki_igraph_build(sym, &g);
    if (rc != MXK_OK)
        return rc;
    uint32_t na = g->num_args, nx = g->num_aux;
    mxk_shape *fs = calloc(g->num_entries + 1, sizeof *fs);
    int32_t *ft = calloc(g->num_entries + 1, sizeof *ft);
    mxk_ndarray **args = calloc(na + 1, sizeof *args), **grads = calloc(na + 1, sizeof *grads);
    mxk_ndarray **aux = calloc(nx + 1, sizeof *aux);
    mxk_op_req *reqs = calloc(na + 1, sizeof *reqs);
    if (!fs || !ft || !args || !grads || !aux || !reqs)
        rc = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    if (rc == MXK_OK)
        rc = simple_infer(g, num_shapes, names, shapes, fs, ft);
    for (uint32_t i = 0; rc == MXK_OK && i < na; i++) {
        const char *name = g->nodes[g->arg_nodes[i]]->name;
        reqs[i] = (mxk_op_req)def_req;
        for (uint32_t k = 0; k < num_reqs; k++)
            if (strcmp(req_names[k], name) == 0)
                reqs[i] = (mxk_op_req)parse_req(req_values[k]);
    }
    if (rc == MXK_OK)
        rc = check_simple_bind_bytes(g, fs, ft, reqs);
    for (uint32_t i = 0; rc == MXK_OK && i < na; i++) {
        const char *name = g->nodes[g->arg_nodes[i]]->name;
        uint32_t e = mxk_igraph_entry(g, g->arg_nodes[i], 0);
        uint32_t s = shared_exec ? mxki_exec_find_arg(shared_exec, name) : UINT32_MAX;
        rc = reuse_or_zeros(s != UINT32_MAX ? shared_exec->args[s] : NULL, &fs[e], ft[e], ctx,
                            &args[i]);
        if (rc == MXK_OK && reqs[i] != MXK_REQ_NULL)
            rc = reuse_or_zeros(s != UINT32_MAX ? shared_exec->grads[s] : NULL, &fs[e], ft[e], ctx,
                                &grads[i]);
    }
    for (uint32_t i = 0; rc == MXK_OK && i < nx; i++) {
        const char *name = g->nodes[g->aux_nodes[i]]->name;
        uint32_t e = mxk_igraph_entry(g, g->aux_nodes[i], 0);
        uint32_t s = shared_exec ? mxki_exec_find_aux(shared_exec, name) : UINT32_MAX;
        const mxk_ndarray *r = s != UINT32_MAX ? shared_exec->aux[s] : NULL;
        /* Aux states are reused only with the same shape and dtype (upstream InitArguments). */
        if (r != NULL && (!mxki_shape_equal(&r->shape, &fs[e]) || r->dtype != ft[e]))
            r = NULL;
        rc = reuse_or_zeros(r, &fs[e], ft[e], ctx, &aux[i]);
    }
    mxki_igraph_free(g);
    free(fs);
    free(ft);
    if (rc == MXK_OK)
        rc = mxki_exec_bind_owned(sym, ctx, na, args, grads, reqs, nx, aux, shared_exec, out);
    else
        mxki_exec_free_handles(na, args, grads, nx, aux);
    free(args);
    free(grads);
    free(aux);
    free(reqs);
    return rc;
}

/* ------------------------------------------------------------------------- */
/* Accessors                                                                 */
/* ------------------------------------------------------------------------- */

uint32_t mxk_executor_num_outputs(const mxk_executor *ex) {
    return ex ? ex->num_outputs : 0;
}

mxk_ndarray *mxk_executor_output(const mxk_executor *ex, uint32_t i) {
    if (ex == NULL || i >= ex->num_outputs)
        return NULL;
    return ex->entry[ex->g->outputs[i]];
}

mxk_ndarray *mxk_executor_arg(const mxk_executor *ex, const char *name) {
    uint32_t i = ex ? mxki_exec_find_arg(ex, name) : UINT32_MAX;
    return i == UINT32_MAX ? NULL : ex->args[i];
}

mxk_ndarray *mxk_executor_grad(const mxk_executor *ex, const char *name) {
    uint32_t i = ex ? mxki_exec_find_arg(ex, name) : UINT32_MAX;
    return i == UINT32_MAX ? NULL : ex->grads[i];
}

mxk_ndarray *mxk_executor_aux(const mxk_executor *ex, const char *name) {
    uint32_t i = ex ? mxki_exec_find_aux(ex, name) : UINT32_MAX;
    return i == UINT32_MAX ? NULL : ex->aux[i];
}

mxk_ndarray *mxk_executor_output_by_name(const mxk_executor *ex, const char *name) {
    for (uint32_t i = 0; ex && name && i < ex->num_outputs; i++)
        if (strcmp(ex->out_names[i], name) == 0)
            return mxk_executor_output(ex, i);
    return NULL;
}

/* ------------------------------------------------------------------------- */
/* copy_params_from, reresolve                                               */
/* ------------------------------------------------------------------------- */

/**
 * Where a name given to copy_params_from goes: "arg:NAME" to argument NAME and
 * "aux:NAME" to aux state NAME whichever list holds it, as MXNet's .params files
 * name them (python/mxnet/model.py save_checkpoint); a name without either prefix
 * to the list it was given in (`in_aux`). Sets *name to the name without prefix and
 * returns 1 for an aux state, 0 for an argument.
 */
static int param_target(const char **name, int in_aux) {
    if (strncmp(*name, "arg:", 4) == 0 || strncmp(*name, "aux:", 4) == 0) {
        in_aux = (*name)[1] == 'u';
        *name += 4;
    }
    return in_aux;
}

/** Checks (copy 0) or copies (copy 1) one named array; see copy_params_from. */
static mxk_status copy_param(mxk_executor *ex, const char *name, mxk_ndarray *arr, int in_aux,
                             int allow_extra, int copy) {
    int aux = param_target(&name, in_aux);
    uint32_t k = aux ? mxki_exec_find_aux(ex, name) : mxki_exec_find_arg(ex, name);
    if (k == UINT32_MAX) {
        if (allow_extra)
            return MXK_OK;
        return aux ? mxk_set_error(MXK_ERR_NOT_FOUND,
                                   "Find name %s that is not in the auxiliary states", name)
                   : mxk_set_error(MXK_ERR_NOT_FOUND,
                                   "Find name \"%s\" that is not in the arguments", name);
    }
    if (!copy)
        return MXK_OK;
    if (mxk_ndarray_copy_to(arr, aux ? ex->aux[k] : ex->args[k]) != MXK_OK)
        return node_error(aux ? "copy_params_from: aux state" : "copy_params_from: argument", name);
    return MXK_OK;
}

mxk_status mxk_executor_copy_params_from(mxk_executor *ex, uint32_t num_args,
                                         const char *const *arg_names,
                                         mxk_ndarray *const *arg_arrays, uint32_t num_aux,
                                         const char *const *aux_names,
                                         mxk_ndarray *const *aux_arrays, int32_t allow_extra) {
    if (ex == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "copy_params_from: executor is NULL");
    if ((num_args && (!arg_names || !arg_arrays)) || (num_aux && (!aux_names || !aux_arrays)))
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "copy_params_from: a list is NULL");
    for (uint32_t i = 0; i < num_args; i++)
        if (arg_names[i] == NULL || arg_arrays[i] == NULL)
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                                 "copy_params_from: argument %u has a NULL name or array", i);
    for (uint32_t i = 0; i < num_aux; i++)
        if (aux_names[i] == NULL || aux_arrays[i] == NULL)
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                                 "copy_params_from: aux state %u has a NULL name or array", i);
    /* Check every name first (copy 0), so that an error leaves the executor unchanged. */
    for (int copy = 0; copy < 2; copy++) {
        for (uint32_t i = 0; i < num_args; i++) {
            mxk_status rc = copy_param(ex, arg_names[i], arg_arrays[i], 0, allow_extra, copy);
            if (rc != MXK_OK)
                return rc;
        }
        for (uint32_t i = 0; i < num_aux; i++) {
            mxk_status rc = copy_param(ex, aux_names[i], aux_arrays[i], 1, allow_extra, copy);
            if (rc != MXK_OK)
                return rc;
        }
    }
    return MXK_OK;
}

mxk_status mxk_executor_reresolve(mxk_executor *ex) {
    if (ex == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_executor_reresolve: executor is NULL");
    for (uint32_t n = 0; n < ex->g->num_nodes; n++) {
        if (ex->inst[n] == NULL)
            continue;
        /* Waits for pending work (which uses the old kernel's state) before swapping. */
        mxk_status rc = mxk_op_instance_reresolve(ex->inst[n]);
        if (rc != MXK_OK)
            return node_error("reresolve: node", ex->g->nodes[n]->name);
    }
    return check_backward_kernels(ex);
}
