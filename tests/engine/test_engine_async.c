/*
 * Async functions, device pools and streams, nested pushes, and pushes from several
 * threads at once.
 */
#include "engine_test_util.h"

/* ---- GPU pools are created on first use and hand their stream to functions ---- */

static atomic_int g_stream_calls[4][2]; /* [dev_id][is_copy] */
static atomic_int g_stream_bad_calls;
static atomic_int g_stream_serial;

/** A fake stream: a unique non-NULL value whose low 12 bits encode (dev_id, is_copy). */
static uintptr_t stream_tag(int32_t dev_id, int is_copy) {
    return ((uintptr_t)dev_id << 4) | ((uintptr_t)is_copy << 1) | 1u;
}

/** Stream hook create: a tagged fake stream per call, counted by device and kind. */
static mxk_status fake_create(int32_t dev_type, int32_t dev_id, int is_copy, void **stream,
                              mxk_error_sink *err) {
    (void)err;
    *stream = NULL;
    if (dev_type != MXK_DEV_GPU || dev_id < 0 || dev_id >= 4 || (is_copy != 0 && is_copy != 1)) {
        atomic_fetch_add(&g_stream_bad_calls, 1);
        return MXK_OK;
    }
    atomic_fetch_add(&g_stream_calls[dev_id][is_copy], 1);
    uintptr_t serial = (uintptr_t)atomic_fetch_add(&g_stream_serial, 1) + 1;
    *stream = (void *)((serial << 12) | stream_tag(dev_id, is_copy));
    return MXK_OK;
}

/** Stream hook destroy: nothing to free. */
static void fake_destroy(int32_t dev_type, int32_t dev_id, void *stream) {
    (void)dev_type, (void)dev_id, (void)stream;
}

/** Stream hook synchronize: the fake streams have no work. */
static mxk_status fake_synchronize(int32_t dev_type, int32_t dev_id, void *stream,
                                   mxk_error_sink *err) {
    (void)dev_type, (void)dev_id, (void)stream, (void)err;
    return MXK_OK;
}

static const mxk_engine_stream_hooks fake_hooks = {fake_create, fake_destroy, fake_synchronize};

/** What a function saw of its run context. */
typedef struct ctx_probe {
    int32_t dev_type, dev_id;
    void *stream;
    int ran;
} ctx_probe;

static mxk_status probe_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)err;
    ctx_probe *p = arg;
    p->dev_type = rctx->dev_type;
    p->dev_id = rctx->dev_id;
    p->stream = rctx->stream;
    p->ran = 1;
    return MXK_OK;
}

/** Pushes probe_fn on a device with props and waits for it. */
static void run_probe(ctx_probe *p, int32_t dev_type, int32_t dev_id, uint32_t props) {
    mxk_engine_var *v = mxki_engine_new_var();
    memset(p, 0, sizeof *p);
    CHECK_EQ_INT(mxki_engine_push_sync(probe_fn, p, NULL, dev_type, dev_id, NULL, 0, &v, 1, props,
                                       0, "probe"),
                 MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK(p->ran);
    mxki_engine_delete_var(v, NULL, NULL, dev_type, dev_id);
}

static int calls(int dev, int copy) {
    return atomic_load(&g_stream_calls[dev][copy]);
}

static void test_device_pools_and_streams(void) {
    mxki_engine_set_stream_hooks(&fake_hooks);
    ctx_probe p;
    run_probe(&p, MXK_DEV_CPU, 0, 0);
    CHECK(p.dev_type == MXK_DEV_CPU && p.dev_id == 0 && p.stream == NULL);
    run_probe(&p, MXK_DEV_CPU_PINNED, 0, MXK_ENGINE_PROP_PRIORITIZED);
    CHECK(p.dev_type == MXK_DEV_CPU_PINNED && p.stream == NULL);
    /* No GPU work yet: no GPU pool, no stream asked for. */
    CHECK_EQ_INT(calls(1, 0) + calls(1, 1) + calls(0, 0) + calls(0, 1), 0);

    int naive = t_is_naive();
    int gpu_workers = naive ? 1 : t_env_int("MXK_GPU_WORKER_NTHREADS", 2);
    int copy_workers = naive ? 1 : t_env_int("MXK_GPU_COPY_NTHREADS", 2);

    run_probe(&p, MXK_DEV_GPU, 1, 0);
    CHECK(p.dev_type == MXK_DEV_GPU && p.dev_id == 1);
    CHECK(p.stream != NULL && ((uintptr_t)p.stream & 0xfff) == stream_tag(1, 0));
    CHECK_EQ_INT(calls(1, 0), gpu_workers); /* each worker asked once */
    CHECK_EQ_INT(calls(1, 1), 0);

    run_probe(&p, MXK_DEV_GPU, 1, MXK_ENGINE_PROP_COPY);
    CHECK(p.stream != NULL && ((uintptr_t)p.stream & 0xfff) == stream_tag(1, 1));
    CHECK_EQ_INT(calls(1, 1), copy_workers);

    /* Reusing the pools asks for nothing more. */
    run_probe(&p, MXK_DEV_GPU, 1, 0);
    run_probe(&p, MXK_DEV_GPU, 1, MXK_ENGINE_PROP_COPY);
    CHECK_EQ_INT(calls(1, 0), gpu_workers);
    CHECK_EQ_INT(calls(1, 1), copy_workers);

    /* The GPU priority pool has its own workers (the naive engine shares the stream). */
    run_probe(&p, MXK_DEV_GPU, 1, MXK_ENGINE_PROP_PRIORITIZED);
    CHECK(p.stream != NULL && ((uintptr_t)p.stream & 0xfff) == stream_tag(1, 0));
    CHECK_EQ_INT(calls(1, 0), naive ? 1 : 2 * gpu_workers);

    run_probe(&p, MXK_DEV_GPU, 0, 0);
    CHECK(p.dev_id == 0 && ((uintptr_t)p.stream & 0xfff) == stream_tag(0, 0));
    CHECK_EQ_INT(calls(0, 0), gpu_workers);
    CHECK_EQ_INT(atomic_load(&g_stream_bad_calls), 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

/* ---- an async function finishes when its callback is called ---- */

/** State of one async write completed later by a helper thread. */
typedef struct async_job {
    mxk_async_handle *done;
    int *value;
    atomic_int completed;
    int64_t delay_us;
    pthread_t thread;
    atomic_int started;
} async_job;

static void *completer_main(void *arg) {
    async_job *j = arg;
    t_sleep_us(j->delay_us);
    *j->value = 42;
    atomic_store(&j->completed, 1);
    mxki_engine_complete(j->done, MXK_OK, NULL);
    return NULL;
}

static void async_write_fn(void *arg, const mxk_run_ctx *rctx, mxk_async_handle *done) {
    (void)rctx;
    async_job *j = arg;
    j->done = done;
    atomic_store(&j->started, 1);
    pthread_create(&j->thread, NULL, completer_main, j);
}

static int g_seen_by_reader;

static mxk_status record_reader_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    (void)err;
    g_seen_by_reader = *(const int *)arg;
    return MXK_OK;
}

static void test_async_completes_on_callback(void) {
    int value = 0;
    async_job job = {.value = &value, .delay_us = 60000};
    atomic_init(&job.completed, 0);
    atomic_init(&job.started, 0);
    mxk_engine_var *v = mxki_engine_new_var(), *w = mxki_engine_new_var();
    mxk_engine_push_desc d = {.async_fn = async_write_fn,
                              .arg = &job,
                              .dev_type = MXK_DEV_CPU,
                              .write_vars = &v,
                              .num_write = 1,
                              .name = "async_write"};
    int64_t t0 = t_now_us();
    CHECK_EQ_INT(mxki_engine_push(&d), MXK_OK);
    g_seen_by_reader = -1;
    CHECK_EQ_INT(t_push(record_reader_fn, &value, &v, 1, &w, 1), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    int64_t elapsed = t_now_us() - t0;
    CHECK_EQ_INT(atomic_load(&job.completed), 1); /* the wait returned only after completion */
    CHECK_EQ_INT(value, 42);
    CHECK(elapsed >= 50000);
    CHECK_EQ_INT(mxki_engine_wait_var(w), MXK_OK);
    CHECK_EQ_INT(g_seen_by_reader, 42); /* the dependent read ran after the completion */
    CHECK_EQ_INT(mxki_engine_var_version(v), 1);
    pthread_join(job.thread, NULL);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
    mxki_engine_delete_var(w, NULL, NULL, MXK_DEV_CPU, 0);
}

/* ---- async functions that complete before returning ---- */

static int g_inline_log[100];
static int g_inline_len;

static void inline_async_fn(void *arg, const mxk_run_ctx *rctx, mxk_async_handle *done) {
    (void)rctx;
    g_inline_log[g_inline_len++] = (int)(intptr_t)arg;
    mxki_engine_complete(done, MXK_OK, NULL);
}

static atomic_int g_arg_frees;

static void count_free(void *arg) {
    (void)arg;
    atomic_fetch_add(&g_arg_frees, 1);
}

static void test_async_complete_inline(void) {
    mxk_engine_var *v = mxki_engine_new_var();
    for (int i = 0; i < 100; i++) {
        mxk_engine_push_desc d = {.async_fn = inline_async_fn,
                                  .arg = (void *)(intptr_t)i,
                                  .arg_free = count_free,
                                  .dev_type = MXK_DEV_CPU,
                                  .write_vars = &v,
                                  .num_write = 1,
                                  .props = i % 2 ? MXK_ENGINE_PROP_PRIORITIZED : 0,
                                  .priority = i};
        CHECK_EQ_INT(mxki_engine_push(&d), MXK_OK);
    }
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    CHECK_EQ_INT(g_inline_len, 100);
    int ok = 1;
    for (int i = 0; i < g_inline_len; i++)
        ok &= g_inline_log[i] == i;
    CHECK(ok);
    CHECK_EQ_INT(atomic_load(&g_arg_frees), 100);
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
}

/* ---- a function that pushes another one ---- */

typedef struct nested {
    mxk_engine_var *inner_var;
    int inner_value;
    mxk_status inner_push;
} nested;

static mxk_status inner_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    (void)err;
    ((nested *)arg)->inner_value = 5;
    return MXK_OK;
}

static mxk_status outer_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    (void)err;
    nested *n = arg;
    n->inner_push = t_push(inner_fn, n, NULL, 0, &n->inner_var, 1);
    return MXK_OK;
}

static void test_nested_push(void) {
    nested n = {mxki_engine_new_var(), 0, MXK_ERR_INTERNAL};
    mxk_engine_var *outer = mxki_engine_new_var();
    CHECK_EQ_INT(t_push(outer_fn, &n, NULL, 0, &outer, 1), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(outer), MXK_OK);
    CHECK_EQ_INT(n.inner_push, MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(n.inner_var), MXK_OK);
    CHECK_EQ_INT(n.inner_value, 5);
    mxki_engine_delete_var(outer, NULL, NULL, MXK_DEV_CPU, 0);
    mxki_engine_delete_var(n.inner_var, NULL, NULL, MXK_DEV_CPU, 0);
}

/* ---- deleting a variable from inside an op that uses it ---- */

static struct {
    mxk_engine_var *v;
    atomic_int fn_done;
    atomic_int deleted;
    atomic_int deleted_after_fn;
} g_inner_del;

static void inner_deleter(void *arg) {
    (void)arg;
    if (atomic_load(&g_inner_del.fn_done))
        atomic_fetch_add(&g_inner_del.deleted_after_fn, 1);
    atomic_fetch_add(&g_inner_del.deleted, 1);
}

/** Deletes the variable it writes, then keeps "using" it. */
static mxk_status self_delete_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)arg;
    (void)rctx;
    (void)err;
    mxki_engine_delete_var(g_inner_del.v, inner_deleter, NULL, MXK_DEV_CPU, 0);
    t_sleep_us(2000);
    atomic_store(&g_inner_del.fn_done, 1);
    return MXK_OK;
}

/** An arg_free that drops the last user of the variable: deletes it. */
static void deleting_arg_free(void *arg) {
    (void)arg;
    atomic_store(&g_inner_del.fn_done, 1);
    mxki_engine_delete_var(g_inner_del.v, inner_deleter, NULL, MXK_DEV_CPU, 0);
}

static void test_delete_from_inside_op(void) {
    nested scratch = {NULL, 0, MXK_OK};
    /* From the function. */
    g_inner_del.v = mxki_engine_new_var();
    atomic_store(&g_inner_del.fn_done, 0);
    mxk_engine_var *r = mxki_engine_new_var();
    CHECK_EQ_INT(t_push(self_delete_fn, NULL, &r, 1, &g_inner_del.v, 1), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    CHECK_EQ_INT(atomic_load(&g_inner_del.deleted), 1);
    CHECK_EQ_INT(atomic_load(&g_inner_del.deleted_after_fn), 1);
    /* From the arg_free (the op both reads and writes the variable). */
    g_inner_del.v = mxki_engine_new_var();
    atomic_store(&g_inner_del.fn_done, 0);
    CHECK_EQ_INT(mxki_engine_push_sync(inner_fn, &scratch, deleting_arg_free, MXK_DEV_CPU, 0,
                                       &g_inner_del.v, 1, &g_inner_del.v, 1, 0, 0, "last_user"),
                 MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    CHECK_EQ_INT(atomic_load(&g_inner_del.deleted), 2);
    CHECK_EQ_INT(atomic_load(&g_inner_del.deleted_after_fn), 2);
    mxki_engine_delete_var(r, NULL, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

/* ---- several threads pushing ops over the same variables in different list orders ---- */

enum { PUSHERS = 4, PUSHES_EACH = 400 };

static struct {
    mxk_engine_var *a, *b, *c;
    long va, vb; /* guarded by the engine through a and b */
    long vc;     /* read only */
    atomic_long bad_reads;
} g_mt;

static mxk_status both_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)arg;
    (void)rctx;
    (void)err;
    if (g_mt.vc != 3)
        atomic_fetch_add(&g_mt.bad_reads, 1);
    g_mt.va++;
    g_mt.vb++;
    return MXK_OK;
}

static void *pusher_main(void *arg) {
    long id = (long)(intptr_t)arg;
    for (int i = 0; i < PUSHES_EACH; i++) {
        mxk_engine_var *ab[2] = {g_mt.a, g_mt.b}, *ba[2] = {g_mt.b, g_mt.a};
        uint32_t props = (id + i) % 3 == 0 ? MXK_ENGINE_PROP_PRIORITIZED : 0;
        mxki_engine_push_sync(both_fn, NULL, NULL, MXK_DEV_CPU, 0, &g_mt.c, 1,
                              (id + i) % 2 ? ab : ba, 2, props, i, "both");
        if (i % 100 == 99)
            mxki_engine_wait_var(id % 2 ? g_mt.a : g_mt.b);
    }
    return NULL;
}

static void test_concurrent_pushers(void) {
    g_mt.a = mxki_engine_new_var();
    g_mt.b = mxki_engine_new_var();
    g_mt.c = mxki_engine_new_var();
    g_mt.vc = 3;
    pthread_t th[PUSHERS];
    for (long i = 0; i < PUSHERS; i++)
        pthread_create(&th[i], NULL, pusher_main, (void *)(intptr_t)i);
    for (int i = 0; i < PUSHERS; i++)
        pthread_join(th[i], NULL);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    CHECK_EQ_INT(g_mt.va, PUSHERS * PUSHES_EACH);
    CHECK_EQ_INT(g_mt.vb, PUSHERS * PUSHES_EACH);
    CHECK_EQ_INT(atomic_load(&g_mt.bad_reads), 0);
    CHECK_EQ_INT(mxki_engine_var_version(g_mt.a), PUSHERS * PUSHES_EACH);
    CHECK_EQ_INT(mxki_engine_var_version(g_mt.c), 0);
    mxki_engine_delete_var(g_mt.a, NULL, NULL, MXK_DEV_CPU, 0);
    mxki_engine_delete_var(g_mt.b, NULL, NULL, MXK_DEV_CPU, 0);
    mxki_engine_delete_var(g_mt.c, NULL, NULL, MXK_DEV_CPU, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

int main(void) {
    t_start_engine();
    MXK_RUN(test_device_pools_and_streams);
    MXK_RUN(test_async_completes_on_callback);
    MXK_RUN(test_async_complete_inline);
    MXK_RUN(test_nested_push);
    MXK_RUN(test_delete_from_inside_op);
    MXK_RUN(test_concurrent_pushers);
    mxki_engine_stop();
    return MXK_TEST_EXIT();
}
