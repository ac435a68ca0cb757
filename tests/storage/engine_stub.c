/*
 * A synchronous stand-in for the dependency engine, used by the storage tests only
 * while kernel/engine/ is incomplete (tests/storage/CMakeLists.txt picks it when the
 * real engine sources are missing). It implements the subset of engine.h the storage
 * and resource managers use, with NaiveEngine semantics: every push runs at once in the
 * pushing thread. A failing function marks the variables it writes; a later function
 * using a marked variable is skipped (and marks its written variables) unless pushed
 * with MXK_ENGINE_PROP_NO_SKIP. The first error is reported once by
 * mxk_engine_wait_all(), which clears every mark.
 * Thread-safe: a mutex serialises pushes (so "writes" of one variable never overlap).
 */
#include "engine.h"
#include "error.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/** A variable of the stub: a version counter and an error mark. */
struct mxk_engine_var {
    atomic_uint_fast64_t version; /**< completed writes */
    uint64_t failed_gen;          /**< == g_stub_gen: an error is recorded (guarded by lock) */
};

static pthread_mutex_t g_stub_lock = PTHREAD_MUTEX_INITIALIZER;
static mxk_status g_stub_err_code = MXK_OK;
static char g_stub_err_msg[MXK_ERROR_MSG_MAX];
/** Error generation: marks of older generations were reported and are void. */
static uint64_t g_stub_gen = 1;

/** 1 between mxk_engine_start and mxk_engine_stop; pushes fail otherwise. */
static atomic_int g_stub_running;

mxk_status mxk_engine_start(void) {
    atomic_store(&g_stub_running, 1);
    return MXK_OK;
}

void mxk_engine_stop(void) {
    atomic_store(&g_stub_running, 0);
}

const char *mxk_engine_type_name(void) {
    return "NaiveEngine";
}

mxk_engine_var *mxk_engine_new_var(void) {
    mxk_engine_var *v = calloc(1, sizeof *v);
    if (v == NULL)
        mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "engine stub: out of memory");
    return v;
}

void mxk_engine_delete_var(mxk_engine_var *var, void (*deleter)(void *), void *arg,
                           int32_t dev_type, int32_t dev_id) {
    (void)dev_type;
    (void)dev_id;
    pthread_mutex_lock(&g_stub_lock);
    if (deleter != NULL)
        deleter(arg);
    free(var);
    pthread_mutex_unlock(&g_stub_lock);
}

mxk_status mxk_engine_push(const mxk_engine_push_desc *desc) {
    if (desc == NULL || desc->sync_fn == NULL) {
        if (desc != NULL && desc->arg_free != NULL)
            desc->arg_free(desc->arg);
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "engine stub: only sync functions");
    }
    if (!atomic_load(&g_stub_running)) {
        if (desc->arg_free != NULL)
            desc->arg_free(desc->arg);
        return mxk_set_error(MXK_ERR_STATE, "engine stub: the engine is not running");
    }
    mxk_run_ctx rctx = {desc->dev_type, desc->dev_id, NULL};
    mxk_error_sink err;
    mxk_error_sink_clear(&err);
    pthread_mutex_lock(&g_stub_lock);
    int inherited = 0;
    for (uint32_t i = 0; i < desc->num_read; i++)
        inherited |= desc->read_vars[i]->failed_gen == g_stub_gen;
    for (uint32_t i = 0; i < desc->num_write; i++)
        inherited |= desc->write_vars[i]->failed_gen == g_stub_gen;
    mxk_status st = MXK_OK;
    if (!inherited || (desc->props & MXK_ENGINE_PROP_NO_SKIP))
        st = desc->sync_fn(desc->arg, &rctx, &err);
    if (st != MXK_OK && g_stub_err_code == MXK_OK) {
        g_stub_err_code = st;
        memcpy(g_stub_err_msg, err.msg, sizeof err.msg);
    }
    for (uint32_t i = 0; i < desc->num_write; i++) {
        atomic_fetch_add(&desc->write_vars[i]->version, 1);
        if (st != MXK_OK || inherited)
            desc->write_vars[i]->failed_gen = g_stub_gen;
    }
    pthread_mutex_unlock(&g_stub_lock);
    if (desc->arg_free != NULL)
        desc->arg_free(desc->arg);
    return MXK_OK;
}

mxk_status mxk_engine_push_sync(mxk_engine_sync_fn fn, void *arg, mxk_engine_arg_free arg_free,
                                int32_t dev_type, int32_t dev_id, mxk_engine_var *const *read_vars,
                                uint32_t num_read, mxk_engine_var *const *write_vars,
                                uint32_t num_write, uint32_t props, int32_t priority,
                                const char *name) {
    mxk_engine_push_desc d = {.sync_fn = fn,
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
                              .name = name};
    return mxk_engine_push(&d);
}

mxk_status mxk_engine_wait_all(void) {
    pthread_mutex_lock(&g_stub_lock);
    mxk_status st = g_stub_err_code;
    g_stub_err_code = MXK_OK;
    g_stub_gen++;
    if (st != MXK_OK)
        mxk_set_error(st, "%s", g_stub_err_msg);
    pthread_mutex_unlock(&g_stub_lock);
    return st;
}

mxk_status mxk_engine_wait_var(mxk_engine_var *var) {
    (void)var;
    return mxk_engine_wait_all();
}

uint64_t mxk_engine_var_version(const mxk_engine_var *var) {
    return atomic_load(&((mxk_engine_var *)var)->version);
}
