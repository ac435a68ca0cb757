/*
 * Error slots of the engine (upstream src/engine/threaded_engine.{h,cc},
 * exception_handling.md of the architecture docs): shared, refcounted error objects, their
 * inheritance by ops, the global list that mxki_engine_wait_all() reports from, and
 * the storage guard's check of what an op wrote.
 */
#include "engine_internal.h"
#include "mxk_assert.h"

#include "storage.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/**
 * The error recorded when allocating an error object fails. Its refcount never
 * reaches zero; it is re-armed (not reported) each time it is used.
 */
static engine_error oom_error = {1 << 30, MXK_ERR_OUT_OF_MEMORY, false, false,
                                 "out of memory while recording an engine error"};

/**
 * The global list of errors recorded on variables and not yet cleared by
 * mxki_engine_wait_all(), in the order they were recorded. Each entry holds a reference.
 */
static struct {
    pthread_mutex_t mu;
    engine_error **items;
    size_t len;
    size_t cap;
} g_errs = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

engine_error *engine_error_new(mxk_status code, const char *msg) {
    size_t n = strlen(msg);
    if (n >= MXK_ERROR_MSG_MAX)
        n = MXK_ERROR_MSG_MAX - 1;
    engine_error *e = malloc(sizeof *e + n + 1);
    if (e == NULL) {
        atomic_store(&oom_error.reported, false);
        return &oom_error;
    }
    atomic_init(&e->refcount, 1);
    atomic_init(&e->code, (int)code);
    atomic_init(&e->reported, false);
    e->listed = false;
    char *text = (char *)(e + 1);
    memcpy(text, msg, n);
    text[n] = '\0';
    e->msg = text;
    return e;
}

void engine_error_ref(engine_error *e) {
    atomic_fetch_add_explicit(&e->refcount, 1, memory_order_relaxed);
}

void engine_error_unref(engine_error *e) {
    if (e == NULL || e == &oom_error)
        return;
    int before = atomic_fetch_sub_explicit(&e->refcount, 1, memory_order_acq_rel);
    MXK_ASSERT(before > 0, "an engine error is released more often than it was referenced");
    if (before == 1)
        free(e);
}

bool engine_error_pending(const engine_error *e) {
    return e != NULL && !atomic_load(&((engine_error *)e)->reported);
}

void engine_op_set_error(engine_op *op, mxk_status code, const char *msg) {
    engine_error *e = engine_error_new(code, msg);
    engine_error_unref(op->err);
    op->err = e;
}

void engine_op_inherit_error(engine_op *op) {
    if (op->err != NULL)
        return;
    /* Pass 0: variables read, failed ones; pass 1: variables written, errors not yet
     * reported (upstream's order; writing a failed variable after the report heals it). */
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < op->ndeps; i++) {
            const engine_dep *d = &op->deps[i];
            if (pass == 0 ? !d->read : !d->write)
                continue;
            /* Safe without the lock: only an exclusive holder replaces the slot, and
             * this op holds a granted request on the variable. */
            engine_error *e = atomic_load(&d->var->err);
            if (e != NULL && (pass == 0 || engine_error_pending(e))) {
                engine_error_ref(e);
                engine_error_unref(op->err);
                op->err = e;
                return;
            }
        }
    }
}

/** Drops cleared errors from the list (called with the list locked, before growing it). */
static void prune_cleared_locked(void) {
    size_t j = 0;
    for (size_t i = 0; i < g_errs.len; i++) {
        engine_error *e = g_errs.items[i];
        if (engine_error_pending(e)) {
            g_errs.items[j++] = e;
        } else {
            e->listed = false;
            engine_error_unref(e);
        }
    }
    g_errs.len = j;
}

void engine_errors_add_global(engine_error *e) {
    pthread_mutex_lock(&g_errs.mu);
    if (!e->listed) {
        if (g_errs.len == g_errs.cap)
            prune_cleared_locked();
        if (g_errs.len == g_errs.cap) {
            size_t cap = g_errs.cap ? 2 * g_errs.cap : 16;
            engine_error **items = realloc(g_errs.items, cap * sizeof *items);
            if (items == NULL) {
                /* Cannot list it: it still reaches waiters through the variables. */
                pthread_mutex_unlock(&g_errs.mu);
                fprintf(stderr, "mxk engine: out of memory listing an error: %s\n", e->msg);
                return;
            }
            g_errs.items = items;
            g_errs.cap = cap;
        }
        e->listed = true;
        engine_error_ref(e);
        g_errs.items[g_errs.len++] = e;
    }
    pthread_mutex_unlock(&g_errs.mu);
}

/** Claims `e` for reporting: marks it reported; true when it was not reported before. */
static bool claim(engine_error *e) {
    return !atomic_exchange(&e->reported, true);
}

mxk_status engine_var_take_error(mxk_engine_var *var) {
    pthread_mutex_lock(&var->mu);
    engine_error *e = atomic_load(&var->err);
    if (e != NULL)
        engine_error_ref(e);
    pthread_mutex_unlock(&var->mu);
    if (e == NULL)
        return MXK_OK;
    claim(e);
    mxk_status code = (mxk_status)atomic_load(&e->code);
    mxk_set_error(code, "%s", e->msg);
    engine_error_unref(e);
    return code;
}

mxk_status engine_errors_take_all(void) {
    mxk_status first = MXK_OK;
    pthread_mutex_lock(&g_errs.mu);
    for (size_t i = 0; i < g_errs.len; i++) {
        engine_error *e = g_errs.items[i];
        if (claim(e) && first == MXK_OK) {
            first = (mxk_status)atomic_load(&e->code);
            mxk_set_error(first, "%s", e->msg);
        }
        e->listed = false;
        engine_error_unref(e);
    }
    g_errs.len = 0;
    pthread_mutex_unlock(&g_errs.mu);
    return first;
}

void engine_op_check_guards(engine_op *op) {
    if (op->kind != ENGINE_OP_FN || op->err != NULL)
        return;
    for (uint32_t i = 0; i < op->ndeps; i++) {
        const engine_dep *d = &op->deps[i];
        mxk_engine_var *var = d->var;
        if (!d->write || var->guard_block == NULL)
            continue;
        mxk_context ctx = {var->guard_dev_type, var->guard_dev_id};
        uint64_t bytes = 0;
        int64_t offset = 0;
        if (mxki_storage_guard_verify(ctx, var->guard_block, &bytes, &offset) == MXK_OK)
            continue;
        char who[512], array[64], msg[MXK_ERROR_MSG_MAX];
        if (d->label == NULL)
            snprintf(array, sizeof array, "write_vars[%" PRIu32 "]", d->write_pos);
        snprintf(msg, sizeof msg,
                 "storage guard: %s wrote outside array '%s' (%" PRIu64
                 " bytes): canary damaged at byte offset %" PRId64,
                 engine_op_describe(op, who, sizeof who), d->label ? d->label : array, bytes,
                 offset);
        engine_op_set_error(op, MXK_ERR_INTERNAL, msg);
        return;
    }
}
