/*
 * The agreement suite of the onednn plugin (ctest onednn.agreement): every
 * configuration of the tables agree_*.inc runs as a one-node graph on onednn
 * (preference "onednn,cpu-blas") and is cross-checked against cpu-blas on identical
 * inputs (mxk_crosscheck_executor): outputs, aux states and, in training, the
 * gradients of every input, within the kernels' declared tolerances.
 *
 *   test_agreement CONFDIR
 *
 * A table line AGREE(operator, "k=v;k=v", "d1,d2|d1,d2", is_train) gives the
 * operator, its attributes (MXNet's names and values), the shapes of its leading
 * arguments in argument order (the rest, weights, biases and aux states, inferred)
 * and the mode (1: training forward and backward of every input, grad_req write;
 * 0: inference forward only). Arguments are uniform in [-1, 1) (seeded per line),
 * those named *label are class indices in [0, dims[1] of the first argument), aux
 * states uniform in [0.5, 1.5) (valid moving variances). A configuration onednn
 * declines runs on cpu-blas on both sides and is counted as declined.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mxk.h"
#include "testing.h"
#include "testing_attrs.h"

/** One line of a table. */
typedef struct agree_case {
    const char *op;
    const char *attrs;  /**< "k=v;k=v" */
    const char *shapes; /**< "d1,d2|d1,d2" */
    int is_train;
} agree_case;

/** A table line as an initializer. */
#define AGREE(op, attrs, shapes, is_train) {op, attrs, shapes, is_train},

/** Every table; the last entry (op NULL) ends the list. */
static const agree_case cases[] = {
#include "agree_bn.inc"
#include "agree_conv.inc"
#include "agree_eltwise.inc"
#include "agree_fc.inc"
#include "agree_lrn.inc"
#include "agree_pool.inc"
#include "agree_rnn.inc"
#include "agree_softmax.inc"
#include "agree_sum.inc"
    {NULL, NULL, NULL, 0}};

/** Most attributes and leading arguments of a line. */
enum { MAX_ITEMS = 16 };

/** splitmix64: the next value of a 64-bit random stream. */
static uint64_t next_random(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/**
 * Splits `s` (copied into buf) at `sep` into at most MAX_ITEMS parts; returns the
 * count ("" gives 0).
 */
static uint32_t split(const char *s, char sep, char *buf, size_t size, char **parts) {
    snprintf(buf, size, "%s", s);
    uint32_t n = 0;
    for (char *p = buf; *p && n < MAX_ITEMS;) {
        parts[n++] = p;
        char *end = strchr(p, sep);
        if (end == NULL)
            break;
        *end = '\0';
        p = end + 1;
    }
    return n;
}

/** Parses "d1,d2,..." into *shape; 0 when malformed. */
static int parse_shape(const char *s, mxk_shape *shape) {
    memset(shape, 0, sizeof *shape);
    for (const char *p = s; *p;) {
        char *end;
        long long d = strtoll(p, &end, 10);
        if (end == p || d <= 0 || shape->ndim == MXK_MAX_NDIM)
            return 0;
        shape->dims[shape->ndim++] = d;
        p = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0')
            return 0;
    }
    return shape->ndim > 0;
}

/** Fills arr with the values of `kind`: 0 uniform [-1, 1), 1 integers [0, classes), 2 [0.5, 1.5).
 */
static void fill(mxk_ndarray *arr, int kind, int64_t classes, uint64_t *stream) {
    uint64_t n = mxk_ndarray_size(arr);
    float *v = malloc((n ? n : 1) * sizeof *v);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = next_random(stream);
        double u = (double)(r >> 11) * 0x1.0p-53;
        v[i] = kind == 1   ? (float)(r % (uint64_t)classes)
               : kind == 2 ? (float)(0.5 + u)
                           : (float)(2.0 * u - 1.0);
    }
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(arr, v, n * sizeof *v), MXK_OK);
    free(v);
}

/**
 * Runs configuration `c` (number `line`, from 1 in table order): returns 1 when it agrees
 * (*on_onednn set to whether onednn ran it), 0 after printing why not.
 */
static int run_case(const agree_case *c, int line, int *on_onednn) {
    char abuf[1024], sbuf[512];
    char *shapes[MAX_ITEMS];
    const char *keys[MAX_ITEMS], *vals[MAX_ITEMS];
    int na = mxk_t_parse_attrs(c->attrs, abuf, sizeof abuf, keys, vals, MAX_ITEMS);
    CHECK(na >= 0);
    if (na < 0)
        return 0;
    uint32_t ns = split(c->shapes, '|', sbuf, sizeof sbuf, shapes);
    mxk_shape in_shapes[MAX_ITEMS];
    for (uint32_t i = 0; i < ns; i++)
        CHECK(parse_shape(shapes[i], &in_shapes[i]));
    mxk_symbol *sym = NULL;
    mxk_executor *ex = NULL;
    uint32_t num_args = 0;
    char **args = NULL;
    mxk_status st = mxk_symbol_create(c->op, "node", (uint32_t)na, keys, vals, 0, NULL, NULL, &sym);
    if (st == MXK_OK)
        st = mxk_symbol_list_names(sym, MXK_SYMBOL_ARGUMENTS, &num_args, &args);
    if (st == MXK_OK && ns <= num_args) {
        mxk_context cpu = {MXK_DEV_CPU, 0};
        st = mxk_executor_simple_bind(sym, cpu, ns, (const char *const *)args, in_shapes,
                                      c->is_train ? "write" : "null", 0, NULL, NULL, NULL, &ex);
    }
    int ok = 0;
    if (ex != NULL) {
        uint64_t stream = 0x5EEDull + (uint64_t)line;
        for (uint32_t i = 0; i < num_args; i++)
            fill(mxk_executor_arg(ex, args[i]), strstr(args[i], "label") != NULL,
                 in_shapes[0].ndim > 1 ? in_shapes[0].dims[1] : 1, &stream);
        uint32_t num_aux = 0;
        char **aux = NULL;
        CHECK_EQ_INT(mxk_symbol_list_names(sym, MXK_SYMBOL_AUX_STATES, &num_aux, &aux), MXK_OK);
        for (uint32_t i = 0; i < num_aux; i++)
            fill(mxk_executor_aux(ex, aux[i]), 2, 1, &stream);
        mxk_string_list_free(aux);
        mxk_crosscheck_options o = {.struct_size = sizeof o,
                                    .reference = "cpu-blas",
                                    .is_train = c->is_train,
                                    .check_backward = c->is_train,
                                    .seed = (uint64_t)line};
        mxk_crosscheck_report r;
        st = mxk_crosscheck_executor(ex, &o, &r);
        if (st == MXK_OK && r.diverged)
            printf("configuration %d: %s %s shapes %s is_train %d: %s %s on %s differs from %s: "
                   "max abs "
                   "error %g, max rel error %g, at [%llu] %.9g vs %.9g (rtol %g, atol %g)\n",
                   line, c->op, c->attrs, c->shapes, c->is_train, r.result, r.node, r.backend,
                   r.reference, r.max_abs_err, r.max_rel_err, (unsigned long long)r.worst_index,
                   r.value, r.reference_value, r.rtol, r.atol);
        ok = st == MXK_OK && !r.diverged && r.nodes_checked == 1;
        *on_onednn = ok && r.nodes_on_reference == 0;
    }
    if (st != MXK_OK || (ex == NULL && ns > num_args))
        printf("configuration %d: %s %s shapes %s: %s\n", line, c->op, c->attrs, c->shapes,
               st != MXK_OK ? mxk_get_last_error() : "more shapes than arguments");
    mxk_executor_free(ex);
    mxk_string_list_free(args);
    mxk_symbol_free(sym);
    return ok;
}

/** 1 when a plugin named `name` is loaded. */
static int plugin_loaded(const char *name) {
    for (uint32_t i = 0; i < mxk_plugin_count(); i++) {
        mxk_plugin_record p = {.struct_size = sizeof p};
        if (mxk_plugin_get(i, &p) == MXK_OK && strcmp(p.name, name) == 0)
            return 1;
    }
    return 0;
}

/** Every line of every table agrees. */
static void test_agreement(void) {
    CHECK(plugin_loaded("onednn"));
    CHECK_EQ_INT(mxk_set_backend_preference("onednn,cpu-blas"), MXK_OK);
    int total = 0, onednn = 0, failed = 0;
    for (int i = 0; cases[i].op != NULL; i++) {
        int on = 0;
        if (run_case(&cases[i], i + 1, &on)) {
            total++;
            onednn += on;
        } else {
            failed++;
        }
    }
    CHECK_EQ_INT(failed, 0);
    printf("%d configurations agree (%d ran on onednn, %d declined and ran on cpu-blas)\n", total,
           onednn, total - onednn);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_agreement CONFDIR\n");
        return 2;
    }
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = argv[1]};
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    MXK_RUN(test_agreement);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
