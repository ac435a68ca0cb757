/*
 * The memory plan (kernel/graph/plan_memory.c), against upstream
 * docs/static_site/src/pages/api/architecture/note_memory.md and
 * src/nnvm/plan_memory.cc: a sigmoid
 * chain in constant memory, the in-place trap, FullyConnected's output freed after
 * forward while Activation's is kept for backward, inference smaller than training,
 * note_memory.md's MLP plan, planned bytes at most half the naive plan (MLP and LeNet
 * training), no sharing between steps that may run in parallel (a diamond), match
 * range 0 turning sharing off, block sizes the maximum of their entries. Every plan
 * is also run through the independent checker pu_check_plan.
 */
#include <stdlib.h>
#include <string.h>

#include "passes_util.h"
#include "testing.h"

/**
 * Plans a sigmoid chain of n over data (64,100); `grad` as pu_plan. The symbol (which
 * owns the nodes the plans point to) goes to *sym, for the caller to free.
 */
static int chain_plan(int n, const char *grad, pu_plans *pl, mxk_symbol **sym) {
    *sym = pu_sigmoid_chain(n);
    return pu_plan(*sym, "data=64,100", grad, NULL, pl);
}

/* Seed: "we can compute an arbitrary-length chain of sigmoid functions using constant memory". */
static void test_sigmoid_chain_constant_memory(void) {
    uint32_t blocks[4];
    uint64_t bytes[4];
    const int lengths[4] = {2, 5, 10, 40};
    for (int i = 0; i < 4; i++) {
        pu_plans pl;
        mxk_symbol *sym = NULL;
        blocks[i] = UINT32_MAX;
        CHECK(chain_plan(lengths[i], "null", &pl, &sym) == 0);
        if (pl.m != NULL) {
            blocks[i] = pl.m->num_blocks;
            bytes[i] = pl.m->total_bytes;
            CHECK_EQ_INT(pu_check_plan(&pl), 0);
            /* every sigmoid after the first runs in place */
            for (int k = 1; k < lengths[i]; k++) {
                char nm[16];
                snprintf(nm, sizeof nm, "s%d", k);
                CHECK(pl.m->inplace[pu_entry(pl.g, nm, 0)]);
            }
            CHECK(!pl.m->inplace[pu_entry(pl.g, "s0", 0)]); /* data is the user's */
            CHECK_EQ_INT(pl.m->naive_bytes, (uint64_t)lengths[i] * 64 * 100 * 4);
        }
        pu_plans_free(&pl);
        mxk_symbol_free(sym);
    }
    CHECK_EQ_INT(blocks[0], 1);
    for (int i = 1; i < 4; i++) {
        CHECK_EQ_INT(blocks[i], blocks[0]);
        CHECK_EQ_INT(bytes[i], bytes[0]);
    }
    /* training keeps every sigmoid output for its backward (Activation reads out_data) */
    pu_plans pl;
    mxk_symbol *sym = NULL;
    CHECK(chain_plan(10, "write", &pl, &sym) == 0);
    if (pl.m != NULL) {
        CHECK(pl.m->num_blocks >= 10);
        CHECK_EQ_INT(pu_check_plan(&pl), 0);
    }
    pu_plans_free(&pl);
    mxk_symbol_free(sym);
}

/* Seed trap: B feeds both C = sigmoid(B) and F: C must not overwrite B. */
static void test_inplace_trap(void) {
    mxk_symbol *d = pu_var("data");
    mxk_symbol *b = pu_op("FullyConnected", "B", "num_hidden=32", 1, d);
    mxk_symbol *c = pu_op("Activation", "C", "act_type=sigmoid", 1, b);
    mxk_symbol *f = pu_op("_mul_scalar", "F", "scalar=2", 1, b);
    mxk_symbol *e = pu_op("_plus", "E", NULL, 2, c, f);
    pu_plans pl;
    CHECK(pu_plan(e, "data=16,8", "null", NULL, &pl) == 0);
    if (pl.m != NULL) {
        uint32_t eb = pu_entry(pl.g, "B", 0), ec = pu_entry(pl.g, "C", 0);
        CHECK(!pl.m->inplace[ec]);
        CHECK(pl.m->storage[ec] != pl.m->storage[eb]);
        /* F is B's last reader, but C (not an ancestor of F) may still be reading B
         * when F runs: F must not overwrite it either */
        CHECK(!pl.m->inplace[pu_entry(pl.g, "F", 0)]);
        CHECK(pl.m->storage[pu_entry(pl.g, "F", 0)] != pl.m->storage[eb]);
        CHECK_EQ_INT(pu_check_plan(&pl), 0);
    }
    pu_plans_free(&pl);
    /* without the second consumer, C = sigmoid(B) runs in place */
    CHECK(pu_plan(c, "data=16,8", "null", NULL, &pl) == 0);
    if (pl.m != NULL) {
        uint32_t eb = pu_entry(pl.g, "B", 0), ec = pu_entry(pl.g, "C", 0);
        CHECK(pl.m->inplace[ec] && pl.m->storage[ec] == pl.m->storage[eb]);
    }
    pu_plans_free(&pl);
    pu_free(d, b, c, f, e, NULL);
}

/**
 * The step of the last use of block `blk` by entries other than `chain` values
 * written before `after`... helper: 1 when no entry other than `e` (and entries that
 * took `e` in place) is written on e's block between step `from` and step `to`.
 */
static int block_untouched_between(const pu_plans *pl, uint32_t e, int from, int to) {
    int32_t blk = pl->m->storage[e];
    for (int s = from + 1; s < to; s++) {
        const mxk_exec_step *st = &pl->p->steps[s];
        for (uint32_t k = 0; k < st->num_out; k++) {
            uint32_t o = st->out[k];
            if (o < pl->p->num_full_entries && o != e && pl->m->storage[o] == blk)
                return 0;
        }
    }
    return 1;
}

/* Seed + upstream: FC's output dies once act1 is computed (FC backward does not read
 * it); Activation's output lives until its backward step (declared out_data). */
static void test_fc_output_freed_activation_kept(void) {
    mxk_symbol *net = pu_mlp(128, 10, "sigmoid");
    pu_plans pl;
    CHECK(pu_plan(net, "data=64,784;out_label=64", "write", "data,out_label", &pl) == 0);
    if (pl.m != NULL) {
        uint32_t fc1 = pu_entry(pl.g, "fc1", 0), act1 = pu_entry(pl.g, "act1", 0);
        /* fc1's last reader is act1's forward: act1 takes fc1's block in place */
        CHECK(pl.m->inplace[act1] && pl.m->storage[act1] == pl.m->storage[fc1]);
        int last = -1;
        for (uint32_t s = 0; s < pl.p->num_steps; s++)
            for (uint32_t k = 0; k < pl.p->steps[s].num_in; k++)
                if (pl.p->steps[s].in[k] == fc1)
                    last = (int)s;
        CHECK_EQ_INT(last, pu_step(&pl, "act1", 0));
        /* act1 is read by act1's backward: nothing else is written on its block before */
        int fwd = pu_step(&pl, "act1", 0), bwd = pu_step(&pl, "act1", 1);
        CHECK(bwd > fwd);
        CHECK(block_untouched_between(&pl, act1, fwd, bwd));
        CHECK_EQ_INT(pl.p->steps[bwd].in[2], act1);
        CHECK_EQ_INT(pu_check_plan(&pl), 0);
    }
    pu_plans_free(&pl);
    mxk_symbol_free(net);
}

/* Seed: "Inference needs far less memory than training". */
static void test_inference_smaller_than_training(void) {
    mxk_symbol *nets[2] = {pu_mlp(128, 10, "relu"), pu_lenet()};
    const char *shapes[2] = {"data=64,784;out_label=64", "data=64,1,28,28;out_label=64"};
    for (int i = 0; i < 2; i++) {
        pu_plans tr, inf;
        CHECK(pu_plan(nets[i], shapes[i], "write", "data,out_label", &tr) == 0);
        CHECK(pu_plan(nets[i], shapes[i], "null", NULL, &inf) == 0);
        if (tr.m != NULL && inf.m != NULL) {
            CHECK(inf.m->total_bytes < tr.m->total_bytes);
            CHECK(inf.m->num_blocks < tr.m->num_blocks);
            CHECK_EQ_INT(pu_check_plan(&tr), 0);
            CHECK_EQ_INT(pu_check_plan(&inf), 0);
        }
        pu_plans_free(&tr);
        pu_plans_free(&inf);
        mxk_symbol_free(nets[i]);
    }
}

/*
 * Seed: "In-place optimization is applied when computing act1, d(fc1), out and d(fc2)".
 * act1 (over fc1), out (over fc2) and d(fc1) (over d(act1)) are in place. d(fc2) is not:
 * SoftmaxOutput's backward may write d(fc2) over `out`, but `out` is a graph output that
 * must stay readable after backward (MXNet's Module reads outputs for its metric after
 * forward_backward; upstream plan_memory.cc holds graph outputs with one reference).
 */
static void test_mlp_plan_matches_seed(void) {
    mxk_symbol *net = pu_mlp(128, 10, "relu");
    pu_plans pl;
    CHECK(pu_plan(net, "data=64,784;out_label=64", "write", "data,out_label", &pl) == 0);
    if (pl.m != NULL) {
        const mxk_mem_plan *m = pl.m;
        uint32_t fc1 = pu_entry(pl.g, "fc1", 0), act1 = pu_entry(pl.g, "act1", 0);
        uint32_t fc2 = pu_entry(pl.g, "fc2", 0), out = pu_entry(pl.g, "out", 0);
        uint32_t dfc1 = pu_grad(&pl, "fc1", 0), dact1 = pu_grad(&pl, "act1", 0);
        uint32_t dfc2 = pu_grad(&pl, "fc2", 0);
        CHECK(m->inplace[act1] && m->storage[act1] == m->storage[fc1]);
        CHECK(m->inplace[out] && m->storage[out] == m->storage[fc2]);
        CHECK(m->inplace[dfc1] && m->storage[dfc1] == m->storage[dact1]);
        CHECK(!m->inplace[dfc2] && m->storage[dfc2] != m->storage[out]);
        CHECK(!m->inplace[fc1] && !m->inplace[fc2] && !m->inplace[dact1]);
        /* act1 is alive (its backward and fc2's read it) when d(act1) is computed */
        CHECK(m->storage[dact1] != m->storage[act1]);
        /* four blocks: fc1/act1, fc2/out, d(fc2), d(act1)/d(fc1): the minimum, since
         * act1, out, d(fc2) and d(act1) are all alive during fc2's backward */
        CHECK_EQ_INT(m->num_blocks, 4);
        /* all pool entries are internal; weights and their gradients are external */
        CHECK_EQ_INT(m->storage[pu_entry(pl.g, "fc1_weight", 0)], MXK_STORAGE_EXTERNAL);
        CHECK_EQ_INT(m->storage[pl.p->arg_grad[pu_arg(pl.g, "fc1_weight")]], MXK_STORAGE_EXTERNAL);
        CHECK_EQ_INT(pu_check_plan(&pl), 0);
    }
    pu_plans_free(&pl);
    mxk_symbol_free(net);
}

/* Seed: coarse-grained graphs use about half the memory (MLP, LeNet training). */
static void test_half_of_naive(void) {
    mxk_symbol *mlp = pu_mlp3();
    pu_plans pl;
    CHECK(pu_plan(mlp, "data=64,784;out_label=64", "write", "data,out_label", &pl) == 0);
    if (pl.m != NULL) {
        printf("MLP training: planned %llu bytes, naive %llu bytes, %u blocks\n",
               (unsigned long long)pl.m->total_bytes, (unsigned long long)pl.m->naive_bytes,
               pl.m->num_blocks);
        CHECK(pl.m->total_bytes * 2 <= pl.m->naive_bytes);
        /* d(act1) reuses act2's block, freed by act2's backward (seed: sharing between
         * values whose lifetimes do not overlap) */
        uint32_t dact1 = pu_grad(&pl, "act1", 0), act2 = pu_entry(pl.g, "act2", 0);
        CHECK(pl.m->storage[dact1] == pl.m->storage[act2] && !pl.m->inplace[dact1]);
        CHECK_EQ_INT(pu_check_plan(&pl), 0);
    }
    pu_plans_free(&pl);
    mxk_symbol_free(mlp);

    mxk_symbol *lenet = pu_lenet();
    CHECK(pu_plan(lenet, "data=64,1,28,28;out_label=64", "write", "data,out_label", &pl) == 0);
    if (pl.m != NULL) {
        printf("LeNet training: planned %llu bytes, naive %llu bytes, %u blocks\n",
               (unsigned long long)pl.m->total_bytes, (unsigned long long)pl.m->naive_bytes,
               pl.m->num_blocks);
        CHECK(pl.m->total_bytes * 2 <= pl.m->naive_bytes);
        /* Flatten is an identity: in place over pool2 although pool2's backward still
         * reads pool2's output */
        CHECK(pl.m->inplace[pu_entry(pl.g, "flatten", 0)]);
        CHECK_EQ_INT(pu_check_plan(&pl), 0);
    }
    pu_plans_free(&pl);
    mxk_symbol_free(lenet);
}

/*
 * A diamond: x = fc0(data); two independent branches a = fc_a2(sigmoid(fc_a(x))) and
 * b = fc_b2(sigmoid(fc_b(x))) of the same sizes; y = a + b. Branch a is planned first;
 * its freed blocks are exactly the size branch b asks for, yet b may run in parallel
 * with a, so no block passes between them. After the join, blocks are reused again.
 */
static void test_no_sharing_between_parallel_branches(void) {
    pu_arena ar = {0};
    mxk_symbol *d = pu_keep(&ar, pu_var("data"));
    mxk_symbol *x = pu_keep(&ar, pu_op("FullyConnected", "fc0", "num_hidden=64", 1, d));
    mxk_symbol *a = pu_keep(&ar, pu_op("FullyConnected", "fc_a", "num_hidden=256", 1, x));
    a = pu_keep(&ar, pu_op("Activation", "sig_a", "act_type=sigmoid", 1, a));
    a = pu_keep(&ar, pu_op("FullyConnected", "fc_a2", "num_hidden=16", 1, a));
    mxk_symbol *b = pu_keep(&ar, pu_op("FullyConnected", "fc_b", "num_hidden=256", 1, x));
    b = pu_keep(&ar, pu_op("Activation", "sig_b", "act_type=sigmoid", 1, b));
    b = pu_keep(&ar, pu_op("FullyConnected", "fc_b2", "num_hidden=16", 1, b));
    mxk_symbol *y = pu_keep(&ar, pu_op("_plus", "y", NULL, 2, a, b));
    mxk_symbol *z = pu_keep(&ar, pu_op("FullyConnected", "fc_z", "num_hidden=256", 1, y));
    mxk_symbol *out = pu_keep(&ar, pu_op("Activation", "out", "act_type=relu", 1, z));
    const char *grads[2] = {"null", "write"};
    for (int i = 0; i < 2; i++) {
        pu_plans pl;
        CHECK(pu_plan(out, "data=32,10", grads[i], "data", &pl) == 0);
        if (pl.m == NULL) {
            pu_plans_free(&pl);
            continue;
        }
        const char *branch_a[] = {"fc_a", "sig_a", "fc_a2"};
        const char *branch_b[] = {"fc_b", "sig_b", "fc_b2"};
        for (int ia = 0; ia < 3; ia++)
            for (int ib = 0; ib < 3; ib++)
                CHECK(pl.m->storage[pu_entry(pl.g, branch_a[ia], 0)] !=
                      pl.m->storage[pu_entry(pl.g, branch_b[ib], 0)]);
        if (i == 0) {
            /* after the join, fc_z (256 wide) reuses a block freed by a branch */
            int32_t sz = pl.m->storage[pu_entry(pl.g, "fc_z", 0)];
            int shared = 0;
            for (int k = 0; k < 3; k++)
                shared |= sz == pl.m->storage[pu_entry(pl.g, branch_a[k], 0)] ||
                          sz == pl.m->storage[pu_entry(pl.g, branch_b[k], 0)];
            CHECK(shared);
        } else {
            /* backward: the two branches' gradients never share either */
            for (int ia = 0; ia < 3; ia++)
                for (int ib = 0; ib < 3; ib++) {
                    uint32_t ga = pu_grad(&pl, branch_a[ia], 0), gb = pu_grad(&pl, branch_b[ib], 0);
                    if (ga != UINT32_MAX && gb != UINT32_MAX)
                        CHECK(pl.m->storage[ga] != pl.m->storage[gb]);
                }
        }
        CHECK_EQ_INT(pu_check_plan(&pl), 0);
        pu_plans_free(&pl);
    }
    pu_arena_free(&ar);
}

/* Upstream: range 0 turns sharing off (in-place stays); sizes within the range share. */
static void test_match_range(void) {
    mxk_symbol *net = pu_mlp3();
    pu_plans def, off;
    CHECK(pu_plan(net, "data=64,784;out_label=64", "write", "data,out_label", &def) == 0);
    setenv("MXK_EXEC_MATCH_RANGE", "0", 1);
    CHECK(pu_plan(net, "data=64,784;out_label=64", "write", "data,out_label", &off) == 0);
    unsetenv("MXK_EXEC_MATCH_RANGE");
    if (def.m != NULL && off.m != NULL) {
        CHECK(off.m->num_blocks > def.m->num_blocks);
        CHECK(off.m->total_bytes > def.m->total_bytes);
        /* no sharing: each block holds one value (an entry and its in-place successors) */
        uint32_t values = 0;
        for (uint32_t e = 0; e < off.p->num_full_entries; e++)
            values += off.m->storage[e] >= 0 && !off.m->inplace[e];
        CHECK_EQ_INT(off.m->num_blocks, values);
        CHECK(off.m->inplace[pu_entry(off.g, "act1", 0)]);
        CHECK_EQ_INT(pu_check_plan(&off), 0);
    }
    pu_plans_free(&def);
    pu_plans_free(&off);
    mxk_symbol_free(net);
}

/* A bad MXK_EXEC_MATCH_RANGE is warned about once and the default range (16) applies. */
static void test_bad_match_range_warned(void) {
    mxk_symbol *net = pu_mlp3();
    pu_plans def, bad[2];
    CHECK(pu_plan(net, "data=64,784;out_label=64", "write", "data,out_label", &def) == 0);
    setenv("MXK_EXEC_MATCH_RANGE", "-3", 1);
    char log[2048];
    mxk_t_capture cap;
    CHECK(mxk_t_capture_begin(&cap));
    for (int i = 0; i < 2; i++)
        CHECK(pu_plan(net, "data=64,784;out_label=64", "write", "data,out_label", &bad[i]) == 0);
    mxk_t_capture_end(&cap, log, sizeof log);
    unsetenv("MXK_EXEC_MATCH_RANGE");
    const char *w = "[mxk WARNING] executor: MXK_EXEC_MATCH_RANGE=\"-3\" is invalid: expected an "
                    "integer in [0, 1048576]; it is ignored\n";
    const char *first = strstr(log, w);
    CHECK(first != NULL);
    CHECK(first == NULL || strstr(first + 1, w) == NULL);
    for (int i = 0; i < 2; i++) {
        if (def.m != NULL && bad[i].m != NULL)
            CHECK_EQ_INT(bad[i].m->total_bytes, def.m->total_bytes);
        pu_plans_free(&bad[i]);
    }
    pu_plans_free(&def);
    mxk_symbol_free(net);
}

/* Seed: "a memory region of size equal to the maximum of that required by B and E". */
static void test_shared_block_is_the_maximum(void) {
    /* B (16x64) dies before E (16x100) is computed: E reuses B's block, grown to E's size */
    mxk_symbol *d = pu_var("data");
    mxk_symbol *b = pu_op("FullyConnected", "B", "num_hidden=64", 1, d);
    mxk_symbol *c = pu_op("FullyConnected", "C", "num_hidden=8", 1, b);
    mxk_symbol *e = pu_op("FullyConnected", "E", "num_hidden=100", 1, c);
    mxk_symbol *f = pu_op("FullyConnected", "F", "num_hidden=4", 1, e);
    pu_plans pl;
    CHECK(pu_plan(f, "data=16,32", "null", NULL, &pl) == 0);
    if (pl.m != NULL) {
        int32_t sb = pl.m->storage[pu_entry(pl.g, "B", 0)];
        int32_t se = pl.m->storage[pu_entry(pl.g, "E", 0)];
        CHECK(sb >= 0 && sb == se);
        if (sb >= 0)
            CHECK_EQ_INT(pl.m->block_bytes[sb], 16 * 100 * 4);
        uint64_t sum = 0;
        for (uint32_t k = 0; k < pl.m->num_blocks; k++)
            sum += pl.m->block_bytes[k];
        CHECK_EQ_INT(sum, pl.m->total_bytes);
        CHECK_EQ_INT(pl.m->naive_bytes, (uint64_t)16 * (64 + 8 + 100 + 4) * 4);
        CHECK_EQ_INT(pu_check_plan(&pl), 0);
    }
    pu_plans_free(&pl);
    pu_free(d, b, c, e, f, NULL);
}

/* The hidden mask lives until Dropout's backward in training; head gradients and
 * arguments never enter the pool. */
static void test_hidden_outputs_and_externals(void) {
    mxk_symbol *d = pu_var("data");
    mxk_symbol *f = pu_op("FullyConnected", "f", "num_hidden=3", 1, d);
    mxk_symbol *dr = pu_op("TestDropout", "drop", NULL, 1, f);
    mxk_symbol *g = pu_op("FullyConnected", "g", "num_hidden=3", 1, dr);
    pu_plans pl;
    CHECK(pu_plan(g, "data=2,5", "write", "data", &pl) == 0);
    if (pl.m != NULL) {
        uint32_t mask = pu_entry(pl.g, "drop", 1);
        int fwd = pu_step(&pl, "drop", 0), bwd = pu_step(&pl, "drop", 1);
        CHECK(pl.m->storage[mask] >= 0);
        CHECK(block_untouched_between(&pl, mask, fwd, bwd));
        uint32_t h = pl.p->head_grad[0];
        CHECK(h != UINT32_MAX && pl.m->storage[h] == MXK_STORAGE_EXTERNAL);
        CHECK_EQ_INT(pl.m->storage[pu_entry(pl.g, "data", 0)], MXK_STORAGE_EXTERNAL);
        CHECK_EQ_INT(pu_check_plan(&pl), 0);
    }
    pu_plans_free(&pl);
    pu_free(d, f, dr, g, NULL);
}

/* Bad arguments, NULL frees, a graph without operators, no external array. */
static void test_arguments(void) {
    CHECK_EQ_INT(mxki_mem_plan_build(NULL, NULL, NULL, NULL, NULL, NULL), MXK_ERR_INVALID_ARGUMENT);
    mxki_mem_plan_free(NULL);
    mxki_grad_plan_free(NULL);
    mxki_igraph_free(NULL);
    /* a lone variable: no steps, nothing in the pool */
    mxk_symbol *x = pu_var("x");
    pu_plans pl;
    CHECK(pu_plan(x, "x=3", "null", NULL, &pl) == 0);
    if (pl.m != NULL) {
        CHECK(pl.p->num_steps == 0 && pl.m->num_blocks == 0 && pl.m->total_bytes == 0);
        CHECK_EQ_INT(pl.m->storage[0], MXK_STORAGE_EXTERNAL);
    }
    /* without an external array, the never-written variable entry is not materialised */
    mxk_mem_plan *m = NULL;
    if (pl.p != NULL) {
        CHECK_EQ_INT(mxki_mem_plan_build(pl.g, pl.p, pl.full_shapes, pl.full_types, NULL, &m),
                     MXK_OK);
        CHECK(m != NULL && m->storage[0] == MXK_STORAGE_NONE && m->naive_bytes == 0);
        mxki_mem_plan_free(m);
    }
    pu_plans_free(&pl);
    mxk_symbol_free(x);
}

/** A deterministic pseudo-random number (64-bit LCG, high bits). */
static uint32_t rnd(uint64_t *state) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(*state >> 33);
}

/**
 * Checks the add-to chains of a gradient plan: for each gradient entry, the first
 * contribution is WRITE (ADD for head gradients and arguments bound with ADD) and the
 * later ones ADD, and no step reads it before its last contribution.
 */
static int check_chains(const pu_plans *pl) {
    const mxk_grad_plan *p = pl->p;
    int bad = 0;
    for (uint32_t gid = p->num_fwd_entries; gid < p->num_full_entries; gid++) {
        int is_head = 0, add_arg = 0;
        for (uint32_t h = 0; h < p->num_heads; h++)
            is_head |= p->head_grad[h] == gid;
        for (uint32_t a = 0; a < pl->g->num_args; a++)
            add_arg |= p->arg_grad[a] == gid && p->arg_req[a] == MXK_REQ_ADD;
        int writes = 0, last_write = -1, first_read = -1;
        for (uint32_t s = 0; s < p->num_steps; s++) {
            const mxk_exec_step *st = &p->steps[s];
            for (uint32_t k = 0; k < st->num_in; k++)
                if (st->in[k] == gid && first_read < 0)
                    first_read = (int)s;
            for (uint32_t k = 0; k < st->num_out; k++) {
                if (st->out[k] != gid)
                    continue;
                mxk_op_req want = writes == 0 && !is_head && !add_arg ? MXK_REQ_WRITE : MXK_REQ_ADD;
                if (st->req[k] != want && !bad++)
                    fprintf(stderr, "chain: entry %u write %d has req %d, expected %d\n", gid,
                            writes, (int)st->req[k], (int)want);
                writes++;
                last_write = (int)s;
            }
        }
        if (first_read >= 0 && first_read <= last_write && !bad++)
            fprintf(stderr, "chain: entry %u read at step %d before its last write %d\n", gid,
                    first_read, last_write);
        if (first_read >= 0 && writes == 0 && !is_head && !bad++)
            fprintf(stderr, "chain: entry %u read but never written\n", gid);
    }
    return bad;
}

/*
 * Random graphs of element-wise, activation, FullyConnected, identity, hidden-output
 * and gradient-stopping operators (shared inputs, several outputs), planned with
 * random requests and match ranges: every plan passes the independent checker and
 * the add-to chain checks.
 */
static void test_random_graphs(void) {
    static const char *const ranges[] = {"0", "1", "2", "16"};
    uint64_t seed = 12345;
    int plans = 0;
    for (int iter = 0; iter < 150; iter++) {
        pu_arena ar = {0};
        mxk_symbol *pool[48];
        int n = 0;
        pool[n++] = pu_keep(&ar, pu_var("x0"));
        pool[n++] = pu_keep(&ar, pu_var("x1"));
        int nodes = 3 + (int)(rnd(&seed) % 14);
        for (int i = 0; i < nodes; i++) {
            char nm[16];
            snprintf(nm, sizeof nm, "n%d", i);
            mxk_symbol *a = pool[rnd(&seed) % (uint32_t)n], *b = pool[rnd(&seed) % (uint32_t)n];
            mxk_symbol *y = NULL;
            switch (rnd(&seed) % 9) {
            case 0:
                y = pu_op("Activation", nm, "act_type=sigmoid", 1, a);
                break;
            case 1:
                y = pu_op("_plus", nm, NULL, 2, a, b);
                break;
            case 2:
                y = pu_op("_mul", nm, NULL, 2, a, b);
                break;
            case 3:
                y = pu_op("_mul_scalar", nm, "scalar=3", 1, a);
                break;
            case 4:
                y = pu_op("FullyConnected", nm, "num_hidden=6", 1, a);
                break;
            case 5:
                y = pu_op("_copyto", nm, NULL, 1, a);
                break;
            case 6:
                y = pu_op("TestDropout", nm, NULL, 1, a);
                break;
            case 7:
                y = pu_op("TestBlockGrad", nm, NULL, 1, a);
                break;
            default:
                y = pu_op("Activation", nm, "act_type=relu", 1, a);
                break;
            }
            if (y == NULL)
                break;
            pool[n++] = pu_keep(&ar, y);
        }
        /* outputs: the last node plus a random other one (maybe a loss on top) */
        mxk_symbol *outs[2] = {pool[n - 1], pool[2 + rnd(&seed) % (uint32_t)(n - 2)]};
        if (rnd(&seed) % 2)
            outs[1] = pu_keep(&ar, pu_op("SoftmaxOutput", "loss", NULL, 1, outs[1]));
        mxk_symbol *grp = NULL;
        uint32_t nouts = outs[0] == outs[1] ? 1 : 2;
        CHECK_EQ_INT(mxk_symbol_group(nouts, outs, &grp), MXK_OK);
        pu_keep(&ar, grp);
        const char *grads[] = {"write", "add", "null"};
        const char *no_grad = rnd(&seed) % 2 ? "x1,loss_label" : "loss_label";
        setenv("MXK_EXEC_MATCH_RANGE", ranges[rnd(&seed) % 4], 1);
        pu_plans pl;
        int rc = pu_plan(grp, "?x0=4,6;?x1=4,6;?loss_label=4", grads[rnd(&seed) % 3], no_grad, &pl);
        CHECK(rc == 0);
        if (pl.m != NULL) {
            plans++;
            int bad = pu_check_plan(&pl) + check_chains(&pl);
            if (bad)
                fprintf(stderr, "random graph %d failed\n", iter);
            CHECK_EQ_INT(bad, 0);
        }
        pu_plans_free(&pl);
        pu_arena_free(&ar);
    }
    unsetenv("MXK_EXEC_MATCH_RANGE");
    CHECK(plans > 100);
}

/* Loads cpu-blas and the passes-test plugin, runs the tests. */
int main(void) {
    if (pu_init(BUILD_CONFDIR) != 0)
        return 1;
    unsetenv("MXK_EXEC_MATCH_RANGE");
    MXK_RUN(test_sigmoid_chain_constant_memory);
    MXK_RUN(test_inplace_trap);
    MXK_RUN(test_fc_output_freed_activation_kept);
    MXK_RUN(test_inference_smaller_than_training);
    MXK_RUN(test_mlp_plan_matches_seed);
    MXK_RUN(test_half_of_naive);
    MXK_RUN(test_no_sharing_between_parallel_branches);
    MXK_RUN(test_match_range);
    MXK_RUN(test_bad_match_range_warned);
    MXK_RUN(test_shared_block_is_the_maximum);
    MXK_RUN(test_hidden_outputs_and_externals);
    MXK_RUN(test_arguments);
    MXK_RUN(test_random_graphs);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
