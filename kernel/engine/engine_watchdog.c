/*
 * The engine watchdog (MXK_ENGINE_WATCHDOG=SECONDS; contract in engine.h): running
 * functions are linked into one list while they run; a monitor thread scans it a few
 * times per limit and reports each function running longer than the limit once.
 * Upstream MXNet has no such monitor (a hung kernel hangs WaitToRead / WaitAll
 * silently, src/engine/threaded_engine.cc); the report only names the culprit.
 */
#include "engine_internal.h"

#include "env.h"

#include <errno.h>
#include <string.h>
#include <time.h>

/** Largest MXK_ENGINE_WATCHDOG accepted (one day). */
#define WATCHDOG_MAX_SECONDS 86400

/** The watchdog; `mu` guards every field but `on`, and the ops' wd_* fields. */
static struct {
    atomic_bool on;     /**< a monitor runs; constant while ops run */
    pthread_mutex_t mu; /**< guards the fields below */
    pthread_cond_t cv;  /**< wakes the monitor early at stop (monotonic clock) */
    bool stopping;      /**< the monitor should exit */
    int seconds;        /**< the limit */
    engine_op *running; /**< head of the list of running functions */
    pthread_t thread;   /**< the monitor */
} W = {.mu = PTHREAD_MUTEX_INITIALIZER};

/** Monotonic time in nanoseconds. */
static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/**
 * Reports every listed function running longer than the limit and not reported yet
 * (W.mu held; the message is logged under the lock, so a reported op cannot finish
 * and be freed while it is described).
 */
static void report_overdue_locked(int64_t now) {
    int64_t limit = (int64_t)W.seconds * 1000000000;
    for (engine_op *op = W.running; op != NULL; op = op->wd_next) {
        if (op->wd_reported || now - op->wd_start_ns < limit)
            continue;
        op->wd_reported = true;
        char who[512];
        mxki_log(MXK_LOG_ERROR,
                 "engine watchdog: %s has been running for more than %d s "
                 "(MXK_ENGINE_WATCHDOG=%d); it cannot be interrupted: waits on the variables "
                 "it uses, mxki_engine_wait_all and mxki_engine_stop wait for it",
                 engine_op_describe(op, who, sizeof who), W.seconds, W.seconds);
    }
}

/** The monitor thread: scans four times per limit until stopped. */
static void *watchdog_main(void *arg) {
    (void)arg;
    int64_t period = (int64_t)W.seconds * 250000000;
    pthread_mutex_lock(&W.mu);
    while (!W.stopping) {
        int64_t t = now_ns() + period;
        struct timespec until = {(time_t)(t / 1000000000), (long)(t % 1000000000)};
        int rc = 0;
        while (!W.stopping && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&W.cv, &W.mu, &until);
        if (!W.stopping)
            report_overdue_locked(now_ns());
    }
    pthread_mutex_unlock(&W.mu);
    return NULL;
}

mxk_status engine_watchdog_start(void) {
    int seconds = 0;
    mxk_status st = engine_env_int("MXK_ENGINE_WATCHDOG", 0, 0, WATCHDOG_MAX_SECONDS, &seconds);
    if (st != MXK_OK || seconds == 0)
        return st;
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&W.cv, &attr);
    pthread_condattr_destroy(&attr);
    W.seconds = seconds;
    W.stopping = false;
    W.running = NULL;
    int rc = pthread_create(&W.thread, NULL, watchdog_main, NULL);
    if (rc != 0) {
        pthread_cond_destroy(&W.cv);
        return mxk_set_error(MXK_ERR_INTERNAL, "engine: cannot start the watchdog thread: %s",
                             strerror(rc));
    }
    atomic_store(&W.on, true);
    return MXK_OK;
}

void engine_watchdog_stop(void) {
    if (!atomic_load(&W.on))
        return;
    pthread_mutex_lock(&W.mu);
    W.stopping = true;
    pthread_cond_signal(&W.cv);
    pthread_mutex_unlock(&W.mu);
    pthread_join(W.thread, NULL);
    pthread_cond_destroy(&W.cv);
    atomic_store(&W.on, false);
}

void engine_watchdog_begin(engine_op *op) {
    if (!atomic_load_explicit(&W.on, memory_order_relaxed))
        return;
    pthread_mutex_lock(&W.mu);
    op->wd_start_ns = now_ns();
    op->wd_reported = false;
    op->wd_prev = NULL;
    op->wd_next = W.running;
    if (W.running != NULL)
        W.running->wd_prev = op;
    W.running = op;
    pthread_mutex_unlock(&W.mu);
}

void engine_watchdog_end(engine_op *op) {
    if (!atomic_load_explicit(&W.on, memory_order_relaxed))
        return;
    pthread_mutex_lock(&W.mu);
    if (op->wd_prev != NULL)
        op->wd_prev->wd_next = op->wd_next;
    else
        W.running = op->wd_next;
    if (op->wd_next != NULL)
        op->wd_next->wd_prev = op->wd_prev;
    pthread_mutex_unlock(&W.mu);
}
