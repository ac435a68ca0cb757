/*
 * The storage guard (MXK_STORAGE_GUARD=1, storage.h): red zones of canaries around
 * every host block, checked by mxki_storage_guard_verify and, for NDArray memory, by
 * the engine after every function that writes the array (engine.h). Registered by
 * CMakeLists.txt with MXK_STORAGE_GUARD=1, pooled and with MXK_STORAGE_POOL=0.
 */
#include "engine.h"
#include "error.h"
#include "fake_device.h"
#include "ndarray.h"
#include "storage.h"
#include "testing.h"

#include <inttypes.h>
#include <stdlib.h>

static const mxk_context CPU0 = {MXK_DEV_CPU, 0};
static const mxk_context GPU0 = {MXK_DEV_GPU, 0};

/** The block size for `bytes` user bytes: 64 + bytes + 64, page-rounded when pooled. */
static uint64_t guarded_size(uint64_t bytes) {
    const char *pool = getenv("MXK_STORAGE_POOL");
    uint64_t b = bytes + 128;
    return pool != NULL && strcmp(pool, "0") == 0 ? b : (b + 4095) / 4096 * 4096;
}

/** Damage before, inside, after, and far after the user bytes; each found once. */
static void test_verify_finds_damage(void) {
    CHECK(mxki_storage_guarded(CPU0));
    void *p = NULL;
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, 24, &p), MXK_OK);
    CHECK((uintptr_t)p % 64 == 0); /* the red zone keeps the backend's alignment */
    mxk_storage_stats st;
    CHECK_EQ_INT(mxk_storage_get_stats(CPU0, &st), MXK_OK);
    CHECK_EQ_INT(st.bytes_in_use, guarded_size(24));
    unsigned char *u = p;
    memset(u, 0x11, 24); /* in bounds */
    uint64_t bytes = 99;
    int64_t off = 99;
    CHECK_EQ_INT(mxki_storage_guard_verify(CPU0, p, &bytes, &off), MXK_OK);
    static const int64_t where[] = {24, 25, 63, -1, -64};
    /* Several damaged bytes: the first in memory order of the zone after, else before. */
    u[30] = u[26] = u[-3] = 0;
    CHECK_EQ_INT(mxki_storage_guard_verify(CPU0, p, &bytes, &off), MXK_ERR_INTERNAL);
    CHECK_EQ_INT(off, 26);
    u[-3] = u[-2] = 0;
    CHECK_EQ_INT(mxki_storage_guard_verify(CPU0, p, &bytes, &off), MXK_ERR_INTERNAL);
    CHECK_EQ_INT(off, -3);
    for (size_t i = 0; i < sizeof where / sizeof where[0]; i++) {
        u[where[i]] ^= 0xFF;
        CHECK_EQ_INT(mxki_storage_guard_verify(CPU0, p, &bytes, &off), MXK_ERR_INTERNAL);
        CHECK_EQ_INT(bytes, 24);
        CHECK_EQ_INT(off, where[i]);
        /* Re-armed: reported once. */
        CHECK_EQ_INT(mxki_storage_guard_verify(CPU0, p, &bytes, &off), MXK_OK);
    }
    /* The zone after the user bytes runs to the end of the block. */
    uint64_t last = guarded_size(24) - 64 - 1;
    u[last] = 0;
    CHECK_EQ_INT(mxki_storage_guard_verify(CPU0, p, &bytes, &off), MXK_ERR_INTERNAL);
    CHECK_EQ_INT(off, (int64_t)last);
    mxki_storage_free(CPU0, p);
    /* A reused block is armed again for its new size. */
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, 8, &p), MXK_OK);
    memset(p, 0x22, 8);
    CHECK_EQ_INT(mxki_storage_guard_verify(CPU0, p, &bytes, &off), MXK_OK);
    CHECK_EQ_INT(bytes, 8);
    ((unsigned char *)p)[8] = 0;
    CHECK_EQ_INT(mxki_storage_guard_verify(CPU0, p, &bytes, &off), MXK_ERR_INTERNAL);
    CHECK_EQ_INT(off, 8);
    mxki_storage_free(CPU0, p);
    CHECK_EQ_INT(mxk_storage_get_stats(CPU0, &st), MXK_OK);
    CHECK_EQ_INT(st.bytes_in_use, 0);
}

/** Damage still there when a block is freed is logged (once; nothing else changes). */
static void test_free_reports_damage(void) {
    void *p = NULL;
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, 10, &p), MXK_OK);
    ((unsigned char *)p)[12] = 0;
    char want[256], out[1024];
    snprintf(want, sizeof want,
             "[mxk ERROR] storage guard: block %p of 10 bytes on cpu(0) was written outside its "
             "bounds: canary damaged at byte offset 12 (found when it was freed)\n",
             p);
    mxk_t_capture c;
    CHECK(mxk_t_capture_begin(&c));
    mxki_storage_free(CPU0, p);
    mxk_t_capture_end(&c, out, sizeof out);
    CHECK(strcmp(out, want) == 0);
    CHECK_EQ_INT(mxki_storage_alloc(CPU0, 10, &p), MXK_OK); /* re-armed when reused */
    CHECK(mxk_t_capture_begin(&c));
    mxki_storage_free(CPU0, p);
    mxk_t_capture_end(&c, out, sizeof out);
    CHECK_EQ_INT(out[0], 0);
}

/** Device memory is not guarded (the host cannot read it); unknown pointers pass. */
static void test_device_memory_not_guarded(void) {
    CHECK(!mxki_storage_guarded(GPU0));
    atomic_store(&fake.gpu_enabled, 1);
    void *p = NULL;
    CHECK_EQ_INT(mxki_storage_alloc(GPU0, 24, &p), MXK_OK);
    uint64_t bytes = 1;
    int64_t off = 1;
    CHECK_EQ_INT(mxki_storage_guard_verify(GPU0, p, &bytes, &off), MXK_OK);
    CHECK_EQ_INT(bytes, 0);
    mxki_storage_free(GPU0, p);
    int local = 0;
    CHECK_EQ_INT(mxki_storage_guard_verify(CPU0, &local, &bytes, &off), MXK_OK);
    atomic_store(&fake.gpu_enabled, 0);
}

/** An engine function writing `count` floats from element `first` of its array. */
typedef struct scribble {
    mxk_ndarray *arr;
    int64_t first, count;
} scribble;

static mxk_status scribble_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    (void)err;
    const scribble *s = arg;
    float *f = mxk_ndarray_ptr(s->arr);
    for (int64_t i = s->first; i < s->first + s->count; i++)
        f[i] = 5.0f;
    return MXK_OK;
}

/** Pushes scribble_fn writing `arr`, labelled like a kernel's call when `labels`. */
static mxk_status push_scribble(scribble *s, int labels) {
    mxk_engine_var *v = mxk_ndarray_var(s->arr);
    static const char *const names[] = {"output"};
    mxk_engine_push_desc d = {.sync_fn = scribble_fn,
                              .arg = s,
                              .dev_type = MXK_DEV_CPU,
                              .write_vars = &v,
                              .num_write = 1,
                              .name = "Overrun",
                              .node = labels ? "overrun0" : NULL,
                              .backend = labels ? "broken" : NULL,
                              .write_names = labels ? names : NULL};
    return mxki_engine_push(&d);
}

/**
 * An engine function writing one element past its NDArray's end (or before it)
 * fails with a message naming operator, node, backend, array and offset; the array
 * stays failed until written again; writing in bounds passes.
 */
static void test_engine_catches_overrun(void) {
    mxk_shape shape = {.ndim = 1, .dims = {3}};
    mxk_ndarray *a = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(&shape, MXK_FLOAT32, CPU0, &a), MXK_OK);
    scribble ok = {a, 0, 3}, past = {a, 0, 4}, before = {a, -1, 2};
    CHECK_EQ_INT(push_scribble(&ok, 1), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(a), MXK_OK);

    CHECK_EQ_INT(push_scribble(&past, 1), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(a), MXK_ERR_INTERNAL);
    CHECK(strcmp(mxki_last_error_message(),
                 "storage guard: operator 'Overrun' (node 'overrun0', backend 'broken') wrote "
                 "outside array 'output' (12 bytes): canary damaged at byte offset 12") == 0);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(a), MXK_ERR_INTERNAL); /* stays failed */

    CHECK_EQ_INT(push_scribble(&before, 0), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(a), MXK_ERR_INTERNAL);
    CHECK(strcmp(mxki_last_error_message(),
                 "storage guard: operator 'Overrun' wrote outside array 'write_vars[0]' (12 "
                 "bytes): canary damaged at byte offset -4") == 0);

    CHECK_EQ_INT(push_scribble(&ok, 1), MXK_OK); /* written again, in bounds */
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(a), MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    mxk_ndarray_free(a);
}

int main(void) {
    fake_device_reset();
    atomic_store(&fake.gpu_enabled, 0);
    if (mxki_engine_start() != MXK_OK) {
        fprintf(stderr, "mxki_engine_start: %s\n", mxki_last_error_message());
        return 1;
    }
    MXK_RUN(test_verify_finds_damage);
    MXK_RUN(test_free_reports_damage);
    MXK_RUN(test_device_memory_not_guarded);
    MXK_RUN(test_engine_catches_overrun);
    mxki_engine_stop();
    return MXK_TEST_EXIT();
}
