/*
 * Running a bound executor: forward, backward, the monitor callback, and the cached
 * helper ops of backward (head-gradient copies, zero fills of argument gradients that
 * no step writes).
 *
 * Source: upstream src/executor/graph_executor.cc (Forward, Backward, RunOps,
 * ExecuteMonInputCallback, ExecuteMonOutputCallback); python/mxnet/executor.py
 * forward, backward and set_monitor_callback.
 *
 * Nothing here allocates on the hot path: every step is a prepared call pushed as a
 * cached engine op; head gradients are copied by a cached op per output that is
 * rebuilt only when the caller passes a different array than last time (an output
 * listed again after an earlier one of the same entry adds its head gradient
 * instead: MXNet sums them); zero fills are cached ops too. The monitor callback allocates (a new
 * handle per report), as upstream does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype_convert.h"
#include "error.h"
#include "executor_internal.h"
#include "registry.h"
#include "shape.h"
#include "symbol_internal.h"

/* ------------------------------------------------------------------------- */
/* Cached helper ops                                                         */
/* ------------------------------------------------------------------------- */

/**
 * Argument of a cached head-gradient copy: a view of the user's array and the
 * target. `add` (an output whose entry an earlier output already lists) adds the
 * `count` elements of dtype `dtype` into the target instead of copying.
 */
typedef struct exec_copy_arg {
    mxk_ndarray *src; /**< retained view of the caller's head gradient */
    void *dst;        /**< the executor's head-gradient memory (host) */
    uint64_t bytes;
    int add;
    int32_t dtype; /**< float16, float32 or float64 when add is set */
    uint64_t count;
} exec_copy_arg;

/** dst[i] += src[i] for `count` elements of floating dtype `dtype` (host memory). */
static void add_into(void *dst, const void *src, int32_t dtype, uint64_t count) {
    if (dtype == MXK_FLOAT32) {
        float *d = dst;
        const float *s = src;
        for (uint64_t i = 0; i < count; i++)
            d[i] += s[i];
    } else if (dtype == MXK_FLOAT64) {
        double *d = dst;
        const double *s = src;
        for (uint64_t i = 0; i < count; i++)
            d[i] += s[i];
    } else { /* float16: each sum in float32, rounded once (as mshadow's half_t adds) */
        uint16_t *d = dst;
        const uint16_t *s = src;
        for (uint64_t i = 0; i < count; i++)
            d[i] = mxki_float_to_half(mxki_half_to_float(d[i]) + mxki_half_to_float(s[i]));
    }
}

/** Engine function of a head-gradient copy or add (host memory, same dtype). */
static mxk_status copy_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    const exec_copy_arg *a = arg;
    if (a->add)
        add_into(a->dst, mxk_ndarray_ptr(a->src), a->dtype, a->count);
    else if (a->bytes)
        memcpy(a->dst, mxk_ndarray_ptr(a->src), a->bytes);
    return MXK_OK;
}

/** Frees a copy argument (after the cached op's last push). */
static void copy_free(void *arg) {
    exec_copy_arg *a = arg;
    mxk_ndarray_free(a->src);
    free(a);
}

/** Argument of a cached zero fill (host memory). */
typedef struct exec_fill_arg {
    void *ptr;
    uint64_t bytes;
} exec_fill_arg;

/** Engine function of a zero fill: all-zero bytes are 0 in every dtype. */
static mxk_status fill_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    const exec_fill_arg *a = arg;
    if (a->bytes)
        memset(a->ptr, 0, a->bytes);
    return MXK_OK;
}

/** True for device types whose memory the host reads and writes directly. */
static int is_host(mxk_context c) {
    return c.dev_type == MXK_DEV_CPU || c.dev_type == MXK_DEV_CPU_PINNED;
}

/** The engine device of a host function touching memory of ctx (as NDArray does). */
static void host_exec_dev(mxk_context ctx, int32_t *dev_type, int32_t *dev_id) {
    *dev_type = MXK_DEV_CPU;
    *dev_id = ctx.dev_type == MXK_DEV_CPU ? ctx.dev_id : 0;
}

/** Whether argument gradient entry `e` is written by some backward step. */
static int written_by_backward(const mxk_executor *ex, uint32_t e) {
    const mxk_grad_plan *p = ex->plan;
    for (uint32_t s = p->num_fwd_steps; s < p->num_steps; s++)
        for (uint32_t k = 0; k < p->steps[s].num_out; k++)
            if (p->steps[s].out[k] == e && p->steps[s].req[k] != MXK_REQ_NULL)
                return 1;
    return 0;
}

mxk_status mxki_exec_prepare_backward_helpers(mxk_executor *ex) {
    const mxk_grad_plan *p = ex->plan;
    ex->heads = calloc(ex->num_outputs + 1, sizeof *ex->heads);
    ex->fills = calloc(ex->num_args + 1, sizeof *ex->fills);
    if (ex->heads == NULL || ex->fills == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    /* Argument gradients bound with WRITE that no step writes are zero-filled each
     * backward (nnvm's zero gradient); with ADD they are left alone. */
    for (uint32_t i = 0; i < ex->num_args; i++) {
        uint32_t e = p->arg_grad[i];
        if (e == UINT32_MAX || ex->grad_reqs[i] != MXK_REQ_WRITE || written_by_backward(ex, e))
            continue;
        mxk_ndarray *g = ex->entry[e];
        mxk_context c = mxk_ndarray_context(g);
        if (!is_host(c))
            return mxk_set_error(MXK_ERR_UNSUPPORTED,
                                 "executor: the gradient of '%s' needs a zero fill on %s, "
                                 "which the executor does only for host memory",
                                 ex->arg_names[i], mxk_dev_type_name(c.dev_type));
        exec_fill_arg *a = malloc(sizeof *a);
        if (a == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
        a->ptr = mxk_ndarray_ptr(g);
        a->bytes = mxki_ndarray_bytes(g);
        mxk_engine_var *v = mxk_ndarray_var(g);
        mxk_engine_push_desc d = {.sync_fn = fill_fn,
                                  .arg = a,
                                  .arg_free = free,
                                  .write_vars = &v,
                                  .num_write = 1,
                                  .name = "executor_zero_grad"};
        host_exec_dev(c, &d.dev_type, &d.dev_id);
        mxk_status rc = mxki_engine_cached_op_new(&d, &ex->fills[ex->num_fills]);
        if (rc != MXK_OK) {
            free(a);
            return rc;
        }
        ex->num_fills++;
    }
    return MXK_OK;
}

void mxki_exec_free_backward_helpers(mxk_executor *ex) {
    for (uint32_t h = 0; ex->heads && h < ex->num_outputs; h++)
        mxki_engine_cached_op_delete(ex->heads[h].op);
    for (uint32_t i = 0; ex->fills && i < ex->num_fills; i++)
        mxki_engine_cached_op_delete(ex->fills[i]);
    free(ex->heads);
    free(ex->fills);
    ex->heads = NULL;
    ex->fills = NULL;
}

/** The first output listing the same head-gradient entry as output h (h itself when none). */
static uint32_t first_head_of_entry(const mxk_grad_plan *p, uint32_t h) {
    uint32_t f = 0;
    while (p->head_grad[f] != p->head_grad[h])
        f++;
    return f;
}

/**
 * Copies head gradient `src` of output h into the executor's head-gradient array:
 * by the output's cached copy op when `src` is the array it was built for, else
 * rebuilding it (host memory, same dtype); otherwise by mxk_ndarray_copy_to.
 * When an earlier output lists the same entry, the head gradient is added instead
 * (pushed after that output's copy, so the engine orders the two); that needs host
 * memory and the entry's floating dtype: otherwise MXK_ERR_UNSUPPORTED "backward:
 * outputs <f> and <h> ('<name>') are the same entry; their head gradients are summed
 * only in host memory with the output's dtype (float16/32/64)".
 */
static mxk_status push_head_copy(mxk_executor *ex, uint32_t h, mxk_ndarray *src) {
    mxk_ndarray *dst = ex->entry[ex->plan->head_grad[h]];
    uint32_t first = first_head_of_entry(ex->plan, h);
    if (!mxki_shape_equal(&src->shape, &dst->shape)) {
        char a[128], b[128];
        return mxk_set_error(MXK_ERR_SHAPE,
                             "backward: head gradient %u (of output '%s') has shape "
                             "%s, expected %s",
                             h, ex->out_names[h], mxki_shape_format(&src->shape, a, sizeof a),
                             mxki_shape_format(&dst->shape, b, sizeof b));
    }
    mxk_context sc = mxk_ndarray_context(src), dc = mxk_ndarray_context(dst);
    int same_host = src->dtype == dst->dtype && is_host(sc) && is_host(dc);
    int add = first != h;
    if (add && (!same_host || (dst->dtype != MXK_FLOAT32 && dst->dtype != MXK_FLOAT64 &&
                               dst->dtype != MXK_FLOAT16)))
        return mxk_set_error(MXK_ERR_UNSUPPORTED,
                             "backward: outputs %u and %u ('%s') are the same entry; their head "
                             "gradients are summed only in host memory with the output's dtype "
                             "(float16/32/64)",
                             first, h, ex->out_names[h]);
    if (!same_host)
        return mxk_ndarray_copy_to(src, dst);
    exec_head_copy *hc = &ex->heads[h];
    if (hc->op == NULL || !mxk_ndarray_same_memory(hc->arg->src, src)) {
        mxki_engine_cached_op_delete(hc->op);
        hc->op = NULL;
        hc->arg = NULL;
        exec_copy_arg *a = malloc(sizeof *a);
        if (a == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
        a->src = mxki_ndarray_retain_view(src);
        a->dst = mxk_ndarray_ptr(dst);
        a->bytes = mxki_ndarray_bytes(dst);
        a->add = add;
        a->dtype = dst->dtype;
        a->count = mxk_ndarray_size(dst);
        if (a->src == NULL) {
            free(a);
            return mxki_last_error_code();
        }
        mxk_engine_var *r = mxk_ndarray_var(src), *w = mxk_ndarray_var(dst);
        mxk_engine_push_desc d = {.sync_fn = copy_fn,
                                  .arg = a,
                                  .arg_free = copy_free,
                                  .read_vars = &r,
                                  .num_read = 1,
                                  .write_vars = &w,
                                  .num_write = 1,
                                  .name = "executor_head_grad"};
        host_exec_dev(dc, &d.dev_type, &d.dev_id);
        mxk_status rc = mxki_engine_cached_op_new(&d, &hc->op);
        if (rc != MXK_OK) {
            copy_free(a);
            return rc;
        }
        hc->arg = a;
    }
    return mxki_engine_cached_op_push(hc->op);
}

/* ------------------------------------------------------------------------- */
/* Monitor                                                                   */
/* ------------------------------------------------------------------------- */

/** Calls the monitor with a new handle on `a` (the callee owns it). */
static void report(const mxk_executor *ex, const char *name, const mxk_ndarray *a) {
    if (a == NULL)
        return;
    mxk_ndarray *v = mxki_ndarray_retain_view(a);
    if (v != NULL)
        ex->monitor(name, v, ex->monitor_user);
}

/** Reports a variable input by the variable's own name (upstream ExecuteMonInputCallback). */
static void report_if_variable(const mxk_executor *ex, uint32_t e, const mxk_ndarray *a) {
    if (e >= ex->g->num_entries)
        return;
    const mxk_gnode *src = ex->g->nodes[mxk_igraph_entry_node(ex->g, e)];
    if (src->op == NULL)
        report(ex, src->name, a);
}

/** monitor_all: the inputs of step s, before it is pushed. */
static void monitor_inputs(const mxk_executor *ex, uint32_t s) {
    const mxk_exec_step *st = &ex->plan->steps[s];
    const mxk_gnode *node = ex->g->nodes[st->node];
    const mxk_op_instance *inst = ex->inst[st->node];
    char name[512];
    uint32_t j = 0;
    for (uint32_t k = 0; k < st->num_in; k++) {
        uint32_t e = st->in[k];
        if (e == UINT32_MAX)
            continue;
        const mxk_ndarray *a = ex->entry[e];
        report_if_variable(ex, e, a);
        if (!st->backward) {
            const char *in = k < inst->num_in ? inst->params->in_names->names[k]
                                              : inst->params->aux_names->names[k - inst->num_in];
            snprintf(name, sizeof name, "%s_%s", node->name, in);
        } else {
            /* Backward nodes have no input names: "input<i>" over the inputs they read. */
            snprintf(name, sizeof name, "%s_backward_input%u", node->name, j++);
        }
        report(ex, name, a);
    }
}

/** The outputs of step s, after it is pushed (upstream ExecuteMonOutputCallback). */
static void monitor_outputs(const mxk_executor *ex, uint32_t s) {
    const mxk_exec_step *st = &ex->plan->steps[s];
    const mxk_gnode *node = ex->g->nodes[st->node];
    char name[512];
    for (uint32_t k = 0; k < st->num_out; k++) {
        uint32_t e = st->out[k];
        if (e == UINT32_MAX || st->req[k] == MXK_REQ_NULL)
            continue;
        if (!st->backward) {
            mxk_gentry en = {(mxk_gnode *)node, k};
            char *n = mxki_gentry_output_name(&en);
            if (n != NULL)
                report(ex, n, ex->entry[e]);
            free(n);
        } else {
            /* nnvm's name of a backward node's output: "<node>_backward_output[<i>]". */
            if (st->num_out == 1)
                snprintf(name, sizeof name, "%s_backward_output", node->name);
            else
                snprintf(name, sizeof name, "%s_backward_output%u", node->name, k);
            report(ex, name, ex->entry[e]);
        }
    }
}

mxk_status mxk_executor_set_monitor(mxk_executor *ex, mxk_monitor_fn fn, void *user,
                                    int32_t monitor_all) {
    if (ex == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_executor_set_monitor: executor is NULL");
    ex->monitor = fn;
    ex->monitor_user = user;
    ex->monitor_all = monitor_all;
    return MXK_OK;
}

/* ------------------------------------------------------------------------- */
/* Forward and backward                                                      */
/* ------------------------------------------------------------------------- */

/** Pushes steps [begin, end) with the monitor around each. */
static mxk_status run_steps(mxk_executor *ex, uint32_t begin, uint32_t end, int32_t is_train) {
    for (uint32_t s = begin; s < end; s++) {
        if (ex->monitor && ex->monitor_all)
            monitor_inputs(ex, s);
        mxk_status rc = mxki_op_call_push(ex->calls[s], is_train);
        if (rc != MXK_OK)
            return rc;
        if (ex->monitor)
            monitor_outputs(ex, s);
    }
    return MXK_OK;
}

mxk_status mxk_executor_forward(mxk_executor *ex, int32_t is_train) {
    if (ex == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_executor_forward: executor is NULL");
    return run_steps(ex, 0, ex->plan->num_fwd_steps, is_train ? 1 : 0);
}

mxk_status mxk_executor_backward(mxk_executor *ex, uint32_t num_head,
                                 mxk_ndarray *const *head_grads) {
    if (ex == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_executor_backward: executor is NULL");
    const mxk_grad_plan *p = ex->plan;
    if (ex->num_bwd_steps == 0 && ex->num_fills == 0)
        return MXK_OK; /* no gradient requested: nothing to do (upstream) */
    /* Head-gradient rule (upstream GraphExecutor::Backward): every output whose
     * gradient the backward graph reads needs one; the list is positional. */
    for (uint32_t h = 0; h < p->num_heads; h++) {
        if (p->head_grad[h] == UINT32_MAX)
            continue;
        if (h >= num_head || head_grads == NULL || head_grads[h] == NULL)
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                                 "Because the last operator is not Loss function, head_gradient "
                                 "is required when calling backward.%s",
                                 /* the advice names make_loss only where a plugin defines it */
                                 mxk_op_canonical_name("make_loss") == NULL
                                     ? ""
                                     : " If you are attempting to minimize the output as an "
                                       "objective, please modify your network and pass it "
                                       "through the make_loss symbol.");
    }
    for (uint32_t h = 0; h < p->num_heads; h++) {
        if (p->head_grad[h] == UINT32_MAX)
            continue;
        mxk_status rc = push_head_copy(ex, h, head_grads[h]);
        if (rc != MXK_OK)
            return rc;
    }
    for (uint32_t i = 0; i < ex->num_fills; i++) {
        mxk_status rc = mxki_engine_cached_op_push(ex->fills[i]);
        if (rc != MXK_OK)
            return rc;
    }
    return run_steps(ex, p->num_fwd_steps, p->num_steps, 1);
}
