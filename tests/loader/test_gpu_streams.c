/*
 * A GPU backend's streams and pinned memory through libmxk and a plugin
 * (gpu_streams_plugin.c, "tp-gpustreams"): the engine's GPU workers create their
 * streams with the backend's stream_create and hand them to kernels as
 * ctx->stream and host->current_stream; an asynchronous fault reported by the
 * backend's synchronize surfaces at the wait on the operator's output, naming the
 * operator, and what depends on that output inherits it; cpu_pinned arrays come
 * from host_alloc; streams are destroyed at mxk_shutdown. Semantics: upstream
 * src/engine/threaded_engine_perdevice.cc, src/engine/threaded_engine.h.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "mxk.h"
#include "testing.h"

/** The plugin's path. */
static const char *plugin_path(void) {
    static char buf[4096];
    snprintf(buf, sizeof buf, "%s/libtp-gpustreams.so", TP_DIR);
    return buf;
}

/** The plugin's counts (tp_gpu_counts, looked up in the loaded library). */
static void counts(int *created, int *destroyed, int *pinned, int *unpinned) {
    void *lib = dlopen(plugin_path(), RTLD_NOW | RTLD_NOLOAD);
    void (*fn)(int *, int *, int *, int *) = NULL;
    if (lib != NULL)
        *(void **)&fn = dlsym(lib, "tp_gpu_counts");
    CHECK(fn != NULL);
    *created = *destroyed = *pinned = *unpinned = -1;
    if (fn != NULL)
        fn(created, destroyed, pinned, unpinned);
    if (lib != NULL)
        dlclose(lib);
}

static const mxk_shape S = {.ndim = 1, .dims = {8}};
static const mxk_context GPU0 = {MXK_DEV_GPU, 0};

/** Runs the one-input operator `op` on x; its output, or NULL (error reported). */
static mxk_ndarray *run(const char *op, mxk_ndarray *x) {
    mxk_ndarray *out[MXK_MAX_OUTPUTS] = {0};
    uint32_t n = 0;
    CHECK_EQ_INT(mxk_imperative_invoke(op, 1, &x, &n, out, 0, NULL, NULL), MXK_OK);
    return n == 1 ? out[0] : NULL;
}

static void test_kernels_get_the_workers_stream(void) {
    mxk_ndarray *x = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&S, MXK_FLOAT32, GPU0, 2.0, &x), MXK_OK);
    mxk_ndarray *y = run("StreamProbe", x);
    float h[8] = {0};
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(y, h, sizeof h), MXK_OK);
    CHECK_NEAR(h[7], 3.0f, 0);
    int created, destroyed, pinned, unpinned;
    counts(&created, &destroyed, &pinned, &unpinned);
    const char *env = getenv("MXK_GPU_WORKER_NTHREADS");
    CHECK_EQ_INT(created, env && *env ? atoi(env) : 2); /* one per worker of the GPU pool */
    CHECK_EQ_INT(destroyed, 0);
    mxk_ndarray_free(x);
    mxk_ndarray_free(y);
}

static void test_asynchronous_fault_reaches_the_wait(void) {
    mxk_ndarray *x = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&S, MXK_FLOAT32, GPU0, 1.0, &x), MXK_OK);
    mxk_ndarray *y = run("StreamFault", x);
    mxk_ndarray *z = run("StreamProbe", y);
    const char *fault = "operator 'StreamFault' (backend 'tp-gpustreams'): its work on gpu(0)'s "
                        "stream failed: tp-gpustreams: an illegal memory access was encountered";
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(y), MXK_ERR_BACKEND);
    CHECK(strcmp(mxk_get_last_error(), fault) == 0);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(z), MXK_ERR_BACKEND);
    CHECK(strcmp(mxk_get_last_error(), fault) == 0);
    CHECK_EQ_INT(mxk_wait_all(), MXK_OK); /* reported by the waits */
    /* The worker goes on: the fault was the faulty operator's only. */
    mxk_ndarray *w = run("StreamProbe", x);
    float h[8] = {0};
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(w, h, sizeof h), MXK_OK);
    CHECK_NEAR(h[0], 2.0f, 0);
    mxk_ndarray_free(x);
    mxk_ndarray_free(y);
    mxk_ndarray_free(z);
    mxk_ndarray_free(w);
}

static void test_pinned_arrays_use_host_alloc(void) {
    int created, destroyed, pinned, unpinned;
    counts(&created, &destroyed, &pinned, &unpinned);
    mxk_ndarray *p = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&S, MXK_FLOAT32, (mxk_context){MXK_DEV_CPU_PINNED, 0}, 5.0, &p),
                 MXK_OK);
    float *data = NULL;
    CHECK_EQ_INT(mxk_ndarray_data(p, (void **)&data), MXK_OK); /* host memory */
    CHECK(data != NULL && data[7] == 5.0f);
    int pinned_after;
    counts(&created, &destroyed, &pinned_after, &unpinned);
    CHECK_EQ_INT(pinned_after, pinned + 1);
    mxk_ndarray_free(p);
}

int main(void) {
    mxk_init_options o = {.struct_size = sizeof o, .no_plugins = 1};
    if (mxk_init(&o) != MXK_OK || mxk_load_plugin(plugin_path(), NULL) != MXK_OK) {
        fprintf(stderr, "setup: %s\n", mxk_get_last_error());
        return 1;
    }
    MXK_RUN(test_kernels_get_the_workers_stream);
    MXK_RUN(test_asynchronous_fault_reaches_the_wait);
    MXK_RUN(test_pinned_arrays_use_host_alloc);
    mxk_shutdown();
    int created, destroyed, pinned, unpinned;
    counts(&created, &destroyed, &pinned, &unpinned);
    CHECK(created > 0);
    CHECK_EQ_INT(destroyed, created); /* every stream destroyed when the engine stopped */
    CHECK_EQ_INT(unpinned, pinned);   /* the pool released at shutdown */
    return MXK_TEST_EXIT();
}
