/*
 * The executor's memory (executor_internal.h): one NDArray chunk per storage block
 * of the memory plan, typed views of chunks for the entries, and the pool lent to
 * executors bound with shared_exec.
 *
 * Source: upstream src/executor/graph_executor.cc InitDataEntryMemory: storage ids are processed by
 * size, largest first; each takes the smallest chunk of the shared executor's pool that holds it,
 * on the same device (lower bound, then upward), and removes it from the free list, so a chunk
 * serves one block of the new executor; when none fits a new chunk is allocated and
 * appended to the shared executor's pool, so later executors sharing it can reuse
 * it. Upstream's chunks are float32 arrays of ceil(bytes / 4) words; here they are
 * uint8 arrays of the block's bytes, allocated through the storage pool
 * (mxk_ndarray_create). Entries sharing a chunk share its engine variable, so the
 * engine orders every use of the memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env.h"
#include "error.h"
#include "executor_internal.h"
#include "shape.h"

mxk_ndarray *mxki_exec_typed_view(const mxk_ndarray *base, const mxk_shape *shape, int32_t dtype) {
    uint64_t need = mxki_shape_size(shape) * mxk_dtype_size(dtype);
    uint64_t have = base->chunk->bytes >= base->offset ? base->chunk->bytes - base->offset : 0;
    if (need > have) {
        char buf[128];
        mxk_set_error(MXK_ERR_INTERNAL,
                      "executor: a view of shape %s (%s, %llu bytes) does not fit in %llu bytes",
                      mxki_shape_format(shape, buf, sizeof buf), mxk_dtype_name(dtype),
                      (unsigned long long)need, (unsigned long long)have);
        return NULL;
    }
    mxk_ndarray *v = mxki_ndarray_retain_view(base);
    if (v == NULL)
        return NULL;
    mxk_shape s = *shape;
    for (int32_t i = s.ndim < 0 ? 0 : s.ndim; i < MXK_MAX_NDIM; i++)
        s.dims[i] = 0;
    s.reserved_ = 0;
    v->shape = s;
    v->dtype = dtype;
    return v;
}

/** Appends an owned handle to an executor's pool. */
static mxk_status pool_append(mxk_executor *ex, mxk_ndarray *chunk) {
    if (ex->pool_len == ex->pool_cap) {
        uint32_t cap = ex->pool_cap ? 2 * ex->pool_cap : 8;
        mxk_ndarray **p = realloc(ex->pool, cap * sizeof *p);
        if (p == NULL) {
            mxk_ndarray_free(chunk);
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
        }
        ex->pool = p;
        ex->pool_cap = cap;
    }
    ex->pool[ex->pool_len++] = chunk;
    return MXK_OK;
}

/** Context of sorting: block sizes (qsort has no user argument). */
static _Thread_local const uint64_t *g_sort_bytes;

/** Orders block ids by bytes, descending, ties by id. */
static int block_cmp(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    uint64_t bx = g_sort_bytes[x], by = g_sort_bytes[y];
    if (bx != by)
        return bx > by ? -1 : 1;
    return x < y ? -1 : x > y;
}

/** A chunk of the donor's free list: its size and handle. */
typedef struct free_chunk {
    uint64_t bytes;
    mxk_ndarray *chunk;
    uint32_t index; /**< position in the donor's pool (tie-break) */
    int taken;
} free_chunk;

/** Orders free chunks by bytes, ascending, ties in pool order (stable by index). */
static int free_cmp(const void *a, const void *b) {
    const free_chunk *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes < y->bytes ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

mxk_status mxki_exec_alloc_blocks(mxk_executor *ex, mxk_executor *shared) {
    const mxk_mem_plan *m = ex->mem;
    uint32_t n = m->num_blocks;
    ex->blocks = calloc(n ? n : 1, sizeof *ex->blocks);
    uint32_t *order = malloc((n ? n : 1) * sizeof *order);
    uint32_t nfree = shared ? shared->pool_len : 0;
    free_chunk *fl = calloc(nfree ? nfree : 1, sizeof *fl);
    mxk_status rc = MXK_OK;
    if (ex->blocks == NULL || order == NULL || fl == NULL)
        rc = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    if (rc == MXK_OK) {
        for (uint32_t b = 0; b < n; b++)
            order[b] = b;
        g_sort_bytes = m->block_bytes;
        qsort(order, n, sizeof *order, block_cmp);
        for (uint32_t i = 0; i < nfree; i++) {
            fl[i].chunk = shared->pool[i];
            fl[i].index = i;
            fl[i].bytes = mxk_ndarray_size(shared->pool[i]);
        }
        qsort(fl, nfree, sizeof *fl, free_cmp);
    }
    for (uint32_t k = 0; rc == MXK_OK && k < n; k++) {
        uint32_t b = order[k];
        uint64_t bytes = m->block_bytes[b];
        /* Best fit: the smallest untaken chunk >= bytes on the same device. */
        uint32_t lo = 0, hi = nfree;
        while (lo < hi) {
            uint32_t mid = lo + (hi - lo) / 2;
            if (fl[mid].bytes < bytes)
                lo = mid + 1;
            else
                hi = mid;
        }
        free_chunk *hit = NULL;
        for (uint32_t i = lo; i < nfree && hit == NULL; i++) {
            mxk_context c = mxk_ndarray_context(fl[i].chunk);
            if (!fl[i].taken && c.dev_type == ex->ctx.dev_type && c.dev_id == ex->ctx.dev_id)
                hit = &fl[i];
        }
        if (hit != NULL) {
            hit->taken = 1;
            ex->blocks[b] = mxki_ndarray_retain_view(hit->chunk);
            if (ex->blocks[b] == NULL)
                rc = mxki_last_error_code();
            continue;
        }
        mxk_shape s;
        memset(&s, 0, sizeof s);
        s.ndim = 1;
        s.dims[0] = (int64_t)bytes;
        rc = mxk_ndarray_create(&s, MXK_UINT8, ex->ctx, &ex->blocks[b]);
        if (rc == MXK_OK && shared != NULL) {
            mxk_ndarray *lent = mxki_ndarray_retain_view(ex->blocks[b]);
            rc = lent ? pool_append(shared, lent) : mxki_last_error_code();
        }
    }
    /* The executor's own pool starts as its blocks. */
    for (uint32_t b = 0; rc == MXK_OK && b < n; b++) {
        mxk_ndarray *own = mxki_ndarray_retain_view(ex->blocks[b]);
        rc = own ? pool_append(ex, own) : mxki_last_error_code();
    }
    free(order);
    free(fl);
    return rc;
}

/** The limit of bind (executor_internal.h). */
uint64_t mxki_exec_mem_limit(void) {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    uint64_t phys = UINT64_MAX;
    if (pages > 0 && page > 0 && (uint64_t)pages <= UINT64_MAX / (uint64_t)page)
        phys = (uint64_t)pages * (uint64_t)page;
    return mxki_env_uint64_or_warn("executor", "MXK_MEM_LIMIT", phys, 1, UINT64_MAX);
}

/**
 * Writes what entry `e` is into buf: "the output of <op> '<node>'" (output k > 0:
 * "output k of ..."), for a variable "argument 'w' of <op> '<node>'" (its first
 * reader), prefixed "the gradient of " for a gradient entry.
 */
static void describe_entry(const mxk_igraph *g, const mxk_grad_plan *p, uint32_t e, char *buf,
                           size_t len) {
    const char *grad = "";
    if (e >= g->num_entries && p != NULL && e < p->num_full_entries) {
        e = p->grad_src[e - g->num_entries];
        grad = "the gradient of ";
    }
    if (e >= g->num_entries) {
        snprintf(buf, len, "an internal array");
        return;
    }
    uint32_t n = mxk_igraph_entry_node(g, e), k = e - g->entry_ptr[n];
    const mxk_gnode *node = g->nodes[n];
    if (node->op != NULL) {
        char out[32] = "the output";
        if (k > 0)
            snprintf(out, sizeof out, "output %u", (unsigned)k);
        snprintf(buf, len, "%s%s of %s '%s'", grad, out, node->op->op->def.name, node->name);
        return;
    }
    const mxk_gnode *reader = NULL;
    for (uint32_t r = 0; r < g->num_nodes && reader == NULL; r++)
        for (uint32_t i = g->in_ptr[r]; i < g->in_ptr[r + 1] && reader == NULL; i++)
            if (g->in_entries[i] == e)
                reader = g->nodes[r];
    if (reader != NULL)
        snprintf(buf, len, "%sargument '%s' of %s '%s'", grad, node->name, reader->op->op->def.name,
                 reader->name);
    else
        snprintf(buf, len, "%sargument '%s'", grad, node->name);
}

/** Refuses bytes over the limit (executor_internal.h). */
mxk_status mxki_exec_check_mem_limit(const mxk_igraph *g, const mxk_grad_plan *p, const char *what,
                                     uint64_t bytes, uint32_t largest, uint64_t largest_bytes) {
    uint64_t limit = mxki_exec_mem_limit();
    if (bytes <= limit)
        return MXK_OK;
    char desc[512] = "none";
    if (largest != UINT32_MAX)
        describe_entry(g, p, largest, desc, sizeof desc);
    /* UINT64_MAX stands for a count that overflowed (mxki_mem_entry_bytes) */
    return mxk_set_error(MXK_ERR_OUT_OF_MEMORY,
                         "%s needs %s%llu bytes, more than the memory limit of %llu bytes "
                         "(MXK_MEM_LIMIT); the largest array is %s (%s%llu bytes)",
                         what, bytes == UINT64_MAX ? "over " : "", (unsigned long long)bytes,
                         (unsigned long long)limit, desc,
                         largest_bytes == UINT64_MAX ? "over " : "",
                         (unsigned long long)largest_bytes);
}
