/*
 * Library lifecycle and global knobs: mxk_init / mxk_shutdown, version, last
 * error, CPU thread count, random seed, wait_all.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"
#include "device_streams.h"
#include "engine.h"
#include "env.h"
#include "error.h"
#include "mxk.h"
#include "registry_internal.h"
#include "resource.h"
#include "storage.h"

#ifndef MXK_VERSION_STRING
#define MXK_VERSION_STRING "0.0.0"
#endif

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int initialised;
static atomic_int num_threads;

const char *mxk_version(void) {
    return MXK_VERSION_STRING;
}

const char *mxk_get_last_error(void) {
    return mxki_last_error_message();
}

void mxk_free(void *ptr) {
    free(ptr);
}

/**
 * Default CPU thread count: MXK_NUM_THREADS (an integer in [1, 4096], as
 * mxk_set_num_threads; a bad value is warned about once and ignored), else mxk.conf,
 * else the online CPUs (upstream: OMP_NUM_THREADS, src/engine/openmp.cc).
 */
static int32_t default_num_threads(void) {
    uint64_t env = mxki_env_uint64_or_warn("runtime", "MXK_NUM_THREADS", 0, 1, 4096);
    if (env > 0)
        return (int32_t)env;
    if (mxki_config_num_threads() > 0)
        return mxki_config_num_threads();
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int32_t)n : 1;
}

mxk_status mxk_init(const mxk_init_options *options) {
    mxk_init_options o = {0};
    if (options) {
        if (options->struct_size < sizeof(uint32_t))
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                                 "mxk_init: options->struct_size is not set");
        size_t n = options->struct_size < sizeof o ? options->struct_size : sizeof o;
        for (size_t i = 0; i < n; i++)
            ((char *)&o)[i] = ((const char *)options)[i];
    }
    pthread_mutex_lock(&init_lock);
    if (initialised) {
        pthread_mutex_unlock(&init_lock);
        return MXK_OK;
    }
    /* OpenMP runtimes that plugins bring along (oneDNN's GNU OpenMP) read their wait
     * policy once, when the plugin loads them. libgomp's default lets idle team threads
     * spin for 300,000 rounds after each parallel region, taking the cores from the
     * engine's workers and cpu-blas's pool when they are busy (LeNet training on
     * onednn: 7x slower on a loaded 2-core machine); passive waiting instead costs a
     * futex wake-up per primitive (ResNet-20 at batch 1: 4.0 ms instead of 0.7). A
     * short spin bridges consecutive primitives and gives the cores back within
     * microseconds: GOMP_SPINCOUNT=3000 unless the user set a policy or count. */
    if (getenv("OMP_WAIT_POLICY") == NULL)
        setenv("GOMP_SPINCOUNT", "3000", 0);
    /* GPU workers get their streams from the GPU backend, looked up when each worker
     * starts: the plugins loaded below are served. */
    mxki_device_streams_install();
    mxk_status rc = mxki_engine_start();
    if (rc == MXK_OK)
        rc = mxki_config_apply(o.config_dir, o.no_plugins);
    if (rc == MXK_OK && o.backend)
        rc = mxk_set_backend_preference(o.backend);
    if (rc == MXK_OK) {
        if (atomic_load(&num_threads) == 0)
            atomic_store(&num_threads, default_num_threads());
        initialised = 1;
    }
    pthread_mutex_unlock(&init_lock);
    return rc;
}

void mxk_shutdown(void) {
    pthread_mutex_lock(&init_lock);
    if (initialised) {
        mxki_engine_wait_all();
        mxki_registry_shutdown_plugins();
        mxki_engine_stop();
        mxki_resource_shutdown();
        mxki_storage_shutdown();
        initialised = 0;
    }
    pthread_mutex_unlock(&init_lock);
}

mxk_status mxk_set_num_threads(int32_t n) {
    if (n <= 0 || n > 4096)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_set_num_threads: %d is not in [1, 4096]", n);
    atomic_store(&num_threads, n);
    return MXK_OK;
}

int32_t mxk_get_num_threads(void) {
    int32_t n = atomic_load(&num_threads);
    return n > 0 ? n : default_num_threads();
}

mxk_status mxk_random_seed(uint64_t seed) {
    return mxki_resource_seed(seed);
}

mxk_status mxk_wait_all(void) {
    return mxki_engine_wait_all();
}
