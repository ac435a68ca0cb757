/*
 * Shape and type inference over an indexed graph, and the public
 * mxk_symbol_infer_shape / mxk_symbol_infer_type built on them.
 *
 * Semantics: MXNet's InferShape / InferType passes (src/executor/infer_graph_attr_pass.cc,
 * nnvm src/pass/infer_shape_type.cc): variables take their `__shape__` / `__dtype__`
 * attribute when still unknown; every operator's inference then runs forwards
 * (topological order) and backwards (reverse order), repeatedly, until no entry
 * changes; unknown dimensions are 0 and a partial result is not an error (the
 * pass counts what stays unknown in "shape_num_unknown_nodes",
 * src/executor/infer_graph_attr_pass.cc). Errors name the
 * node: "Error in operator <node>: <op>: <detail>" (MXNet prefixes the operator
 * node's name the same way). Keyword lookup of known inputs follows MXNet's
 * MatchArguments (src/c_api/c_api_symbolic.cc): "Keyword argument name <x> not found."
 * with the candidate arguments listed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "graph.h"
#include "shape.h"

/** Longest error detail copied from the operator (bytes). */
#define INFER_MSG_MAX 1536

/**
 * Merges `b` into `a` (MXNet shape_assign): an unknown shape (ndim 0) takes the
 * other; otherwise ndims must agree and each dim pair must be equal or have an
 * unknown (0) side. Returns 0 when incompatible (a unchanged), 1 otherwise, and
 * sets *changed when `a` gained information.
 */
static int shape_merge(mxk_shape *a, const mxk_shape *b, int *changed) {
    if (b->ndim == 0)
        return 1;
    if (a->ndim == 0) {
        *a = *b;
        *changed = 1;
        return 1;
    }
    if (a->ndim != b->ndim)
        return 0;
    mxk_shape m = *a;
    for (int32_t i = 0; i < a->ndim && i < MXK_MAX_NDIM; i++) {
        if (m.dims[i] == 0)
            m.dims[i] = b->dims[i];
        else if (b->dims[i] != 0 && b->dims[i] != m.dims[i])
            return 0;
    }
    if (!mxki_shape_equal(&m, a)) {
        *a = m;
        *changed = 1;
    }
    return 1;
}

/** Merges dtype `b` into `a` (-1 unknown). 0 when both are known and differ. */
static int type_merge(int32_t *a, int32_t b, int *changed) {
    if (b < 0)
        return 1;
    if (*a < 0) {
        *a = b;
        *changed = 1;
        return 1;
    }
    return *a == b;
}

/** Name of a node for messages. */
static const char *node_name(const mxk_gnode *n) {
    return n->name ? n->name : "";
}

/** Name of slot `k` (argument, then aux) of an operator node, for messages. */
static const char *slot_name(const mxk_op_params *p, uint32_t k) {
    uint32_t ni = p->in_names->count;
    if (k < ni)
        return p->in_names->names[k];
    return p->aux_names->names[k - ni];
}

/**
 * Checks that an operator node has one input per argument and aux state of its
 * operator (what the symbol layer guarantees); MXK_ERR_INTERNAL otherwise.
 */
static mxk_status check_arity(const mxk_gnode *n) {
    uint32_t want = n->op->in_names->count + n->op->aux_names->count;
    if (n->num_inputs != want)
        return mxk_set_error(
            MXK_ERR_INTERNAL, "Error in operator %s: %s: has %u inputs, the operator takes %u",
            node_name(n), n->op->op->def.name, (unsigned)n->num_inputs, (unsigned)want);
    return MXK_OK;
}

/*
 * What the shape and type passes differ in: the value type, the error code, the
 * operator's inference function, the merge rule and how a value is printed.
 */
typedef struct value_kind {
    size_t size;
    mxk_status code;
    mxk_status (*infer)(const mxk_op_params *p, void *in, void *out, void *aux);
    int (*merge)(void *dst, const void *src, int *changed);
    const char *(*format)(const void *v, char *buf, size_t size);
} value_kind;

static mxk_status shape_infer(const mxk_op_params *p, void *in, void *out, void *aux) {
    return mxki_op_params_infer_shape(p, in, out, aux);
}
static int shape_merge_any(void *dst, const void *src, int *changed) {
    return shape_merge(dst, src, changed);
}
static const char *shape_format_any(const void *v, char *buf, size_t size) {
    return mxki_shape_format(v, buf, size);
}
static mxk_status type_infer(const mxk_op_params *p, void *in, void *out, void *aux) {
    return mxki_op_params_infer_type(p, in, out, aux);
}
static int type_merge_any(void *dst, const void *src, int *changed) {
    return type_merge(dst, *(const int32_t *)src, changed);
}
static const char *type_format_any(const void *v, char *buf, size_t size) {
    snprintf(buf, size, "%s", mxk_dtype_name(*(const int32_t *)v));
    return buf;
}

static const value_kind shape_kind = {sizeof(mxk_shape), MXK_ERR_SHAPE, shape_infer,
                                      shape_merge_any, shape_format_any};
static const value_kind type_kind = {sizeof(int32_t), MXK_ERR_TYPE, type_infer, type_merge_any,
                                     type_format_any};

/**
 * Runs one operator node's inference (shapes or types, per `vk`) on copies of its
 * entries' values and merges the result back; *changed is set when any entry gained
 * information. Errors: the operator's (prefixed with the node's name), or a result
 * that contradicts a known entry (the operator did not check it).
 */
static mxk_status infer_node(const mxk_igraph *g, uint32_t nid, const value_kind *vk, char *values,
                             char *scratch, int *changed) {
    const mxk_gnode *n = g->nodes[nid];
    const mxk_op_params *p = n->op;
    mxk_status st = check_arity(n);
    if (st != MXK_OK)
        return st;
    uint32_t ni = p->in_names->count, na = p->aux_names->count, no = p->out_names->count;
    const uint32_t *in = &g->in_entries[g->in_ptr[nid]];
    size_t sz = vk->size;
    char *sout = scratch + (ni + na) * sz;
    for (uint32_t k = 0; k < ni + na; k++)
        memcpy(scratch + k * sz, values + in[k] * sz, sz);
    memcpy(sout, values + g->entry_ptr[nid] * sz, no * sz);
    if (vk->infer(p, scratch, sout, scratch + ni * sz) != MXK_OK) {
        char msg[INFER_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", mxki_last_error_message());
        return mxk_set_error(vk->code, "Error in operator %s: %s", node_name(n), msg);
    }
    char want[128], got[128];
    for (uint32_t k = 0; k < ni + na; k++) {
        char *dst = values + in[k] * sz;
        if (!vk->merge(dst, scratch + k * sz, changed))
            return mxk_set_error(vk->code, "Error in operator %s: %s: %s '%s': expected %s, got %s",
                                 node_name(n), p->op->def.name, k < ni ? "argument" : "aux state",
                                 slot_name(p, k), vk->format(scratch + k * sz, want, sizeof want),
                                 vk->format(dst, got, sizeof got));
    }
    for (uint32_t j = 0; j < no; j++) {
        char *dst = values + (g->entry_ptr[nid] + j) * sz;
        if (!vk->merge(dst, sout + j * sz, changed))
            return mxk_set_error(
                vk->code, "Error in operator %s: %s: output '%s': expected %s, got %s",
                node_name(n), p->op->def.name, p->out_names->names[j],
                vk->format(sout + j * sz, want, sizeof want), vk->format(dst, got, sizeof got));
    }
    return MXK_OK;
}

/** Largest number of slots (inputs + outputs) of any operator node. */
static uint32_t max_slots(const mxk_igraph *g) {
    uint32_t m = 1;
    for (uint32_t i = 0; i < g->num_nodes; i++) {
        const mxk_gnode *n = g->nodes[i];
        if (n->op == NULL)
            continue;
        uint32_t s = n->op->in_names->count + n->op->aux_names->count + n->op->out_names->count;
        if (n->num_inputs + n->op->out_names->count > s)
            s = n->num_inputs + n->op->out_names->count;
        if (s > m)
            m = s;
    }
    return m;
}

/**
 * Applies each variable's `__shape__` attribute to its entry when that entry is
 * still unknown (MXNet: the attribute only fills what was not given). A value
 * that does not parse: MXK_ERR_INVALID_ARGUMENT naming the variable.
 */
static mxk_status apply_shape_attrs(const mxk_igraph *g, mxk_shape *shapes) {
    for (uint32_t i = 0; i < g->num_nodes; i++) {
        const mxk_gnode *n = g->nodes[i];
        if (n->op != NULL || n->attrs == NULL)
            continue;
        const char *v = mxki_attrs_get(n->attrs, "__shape__");
        mxk_shape *s = &shapes[g->entry_ptr[i]];
        if (v == NULL || s->ndim != 0)
            continue;
        mxk_error_sink sink;
        mxki_error_sink_clear(&sink);
        mxk_shape parsed;
        memset(&parsed, 0, sizeof parsed);
        if (mxki_parse_shape("__shape__", v, &parsed, &sink) != MXK_OK)
            return mxki_set_error_from_sink(&sink, "variable '%s': ", node_name(n));
        for (int32_t d = 0; d < parsed.ndim; d++)
            if (parsed.dims[d] < 0)
                return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                                     "variable '%s': __shape__ '%s' has a negative dimension",
                                     node_name(n), v);
        *s = parsed;
    }
    return MXK_OK;
}

/**
 * Parses a `__dtype__` value: MXNet writes the numeric code ("0"); a dtype name
 * ("float32") is accepted too. Returns -2 when it is neither.
 */
static int32_t parse_dtype(const char *v) {
    char *end = NULL;
    long code = strtol(v, &end, 10);
    if (end != v && *end == '\0')
        return code >= 0 && code < 64 && mxk_dtype_size((int32_t)code) > 0 ? (int32_t)code : -2;
    for (int32_t c = 0; c < 64; c++)
        if (mxk_dtype_size(c) > 0 && strcmp(mxk_dtype_name(c), v) == 0)
            return c;
    return -2;
}

/** Applies `__dtype__` attributes of variables to unknown entries. */
static mxk_status apply_dtype_attrs(const mxk_igraph *g, int32_t *types) {
    for (uint32_t i = 0; i < g->num_nodes; i++) {
        const mxk_gnode *n = g->nodes[i];
        if (n->op != NULL || n->attrs == NULL)
            continue;
        const char *v = mxki_attrs_get(n->attrs, "__dtype__");
        int32_t *t = &types[g->entry_ptr[i]];
        if (v == NULL || *t >= 0)
            continue;
        int32_t code = parse_dtype(v);
        if (code < 0)
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                                 "variable '%s': __dtype__ '%s' is not a dtype code or name",
                                 node_name(n), v);
        *t = code;
    }
    return MXK_OK;
}

/**
 * Runs every operator node's inference forwards then backwards until nothing
 * changes (merges only ever add information, so the sweeps terminate; the round
 * bound is a guard), as MXNet's InferShape/InferType passes do.
 */
static mxk_status sweep(const mxk_igraph *g, void *values, const value_kind *vk, const char *what) {
    char *scratch = malloc(max_slots(g) * vk->size);
    if (scratch == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    mxk_status st = MXK_OK;
    for (uint32_t round = 0; round < g->num_nodes + 2 && st == MXK_OK; round++) {
        int changed = 0;
        for (uint32_t i = 0; i < g->num_nodes && st == MXK_OK; i++)
            if (g->nodes[i]->op != NULL)
                st = infer_node(g, i, vk, values, scratch, &changed);
        for (uint32_t i = g->num_nodes; i-- > 0 && st == MXK_OK;)
            if (g->nodes[i]->op != NULL)
                st = infer_node(g, i, vk, values, scratch, &changed);
        if (!changed)
            break;
    }
    free(scratch);
    return st;
}

/** Shape inference over the indexed graph (graph.h; MXNet InferShape pass). */
mxk_status mxki_igraph_infer_shape(const mxk_igraph *g, mxk_shape *shapes, uint32_t *num_unknown) {
    if (g == NULL || shapes == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "infer_shape: graph or shapes is NULL");
    mxk_status st = apply_shape_attrs(g, shapes);
    if (st == MXK_OK)
        st = sweep(g, shapes, &shape_kind, "infer_shape");
    if (st != MXK_OK)
        return st;
    uint32_t unknown = 0;
    for (uint32_t e = 0; e < g->num_entries; e++)
        unknown += !mxki_shape_is_complete(&shapes[e]);
    if (num_unknown)
        *num_unknown = unknown;
    return MXK_OK;
}

/** Type inference over the indexed graph (graph.h; MXNet InferType pass). */
mxk_status mxki_igraph_infer_type(const mxk_igraph *g, int32_t *types, uint32_t *num_unknown) {
    if (g == NULL || types == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "infer_type: graph or types is NULL");
    mxk_status st = apply_dtype_attrs(g, types);
    if (st == MXK_OK)
        st = sweep(g, types, &type_kind, "infer_type");
    if (st != MXK_OK)
        return st;
    uint32_t unknown = 0;
    for (uint32_t e = 0; e < g->num_entries; e++)
        unknown += types[e] < 0;
    if (num_unknown)
        *num_unknown = unknown;
    return MXK_OK;
}

/* ------------------------------------------------------------------------- */
/* Public API                                                                */
/* ------------------------------------------------------------------------- */

/**
 * Finds the variable node named `name` among the arguments, then the aux states
 * (MXNet MatchArguments over the graph's input nodes). Returns its node id, or
 * sets MXK_ERR_NOT_FOUND with MXNet's message and the candidate list.
 */
static mxk_status find_input(const mxk_igraph *g, const char *name, const char *what,
                             uint32_t *node) {
    for (uint32_t i = 0; i < g->num_args; i++)
        if (name && strcmp(node_name(g->nodes[g->arg_nodes[i]]), name) == 0) {
            *node = g->arg_nodes[i];
            return MXK_OK;
        }
    for (uint32_t i = 0; i < g->num_aux; i++)
        if (name && strcmp(node_name(g->nodes[g->aux_nodes[i]]), name) == 0) {
            *node = g->aux_nodes[i];
            return MXK_OK;
        }
    char list[1024];
    size_t pos = 0;
    list[0] = '\0';
    for (uint32_t i = 0; i < g->num_args + g->num_aux && pos < sizeof list; i++) {
        uint32_t nid = i < g->num_args ? g->arg_nodes[i] : g->aux_nodes[i - g->num_args];
        pos += (size_t)snprintf(list + pos, sizeof list - pos, "\n\t[%u]%s", (unsigned)i,
                                node_name(g->nodes[nid]));
    }
    return mxk_set_error(MXK_ERR_NOT_FOUND,
                         "%s: Keyword argument name %s not found.\nCandidate arguments:%s", what,
                         name ? name : "(null)", list);
}

/** Public shape inference by argument names (mxk.h; MXNet MXSymbolInferShape). */
mxk_status mxk_symbol_infer_shape(const mxk_symbol *sym, uint32_t num_known,
                                  const char *const *names, const mxk_shape *shapes,
                                  mxk_shape *arg_shapes, mxk_shape *out_shapes,
                                  mxk_shape *aux_shapes, int32_t *complete) {
    if (sym == NULL || (num_known > 0 && (names == NULL || shapes == NULL)))
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "InferShape: symbol, names or shapes is NULL");
    mxk_igraph *g = NULL;
    mxk_status st = mxki_igraph_build(sym, &g);
    if (st != MXK_OK)
        return st;
    mxk_shape *all = calloc(g->num_entries + 1, sizeof *all);
    if (all == NULL) {
        mxki_igraph_free(g);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "InferShape: out of memory");
    }
    for (uint32_t i = 0; i < num_known && st == MXK_OK; i++) {
        uint32_t nid = 0;
        st = find_input(g, names[i], "InferShape", &nid);
        if (st != MXK_OK)
            break;
        if (shapes[i].ndim < 0 || shapes[i].ndim > MXK_MAX_NDIM) {
            st = mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "InferShape: shape of '%s' has ndim %d",
                               names[i], (int)shapes[i].ndim);
            break;
        }
        mxk_shape s = shapes[i];
        for (int32_t d = s.ndim; d < MXK_MAX_NDIM; d++)
            s.dims[d] = 0;
        s.reserved_ = 0;
        all[g->entry_ptr[nid]] = s;
    }
    uint32_t unknown = 0;
    if (st == MXK_OK)
        st = mxki_igraph_infer_shape(g, all, &unknown);
    if (st == MXK_OK) {
        for (uint32_t i = 0; arg_shapes && i < g->num_args; i++)
            arg_shapes[i] = all[g->entry_ptr[g->arg_nodes[i]]];
        for (uint32_t i = 0; out_shapes && i < g->num_outputs; i++)
            out_shapes[i] = all[g->outputs[i]];
        for (uint32_t i = 0; aux_shapes && i < g->num_aux; i++)
            aux_shapes[i] = all[g->entry_ptr[g->aux_nodes[i]]];
        if (complete)
            *complete = unknown == 0;
    }
    free(all);
    mxki_igraph_free(g);
    return st;
}

/** Public type inference by argument names (mxk.h; MXNet MXSymbolInferType). */
mxk_status mxk_symbol_infer_type(const mxk_symbol *sym, uint32_t num_known,
                                 const char *const *names, const int32_t *types, int32_t *arg_types,
                                 int32_t *out_types, int32_t *aux_types, int32_t *complete) {
    if (sym == NULL || (num_known > 0 && (names == NULL || types == NULL)))
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "InferType: symbol, names or types is NULL");
    mxk_igraph *g = NULL;
    mxk_status st = mxki_igraph_build(sym, &g);
    if (st != MXK_OK)
        return st;
    int32_t *all = malloc((g->num_entries + 1) * sizeof *all);
    if (all == NULL) {
        mxki_igraph_free(g);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "InferType: out of memory");
    }
    for (uint32_t e = 0; e < g->num_entries; e++)
        all[e] = -1;
    for (uint32_t i = 0; i < num_known && st == MXK_OK; i++) {
        uint32_t nid = 0;
        st = find_input(g, names[i], "InferType", &nid);
        if (st != MXK_OK)
            break;
        if (types[i] >= 0 && mxk_dtype_size(types[i]) == 0) {
            st = mxk_set_error(MXK_ERR_TYPE, "InferType: '%s' has unknown dtype code %d", names[i],
                               (int)types[i]);
            break;
        }
        all[g->entry_ptr[nid]] = types[i] < 0 ? -1 : types[i];
    }
    uint32_t unknown = 0;
    if (st == MXK_OK)
        st = mxki_igraph_infer_type(g, all, &unknown);
    if (st == MXK_OK) {
        for (uint32_t i = 0; arg_types && i < g->num_args; i++)
            arg_types[i] = all[g->entry_ptr[g->arg_nodes[i]]];
        for (uint32_t i = 0; out_types && i < g->num_outputs; i++)
            out_types[i] = all[g->outputs[i]];
        for (uint32_t i = 0; aux_types && i < g->num_aux; i++)
            aux_types[i] = all[g->entry_ptr[g->aux_nodes[i]]];
        if (complete)
            *complete = unknown == 0;
    }
    free(all);
    mxki_igraph_free(g);
    return st;
}
