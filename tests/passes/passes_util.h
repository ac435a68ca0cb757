/*
 * Helpers shared by the graph-pass tests and bench_plan: library set-up (cpu-blas
 * from the build tree's config dir, the passes-test plugin by path), symbol
 * construction through the public API, the pass pipeline (indexed graph, shapes
 * and types from named input shapes, gradient plan, memory plan), the networks the
 * tests use (MLP, LeNet-shaped, sigmoid chain) and an independent checker of a
 * memory plan (lifetimes never overlap on a block, blocks only pass between steps
 * ordered by the dependency graph, block sizes cover their entries).
 *
 * Everything is static: each test program includes this header once.
 */
#ifndef MXK_PASSES_UTIL_H
#define MXK_PASSES_UTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "mxk.h"
#include "testing_attrs.h"

/** Helpers are static and not every program uses all of them. */
#define PU_HELPER static __attribute__((unused))

#ifndef PT_PLUGIN_PATH
#error "PT_PLUGIN_PATH must name the passes-test plugin"
#endif

/**
 * Initialises mxk with the build tree's config dir (cpu-blas) and loads the
 * passes-test plugin. Returns 0 on success, printing the error otherwise.
 */
PU_HELPER int pu_init(const char *confdir) {
    mxk_init_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.config_dir = confdir;
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return -1;
    }
    if (mxk_load_plugin(PT_PLUGIN_PATH, NULL) != MXK_OK) {
        fprintf(stderr, "load %s: %s\n", PT_PLUGIN_PATH, mxk_get_last_error());
        return -1;
    }
    return 0;
}

/** A variable symbol (NULL on error, printed). */
PU_HELPER mxk_symbol *pu_var(const char *name) {
    mxk_symbol *s = NULL;
    if (mxk_symbol_variable(name, &s) != MXK_OK)
        fprintf(stderr, "variable %s: %s\n", name, mxk_get_last_error());
    return s;
}

/**
 * Applies operator `op` named `name` with attributes "k=v;k=v" (NULL: none) to
 * `n` positional inputs (the rest become variables "<name>_<arg>"). The inputs are
 * not freed. NULL on error (printed).
 */
PU_HELPER mxk_symbol *pu_op(const char *op, const char *name, const char *attrs, int n, ...) {
    const char *keys[16], *vals[16];
    char buf[512];
    int na = mxk_t_parse_attrs(attrs, buf, sizeof buf, keys, vals, 16);
    if (na < 0) {
        fprintf(stderr, "pu_op %s: malformed attributes '%s'\n", op, attrs);
        return NULL;
    }
    mxk_symbol *in[16];
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n && i < 16; i++)
        in[i] = va_arg(ap, mxk_symbol *);
    va_end(ap);
    mxk_symbol *s = NULL;
    if (mxk_symbol_create(op, name, (uint32_t)na, keys, vals, (uint32_t)n, NULL, in, &s) != MXK_OK)
        fprintf(stderr, "create %s %s: %s\n", op, name ? name : "", mxk_get_last_error());
    return s;
}

/** Frees up to 16 symbols (NULL-terminated). */
PU_HELPER void pu_free(mxk_symbol *a, ...) {
    va_list ap;
    va_start(ap, a);
    for (mxk_symbol *s = a; s != NULL; s = va_arg(ap, mxk_symbol *))
        mxk_symbol_free(s);
    va_end(ap);
}

/** Everything the passes produce for one symbol. */
typedef struct pu_plans {
    mxk_igraph *g;
    mxk_shape *shapes; /**< forward entries */
    int32_t *types;
    mxk_grad_plan *p;
    mxk_shape *full_shapes;
    int32_t *full_types;
    uint8_t *external;
    mxk_mem_plan *m;
} pu_plans;

/** Frees plans. */
PU_HELPER void pu_plans_free(pu_plans *pl) {
    mxki_mem_plan_free(pl->m);
    mxki_grad_plan_free(pl->p);
    mxki_igraph_free(pl->g);
    free(pl->shapes);
    free(pl->types);
    free(pl->full_shapes);
    free(pl->full_types);
    free(pl->external);
    memset(pl, 0, sizeof *pl);
}

/** Argument index of the variable named `name`, or -1. */
PU_HELPER int pu_arg(const mxk_igraph *g, const char *name) {
    for (uint32_t a = 0; a < g->num_args; a++)
        if (strcmp(g->nodes[g->arg_nodes[a]]->name, name) == 0)
            return (int)a;
    return -1;
}

/** Node id of the node named `name`, or -1. */
PU_HELPER int pu_node(const mxk_igraph *g, const char *name) {
    for (uint32_t i = 0; i < g->num_nodes; i++)
        if (strcmp(g->nodes[i]->name, name) == 0)
            return (int)i;
    return -1;
}

/** Entry id of output `index` of the node named `name` (UINT32_MAX when absent). */
PU_HELPER uint32_t pu_entry(const mxk_igraph *g, const char *name, uint32_t index) {
    int n = pu_node(g, name);
    return n < 0 ? UINT32_MAX : mxk_igraph_entry(g, (uint32_t)n, index);
}

/** Gradient entry of output `index` of node `name` (UINT32_MAX when none). */
PU_HELPER uint32_t pu_grad(const pu_plans *pl, const char *name, uint32_t index) {
    uint32_t e = pu_entry(pl->g, name, index);
    return e == UINT32_MAX ? e : pl->p->grad_of[e];
}

/** Step index of the forward (backward = 0) or backward step of node `name`, or -1. */
PU_HELPER int pu_step(const pu_plans *pl, const char *name, uint32_t backward) {
    int n = pu_node(pl->g, name);
    for (uint32_t s = 0; n >= 0 && s < pl->p->num_steps; s++)
        if (pl->p->steps[s].node == (uint32_t)n && pl->p->steps[s].backward == backward)
            return (int)s;
    return -1;
}

/**
 * Runs the passes on `sym`: shapes from the "name=d0,d1,.." pairs in `shapes`
 * ("data=64,784;label=64": semicolon-separated, dims comma-separated; a name starting
 * with '?' is skipped when the graph has no such argument), float32 types,
 * requests `grad` ("write", "add" or "null") for every argument except those in
 * `no_grad` (comma-separated names, null), then the memory plan with the standard
 * external entries. Returns 0 on success (errors printed).
 */
PU_HELPER int pu_plan(const mxk_symbol *sym, const char *shapes, const char *grad,
                      const char *no_grad, pu_plans *pl) {
    memset(pl, 0, sizeof *pl);
    if (mxki_igraph_build(sym, &pl->g) != MXK_OK) {
        fprintf(stderr, "igraph: %s\n", mxk_get_last_error());
        return -1;
    }
    mxk_igraph *g = pl->g;
    pl->shapes = calloc(g->num_entries + 1, sizeof *pl->shapes);
    pl->types = malloc((g->num_entries + 1) * sizeof *pl->types);
    for (uint32_t e = 0; e < g->num_entries; e++)
        pl->types[e] = -1;
    for (uint32_t a = 0; a < g->num_args; a++) /* simple_bind's default: float32 */
        pl->types[g->entry_ptr[g->arg_nodes[a]]] = MXK_FLOAT32;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", shapes ? shapes : "");
    for (char *save = NULL, *item = strtok_r(buf, ";", &save); item;
         item = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(item, '=');
        if (eq == NULL)
            continue;
        *eq = '\0';
        int optional = item[0] == '?';
        int a = pu_arg(g, item + optional);
        if (a < 0 && optional)
            continue;
        if (a < 0) {
            fprintf(stderr, "no argument %s\n", item);
            return -1;
        }
        mxk_shape s;
        memset(&s, 0, sizeof s);
        for (char *save2 = NULL, *d = strtok_r(eq + 1, ",", &save2); d && s.ndim < MXK_MAX_NDIM;
             d = strtok_r(NULL, ",", &save2))
            s.dims[s.ndim++] = strtoll(d, NULL, 10);
        pl->shapes[g->entry_ptr[g->arg_nodes[a]]] = s;
    }
    uint32_t unknown = 0;
    if (mxki_igraph_infer_shape(g, pl->shapes, &unknown) != MXK_OK || unknown != 0) {
        fprintf(stderr, "infer_shape (%u unknown): %s\n", unknown, mxk_get_last_error());
        return -1;
    }
    if (mxki_igraph_infer_type(g, pl->types, &unknown) != MXK_OK || unknown != 0) {
        fprintf(stderr, "infer_type: %s\n", mxk_get_last_error());
        return -1;
    }
    mxk_op_req *reqs = malloc((g->num_args + 1) * sizeof *reqs);
    mxk_op_req r = strcmp(grad, "write") == 0 ? MXK_REQ_WRITE
                   : strcmp(grad, "add") == 0 ? MXK_REQ_ADD
                                              : MXK_REQ_NULL;
    for (uint32_t a = 0; a < g->num_args; a++) {
        reqs[a] = r;
        const char *nm = g->nodes[g->arg_nodes[a]]->name;
        if (no_grad != NULL) {
            snprintf(buf, sizeof buf, ",%s,", no_grad);
            char key[256];
            snprintf(key, sizeof key, ",%s,", nm);
            if (strstr(buf, key) != NULL)
                reqs[a] = MXK_REQ_NULL;
        }
    }
    mxk_status st = mxki_grad_plan_build(g, reqs, &pl->p);
    free(reqs);
    if (st != MXK_OK) {
        fprintf(stderr, "grad plan: %s\n", mxk_get_last_error());
        return -1;
    }
    uint32_t F = pl->p->num_full_entries;
    pl->full_shapes = malloc((F + 1) * sizeof *pl->full_shapes);
    pl->full_types = malloc((F + 1) * sizeof *pl->full_types);
    pl->external = malloc(F + 1);
    mxki_grad_plan_expand(pl->p, pl->shapes, pl->types, pl->full_shapes, pl->full_types);
    mxki_grad_plan_mark_external(g, pl->p, pl->external);
    if (mxki_mem_plan_build(g, pl->p, pl->full_shapes, pl->full_types, pl->external, &pl->m) !=
        MXK_OK) {
        fprintf(stderr, "mem plan: %s\n", mxk_get_last_error());
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------- */
/* Networks                                                                  */
/* ------------------------------------------------------------------------- */

/**
 * note_memory.md's two-layer perceptron (MXNet's architecture docs): data -> fc1(hidden) ->
 * act1(act) -> fc2(classes) -> SoftmaxOutput "out" (label "out_label").
 */
PU_HELPER mxk_symbol *pu_mlp(int hidden, int classes, const char *act) {
    char a1[64], a2[64], a3[64];
    snprintf(a1, sizeof a1, "num_hidden=%d", hidden);
    snprintf(a2, sizeof a2, "act_type=%s", act);
    snprintf(a3, sizeof a3, "num_hidden=%d", classes);
    mxk_symbol *data = pu_var("data");
    mxk_symbol *fc1 = pu_op("FullyConnected", "fc1", a1, 1, data);
    mxk_symbol *act1 = pu_op("Activation", "act1", a2, 1, fc1);
    mxk_symbol *fc2 = pu_op("FullyConnected", "fc2", a3, 1, act1);
    mxk_symbol *out = pu_op("SoftmaxOutput", "out", NULL, 1, fc2);
    pu_free(data, fc1, act1, fc2, NULL);
    return out;
}

/**
 * MXNet's MNIST MLP (example/image-classification/symbols/mlp.py, MXNet.jl's
 * mnist-mlp): data -> fc1(128) relu -> fc2(64) relu -> fc3(10) -> SoftmaxOutput "out".
 */
PU_HELPER mxk_symbol *pu_mlp3(void) {
    mxk_symbol *data = pu_var("data");
    mxk_symbol *fc1 = pu_op("FullyConnected", "fc1", "num_hidden=128", 1, data);
    mxk_symbol *act1 = pu_op("Activation", "act1", "act_type=relu", 1, fc1);
    mxk_symbol *fc2 = pu_op("FullyConnected", "fc2", "num_hidden=64", 1, act1);
    mxk_symbol *act2 = pu_op("Activation", "act2", "act_type=relu", 1, fc2);
    mxk_symbol *fc3 = pu_op("FullyConnected", "fc3", "num_hidden=10", 1, act2);
    mxk_symbol *out = pu_op("SoftmaxOutput", "out", NULL, 1, fc3);
    pu_free(data, fc1, act1, fc2, act2, fc3, NULL);
    return out;
}

/** Symbols built in order and freed together (a tiny arena for network builders). */
typedef struct pu_arena {
    mxk_symbol *s[64];
    int n;
} pu_arena;

/** Keeps `s` for pu_arena_free and returns it. */
PU_HELPER mxk_symbol *pu_keep(pu_arena *a, mxk_symbol *s) {
    if (a->n < 64)
        a->s[a->n++] = s;
    return s;
}

/** Frees every kept symbol. */
PU_HELPER void pu_arena_free(pu_arena *a) {
    for (int i = 0; i < a->n; i++)
        mxk_symbol_free(a->s[i]);
    a->n = 0;
}

/**
 * A LeNet-shaped network (the MXNet / MXNet.jl LeNet example) with the test
 * operators: conv1(20,5x5) tanh pool1(2x2,s2) conv2(50,5x5) tanh pool2 flatten
 * fc1(500) tanh fc2(10) SoftmaxOutput "out".
 */
PU_HELPER mxk_symbol *pu_lenet(void) {
    pu_arena a = {0};
    mxk_symbol *x = pu_keep(&a, pu_var("data"));
    x = pu_keep(&a, pu_op("TestConv", "conv1", "num_filter=20;kernel=(5,5)", 1, x));
    x = pu_keep(&a, pu_op("Activation", "tanh1", "act_type=tanh", 1, x));
    x = pu_keep(&a, pu_op("TestPool", "pool1", "kernel=(2,2);stride=(2,2)", 1, x));
    x = pu_keep(&a, pu_op("TestConv", "conv2", "num_filter=50;kernel=(5,5)", 1, x));
    x = pu_keep(&a, pu_op("Activation", "tanh2", "act_type=tanh", 1, x));
    x = pu_keep(&a, pu_op("TestPool", "pool2", "kernel=(2,2);stride=(2,2)", 1, x));
    x = pu_keep(&a, pu_op("Flatten", "flatten", NULL, 1, x));
    x = pu_keep(&a, pu_op("FullyConnected", "fc1", "num_hidden=500", 1, x));
    x = pu_keep(&a, pu_op("Activation", "tanh3", "act_type=tanh", 1, x));
    x = pu_keep(&a, pu_op("FullyConnected", "fc2", "num_hidden=10", 1, x));
    mxk_symbol *out = pu_op("SoftmaxOutput", "out", NULL, 1, x);
    pu_arena_free(&a);
    return out;
}

/** A chain of n sigmoids over data: "s0" .. "s<n-1>". */
PU_HELPER mxk_symbol *pu_sigmoid_chain(int n) {
    mxk_symbol *x = pu_var("data");
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "s%d", i);
        mxk_symbol *y = pu_op("Activation", name, "act_type=sigmoid", 1, x);
        mxk_symbol_free(x);
        x = y;
    }
    return x;
}

/* ------------------------------------------------------------------------- */
/* Independent plan checker                                                  */
/* ------------------------------------------------------------------------- */

/** Union-find root. */
PU_HELPER uint32_t pu_root(uint32_t *parent, uint32_t x) {
    while (parent[x] != x)
        x = parent[x] = parent[parent[x]];
    return x;
}

/**
 * Checks a memory plan against its schedule, independently of the planner:
 * 1. every step writes only entries with storage (pool or external), and reads
 *    entries that have storage;
 * 2. each block is at least as large as every entry on it;
 * 3. entries on one block form "values" (an entry and the ones that took it in place
 *    as an identity, which hold the same data) whose uses never overlap: for two
 *    values on one block, every step that touched the earlier one is an ancestor
 *    (in the dependency graph: writer -> reader, writer -> later writer) of the step
 *    that first writes the later one, or is that very step taking it in place.
 * Prints the first violation; returns the number found.
 */
PU_HELPER int pu_check_plan(const pu_plans *pl) {
    const mxk_grad_plan *p = pl->p;
    const mxk_mem_plan *m = pl->m;
    uint32_t S = p->num_steps, F = p->num_full_entries;
    int bad = 0;
    /* ancestors by a simple closure */
    uint8_t *anc = calloc((size_t)S * S + 1, 1);
    uint32_t *last_writer = malloc((F + 1) * sizeof *last_writer);
    uint32_t *first_write = malloc((F + 1) * sizeof *first_write);
    uint32_t *parent = malloc((F + 1) * sizeof *parent);
    for (uint32_t e = 0; e < F; e++) {
        last_writer[e] = first_write[e] = UINT32_MAX;
        parent[e] = e;
    }
    for (uint32_t s = 0; s < S; s++) {
        const mxk_exec_step *st = &p->steps[s];
        for (int pass = 0; pass < 2; pass++) {
            uint32_t n = pass ? st->num_out : st->num_in;
            const uint32_t *ids = pass ? st->out : st->in;
            for (uint32_t k = 0; k < n; k++) {
                if (ids[k] >= F || last_writer[ids[k]] == UINT32_MAX)
                    continue;
                uint32_t q = last_writer[ids[k]];
                anc[(size_t)s * S + q] = 1;
                for (uint32_t r = 0; r < S; r++)
                    if (anc[(size_t)q * S + r])
                        anc[(size_t)s * S + r] = 1;
            }
        }
        for (uint32_t k = 0; k < st->num_in; k++)
            if (st->in[k] < F && m->storage[st->in[k]] == MXK_STORAGE_NONE && !bad++)
                fprintf(stderr, "check: step %u reads entry %u without storage\n", s, st->in[k]);
        for (uint32_t k = 0; k < st->num_out; k++) {
            uint32_t e = st->out[k];
            if (e >= F)
                continue;
            if (m->storage[e] == MXK_STORAGE_NONE && !bad++)
                fprintf(stderr, "check: step %u writes entry %u without storage\n", s, e);
            if (first_write[e] == UINT32_MAX)
                first_write[e] = s;
            last_writer[e] = s;
        }
    }
    /* identity in-place values */
    for (uint32_t e = 0; e < F; e++) {
        if (!m->inplace[e] || first_write[e] == UINT32_MAX)
            continue;
        const mxk_exec_step *st = &p->steps[first_write[e]];
        const mxk_op_params *op = pl->g->nodes[st->node]->op;
        const mxk_op_def *d = &op->op->def;
        uint32_t (*fn)(const void *, mxk_inplace_pair *, uint32_t) =
            st->backward ? d->backward_inplace : d->forward_inplace;
        mxk_inplace_pair pairs[MXK_MAX_INPLACE];
        uint32_t np = fn ? fn(op->param, pairs, MXK_MAX_INPLACE) : 0;
        int found = 0;
        for (uint32_t i = 0; i < np; i++) {
            uint32_t ii = pairs[i].in_index, oi = pairs[i].out_index;
            if (ii >= st->num_in || oi >= st->num_out || st->out[oi] != e || st->in[ii] >= F ||
                m->storage[st->in[ii]] != m->storage[e])
                continue;
            found = 1;
            if (pairs[i].identity)
                parent[pu_root(parent, e)] = pu_root(parent, st->in[ii]);
        }
        if (!found && !bad++)
            fprintf(stderr, "check: entry %u is in place but matches no hint\n", e);
    }
    /* block sizes */
    for (uint32_t e = 0; e < F; e++) {
        int32_t b = m->storage[e];
        if (b < 0)
            continue;
        uint64_t bytes = 0;
        size_t w = mxk_dtype_size(pl->full_types[e]);
        uint64_t n = 1;
        for (int32_t d = 0; d < pl->full_shapes[e].ndim; d++)
            n *= (uint64_t)pl->full_shapes[e].dims[d];
        bytes = n * (w ? w : 4);
        if ((uint32_t)b >= m->num_blocks || m->block_bytes[b] < bytes) {
            if (!bad++)
                fprintf(stderr, "check: entry %u (%llu bytes) on block %d of %llu bytes\n", e,
                        (unsigned long long)bytes, b,
                        (unsigned long long)((uint32_t)b < m->num_blocks ? m->block_bytes[b] : 0));
        }
    }
    /* values on one block: touches of the earlier are ancestors of the later's first write */
    for (uint32_t e1 = 0; e1 < F; e1++) {
        for (uint32_t e2 = 0; e2 < F; e2++) {
            if (e1 == e2 || m->storage[e1] < 0 || m->storage[e1] != m->storage[e2])
                continue;
            if (pu_root(parent, e1) == pu_root(parent, e2))
                continue;
            uint32_t w1 = first_write[e1], w2 = first_write[e2];
            if (w2 == UINT32_MAX || (w1 != UINT32_MAX && w1 > w2) || (w1 == w2 && e1 > e2))
                continue; /* check each pair once, earlier value first */
            /* every touch of e1's value (all entries of its class) */
            for (uint32_t s = 0; s < S; s++) {
                const mxk_exec_step *st = &p->steps[s];
                int touches = 0, read_here = 0;
                for (uint32_t k = 0; k < st->num_in; k++)
                    if (st->in[k] < F && pu_root(parent, st->in[k]) == pu_root(parent, e1)) {
                        touches = 1;
                        read_here = 1;
                    }
                for (uint32_t k = 0; k < st->num_out; k++)
                    if (st->out[k] < F && pu_root(parent, st->out[k]) == pu_root(parent, e1))
                        touches = 1;
                if (!touches)
                    continue;
                if (s == w2 && read_here && m->inplace[e2])
                    continue; /* e2 takes e1's block in place at its last read */
                if (s != w2 && anc[(size_t)w2 * S + s])
                    continue;
                if (!bad++)
                    fprintf(stderr,
                            "check: entries %u and %u share block %d but step %u (touching %u) "
                            "is not an ancestor of step %u (writing %u)\n",
                            e1, e2, m->storage[e1], s, e1, w2, e2);
            }
            /* graph outputs stay alive to the end */
            for (uint32_t h = 0; h < pl->g->num_outputs; h++)
                if (pu_root(parent, pl->g->outputs[h]) == pu_root(parent, e1) && !bad++)
                    fprintf(stderr, "check: graph output entry %u shares block %d with later %u\n",
                            e1, m->storage[e1], e2);
        }
    }
    free(anc);
    free(last_writer);
    free(first_write);
    free(parent);
    return bad;
}

#endif /* MXK_PASSES_UTIL_H */
