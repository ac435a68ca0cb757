/*
 * cpu-blas plugin: threads (the thread knob and the plugin's worker pool).
 *
 * mxk has one knob for CPU threads (mxk_set_num_threads, handed to kernels as
 * mxk_op_ctx.num_threads), capped here by the plugin option `num_threads`.
 * Kernels split their work over that many threads with cb_parallel_for and
 * cb_sgemm: the calling engine thread runs part 0 and workers of this pool the
 * others. OpenBLAS itself is kept at one thread (set once at init), so there is
 * one pool and no second set of threads spinning against it: a matrix product is
 * split into column or row blocks here, each block one single-threaded sgemm.
 *
 * The pool: workers are created on first use and live until mxk_plugin_shutdown
 * (or the library's destructor). A region is published as one atomic word,
 * (generation << 16) | thread count, after the task of each participating
 * worker has been written into that worker's slot; a worker whose index is past
 * the count reads nothing else, so slots are only touched by their owner and
 * the dispatcher, ordered by the word (release / acquire) and by `g_pending`
 * (each participant's release decrement, the dispatcher's acquire wait). Idle
 * workers poll the word for CB_SPIN_NS (the gaps between the regions of one
 * training step are microseconds), then sleep on a condition variable. One
 * region runs at a time: a kernel that finds the pool busy (another engine
 * thread's kernel, or a nested call from inside a region) runs its work on its
 * own thread, which gives the same result. A child of fork() starts with an
 * empty pool.
 */
#include <cblas.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "cpu_blas.h"

/** Most threads of one region, the caller included. */
#define CB_POOL_MAX 64
/** How long an idle worker polls for the next region before sleeping, ns. */
#define CB_SPIN_NS 200000
/** Fewest multiply-adds per thread worth splitting a matrix product for. */
#define CB_GEMM_GRAIN (INT64_C(1) << 19)

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define CB_CPU_RELAX() __builtin_ia32_pause()
#else
#define CB_CPU_RELAX() ((void)0)
#endif

/** Plugin option num_threads (0: not set). Written once in init. */
static int g_option_threads;

/** A worker's part of the current region. */
typedef struct cb_slot {
    cb_task_fn fn;
    void *arg;
} cb_slot;

/** Held by the thread running a region (and by shutdown). */
static pthread_mutex_t g_dispatch = PTHREAD_MUTEX_INITIALIZER;
/** Guards sleeping: workers wait on g_wake under it. */
static pthread_mutex_t g_sleep_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_wake = PTHREAD_COND_INITIALIZER;
/** Worker threads (index i runs part i + 1); count guarded by g_dispatch. */
static pthread_t g_workers[CB_POOL_MAX - 1];
static int g_num_workers;
/** Per-worker task of the current region. */
static cb_slot g_slots[CB_POOL_MAX - 1];
/** The generation before a worker's first region (written before it is created). */
static uint64_t g_start_gen[CB_POOL_MAX - 1];
/** (generation << 16) | participating thread count of the last region. */
static _Atomic uint64_t g_job;
/** Participating workers that have not finished the current region. */
static atomic_int g_pending;
/** Workers asleep on g_wake. */
static atomic_int g_sleepers;
/** 1: workers exit. */
static atomic_int g_stop;

/** Monotonic nanoseconds. */
static int64_t cb_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/** Waits until the job word's generation differs from `seen` (or stop); returns the word. */
static uint64_t cb_wait_job(uint64_t seen) {
    int64_t t0 = cb_now_ns();
    for (unsigned i = 1;; i++) {
        uint64_t job = atomic_load_explicit(&g_job, memory_order_acquire);
        if ((job >> 16) != seen || atomic_load_explicit(&g_stop, memory_order_relaxed))
            return job;
        CB_CPU_RELAX();
        if (i % 256 == 0 && cb_now_ns() - t0 > CB_SPIN_NS)
            break;
    }
    pthread_mutex_lock(&g_sleep_lock);
    atomic_fetch_add(&g_sleepers, 1);
    uint64_t job;
    while (((job = atomic_load(&g_job)) >> 16) == seen && !atomic_load(&g_stop))
        pthread_cond_wait(&g_wake, &g_sleep_lock);
    atomic_fetch_sub(&g_sleepers, 1);
    pthread_mutex_unlock(&g_sleep_lock);
    return job;
}

/** A worker: runs its part of each region it takes part in until stopped. */
static void *cb_worker(void *p) {
    int index = (int)(intptr_t)p;
    uint64_t seen = g_start_gen[index];
    for (;;) {
        uint64_t job = cb_wait_job(seen);
        if (atomic_load(&g_stop))
            return NULL;
        seen = job >> 16;
        int nt = (int)(job & 0xFFFF);
        if (index + 1 < nt) {
            cb_slot s = g_slots[index];
            s.fn(s.arg, index + 1, nt);
            atomic_fetch_sub_explicit(&g_pending, 1, memory_order_release);
        }
    }
}

/** Stops and joins the workers (mxk_plugin_shutdown, and the library's destructor). */
void cb_threads_shutdown(void) {
    pthread_mutex_lock(&g_dispatch);
    if (g_num_workers > 0) {
        atomic_store(&g_stop, 1);
        pthread_mutex_lock(&g_sleep_lock);
        pthread_cond_broadcast(&g_wake);
        pthread_mutex_unlock(&g_sleep_lock);
        for (int i = 0; i < g_num_workers; i++)
            pthread_join(g_workers[i], NULL);
        g_num_workers = 0;
        atomic_store(&g_stop, 0);
    }
    pthread_mutex_unlock(&g_dispatch);
}

/** Joins the workers before the library is unmapped (dlclose without shutdown). */
__attribute__((destructor)) static void cb_threads_fini(void) {
    cb_threads_shutdown();
}

/**
 * In the child of fork(): the workers did not survive, and the locks may have
 * been held by threads that no longer exist; start from an empty pool.
 */
static void cb_atfork_child(void) {
    g_num_workers = 0;
    pthread_mutex_init(&g_dispatch, NULL);
    pthread_mutex_init(&g_sleep_lock, NULL);
    pthread_cond_init(&g_wake, NULL);
    atomic_store(&g_sleepers, 0);
    atomic_store(&g_pending, 0);
}

static pthread_once_t g_atfork_once = PTHREAD_ONCE_INIT;

/** Registers cb_atfork_child (once per process). */
static void cb_register_atfork(void) {
    pthread_atfork(NULL, NULL, cb_atfork_child);
}

/** Records the option and pins OpenBLAS to one thread (see cpu_blas.h). */
void cb_threads_init(int64_t option_threads) {
    g_option_threads = (int)option_threads;
    openblas_set_num_threads(1);
    pthread_once(&g_atfork_once, cb_register_atfork);
}

/** The thread count a call with `ctx` may use (see cpu_blas.h). */
int cb_num_threads(const mxk_op_ctx *ctx) {
    int n = 0;
    if (ctx != NULL && MXK_SDK_HAS_FIELD(ctx, mxk_op_ctx, num_threads) && ctx->num_threads <= 4096u)
        n = (int)ctx->num_threads;
    if (n <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = g_option_threads > 0 ? g_option_threads : cpus > 0 ? (int)cpus : 1;
    } else if (g_option_threads > 0 && n > g_option_threads) {
        n = g_option_threads;
    }
    return n < CB_POOL_MAX ? n : CB_POOL_MAX;
}

/** Runs fn(arg, t, nt) for t in [0, nt) (see cpu_blas.h). */
void cb_parallel_run(int nt, cb_task_fn fn, void *arg) {
    if (nt > CB_POOL_MAX)
        nt = CB_POOL_MAX;
    if (nt <= 1 || pthread_mutex_trylock(&g_dispatch) != 0) {
        fn(arg, 0, 1);
        return;
    }
    while (g_num_workers < nt - 1) {
        g_start_gen[g_num_workers] = atomic_load(&g_job) >> 16;
        if (pthread_create(&g_workers[g_num_workers], NULL, cb_worker,
                           (void *)(intptr_t)g_num_workers) != 0)
            break;
        g_num_workers++;
    }
    if (nt > g_num_workers + 1)
        nt = g_num_workers + 1;
    if (nt <= 1) {
        pthread_mutex_unlock(&g_dispatch);
        fn(arg, 0, 1);
        return;
    }
    for (int i = 0; i < nt - 1; i++)
        g_slots[i] = (cb_slot){fn, arg};
    atomic_store_explicit(&g_pending, nt - 1, memory_order_relaxed);
    uint64_t gen = (atomic_load_explicit(&g_job, memory_order_relaxed) >> 16) + 1;
    atomic_store(&g_job, (gen << 16) | (uint64_t)nt);
    if (atomic_load(&g_sleepers) > 0) {
        pthread_mutex_lock(&g_sleep_lock);
        pthread_cond_broadcast(&g_wake);
        pthread_mutex_unlock(&g_sleep_lock);
    }
    fn(arg, 0, nt);
    for (unsigned i = 1; atomic_load_explicit(&g_pending, memory_order_acquire) > 0; i++) {
        if (i < 4096)
            CB_CPU_RELAX();
        else
            sched_yield();
    }
    pthread_mutex_unlock(&g_dispatch);
}

/** A range loop split over the region's threads. */
typedef struct cb_range_task {
    cb_range_fn fn;
    void *arg;
    int64_t n;
} cb_range_task;

/** Part t of nt of [0, n): [n t / nt, n (t + 1) / nt). */
static void cb_range_part(void *p, int t, int nt) {
    const cb_range_task *r = p;
    int64_t b = r->n * t / nt, e = r->n * (t + 1) / nt;
    if (b < e)
        r->fn(r->arg, b, e);
}

/** Runs fn over [0, n) in contiguous parts (see cpu_blas.h). */
void cb_parallel_for(const mxk_op_ctx *ctx, int64_t n, int64_t grain, cb_range_fn fn, void *arg) {
    if (n <= 0)
        return;
    int64_t nt = cb_num_threads(ctx);
    if (grain > 0 && n / grain < nt)
        nt = n / grain;
    if (nt <= 1) {
        fn(arg, 0, n);
        return;
    }
    cb_range_task r = {fn, arg, n};
    cb_parallel_run((int)nt, cb_range_part, &r);
}

/** One sgemm split into row blocks (split_m) or 16-aligned column blocks of C. */
typedef struct cb_gemm_task {
    int split_m;
    CBLAS_TRANSPOSE ta, tb;
    int M, N, K;
    float alpha, beta;
    const float *A, *B;
    float *C;
    int lda, ldb, ldc;
} cb_gemm_task;

/** Block t of nt of a split sgemm. */
static void cb_gemm_part(void *p, int t, int nt) {
    const cb_gemm_task *g = p;
    if (g->split_m) {
        int b = (int)((int64_t)g->M * t / nt), e = (int)((int64_t)g->M * (t + 1) / nt);
        const float *a = g->ta == CblasNoTrans ? g->A + (size_t)b * (size_t)g->lda : g->A + b;
        if (b < e)
            cblas_sgemm(CblasRowMajor, g->ta, g->tb, e - b, g->N, g->K, g->alpha, a, g->lda, g->B,
                        g->ldb, g->beta, g->C + (size_t)b * (size_t)g->ldc, g->ldc);
        return;
    }
    int blocks = (g->N + 15) / 16;
    int b = (int)((int64_t)blocks * t / nt) * 16, e = (int)((int64_t)blocks * (t + 1) / nt) * 16;
    if (e > g->N)
        e = g->N;
    const float *bb = g->tb == CblasNoTrans ? g->B + b : g->B + (size_t)b * (size_t)g->ldb;
    if (b < e)
        cblas_sgemm(CblasRowMajor, g->ta, g->tb, g->M, e - b, g->K, g->alpha, g->A, g->lda, bb,
                    g->ldb, g->beta, g->C + b, g->ldc);
}

/** Row-major sgemm over the kernel's threads (see cpu_blas.h). */
void cb_sgemm(const mxk_op_ctx *ctx, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int M, int N, int K,
              float alpha, const float *A, int lda, const float *B, int ldb, float beta, float *C,
              int ldc) {
    int64_t nt = cb_num_threads(ctx);
    int64_t work = (int64_t)M * N * K / CB_GEMM_GRAIN;
    if (work < nt)
        nt = work;
    int split_m = M > N;
    int64_t units = split_m ? M : (N + 15) / 16;
    if (units < nt)
        nt = units;
    cb_gemm_task g = {split_m, ta, tb, M, N, K, alpha, beta, A, B, C, lda, ldb, ldc};
    if (nt <= 1)
        cb_gemm_part(&g, 0, 1);
    else
        cb_parallel_run((int)nt, cb_gemm_part, &g);
}
