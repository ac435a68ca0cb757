/*
 * Helpers shared by the engine tests: time, sleeping, per-thread random numbers,
 * the engine configuration under test, and a one-shot flag with a bounded wait.
 */
#ifndef MXK_ENGINE_TEST_UTIL_H
#define MXK_ENGINE_TEST_UTIL_H

#include "engine.h"
#include "error.h"
#include "testing.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/** Monotonic time in microseconds. */
static inline int64_t t_now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/** Sleeps `us` microseconds. */
static inline void t_sleep_us(int64_t us) {
    struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/** xorshift64* step on a caller-owned state (thread-safe when each thread owns one). */
static inline uint64_t t_rand(uint64_t *state) {
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/** A random sleep of 0 .. max_us microseconds from a shared, lock-free state. */
static inline void t_random_sleep(int64_t max_us) {
    static _Atomic uint64_t seed = 0x9E3779B97F4A7C15ULL;
    uint64_t s = atomic_fetch_add(&seed, 0x9E3779B97F4A7C15ULL);
    t_sleep_us((int64_t)(t_rand(&s) % (uint64_t)(max_us + 1)));
}

/** Whether the running engine is the NaiveEngine. */
static inline bool t_is_naive(void) {
    return strcmp(mxki_engine_type_name(), "NaiveEngine") == 0;
}

/** An integer environment setting, `def` when unset. */
static inline int t_env_int(const char *name, int def) {
    const char *s = getenv(name);
    return s && *s ? atoi(s) : def;
}

/** Threads of the CPU FIFO pool of the running engine (1 for the naive engine). */
static inline int t_cpu_workers(void) {
    return t_is_naive() ? 1 : t_env_int("MXK_CPU_WORKER_NTHREADS", 1);
}

/** Threads of the CPU priority pool of the running engine (1 for the naive engine). */
static inline int t_cpu_priority_workers(void) {
    return t_is_naive() ? 1 : t_env_int("MXK_CPU_PRIORITY_NTHREADS", 4);
}

/** A flag that one thread sets and another waits for, with a timeout. */
typedef struct t_flag {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int set;
} t_flag;

#define T_FLAG_INIT                                                                                \
    { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0 }

static inline void t_flag_set(t_flag *f) {
    pthread_mutex_lock(&f->mu);
    f->set = 1;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

static inline int t_flag_get(t_flag *f) {
    pthread_mutex_lock(&f->mu);
    int v = f->set;
    pthread_mutex_unlock(&f->mu);
    return v;
}

/** Waits until the flag is set or `timeout_ms` passed; returns whether it was set. */
static inline int t_flag_wait(t_flag *f, int timeout_ms) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += timeout_ms / 1000;
    dl.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
        dl.tv_sec++;
        dl.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&f->mu);
    int rc = 0;
    while (!f->set && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&f->cv, &f->mu, &dl);
    int v = f->set;
    pthread_mutex_unlock(&f->mu);
    return v;
}

/** Pushes a CPU sync function with the given variable lists; returns the push status. */
static inline mxk_status t_push(mxk_engine_sync_fn fn, void *arg, mxk_engine_var *const *reads,
                                uint32_t nr, mxk_engine_var *const *writes, uint32_t nw) {
    return mxki_engine_push_sync(fn, arg, NULL, MXK_DEV_CPU, 0, reads, nr, writes, nw,
                                 MXK_ENGINE_PROP_NORMAL, 0, "test_fn");
}

/** Starts the engine for a test program; exits with a message when it cannot. */
static inline void t_start_engine(void) {
    mxk_status st = mxki_engine_start();
    if (st != MXK_OK) {
        fprintf(stderr, "mxki_engine_start failed: %s: %s\n", mxk_status_name(st),
                mxki_last_error_message());
        exit(1);
    }
    printf("engine: %s (cpu workers %d, priority workers %d)\n", mxki_engine_type_name(),
           t_cpu_workers(), t_cpu_priority_workers());
}

#endif /* MXK_ENGINE_TEST_UTIL_H */
