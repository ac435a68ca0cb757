/*
 * The static memory plan of a forward+backward schedule (graph.h).
 *
 * Semantics: the simulation of MXNet's docs/static_site/src/pages/api/architecture/note_memory.md
 * (walk the schedule once with a reference count per value, in-place when only the current
 * operation still needs the source, blocks recycled into a free box when their count reaches 0,
 * size-aware matching, never sharing between operations that may run in parallel) implemented as
 * upstream nnvm's planner (src/nnvm/plan_memory.cc): reference counts = reads by steps (+1 per
 * graph output), in-place per FInplaceOption pair under its conditions (the output
 * has no storage yet, the input has pool storage, the input storage's count is 1 or
 * the pair is an identity with equal size and dtype, the output is read, equal
 * element counts and dtype widths, the input not already handed to another output),
 * outputs allocated largest first, best fit in [size, size*range] smallest first
 * then [size/range, size) largest first, a block's size the largest entry it holds,
 * inputs released after the step and unread outputs released at once.
 *
 * Parallel safety (note_memory.md "Parallel execution": "never share memory between
 * nodes that can run in parallel"; the exact ancestor check): instead of nnvm's
 * colouring heuristic, the step dependency graph (edges from the last writer of
 * each entry a step reads or writes) is closed into ancestor bitsets, and a block is
 * handed to a step (by reuse, or in place without an identity) only when every step
 * that touched it since it was last allocated is an ancestor of that step. Each
 * block keeps the frontier of those steps (members that are not ancestors of a
 * later member), so the check is short. Very large schedules (ancestor bitsets over
 * MEM_PLAN_MAX_BITS_BYTES) fall back to direct predecessors, which is conservative.
 */
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "error.h"
#include "graph.h"
#include "mxk_assert.h"
#include "shape.h"

/** Most bytes the ancestor bitsets may take before falling back to direct predecessors. */
#define MEM_PLAN_MAX_BITS_BYTES ((uint64_t)64 << 20)

/** Default match range (upstream NNVM_EXEC_MATCH_RANGE default). */
#define MEM_PLAN_DEFAULT_RANGE 16

/** Internal storage mark of an entry that has no storage yet. */
#define STORAGE_UNASSIGNED (-3)

/** Sets an out-of-memory error for the memory plan. */
static mxk_status oom(void) {
    return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "memory plan: out of memory");
}

/** A block of the pool being planned. */
typedef struct plan_block {
    uint64_t bytes;     /**< largest entry it holds so far */
    uint32_t ref;       /**< pending reads of the entries it holds (nnvm storage_ref_count) */
    uint8_t is_free;    /**< in the free box */
    uint64_t free_seq;  /**< order of release, for ties (earliest first, as nnvm's multimap) */
    uint32_t *frontier; /**< steps that touched it since it was allocated (see file comment) */
    uint32_t num_frontier, cap_frontier;
} plan_block;

/** Working state of one memory plan. */
typedef struct mem_build {
    const mxk_igraph *g;
    const mxk_grad_plan *p;
    uint32_t num_steps;
    /* step dependencies */
    uint32_t words;     /**< 64-bit words per ancestor bitset; 0 in the fallback */
    uint64_t *anc;      /**< num_steps * words: bit a of row b = a is an ancestor of b */
    uint32_t *pred_ptr; /**< num_steps + 1 (fallback and construction) */
    uint32_t *preds;    /**< direct predecessors of each step, sorted */
    /* pool */
    plan_block *blocks;
    uint32_t num_blocks, cap_blocks;
    uint64_t free_seq;
    int64_t range;
    /* entries */
    uint32_t *entry_ref;
    uint64_t *entry_bytes;
} mem_build;

/** Frees the working state (not the result). */
static void mem_build_free(mem_build *b) {
    for (uint32_t i = 0; i < b->num_blocks; i++)
        free(b->blocks[i].frontier);
    free(b->blocks);
    free(b->anc);
    free(b->pred_ptr);
    free(b->preds);
    free(b->entry_ref);
    free(b->entry_bytes);
}

/** The match range: MXK_EXEC_MATCH_RANGE in [0, 2^20], else 16 (a bad value is warned
 *  about once). */
static int64_t match_range(void) {
    return (int64_t)mxki_env_uint64_or_warn("executor", "MXK_EXEC_MATCH_RANGE",
                                            MEM_PLAN_DEFAULT_RANGE, 0, 1 << 20);
}

/** Compare for qsort of uint32. */
static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/**
 * Builds the step dependency graph: step s depends on the last writer (in schedule
 * order) of every entry it reads and of every entry it writes (add-to chains,
 * mutated inputs), which is how the engine orders them. Then closes it into
 * ancestor bitsets when they fit MEM_PLAN_MAX_BITS_BYTES.
 */
static mxk_status build_deps(mem_build *b) {
    const mxk_grad_plan *p = b->p;
    uint32_t S = b->num_steps, F = p->num_full_entries;
    uint32_t *last_writer = malloc((F + 1) * sizeof *last_writer);
    uint64_t total = 0;
    for (uint32_t s = 0; s < S; s++)
        total += (uint64_t)p->steps[s].num_in + p->steps[s].num_out + MXK_MAX_INPLACE;
    b->pred_ptr = malloc((S + 1) * sizeof *b->pred_ptr);
    b->preds = malloc((total + 1) * sizeof *b->preds);
    uint32_t *mut = malloc(MXK_MAX_INPLACE * sizeof *mut);
    if (last_writer == NULL || b->pred_ptr == NULL || b->preds == NULL || mut == NULL) {
        free(last_writer);
        free(mut);
        return oom();
    }
    for (uint32_t e = 0; e < F; e++)
        last_writer[e] = UINT32_MAX;
    uint32_t n = 0;
    for (uint32_t s = 0; s < S; s++) {
        const mxk_exec_step *st = &p->steps[s];
        b->pred_ptr[s] = n;
        for (uint32_t k = 0; k < st->num_in; k++)
            if (st->in[k] < F && last_writer[st->in[k]] != UINT32_MAX)
                b->preds[n++] = last_writer[st->in[k]];
        for (uint32_t k = 0; k < st->num_out; k++)
            if (st->out[k] < F && last_writer[st->out[k]] != UINT32_MAX)
                b->preds[n++] = last_writer[st->out[k]];
        uint32_t nmut = 0;
        const mxk_op_params *op = b->g->nodes[st->node]->op;
        if (!st->backward && op->op->def.mutate_inputs != NULL) {
            nmut = op->op->def.mutate_inputs(op->param, mut, MXK_MAX_INPLACE);
            if (nmut > MXK_MAX_INPLACE)
                nmut = MXK_MAX_INPLACE;
            for (uint32_t k = 0; k < nmut; k++)
                if (mut[k] < st->num_in && last_writer[st->in[mut[k]]] != UINT32_MAX)
                    b->preds[n++] = last_writer[st->in[mut[k]]];
        }
        /* sort and deduplicate */
        uint32_t *ps = &b->preds[b->pred_ptr[s]], m = n - b->pred_ptr[s], u = 0;
        qsort(ps, m, sizeof *ps, cmp_u32);
        for (uint32_t k = 0; k < m; k++)
            if (u == 0 || ps[u - 1] != ps[k])
                ps[u++] = ps[k];
        n = b->pred_ptr[s] + u;
        for (uint32_t k = 0; k < st->num_out; k++)
            if (st->out[k] < F)
                last_writer[st->out[k]] = s;
        for (uint32_t k = 0; k < nmut; k++)
            if (mut[k] < st->num_in && st->in[mut[k]] < F)
                last_writer[st->in[mut[k]]] = s;
    }
    b->pred_ptr[S] = n;
    free(last_writer);
    free(mut);

    uint64_t words = ((uint64_t)S + 63) / 64;
    if (words * S * sizeof(uint64_t) > MEM_PLAN_MAX_BITS_BYTES || S == 0) {
        b->words = 0; /* fallback: direct predecessors only */
        return MXK_OK;
    }
    b->words = (uint32_t)words;
    b->anc = calloc((size_t)words * S, sizeof *b->anc);
    if (b->anc == NULL) {
        b->words = 0; /* not fatal: the conservative fallback */
        return MXK_OK;
    }
    for (uint32_t s = 0; s < S; s++) {
        uint64_t *row = &b->anc[(size_t)s * words];
        for (uint32_t k = b->pred_ptr[s]; k < b->pred_ptr[s + 1]; k++) {
            uint32_t q = b->preds[k];
            const uint64_t *qrow = &b->anc[(size_t)q * words];
            for (uint64_t w = 0; w < words; w++)
                row[w] |= qrow[w];
            row[q / 64] |= 1ull << (q % 64);
        }
    }
    return MXK_OK;
}

/** 1 when step `a` is an ancestor of step `s` (must run before it); conservative. */
static int is_ancestor(const mem_build *b, uint32_t a, uint32_t s) {
    if (b->words > 0)
        return (int)((b->anc[(size_t)s * b->words + a / 64] >> (a % 64)) & 1u);
    const uint32_t *lo = &b->preds[b->pred_ptr[s]];
    uint32_t n = b->pred_ptr[s + 1] - b->pred_ptr[s];
    return bsearch(&a, lo, n, sizeof *lo, cmp_u32) != NULL;
}

/** 1 when every step that touched block `k` is an ancestor of step `s`. */
static int block_safe_for(const mem_build *b, uint32_t k, uint32_t s) {
    const plan_block *blk = &b->blocks[k];
    for (uint32_t i = 0; i < blk->num_frontier; i++)
        if (blk->frontier[i] != s && !is_ancestor(b, blk->frontier[i], s))
            return 0;
    return 1;
}

/** Records that step `s` reads or writes block `k` (frontier update). 0 on OOM. */
static int block_touch(mem_build *b, uint32_t k, uint32_t s) {
    plan_block *blk = &b->blocks[k];
    uint32_t u = 0;
    for (uint32_t i = 0; i < blk->num_frontier; i++) {
        uint32_t f = blk->frontier[i];
        if (f == s)
            return 1;
        if (!is_ancestor(b, f, s))
            blk->frontier[u++] = f;
    }
    blk->num_frontier = u;
    if (u == blk->cap_frontier) {
        uint32_t cap = blk->cap_frontier ? 2 * blk->cap_frontier : 4;
        uint32_t *nf = realloc(blk->frontier, cap * sizeof *nf);
        if (nf == NULL)
            return 0;
        blk->frontier = nf;
        blk->cap_frontier = cap;
    }
    blk->frontier[blk->num_frontier++] = s;
    return 1;
}

/** Puts block `k` into the free box. */
static void block_release(mem_build *b, uint32_t k) {
    if (!b->blocks[k].is_free) {
        b->blocks[k].is_free = 1;
        b->blocks[k].free_seq = b->free_seq++;
    }
}

/**
 * Finds storage of `bytes` for an output of step `s` (nnvm GraphAllocator::Request
 * with the ancestor check instead of colours): a free block in [bytes, bytes*range]
 * smallest first, else in [bytes/range, bytes) largest first, else a new block.
 * Returns the block id or -1 on OOM.
 */
static int32_t block_request(mem_build *b, uint64_t bytes, uint32_t s) {
    int64_t best = -1;
    if (b->range > 0) {
        uint64_t hi =
            bytes > UINT64_MAX / (uint64_t)b->range ? UINT64_MAX : bytes * (uint64_t)b->range;
        uint64_t lo = bytes / (uint64_t)b->range;
        for (uint32_t k = 0; k < b->num_blocks; k++) {
            const plan_block *c = &b->blocks[k];
            if (!c->is_free || c->bytes < bytes || c->bytes > hi || !block_safe_for(b, k, s))
                continue;
            if (best < 0 || c->bytes < b->blocks[best].bytes ||
                (c->bytes == b->blocks[best].bytes && c->free_seq < b->blocks[best].free_seq))
                best = k;
        }
        int upper_found = best >= 0;
        for (uint32_t k = 0; !upper_found && k < b->num_blocks; k++) {
            const plan_block *c = &b->blocks[k];
            if (!c->is_free || c->bytes >= bytes || c->bytes < lo || !block_safe_for(b, k, s))
                continue;
            if (best < 0 || c->bytes > b->blocks[best].bytes ||
                (c->bytes == b->blocks[best].bytes && c->free_seq < b->blocks[best].free_seq))
                best = k;
        }
    }
    if (best >= 0) {
        plan_block *c = &b->blocks[best];
        c->is_free = 0;
        if (bytes > c->bytes)
            c->bytes = bytes;
        c->num_frontier = 0;
        return (int32_t)best;
    }
    if (b->num_blocks == b->cap_blocks) {
        uint32_t cap = b->cap_blocks ? 2 * b->cap_blocks : 16;
        plan_block *nb = realloc(b->blocks, cap * sizeof *nb);
        if (nb == NULL)
            return -1;
        b->blocks = nb;
        b->cap_blocks = cap;
    }
    plan_block *c = &b->blocks[b->num_blocks];
    memset(c, 0, sizeof *c);
    c->bytes = bytes;
    return (int32_t)b->num_blocks++;
}

/** Bytes of an entry (graph.h). */
uint64_t mxki_mem_entry_bytes(const mxk_shape *s, int32_t t) {
    size_t w = t >= 0 ? mxk_dtype_size(t) : 0;
    uint64_t n = w ? w : 4;
    if (s->ndim <= 0)
        return 0;
    for (int32_t i = 0; i < s->ndim && i < MXK_MAX_NDIM; i++) {
        if (s->dims[i] <= 0)
            return 0;
        if (__builtin_mul_overflow(n, (uint64_t)s->dims[i], &n))
            return UINT64_MAX;
    }
    return n;
}

/** a + b, UINT64_MAX when it overflows. */
static uint64_t add_sat(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/**
 * Reference counts (nnvm step 1): each read of an entry by a step, each add-to
 * write (a read-modify-write that must find the earlier contributions), and one
 * for each graph output, which the user reads after the pass.
 */
static void count_refs(mem_build *b) {
    const mxk_grad_plan *p = b->p;
    uint32_t F = p->num_full_entries;
    for (uint32_t s = 0; s < b->num_steps; s++) {
        const mxk_exec_step *st = &p->steps[s];
        for (uint32_t k = 0; k < st->num_in; k++)
            if (st->in[k] < F)
                b->entry_ref[st->in[k]]++;
        for (uint32_t k = 0; k < st->num_out; k++)
            if (st->out[k] < F && st->req[k] == MXK_REQ_ADD)
                b->entry_ref[st->out[k]]++;
    }
    for (uint32_t h = 0; h < b->g->num_outputs; h++)
        b->entry_ref[b->g->outputs[h]]++;
}

/** The in-place hints of a step's operator (forward or backward); returns the count. */
static uint32_t step_inplace_pairs(const mem_build *b, const mxk_exec_step *st,
                                   mxk_inplace_pair *pairs) {
    const mxk_op_params *op = b->g->nodes[st->node]->op;
    const mxk_op_def *d = &op->op->def;
    uint32_t (*fn)(const void *, mxk_inplace_pair *, uint32_t) =
        st->backward ? d->backward_inplace : d->forward_inplace;
    if (fn == NULL)
        return 0;
    uint32_t n = fn(op->param, pairs, MXK_MAX_INPLACE);
    return n > MXK_MAX_INPLACE ? MXK_MAX_INPLACE : n;
}

/**
 * In-place for one step (nnvm's conditions, file comment; the non-identity case
 * also needs every earlier user of the input's block to be an ancestor of the
 * step, so that a consumer running in parallel never sees its input overwritten).
 */
static void plan_inplace(mem_build *b, uint32_t s, const int32_t *types, mxk_mem_plan *m,
                         uint8_t *taken) {
    const mxk_exec_step *st = &b->p->steps[s];
    mxk_inplace_pair pairs[MXK_MAX_INPLACE];
    uint32_t np = step_inplace_pairs(b, st, pairs);
    uint32_t F = b->p->num_full_entries;
    memset(taken, 0, st->num_in);
    for (uint32_t i = 0; i < np; i++) {
        uint32_t ii = pairs[i].in_index, oi = pairs[i].out_index;
        if (ii >= st->num_in || oi >= st->num_out || taken[ii])
            continue;
        uint32_t ein = st->in[ii], eout = st->out[oi];
        if (ein >= F || eout >= F || st->req[oi] != MXK_REQ_WRITE)
            continue;
        if (m->storage[eout] != STORAGE_UNASSIGNED || m->storage[ein] < 0)
            continue;
        if (b->entry_ref[eout] == 0)
            continue;
        int32_t sid = m->storage[ein];
        uint64_t nin = b->entry_bytes[ein], nout = b->entry_bytes[eout];
        size_t win = types[ein] >= 0 ? mxk_dtype_size(types[ein]) : 4;
        size_t wout = types[eout] >= 0 ? mxk_dtype_size(types[eout]) : 4;
        if (nin != nout || win != wout)
            continue;
        int identity = pairs[i].identity && types[ein] == types[eout];
        int last_user = b->blocks[sid].ref == 1 && block_safe_for(b, (uint32_t)sid, s);
        if (!identity && !last_user)
            continue;
        taken[ii] = 1;
        m->storage[eout] = sid;
        m->inplace[eout] = 1;
        b->blocks[sid].ref += b->entry_ref[eout];
    }
}

/** Index order of a step's outputs by bytes, largest first (stable). */
static void sort_outputs(const mem_build *b, const mxk_exec_step *st, uint32_t *order) {
    uint32_t n = st->num_out, F = b->p->num_full_entries;
    for (uint32_t i = 0; i < n; i++)
        order[i] = i;
    for (uint32_t i = 1; i < n; i++) { /* insertion sort: outputs are few */
        uint32_t x = order[i];
        uint64_t bx = st->out[x] < F ? b->entry_bytes[st->out[x]] : 0;
        uint32_t j = i;
        while (j > 0) {
            uint32_t y = order[j - 1];
            uint64_t by = st->out[y] < F ? b->entry_bytes[st->out[y]] : 0;
            if (by >= bx)
                break;
            order[j] = y;
            j--;
        }
        order[j] = x;
    }
}

/** Drops one pending read of the block of entry `e`; releases it at zero. */
static void drop_ref(mem_build *b, const mxk_mem_plan *m, uint32_t e) {
    int32_t sid = m->storage[e];
    if (sid < 0)
        return;
    if (b->blocks[sid].ref > 0 && --b->blocks[sid].ref == 0)
        block_release(b, (uint32_t)sid);
}

/** Runs the simulation over every step (nnvm AllocMemory). */
static mxk_status simulate(mem_build *b, const int32_t *types, mxk_mem_plan *m) {
    const mxk_grad_plan *p = b->p;
    uint32_t F = p->num_full_entries, max_in = 1, max_out = 1;
    for (uint32_t s = 0; s < b->num_steps; s++) {
        if (p->steps[s].num_in > max_in)
            max_in = p->steps[s].num_in;
        if (p->steps[s].num_out > max_out)
            max_out = p->steps[s].num_out;
    }
    uint8_t *taken = malloc(max_in);
    uint32_t *order = malloc(max_out * sizeof *order);
    if (taken == NULL || order == NULL) {
        free(taken);
        free(order);
        return oom();
    }
    mxk_status st = MXK_OK;
    for (uint32_t s = 0; s < b->num_steps && st == MXK_OK; s++) {
        const mxk_exec_step *step = &p->steps[s];
        plan_inplace(b, s, types, m, taken);
        sort_outputs(b, step, order);
        for (uint32_t i = 0; i < step->num_out; i++) {
            uint32_t e = step->out[order[i]];
            if (e >= F || m->storage[e] != STORAGE_UNASSIGNED)
                continue;
            int32_t sid = block_request(b, b->entry_bytes[e], s);
            if (sid < 0) {
                st = oom();
                break;
            }
            m->storage[e] = sid;
            b->blocks[sid].ref = b->entry_ref[e];
        }
        for (uint32_t k = 0; k < step->num_in && st == MXK_OK; k++)
            if (step->in[k] < F && m->storage[step->in[k]] >= 0 &&
                !block_touch(b, (uint32_t)m->storage[step->in[k]], s))
                st = oom();
        for (uint32_t k = 0; k < step->num_out && st == MXK_OK; k++)
            if (step->out[k] < F && m->storage[step->out[k]] >= 0 &&
                !block_touch(b, (uint32_t)m->storage[step->out[k]], s))
                st = oom();
        if (st != MXK_OK)
            break;
        for (uint32_t k = 0; k < step->num_in; k++)
            if (step->in[k] < F)
                drop_ref(b, m, step->in[k]);
        for (uint32_t k = 0; k < step->num_out; k++)
            if (step->out[k] < F && step->req[k] == MXK_REQ_ADD)
                drop_ref(b, m, step->out[k]);
        for (uint32_t k = 0; k < step->num_out; k++) {
            uint32_t e = step->out[k];
            if (e < F && m->storage[e] >= 0 && b->blocks[m->storage[e]].ref == 0)
                block_release(b, (uint32_t)m->storage[e]);
        }
    }
    free(taken);
    free(order);
    return st;
}

/** Plans memory for a schedule (graph.h; see the file comment). */
mxk_status mxki_mem_plan_build(const mxk_igraph *g, const mxk_grad_plan *p, const mxk_shape *shapes,
                               const int32_t *types, const uint8_t *external, mxk_mem_plan **out) {
    if (g == NULL || p == NULL || shapes == NULL || types == NULL || out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "memory plan: a required argument is NULL");
    *out = NULL;
    uint32_t F = p->num_full_entries;
    mxk_mem_plan *m = calloc(1, sizeof *m);
    mem_build b;
    memset(&b, 0, sizeof b);
    if (m == NULL)
        return oom();
    m->num_entries = F;
    m->largest_entry = UINT32_MAX;
    m->storage = malloc((F + 1) * sizeof *m->storage);
    m->inplace = calloc(F + 1, 1);
    b.g = g;
    b.p = p;
    b.num_steps = p->num_steps;
    b.range = match_range();
    b.entry_ref = calloc(F + 1, sizeof *b.entry_ref);
    b.entry_bytes = malloc((F + 1) * sizeof *b.entry_bytes);
    mxk_status st = MXK_OK;
    if (m->storage == NULL || m->inplace == NULL || b.entry_ref == NULL || b.entry_bytes == NULL)
        st = oom();
    if (st == MXK_OK) {
        for (uint32_t e = 0; e < F; e++) {
            m->storage[e] = external && external[e] ? MXK_STORAGE_EXTERNAL : STORAGE_UNASSIGNED;
            b.entry_bytes[e] = mxki_mem_entry_bytes(&shapes[e], types[e]);
        }
        count_refs(&b);
        st = build_deps(&b);
    }
    if (st == MXK_OK)
        st = simulate(&b, types, m);
    if (st == MXK_OK) {
        for (uint32_t e = 0; e < F; e++) {
            if (m->storage[e] == STORAGE_UNASSIGNED)
                m->storage[e] = MXK_STORAGE_NONE;
            if (m->storage[e] >= 0) {
                m->naive_bytes = add_sat(m->naive_bytes, b.entry_bytes[e]);
                if (m->largest_entry == UINT32_MAX ||
                    b.entry_bytes[e] > b.entry_bytes[m->largest_entry])
                    m->largest_entry = e;
            }
        }
        if (m->largest_entry != UINT32_MAX)
            m->largest_bytes = b.entry_bytes[m->largest_entry];
        m->num_blocks = b.num_blocks;
        m->block_bytes = malloc((b.num_blocks + 1) * sizeof *m->block_bytes);
        if (m->block_bytes == NULL)
            st = oom();
        for (uint32_t k = 0; st == MXK_OK && k < b.num_blocks; k++) {
            m->block_bytes[k] = b.blocks[k].bytes;
            m->total_bytes = add_sat(m->total_bytes, b.blocks[k].bytes);
        }
        for (uint32_t e = 0; st == MXK_OK && e < F; e++) {
            MXK_ASSERT(m->storage[e] < (int32_t)b.num_blocks,
                       "an entry names a block that does not exist");
            MXK_ASSERT(m->storage[e] < 0 || m->block_bytes[m->storage[e]] >= b.entry_bytes[e],
                       "a block is smaller than an entry it holds");
            MXK_ASSERT(!m->inplace[e] || m->storage[e] >= 0, "an in-place entry has no block");
        }
        MXK_ASSERT(st != MXK_OK || m->total_bytes <= m->naive_bytes,
                   "the plan takes more memory than one block per entry");
    }
    mem_build_free(&b);
    if (st != MXK_OK) {
        mxki_mem_plan_free(m);
        return st;
    }
    *out = m;
    return MXK_OK;
}

/** Frees a memory plan (graph.h). */
void mxki_mem_plan_free(mxk_mem_plan *m) {
    if (m == NULL)
        return;
    free(m->storage);
    free(m->inplace);
    free(m->block_bytes);
    free(m);
}
