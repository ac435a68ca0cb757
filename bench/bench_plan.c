/*
 * Memory plans of the graph passes (kernel/graph/plan_memory.c) against a naive plan
 * (one buffer per internal entry), as MXNet's note_memory.md reports them ("coarse-
 * grained graphs use about half the memory ... inference needs far less than
 * training"): MXNet's MNIST MLP (784-128-64-10), note_memory.md's two-layer perceptron and
 * a LeNet-shaped network (test convolution/pooling operators with MXNet's shapes),
 * batch 64, in training (gradients of every weight, none for data and label) and
 * inference. Only the plans are built; nothing is bound or allocated. Also times the
 * passes (indexed graph, inference, gradient plan, memory plan) on a 1000-operator
 * graph. Usage: bench_plan (uses the build tree's config dir and the passes-test
 * plugin).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "passes_util.h"

/** Monotonic seconds. */
static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/** Plans `sym` in one mode and prints one row; returns 0 on success. */
static int row(const char *name, const mxk_symbol *sym, const char *shapes, int training) {
    pu_plans pl;
    double t0 = now();
    int rc = pu_plan(sym, shapes, training ? "write" : "null", "data,out_label", &pl);
    double dt = now() - t0;
    if (rc != 0) {
        pu_plans_free(&pl);
        return -1;
    }
    uint32_t inplace = 0;
    for (uint32_t e = 0; e < pl.m->num_entries; e++)
        inplace += pl.m->inplace[e];
    printf("%-22s %-9s %5u %7u %12.3f %12.3f %7.1f%% %7u %9.3f\n", name,
           training ? "training" : "inference", pl.p->num_steps, pl.m->num_blocks,
           (double)pl.m->total_bytes / (1 << 20), (double)pl.m->naive_bytes / (1 << 20),
           100.0 * (double)pl.m->total_bytes / (double)pl.m->naive_bytes, inplace, 1e3 * dt);
    pu_plans_free(&pl);
    return 0;
}

/** n FC(32)+sigmoid pairs with a skip connection (_copyto, _plus) every 10 layers. */
static mxk_symbol *big_graph(int n) {
    mxk_symbol *x = pu_var("data"), *skip = NULL;
    for (int i = 0; i < n; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "fc%d", i);
        mxk_symbol *f = pu_op("FullyConnected", nm, "num_hidden=32", 1, x);
        snprintf(nm, sizeof nm, "act%d", i);
        mxk_symbol *a = pu_op("Activation", nm, "act_type=sigmoid", 1, f);
        mxk_symbol_free(f);
        if (i % 10 == 9 && skip != NULL) {
            snprintf(nm, sizeof nm, "add%d", i);
            mxk_symbol *s = pu_op("_plus", nm, NULL, 2, a, skip);
            mxk_symbol_free(a);
            a = s;
        }
        if (i % 10 == 0) {
            mxk_symbol_free(skip);
            skip = pu_op("_copyto", NULL, NULL, 1, a);
        }
        mxk_symbol_free(x);
        x = a;
    }
    mxk_symbol_free(skip);
    mxk_symbol *out = pu_op("SoftmaxOutput", "out", NULL, 1, x);
    mxk_symbol_free(x);
    return out;
}

/** Prints one row per graph and mode; exit 1 when a plan fails. */
int main(void) {
    if (pu_init(BUILD_CONFDIR) != 0)
        return 1;
    printf("%-22s %-9s %5s %7s %12s %12s %8s %7s %9s\n", "graph (batch 64)", "mode", "steps",
           "blocks", "planned MiB", "naive MiB", "ratio", "inplace", "plan ms");
    mxk_symbol *mlp3 = pu_mlp3(), *mlp2 = pu_mlp(128, 10, "relu"), *lenet = pu_lenet();
    int bad = 0;
    for (int t = 1; t >= 0; t--) {
        bad |= row("MLP 784-128-64-10", mlp3, "data=64,784;out_label=64", t);
        bad |= row("MLP 784-128-10", mlp2, "data=64,784;out_label=64", t);
        bad |= row("LeNet 1x28x28", lenet, "data=64,1,28,28;out_label=64", t);
    }
    mxk_symbol *big = big_graph(455); /* 1001 operators (the last _copyto is unused) */
    for (int t = 1; t >= 0; t--)
        bad |= row("1001-op skip graph", big, "data=64,32;out_label=64", t);
    pu_free(mlp3, mlp2, lenet, big, NULL);
    mxk_shutdown();
    return bad ? 1 : 0;
}
