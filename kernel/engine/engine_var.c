/*
 * Engine variables and their request queues (upstream ThreadedVar,
 * src/engine/threaded_engine.h):
 * consecutive reads share a variable, a write (or wait/delete) holds it alone, and
 * requests are granted in the order they were queued.
 */
#include "engine_internal.h"
#include "mxk_assert.h"

#include <stdio.h>
#include <stdlib.h>

mxk_engine_var *mxki_engine_new_var(void) {
    mxk_engine_var *var = calloc(1, sizeof *var);
    if (var == NULL) {
        mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "mxki_engine_new_var: out of memory");
        return NULL;
    }
    pthread_mutex_init(&var->mu, NULL);
    atomic_init(&var->version, 0);
    atomic_init(&var->err, NULL);
    return var;
}

void mxki_engine_var_set_guard(mxk_engine_var *var, int32_t dev_type, int32_t dev_id, void *block) {
    var->guard_dev_type = dev_type;
    var->guard_dev_id = dev_id;
    var->guard_block = block;
}

uint64_t mxki_engine_var_version(const mxk_engine_var *var) {
    return atomic_load(&((mxk_engine_var *)var)->version);
}

void engine_var_destroy(mxk_engine_var *var) {
    MXK_ASSERT(var->qhead == NULL && var->running_reads == 0,
               "a variable is destroyed with requests queued or reads running");
    engine_error_unref(atomic_load(&var->err));
    pthread_mutex_destroy(&var->mu);
    free(var);
}

/** Counts `n` granted requests of `op`; dispatches it when none is left. */
static void op_granted(engine_op *op, long n) {
    long before = atomic_fetch_sub(&op->wait, n);
    MXK_ASSERT(before >= n, "an op is granted more requests than it made");
    if (before == n)
        op->impl->dispatch(op);
}

/**
 * The invariants of a variable's state (var locked; engine_internal.h): no read
 * runs while a write is active, the queue's ends agree, and the head of a non-empty
 * queue is a write whenever reads are running (a read is granted at once only when
 * nothing is queued).
 */
static void check_var_locked(const mxk_engine_var *var) {
    MXK_ASSERT(var->running_reads >= 0, "a variable's running read count is negative");
    MXK_ASSERT(!var->write_active || var->running_reads == 0,
               "reads run while a write holds the variable");
    MXK_ASSERT((var->qhead == NULL) == (var->qtail == NULL),
               "a variable's queue head and tail disagree");
    MXK_ASSERT(var->running_reads == 0 || var->qhead == NULL || var->qhead->write,
               "a read is queued behind running reads");
}

/** Appends a request to the variable's queue (var locked). */
static void enqueue_locked(mxk_engine_var *var, engine_dep *d) {
    d->next = NULL;
    if (var->qtail != NULL)
        var->qtail->next = d;
    else
        var->qhead = d;
    var->qtail = d;
}

/** Removes and returns the oldest queued request (var locked, queue non-empty). */
static engine_dep *dequeue_locked(mxk_engine_var *var) {
    engine_dep *d = var->qhead;
    var->qhead = d->next;
    if (var->qhead == NULL)
        var->qtail = NULL;
    d->next = NULL;
    return d;
}

void engine_deps_append(engine_op *op) {
    long granted = 0;
    /* Lock every variable (address order, as deps are sorted) so that this op's
     * requests enter all queues at one instant w.r.t. other pushers. */
    for (uint32_t i = 0; i < op->ndeps; i++)
        pthread_mutex_lock(&op->deps[i].var->mu);
    for (uint32_t i = 0; i < op->ndeps; i++) {
        engine_dep *d = &op->deps[i];
        mxk_engine_var *var = d->var;
        bool idle = var->qhead == NULL && !var->write_active;
        if (!d->write && idle) {
            var->running_reads++;
            granted++;
        } else if (d->write && idle && var->running_reads == 0) {
            var->write_active = true;
            granted++;
        } else {
            enqueue_locked(var, d);
        }
        check_var_locked(var);
    }
    for (uint32_t i = op->ndeps; i-- > 0;)
        pthread_mutex_unlock(&op->deps[i].var->mu);
    /* The +1 held since creation keeps the op from dispatching while appending. */
    op_granted(op, granted + 1);
}

/**
 * Grants what the queue head allows after the variable became free of writers
 * (var locked): either the run of consecutive reads at the head, or, when reads are
 * not running, the write at the head. Returns the granted requests as a list.
 */
static engine_dep *grant_next_locked(mxk_engine_var *var) {
    engine_dep *list = NULL, **tail = &list;
    if (var->write_active || var->qhead == NULL)
        return NULL;
    if (var->qhead->write) {
        if (var->running_reads == 0) {
            var->write_active = true;
            list = dequeue_locked(var);
        }
        return list;
    }
    while (var->qhead != NULL && !var->qhead->write) {
        engine_dep *d = dequeue_locked(var);
        var->running_reads++;
        *tail = d;
        tail = &d->next;
    }
    return list;
}

void engine_deps_release(engine_op *op, bool queued) {
    /* A function's write records its error (own or inherited), or heals the variable. */
    bool fn = op->kind == ENGINE_OP_FN;
    for (uint32_t i = 0; i < op->ndeps; i++) {
        engine_dep *d = &op->deps[i];
        mxk_engine_var *var = d->var;
        engine_dep *granted = NULL;
        bool destroy = false;
        pthread_mutex_lock(&var->mu);
        if (d->write) {
            MXK_ASSERT(!queued || var->write_active, "a write is released that was not granted");
            if (op->kind != ENGINE_OP_WAIT)
                atomic_fetch_add(&var->version, 1);
            engine_error *old = atomic_load(&var->err);
            if (fn && old != op->err) {
                if (op->err != NULL)
                    engine_error_ref(op->err);
                atomic_store(&var->err, op->err);
                engine_error_unref(old);
            }
            if (queued)
                var->write_active = false;
            if (op->kind == ENGINE_OP_DELETE) {
                destroy = var->qhead == NULL;
                if (!destroy)
                    fprintf(stderr,
                            "mxk engine: variable %p used after mxki_engine_delete_var; "
                            "it is leaked\n",
                            (void *)var);
            }
        } else if (queued) {
            MXK_ASSERT(var->running_reads > 0, "a read is released that was not granted");
            var->running_reads--;
        }
        if (queued && !destroy) {
            granted = grant_next_locked(var);
            check_var_locked(var);
        }
        pthread_mutex_unlock(&var->mu);
        if (destroy)
            engine_var_destroy(var);
        while (granted != NULL) {
            engine_dep *next = granted->next; /* read before the op can run and be freed */
            op_granted(granted->op, 1);
            granted = next;
        }
    }
}
