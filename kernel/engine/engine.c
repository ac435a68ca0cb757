/*
 * Public entry points of the engine: start/stop and the choice of engine type,
 * pushes, waits and deletions, and the global count of pending work that
 * mxki_engine_wait_all() and mxki_engine_stop() wait on.
 */
#include "engine_internal.h"

#include "env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/**
 * Global engine state. `pending` counts admitted work (pushed ops not yet finished,
 * waits in progress); `accepting` says whether new work is admitted. A pusher
 * increments `pending` before checking `accepting`, and stop clears `accepting`
 * before waiting for `pending` to reach zero, so no work slips past a stop.
 */
static struct {
    pthread_mutex_t life_mu;                               /**< serialises start and stop */
    bool running;                                          /**< guarded by life_mu */
    atomic_bool accepting;                                 /**< work is admitted */
    _Atomic(const engine_impl *) impl;                     /**< the running engine type */
    atomic_long pending;                                   /**< admitted, unfinished work */
    pthread_mutex_t idle_mu;                               /**< pairs with idle_cv */
    pthread_cond_t idle_cv;                                /**< broadcast when pending reaches 0 */
    _Atomic(const mxk_engine_stream_hooks *) stream_hooks; /**< NULL: no streams */
} G = {
    .life_mu = PTHREAD_MUTEX_INITIALIZER,
    .idle_mu = PTHREAD_MUTEX_INITIALIZER,
    .idle_cv = PTHREAD_COND_INITIALIZER,
};

/** The engine types, by the name MXK_ENGINE_TYPE selects them with. */
static const engine_impl *const engine_types[] = {&engine_threaded_impl, &engine_naive_impl};

bool engine_enter(void) {
    atomic_fetch_add(&G.pending, 1);
    if (atomic_load(&G.accepting))
        return true;
    engine_leave();
    return false;
}

void engine_leave(void) {
    if (atomic_fetch_sub(&G.pending, 1) == 1) {
        pthread_mutex_lock(&G.idle_mu);
        pthread_cond_broadcast(&G.idle_cv);
        pthread_mutex_unlock(&G.idle_mu);
    }
}

void engine_wait_idle(void) {
    pthread_mutex_lock(&G.idle_mu);
    while (atomic_load(&G.pending) > 0)
        pthread_cond_wait(&G.idle_cv, &G.idle_mu);
    pthread_mutex_unlock(&G.idle_mu);
}

const mxk_engine_stream_hooks *engine_stream_hooks(void) {
    return atomic_load(&G.stream_hooks);
}

/** engine_env_int (engine_internal.h): mxki_env_uint64 for a setting of type int, lo >= 0. */
mxk_status engine_env_int(const char *name, int def, int lo, int hi, int *out) {
    uint64_t v = 0;
    mxk_status st = mxki_env_uint64("engine", name, (uint64_t)def, (uint64_t)lo, (uint64_t)hi, &v);
    if (st == MXK_OK)
        *out = (int)v;
    return st;
}

/** Picks the engine type named by MXK_ENGINE_TYPE (default ThreadedEnginePerDevice). */
static mxk_status select_type(const engine_impl **out) {
    const char *s = getenv("MXK_ENGINE_TYPE");
    if (s == NULL || *s == '\0') {
        *out = &engine_threaded_impl;
        return MXK_OK;
    }
    char valid[128] = "";
    for (size_t i = 0; i < sizeof engine_types / sizeof engine_types[0]; i++) {
        if (strcmp(s, engine_types[i]->name) == 0) {
            *out = engine_types[i];
            return MXK_OK;
        }
        snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s", i ? ", " : "",
                 engine_types[i]->name);
    }
    return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                         "MXK_ENGINE_TYPE='%s' is not a known engine type; valid types: %s", s,
                         valid);
}

mxk_status mxki_engine_start(void) {
    mxk_status st = MXK_OK;
    pthread_mutex_lock(&G.life_mu);
    if (!G.running) {
        const engine_impl *impl = NULL;
        st = select_type(&impl);
        if (st == MXK_OK)
            st = impl->start();
        if (st == MXK_OK && (st = engine_watchdog_start()) != MXK_OK)
            impl->stop();
        if (st == MXK_OK) {
            atomic_store(&G.impl, impl);
            atomic_store(&G.accepting, true);
            G.running = true;
        }
    }
    pthread_mutex_unlock(&G.life_mu);
    return st;
}

void mxki_engine_stop(void) {
    pthread_mutex_lock(&G.life_mu);
    if (G.running) {
        /* Let work in flight (and what it pushes) finish, then refuse new work. */
        engine_wait_idle();
        atomic_store(&G.accepting, false);
        engine_wait_idle();
        engine_watchdog_stop();
        atomic_load(&G.impl)->stop();
        G.running = false;
    }
    pthread_mutex_unlock(&G.life_mu);
}

const char *mxki_engine_type_name(void) {
    const engine_impl *impl = atomic_load(&G.impl);
    return impl != NULL && atomic_load(&G.accepting) ? impl->name : "none";
}

const engine_impl *engine_current_impl(void) {
    return atomic_load(&G.impl);
}

void mxki_engine_set_stream_hooks(const mxk_engine_stream_hooks *hooks) {
    atomic_store(&G.stream_hooks, hooks);
}

mxk_status mxki_engine_push(const mxk_engine_push_desc *desc) {
    if (desc == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxki_engine_push: desc is NULL");
    engine_op *op = NULL;
    mxk_status st = engine_op_new(desc, &op);
    if (st != MXK_OK) {
        if (desc->arg_free != NULL)
            desc->arg_free(desc->arg);
        return st;
    }
    if (!engine_enter()) {
        op->impl = NULL;
        if (op->arg_free != NULL)
            op->arg_free(op->arg);
        free(op);
        return mxk_set_error(MXK_ERR_STATE,
                             "mxki_engine_push(%s): the engine is not running (never started, or "
                             "stopped); call mxki_engine_start() first",
                             desc->name ? desc->name : "unnamed");
    }
    op->impl = atomic_load(&G.impl);
    st = op->impl->push(op);
    if (st != MXK_OK)
        engine_op_discard(op);
    return st;
}

mxk_status mxki_engine_push_sync(mxk_engine_sync_fn fn, void *arg, mxk_engine_arg_free arg_free,
                                 int32_t dev_type, int32_t dev_id, mxk_engine_var *const *read_vars,
                                 uint32_t num_read, mxk_engine_var *const *write_vars,
                                 uint32_t num_write, uint32_t props, int32_t priority,
                                 const char *name) {
    mxk_engine_push_desc d = {
        .sync_fn = fn,
        .arg = arg,
        .arg_free = arg_free,
        .dev_type = dev_type,
        .dev_id = dev_id,
        .read_vars = read_vars,
        .num_read = num_read,
        .write_vars = write_vars,
        .num_write = num_write,
        .props = props,
        .priority = priority,
        .name = name,
    };
    if (fn == NULL) {
        if (arg_free != NULL)
            arg_free(arg);
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxki_engine_push_sync(%s): fn is NULL",
                             name ? name : "unnamed");
    }
    return mxki_engine_push(&d);
}

mxk_status mxki_engine_wait_var(mxk_engine_var *var) {
    if (var == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxki_engine_wait_var: var is NULL");
    if (!engine_enter())
        return engine_var_take_error(var); /* not running: nothing is in flight */
    return atomic_load(&G.impl)->wait_var(var);
}

mxk_status mxki_engine_wait_all(void) {
    engine_wait_idle();
    return engine_errors_take_all();
}

void mxki_engine_delete_var(mxk_engine_var *var, void (*deleter)(void *), void *arg,
                            int32_t dev_type, int32_t dev_id) {
    if (var == NULL)
        return;
    if (!engine_enter()) {
        /* Not running: nothing can be using the variable any more. */
        if (deleter != NULL)
            deleter(arg);
        engine_var_destroy(var);
        return;
    }
    if (dev_type != MXK_DEV_GPU || dev_id < 0 || dev_id >= MXK_ENGINE_MAX_GPUS) {
        dev_type = MXK_DEV_CPU;
        dev_id = 0;
    }
    const engine_impl *impl = atomic_load(&G.impl);
    for (;;) {
        engine_op *op = engine_op_new_exclusive(ENGINE_OP_DELETE, var, dev_type, dev_id);
        if (op == NULL)
            break;
        op->impl = impl;
        op->del_fn = deleter;
        op->del_arg = arg;
        if (impl->push(op) == MXK_OK)
            return;
        free(op);
        if (dev_type == MXK_DEV_CPU)
            break;
        dev_type = MXK_DEV_CPU; /* no worker for that GPU: delete on the CPU */
        dev_id = 0;
    }
    engine_leave();
    fprintf(stderr, "mxk engine: cannot schedule the deletion of variable %p (%s); it is leaked\n",
            (void *)var, mxki_last_error_message());
}
