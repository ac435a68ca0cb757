/*
 * Stress: thousands of random ops over 16 variables (random read and write sets,
 * duplicates, priorities, async completions on another thread, CPU and GPU pools)
 * must give exactly the result of running them one by one in push order. Each op
 * also records the sum of the values it read, which checks every read saw the right
 * version. Run under TSan this also checks the engine orders every access.
 */
#include "engine_test_util.h"

enum { NV = 16, NOPS = 5000, ROUNDS = 4, MAXR = 4, MAXW = 2 };

static const uint64_t P = (1ULL << 61) - 1; /* a Mersenne prime */

/** (a * b + c) mod P, for a, b, c < P. */
static uint64_t mad_mod(uint64_t a, uint64_t b, uint64_t c) {
    unsigned __int128 x = (unsigned __int128)a * b + c;
    uint64_t lo = (uint64_t)(x & P), hi = (uint64_t)(x >> 61);
    uint64_t r = lo + hi; /* < 2^62 + small: one or two reductions */
    while (r >= P)
        r -= P;
    return r;
}

/** One random op: what it reads and writes and how it is pushed. */
typedef struct sop {
    int idx;
    int nr, nw;
    int r[MAXR], w[MAXW]; /* may repeat; r and w may overlap */
    uint32_t props;
    int32_t priority;
    int32_t dev_type, dev_id;
    int async_mode; /* 0 sync, 1 async completed inline, 2 async completed by the helper */
    mxk_async_handle *done;
} sop;

static sop g_ops[NOPS];
static uint64_t g_vals[NV];  /* guarded by the engine */
static uint64_t g_obs[NOPS]; /* sum seen by each op, written by the op */
static uint64_t g_ref[NV];   /* sequential reference */
static uint64_t g_ref_obs[NOPS];

/** The op's computation on an array of values; returns the sum of the values read. */
static uint64_t apply(const sop *o, uint64_t *vals) {
    uint64_t sum = 0;
    for (int k = 0; k < o->nr; k++)
        sum = mad_mod(1, sum, vals[o->r[k]]);
    for (int k = 0; k < o->nw; k++) {
        int dup = 0;
        for (int j = 0; j < k; j++)
            dup |= o->w[j] == o->w[k];
        if (!dup)
            vals[o->w[k]] = mad_mod(vals[o->w[k]], 31, mad_mod(1, sum, (uint64_t)o->idx));
    }
    return sum;
}

static void run_sop(sop *o) {
    g_obs[o->idx] = apply(o, g_vals);
}

static mxk_status sync_sop_fn(void *arg, const mxk_run_ctx *rctx, mxk_error_sink *err) {
    (void)err;
    sop *o = arg;
    if (rctx->dev_type != o->dev_type || rctx->dev_id != o->dev_id)
        return mxki_sink_set(err, MXK_ERR_INTERNAL, "op %d ran on the wrong device", o->idx);
    run_sop(o);
    return MXK_OK;
}

/* ---- a helper thread that completes async ops ---- */

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    sop *queue[NOPS];
    int head, tail;
    int stop;
} H = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, {0}, 0, 0, 0};

static void *helper_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&H.mu);
    for (;;) {
        while (H.head == H.tail && !H.stop)
            pthread_cond_wait(&H.cv, &H.mu);
        if (H.head == H.tail)
            break;
        sop *o = H.queue[H.head++ % NOPS];
        pthread_mutex_unlock(&H.mu);
        run_sop(o);
        mxki_engine_complete(o->done, MXK_OK, NULL);
        pthread_mutex_lock(&H.mu);
    }
    pthread_mutex_unlock(&H.mu);
    return NULL;
}

static void async_sop_fn(void *arg, const mxk_run_ctx *rctx, mxk_async_handle *done) {
    (void)rctx;
    sop *o = arg;
    o->done = done;
    if (o->async_mode == 1) {
        run_sop(o);
        mxki_engine_complete(done, MXK_OK, NULL);
        return;
    }
    pthread_mutex_lock(&H.mu);
    H.queue[H.tail++ % NOPS] = o;
    pthread_cond_signal(&H.cv);
    pthread_mutex_unlock(&H.mu);
}

/** Draws a random op. */
static void make_op(sop *o, int idx, uint64_t *rng) {
    memset(o, 0, sizeof *o);
    o->idx = idx;
    o->nr = (int)(t_rand(rng) % (MAXR + 1));
    o->nw = (int)(t_rand(rng) % (MAXW + 1));
    if (o->nr + o->nw == 0)
        o->nw = 1;
    for (int k = 0; k < o->nr; k++)
        o->r[k] = (int)(t_rand(rng) % NV);
    for (int k = 0; k < o->nw; k++)
        o->w[k] = (int)(t_rand(rng) % NV);
    uint64_t x = t_rand(rng) % 100;
    o->dev_type = MXK_DEV_CPU;
    if (x < 25) {
        o->props = MXK_ENGINE_PROP_PRIORITIZED;
        o->priority = (int32_t)(t_rand(rng) % 11) - 5;
    } else if (x < 35) {
        o->dev_type = MXK_DEV_GPU; /* no real GPU: exercises the GPU pools */
        o->dev_id = (int32_t)(t_rand(rng) % 2);
        o->props = (x % 3 == 0)   ? MXK_ENGINE_PROP_COPY
                   : (x % 3 == 1) ? MXK_ENGINE_PROP_PRIORITIZED
                                  : 0;
        o->priority = (int32_t)(t_rand(rng) % 5);
    }
    /* 8% async completed inline, 8% completed later by the helper thread (the naive
     * engine then blocks in the push until the helper completes it). */
    uint64_t y = t_rand(rng) % 100;
    o->async_mode = y < 8 ? 1 : y < 16 ? 2 : 0;
}

static void test_random_ops_match_sequential(void) {
    pthread_t helper;
    pthread_create(&helper, NULL, helper_main, NULL);
    mxk_engine_var *vars[NV];
    int mismatches = 0, obs_mismatches = 0, push_failures = 0;
    for (int round = 0; round < ROUNDS; round++) {
        uint64_t rng = 0x1234567ULL + (uint64_t)round * 977;
        for (int v = 0; v < NV; v++) {
            vars[v] = mxki_engine_new_var();
            g_vals[v] = g_ref[v] = (uint64_t)v + 1;
        }
        for (int i = 0; i < NOPS; i++) {
            sop *o = &g_ops[i];
            make_op(o, i, &rng);
            g_ref_obs[i] = apply(o, g_ref);
            mxk_engine_var *r[MAXR], *w[MAXW];
            for (int k = 0; k < o->nr; k++)
                r[k] = vars[o->r[k]];
            for (int k = 0; k < o->nw; k++)
                w[k] = vars[o->w[k]];
            mxk_engine_push_desc d = {.sync_fn = o->async_mode ? NULL : sync_sop_fn,
                                      .async_fn = o->async_mode ? async_sop_fn : NULL,
                                      .arg = o,
                                      .dev_type = o->dev_type,
                                      .dev_id = o->dev_id,
                                      .read_vars = r,
                                      .num_read = (uint32_t)o->nr,
                                      .write_vars = w,
                                      .num_write = (uint32_t)o->nw,
                                      .props = o->props,
                                      .priority = o->priority,
                                      .name = "stress"};
            push_failures += mxki_engine_push(&d) != MXK_OK;
            if (i % 400 == 399) {
                /* A wait sees the prefix's value of that variable. */
                int v = (int)(t_rand(&rng) % NV);
                CHECK_EQ_INT(mxki_engine_wait_var(vars[v]), MXK_OK);
                mismatches += g_vals[v] != g_ref[v];
            }
        }
        CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
        for (int v = 0; v < NV; v++)
            mismatches += g_vals[v] != g_ref[v];
        for (int i = 0; i < NOPS; i++)
            obs_mismatches += g_obs[i] != g_ref_obs[i];
        for (int v = 0; v < NV; v++)
            mxki_engine_delete_var(vars[v], NULL, NULL, MXK_DEV_CPU, 0);
    }
    CHECK_EQ_INT(push_failures, 0);
    CHECK_EQ_INT(mismatches, 0);
    CHECK_EQ_INT(obs_mismatches, 0);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
    pthread_mutex_lock(&H.mu);
    H.stop = 1;
    pthread_cond_signal(&H.cv);
    pthread_mutex_unlock(&H.mu);
    pthread_join(helper, NULL);
}

int main(void) {
    t_start_engine();
    MXK_RUN(test_random_ops_match_sequential);
    mxki_engine_stop();
    return MXK_TEST_EXIT();
}
