/*
 * Executor debug_str and plan bytes (mxk.h mxk_executor_debug_str / _plan_bytes).
 *
 * Source: upstream src/executor/graph_executor.cc GraphExecutor::Print and dmlc/nnvm
 * src/core/symbolic.cc Symbol::Print. The text is:
 *
 *   1. MXNet's symbol listing of the executor's graph: "Symbol Outputs:" with one
 *      "\toutput[i]=<node>(<index>)" per output (forward outputs, then the gradient of
 *      each argument with a gradient), then every node in depth-first order:
 *      "Variable:<name>" for variables, and for operators a "--------------------"
 *      line, "Op:<op>, Name=<node>", "Inputs:" with "\targ[j]=<src>(<index>)" per
 *      input (" version=0" after variables: nnvm's variable version), and "Attrs:"
 *      with "\t<key>=<value>" sorted by key when the node has attributes. When
 *      gradients are computed, the head-gradient placeholders follow as variables
 *      ("_head_grad_<i>") and the backward nodes as operators "_backward_<op>" named
 *      "<node>_backward", each with "Control deps:" and "\tcdep[0]=<node>"; a
 *      gradient entry is named by the backward node that wrote it last.
 *   2. mxk's memory plan: "Memory plan: <n> blocks, <planned> bytes planned,
 *      <naive> bytes naive" and one "\tblock[<b>] <bytes> bytes: <entries>" line
 *      per block (an entry taken in place is marked "*"; gradients as "d<entry>").
 *   3. MXNet's footer, kept as the last two lines because front ends parse it:
 *      "Total <planned bytes >> 20> MB allocated" and
 *      "Total 11 TempSpace resource requested" (11 is upstream's constant).
 * A symbol that is a lone variable prints only "Variable:<name>" before part 2.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "executor_internal.h"

/** A growing text buffer; `failed` after an allocation failure. */
typedef struct dbuf {
    char *s;
    size_t len, cap;
    int failed;
} dbuf;

/** Appends formatted text. */
static void put(dbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(dbuf *b, const char *fmt, ...) {
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->s ? b->s + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = b->cap ? b->cap * 2 : 1024;
        while (cap - b->len <= (size_t)n)
            cap *= 2;
        char *s = realloc(b->s, cap);
        if (s == NULL) {
            b->failed = 1;
            return;
        }
        b->s = s;
        b->cap = cap;
    }
}

/** Per full entry: where it comes from, for the listing. */
typedef struct src_name {
    const char *node; /**< producing node (forward) or writing backward node */
    uint32_t index;   /**< output index of that node */
    int backward;     /**< written by a backward node ("<node>_backward") */
    int head;         /**< head-gradient placeholder h + 1, or 0 */
    int variable;     /**< a variable's entry */
} src_name;

/** Writes "<src>(<index>)" of an entry (with " version=0" for variables). */
static void put_src(dbuf *b, const src_name *sn) {
    if (sn->head)
        put(b, "_head_grad_%d(0)", sn->head - 1);
    else if (sn->backward)
        put(b, "%s_backward(%u)", sn->node, sn->index);
    else
        put(b, "%s(%u)%s", sn->node, sn->index, sn->variable ? " version=0" : "");
}

/** Orders attribute indices by key (qsort with the dictionary in a thread-local). */
static _Thread_local const mxk_attrs *g_sort_attrs;

static int attr_cmp(const void *a, const void *b) {
    return strcmp(g_sort_attrs->keys[*(const uint32_t *)a],
                  g_sort_attrs->keys[*(const uint32_t *)b]);
}

/** "Attrs:" and the node's attributes sorted by key (nothing when it has none). */
static void put_attrs(dbuf *b, const mxk_attrs *attrs) {
    if (attrs == NULL || attrs->count == 0)
        return;
    uint32_t *idx = malloc(attrs->count * sizeof *idx);
    if (idx == NULL) {
        b->failed = 1;
        return;
    }
    for (uint32_t i = 0; i < attrs->count; i++)
        idx[i] = i;
    g_sort_attrs = attrs;
    qsort(idx, attrs->count, sizeof *idx, attr_cmp);
    put(b, "Attrs:\n");
    for (uint32_t i = 0; i < attrs->count; i++)
        put(b, "\t%s=%s\n", attrs->keys[idx[i]], attrs->values[idx[i]]);
    free(idx);
}

/** Name of a forward or gradient entry for the memory plan ("fc1(0)", "dfc1(0)"). */
static void put_entry(dbuf *b, const mxk_executor *ex, const uint32_t *node_of, uint32_t e) {
    const mxk_igraph *g = ex->g;
    const mxk_grad_plan *p = ex->plan;
    int grad = e >= g->num_entries;
    uint32_t f = grad ? p->grad_src[e - g->num_entries] : e;
    uint32_t n = node_of[f];
    put(b, "%s%s(%u)%s", grad ? "d" : "", g->nodes[n]->name, f - g->entry_ptr[n],
        ex->mem->inplace[e] ? "*" : "");
}

mxk_status mxk_executor_debug_str(const mxk_executor *ex, char **out) {
    if (ex == NULL || out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_executor_debug_str: %s is NULL",
                             ex ? "out" : "executor");
    *out = NULL;
    const mxk_igraph *g = ex->g;
    const mxk_grad_plan *p = ex->plan;
    dbuf b = {0};
    src_name *sn = calloc(ex->num_entries + 1, sizeof *sn);
    uint32_t *node_of = malloc((g->num_entries + 1) * sizeof *node_of);
    if (sn == NULL || node_of == NULL) {
        free(sn);
        free(node_of);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    }
    for (uint32_t n = 0; n < g->num_nodes; n++)
        for (uint32_t e = g->entry_ptr[n]; e < g->entry_ptr[n + 1]; e++) {
            node_of[e] = n;
            sn[e] =
                (src_name){g->nodes[n]->name, e - g->entry_ptr[n], 0, 0, g->nodes[n]->op == NULL};
        }
    for (uint32_t h = 0; h < p->num_heads; h++)
        if (p->head_grad[h] != UINT32_MAX)
            sn[p->head_grad[h]] = (src_name){NULL, 0, 0, (int)h + 1, 0};

    const mxk_gnode *lone = NULL;
    if (ex->sym->num_outputs == 1 && ex->sym->outputs[0].node->op == NULL)
        lone = ex->sym->outputs[0].node;
    if (lone != NULL) {
        put(&b, "Variable:%s\n", lone->name);
    } else {
        /* The outputs: forward outputs, then argument gradients (named after the pass). */
        src_name *final = malloc((ex->num_entries + 1) * sizeof *final);
        if (final == NULL)
            b.failed = 1;
        else {
            memcpy(final, sn, ex->num_entries * sizeof *final);
            for (uint32_t s = p->num_fwd_steps; s < p->num_steps; s++)
                for (uint32_t k = 0; k < p->steps[s].num_out; k++)
                    if (p->steps[s].out[k] != UINT32_MAX)
                        final[p->steps[s].out[k]] =
                            (src_name){g->nodes[p->steps[s].node]->name, k, 1, 0, 0};
            put(&b, "Symbol Outputs:\n");
            uint32_t o = 0;
            for (uint32_t i = 0; i < g->num_outputs; i++) {
                put(&b, "\toutput[%u]=", o++);
                src_name v = final[g->outputs[i]];
                v.variable = 0;
                put_src(&b, &v);
                put(&b, "\n");
            }
            for (uint32_t i = 0; i < g->num_args; i++)
                if (p->arg_grad[i] != UINT32_MAX && final[p->arg_grad[i]].backward) {
                    put(&b, "\toutput[%u]=", o++);
                    put_src(&b, &final[p->arg_grad[i]]);
                    put(&b, "\n");
                }
            free(final);
        }
        for (uint32_t n = 0; n < g->num_nodes; n++) {
            const mxk_gnode *node = g->nodes[n];
            if (node->op == NULL) {
                put(&b, "Variable:%s\n", node->name);
                continue;
            }
            put(&b, "--------------------\nOp:%s, Name=%s\nInputs:\n", node->op->op->def.name,
                node->name);
            for (uint32_t j = g->in_ptr[n]; j < g->in_ptr[n + 1]; j++) {
                put(&b, "\targ[%u]=", j - g->in_ptr[n]);
                put_src(&b, &sn[g->in_entries[j]]);
                put(&b, "\n");
            }
            put_attrs(&b, node->attrs);
        }
        for (uint32_t h = 0; h < p->num_heads && p->num_steps > p->num_fwd_steps; h++)
            if (p->head_grad[h] != UINT32_MAX)
                put(&b, "Variable:_head_grad_%u\n", h);
        for (uint32_t s = p->num_fwd_steps; s < p->num_steps; s++) {
            const mxk_exec_step *st = &p->steps[s];
            const mxk_gnode *node = g->nodes[st->node];
            put(&b, "--------------------\nOp:_backward_%s, Name=%s_backward\nInputs:\n",
                node->op->op->def.name, node->name);
            uint32_t j = 0;
            for (uint32_t k = 0; k < st->num_in; k++) {
                if (st->in[k] == UINT32_MAX)
                    continue;
                put(&b, "\targ[%u]=", j++);
                put_src(&b, &sn[st->in[k]]);
                put(&b, "\n");
            }
            put(&b, "Control deps:\n\tcdep[0]=%s\n", node->name);
            for (uint32_t k = 0; k < st->num_out; k++)
                if (st->out[k] != UINT32_MAX)
                    sn[st->out[k]] = (src_name){node->name, k, 1, 0, 0};
        }
    }

    const mxk_mem_plan *m = ex->mem;
    put(&b, "Memory plan: %u blocks, %" PRIu64 " bytes planned, %" PRIu64 " bytes naive\n",
        m->num_blocks, m->total_bytes, m->naive_bytes);
    for (uint32_t blk = 0; blk < m->num_blocks; blk++) {
        put(&b, "\tblock[%u] %" PRIu64 " bytes:", blk, m->block_bytes[blk]);
        const char *sep = " ";
        for (uint32_t e = 0; e < m->num_entries; e++)
            if (m->storage[e] == (int32_t)blk) {
                put(&b, "%s", sep);
                put_entry(&b, ex, node_of, e);
                sep = ", ";
            }
        put(&b, "\n");
    }
    put(&b, "Total %" PRIu64 " MB allocated\n", m->total_bytes >> 20);
    put(&b, "Total %d TempSpace resource requested\n", 11);
    free(sn);
    free(node_of);
    if (b.failed) {
        free(b.s);
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "executor: out of memory");
    }
    *out = b.s;
    return MXK_OK;
}

void mxk_executor_plan_bytes(const mxk_executor *ex, uint64_t *planned, uint64_t *naive) {
    if (planned)
        *planned = ex ? ex->mem->total_bytes : 0;
    if (naive)
        *naive = ex ? ex->mem->naive_bytes : 0;
}
