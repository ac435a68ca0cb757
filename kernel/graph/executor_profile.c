/*
 * The executor's per-node profiler and backend query (mxk.h
 * mxk_executor_set_profiling / _get_profile / _node_backend).
 *
 * Upstream MXNet profiles operators by name through its global profiler
 * (src/profiler/profiler.h, ProfileOperator around each engine operator, enabled
 * by mx.profiler.set_state); mxk keeps the counters per executor node instead: each
 * prepared call (op_instance.h mxk_op_call) counts its kernel runs and their wall
 * time inside its engine function, and this file turns the calls' counting on and
 * off and sums them per node (one forward step and at most one backward step per
 * operator node of the schedule).
 */
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "executor_internal.h"

mxk_status mxk_executor_node_backend(const mxk_executor *ex, const char *node,
                                     const char **backend) {
    if (ex == NULL || node == NULL || backend == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_executor_node_backend: executor, node or backend is NULL");
    for (uint32_t n = 0; n < ex->g->num_nodes; n++) {
        if (ex->inst[n] != NULL && strcmp(ex->g->nodes[n]->name, node) == 0) {
            *backend = mxk_op_instance_backend(ex->inst[n]);
            return MXK_OK;
        }
    }
    return mxk_set_error(MXK_ERR_NOT_FOUND, "executor: no operator node named '%s'", node);
}

mxk_status mxk_executor_set_profiling(mxk_executor *ex, int32_t on) {
    if (ex == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_executor_set_profiling: executor is NULL");
    for (uint32_t s = 0; s < ex->plan->num_steps; s++)
        mxki_op_call_set_profiling(ex->calls[s], on != 0);
    ex->profiling = on != 0;
    return MXK_OK;
}

mxk_status mxk_executor_get_profile(const mxk_executor *ex, uint32_t *num,
                                    mxk_executor_node_profile **nodes) {
    if (ex == NULL || num == NULL || nodes == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_executor_get_profile: executor, num or nodes is NULL");
    *num = 0;
    *nodes = NULL;
    if (!ex->profiling)
        return MXK_OK;
    /* row[n]: the entry of operator node n, in topological order. */
    uint32_t *row = malloc((ex->g->num_nodes + 1) * sizeof *row);
    mxk_executor_node_profile *out = calloc(ex->g->num_nodes + 1, sizeof *out);
    if (row == NULL || out == NULL) {
        free(row);
        free(out);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    }
    uint32_t count = 0;
    for (uint32_t n = 0; n < ex->g->num_nodes; n++) {
        const mxk_op_instance *inst = ex->inst[n];
        row[n] = count;
        if (inst == NULL)
            continue;
        out[count].name = ex->g->nodes[n]->name;
        out[count].op = inst->params->op->def.name;
        out[count].backend = mxk_op_instance_backend(inst);
        count++;
    }
    for (uint32_t s = 0; s < ex->plan->num_steps; s++) {
        const mxk_exec_step *st = &ex->plan->steps[s];
        uint64_t runs = 0, ns = 0;
        mxki_op_call_profile(ex->calls[s], &runs, &ns);
        mxk_executor_node_profile *e = &out[row[st->node]];
        if (st->backward) {
            e->bwd_runs += runs;
            e->bwd_ns += ns;
        } else {
            e->fwd_runs += runs;
            e->fwd_ns += ns;
        }
    }
    free(row);
    *num = count;
    *nodes = out;
    return MXK_OK;
}
