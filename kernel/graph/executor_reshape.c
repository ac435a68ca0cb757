/*
 * Executor reshape (mxk.h mxk_executor_reshape): a new executor for new input shapes
 * that shares memory with the old one.
 *
 * Source: upstream src/executor/graph_executor.cc GraphExecutor::Reshape and
 * src/c_api/c_api_executor.cc MXExecutorReshapeEx, python/mxnet/executor.py reshape:
 * shapes are inferred from the named ones; an argument may change shape when
 * partial_shaping is set, when it was named, or when it is unchanged (an aux state
 * only with partial_shaping or unchanged); a change to more elements needs
 * allow_up_sizing and gets fresh, uninitialised arrays (argument and gradient);
 * otherwise argument and gradient become views of the old arrays (a prefix when
 * smaller). The new executor is bound with the same requests and the old executor as
 * shared_exec, so its internal entries come from the old one's pool
 * (executor_memory.c). As the
 * Python front end does, the monitor callback is carried over.
 */
#include <stdlib.h>

#include "error.h"
#include "executor_internal.h"
#include "shape.h"

/** MXNet's message for a larger shape without allow_up_sizing. */
static mxk_status up_sizing_error(const char *name) {
    return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                         "New shape of arg: %s is larger than original.First making a big "
                         "executor and then down sizing it is more efficient than the reverse.If "
                         "you really want to up size, set allow_up_sizing=True to enable "
                         "allocation of new arrays.",
                         name);
}

/** MXNet's message for a changed shape that was not named (nor allowed by partial_shaping). */
static mxk_status unspecified_error(const char *name) {
    return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                         "Shape of unspecifie arg: %s changed. This can cause the new executor to "
                         "not share parameters with the old one. Please check for error in "
                         "network.If this is intended, set partial_shaping=True to suppress this "
                         "warning.",
                         name);
}

/**
 * The new array of one bound array: a view (same or fewer elements) or, with
 * allow_up_sizing, a fresh array. `old` may be NULL (no gradient): *out NULL then.
 */
static mxk_status reshape_array(const mxk_ndarray *old, const mxk_shape *shape, int up,
                                mxk_ndarray **out) {
    *out = NULL;
    if (old == NULL)
        return MXK_OK;
    if (up)
        return mxk_ndarray_create(shape, old->dtype, mxk_ndarray_context(old), out);
    *out = mxki_exec_typed_view(old, shape, old->dtype);
    return *out ? MXK_OK : mxki_last_error_code();
}

mxk_status mxk_executor_reshape(mxk_executor *ex, int32_t partial_shaping, int32_t allow_up_sizing,
                                uint32_t num_shapes, const char *const *names,
                                const mxk_shape *shapes, mxk_executor **out) {
    if (ex == NULL || out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_executor_reshape: %s is NULL",
                             ex ? "out" : "executor");
    *out = NULL;
    mxk_status rc =
        mxki_exec_check_shape_names(num_shapes, names, shapes, "reshape", "reshape of executor");
    if (rc != MXK_OK)
        return rc;
    const mxk_igraph *g = ex->g;
    uint32_t na = g->num_args, nx = g->num_aux;
    mxk_shape *fs = calloc(g->num_entries + 1, sizeof *fs);
    uint8_t *named = calloc(na + nx + 1, 1);
    mxk_ndarray **args = calloc(na + 1, sizeof *args), **grads = calloc(na + 1, sizeof *grads);
    mxk_ndarray **aux = calloc(nx + 1, sizeof *aux);
    if (!fs || !named || !args || !grads || !aux)
        rc = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    /* Only the named inputs' shapes are given; the rest is inferred (weights etc.). */
    for (uint32_t i = 0; rc == MXK_OK && i < num_shapes; i++) {
        uint32_t k = mxki_exec_find_arg(ex, names[i]);
        if (k != UINT32_MAX) {
            fs[mxk_igraph_entry(g, g->arg_nodes[k], 0)] = shapes[i];
            named[k] = 1;
            continue;
        }
        k = mxki_exec_find_aux(ex, names[i]);
        if (k != UINT32_MAX) {
            fs[mxk_igraph_entry(g, g->aux_nodes[k], 0)] = shapes[i];
            named[na + k] = 1;
        }
    }
    uint32_t unknown = 0;
    if (rc == MXK_OK)
        rc = mxki_igraph_infer_shape(g, fs, &unknown);
    if (rc == MXK_OK) {
        for (uint32_t i = 0; i < na + nx && unknown == 0; i++) {
            uint32_t node = i < na ? g->arg_nodes[i] : g->aux_nodes[i - na];
            if (!mxki_shape_is_complete(&fs[mxk_igraph_entry(g, node, 0)]))
                unknown = 1;
        }
        if (unknown)
            rc = mxk_set_error(MXK_ERR_SHAPE, "Insufficient argument shapes provided.");
    }
    for (uint32_t i = 0; rc == MXK_OK && i < na; i++) {
        const mxk_shape *ns = &fs[mxk_igraph_entry(g, g->arg_nodes[i], 0)];
        const mxk_ndarray *old = ex->args[i];
        if (!(partial_shaping || named[i] || mxki_shape_equal(ns, &old->shape))) {
            rc = unspecified_error(ex->arg_names[i]);
            break;
        }
        int up = mxki_shape_size(ns) > mxk_ndarray_size(old);
        if (up && !allow_up_sizing) {
            rc = up_sizing_error(ex->arg_names[i]);
            break;
        }
        rc = reshape_array(old, ns, up, &args[i]);
        if (rc == MXK_OK)
            rc = reshape_array(ex->grads[i], ns, up, &grads[i]);
    }
    for (uint32_t i = 0; rc == MXK_OK && i < nx; i++) {
        const mxk_shape *ns = &fs[mxk_igraph_entry(g, g->aux_nodes[i], 0)];
        const mxk_ndarray *old = ex->aux[i];
        if (!(partial_shaping || mxki_shape_equal(ns, &old->shape))) {
            rc = unspecified_error(ex->aux_names[i]);
            break;
        }
        int up = mxki_shape_size(ns) > mxk_ndarray_size(old);
        if (up && !allow_up_sizing) {
            rc = up_sizing_error(ex->aux_names[i]);
            break;
        }
        rc = reshape_array(old, ns, up, &aux[i]);
    }
    free(fs);
    free(named);
    if (rc == MXK_OK) {
        rc = mxki_exec_bind_owned(ex->sym, ex->ctx, na, args, grads, ex->grad_reqs, nx, aux, ex,
                                  out);
        if (rc == MXK_OK)
            mxk_executor_set_monitor(*out, ex->monitor, ex->monitor_user, ex->monitor_all);
    } else {
        mxki_exec_free_handles(na, args, grads, nx, aux);
    }
    free(args);
    free(grads);
    free(aux);
    return rc;
}
