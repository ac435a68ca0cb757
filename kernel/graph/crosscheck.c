/*
 * The cross-check (mxk_crosscheck_executor, mxk.h): every operator node of a bound
 * graph run with the executor's kernel and with a reference backend's kernel on
 * identical inputs, forward and backward, and the first node whose results differ
 * beyond a tolerance reported.
 *
 * Semantics: new in mxk. The nearest upstream tools compare whole runs, not nodes:
 * MXNet's tests/python/unittest/common.py check_consistency (one symbol on several
 * contexts, outputs and gradients compared by tolerance) and the MKLDNN tests of
 * tests/python/mkl (MXNET_MKLDNN_ENABLED=0 against 1). Here the values flowing into
 * each node come from the kernels under test, so a divergence is pinned on the first
 * node that produces it instead of being blurred by everything downstream.
 *
 * Threading: synchronous; one cross-check at a time per process (a lock serialises
 * the temporary per-operator backend override that makes the reference instance).
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "executor_internal.h"
#include "registry.h"
#include "symbol_internal.h"

/** Default tolerances when neither the options nor the kernels give one. */
#define XC_DEFAULT_RTOL 1e-4
#define XC_DEFAULT_ATOL 1e-5

/** Serialises the temporary mxk_set_op_backend of xc_reference_instance. */
static pthread_mutex_t xc_lock = PTHREAD_MUTEX_INITIALIZER;

/**
 * One side of a node's check: an instance and its arrays (inputs copied from the
 * graph's values, outputs, aux copies, input gradients). Arrays are owned (freed by
 * xc_side_free); the instance is owned only when `own_inst`.
 */
typedef struct xc_side {
    mxk_op_instance *inst;
    int own_inst;
    mxk_ndarray **in, **out, **aux, **grad;
} xc_side;

/** The element-wise comparison of two arrays (see mxk_crosscheck_report). */
typedef struct xc_cmp {
    double max_abs, max_rel, worst_excess;
    uint64_t worst;
    double value, ref_value;
    int diverged;
} xc_cmp;

/** splitmix64: the next value of a 64-bit random stream (public-domain generator). */
static uint64_t xc_next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/** A new array of src's shape, dtype and device (contents undefined). */
static mxk_status xc_like(mxk_ndarray *src, int32_t dtype, mxk_ndarray **out) {
    mxk_shape s = mxk_ndarray_shape(src);
    return mxk_ndarray_create(&s, dtype, mxk_ndarray_context(src), out);
}

/** A new array holding a copy of src (pushed; same shape, dtype, device). */
static mxk_status xc_copy(mxk_ndarray *src, mxk_ndarray **out) {
    mxk_status rc = xc_like(src, mxk_ndarray_dtype(src), out);
    if (rc == MXK_OK && (rc = mxk_ndarray_copy_to(src, *out)) != MXK_OK) {
        mxk_ndarray_free(*out);
        *out = NULL;
    }
    return rc;
}

/**
 * The array's values as a malloc'd float64 host buffer of mxk_ndarray_size
 * elements (converted from its dtype; waits for its writes and reports their
 * errors). The caller frees *vals. MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status xc_values(mxk_ndarray *arr, double **vals) {
    uint64_t n = mxk_ndarray_size(arr);
    mxk_ndarray *f64 = NULL;
    *vals = malloc((n ? n : 1) * sizeof(double));
    if (*vals == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "crosscheck: out of memory");
    mxk_status rc = xc_like(arr, MXK_FLOAT64, &f64);
    if (rc == MXK_OK)
        rc = mxk_ndarray_copy_to(arr, f64);
    if (rc == MXK_OK)
        rc = mxk_ndarray_copy_to_host(f64, *vals, n * sizeof(double));
    mxk_ndarray_free(f64);
    if (rc != MXK_OK) {
        free(*vals);
        *vals = NULL;
    }
    return rc;
}

/** Fills arr with uniform values in [-1, 1) from the stream *s (converted to its dtype). */
static mxk_status xc_fill_random(mxk_ndarray *arr, uint64_t *s) {
    uint64_t n = mxk_ndarray_size(arr);
    double *v = malloc((n ? n : 1) * sizeof(double));
    if (v == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "crosscheck: out of memory");
    for (uint64_t i = 0; i < n; i++)
        v[i] = (double)(xc_next(s) >> 11) * 0x1.0p-52 - 1.0;
    mxk_ndarray *f64 = NULL;
    mxk_status rc = xc_like(arr, MXK_FLOAT64, &f64);
    if (rc == MXK_OK)
        rc = mxk_ndarray_copy_from_host(f64, v, n * sizeof(double));
    if (rc == MXK_OK)
        rc = mxk_ndarray_copy_to(f64, arr);
    if (rc == MXK_OK)
        rc = mxk_ndarray_wait_to_read(arr);
    mxk_ndarray_free(f64);
    free(v);
    return rc;
}

/**
 * Compares tested array a with reference r element by element: |a - r| <= atol +
 * rtol * |r| agrees, NaN agrees only with NaN. Fills *c (worst element: the largest
 * excess over the bound, else the largest error). Errors: those of reading the
 * arrays (a failed kernel's error).
 */
static mxk_status xc_compare(mxk_ndarray *a, mxk_ndarray *r, double rtol, double atol, xc_cmp *c) {
    double *va = NULL, *vr = NULL;
    mxk_status rc = xc_values(a, &va);
    if (rc == MXK_OK)
        rc = xc_values(r, &vr);
    memset(c, 0, sizeof *c);
    c->worst_excess = -INFINITY;
    uint64_t n = rc == MXK_OK ? mxk_ndarray_size(a) : 0;
    for (uint64_t i = 0; i < n; i++) {
        double x = va[i], y = vr[i];
        double err = (isnan(x) && isnan(y)) || x == y ? 0.0 : fabs(x - y);
        if (isnan(err))
            err = INFINITY;
        double rel = err == 0.0 ? 0.0 : err / fabs(y);
        double excess = err - (atol + rtol * fabs(y));
        if (err > c->max_abs)
            c->max_abs = err;
        if (rel > c->max_rel || isnan(rel))
            c->max_rel = isnan(rel) ? INFINITY : rel;
        if (excess > c->worst_excess) {
            c->worst_excess = excess;
            c->worst = i;
            c->value = x;
            c->ref_value = y;
        }
        if (excess > 0.0)
            c->diverged = 1;
    }
    free(va);
    free(vr);
    return rc;
}

/** Frees a side's arrays (n of each list) and, when owned, its instance. */
static void xc_side_free(xc_side *s) {
    uint32_t ni = 0, no = 0, na = 0;
    if (s->inst)
        mxk_op_instance_counts(s->inst, &ni, &no, NULL, &na);
    mxk_ndarray **lists[4] = {s->in, s->out, s->aux, s->grad};
    uint32_t counts[4] = {ni, no, na, ni};
    for (int l = 0; l < 4; l++) {
        for (uint32_t i = 0; lists[l] && i < counts[l]; i++)
            mxk_ndarray_free(lists[l][i]);
        free(lists[l]);
    }
    if (s->own_inst)
        mxk_op_instance_free(s->inst);
    memset(s, 0, sizeof *s);
}

/** 1 when the instance's operator writes input i (mutate_inputs, over args then aux). */
static int xc_mutated(const mxk_op_instance *inst, uint32_t i) {
    for (uint32_t k = 0; k < inst->num_mutate; k++)
        if (inst->mutate[k] == i)
            return 1;
    return 0;
}

/**
 * Fills side s (whose inst is set) with the node's input values `vals` (args then
 * aux states, as the node's inputs) and fresh outputs and gradients. Aux states and
 * inputs the operator writes are copies; the other inputs are copies too unless
 * `view_inputs`, then views of the values themselves (the same memory and write
 * version, so a kernel's cache keyed by mxk_tensor.version sees what the executor
 * gives it; copies at a recycled address could repeat an old version).
 */
static mxk_status xc_side_init(xc_side *s, mxk_ndarray *const *vals, int view_inputs) {
    uint32_t ni, no, na;
    mxk_op_instance_counts(s->inst, &ni, &no, NULL, &na);
    s->in = calloc(ni + 1, sizeof *s->in);
    s->out = calloc(no + 1, sizeof *s->out);
    s->aux = calloc(na + 1, sizeof *s->aux);
    s->grad = calloc(ni + 1, sizeof *s->grad);
    if (!s->in || !s->out || !s->aux || !s->grad)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "crosscheck: out of memory");
    mxk_status rc = MXK_OK;
    for (uint32_t i = 0; i < ni && rc == MXK_OK; i++) {
        mxk_shape shape = mxk_ndarray_shape(vals[i]);
        rc = view_inputs && !xc_mutated(s->inst, i)
                 ? mxk_ndarray_reshape(vals[i], &shape, &s->in[i])
                 : xc_copy(vals[i], &s->in[i]);
        if (rc == MXK_OK)
            rc = xc_like(vals[i], mxk_ndarray_dtype(vals[i]), &s->grad[i]);
    }
    for (uint32_t i = 0; i < na && rc == MXK_OK; i++)
        rc = xc_copy(vals[ni + i], &s->aux[i]);
    for (uint32_t i = 0; i < no && rc == MXK_OK; i++) {
        mxk_shape shape;
        int32_t dtype;
        mxk_op_instance_shape(s->inst, 1, i, &shape, &dtype);
        rc = mxk_ndarray_create(&shape, dtype, s->inst->ctx, &s->out[i]);
    }
    return rc;
}

/**
 * An instance of node n's operator on the reference backend: the node's validated
 * attributes, the tested instance's shapes and types, created while the operator's
 * override (mxk_set_op_backend) names `ref`; the override in force before (from the
 * API or mxk.conf, mxk_get_op_backend) is set back afterwards, none cleared. Its
 * backend is another one when `ref` has no kernel or declines.
 */
static mxk_status xc_reference_instance(const mxk_gnode *n, const mxk_op_instance *tested,
                                        const char *ref, mxk_op_instance **out) {
    const char *op = n->op->op->def.name;
    char before[128];
    mxk_op_params *p;
    mxk_status rc = mxki_op_params_create(op, n->op->attrs, &p);
    if (rc != MXK_OK)
        return rc;
    pthread_mutex_lock(&xc_lock);
    rc = mxk_get_op_backend(op, before, sizeof before);
    if (rc == MXK_OK)
        rc = mxk_set_op_backend(op, ref);
    if (rc == MXK_OK) {
        rc = mxki_op_instance_from_params(p, tested->ctx, tested->in_shapes, tested->in_types,
                                          tested->out_shapes, out);
        mxk_set_op_backend(op, before[0] ? before : NULL);
    } else {
        mxki_op_params_free(p);
    }
    pthread_mutex_unlock(&xc_lock);
    return rc;
}

/** The tolerance: the options' when non-zero, else the larger declared one, else default. */
static void xc_tolerance(const mxk_crosscheck_options *o, const mxk_op_instance *a,
                         const mxk_op_instance *b, double *rtol, double *atol) {
    double r = fmax(a->kernel->def.crosscheck_rtol, b->kernel->def.crosscheck_rtol);
    double t = fmax(a->kernel->def.crosscheck_atol, b->kernel->def.crosscheck_atol);
    *rtol = o->rtol > 0 ? o->rtol : r > 0 ? r : XC_DEFAULT_RTOL;
    *atol = o->atol > 0 ? o->atol : t > 0 ? t : XC_DEFAULT_ATOL;
}

/** The check's context: options, report and the node under check. */
typedef struct xc_run {
    const mxk_crosscheck_options *opt;
    mxk_crosscheck_report *rep;
    const mxk_gnode *node;
    double rtol, atol;
} xc_run;

/**
 * Compares tested array a with reference r; on divergence fills the report (result
 * named "<what> '<slot>'") and sets *stop.
 */
static mxk_status xc_check(xc_run *x, mxk_ndarray *a, mxk_ndarray *r, const char *what,
                           const char *slot, int *stop) {
    xc_cmp c;
    mxk_status rc = xc_compare(a, r, x->rtol, x->atol, &c);
    if (rc != MXK_OK || !c.diverged)
        return rc;
    mxk_crosscheck_report *p = x->rep;
    p->diverged = 1;
    snprintf(p->result, sizeof p->result, "%s '%s'", what, slot);
    p->max_abs_err = c.max_abs;
    p->max_rel_err = c.max_rel;
    p->worst_index = c.worst;
    p->value = c.value;
    p->reference_value = c.ref_value;
    *stop = 1;
    return MXK_OK;
}

/** Runs forward on a side (random operators seeded from the options and node id). */
static mxk_status xc_forward(const xc_run *x, xc_side *s, uint32_t node_id) {
    mxk_status rc = mxk_wait_all();
    if (rc == MXK_OK)
        rc = mxk_random_seed(x->opt->seed * 1000003u + node_id);
    if (rc == MXK_OK)
        rc = mxk_op_instance_forward(s->inst, x->opt->is_train, s->in, s->out, NULL, s->aux);
    if (rc == MXK_OK)
        rc = mxk_wait_all();
    return rc;
}

/**
 * Runs backward on a side with output gradients og (every input gradient WRITE),
 * passing only what the operator's backward dependency declares (the rest NULL, as
 * the executor does), so a kernel reading an undeclared tensor fails here too.
 */
static mxk_status xc_backward(xc_side *s, mxk_ndarray *const *og) {
    const mxk_op_instance *t = s->inst;
    mxk_ndarray **arg = calloc(t->num_visible + t->num_in + t->num_out + 1, sizeof *arg);
    if (arg == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "crosscheck: out of memory");
    mxk_ndarray **g = arg, **in = g + t->num_visible, **out = in + t->num_in;
    for (uint32_t i = 0; i < t->num_visible; i++)
        g[i] = t->need_out_grad[i] ? og[i] : NULL;
    for (uint32_t i = 0; i < t->num_in; i++)
        in[i] = t->need_in_data[i] ? s->in[i] : NULL;
    for (uint32_t i = 0; i < t->num_out; i++)
        out[i] = t->need_out_data[i] ? s->out[i] : NULL;
    mxk_status rc = mxk_op_instance_backward(s->inst, g, in, out, s->grad, NULL, s->aux);
    if (rc == MXK_OK)
        rc = mxk_wait_all();
    free(arg);
    return rc;
}

/**
 * Backward of both sides with one random output gradient per visible output, then
 * the input gradients compared. A tested kernel without backward: nothing checked.
 */
static mxk_status xc_backward_both(xc_run *x, xc_side *a, xc_side *b, uint32_t node_id, int *stop) {
    uint32_t ni, nv;
    mxk_op_instance_counts(a->inst, &ni, NULL, &nv, NULL);
    if (a->inst->kernel->def.backward == NULL || b->inst->kernel->def.backward == NULL)
        return MXK_OK;
    mxk_ndarray **og = calloc(nv + 1, sizeof *og);
    if (og == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "crosscheck: out of memory");
    uint64_t stream = x->opt->seed ^ ((uint64_t)node_id << 32);
    mxk_status rc = MXK_OK;
    for (uint32_t i = 0; i < nv && rc == MXK_OK; i++) {
        rc = xc_like(a->out[i], mxk_ndarray_dtype(a->out[i]), &og[i]);
        if (rc == MXK_OK)
            rc = xc_fill_random(og[i], &stream);
    }
    if (rc == MXK_OK)
        rc = xc_backward(a, og);
    if (rc == MXK_OK)
        rc = xc_backward(b, og);
    for (uint32_t i = 0; i < ni && rc == MXK_OK && !*stop; i++)
        rc = xc_check(x, a->grad[i], b->grad[i], "gradient of", mxk_op_instance_name(a->inst, 0, i),
                      stop);
    for (uint32_t i = 0; i < nv; i++)
        mxk_ndarray_free(og[i]);
    free(og);
    return rc;
}

/**
 * Checks operator node `id` of ex's graph whose input values are `vals` (args then
 * aux, owned by the caller). On success the tested side's outputs are moved into
 * outs (num outputs of the node; the caller owns them) for the nodes downstream.
 */
static mxk_status xc_node(xc_run *x, mxk_executor *ex, uint32_t id, mxk_ndarray *const *vals,
                          mxk_ndarray **outs, int *stop) {
    const mxk_gnode *n = ex->g->nodes[id];
    xc_side a = {.inst = ex->inst[id]}, b = {0};
    mxk_status rc = xc_reference_instance(n, a.inst, x->opt->reference, &b.inst);
    b.own_inst = 1;
    int skip = rc == MXK_OK && strcmp(mxk_op_instance_backend(b.inst), x->opt->reference) != 0;
    if (rc == MXK_OK)
        rc = xc_side_init(&a, vals, 1);
    if (rc == MXK_OK && !skip)
        rc = xc_side_init(&b, vals, 0);
    if (rc == MXK_OK)
        rc = xc_forward(x, &a, id);
    if (rc == MXK_OK && !skip) {
        xc_tolerance(x->opt, a.inst, b.inst, &x->rtol, &x->atol);
        rc = xc_forward(x, &b, id);
        uint32_t nv, na;
        mxk_op_instance_counts(a.inst, NULL, NULL, &nv, &na);
        for (uint32_t i = 0; i < nv && rc == MXK_OK && !*stop; i++)
            rc =
                xc_check(x, a.out[i], b.out[i], "output", mxk_op_instance_name(a.inst, 1, i), stop);
        for (uint32_t i = 0; i < na && rc == MXK_OK && !*stop; i++)
            rc = xc_check(x, a.aux[i], b.aux[i], "aux state", mxk_op_instance_name(a.inst, 2, i),
                          stop);
        if (rc == MXK_OK && !*stop && x->opt->is_train && x->opt->check_backward)
            rc = xc_backward_both(x, &a, &b, id, stop);
    }
    if (rc == MXK_OK) {
        mxk_crosscheck_report *p = x->rep;
        const char *backend = mxk_op_instance_backend(a.inst);
        if (skip) {
            p->nodes_skipped++;
        } else {
            p->nodes_checked++;
            p->nodes_on_reference += strcmp(backend, x->opt->reference) == 0;
        }
        if (*stop) {
            snprintf(p->node, sizeof p->node, "%s", n->name ? n->name : "");
            snprintf(p->op, sizeof p->op, "%s", n->op->op->def.name);
            snprintf(p->backend, sizeof p->backend, "%s", backend);
            snprintf(p->reference, sizeof p->reference, "%s", x->opt->reference);
            p->rtol = x->rtol;
            p->atol = x->atol;
        }
        uint32_t no;
        mxk_op_instance_counts(a.inst, NULL, &no, NULL, NULL);
        memcpy(outs, a.out, no * sizeof *outs);
        memset(a.out, 0, no * sizeof *a.out);
    } else {
        char why[512];
        snprintf(why, sizeof why, "%s", mxk_get_last_error());
        rc = mxk_set_error(rc, "crosscheck: node '%s' (%s): %s", n->name ? n->name : "",
                           n->op->op->def.name, why);
    }
    xc_side_free(&a);
    xc_side_free(&b);
    return rc;
}

/**
 * MXK_ERR_NOT_FOUND "mxk_crosscheck_executor: unknown backend 'X' (registered: a,
 * b)" unless some operator has a kernel of backend `name`.
 */
static mxk_status xc_check_backend(const char *name) {
    enum { MAX_LISTED = 16 };
    const char *seen[MAX_LISTED];
    uint32_t num_seen = 0;
    char list[512] = "";
    size_t pos = 0;
    for (uint32_t i = 0; i < mxk_op_count(); i++) {
        const char *op = mxk_op_name(i);
        for (uint32_t k = 0; k < mxk_op_kernel_count(op); k++) {
            int32_t dev;
            const char *backend, *plugin;
            if (mxk_op_kernel_get(op, k, &dev, &backend, &plugin) != MXK_OK)
                continue;
            if (strcmp(backend, name) == 0)
                return MXK_OK;
            uint32_t j = 0;
            while (j < num_seen && strcmp(seen[j], backend) != 0)
                j++;
            if (j < num_seen || num_seen == MAX_LISTED)
                continue;
            seen[num_seen++] = backend;
            if (pos < sizeof list)
                pos += (size_t)snprintf(list + pos, sizeof list - pos, "%s%s", pos ? ", " : "",
                                        backend);
        }
    }
    return mxk_set_error(MXK_ERR_NOT_FOUND,
                         "mxk_crosscheck_executor: unknown backend '%s' (registered: %s)", name,
                         list);
}

/**
 * One reader of entry e is done: an owned value nothing reads any more is freed
 * (values[e] NULL).
 */
static void xc_release(mxk_ndarray **values, const uint8_t *owned, uint32_t *uses, uint32_t e) {
    if (--uses[e] == 0 && owned[e]) {
        mxk_ndarray_free(values[e]);
        values[e] = NULL;
    }
}

mxk_status mxk_crosscheck_executor(mxk_executor *ex, const mxk_crosscheck_options *options,
                                   mxk_crosscheck_report *report) {
    if (ex == NULL || options == NULL || report == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_crosscheck_executor: executor, options or report is NULL");
    if (options->struct_size < sizeof(mxk_crosscheck_options))
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_crosscheck_executor: options.struct_size is too small");
    if (options->reference == NULL || options->reference[0] == '\0')
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_crosscheck_executor: no reference backend given");
    memset(report, 0, sizeof *report);
    mxk_status rc = xc_check_backend(options->reference);
    if (rc == MXK_OK)
        rc = mxk_wait_all();
    if (rc != MXK_OK)
        return rc;
    const mxk_igraph *g = ex->g;
    /* values[e]: the graph's value of forward entry e (borrowed for variables, owned
     * for operator outputs: freed once uses[e], its remaining readers, drops to 0) */
    mxk_ndarray **values = calloc(g->num_entries + 1, sizeof *values);
    uint8_t *owned = calloc(g->num_entries + 1, 1);
    uint32_t *uses = calloc(g->num_entries + 1, sizeof *uses);
    if (values == NULL || owned == NULL || uses == NULL)
        rc = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "crosscheck: out of memory");
    for (uint32_t i = 0; i < g->num_args && rc == MXK_OK; i++)
        values[mxk_igraph_entry(g, g->arg_nodes[i], 0)] = ex->args[i];
    for (uint32_t i = 0; i < g->num_aux && rc == MXK_OK; i++)
        values[mxk_igraph_entry(g, g->aux_nodes[i], 0)] = ex->aux[i];
    for (uint32_t k = 0; rc == MXK_OK && k < g->in_ptr[g->num_nodes]; k++)
        uses[g->in_entries[k]]++;
    xc_run x = {.opt = options, .rep = report};
    int stop = 0;
    for (uint32_t id = 0; id < g->num_nodes && rc == MXK_OK && !stop; id++) {
        const mxk_gnode *n = g->nodes[id];
        if (n->op == NULL)
            continue;
        uint32_t nin = g->in_ptr[id + 1] - g->in_ptr[id], first = mxk_igraph_entry(g, id, 0);
        mxk_ndarray **vals = calloc(nin + 1, sizeof *vals);
        if (vals == NULL) {
            rc = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "crosscheck: out of memory");
            break;
        }
        for (uint32_t i = 0; i < nin; i++)
            vals[i] = values[g->in_entries[g->in_ptr[id] + i]];
        x.node = n;
        rc = xc_node(&x, ex, id, vals, values + first, &stop);
        free(vals);
        memset(owned + first, 1, g->entry_ptr[id + 1] - first);
        /* the inputs are read; outputs nothing reads are not needed either */
        for (uint32_t k = g->in_ptr[id]; k < g->in_ptr[id + 1]; k++)
            xc_release(values, owned, uses, g->in_entries[k]);
        for (uint32_t e = first; e < g->entry_ptr[id + 1]; e++)
            if (uses[e] == 0) {
                mxk_ndarray_free(values[e]);
                values[e] = NULL;
            }
    }
    for (uint32_t e = 0; values && owned && e < g->num_entries; e++)
        if (owned[e])
            mxk_ndarray_free(values[e]);
    free(values);
    free(owned);
    free(uses);
    return rc;
}
