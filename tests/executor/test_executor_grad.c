/*
 * Gradients of random composite graphs against central finite differences.
 *
 * Each case builds a random graph of FullyConnected, Activation (tanh, sigmoid),
 * _plus, _minus, _mul (the same input twice included), dot (plain and transposed)
 * and scalar operators over 2-D arrays, with diamonds (nodes reused by several
 * consumers) and one or two outputs. The objective is L = sum_h <out_h, head_h> for
 * random head gradients, computed in float64 from the executor's float32 outputs by
 * running forward repeatedly; d L / d x by central differences is compared with the
 * gradient backward writes for a sample of every argument's elements. grad_req add
 * is checked to double the gradient over two backward calls.
 */
#include "exec_test_util.h"

/** xorshift64* (deterministic per case). */
static uint64_t rnd(uint64_t *s) {
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/** Uniform in [lo, hi). */
static double urand(uint64_t *s, double lo, double hi) {
    return lo + (hi - lo) * (double)(rnd(s) >> 11) / 9007199254740992.0;
}

/** A node of the random graph: its symbol and 2-D shape. */
typedef struct gnode {
    mxk_symbol *sym;
    int64_t rows, cols;
    int uses;
} gnode;

#define MAX_NODES 32

/** The random graph under construction. */
typedef struct rgraph {
    gnode n[MAX_NODES];
    int count;
    int num_vars;
    uint64_t rng;
    char log[1024]; /**< a description, printed on failure */
} rgraph;

/** Adds a node (takes the symbol). */
static int add(rgraph *g, mxk_symbol *s, int64_t rows, int64_t cols, const char *what) {
    if (s == NULL || g->count >= MAX_NODES) {
        mxk_symbol_free(s);
        return -1;
    }
    g->n[g->count] = (gnode){s, rows, cols, 0};
    size_t len = strlen(g->log);
    snprintf(g->log + len, sizeof g->log - len, "%s%s(%lldx%lld)", len ? " " : "", what,
             (long long)rows, (long long)cols);
    return g->count++;
}

/** A random existing node index, preferring recent ones. */
static int pick(rgraph *g) {
    int lo = g->count > 4 ? g->count - 4 : 0;
    int i = (rnd(&g->rng) % 3 == 0) ? (int)(rnd(&g->rng) % (uint64_t)g->count)
                                    : lo + (int)(rnd(&g->rng) % (uint64_t)(g->count - lo));
    g->n[i].uses++;
    return i;
}

/** A node with the given shape other than `except` if possible, else -1. */
static int pick_shape(rgraph *g, int64_t rows, int64_t cols, int except) {
    int cand[MAX_NODES], m = 0;
    for (int i = 0; i < g->count; i++)
        if (g->n[i].rows == rows && g->n[i].cols == cols && i != except)
            cand[m++] = i;
    if (m == 0)
        return -1;
    int i = cand[rnd(&g->rng) % (uint64_t)m];
    g->n[i].uses++;
    return i;
}

/** Adds one random operator node. */
static void grow(rgraph *g) {
    char name[16];
    snprintf(name, sizeof name, "n%d", g->count);
    int a = pick(g);
    gnode A = g->n[a];
    char attr[64];
    switch (rnd(&g->rng) % 8) {
    case 0: { /* FullyConnected */
        int64_t h = 2 + (int64_t)(rnd(&g->rng) % 3);
        snprintf(attr, sizeof attr, "num_hidden=%lld", (long long)h);
        add(g, et_op("FullyConnected", name, attr, 1, A.sym), A.rows, h, "fc");
        break;
    }
    case 1:
    case 2: { /* Activation */
        const char *act = rnd(&g->rng) % 2 ? "tanh" : "sigmoid";
        snprintf(attr, sizeof attr, "act_type=%s", act);
        add(g, et_op("Activation", name, attr, 1, A.sym), A.rows, A.cols, act);
        break;
    }
    case 3:
    case 4: { /* element-wise binary, the same node twice sometimes */
        static const char *const ops[] = {"_plus", "_minus", "_mul"};
        const char *op = ops[rnd(&g->rng) % 3];
        int b = rnd(&g->rng) % 4 == 0 ? a : pick_shape(g, A.rows, A.cols, a);
        if (b < 0)
            b = a;
        add(g, et_op(op, name, NULL, 2, A.sym, g->n[b].sym), A.rows, A.cols, op);
        break;
    }
    case 5: { /* dot(a, b^T): a (R,C), b (S,C) -> (R,S) */
        int b = -1;
        for (int i = 0; i < g->count && b < 0; i++)
            if (g->n[i].cols == A.cols && i != a && rnd(&g->rng) % 2)
                b = i;
        if (b < 0)
            b = a;
        g->n[b].uses++;
        add(g, et_op("dot", name, "transpose_b=True", 2, A.sym, g->n[b].sym), A.rows, g->n[b].rows,
            "dotT");
        break;
    }
    case 6: { /* dot(a, b): a (R,C), b (C,E) -> (R,E); else dot(a^T, b) with b (R,E) */
        int b = pick_shape(g, A.cols, 1 + (int64_t)(rnd(&g->rng) % 4), -1);
        for (int64_t e = 1; b < 0 && e <= 4; e++)
            b = pick_shape(g, A.cols, e, -1);
        if (b >= 0) {
            add(g, et_op("dot", name, NULL, 2, A.sym, g->n[b].sym), A.rows, g->n[b].cols, "dot");
            break;
        }
        b = pick_shape(g, A.rows, A.cols, -1);
        if (b < 0)
            b = a;
        add(g, et_op("dot", name, "transpose_a=True", 2, A.sym, g->n[b].sym), A.cols, g->n[b].cols,
            "Tdot");
        break;
    }
    default: { /* scalar */
        int mul = rnd(&g->rng) % 2;
        snprintf(attr, sizeof attr, "scalar=%s", mul ? "0.7" : "-0.3");
        add(g, et_op(mul ? "_mul_scalar" : "_plus_scalar", name, attr, 1, A.sym), A.rows, A.cols,
            mul ? "mul_s" : "plus_s");
        break;
    }
    }
}

/** Frees the graph's symbols. */
static void rgraph_free(rgraph *g) {
    for (int i = 0; i < g->count; i++)
        mxk_symbol_free(g->n[i].sym);
}

/** The objective sum_h <out_h, head_h> in float64 after a forward pass. */
static double objective(mxk_executor *ex, uint32_t nout, float *const *heads) {
    double L = 0;
    if (mxk_executor_forward(ex, 0) != MXK_OK) {
        fprintf(stderr, "forward: %s\n", mxk_get_last_error());
        return NAN;
    }
    for (uint32_t h = 0; h < nout; h++) {
        mxk_ndarray *o = mxk_executor_output(ex, h);
        uint64_t n = mxk_ndarray_size(o);
        float *v = malloc(n * sizeof *v);
        et_host(o, v);
        for (uint64_t i = 0; i < n; i++)
            L += (double)v[i] * (double)heads[h][i];
        free(v);
    }
    return L;
}

/** One random case: builds, binds, compares. Returns the number of checked elements. */
static int run_case(uint64_t seed) {
    rgraph g;
    memset(&g, 0, sizeof g);
    g.rng = seed * 0x9E3779B97F4A7C15ULL + 1;
    int nv = 1 + (int)(rnd(&g.rng) % 3);
    for (int i = 0; i < nv; i++) {
        char name[8];
        snprintf(name, sizeof name, "x%d", i);
        add(&g, et_var(name), 2 + (int64_t)(rnd(&g.rng) % 3), 2 + (int64_t)(rnd(&g.rng) % 3), name);
    }
    g.num_vars = nv;
    int nops = 3 + (int)(rnd(&g.rng) % 6);
    for (int i = 0; i < nops; i++)
        grow(&g);
    /* Outputs: the last node, and sometimes an earlier operator node (a diamond tail). */
    mxk_symbol *outs[2] = {g.n[g.count - 1].sym, NULL};
    uint32_t nout = 1;
    int second = g.count - 2;
    if (second >= nv && rnd(&g.rng) % 2)
        outs[nout++] = g.n[second].sym;
    mxk_symbol *sym = NULL;
    if (mxk_symbol_group(nout, outs, &sym) != MXK_OK) {
        fprintf(stderr, "group: %s\n", mxk_get_last_error());
        rgraph_free(&g);
        return -1;
    }
    /* Shapes of the data variables; the rest (weights, biases) are inferred. */
    const char *names[MAX_NODES];
    mxk_shape shapes[MAX_NODES];
    char nbuf[MAX_NODES][8];
    for (int i = 0; i < nv; i++) {
        snprintf(nbuf[i], sizeof nbuf[i], "x%d", i);
        names[i] = nbuf[i];
        shapes[i] = et_shape(2, g.n[i].rows, g.n[i].cols, 0, 0);
    }
    mxk_executor *ex = NULL;
    if (mxk_executor_simple_bind(sym, et_cpu, (uint32_t)nv, names, shapes, "write", 0, NULL, NULL,
                                 NULL, &ex) != MXK_OK) {
        fprintf(stderr, "case %llu (%s): simple_bind: %s\n", (unsigned long long)seed, g.log,
                mxk_get_last_error());
        CHECK(0);
        mxk_symbol_free(sym);
        rgraph_free(&g);
        return -1;
    }
    char **args = NULL;
    uint32_t na = 0;
    mxk_symbol_list_names(sym, MXK_SYMBOL_ARGUMENTS, &na, &args);
    /* Random argument values (host copies kept for the perturbations). */
    float *vals[64] = {0};
    uint64_t sizes[64] = {0};
    for (uint32_t i = 0; i < na && i < 64; i++) {
        mxk_ndarray *a = mxk_executor_arg(ex, args[i]);
        sizes[i] = mxk_ndarray_size(a);
        vals[i] = malloc(sizes[i] * sizeof(float));
        for (uint64_t k = 0; k < sizes[i]; k++)
            vals[i][k] = (float)urand(&g.rng, -1, 1);
        mxk_ndarray_copy_from_host(a, vals[i], sizes[i] * sizeof(float));
    }
    float *heads[2];
    mxk_ndarray *head_arr[2];
    for (uint32_t h = 0; h < nout; h++) {
        mxk_ndarray *o = mxk_executor_output(ex, h);
        uint64_t n = mxk_ndarray_size(o);
        heads[h] = malloc(n * sizeof(float));
        for (uint64_t k = 0; k < n; k++)
            heads[h][k] = (float)urand(&g.rng, -1, 1);
        mxk_shape s = mxk_ndarray_shape(o);
        head_arr[h] = et_array(s, heads[h]);
    }
    CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
    CHECK_EQ_INT(mxk_executor_backward(ex, nout, head_arr), MXK_OK);
    float *grads[64] = {0};
    for (uint32_t i = 0; i < na && i < 64; i++) {
        grads[i] = malloc(sizes[i] * sizeof(float));
        et_host(mxk_executor_grad(ex, args[i]), grads[i]);
    }
    int checked = 0, failed = 0;
    const double eps = 1e-2;
    for (uint32_t i = 0; i < na && i < 64; i++) {
        mxk_ndarray *a = mxk_executor_arg(ex, args[i]);
        for (int t = 0; t < 6; t++) {
            uint64_t k = rnd(&g.rng) % sizes[i];
            float orig = vals[i][k];
            vals[i][k] = (float)(orig + eps);
            mxk_ndarray_copy_from_host(a, vals[i], sizes[i] * sizeof(float));
            double lp = objective(ex, nout, heads);
            vals[i][k] = (float)(orig - eps);
            mxk_ndarray_copy_from_host(a, vals[i], sizes[i] * sizeof(float));
            double lm = objective(ex, nout, heads);
            vals[i][k] = orig;
            mxk_ndarray_copy_from_host(a, vals[i], sizes[i] * sizeof(float));
            /* The perturbation actually applied in float32. */
            double h2 = (double)(float)(orig + eps) - (double)(float)(orig - eps);
            double fd = (lp - lm) / h2, an = grads[i][k];
            checked++;
            if (!(fabs(fd - an) <= 5e-3 * (1.0 + fabs(an)))) {
                if (failed++ < 3)
                    fprintf(stderr,
                            "case %llu [%s]: d/d %s[%llu]: backward %.6g, finite "
                            "differences %.6g\n",
                            (unsigned long long)seed, g.log, args[i], (unsigned long long)k, an,
                            fd);
            }
        }
    }
    CHECK_EQ_INT(failed, 0);
    /* grad_req add: a second executor accumulating twice gives twice the gradient. */
    mxk_executor *ax = NULL;
    if (mxk_executor_simple_bind(sym, et_cpu, (uint32_t)nv, names, shapes, "add", 0, NULL, NULL,
                                 NULL, &ax) == MXK_OK) {
        for (uint32_t i = 0; i < na && i < 64; i++)
            mxk_ndarray_copy_from_host(mxk_executor_arg(ax, args[i]), vals[i],
                                       sizes[i] * sizeof(float));
        for (int it = 0; it < 2; it++) {
            CHECK_EQ_INT(mxk_executor_forward(ax, 1), MXK_OK);
            CHECK_EQ_INT(mxk_executor_backward(ax, nout, head_arr), MXK_OK);
        }
        for (uint32_t i = 0; i < na && i < 64; i++) {
            float *g2 = malloc(sizes[i] * sizeof(float));
            et_host(mxk_executor_grad(ax, args[i]), g2);
            for (uint64_t k = 0; k < sizes[i]; k++)
                CHECK_NEAR(g2[k], 2.0 * grads[i][k], 1e-5);
            free(g2);
        }
        mxk_executor_free(ax);
    } else {
        fprintf(stderr, "simple_bind add: %s\n", mxk_get_last_error());
        CHECK(0);
    }
    for (uint32_t i = 0; i < na && i < 64; i++) {
        free(vals[i]);
        free(grads[i]);
    }
    for (uint32_t h = 0; h < nout; h++) {
        free(heads[h]);
        mxk_ndarray_free(head_arr[h]);
    }
    mxk_string_list_free(args);
    mxk_executor_free(ex);
    mxk_symbol_free(sym);
    rgraph_free(&g);
    return checked;
}

static void test_random_graphs(void) {
    int total = 0;
    for (uint64_t seed = 1; seed <= 150; seed++) {
        int n = run_case(seed);
        CHECK(n > 0);
        total += n > 0 ? n : 0;
    }
    printf("checked %d gradient elements in 150 random graphs\n", total);
}

/** A fixed diamond: y = tanh(x) * sigmoid(x) + dot(x, x^T) . w, through every path. */
static void test_diamond(void) {
    mxk_symbol *x = et_var("x");
    mxk_symbol *t = et_op("Activation", "t", "act_type=tanh", 1, x);
    mxk_symbol *s = et_op("Activation", "s", "act_type=sigmoid", 1, x);
    mxk_symbol *m = et_op("_mul", "m", NULL, 2, t, s);
    mxk_symbol *d = et_op("dot", "d", "transpose_b=True", 2, x, x);
    mxk_symbol *f = et_op("FullyConnected", "f", "num_hidden=3", 1, d);
    mxk_symbol *y = et_op("_plus", "y", NULL, 2, m, f);
    const char *names[] = {"x"};
    mxk_shape shapes[] = {et_shape(2, 3, 3, 0, 0)};
    mxk_executor *ex = NULL;
    CHECK_EQ_INT(
        mxk_executor_simple_bind(y, et_cpu, 1, names, shapes, "write", 0, NULL, NULL, NULL, &ex),
        MXK_OK);
    if (ex != NULL) {
        float xv[9], wv[9], bv[3] = {0.1f, -0.2f, 0.3f}, hv[9];
        for (int i = 0; i < 9; i++) {
            xv[i] = 0.1f * (float)(i - 4);
            wv[i] = 0.05f * (float)((i * 7) % 9 - 4);
            hv[i] = 1.0f - 0.1f * (float)i;
        }
        mxk_ndarray_copy_from_host(mxk_executor_arg(ex, "x"), xv, sizeof xv);
        mxk_ndarray_copy_from_host(mxk_executor_arg(ex, "f_weight"), wv, sizeof wv);
        mxk_ndarray_copy_from_host(mxk_executor_arg(ex, "f_bias"), bv, sizeof bv);
        mxk_ndarray *head = et_array(et_shape(2, 3, 3, 0, 0), hv);
        CHECK_EQ_INT(mxk_executor_forward(ex, 1), MXK_OK);
        CHECK_EQ_INT(mxk_executor_backward(ex, 1, &head), MXK_OK);
        float gx[9];
        et_host(mxk_executor_grad(ex, "x"), gx);
        float *heads[1] = {hv};
        for (int k = 0; k < 9; k++) {
            float orig = xv[k];
            xv[k] = orig + 1e-2f;
            mxk_ndarray_copy_from_host(mxk_executor_arg(ex, "x"), xv, sizeof xv);
            double lp = objective(ex, 1, heads);
            xv[k] = orig - 1e-2f;
            mxk_ndarray_copy_from_host(mxk_executor_arg(ex, "x"), xv, sizeof xv);
            double lm = objective(ex, 1, heads);
            xv[k] = orig;
            mxk_ndarray_copy_from_host(mxk_executor_arg(ex, "x"), xv, sizeof xv);
            double h2 = (double)(orig + 1e-2f) - (double)(orig - 1e-2f);
            CHECK_NEAR(gx[k], (lp - lm) / h2, 2e-3);
        }
        mxk_ndarray_free(head);
        mxk_executor_free(ex);
    }
    et_free_syms(7, x, t, s, m, d, f, y);
}

int main(void) {
    if (et_init() != 0)
        return 1;
    MXK_RUN(test_diamond);
    MXK_RUN(test_random_graphs);
    int rc = MXK_TEST_EXIT();
    mxk_shutdown();
    return rc;
}
