/*
 * Engine ops: building them from push descriptors (validation, deduplication of the
 * variable lists), running them, completing async ones and finishing them.
 */
#include "engine_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** strlen of `s`, 0 for NULL. */
static size_t text_len(const char *s) {
    return s ? strlen(s) : 0;
}

/** Copies `s` ("" for NULL) to `dst`, NUL-terminated; returns the byte after it. */
static char *text_put(char *dst, const char *s) {
    size_t n = text_len(s);
    if (n)
        memcpy(dst, s, n);
    dst[n] = '\0';
    return dst + n + 1;
}

size_t engine_op_text_size(const mxk_engine_push_desc *desc) {
    size_t n = text_len(desc->name) + text_len(desc->node) + text_len(desc->backend) + 3;
    for (uint32_t i = 0; desc->write_names != NULL && i < desc->num_write; i++)
        n += text_len(desc->write_names[i]) + 1;
    return n;
}

/**
 * Allocates a zeroed op with room for `ndeps` requests and the strings of `desc`;
 * copies name, node and backend. Returns the op (NULL when out of memory) and in
 * *cursor where the write names go.
 */
static engine_op *op_alloc(size_t ndeps, const mxk_engine_push_desc *desc, char **cursor) {
    size_t text = engine_op_text_size(desc);
    engine_op *op = malloc(sizeof *op + ndeps * sizeof(engine_dep) + text);
    if (op == NULL)
        return NULL;
    memset(op, 0, sizeof *op);
    op->deps = (engine_dep *)(op + 1);
    char *t = (char *)(op->deps + ndeps);
    op->name = t;
    t = text_put(t, desc->name);
    op->node = t;
    t = text_put(t, desc->node);
    op->backend = t;
    *cursor = text_put(t, desc->backend);
    op->text_bytes = text;
    op->handle.op = op;
    return op;
}

void engine_op_copy_text(engine_op *dst, char *blob, const engine_op *src) {
    memcpy(blob, src->name, src->text_bytes);
    dst->text_bytes = src->text_bytes;
    dst->name = blob;
    dst->node = blob + (src->node - src->name);
    dst->backend = blob + (src->backend - src->name);
    for (uint32_t i = 0; i < src->ndeps; i++)
        dst->deps[i].label = src->deps[i].label ? blob + (src->deps[i].label - src->name) : NULL;
}

const char *engine_op_describe(const engine_op *op, char *buf, size_t size) {
    char node[320] = "", backend[320] = "";
    if (op->node[0])
        snprintf(node, sizeof node, "node '%s'", op->node);
    if (op->backend[0])
        snprintf(backend, sizeof backend, "backend '%s'", op->backend);
    const char *open = node[0] || backend[0] ? " (" : "", *close = open[0] ? ")" : "";
    const char *sep = node[0] && backend[0] ? ", " : "";
    snprintf(buf, size, "operator '%s'%s%s%s%s%s", op->name[0] ? op->name : "unnamed", open, node,
             sep, backend, close);
    return buf;
}

/** Orders requests by variable address (qsort comparator). */
static int dep_cmp(const void *a, const void *b) {
    uintptr_t x = (uintptr_t)((const engine_dep *)a)->var;
    uintptr_t y = (uintptr_t)((const engine_dep *)b)->var;
    return x < y ? -1 : x > y;
}

/** Sorts requests by variable address: insertion sort for the usual few, qsort beyond. */
static void sort_deps(engine_dep *d, uint32_t n) {
    if (n > 16) {
        qsort(d, n, sizeof *d, dep_cmp);
        return;
    }
    for (uint32_t i = 1; i < n; i++) {
        engine_dep t = d[i];
        uint32_t j = i;
        while (j > 0 && (uintptr_t)d[j - 1].var > (uintptr_t)t.var) {
            d[j] = d[j - 1];
            j--;
        }
        d[j] = t;
    }
}

/** Checks a device for a push; sets the last error naming `who` when invalid. */
static mxk_status check_device(int32_t dev_type, int32_t dev_id, const char *who) {
    if (dev_type != MXK_DEV_CPU && dev_type != MXK_DEV_GPU && dev_type != MXK_DEV_CPU_PINNED)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "%s: invalid dev_type %d (expected 1 = cpu, 2 = gpu, 3 = cpu_pinned)",
                             who, (int)dev_type);
    if (dev_id < 0 || (dev_type == MXK_DEV_GPU && dev_id >= MXK_ENGINE_MAX_GPUS))
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "%s: invalid dev_id %d for dev_type %d (GPU ids are 0..%d)", who,
                             (int)dev_id, (int)dev_type, MXK_ENGINE_MAX_GPUS - 1);
    return MXK_OK;
}

/** Checks one variable list; sets the last error naming the bad entry. */
static mxk_status check_vars(mxk_engine_var *const *vars, uint32_t n, const char *list,
                             const char *who) {
    if (n > 0 && vars == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: %s is NULL but its count is %u", who,
                             list, n);
    for (uint32_t i = 0; i < n; i++)
        if (vars[i] == NULL)
            return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: %s[%u] is NULL", who, list, i);
    return MXK_OK;
}

mxk_status engine_op_new(const mxk_engine_push_desc *desc, engine_op **out) {
    char who[160];
    snprintf(who, sizeof who, "mxki_engine_push(%s)", desc->name ? desc->name : "unnamed");
    *out = NULL;
    if ((desc->sync_fn == NULL) == (desc->async_fn == NULL))
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "%s: exactly one of sync_fn and async_fn must be set (got %s)", who,
                             desc->sync_fn ? "both" : "neither");
    mxk_status st = check_vars(desc->read_vars, desc->num_read, "read_vars", who);
    if (st == MXK_OK)
        st = check_vars(desc->write_vars, desc->num_write, "write_vars", who);
    if (st == MXK_OK)
        st = check_device(desc->dev_type, desc->dev_id, who);
    if (st != MXK_OK)
        return st;
    if (desc->props & ~(uint32_t)ENGINE_PROP_MASK)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: unknown props bits 0x%x", who,
                             (unsigned)(desc->props & ~(uint32_t)ENGINE_PROP_MASK));
    uint64_t n = (uint64_t)desc->num_read + desc->num_write;
    if (n > UINT32_MAX)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s: too many variables", who);
    char *names = NULL;
    engine_op *op = op_alloc((size_t)n, desc, &names);
    if (op == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    op->kind = ENGINE_OP_FN;
    op->sync_fn = desc->sync_fn;
    op->async_fn = desc->async_fn;
    op->arg = desc->arg;
    op->arg_free = desc->arg_free;
    op->dev_type = desc->dev_type;
    op->dev_id = desc->dev_id;
    op->props = desc->props;
    op->priority = desc->priority;
    uint32_t k = 0;
    for (uint32_t i = 0; i < desc->num_read; i++)
        op->deps[k++] = (engine_dep){desc->read_vars[i], NULL, op, false, true, 0, NULL};
    for (uint32_t i = 0; i < desc->num_write; i++) {
        const char *label = NULL;
        if (desc->write_names != NULL) {
            label = desc->write_names[i] ? names : NULL;
            names = text_put(names, desc->write_names[i]);
        }
        op->deps[k++] = (engine_dep){desc->write_vars[i], NULL, op, true, false, i, label};
    }
    sort_deps(op->deps, k);
    /* Deduplicate: one request per variable; a variable also written is a write (and
     * keeps the first write's position and name). */
    uint32_t m = 0;
    for (uint32_t i = 0; i < k; i++) {
        engine_dep *prev = m > 0 ? &op->deps[m - 1] : NULL;
        if (prev == NULL || prev->var != op->deps[i].var) {
            op->deps[m++] = op->deps[i];
            continue;
        }
        prev->read |= op->deps[i].read;
        if (op->deps[i].write && (!prev->write || op->deps[i].write_pos < prev->write_pos)) {
            prev->write = true;
            prev->write_pos = op->deps[i].write_pos;
            prev->label = op->deps[i].label;
        }
    }
    op->ndeps = m;
    atomic_init(&op->wait, (long)m + 1);
    *out = op;
    return MXK_OK;
}

engine_op *engine_op_new_exclusive(engine_op_kind kind, mxk_engine_var *var, int32_t dev_type,
                                   int32_t dev_id) {
    mxk_engine_push_desc d = {.name = kind == ENGINE_OP_WAIT ? "wait_var" : "delete_var"};
    char *unused = NULL;
    engine_op *op = op_alloc(1, &d, &unused);
    if (op == NULL)
        return NULL;
    op->kind = kind;
    op->dev_type = dev_type;
    op->dev_id = dev_id;
    op->props = MXK_ENGINE_PROP_NO_SKIP;
    op->deps[0] = (engine_dep){var, NULL, op, true, false, 0, NULL};
    op->ndeps = 1;
    atomic_init(&op->wait, 2);
    return op;
}

void engine_run_op(engine_op *op, const engine_stream *stream) {
    mxk_run_ctx rctx = {op->dev_type, op->dev_id, stream != NULL ? stream->stream : NULL};
    engine_op_inherit_error(op);
    if (op->kind == ENGINE_OP_DELETE) {
        if (op->del_fn != NULL)
            op->del_fn(op->del_arg);
        op->impl->op_done(op);
        return;
    }
    if (op->err != NULL && !(op->props & MXK_ENGINE_PROP_NO_SKIP)) {
        op->impl->op_done(op); /* skipped: the error flows on to what it writes */
        return;
    }
    if (engine_stream_refuse(stream, op)) {
        op->impl->op_done(op);
        return;
    }
    engine_watchdog_begin(op);
    if (op->sync_fn != NULL) {
        mxk_error_sink sink;
        mxki_error_sink_clear(&sink);
        mxk_status st = op->sync_fn(op->arg, &rctx, &sink);
        st = engine_stream_complete(stream, op, st, &sink);
        engine_watchdog_end(op);
        if (st == MXK_OK) {
            engine_op_check_guards(op);
        } else {
            if (sink.msg[0] != '\0') {
                engine_op_set_error(op, st, sink.msg);
            } else {
                char msg[256];
                snprintf(msg, sizeof msg, "engine function '%s' failed with %s (no message given)",
                         op->name[0] ? op->name : "unnamed", mxk_status_name(st));
                engine_op_set_error(op, st, msg);
            }
        }
        op->impl->op_done(op);
    } else {
        /* Completion (mxki_engine_complete) may free the op before this returns. */
        op->async_fn(op->arg, &rctx, &op->handle);
    }
}

void mxki_engine_complete(mxk_async_handle *done, mxk_status status, const char *msg) {
    if (done == NULL || done->op == NULL) {
        fprintf(stderr, "mxki_engine_complete: NULL completion handle ignored\n");
        return;
    }
    engine_op *op = done->op;
    engine_watchdog_end(op);
    if (status == MXK_OK) {
        engine_op_check_guards(op);
    } else {
        if (msg != NULL && msg[0] != '\0') {
            engine_op_set_error(op, status, msg);
        } else {
            char buf[256];
            snprintf(buf, sizeof buf, "asynchronous engine function '%s' failed with %s",
                     op->name[0] ? op->name : "unnamed", mxk_status_name(status));
            engine_op_set_error(op, status, buf);
        }
    }
    op->impl->op_done(op);
}

void engine_op_finish(engine_op *op) {
    if (op->cached != NULL) {
        engine_cached_finish(op);
        return;
    }
    /* Before the release, so that a wait on a variable returns only after the args
     * of the ops it waited for are freed. An arg_free that deletes a variable this op
     * uses is safe: the deletion queues behind this op (NaiveEngine defers it). */
    if (op->arg_free != NULL)
        op->arg_free(op->arg);
    /* Listed even when the op writes nothing, so that wait_all still reports it. */
    if (op->kind == ENGINE_OP_FN && engine_error_pending(op->err))
        engine_errors_add_global(op->err);
    engine_deps_release(op, op->impl->uses_queues);
    engine_error_unref(op->err);
    free(op);
    engine_leave();
}

void engine_op_discard(engine_op *op) {
    if (op->cached != NULL) {
        engine_cached_discard(op);
        return;
    }
    if (op->arg_free != NULL)
        op->arg_free(op->arg);
    engine_error_unref(op->err);
    free(op);
    engine_leave();
}
