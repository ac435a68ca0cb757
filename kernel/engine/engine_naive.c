/*
 * NaiveEngine (upstream src/engine/naive_engine.cc): every push runs to completion
 * in the pushing thread before the push returns, so there are no queues. Pushes
 * from several threads are serialised by one recursive lock (a function may push
 * from inside itself; such a nested push runs at once, as upstream). Unlike
 * upstream, errors still follow the engine's rules: they are recorded on the written
 * variables and reported by the waits, and async functions' errors are not lost;
 * the push blocks until an async function completes (so the thread completing it
 * must not push to the engine before completing it).
 *
 * A deletion requested while an op runs (from its function or its arg_free) is
 * deferred until the outermost running op has finished, since that op may still
 * use the variable.
 */
#include "engine_internal.h"

/** State of the naive engine. */
static struct {
    pthread_mutex_t run_mu;  /**< held while an op runs (recursive) */
    pthread_mutex_t done_mu; /**< guards ops' naive_done */
    pthread_cond_t done_cv;  /**< signalled when an async op completes */
    /** GPU streams [dev_id][is_copy], opened on first use (guarded by run_mu). */
    engine_stream streams[MXK_ENGINE_MAX_GPUS][2];
    bool have_stream[MXK_ENGINE_MAX_GPUS][2];
    int depth;                /**< ops running (nested) in the thread holding run_mu */
    engine_op *deferred_head; /**< deletions waiting for depth 0 (guarded by run_mu) */
    engine_op *deferred_tail;
} N = {
    .run_mu = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
    .done_mu = PTHREAD_MUTEX_INITIALIZER,
    .done_cv = PTHREAD_COND_INITIALIZER,
};

/** engine_impl.start: nothing to prepare (no workers). */
static mxk_status naive_start(void) {
    return MXK_OK;
}

/** engine_impl.stop: closes the opened streams (a restart opens them again). */
static void naive_stop(void) {
    pthread_mutex_lock(&N.run_mu);
    for (int d = 0; d < MXK_ENGINE_MAX_GPUS; d++) {
        for (int copy = 0; copy < 2; copy++) {
            if (N.have_stream[d][copy])
                engine_stream_close(&N.streams[d][copy]);
            N.have_stream[d][copy] = false;
        }
    }
    pthread_mutex_unlock(&N.run_mu);
}

/**
 * The stream for an op (run_mu held): NULL on CPU; on a GPU, the device's copy or
 * compute stream, opened through the stream hooks on first use.
 */
static const engine_stream *stream_for(const engine_op *op) {
    if (op->dev_type != MXK_DEV_GPU)
        return NULL;
    int copy = (op->props & MXK_ENGINE_PROP_COPY) != 0;
    if (!N.have_stream[op->dev_id][copy]) {
        engine_stream_open(&N.streams[op->dev_id][copy], engine_stream_hooks(), op->dev_type,
                           op->dev_id, copy);
        N.have_stream[op->dev_id][copy] = true;
    }
    return &N.streams[op->dev_id][copy];
}

/** Runs one op to completion (run_mu held). */
static void run_to_completion(engine_op *op) {
    N.depth++;
    engine_run_op(op, stream_for(op));
    /* An async function may complete later, from another thread: wait for it. */
    pthread_mutex_lock(&N.done_mu);
    while (!op->naive_done)
        pthread_cond_wait(&N.done_cv, &N.done_mu);
    pthread_mutex_unlock(&N.done_mu);
    engine_op_finish(op);
    N.depth--;
}

/** engine_impl.push: runs the op now (a deletion inside a running op: deferred). */
static mxk_status naive_push(engine_op *op) {
    pthread_mutex_lock(&N.run_mu);
    if (op->kind == ENGINE_OP_DELETE && N.depth > 0) {
        op->qnext = NULL;
        if (N.deferred_tail != NULL)
            N.deferred_tail->qnext = op;
        else
            N.deferred_head = op;
        N.deferred_tail = op;
    } else {
        run_to_completion(op);
        /* The outermost op has finished: run the deletions it requested (their
         * deleters may request more, which are appended and run here too). */
        while (N.depth == 0 && N.deferred_head != NULL) {
            engine_op *del = N.deferred_head;
            N.deferred_head = del->qnext;
            if (N.deferred_head == NULL)
                N.deferred_tail = NULL;
            run_to_completion(del);
        }
    }
    pthread_mutex_unlock(&N.run_mu);
    return MXK_OK;
}

/** engine_impl.op_done: wakes the pushing thread, which finishes the op. */
static void naive_op_done(engine_op *op) {
    pthread_mutex_lock(&N.done_mu);
    op->naive_done = 1;
    pthread_cond_broadcast(&N.done_cv);
    pthread_mutex_unlock(&N.done_mu);
}

/** engine_impl.wait_var: waits for ops of other threads, then takes the var's error. */
static mxk_status naive_wait_var(mxk_engine_var *var) {
    pthread_mutex_lock(&N.run_mu); /* ops of other threads are finished */
    mxk_status st = engine_var_take_error(var);
    pthread_mutex_unlock(&N.run_mu);
    engine_leave();
    return st;
}

const engine_impl engine_naive_impl = {
    .name = "NaiveEngine",
    .start = naive_start,
    .stop = naive_stop,
    .push = naive_push,
    .dispatch = NULL,
    .op_done = naive_op_done,
    .wait_var = naive_wait_var,
    .uses_queues = false,
};
