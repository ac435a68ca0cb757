/*
 * Op instances: an operator bound to attributes and a device, its kernel chosen by the
 * backend preference, and its prepared forward/backward calls (see op_instance.h).
 */
#include "op_instance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "error.h"
#include "host_api.h"
#include "ndarray.h"
#include "shape.h"

/* ---- creation ---- */

/* The parameter object the instance's kernel reads: its own, else the operator's. */
static const void *kernel_param(const mxk_op_instance *inst) {
    return inst->kparam ? inst->kparam : inst->params->param;
}

static void instance_destroy(mxk_op_instance *inst) {
    if (inst->state && inst->kernel && inst->kernel->def.destroy_state)
        inst->kernel->def.destroy_state(inst->state);
    if (inst->kparam)
        inst->kernel->def.free_param(inst->kparam);
    if (inst->var)
        mxki_engine_delete_var(inst->var, NULL, NULL, inst->ctx.dev_type, inst->ctx.dev_id);
    mxki_op_params_free(inst->params);
    free(inst->in_shapes);
    free(inst->in_types);
    free(inst->need_out_grad);
    free(inst);
}

static void instance_release(mxk_op_instance *inst) {
    if (atomic_fetch_sub(&inst->refcount, 1) == 1)
        instance_destroy(inst);
}

void mxk_op_instance_free(mxk_op_instance *inst) {
    if (inst)
        instance_release(inst);
}

/* Allocates the shape/type/flag arrays of an instance in two blocks. */
static int alloc_arrays(mxk_op_instance *inst) {
    uint32_t n = inst->num_in + inst->num_out + inst->num_aux;
    inst->in_shapes = calloc(n ? n : 1, sizeof(mxk_shape));
    inst->in_types = calloc(n ? n : 1, sizeof(int32_t));
    inst->need_out_grad = calloc(inst->num_visible + inst->num_in + inst->num_out + 1, 1);
    if (!inst->in_shapes || !inst->in_types || !inst->need_out_grad)
        return 0;
    inst->out_shapes = inst->in_shapes + inst->num_in;
    inst->aux_shapes = inst->out_shapes + inst->num_out;
    inst->out_types = inst->in_types + inst->num_in;
    inst->aux_types = inst->out_types + inst->num_out;
    inst->need_in_data = inst->need_out_grad + inst->num_visible;
    inst->need_out_data = inst->need_in_data + inst->num_in;
    return 1;
}

/* Fails with the first slot whose shape is still incomplete. */
static mxk_status check_complete(const mxk_op_instance *inst) {
    const char *op = inst->params->op->def.name;
    const mxk_shape *arrs[3] = {inst->in_shapes, inst->out_shapes, inst->aux_shapes};
    const mxk_name_list *names[3] = {inst->params->in_names, inst->params->out_names,
                                     inst->params->aux_names};
    static const char *const kinds[3] = {"input", "output", "auxiliary state"};
    for (int k = 0; k < 3; k++)
        for (uint32_t i = 0; i < names[k]->count; i++)
            if (!mxki_shape_is_complete(&arrs[k][i])) {
                char buf[128];
                return mxk_set_error(
                    MXK_ERR_SHAPE, "%s: cannot infer the shape of %s '%s' (got %s)", op, kinds[k],
                    names[k]->names[i], mxki_shape_format(&arrs[k][i], buf, sizeof buf));
            }
    return MXK_OK;
}

/* Asks the operator for a phase's resources and takes slots for them. */
static mxk_status take_resources(mxk_op_instance *inst, int backward) {
    const mxk_op_def *d = &inst->params->op->def;
    mxk_status (*fn)(const void *, const mxk_shape *, uint32_t, mxk_resource_request *, uint32_t *,
                     mxk_error_sink *) = backward ? d->backward_resources : d->forward_resources;
    mxk_phase_resources *pr = backward ? &inst->bwd_res : &inst->fwd_res;
    pr->count = 0;
    if (fn == NULL)
        return MXK_OK;
    mxk_error_sink sink;
    mxki_error_sink_clear(&sink);
    uint32_t n = MXK_MAX_RESOURCES;
    for (uint32_t i = 0; i < MXK_MAX_RESOURCES; i++)
        pr->req[i].struct_size = sizeof pr->req[i];
    if (fn(inst->params->param, inst->in_shapes, inst->num_in, pr->req, &n, &sink) != MXK_OK)
        return mxki_set_error_from_sink(&sink, "%s: resource request: ", d->name);
    if (n > MXK_MAX_RESOURCES)
        return mxk_set_error(MXK_ERR_INTERNAL, "%s: %u resources requested, at most %d", d->name, n,
                             MXK_MAX_RESOURCES);
    for (uint32_t i = 0; i < n; i++) {
        pr->slot[i] = mxki_resource_get(inst->ctx, pr->req[i].type);
        if (pr->slot[i] == NULL)
            return mxki_last_error_code();
    }
    pr->count = n;
    return MXK_OK;
}

/* Resolves the kernel by the current preference and (re)creates its state. */
static mxk_status resolve(mxk_op_instance *inst) {
    void *kparam = NULL;
    const mxk_kernel_entry *k = mxki_registry_resolve_kernel(
        inst->params->op, inst->ctx.dev_type, inst->params->param, inst->params->attrs,
        inst->in_shapes, inst->in_types, inst->num_in, &kparam);
    if (k == NULL)
        return mxki_last_error_code();
    if (k == inst->kernel) {
        if (kparam)
            k->def.free_param(kparam);
        return MXK_OK;
    }
    void *state = NULL;
    if (k->def.create_state) {
        mxk_error_sink sink;
        mxki_error_sink_clear(&sink);
        if (k->def.create_state(kparam ? kparam : inst->params->param, inst->ctx.dev_type,
                                inst->ctx.dev_id, inst->in_shapes, inst->in_types, inst->num_in,
                                &state, &sink) != MXK_OK) {
            if (kparam)
                k->def.free_param(kparam);
            return mxki_set_error_from_sink(&sink, "%s (backend %s): create_state: ",
                                            inst->params->op->def.name, k->def.backend);
        }
    }
    if (inst->state && inst->kernel->def.destroy_state)
        inst->kernel->def.destroy_state(inst->state);
    if (inst->kparam)
        inst->kernel->def.free_param(inst->kparam);
    inst->kernel = k;
    inst->kparam = kparam;
    inst->state = state;
    return MXK_OK;
}

mxk_status mxki_op_instance_from_params(mxk_op_params *params, mxk_context ctx,
                                        const mxk_shape *in_shapes, const int32_t *in_types,
                                        const mxk_shape *out_shapes, mxk_op_instance **out) {
    mxk_op_instance *inst = calloc(1, sizeof *inst);
    if (inst == NULL) {
        mxki_op_params_free(params);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory creating an operator");
    }
    atomic_init(&inst->refcount, 1);
    inst->params = params;
    inst->ctx = ctx;
    inst->num_in = params->in_names->count;
    inst->num_out = params->out_names->count;
    inst->num_visible = params->num_visible;
    inst->num_aux = params->aux_names->count;
    mxk_status rc = MXK_OK;
    if (!alloc_arrays(inst) || (inst->var = mxki_engine_new_var()) == NULL)
        rc = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory creating an operator");
    if (rc == MXK_OK) {
        for (uint32_t i = 0; i < inst->num_in; i++) {
            inst->in_shapes[i] = in_shapes[i];
            inst->in_types[i] = in_types ? in_types[i] : MXK_FLOAT32;
        }
        for (uint32_t i = 0; i < inst->num_out; i++) {
            if (out_shapes != NULL)
                inst->out_shapes[i] = out_shapes[i];
            inst->out_types[i] = -1;
        }
        for (uint32_t i = 0; i < inst->num_aux; i++)
            inst->aux_types[i] = -1;
        rc =
            mxki_op_params_infer_shape(params, inst->in_shapes, inst->out_shapes, inst->aux_shapes);
    }
    if (rc == MXK_OK)
        rc = check_complete(inst);
    if (rc == MXK_OK)
        rc = mxki_op_params_infer_type(params, inst->in_types, inst->out_types, inst->aux_types);
    if (rc == MXK_OK)
        rc = resolve(inst);
    if (rc == MXK_OK)
        rc = take_resources(inst, 0);
    if (rc == MXK_OK)
        rc = take_resources(inst, 1);
    if (rc == MXK_OK) {
        const mxk_op_def *d = &params->op->def;
        if (d->backward_dependency)
            d->backward_dependency(params->param, inst->num_visible, inst->num_in, inst->num_out,
                                   inst->need_out_grad, inst->need_in_data, inst->need_out_data);
        else
            memset(inst->need_out_grad, 1, inst->num_visible + inst->num_in + inst->num_out);
        if (d->mutate_inputs) {
            inst->num_mutate = d->mutate_inputs(params->param, inst->mutate, MXK_MAX_INPLACE);
            for (uint32_t i = 0; i < inst->num_mutate && rc == MXK_OK; i++)
                if (inst->mutate[i] >= inst->num_in + inst->num_aux) /* args, then aux */
                    rc = mxk_set_error(MXK_ERR_INTERNAL, "%s: mutated input %u out of range",
                                       d->name, inst->mutate[i]);
        }
    }
    if (rc != MXK_OK) {
        instance_destroy(inst);
        return rc;
    }
    *out = inst;
    return MXK_OK;
}

mxk_status mxk_op_instance_create(const char *op_name, uint32_t num_attrs, const char *const *keys,
                                  const char *const *vals, mxk_context ctx, uint32_t num_inputs,
                                  const mxk_shape *in_shapes, const int32_t *in_types,
                                  mxk_op_instance **out) {
    mxk_attrs *given = mxki_attrs_from_arrays(num_attrs, keys, vals);
    if (given == NULL)
        return mxki_last_error_code();
    mxk_op_params *params;
    mxk_status rc = mxki_op_params_create(op_name, given, &params);
    mxki_attrs_free(given);
    if (rc != MXK_OK)
        return rc;
    if (num_inputs != params->in_names->count) {
        char names[512];
        rc = mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s expects %u input%s (%s), got %u", op_name,
                           params->in_names->count, params->in_names->count == 1 ? "" : "s",
                           mxki_name_list_join(params->in_names, names, sizeof names), num_inputs);
        mxki_op_params_free(params);
        return rc;
    }
    return mxki_op_instance_from_params(params, ctx, in_shapes, in_types, NULL, out);
}

/* ---- queries ---- */

void mxk_op_instance_counts(const mxk_op_instance *inst, uint32_t *num_inputs,
                            uint32_t *num_outputs, uint32_t *num_visible, uint32_t *num_aux) {
    if (num_inputs)
        *num_inputs = inst->num_in;
    if (num_outputs)
        *num_outputs = inst->num_out;
    if (num_visible)
        *num_visible = inst->num_visible;
    if (num_aux)
        *num_aux = inst->num_aux;
}

mxk_status mxk_op_instance_shape(const mxk_op_instance *inst, mxk_op_slot_kind kind, uint32_t i,
                                 mxk_shape *shape, int32_t *dtype) {
    const mxk_shape *s[3] = {inst->in_shapes, inst->out_shapes, inst->aux_shapes};
    const int32_t *t[3] = {inst->in_types, inst->out_types, inst->aux_types};
    uint32_t n[3] = {inst->num_in, inst->num_out, inst->num_aux};
    if ((int)kind < 0 || kind > MXK_SLOT_AUX || i >= n[kind])
        return mxk_set_error(MXK_ERR_NOT_FOUND, "%s: no slot %u of kind %d",
                             inst->params->op->def.name, i, (int)kind);
    if (shape)
        *shape = s[kind][i];
    if (dtype)
        *dtype = t[kind][i];
    return MXK_OK;
}

const char *mxk_op_instance_name(const mxk_op_instance *inst, mxk_op_slot_kind kind, uint32_t i) {
    const mxk_name_list *l[3] = {inst->params->in_names, inst->params->out_names,
                                 inst->params->aux_names};
    if ((int)kind < 0 || kind > MXK_SLOT_AUX || i >= l[kind]->count)
        return NULL;
    return l[kind]->names[i];
}

const char *mxk_op_instance_backend(const mxk_op_instance *inst) {
    return inst->kernel->def.backend;
}

void mxk_op_instance_backward_dependency(const mxk_op_instance *inst, uint8_t *need_out_grad,
                                         uint8_t *need_in_data, uint8_t *need_out_data) {
    memcpy(need_out_grad, inst->need_out_grad, inst->num_visible);
    memcpy(need_in_data, inst->need_in_data, inst->num_in);
    memcpy(need_out_data, inst->need_out_data, inst->num_out);
}

uint32_t mxk_op_instance_resources(const mxk_op_instance *inst, int32_t backward,
                                   mxk_op_resource_info *out, uint32_t capacity) {
    const mxk_phase_resources *pr = backward ? &inst->bwd_res : &inst->fwd_res;
    for (uint32_t i = 0; i < pr->count && i < capacity; i++)
        out[i] = (mxk_op_resource_info){pr->req[i].type, pr->req[i].temp_bytes};
    return pr->count;
}

mxk_status mxk_op_instance_reresolve(mxk_op_instance *inst) {
    /* Pending calls use the old kernel and state: wait for them (they all write the
     * instance's variable) before swapping. */
    mxk_status rc = mxki_engine_wait_var(inst->var);
    if (rc != MXK_OK)
        return rc;
    return resolve(inst);
}

/* ---- calls ---- */

/*
 * A call is one forward or backward of an instance bound to arrays: the retained
 * views, their tensors (data pointers never move, so they are filled once), the
 * write requests and the engine variables read and written. The one-shot functions
 * mxk_op_instance_forward/backward prepare a call, push it once as an ordinary
 * engine function and drop it; the executor prepares its calls at bind and pushes
 * them as cached engine ops (one per is_train mode, created at the first push of the
 * mode), so a bound graph allocates nothing per iteration.
 *
 * Slot layout. Forward: in[num_in], out[num_out], aux[num_aux].
 * Backward: out_grad[num_visible], in_data[num_in], out_data[num_out], in_grad[num_in], aux.
 */

/** One is_train mode of a call: the engine argument of its pushes. */
typedef struct call_mode {
    struct mxk_op_call *call;
    int32_t is_train;
    mxk_engine_cached_op *op; /**< cached engine op of this mode, NULL until first pushed */
} call_mode;

/** Definition of the opaque prepared call (one allocation). */
struct mxk_op_call {
    atomic_uint refcount; /**< the owner's handle + one per engine op holding a mode */
    mxk_op_instance *inst;
    int backward;
    uint32_t num_slots;   /**< array slots (see the slot layout) */
    uint32_t out_begin;   /**< first written slot (outputs / in_grads) */
    uint32_t num_written; /**< outputs (fwd) or in_grads (bwd) */
    uint32_t aux_begin;   /**< first aux slot (aux states are written) */
    mxk_ndarray **arrays; /**< retained views; NULL for absent */
    mxk_tensor *tensors;  /**< filled at prepare; an emulated add-to swaps data during a run */
    const mxk_tensor **tptrs;
    mxk_op_req *req;  /**< num_written entries */
    void **addto_tmp; /**< num_written: add-to emulation buffers, allocated at first need */
    /** num_written: 1 where an ADD output is the same memory as an earlier written one
     *  (a gradient named twice, x * x): it always goes through a temporary. */
    uint8_t *alias;
    uint32_t num_reads, num_writes;
    mxk_engine_var **reads, **writes;
    /** Labels of the engine's watchdog and storage-guard reports: the array name of each
     *  writes[] entry (NULL for resources and the instance variable; backward writes
     *  point into grad_names) and the graph node, when an executor set one. */
    const char **write_names;
    char *grad_names; /**< backward: "<input>_grad\0" per input, malloc'd; else NULL */
    const char *node;
    call_mode modes[2]; /**< [0] inference, [1] training */
    /** Profiling (mxki_op_call_set_profiling): on/off, kernel runs and their nanoseconds. */
    atomic_int profiling;
    atomic_uint_fast64_t prof_runs, prof_ns;
};

/** Frees a call whose last reference is gone: its views, buffers and instance reference. */
static void call_destroy(mxk_op_call *c) {
    for (uint32_t i = 0; i < c->num_slots; i++)
        mxk_ndarray_free(c->arrays[i]);
    for (uint32_t i = 0; i < c->num_written; i++)
        free(c->addto_tmp[i]);
    free(c->grad_names);
    instance_release(c->inst);
    free(c);
}

/** Drops one reference of a call. */
static void call_unref(mxk_op_call *c) {
    if (atomic_fetch_sub(&c->refcount, 1) == 1)
        call_destroy(c);
}

/** Engine arg_free of a mode: drops the reference its engine op held. */
static void mode_release(void *arg) {
    call_unref(((call_mode *)arg)->call);
}

/** A zeroed call for `inst` with room for its slots and variables (no arrays yet). */
static mxk_op_call *call_new(mxk_op_instance *inst, int backward) {
    uint32_t n = backward ? inst->num_visible + 3 * inst->num_in + inst->num_out + inst->num_aux
                          : inst->num_in + inst->num_out + inst->num_aux;
    uint32_t nw = backward ? inst->num_in : inst->num_out;
    uint32_t nvars = n + MXK_MAX_RESOURCES + 1; /* + the instance's variable */
    size_t bytes = sizeof(mxk_op_call) +
                   n * (sizeof(mxk_tensor) + sizeof(mxk_ndarray *) + sizeof(mxk_tensor *)) +
                   nw * (sizeof(void *) + sizeof(mxk_op_req) + 1) +
                   2 * nvars * sizeof(mxk_engine_var *) + nvars * sizeof(const char *) + 16;
    mxk_op_call *c = calloc(1, bytes);
    if (c == NULL)
        return NULL;
    atomic_init(&c->refcount, 1);
    c->inst = inst;
    c->backward = backward;
    c->num_slots = n;
    c->num_written = nw;
    c->out_begin = backward ? inst->num_visible + inst->num_in + inst->num_out : inst->num_in;
    c->aux_begin = backward ? inst->num_visible + 2 * inst->num_in + inst->num_out
                            : inst->num_in + inst->num_out;
    /* Layout: tensors first (the most strictly aligned), then pointer arrays, then reqs. */
    c->tensors = (mxk_tensor *)(c + 1);
    c->arrays = (mxk_ndarray **)(c->tensors + n);
    c->tptrs = (const mxk_tensor **)(c->arrays + n);
    c->addto_tmp = (void **)(c->tptrs + n);
    c->reads = (mxk_engine_var **)(c->addto_tmp + nw);
    c->writes = c->reads + nvars;
    c->write_names = (const char **)(c->writes + nvars);
    c->req = (mxk_op_req *)(c->write_names + nvars);
    c->alias = (uint8_t *)(c->req + nw);
    for (int m = 0; m < 2; m++) {
        c->modes[m].call = c;
        c->modes[m].is_train = m;
    }
    atomic_fetch_add(&inst->refcount, 1);
    return c;
}

/** out += tmp for `count` elements of dtype (the add-to emulation). */
static mxk_status add_into(void *out, const void *tmp, int32_t dtype, uint64_t count,
                           mxk_error_sink *err) {
    if (dtype == MXK_FLOAT32) {
        float *o = out;
        const float *t = tmp;
        for (uint64_t i = 0; i < count; i++)
            o[i] += t[i];
        return MXK_OK;
    }
    if (dtype == MXK_FLOAT64) {
        double *o = out;
        const double *t = tmp;
        for (uint64_t i = 0; i < count; i++)
            o[i] += t[i];
        return MXK_OK;
    }
    return mxki_sink_set(err, MXK_ERR_UNSUPPORTED,
                         "add-to emulation supports float32 and float64 only, got %s",
                         mxk_dtype_name(dtype));
}

/**
 * Points the ADD outputs of a kernel without MXK_KERNEL_SUPPORTS_ADDTO, and ADD
 * outputs aliasing an earlier output, at temporary buffers (kept in the call for
 * later runs) and turns their request into WRITE. `req` is the run's copy.
 */
static mxk_status addto_begin(mxk_op_call *c, const mxk_op_kernel_def *k, mxk_op_req *req,
                              mxk_error_sink *err) {
    for (uint32_t i = 0; i < c->num_written; i++) {
        if (req[i] != MXK_REQ_ADD || ((k->flags & MXK_KERNEL_SUPPORTS_ADDTO) && !c->alias[i]))
            continue;
        mxk_tensor *t = &c->tensors[c->out_begin + i];
        if (t->dev_type != MXK_DEV_CPU && t->dev_type != MXK_DEV_CPU_PINNED)
            return mxki_sink_set(err, MXK_ERR_UNSUPPORTED,
                                 "backend '%s' cannot add to outputs on %s and the kernel "
                                 "cannot emulate it there",
                                 k->backend, mxk_dev_type_name(t->dev_type));
        if (c->addto_tmp[i] == NULL) {
            uint64_t bytes = mxki_shape_size(&t->shape) * mxk_dtype_size(t->dtype);
            c->addto_tmp[i] = malloc(bytes ? bytes : 1);
            if (c->addto_tmp[i] == NULL)
                return mxki_sink_set(err, MXK_ERR_OUT_OF_MEMORY, "out of memory (add-to)");
        }
        t->data = c->addto_tmp[i];
        req[i] = MXK_REQ_WRITE;
    }
    return MXK_OK;
}

/** Adds the temporaries of emulated outputs into the outputs and restores the tensors. */
static mxk_status addto_end(mxk_op_call *c, const mxk_op_req *req, mxk_status rc,
                            mxk_error_sink *err) {
    for (uint32_t i = 0; i < c->num_written; i++) {
        mxk_tensor *t = &c->tensors[c->out_begin + i];
        if (c->addto_tmp[i] == NULL || t->data != c->addto_tmp[i])
            continue;
        t->data = mxk_ndarray_ptr(c->arrays[c->out_begin + i]);
        if (rc == MXK_OK && c->req[i] == MXK_REQ_ADD && req[i] == MXK_REQ_WRITE)
            rc = add_into(t->data, c->addto_tmp[i], t->dtype, mxki_shape_size(&t->shape), err);
    }
    return rc;
}

/** CLOCK_MONOTONIC now, in nanoseconds (the profiler's clock). */
static uint64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** The engine function of a call (arg: its call_mode). */
static mxk_status call_run(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    const call_mode *m = arg;
    mxk_op_call *c = m->call;
    mxk_op_instance *inst = c->inst;
    const mxk_op_kernel_def *k = &inst->kernel->def;
    if (c->backward && k->backward == NULL)
        return mxki_sink_set(err, MXK_ERR_UNSUPPORTED, "%s: backend '%s' has no backward",
                             inst->params->op->def.name, k->backend);
    const mxk_phase_resources *pr = c->backward ? &inst->bwd_res : &inst->fwd_res;
    const mxk_resource *views[MXK_MAX_RESOURCES];
    mxk_op_call_ctx cctx;
    memset(&cctx, 0, sizeof cctx);
    for (uint32_t r = 0; r < pr->count; r++) {
        mxk_status rc = mxki_resource_prepare(pr->slot[r], pr->req[r].temp_bytes, &views[r], err);
        if (rc != MXK_OK)
            return rc;
        if (pr->req[r].type == MXK_RESOURCE_TEMP_SPACE && cctx.temp_slot == NULL)
            cctx.temp_slot = pr->slot[r];
    }
    cctx.pub.struct_size = sizeof cctx.pub;
    cctx.pub.dev_type = rctx->dev_type;
    cctx.pub.dev_id = rctx->dev_id;
    cctx.pub.is_train = m->is_train;
    cctx.pub.need_grad = m->is_train;
    cctx.pub.num_resources = pr->count;
    cctx.pub.resources = views;
    cctx.pub.stream = rctx->stream;
    cctx.pub.num_threads = (uint32_t)mxk_get_num_threads();
    mxki_host_set_current_stream(rctx->dev_type, rctx->dev_id, rctx->stream);

    /* The run's requests: the call's, with emulated add-to turned into WRITE. */
    mxk_op_req req_local[64];
    mxk_op_req *req = c->num_written <= 64 ? req_local : NULL;
    if (req == NULL)
        return mxki_sink_set(err, MXK_ERR_UNSUPPORTED, "%s: more than 64 written arrays",
                             inst->params->op->def.name);
    memcpy(req, c->req, c->num_written * sizeof *req);
    for (uint32_t i = 0; i < c->num_slots; i++) /* what the run reads: the versions now */
        c->tensors[i].version =
            c->arrays[i] ? mxki_engine_var_version(mxk_ndarray_var(c->arrays[i])) + 1 : 0;
    mxk_status rc = addto_begin(c, k, req, err);
    const mxk_tensor *const *tp = c->tptrs;
    int timed = rc == MXK_OK && atomic_load_explicit(&c->profiling, memory_order_relaxed);
    uint64_t t0 = timed ? monotonic_ns() : 0;
    if (rc == MXK_OK && !c->backward) {
        mxk_forward_args a = {
            .struct_size = sizeof a,
            .num_in = inst->num_in,
            .in_data = tp,
            .num_out = inst->num_out,
            .out_data = tp + inst->num_in,
            .req = req,
            .num_aux = inst->num_aux,
            .aux = tp + inst->num_in + inst->num_out,
        };
        rc = k->forward(&cctx.pub, kernel_param(inst), inst->state, &a, err);
    } else if (rc == MXK_OK) {
        uint32_t nv = inst->num_visible, ni = inst->num_in, no = inst->num_out;
        mxk_backward_args a = {
            .struct_size = sizeof a,
            .num_out_grad = nv,
            .out_grad = tp,
            .num_in = ni,
            .in_data = tp + nv,
            .num_out = no,
            .out_data = tp + nv + ni,
            .in_grad = tp + nv + ni + no,
            .req = req,
            .num_aux = inst->num_aux,
            .aux = tp + nv + 2 * ni + no,
        };
        rc = k->backward(&cctx.pub, kernel_param(inst), inst->state, &a, err);
    }
    if (timed) {
        atomic_fetch_add_explicit(&c->prof_ns, monotonic_ns() - t0, memory_order_relaxed);
        atomic_fetch_add_explicit(&c->prof_runs, 1, memory_order_relaxed);
    }
    rc = addto_end(c, req, rc, err);
    if (rc != MXK_OK && err->code == MXK_OK)
        mxki_sink_set(err, rc, "kernel returned %s without a message", mxk_status_name(rc));
    if (rc != MXK_OK) {
        char msg[MXK_ERROR_MSG_MAX];
        snprintf(msg, sizeof msg, "%s", err->msg);
        mxki_sink_set(err, rc, "%s (%s, backend %s): %s", inst->params->op->def.name,
                      c->backward ? "backward" : "forward", k->backend, msg);
    }
    return rc;
}

/** Checks that `a` matches slot shape/dtype/device; `what` names the slot. */
static mxk_status check_array(const mxk_op_instance *inst, const mxk_ndarray *a, const char *kind,
                              const char *name, const mxk_shape *shape, int32_t dtype) {
    const char *op = inst->params->op->def.name;
    char got[128], want[128];
    if (!mxki_shape_equal(&a->shape, shape))
        return mxk_set_error(MXK_ERR_SHAPE, "%s: %s '%s' has shape %s, expected %s", op, kind, name,
                             mxki_shape_format(&a->shape, got, sizeof got),
                             mxki_shape_format(shape, want, sizeof want));
    if (a->dtype != dtype)
        return mxk_set_error(MXK_ERR_TYPE, "%s: %s '%s' has dtype %s, expected %s", op, kind, name,
                             mxk_dtype_name(a->dtype), mxk_dtype_name(dtype));
    if (a->chunk->ctx.dev_type != inst->ctx.dev_type || a->chunk->ctx.dev_id != inst->ctx.dev_id)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "%s: %s '%s' is on %s(%d), the operator runs on %s(%d)", op, kind,
                             name, mxk_dev_type_name(a->chunk->ctx.dev_type), a->chunk->ctx.dev_id,
                             mxk_dev_type_name(inst->ctx.dev_type), inst->ctx.dev_id);
    return MXK_OK;
}

/** Puts array `a` (may be NULL when !required) into slot `s` of the call, after checks. */
static mxk_status set_slot(mxk_op_call *c, uint32_t s, mxk_ndarray *a, int required,
                           const char *kind, const char *name, const mxk_shape *shape,
                           int32_t dtype) {
    if (a == NULL) {
        if (required)
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: %s '%s' is required (NULL given)",
                                 c->inst->params->op->def.name, kind, name);
        return MXK_OK;
    }
    mxk_status rc = check_array(c->inst, a, kind, name, shape, dtype);
    if (rc != MXK_OK)
        return rc;
    c->arrays[s] = mxki_ndarray_retain_view(a);
    return c->arrays[s] ? MXK_OK : mxki_last_error_code();
}

/** The name of written slot `i`: output, aux state, mutated input or (backward) the
 *  gradient "<input>_grad" of an input. */
static const char *written_name(const mxk_op_call *c, uint32_t i) {
    const mxk_op_params *p = c->inst->params;
    if (i >= c->aux_begin)
        return p->aux_names->names[i - c->aux_begin];
    if (i < c->out_begin)
        return p->in_names->names[i]; /* a mutated input (forward only) */
    if (!c->backward)
        return p->out_names->names[i - c->out_begin];
    const char *g = c->grad_names;
    for (uint32_t k = c->out_begin; g != NULL && k < i; k++)
        g += strlen(g) + 1;
    return g;
}

/** Backward: fills grad_names with "<input>_grad" for every input. */
static mxk_status make_grad_names(mxk_op_call *c) {
    const mxk_name_list *in = c->inst->params->in_names;
    size_t bytes = 1;
    for (uint32_t i = 0; i < in->count; i++)
        bytes += strlen(in->names[i]) + sizeof "_grad";
    char *q = c->grad_names = malloc(bytes);
    if (q == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    for (uint32_t i = 0; i < in->count; i++)
        q += sprintf(q, "%s_grad", in->names[i]) + 1;
    return MXK_OK;
}

/**
 * Completes a call whose slots are set: fills the tensors and lists the variables
 * read (the other slots) and written (outputs, aux, mutated inputs, resource slots),
 * with the names of the written arrays.
 */
static void call_finish_prepare(mxk_op_call *c) {
    mxk_op_instance *inst = c->inst;
    const mxk_phase_resources *pr = c->backward ? &inst->bwd_res : &inst->fwd_res;
    for (uint32_t i = 0; i < c->num_slots; i++) {
        mxk_tensor *t = &c->tensors[i];
        if (c->arrays[i]) {
            mxki_ndarray_to_tensor(c->arrays[i], t);
        } else {
            memset(t, 0, sizeof *t);
            t->struct_size = sizeof *t;
            t->dtype = -1;
        }
        c->tptrs[i] = t;
        if (c->arrays[i] == NULL)
            continue;
        int written = (i >= c->out_begin && i < c->out_begin + c->num_written) || i >= c->aux_begin;
        /* Mutated inputs: indices over arguments then aux states (aux are written anyway). */
        for (uint32_t m = 0; !c->backward && m < inst->num_mutate; m++)
            written |= inst->mutate[m] < inst->num_in && i == inst->mutate[m];
        if (written) {
            c->write_names[c->num_writes] = written_name(c, i);
            c->writes[c->num_writes++] = mxk_ndarray_var(c->arrays[i]);
        } else
            c->reads[c->num_reads++] = mxk_ndarray_var(c->arrays[i]);
    }
    for (uint32_t r = 0; r < pr->count; r++)
        c->writes[c->num_writes++] = mxki_resource_var(pr->slot[r]);
    c->writes[c->num_writes++] = inst->var;
}

/** Converts user reqs (NULL: all WRITE) and validates them. */
static mxk_status set_reqs(mxk_op_call *c, const mxk_op_req *req) {
    for (uint32_t i = 0; i < c->num_written; i++) {
        int32_t r = req ? (int32_t)req[i] : MXK_REQ_WRITE;
        if (r < MXK_REQ_NULL || r > MXK_REQ_ADD)
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: invalid write request %d",
                                 c->inst->params->op->def.name, r);
        c->req[i] = (mxk_op_req)r;
    }
    return MXK_OK;
}

mxk_status mxki_op_call_prepare_forward(mxk_op_instance *inst, mxk_ndarray *const *inputs,
                                        mxk_ndarray *const *outputs, const mxk_op_req *req,
                                        mxk_ndarray *const *aux, mxk_op_call **out) {
    *out = NULL;
    mxk_op_call *c = call_new(inst, 0);
    if (c == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    const mxk_op_params *p = inst->params;
    mxk_status rc = set_reqs(c, req);
    for (uint32_t i = 0; rc == MXK_OK && i < inst->num_in; i++)
        rc = set_slot(c, i, inputs[i], 1, "input", p->in_names->names[i], &inst->in_shapes[i],
                      inst->in_types[i]);
    for (uint32_t i = 0; rc == MXK_OK && i < inst->num_out; i++) {
        rc = set_slot(c, inst->num_in + i, outputs[i], 1, "output", p->out_names->names[i],
                      &inst->out_shapes[i], inst->out_types[i]);
        for (uint32_t j = 0; rc == MXK_OK && j < inst->num_in; j++)
            if (c->req[i] == MXK_REQ_WRITE && mxk_ndarray_same_memory(outputs[i], inputs[j]))
                c->req[i] = MXK_REQ_INPLACE;
    }
    for (uint32_t i = 0; rc == MXK_OK && i < inst->num_aux; i++)
        rc = set_slot(c, c->aux_begin + i, aux ? aux[i] : NULL, 1, "auxiliary state",
                      p->aux_names->names[i], &inst->aux_shapes[i], inst->aux_types[i]);
    if (rc != MXK_OK) {
        call_unref(c);
        return rc;
    }
    call_finish_prepare(c);
    *out = c;
    return MXK_OK;
}

mxk_status mxki_op_call_prepare_backward(mxk_op_instance *inst, mxk_ndarray *const *out_grads,
                                         mxk_ndarray *const *in_data, mxk_ndarray *const *out_data,
                                         mxk_ndarray *const *in_grads, const mxk_op_req *req,
                                         mxk_ndarray *const *aux, mxk_op_call **out) {
    *out = NULL;
    if (inst->kernel->def.backward == NULL)
        return mxk_set_error(MXK_ERR_UNSUPPORTED, "%s: backend '%s' has no backward",
                             inst->params->op->def.name, inst->kernel->def.backend);
    mxk_op_call *c = call_new(inst, 1);
    if (c == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    const mxk_op_params *p = inst->params;
    uint32_t nv = inst->num_visible, ni = inst->num_in, no = inst->num_out;
    mxk_status rc = set_reqs(c, req);
    if (rc == MXK_OK)
        rc = make_grad_names(c);
    for (uint32_t i = 0; rc == MXK_OK && i < nv; i++)
        rc = set_slot(c, i, out_grads ? out_grads[i] : NULL, inst->need_out_grad[i], "out_grad",
                      p->out_names->names[i], &inst->out_shapes[i], inst->out_types[i]);
    for (uint32_t i = 0; rc == MXK_OK && i < ni; i++)
        rc = set_slot(c, nv + i, in_data ? in_data[i] : NULL, inst->need_in_data[i], "input",
                      p->in_names->names[i], &inst->in_shapes[i], inst->in_types[i]);
    for (uint32_t i = 0; rc == MXK_OK && i < no; i++)
        rc = set_slot(c, nv + ni + i, out_data ? out_data[i] : NULL, inst->need_out_data[i],
                      "output", p->out_names->names[i], &inst->out_shapes[i], inst->out_types[i]);
    for (uint32_t i = 0; rc == MXK_OK && i < ni; i++) {
        mxk_ndarray *g = in_grads ? in_grads[i] : NULL;
        if (g == NULL)
            c->req[i] = MXK_REQ_NULL;
        rc = set_slot(c, c->out_begin + i, g, 0, "gradient of input", p->in_names->names[i],
                      &inst->in_shapes[i], inst->in_types[i]);
        for (uint32_t j = 0; rc == MXK_OK && g && j < nv; j++)
            if (c->req[i] == MXK_REQ_WRITE && out_grads && out_grads[j] &&
                mxk_ndarray_same_memory(g, out_grads[j]))
                c->req[i] = MXK_REQ_INPLACE;
        for (uint32_t j = 0; rc == MXK_OK && g && j < i; j++)
            if (c->req[i] == MXK_REQ_ADD && in_grads[j] && c->req[j] != MXK_REQ_NULL &&
                mxk_ndarray_same_memory(g, in_grads[j]))
                c->alias[i] = 1;
    }
    for (uint32_t i = 0; rc == MXK_OK && i < inst->num_aux; i++)
        rc = set_slot(c, c->aux_begin + i, aux ? aux[i] : NULL, 1, "auxiliary state",
                      p->aux_names->names[i], &inst->aux_shapes[i], inst->aux_types[i]);
    if (rc != MXK_OK) {
        call_unref(c);
        return rc;
    }
    call_finish_prepare(c);
    *out = c;
    return MXK_OK;
}

/** The push descriptor of one mode of a call (arg_free drops the reference it holds). */
static mxk_engine_push_desc call_desc(mxk_op_call *c, call_mode *m) {
    mxk_op_instance *inst = c->inst;
    mxk_engine_push_desc d = {
        .sync_fn = call_run,
        .arg = m,
        .arg_free = mode_release,
        .dev_type = inst->ctx.dev_type,
        .dev_id = inst->ctx.dev_id,
        .read_vars = c->reads,
        .num_read = c->num_reads,
        .write_vars = c->writes,
        .num_write = c->num_writes,
        .name = inst->params->op->def.name,
        .node = c->node,
        .backend = inst->kernel->def.backend,
        .write_names = c->write_names,
    };
    return d;
}

void mxki_op_call_set_node(mxk_op_call *c, const char *node) {
    c->node = node;
}

void mxki_op_call_set_profiling(mxk_op_call *c, int on) {
    if (on) {
        atomic_store(&c->prof_runs, 0);
        atomic_store(&c->prof_ns, 0);
    }
    atomic_store(&c->profiling, on ? 1 : 0);
}

void mxki_op_call_profile(const mxk_op_call *c, uint64_t *runs, uint64_t *ns) {
    *runs = atomic_load(&c->prof_runs);
    *ns = atomic_load(&c->prof_ns);
}

mxk_status mxki_op_call_push(mxk_op_call *c, int32_t is_train) {
    call_mode *m = &c->modes[c->backward || is_train ? 1 : 0];
    if (m->op == NULL) {
        mxk_engine_push_desc d = call_desc(c, m);
        mxk_status rc = mxki_engine_cached_op_new(&d, &m->op);
        if (rc != MXK_OK)
            return rc;
        atomic_fetch_add(&c->refcount, 1); /* held by the cached op, dropped by mode_release */
    }
    return mxki_engine_cached_op_push(m->op);
}

void mxki_op_call_free(mxk_op_call *c) {
    if (c == NULL)
        return;
    for (int m = 0; m < 2; m++)
        mxki_engine_cached_op_delete(c->modes[m].op); /* frees its reference when done */
    call_unref(c);
}

/** Pushes a prepared call once as an ordinary engine function, then drops the handle. */
static mxk_status call_push_once(mxk_op_call *c, int32_t is_train) {
    call_mode *m = &c->modes[c->backward || is_train ? 1 : 0];
    mxk_engine_push_desc d = call_desc(c, m);
    atomic_fetch_add(&c->refcount, 1); /* held by the pushed function */
    mxk_status rc = mxki_engine_push(&d);
    call_unref(c);
    return rc;
}

mxk_status mxk_op_instance_forward(mxk_op_instance *inst, int32_t is_train,
                                   mxk_ndarray *const *inputs, mxk_ndarray *const *outputs,
                                   const mxk_op_req *req, mxk_ndarray *const *aux) {
    mxk_op_call *c;
    mxk_status rc = mxki_op_call_prepare_forward(inst, inputs, outputs, req, aux, &c);
    return rc == MXK_OK ? call_push_once(c, is_train) : rc;
}

mxk_status mxk_op_instance_backward(mxk_op_instance *inst, mxk_ndarray *const *out_grads,
                                    mxk_ndarray *const *in_data, mxk_ndarray *const *out_data,
                                    mxk_ndarray *const *in_grads, const mxk_op_req *req,
                                    mxk_ndarray *const *aux) {
    mxk_op_call *c;
    mxk_status rc =
        mxki_op_call_prepare_backward(inst, out_grads, in_data, out_data, in_grads, req, aux, &c);
    return rc == MXK_OK ? call_push_once(c, 1) : rc;
}
