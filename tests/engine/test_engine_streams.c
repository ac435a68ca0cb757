/*
 * GPU workers' streams in production (engine_stream.c with the hooks of
 * kernel/memory/device_streams.c over the test kit's fake GPU backend,
 * tests/kit/fake_device.h): one stream per worker, created on the worker's
 * thread; one synchronize after each sync function, before its variables are
 * released; a failed synchronize is the function's error (inherited by what depends
 * on it); a failed stream_create fails the worker's functions; every stream is
 * destroyed when the engine stops. Semantics: upstream
 * src/engine/threaded_engine_perdevice.cc and src/engine/threaded_engine.h.
 */
#include "device_streams.h"
#include "engine_test_util.h"
#include "fake_device.h"
#include "mxk.h"

/** What a function saw: its stream, whether the stream is its thread's, the work left. */
typedef struct gpu_probe {
    void *stream;
    int callers; /**< the stream was created by the thread running the function */
    int queue;   /**< units of work the function queues on its stream */
    int ran;
} gpu_probe;

/** A sync function: records its context and queues `queue` units on its stream. */
static mxk_status probe_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)err;
    gpu_probe *p = arg;
    p->stream = rctx->stream;
    p->callers = fake_gpu_stream_is_callers(rctx->stream);
    for (int i = 0; i < p->queue && rctx->stream != NULL; i++)
        fake_gpu_stream_queue(rctx->stream);
    p->ran = 1;
    return MXK_OK;
}

/** Pushes probe_fn named `name` writing `w` (reading `r` when non-NULL) on gpu(dev). */
static void push_probe(gpu_probe *p, const char *name, int32_t dev, uint32_t props,
                       mxk_engine_var *r, mxk_engine_var *w) {
    CHECK_EQ_INT(mxki_engine_push_sync(probe_fn, p, NULL, MXK_DEV_GPU, dev, &r, r ? 1 : 0, &w, 1,
                                       props, 0, name),
                 MXK_OK);
}

/** GPU workers of one pool under the running engine (the naive engine: one stream). */
static int workers(int copy) {
    if (t_is_naive())
        return 1;
    return copy ? t_env_int("MXK_GPU_COPY_NTHREADS", 2) : t_env_int("MXK_GPU_WORKER_NTHREADS", 2);
}

static void test_one_stream_per_worker(void) {
    mxk_engine_var *v = mxki_engine_new_var();
    gpu_probe p = {.queue = 1};
    push_probe(&p, "compute", 0, MXK_ENGINE_PROP_NORMAL, NULL, v);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK(p.ran && p.stream != NULL && p.callers);
    CHECK_EQ_INT(atomic_load(&fake.gpu_stream_creates), workers(0));
    /* The wait returned after the function's stream work was completed. */
    CHECK_EQ_INT(fake_gpu_stream_pending(p.stream), 0);

    gpu_probe c = {.queue = 1};
    push_probe(&c, "copy", 0, MXK_ENGINE_PROP_COPY, NULL, v);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK(c.stream != NULL && c.stream != p.stream && c.callers);
    CHECK_EQ_INT(atomic_load(&fake.gpu_stream_creates), workers(0) + workers(1));

    gpu_probe q = {.queue = 1};
    push_probe(&q, "prioritized", 0, MXK_ENGINE_PROP_PRIORITIZED, NULL, v);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK(q.stream != NULL && q.callers);
    /* The threaded engine's priority pool has its own workers and streams. */
    int expect = t_is_naive() ? 2 : 2 * workers(0) + workers(1);
    CHECK_EQ_INT(atomic_load(&fake.gpu_stream_creates), expect);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_GPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    CHECK_EQ_INT(atomic_load(&fake.gpu_stream_wrong_thread), 0);
}

static void test_one_synchronize_per_sync_function(void) {
    mxk_engine_var *v = mxki_engine_new_var();
    enum { N = 20 };
    gpu_probe p[N];
    int syncs = atomic_load(&fake.gpu_stream_syncs);
    for (int i = 0; i < N; i++) {
        p[i] = (gpu_probe){.queue = i % 3};
        push_probe(&p[i], "step", 0, MXK_ENGINE_PROP_NORMAL, NULL, v);
    }
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(atomic_load(&fake.gpu_stream_syncs) - syncs, N);
    /* Each on the thread that ran the function (the stream's creator): no work left. */
    CHECK_EQ_INT(atomic_load(&fake.gpu_stream_wrong_thread), 0);
    for (int i = 0; i < N; i++) {
        CHECK(p[i].ran && p[i].callers);
        CHECK_EQ_INT(fake_gpu_stream_pending(p[i].stream), 0);
    }
    /* CPU functions are never synchronised. */
    syncs = atomic_load(&fake.gpu_stream_syncs);
    gpu_probe cpu = {0};
    CHECK_EQ_INT(
        mxki_engine_push_sync(probe_fn, &cpu, NULL, MXK_DEV_CPU, 0, NULL, 0, &v, 1, 0, 0, "on_cpu"),
        MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK(cpu.ran && cpu.stream == NULL);
    CHECK_EQ_INT(atomic_load(&fake.gpu_stream_syncs), syncs);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

static void test_failed_synchronize_is_the_ops_error(void) {
    mxk_engine_var *v = mxki_engine_new_var(), *w = mxki_engine_new_var();
    atomic_store(&fake.gpu_fail_syncs, 1);
    gpu_probe bad = {.queue = 1}, dep = {0};
    push_probe(&bad, "faulty_kernel", 0, MXK_ENGINE_PROP_NORMAL, NULL, v);
    push_probe(&dep, "consumer", 0, MXK_ENGINE_PROP_NORMAL, v, w);
    const char *want = "operator 'faulty_kernel': its work on gpu(0)'s stream failed: fake gpu: "
                       "asynchronous fault on the stream";
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_ERR_BACKEND);
    CHECK(strcmp(mxki_last_error_message(), want) == 0);
    /* What reads the failed array inherits the error and does not run. */
    CHECK_EQ_INT(mxki_engine_wait_var(w), MXK_ERR_BACKEND);
    CHECK(strcmp(mxki_last_error_message(), want) == 0);
    CHECK(bad.ran && !dep.ran);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK); /* reported by the waits */
    /* A successful write heals the array. */
    gpu_probe good = {.queue = 1};
    push_probe(&good, "rewrite", 0, MXK_ENGINE_PROP_NORMAL, NULL, v);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_GPU, 0);
    mxki_engine_delete_var(w, NULL, NULL, MXK_DEV_GPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

static void test_failed_stream_creation_fails_the_workers_ops(void) {
    /* gpu(1) has no pool yet: its workers start now, and cannot get a stream. */
    atomic_store(&fake.gpu_fail_stream_creates, 1000);
    mxk_engine_var *v = mxki_engine_new_var();
    gpu_probe p = {0};
    push_probe(&p, "on_gpu1", 1, MXK_ENGINE_PROP_NORMAL, NULL, v);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_ERR_BACKEND);
    CHECK(strcmp(mxki_last_error_message(),
                 "operator 'on_gpu1' was not run: the worker of gpu(1) has no stream: the gpu "
                 "backend could not create a compute stream on gpu(1): fake gpu: no stream left "
                 "on 1") == 0);
    CHECK(!p.ran);
    atomic_store(&fake.gpu_fail_stream_creates, 0);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

static void test_ndarray_copies_are_synchronised_once(void) {
    mxk_shape s = {.ndim = 1, .dims = {64}};
    mxk_ndarray *a = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, (mxk_context){MXK_DEV_GPU, 0}, &a), MXK_OK);
    float in[64], out[64];
    for (int i = 0; i < 64; i++)
        in[i] = (float)i;
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(a), MXK_OK);
    int syncs = atomic_load(&fake.gpu_stream_syncs);
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(a, in, sizeof in), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(a), MXK_OK);
    CHECK_EQ_INT(atomic_load(&fake.gpu_stream_syncs) - syncs, 1); /* by the engine only */
    CHECK_EQ_INT(mxk_ndarray_fill(a, 2.0), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(a, out, sizeof out), MXK_OK);
    CHECK_EQ_INT(atomic_load(&fake.gpu_stream_syncs) - syncs, 2);
    CHECK_NEAR(out[63], 2.0f, 0);
    mxk_ndarray_free(a);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

static void test_streams_destroyed_at_stop(void) {
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    mxki_engine_stop();
    CHECK_EQ_INT(atomic_load(&fake.gpu_stream_destroys), atomic_load(&fake.gpu_stream_creates));
    CHECK_EQ_INT(atomic_load(&fake.gpu_stream_wrong_thread), 0);
    /* A restarted engine creates them again. */
    t_start_engine();
    int creates = atomic_load(&fake.gpu_stream_creates);
    mxk_engine_var *v = mxki_engine_new_var();
    gpu_probe p = {.queue = 1};
    push_probe(&p, "after_restart", 0, MXK_ENGINE_PROP_NORMAL, NULL, v);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK(p.ran && p.callers);
    CHECK_EQ_INT(atomic_load(&fake.gpu_stream_creates) - creates, workers(0));
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
    mxki_engine_stop();
    CHECK_EQ_INT(atomic_load(&fake.gpu_stream_destroys), atomic_load(&fake.gpu_stream_creates));
}

int main(void) {
    fake_device_reset();
    mxki_device_streams_install();
    t_start_engine();
    MXK_RUN(test_one_stream_per_worker);
    MXK_RUN(test_one_synchronize_per_sync_function);
    MXK_RUN(test_failed_synchronize_is_the_ops_error);
    MXK_RUN(test_failed_stream_creation_fails_the_workers_ops);
    MXK_RUN(test_ndarray_copies_are_synchronised_once);
    MXK_RUN(test_streams_destroyed_at_stop);
    return MXK_TEST_EXIT();
}
