/*
 * cpu-blas plugin: the thread knob.
 *
 * mxk has one knob for CPU threads (mxk_set_num_threads, handed to kernels as
 * mxk_op_ctx.num_threads). Element-wise kernels of this plugin run on the calling
 * engine thread; BLAS calls use OpenBLAS's pool, whose size is global to the
 * process. Kernels bracket their BLAS calls with cb_blas_begin / cb_blas_end:
 * begin resizes the pool only when the wanted count differs from the last one
 * set (the common case, a constant knob, costs an atomic load and an
 * uncontended shared lock), and the shared lock keeps a resize from running
 * while another engine thread is inside OpenBLAS (openblas_set_num_threads is
 * not safe against concurrent BLAS calls).
 */
#include <cblas.h>
#include <pthread.h>
#include <stdatomic.h>

#include "cpu_blas.h"

/** Plugin option num_threads (0: not set). Written once in init. */
static int g_option_threads;
/** OpenBLAS's thread count when the plugin was initialised (its own default). */
static int g_default_threads = 1;
/** Last count passed to openblas_set_num_threads (0: never called). */
static atomic_int g_last_threads;
/** Shared by BLAS sections, exclusive while resizing the OpenBLAS pool. */
static pthread_rwlock_t g_blas_lock = PTHREAD_RWLOCK_INITIALIZER;

/** Records the option and OpenBLAS's default (see cpu_blas.h). */
void cb_threads_init(int64_t option_threads) {
    g_option_threads = (int)option_threads;
    int d = openblas_get_num_threads();
    g_default_threads = d > 0 ? d : 1;
    atomic_store(&g_last_threads, 0);
}

/** The thread count a call with `ctx` may use (see cb_blas_begin). */
static int cb_threads_wanted(const mxk_op_ctx *ctx) {
    int n = 0;
    if (MXK_SDK_HAS_FIELD(ctx, mxk_op_ctx, num_threads) && ctx->num_threads <= 4096u)
        n = (int)ctx->num_threads;
    if (n <= 0)
        n = g_option_threads > 0 ? g_option_threads : g_default_threads;
    else if (g_option_threads > 0 && n > g_option_threads)
        n = g_option_threads;
    return n;
}

/** Sizes the pool for this call and enters a BLAS section (see cpu_blas.h). */
int cb_blas_begin(const mxk_op_ctx *ctx) {
    int n = cb_threads_wanted(ctx);
    if (atomic_load_explicit(&g_last_threads, memory_order_acquire) != n) {
        pthread_rwlock_wrlock(&g_blas_lock);
        if (atomic_load_explicit(&g_last_threads, memory_order_relaxed) != n) {
            openblas_set_num_threads(n);
            atomic_store_explicit(&g_last_threads, n, memory_order_release);
        }
        pthread_rwlock_unlock(&g_blas_lock);
    }
    pthread_rwlock_rdlock(&g_blas_lock);
    return n;
}

/** Leaves a BLAS section (see cpu_blas.h). */
void cb_blas_end(void) {
    pthread_rwlock_unlock(&g_blas_lock);
}
