/*
 * Cached operators (engine.h "Cached operators"): a push descriptor built into an
 * engine op once and pushed many times without allocating (MXNet's
 * Engine::NewOperator / Push / DeleteOperator; upstream include/mxnet/engine.h,
 * src/engine/threaded_engine.cc ThreadedOpr/OprBlock).
 *
 * Design
 * - A cached op owns a set of *instances*: complete engine ops (with their own
 *   request list) that differ only in their per-push state. A push takes an idle
 *   instance (or clones a new one when every instance is in flight), resets its
 *   per-push state and hands it to the running engine type exactly as
 *   mxki_engine_push hands a fresh op, so ordering, dispatch and error handling are
 *   the engine's own. Upstream allocates one OprBlock per push from an object
 *   pool; here the instances are that pool, private to the op.
 * - When an instance has completed, engine_op_finish (engine_op.c) calls
 *   engine_cached_finish instead of freeing it: the error is listed and the
 *   requests released as for any op. The instance goes back to the idle list just
 *   before its release, marked `releasing`, so that a thread woken by the release
 *   (a wait on one of its variables) that pushes the op again reuses it (waiting
 *   for the mark to clear) instead of allocating another one.
 * - Deletion marks the op; whoever sees "deleted and nothing in flight" under the
 *   op's lock (the deleting thread, or the worker finishing the last instance)
 *   frees the instances and calls the argument's arg_free, exactly once.
 */
#include "engine_internal.h"

#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/**
 * One instance: an engine op (followed by its requests and name) plus the flag that
 * makes it reusable before its completion has fully run (see engine_cached_finish).
 */
typedef struct cached_instance {
    /** Set while a finished instance still releases its requests; a push that took it
     *  from the idle list waits (briefly) until it is clear. */
    atomic_bool releasing;
    engine_op op;
} cached_instance;

/** Definition of the opaque cached op. */
struct mxk_engine_cached_op {
    pthread_mutex_t mu; /**< guards the fields below but `tmpl` */
    engine_op *idle;    /**< idle instances, linked through qnext */
    /** The op built from the descriptor, never pushed: instances are cloned from it. */
    engine_op *tmpl;
    uint32_t instances;           /**< allocated instances */
    uint32_t inflight;            /**< pushed and not yet finished or discarded */
    bool deleted;                 /**< mxki_engine_cached_op_delete was called */
    void *arg;                    /**< the descriptor's argument, shared by all pushes */
    mxk_engine_arg_free arg_free; /**< frees `arg` when the op is destroyed */
};

/** Instances allocated by every cached op (mxki_engine_cached_instances_total). */
static atomic_uint_least64_t g_instances_total;

/** The instance holding engine op `op`. */
static cached_instance *instance_of(engine_op *op) {
    return (cached_instance *)((char *)op - offsetof(cached_instance, op));
}

/**
 * A new instance with the fields of the template `src` (function, argument, device,
 * props, priority, requests, strings). NULL when out of memory.
 */
static engine_op *instance_clone(const engine_op *src) {
    cached_instance *in = malloc(sizeof *in + src->ndeps * sizeof(engine_dep) + src->text_bytes);
    if (in == NULL)
        return NULL;
    memset(in, 0, sizeof *in);
    atomic_init(&in->releasing, false);
    atomic_fetch_add_explicit(&g_instances_total, 1, memory_order_relaxed);
    engine_op *op = &in->op;
    op->kind = src->kind;
    op->sync_fn = src->sync_fn;
    op->async_fn = src->async_fn;
    op->arg = src->arg;
    op->dev_type = src->dev_type;
    op->dev_id = src->dev_id;
    op->props = src->props;
    op->priority = src->priority;
    op->cached = src->cached;
    op->handle.op = op;
    op->ndeps = src->ndeps;
    op->deps = (engine_dep *)(in + 1);
    for (uint32_t i = 0; i < src->ndeps; i++) {
        op->deps[i] = src->deps[i];
        op->deps[i].next = NULL;
        op->deps[i].op = op;
    }
    engine_op_copy_text(op, (char *)(op->deps + op->ndeps), src);
    return op;
}

/** Resets the per-push state of an idle instance before it is pushed. */
static void instance_reset(engine_op *op) {
    op->impl = NULL;
    op->err = NULL;
    op->pool = NULL;
    op->qnext = NULL;
    op->seq = 0;
    op->naive_done = 0;
    for (uint32_t i = 0; i < op->ndeps; i++)
        op->deps[i].next = NULL;
    atomic_store(&op->wait, (long)op->ndeps + 1);
}

/** Frees the cached op, its (idle) instances and its argument. Nothing may be in flight. */
static void cached_destroy(mxk_engine_cached_op *c) {
    while (c->idle != NULL) {
        engine_op *op = c->idle;
        c->idle = op->qnext;
        free(instance_of(op));
    }
    free(c->tmpl);
    if (c->arg_free != NULL)
        c->arg_free(c->arg);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/** Puts an instance back in the idle list (it may still be releasing its requests). */
static void instance_make_idle(engine_op *op) {
    mxk_engine_cached_op *c = op->cached;
    pthread_mutex_lock(&c->mu);
    op->qnext = c->idle;
    c->idle = op;
    pthread_mutex_unlock(&c->mu);
}

/**
 * Ends one push of the op (its instance is idle and fully released); destroys the op
 * when it was deleted and this was its last push in flight.
 */
static void push_end(mxk_engine_cached_op *c) {
    pthread_mutex_lock(&c->mu);
    c->inflight--;
    bool destroy = c->deleted && c->inflight == 0;
    pthread_mutex_unlock(&c->mu);
    if (destroy)
        cached_destroy(c);
}

mxk_status mxki_engine_cached_op_new(const mxk_engine_push_desc *desc, mxk_engine_cached_op **out) {
    if (out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxki_engine_cached_op_new: out is NULL");
    *out = NULL;
    if (desc == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxki_engine_cached_op_new: desc is NULL");
    mxk_engine_cached_op *c = calloc(1, sizeof *c);
    if (c == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "mxki_engine_cached_op_new(%s): out of memory",
                             desc->name ? desc->name : "unnamed");
    engine_op *op = NULL;
    mxk_status st = engine_op_new(desc, &op);
    if (st != MXK_OK) {
        free(c);
        return st;
    }
    op->arg_free = NULL; /* the cached op frees the argument once, at destruction */
    op->cached = c;
    engine_op *first = instance_clone(op);
    if (first == NULL) {
        free(op);
        free(c);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "mxki_engine_cached_op_new(%s): out of memory",
                             desc->name ? desc->name : "unnamed");
    }
    pthread_mutex_init(&c->mu, NULL);
    c->arg = desc->arg;
    c->arg_free = desc->arg_free;
    c->tmpl = op;
    c->idle = first;
    c->instances = 1;
    *out = c;
    return MXK_OK;
}

mxk_status mxki_engine_cached_op_push(mxk_engine_cached_op *c) {
    if (c == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxki_engine_cached_op_push: op is NULL");
    pthread_mutex_lock(&c->mu);
    if (c->deleted) {
        pthread_mutex_unlock(&c->mu);
        return mxk_set_error(MXK_ERR_STATE, "mxki_engine_cached_op_push(%s): the op was deleted",
                             c->tmpl->name[0] ? c->tmpl->name : "unnamed");
    }
    engine_op *op = c->idle;
    if (op != NULL) {
        c->idle = op->qnext;
    } else {
        op = instance_clone(c->tmpl);
        if (op == NULL) {
            pthread_mutex_unlock(&c->mu);
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY,
                                 "mxki_engine_cached_op_push(%s): out of memory",
                                 c->tmpl->name[0] ? c->tmpl->name : "unnamed");
        }
        c->instances++;
    }
    c->inflight++;
    pthread_mutex_unlock(&c->mu);
    /* An instance whose completion is still releasing its requests: wait for it. */
    while (atomic_load_explicit(&instance_of(op)->releasing, memory_order_acquire))
        sched_yield();
    instance_reset(op);
    if (!engine_enter()) {
        instance_make_idle(op);
        push_end(c);
        return mxk_set_error(MXK_ERR_STATE,
                             "mxki_engine_cached_op_push(%s): the engine is not running (never "
                             "started, or stopped); call mxki_engine_start() first",
                             op->name[0] ? op->name : "unnamed");
    }
    op->impl = engine_current_impl();
    mxk_status st = op->impl->push(op);
    if (st != MXK_OK)
        engine_op_discard(op); /* engine_cached_discard: recycles and leaves */
    return st;
}

void mxki_engine_cached_op_delete(mxk_engine_cached_op *c) {
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    c->deleted = true;
    bool destroy = c->inflight == 0;
    pthread_mutex_unlock(&c->mu);
    if (destroy)
        cached_destroy(c);
}

uint32_t mxki_engine_cached_op_instances(mxk_engine_cached_op *c) {
    pthread_mutex_lock(&c->mu);
    uint32_t n = c->instances;
    pthread_mutex_unlock(&c->mu);
    return n;
}

void engine_cached_finish(engine_op *op) {
    /* As engine_op_finish, except that the argument stays and the instance is kept.
     * The instance goes back to the idle list before its requests are released, so
     * that a thread woken by the release (a wait on one of its variables) finds it
     * there when it pushes again; `releasing` holds that push back until the release
     * no longer touches the instance. */
    mxk_engine_cached_op *c = op->cached;
    cached_instance *in = instance_of(op);
    if (engine_error_pending(op->err))
        engine_errors_add_global(op->err);
    atomic_store_explicit(&in->releasing, true, memory_order_relaxed);
    instance_make_idle(op);
    engine_deps_release(op, op->impl->uses_queues);
    engine_error *err = op->err;
    op->err = NULL;
    atomic_store_explicit(&in->releasing, false, memory_order_release);
    engine_error_unref(err);
    push_end(c);
    engine_leave();
}

void engine_cached_discard(engine_op *op) {
    engine_error_unref(op->err);
    op->err = NULL;
    mxk_engine_cached_op *c = op->cached;
    instance_make_idle(op);
    push_end(c);
    engine_leave();
}

uint64_t mxki_engine_cached_instances_total(void) {
    return atomic_load(&g_instances_total);
}
