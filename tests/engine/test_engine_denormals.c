/*
 * Engine workers flush denormal floats to zero (MXK_FLUSH_DENORMALS, default 1): an
 * operator's float product below 2^-126 gives 0 on a threaded engine's worker, and the
 * exact denormal with MXK_FLUSH_DENORMALS=0 or on NaiveEngine (which runs operators on
 * the caller's thread, whose floating-point mode is the application's).
 */
#include "engine_test_util.h"

/** What a pushed function computed: 1e-30f * 1e-10f and a denormal input plus 0. */
typedef struct product {
    volatile float a, b, prod, in, sum;
} product;

static mxk_status product_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)rctx;
    (void)err;
    product *p = arg;
    p->prod = p->a * p->b;
    p->sum = p->in + 0.0f;
    return MXK_OK;
}

static void test_denormals(void) {
    const char *env = getenv("MXK_FLUSH_DENORMALS");
    int flush = !t_is_naive() && !(env && strcmp(env, "0") == 0);
    product p = {.a = 1e-30f, .b = 1e-10f, .in = 1e-40f};
    mxk_engine_var *v = mxki_engine_new_var();
    CHECK_EQ_INT(mxki_engine_push_sync(product_fn, &p, NULL, MXK_DEV_CPU, 0, NULL, 0, &v, 1, 0, 0,
                                       "product"),
                 MXK_OK);
    CHECK_EQ_INT(mxki_engine_wait_var(v), MXK_OK);
    volatile float a = 1e-30f, b = 1e-10f; /* this thread's own mode: not flushed */
    float exact = a * b;
    CHECK(exact > 0.0f && exact < 1.2e-38f);
    if (flush) {
        CHECK(p.prod == 0.0f); /* FTZ: a denormal result */
        CHECK(p.sum == 0.0f);  /* DAZ: a denormal input */
    } else {
        CHECK(p.prod == exact);
        CHECK(p.sum == p.in);
    }
    mxki_engine_delete_var(v, NULL, NULL, MXK_DEV_CPU, 0);
}

int main(void) {
    t_start_engine();
    MXK_RUN(test_denormals);
    mxki_engine_stop();
    return MXK_TEST_EXIT();
}
