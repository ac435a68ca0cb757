/*
 * The multi-threaded kernels of cpu-blas give the same results whatever the
 * thread knob (mxk_set_num_threads 1, 2, 3, 4), at sizes large enough to be
 * split, forward and every gradient:
 *   - the same bits where threads split element-wise work: Pooling (planes),
 *     Activation, the element-wise and unary operators (element ranges), the SGD updates (the
 * vectorised and the general loop);
 *   - within 1e-4 (relative; the sums have thousands of terms) where a matrix product is split:
 * Convolution and Deconvolution (images split over threads, the weight gradient's GEMM split into
 * column blocks), FullyConnected. OpenBLAS computes a block of C with a kernel chosen by the
 * block's size (its small-matrix path below 100^3 multiply-adds), so a split product may differ
 * from the whole one in the last bits. The numbers themselves are checked against float64
 * references in test_nn_ops and test_cpu_blas_direct.
 */
#include <stdlib.h>
#include <string.h>

#include "mxk.h"
#include "testing.h"

static const mxk_context cpu = {MXK_DEV_CPU, 0};

/** One operator case: attributes, the data shape (the rest inferred), and what to run. */
typedef struct op_case {
    const char *op;
    int nattr;
    const char *k[6], *v[6];
    mxk_shape data;
    uint32_t nargs; /**< arguments: data, then inferred ones (update ops: weight, grad of data's
                       shape) */
    int backward;   /**< 1: run backward too (all gradients WRITE); 0: an update operator */
    double tol;     /**< 0: the same bits; else the relative tolerance */
} op_case;

/** Results of one run: every output, mutated input and gradient, concatenated. */
typedef struct run_out {
    float *v;
    size_t n;
} run_out;

/** Appends an array's contents to r. */
static void take(run_out *r, mxk_ndarray *a) {
    size_t n = mxk_ndarray_size(a);
    r->v = realloc(r->v, (r->n + n) * sizeof(float));
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(a, r->v + r->n, n * sizeof(float)), MXK_OK);
    r->n += n;
}

/** A new array of `s` filled from the test's random stream (seeded per run). */
static mxk_ndarray *random_array(const mxk_shape *s) {
    mxk_ndarray *a = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(s, MXK_FLOAT32, cpu, &a), MXK_OK);
    size_t n = mxk_ndarray_size(a);
    float *tmp = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++)
        tmp[i] = mxk_t_frand();
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(a, tmp, n * sizeof(float)), MXK_OK);
    free(tmp);
    return a;
}

/** Runs case c with the thread knob at `threads` on inputs from a fixed seed. */
static run_out run_case(const op_case *c, int threads) {
    run_out r = {NULL, 0};
    CHECK_EQ_INT(mxk_set_num_threads(threads), MXK_OK);
    *mxk_t_rng() = 0x9E3779B97F4A7C15ull;
    mxk_shape shapes[4];
    for (uint32_t i = 0; i < 4; i++)
        shapes[i] = i == 0 || !c->backward ? c->data : (mxk_shape){0};
    mxk_op_instance *inst = NULL;
    if (mxk_op_instance_create(c->op, (uint32_t)c->nattr, c->k, c->v, cpu, c->nargs, shapes, NULL,
                               &inst) != MXK_OK) {
        fprintf(stderr, "%s: %s\n", c->op, mxk_get_last_error());
        CHECK(inst != NULL);
        return r;
    }
    uint32_t ni, no, nv, na;
    mxk_op_instance_counts(inst, &ni, &no, &nv, &na);
    mxk_ndarray *in[4] = {NULL}, *out[2] = {NULL}, *dy[2] = {NULL}, *grad[4] = {NULL},
                *aux[4] = {NULL};
    for (uint32_t i = 0; i < na && i < 4; i++) {
        mxk_shape s;
        mxk_op_instance_shape(inst, 2, i, &s, NULL);
        aux[i] = random_array(&s);
    }
    for (uint32_t i = 0; i < ni; i++) {
        mxk_shape s;
        mxk_op_instance_shape(inst, 0, i, &s, NULL);
        in[i] = random_array(&s);
        grad[i] = random_array(&s); /* WRITE must overwrite every element */
    }
    for (uint32_t i = 0; i < no; i++) {
        mxk_shape s;
        mxk_op_instance_shape(inst, 1, i, &s, NULL);
        out[i] = random_array(&s);
        dy[i] = random_array(&s);
    }
    CHECK_EQ_INT(mxk_op_instance_forward(inst, 1, in, out, NULL, aux), MXK_OK);
    for (uint32_t i = 0; i < no; i++)
        take(&r, out[i]);
    if (!c->backward) /* the update operators: their states (aux) too */
        for (uint32_t i = 0; i < na && i < 4; i++)
            take(&r, aux[i]);
    if (c->backward) {
        CHECK_EQ_INT(mxk_op_instance_backward(inst, dy, in, out, grad, NULL, aux), MXK_OK);
        for (uint32_t i = 0; i < ni; i++)
            take(&r, grad[i]);
    }
    for (uint32_t i = 0; i < ni; i++)
        mxk_ndarray_free(in[i]), mxk_ndarray_free(grad[i]);
    for (uint32_t i = 0; i < no; i++)
        mxk_ndarray_free(out[i]), mxk_ndarray_free(dy[i]);
    for (uint32_t i = 0; i < na && i < 4; i++)
        mxk_ndarray_free(aux[i]);
    mxk_op_instance_free(inst);
    return r;
}

/** A 4-D shape. */
static mxk_shape shp(int64_t a, int64_t b, int64_t c, int64_t d) {
    mxk_shape s = {0};
    s.ndim = d > 0 ? 4 : c > 0 ? 3 : b > 0 ? 2 : 1;
    s.dims[0] = a, s.dims[1] = b, s.dims[2] = c, s.dims[3] = d;
    return s;
}

static void test_results_independent_of_thread_count(void) {
    const op_case cases[] = {
        /* LeNet's two convolutions (batch 8), a strided padded one, a grouped deconvolution */
        {"Convolution",
         2,
         {"kernel", "num_filter"},
         {"(5,5)", "20"},
         shp(8, 1, 28, 28),
         3,
         1,
         1e-4},
        {"Convolution",
         2,
         {"kernel", "num_filter"},
         {"(5,5)", "50"},
         shp(8, 20, 12, 12),
         3,
         1,
         1e-4},
        {"Convolution",
         4,
         {"kernel", "num_filter", "stride", "pad"},
         {"(3,3)", "8", "(2,2)", "(1,1)"},
         shp(5, 6, 17, 15),
         3,
         1,
         1e-4},
        {"Deconvolution",
         4,
         {"kernel", "num_filter", "stride", "num_group"},
         {"(3,3)", "8", "(2,2)", "2"},
         shp(6, 4, 9, 9),
         2,
         1,
         1e-4},
        /* pooling: the 2x2/2 fast path, and the general loop */
        {"Pooling",
         3,
         {"kernel", "stride", "pool_type"},
         {"(2,2)", "(2,2)", "max"},
         shp(8, 20, 24, 24),
         1,
         1,
         0},
        {"Pooling",
         4,
         {"kernel", "stride", "pad", "pool_type"},
         {"(3,3)", "(2,2)", "(1,1)", "avg"},
         shp(8, 20, 24, 24),
         1,
         1,
         0},
        {"Activation", 1, {"act_type"}, {"tanh"}, shp(8, 20, 24, 24), 1, 1, 0},
        {"Activation", 1, {"act_type"}, {"relu"}, shp(8, 20, 24, 24), 1, 1, 0},
        {"_mul", 0, {NULL}, {NULL}, shp(8, 20, 24, 24), 2, 1, 0},
        {"exp", 0, {NULL}, {NULL}, shp(8, 20, 24, 24), 1, 1, 0},
        {"_rdiv_scalar", 1, {"scalar"}, {"3"}, shp(8, 20, 24, 24), 1, 1, 0},
        {"FullyConnected", 1, {"num_hidden"}, {"500"}, shp(100, 800, 0, 0), 3, 1, 1e-4},
        {"FullyConnected", 1, {"num_hidden"}, {"128"}, shp(100, 784, 0, 0), 3, 1, 1e-4},
        {"sgd_mom_update",
         3,
         {"lr", "momentum", "wd"},
         {"0.1", "0.9", "1e-4"},
         shp(400000, 0, 0, 0),
         2,
         0,
         0},
        {"sgd_mom_update",
         4,
         {"lr", "momentum", "wd", "clip_gradient"},
         {"0.1", "0.9", "1e-4", "0.5"},
         shp(300, 500, 0, 0),
         2,
         0,
         0},
        {"sgd_update", 2, {"lr", "rescale_grad"}, {"0.1", "0.01"}, shp(300, 500, 0, 0), 2, 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_out one = run_case(&cases[i], 1);
        CHECK(one.n > 0);
        for (int t = 2; t <= 4; t++) {
            run_out many = run_case(&cases[i], t);
            CHECK_EQ_INT(many.n, one.n);
            size_t at = 0;
            while (at < one.n && at < many.n &&
                   fabs((double)many.v[at] - one.v[at]) <=
                       cases[i].tol * (1.0 + fabs((double)one.v[at])))
                at++;
            int same = many.n == one.n && at == one.n;
            if (!same)
                fprintf(stderr,
                        "%s (case %zu) with %d threads differs from 1 thread at result %zu of %zu: "
                        "%.9g, not %.9g\n",
                        cases[i].op, i, t, at, one.n, at < many.n ? many.v[at] : 0.0,
                        at < one.n ? one.v[at] : 0.0);
            CHECK(same);
            free(many.v);
        }
        free(one.v);
    }
}

int main(void) {
    mxk_init_options opt = {.struct_size = sizeof opt, .config_dir = BUILD_CONFDIR};
    if (mxk_init(&opt) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    MXK_RUN(test_results_independent_of_thread_count);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
