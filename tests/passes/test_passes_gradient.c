/*
 * The gradient plan (kernel/graph/gradient.c): schedule structure for executor.py's
 * c = 2a + b and for an MLP, what each backward step reads (the operators'
 * declared backward dependencies), gradient aggregation as an add-to chain
 * (x feeding two consumers: WRITE then ADD), head gradients (none for a loss,
 * shared with internal consumers otherwise), argument requests (null prunes, add
 * accumulates), BlockGrad-like operators (no_gradient) stopping gradients, hidden
 * outputs read by backward, and errors.
 */
#include <string.h>

#include "passes_util.h"
#include "testing.h"

/** Counts the steps that write gradient entry `gid`, and the request of each. */
static int writers_of(const mxk_grad_plan *p, uint32_t gid, mxk_op_req *reqs, int max) {
    int n = 0;
    for (uint32_t s = p->num_fwd_steps; s < p->num_steps; s++)
        for (uint32_t k = 0; k < p->steps[s].num_out; k++)
            if (p->steps[s].out[k] == gid) {
                if (n < max)
                    reqs[n] = p->steps[s].req[k];
                n++;
            }
    return n;
}

/* The example of python/mxnet/executor.py's docstrings: c = 2 * a + b (b an input). */
static void test_c_equals_2a_plus_b(void) {
    mxk_symbol *a = pu_var("a"), *b = pu_var("b");
    mxk_symbol *m = pu_op("_mul_scalar", "_mulscalar0", "scalar=2", 1, a);
    mxk_symbol *c = pu_op("_plus", "_plus0", NULL, 2, m, b);
    pu_plans pl;
    CHECK(pu_plan(c, "a=2;b=2", "write", NULL, &pl) == 0);
    const mxk_grad_plan *p = pl.p;
    if (p == NULL)
        goto done;
    CHECK_EQ_INT(p->num_fwd_steps, 2);
    CHECK_EQ_INT(p->num_steps, 4);
    CHECK(pu_step(&pl, "_mulscalar0", 0) == 0 && pu_step(&pl, "_plus0", 0) == 1);
    CHECK(pu_step(&pl, "_plus0", 1) == 2 && pu_step(&pl, "_mulscalar0", 1) == 3);
    /* _plus0's output is not a loss: it has a head gradient, which is its gradient */
    uint32_t hc = p->head_grad[0];
    CHECK(hc != UINT32_MAX && hc == pu_grad(&pl, "_plus0", 0));
    CHECK(hc >= p->num_fwd_entries && hc < p->num_full_entries);
    /* backward of _plus0: reads only out_grad; writes grad(m) and grad(b) */
    const mxk_exec_step *s = &p->steps[2];
    CHECK_EQ_INT(s->num_in, 1 + 2 + 1);
    CHECK_EQ_INT(s->in[0], hc);
    CHECK(s->in[1] == UINT32_MAX && s->in[2] == UINT32_MAX && s->in[3] == UINT32_MAX);
    CHECK_EQ_INT(s->num_out, 2);
    CHECK_EQ_INT(s->out[0], pu_grad(&pl, "_mulscalar0", 0));
    CHECK_EQ_INT(s->out[1], p->arg_grad[pu_arg(pl.g, "b")]);
    CHECK(s->req[0] == MXK_REQ_WRITE && s->req[1] == MXK_REQ_WRITE);
    /* backward of _mulscalar0 reads grad(m), writes grad(a) */
    s = &p->steps[3];
    CHECK_EQ_INT(s->in[0], pu_grad(&pl, "_mulscalar0", 0));
    CHECK_EQ_INT(s->out[0], p->arg_grad[pu_arg(pl.g, "a")]);
    CHECK(s->req[0] == MXK_REQ_WRITE);
    /* argument gradients are the variables' gradient entries */
    CHECK_EQ_INT(p->arg_grad[pu_arg(pl.g, "a")], pu_grad(&pl, "a", 0));
    CHECK(p->arg_req[0] == MXK_REQ_WRITE && p->arg_req[1] == MXK_REQ_WRITE);
    /* grad_src maps back; external: args, their gradients, the head gradient */
    CHECK_EQ_INT(p->grad_src[hc - p->num_fwd_entries], pl.g->outputs[0]);
    CHECK(pl.external[hc] && pl.external[p->arg_grad[0]] && pl.external[pu_entry(pl.g, "a", 0)]);
    CHECK(!pl.external[pu_grad(&pl, "_mulscalar0", 0)]);
    CHECK_EQ_INT(pu_check_plan(&pl), 0);
done:
    pu_plans_free(&pl);
    pu_free(a, b, m, c, NULL);
}

/* note_memory.md's MLP: each backward step reads exactly its declared dependencies. */
static void test_mlp_structure(void) {
    mxk_symbol *net = pu_mlp(128, 10, "relu");
    pu_plans pl;
    CHECK(pu_plan(net, "data=64,784;out_label=64", "write", "data,out_label", &pl) == 0);
    const mxk_grad_plan *p = pl.p;
    if (p == NULL)
        goto done;
    CHECK_EQ_INT(p->num_fwd_steps, 4);
    CHECK_EQ_INT(p->num_steps, 8);
    const char *bwd[] = {"out", "fc2", "act1", "fc1"};
    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(pu_step(&pl, bwd[i], 1), 4 + i);
    /* SoftmaxOutput is a loss: no head gradient; its backward reads label and output */
    CHECK_EQ_INT(p->head_grad[0], UINT32_MAX);
    CHECK_EQ_INT(pu_grad(&pl, "out", 0), UINT32_MAX);
    const mxk_exec_step *s = &p->steps[4];
    CHECK_EQ_INT(s->num_in, 1 + 2 + 1);
    CHECK(s->in[0] == UINT32_MAX && s->in[1] == UINT32_MAX);
    CHECK_EQ_INT(s->in[2], pu_entry(pl.g, "out_label", 0));
    CHECK_EQ_INT(s->in[3], pu_entry(pl.g, "out", 0));
    CHECK_EQ_INT(s->out[0], pu_grad(&pl, "fc2", 0));
    CHECK(s->req[0] == MXK_REQ_WRITE);
    CHECK(s->out[1] == UINT32_MAX && s->req[1] == MXK_REQ_NULL); /* label: null */
    /* FullyConnected reads out_grad, data and weight, not its output */
    s = &p->steps[5];
    CHECK_EQ_INT(s->num_in, 1 + 3 + 1);
    CHECK_EQ_INT(s->in[0], pu_grad(&pl, "fc2", 0));
    CHECK_EQ_INT(s->in[1], pu_entry(pl.g, "act1", 0));
    CHECK_EQ_INT(s->in[2], pu_entry(pl.g, "fc2_weight", 0));
    CHECK(s->in[3] == UINT32_MAX && s->in[4] == UINT32_MAX);
    CHECK_EQ_INT(s->out[0], pu_grad(&pl, "act1", 0));
    CHECK_EQ_INT(s->out[1], p->arg_grad[pu_arg(pl.g, "fc2_weight")]);
    CHECK_EQ_INT(s->out[2], p->arg_grad[pu_arg(pl.g, "fc2_bias")]);
    /* Activation(relu) reads out_grad and its output, not its input */
    s = &p->steps[6];
    CHECK_EQ_INT(s->num_in, 3);
    CHECK_EQ_INT(s->in[0], pu_grad(&pl, "act1", 0));
    CHECK_EQ_INT(s->in[1], UINT32_MAX);
    CHECK_EQ_INT(s->in[2], pu_entry(pl.g, "act1", 0));
    CHECK_EQ_INT(s->out[0], pu_grad(&pl, "fc1", 0));
    /* fc1: no gradient for data (null) */
    s = &p->steps[7];
    CHECK(s->out[0] == UINT32_MAX && s->req[0] == MXK_REQ_NULL);
    CHECK(s->req[1] == MXK_REQ_WRITE && s->req[2] == MXK_REQ_WRITE);
    CHECK_EQ_INT(p->arg_grad[pu_arg(pl.g, "data")], UINT32_MAX);
    CHECK_EQ_INT(pu_grad(&pl, "data", 0), UINT32_MAX);
    /* gradient entries: fc2, act1, fc1 outputs and the four weights */
    CHECK_EQ_INT(p->num_full_entries - p->num_fwd_entries, 3 + 4);
    CHECK_EQ_INT(pu_check_plan(&pl), 0);
done:
    pu_plans_free(&pl);
    mxk_symbol_free(net);
}

/* note_memory.md's gradient-aggregation node: x feeds two consumers. */
static void test_aggregation_write_then_add(void) {
    mxk_symbol *x = pu_var("x");
    mxk_symbol *y1 = pu_op("Activation", "y1", "act_type=sigmoid", 1, x);
    mxk_symbol *y2 = pu_op("_mul_scalar", "y2", "scalar=3", 1, x);
    mxk_symbol *z = pu_op("_plus", "z", NULL, 2, y1, y2);
    pu_plans pl;
    CHECK(pu_plan(z, "x=4,5", "write", NULL, &pl) == 0);
    if (pl.p != NULL) {
        uint32_t gx = pl.p->arg_grad[0];
        mxk_op_req r[4];
        CHECK_EQ_INT(writers_of(pl.p, gx, r, 4), 2);
        CHECK(r[0] == MXK_REQ_WRITE && r[1] == MXK_REQ_ADD);
        /* reverse topological order: z, y2, y1 */
        CHECK(pu_step(&pl, "z", 1) < pu_step(&pl, "y2", 1));
        CHECK(pu_step(&pl, "y2", 1) < pu_step(&pl, "y1", 1));
        CHECK_EQ_INT(pu_check_plan(&pl), 0);
    }
    pu_plans_free(&pl);
    /* grad_req add: every contribution adds */
    CHECK(pu_plan(z, "x=4,5", "add", NULL, &pl) == 0);
    if (pl.p != NULL) {
        mxk_op_req r[4];
        CHECK_EQ_INT(writers_of(pl.p, pl.p->arg_grad[0], r, 4), 2);
        CHECK(r[0] == MXK_REQ_ADD && r[1] == MXK_REQ_ADD);
        CHECK(pl.p->arg_req[0] == MXK_REQ_ADD);
    }
    pu_plans_free(&pl);
    pu_free(x, y1, y2, z, NULL);

    /* an internal entry with two consumers: its gradient entry is internal, WRITE then ADD */
    mxk_symbol *d = pu_var("data");
    mxk_symbol *h = pu_op("FullyConnected", "h", "num_hidden=6", 1, d);
    mxk_symbol *a = pu_op("Activation", "a", "act_type=sigmoid", 1, h);
    mxk_symbol *b = pu_op("_mul_scalar", "b", "scalar=2", 1, h);
    mxk_symbol *s = pu_op("_plus", "s", NULL, 2, a, b);
    CHECK(pu_plan(s, "data=4,5", "write", "data", &pl) == 0);
    if (pl.p != NULL) {
        uint32_t gh = pu_grad(&pl, "h", 0);
        CHECK(gh != UINT32_MAX && !pl.external[gh]);
        mxk_op_req r[4];
        CHECK_EQ_INT(writers_of(pl.p, gh, r, 4), 2);
        CHECK(r[0] == MXK_REQ_WRITE && r[1] == MXK_REQ_ADD);
        /* h's backward runs after both contributions and reads the sum */
        int hb = pu_step(&pl, "h", 1);
        CHECK(hb > pu_step(&pl, "a", 1) && hb > pu_step(&pl, "b", 1));
        CHECK_EQ_INT(pl.p->steps[hb].in[0], gh);
        CHECK_EQ_INT(pu_check_plan(&pl), 0);
    }
    pu_plans_free(&pl);
    pu_free(d, h, a, b, s, NULL);

    /* x * x: one step names the same gradient entry twice: WRITE then ADD */
    mxk_symbol *v = pu_var("v");
    mxk_symbol *sq = pu_op("_mul", "sq", NULL, 2, v, v);
    CHECK(pu_plan(sq, "v=3", "write", NULL, &pl) == 0);
    if (pl.p != NULL) {
        const mxk_exec_step *st = &pl.p->steps[pu_step(&pl, "sq", 1)];
        CHECK(st->out[0] == pl.p->arg_grad[0] && st->out[1] == pl.p->arg_grad[0]);
        CHECK(st->req[0] == MXK_REQ_WRITE && st->req[1] == MXK_REQ_ADD);
    }
    pu_plans_free(&pl);
    pu_free(v, sq, NULL);
}

/* BlockGrad-like (no_gradient) and null requests prune backward steps. */
static void test_block_grad_and_null_prune(void) {
    pu_arena ar = {0};
    mxk_symbol *x = pu_keep(&ar, pu_var("data"));
    x = pu_keep(&ar, pu_op("FullyConnected", "fc1", "num_hidden=8", 1, x));
    x = pu_keep(&ar, pu_op("TestBlockGrad", "stop", NULL, 1, x));
    x = pu_keep(&ar, pu_op("FullyConnected", "fc2", "num_hidden=4", 1, x));
    mxk_symbol *out = pu_keep(&ar, pu_op("SoftmaxOutput", "out", NULL, 1, x));
    pu_plans pl;
    CHECK(pu_plan(out, "data=2,3;out_label=2", "write", "data,out_label", &pl) == 0);
    if (pl.p != NULL) {
        CHECK_EQ_INT(pl.p->num_steps - pl.p->num_fwd_steps, 2); /* out, fc2 */
        CHECK(pu_step(&pl, "stop", 1) < 0 && pu_step(&pl, "fc1", 1) < 0);
        int f2 = pu_step(&pl, "fc2", 1);
        CHECK(f2 >= 0 && pl.p->steps[f2].out[0] == UINT32_MAX &&
              pl.p->steps[f2].req[0] == MXK_REQ_NULL);
        /* fc1's weight still has its (external) gradient entry, written by no step:
         * the executor zero-fills it (MXNet's zero gradient) */
        uint32_t gw = pl.p->arg_grad[pu_arg(pl.g, "fc1_weight")];
        mxk_op_req r[2];
        CHECK(gw != UINT32_MAX && writers_of(pl.p, gw, r, 2) == 0);
        CHECK_EQ_INT(pu_check_plan(&pl), 0);
    }
    pu_plans_free(&pl);

    /* cpu-blas's BlockGrad declares no_gradient: gradients stop there, so neither it nor
     * g1 gets a backward step, and g1's weight gradient is written by no step */
    mxk_symbol *y = pu_keep(&ar, pu_var("data"));
    y = pu_keep(&ar, pu_op("FullyConnected", "g1", "num_hidden=8", 1, y));
    y = pu_keep(&ar, pu_op("BlockGrad", "bg", NULL, 1, y));
    y = pu_keep(&ar, pu_op("FullyConnected", "g2", "num_hidden=4", 1, y));
    mxk_symbol *out2 = pu_keep(&ar, pu_op("SoftmaxOutput", "out2", NULL, 1, y));
    CHECK(pu_plan(out2, "data=2,3;out2_label=2", "write", "data,out2_label", &pl) == 0);
    if (pl.p != NULL) {
        CHECK(pu_step(&pl, "bg", 1) < 0 && pu_step(&pl, "g1", 1) < 0);
        /* g2's backward gives nothing to bg */
        int g2 = pu_step(&pl, "g2", 1);
        CHECK(g2 >= 0 && pl.p->steps[g2].req[0] == MXK_REQ_NULL);
        uint32_t gw = pl.p->arg_grad[pu_arg(pl.g, "g1_weight")];
        mxk_op_req r[2];
        CHECK(gw != UINT32_MAX && writers_of(pl.p, gw, r, 2) == 0);
    }
    pu_plans_free(&pl);

    /* null requests: only fc2's weights wanted: fc1's backward is pruned */
    CHECK(pu_plan(out, "data=2,3;out_label=2", "write", "data,out_label,fc1_weight,fc1_bias",
                  &pl) == 0);
    if (pl.p != NULL) {
        CHECK(pu_step(&pl, "fc1", 1) < 0);
        CHECK_EQ_INT(pl.p->arg_grad[pu_arg(pl.g, "fc1_weight")], UINT32_MAX);
    }
    pu_plans_free(&pl);

    /* everything null: forward only, no gradient entries, no head gradients */
    CHECK(pu_plan(out, "data=2,3;out_label=2", "null", NULL, &pl) == 0);
    if (pl.p != NULL) {
        CHECK_EQ_INT(pl.p->num_steps, pl.p->num_fwd_steps);
        CHECK_EQ_INT(pl.p->num_full_entries, pl.p->num_fwd_entries);
        CHECK_EQ_INT(pl.p->head_grad[0], UINT32_MAX);
    }
    pu_plans_free(&pl);
    pu_arena_free(&ar);
}

/* A non-loss output consumed internally too: its head gradient receives ADDs. */
static void test_head_gradient_shared_with_consumers(void) {
    mxk_symbol *d = pu_var("data");
    mxk_symbol *f = pu_op("FullyConnected", "f", "num_hidden=3", 1, d);
    mxk_symbol *s = pu_op("Activation", "s", "act_type=tanh", 1, f);
    mxk_symbol *parts[2] = {f, s}, *grp = NULL;
    CHECK_EQ_INT(mxk_symbol_group(2, parts, &grp), MXK_OK);
    pu_plans pl;
    CHECK(pu_plan(grp, "data=2,5", "write", "data", &pl) == 0);
    if (pl.p != NULL) {
        uint32_t h0 = pl.p->head_grad[0], h1 = pl.p->head_grad[1];
        CHECK(h0 != UINT32_MAX && h1 != UINT32_MAX && h0 != h1);
        CHECK_EQ_INT(h0, pu_grad(&pl, "f", 0));
        mxk_op_req r[2];
        CHECK_EQ_INT(writers_of(pl.p, h0, r, 2), 1);
        CHECK(r[0] == MXK_REQ_ADD); /* s's backward adds onto the head gradient */
        CHECK(pl.external[h0] && pl.external[h1]);
        CHECK_EQ_INT(pu_check_plan(&pl), 0);
    }
    pu_plans_free(&pl);
    pu_free(d, f, s, grp, NULL);
}

/* Hidden outputs (Dropout's mask) are entries; backward reads them when declared. */
static void test_hidden_output_read_by_backward(void) {
    mxk_symbol *d = pu_var("data");
    mxk_symbol *f = pu_op("FullyConnected", "f", "num_hidden=3", 1, d);
    mxk_symbol *dr = pu_op("TestDropout", "drop", NULL, 1, f);
    mxk_symbol *out = pu_op("SoftmaxOutput", "out", NULL, 1, dr);
    pu_plans pl;
    CHECK(pu_plan(out, "data=2,5;out_label=2", "write", "data,out_label", &pl) == 0);
    if (pl.p != NULL) {
        const mxk_exec_step *fs = &pl.p->steps[pu_step(&pl, "drop", 0)];
        const mxk_exec_step *bs = &pl.p->steps[pu_step(&pl, "drop", 1)];
        CHECK_EQ_INT(fs->num_out, 2);
        CHECK(fs->req[1] == MXK_REQ_WRITE);
        CHECK_EQ_INT(bs->num_in, 1 + 1 + 2);
        CHECK_EQ_INT(bs->in[3], pu_entry(pl.g, "drop", 1)); /* the mask */
        CHECK_EQ_INT(bs->in[2], UINT32_MAX);                /* not the output */
        CHECK_EQ_INT(pu_grad(&pl, "drop", 1), UINT32_MAX);  /* hidden: no gradient */
    }
    pu_plans_free(&pl);
    /* inference: nobody reads the mask: its request is null */
    CHECK(pu_plan(out, "data=2,5;out_label=2", "null", NULL, &pl) == 0);
    if (pl.p != NULL) {
        const mxk_exec_step *fs = &pl.p->steps[pu_step(&pl, "drop", 0)];
        CHECK(fs->req[0] == MXK_REQ_WRITE && fs->req[1] == MXK_REQ_NULL);
        CHECK(pl.m->storage[pu_entry(pl.g, "drop", 1)] >= 0); /* still a block, released */
    }
    pu_plans_free(&pl);
    pu_free(d, f, dr, out, NULL);
}

/* Invalid requests, forward-only plans, and gradients through a variable output. */
static void test_errors(void) {
    mxk_symbol *net = pu_mlp(4, 2, "relu");
    mxk_igraph *g = NULL;
    CHECK_EQ_INT(mxki_igraph_build(net, &g), MXK_OK);
    mxk_grad_plan *p = NULL;
    if (g != NULL) {
        mxk_op_req reqs[6] = {MXK_REQ_NULL,  MXK_REQ_INPLACE, MXK_REQ_WRITE,
                              MXK_REQ_WRITE, MXK_REQ_WRITE,   MXK_REQ_NULL};
        CHECK_EQ_INT(mxki_grad_plan_build(g, reqs, &p), MXK_ERR_INVALID_ARGUMENT);
        CHECK_CONTAINS(mxk_get_last_error(), "Gradient request can only be nullop, add, write");
        CHECK_CONTAINS(mxk_get_last_error(), "fc1_weight");
        CHECK(p == NULL);
        /* NULL requests: forward only */
        CHECK_EQ_INT(mxki_grad_plan_build(g, NULL, &p), MXK_OK);
        CHECK(p != NULL && p->num_steps == 4 && p->num_fwd_steps == 4);
        mxki_grad_plan_free(p);
        mxki_igraph_free(g);
    }
    mxk_symbol_free(net);

    /* a variable output whose gradient is wanted */
    mxk_symbol *x = pu_var("x");
    mxk_symbol *y = pu_op("Activation", "y", "act_type=relu", 1, x);
    mxk_symbol *parts[2] = {y, x}, *grp = NULL;
    CHECK_EQ_INT(mxk_symbol_group(2, parts, &grp), MXK_OK);
    g = NULL;
    CHECK_EQ_INT(mxki_igraph_build(grp, &g), MXK_OK);
    if (g != NULL) {
        mxk_op_req w[1] = {MXK_REQ_WRITE};
        CHECK_EQ_INT(mxki_grad_plan_build(g, w, &p), MXK_ERR_UNSUPPORTED);
        CHECK_CONTAINS(mxk_get_last_error(), "variable 'x'");
        mxk_op_req n[1] = {MXK_REQ_NULL};
        p = NULL;
        CHECK_EQ_INT(mxki_grad_plan_build(g, n, &p), MXK_OK);
        mxki_grad_plan_free(p);
        mxki_igraph_free(g);
    }
    pu_free(x, y, grp, NULL);
}

/* Loads cpu-blas and the passes-test plugin, runs the tests. */
int main(void) {
    if (pu_init(BUILD_CONFDIR) != 0)
        return 1;
    MXK_RUN(test_c_equals_2a_plus_b);
    MXK_RUN(test_mlp_structure);
    MXK_RUN(test_aggregation_write_then_add);
    MXK_RUN(test_block_grad_and_null_prune);
    MXK_RUN(test_head_gradient_shared_with_consumers);
    MXK_RUN(test_hidden_output_read_by_backward);
    MXK_RUN(test_errors);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
