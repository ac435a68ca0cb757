/*
 * Fuzz target for parsed graphs past loading: shape inference over a loaded
 * symbol JSON (kernel/graph/infer.c), then simple_bind (memory plan, executor)
 * and one forward pass when every shape is small (upstream
 * src/executor/graph_executor.cc, python/mxnet/symbol.py simple_bind).
 *
 * Input: a first line "NAME=d1,d2;NAME=d1,..." of known input shapes, then the
 * symbol JSON. Shapes are capped (FUZZ_MAX_ELEMS elements each); a graph whose
 * internal outputs, arguments and aux states hold more than 4 * FUZZ_MAX_ELEMS
 * elements in all is inferred but not bound.
 *
 * Property checked on every input: every call returns MXK_OK or a documented
 * error with a message and never crashes; inference that reports success with
 * complete shapes never makes simple_bind fail with MXK_ERR_SHAPE or MXK_ERR_TYPE
 * (it may refuse a graph otherwise: an operator without a CPU kernel, memory past
 * MXK_MEM_LIMIT, a gradient it cannot plan such as a variable's that is also a
 * graph output); a bound executor has the symbol's outputs, and its forward pass
 * succeeds.
 *
 * Builds as the other targets: libFuzzer (kernel and cpu-blas instrumented,
 * fuzz_kernel.h) and the standalone ctest driver (seeds: an MLP and a small
 * convolutional net with BatchNorm and Concat, built with the symbol API).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_PLUGINS                                                                               \
    { "libmxk-cpu-blas.so", NULL }
#include "fuzz_kernel.h"
#include "fuzz_target.h"

/** Most known input shapes. */
#define MAX_KNOWN 8

/** Known input shapes of an input's first line. */
typedef struct known_shapes {
    uint32_t n;
    const char *names[MAX_KNOWN];
    mxk_shape shapes[MAX_KNOWN];
} known_shapes;

/** Elements of a shape (0 for unknown). */
static uint64_t elems(const mxk_shape *s) {
    uint64_t n = s->ndim > 0 ? 1 : 0;
    for (int32_t d = 0; d < s->ndim; d++)
        n *= s->dims[d] > 0 ? (uint64_t)s->dims[d] : 0;
    return n;
}

/** Parses the first line (modified in place); 0 when malformed or too big. */
static int parse_known(char *line, known_shapes *k) {
    for (char *item = line; *item;) {
        char *semi = strchr(item, ';');
        if (semi != NULL)
            *semi = '\0';
        char *eq = strchr(item, '=');
        if (eq == NULL || eq == item || k->n >= MAX_KNOWN)
            return 0;
        *eq = '\0';
        mxk_shape *s = &k->shapes[k->n];
        memset(s, 0, sizeof *s);
        for (char *p = eq + 1;;) {
            char *end = NULL;
            unsigned long d = strtoul(p, &end, 10);
            if (end == p || *p < '0' || *p > '9' || d < 1 || d > FUZZ_MAX_ELEMS ||
                s->ndim >= MXK_MAX_NDIM)
                return 0;
            s->dims[s->ndim++] = (int64_t)d;
            if (*end != ',') {
                if (*end != '\0')
                    return 0;
                break;
            }
            p = end + 1;
        }
        if (elems(s) > FUZZ_MAX_ELEMS)
            return 0;
        k->names[k->n++] = item;
        if (semi == NULL)
            break;
        item = semi + 1;
    }
    return 1;
}

/** Fails unless st is MXK_OK or one of the errors a bad graph may give. */
static void check_status(mxk_status st, const char *what) {
    if (st == MXK_OK)
        return;
    if (st != MXK_ERR_INVALID_ARGUMENT && st != MXK_ERR_SHAPE && st != MXK_ERR_TYPE &&
        st != MXK_ERR_NOT_FOUND && st != MXK_ERR_UNSUPPORTED && st != MXK_ERR_OUT_OF_MEMORY)
        fuzz_kernel_fail("fuzz_graph", what);
    if (mxk_get_last_error()[0] == '\0')
        fuzz_kernel_fail("fuzz_graph", "error without a message");
}

/** 1 when s is a single variable: its internals are itself and it is its one argument. */
static int is_variable(const mxk_symbol *s) {
    mxk_symbol *in = NULL;
    uint32_t nargs = 0;
    char **args = NULL;
    int var = mxk_symbol_get_internals(s, &in) == MXK_OK && mxk_symbol_num_outputs(in) == 1 &&
              mxk_symbol_list_names(s, MXK_SYMBOL_ARGUMENTS, &nargs, &args) == MXK_OK && nargs == 1;
    mxk_string_list_free(args);
    mxk_symbol_free(in);
    return var;
}

/**
 * The internal outputs of sym (get_internals) without its aux-state variables
 * (which a graph may not have as outputs, kernel/graph/graph.h) as one group.
 */
static mxk_status internal_outputs(const mxk_symbol *sym, mxk_symbol **out) {
    mxk_symbol *in = NULL;
    mxk_status st = mxk_symbol_get_internals(sym, &in);
    if (st != MXK_OK)
        return st;
    uint32_t nout = mxk_symbol_num_outputs(in), naux = 0, nparts = 0;
    char **aux = NULL;
    mxk_symbol_list_names(sym, MXK_SYMBOL_AUX_STATES, &naux, &aux);
    mxk_symbol **parts = calloc(nout + 1, sizeof *parts);
    for (uint32_t i = 0; i < nout && st == MXK_OK; i++) {
        st = mxk_symbol_get_output(in, i, &parts[nparts]);
        if (st != MXK_OK)
            break;
        int drop = 0;
        if (naux > 0 && is_variable(parts[nparts])) {
            uint32_t nn = 0;
            char **name = NULL;
            mxk_symbol_list_names(parts[nparts], MXK_SYMBOL_ARGUMENTS, &nn, &name);
            for (uint32_t a = 0; a < naux && nn == 1; a++)
                drop |= strcmp(aux[a], name[0]) == 0;
            mxk_string_list_free(name);
        }
        if (drop)
            mxk_symbol_free(parts[nparts]);
        else
            nparts++;
    }
    if (st == MXK_OK)
        st = mxk_symbol_group(nparts, parts, out);
    for (uint32_t i = 0; i < nparts; i++)
        mxk_symbol_free(parts[i]);
    free(parts);
    mxk_string_list_free(aux);
    mxk_symbol_free(in);
    return st;
}

/**
 * Infers every internal output, argument and aux state of sym from k; sets
 * *total to their elements (0 when inference is partial). Returns the status.
 */
static mxk_status infer_internals(const mxk_symbol *sym, const known_shapes *k, uint64_t *total) {
    *total = 0;
    mxk_symbol *in = NULL;
    mxk_status st = internal_outputs(sym, &in);
    if (st != MXK_OK)
        return st;
    uint32_t n[3] = {0, mxk_symbol_num_outputs(in), 0};
    char **names = NULL;
    mxk_symbol_list_names(in, MXK_SYMBOL_ARGUMENTS, &n[0], &names);
    mxk_string_list_free(names);
    mxk_symbol_list_names(in, MXK_SYMBOL_AUX_STATES, &n[2], &names);
    mxk_string_list_free(names);
    mxk_shape *s[3];
    for (int i = 0; i < 3; i++)
        s[i] = calloc(n[i] + 1, sizeof(mxk_shape));
    int32_t complete = 0;
    st = mxk_symbol_infer_shape(in, k->n, k->names, k->shapes, s[0], s[1], s[2], &complete);
    if (st == MXK_OK && complete)
        for (int i = 0; i < 3; i++)
            for (uint32_t j = 0; j < n[i]; j++) {
                uint64_t e = elems(&s[i][j]);
                if (e == 0)
                    fuzz_kernel_fail("fuzz_graph", "complete inference left a shape unknown");
                *total = *total + e > *total ? *total + e : UINT64_MAX;
            }
    for (int i = 0; i < 3; i++)
        free(s[i]);
    mxk_symbol_free(in);
    return st;
}

/** Runs one input; returns 1 when a graph was bound and run. */
static int run_one(const uint8_t *data, size_t size) {
    fuzz_kernel_start();
    char *text = malloc(size + 1);
    memcpy(text, data, size);
    text[size] = '\0';
    char *json = strchr(text, '\n');
    known_shapes k;
    memset(&k, 0, sizeof k);
    int ran = 0;
    if (json != NULL && strlen(text) == size) {
        *json++ = '\0';
        mxk_symbol *sym = NULL;
        if (parse_known(text, &k) && mxk_symbol_from_json(json, &sym) == MXK_OK) {
            uint64_t total = 0;
            mxk_status st = infer_internals(sym, &k, &total);
            check_status(st, "unexpected status from shape inference");
            if (st == MXK_OK && total > 0 && total <= 4 * FUZZ_MAX_ELEMS) {
                mxk_executor *ex = NULL;
                st = mxk_executor_simple_bind(sym, (mxk_context){MXK_DEV_CPU, 0}, k.n, k.names,
                                              k.shapes, "write", 0, NULL, NULL, NULL, &ex);
                if (st == MXK_ERR_SHAPE || st == MXK_ERR_TYPE)
                    fuzz_kernel_fail("fuzz_graph", "simple_bind disagrees with inference");
                check_status(st, "unexpected status from simple_bind");
                if (st == MXK_OK) {
                    if (mxk_executor_num_outputs(ex) != mxk_symbol_num_outputs(sym))
                        fuzz_kernel_fail("fuzz_graph", "executor outputs differ from the symbol's");
                    if (mxk_executor_forward(ex, 1) != MXK_OK || mxk_wait_all() != MXK_OK)
                        fuzz_kernel_fail("fuzz_graph", "forward failed on a bound graph");
                    ran = 1;
                    mxk_executor_free(ex);
                }
            }
        }
        mxk_symbol_free(sym);
    }
    free(text);
    return ran;
}

MXK_FUZZ_TARGET(run_one)

#ifdef MXK_FUZZ_STANDALONE

#include "fuzz_driver.h"

/** Composes op on n inputs with "k=v" attributes (NULL-terminated); aborts on failure. */
static mxk_symbol *op(const char *name, uint32_t n, mxk_symbol **in, const char *const *kv) {
    const char *keys[8], *vals[8];
    char buf[8][64];
    uint32_t na = 0;
    for (; kv[na] != NULL; na++) {
        snprintf(buf[na], sizeof buf[na], "%s", kv[na]);
        char *eq = strchr(buf[na], '=');
        *eq = '\0';
        keys[na] = buf[na];
        vals[na] = eq + 1;
    }
    mxk_symbol *out = NULL;
    if (mxk_symbol_create(name, NULL, na, keys, vals, n, NULL, in, &out) != MXK_OK)
        fuzz_kernel_fail("fuzz_graph", "seed: compose failed");
    for (uint32_t i = 0; i < n; i++)
        mxk_symbol_free(in[i]);
    return out;
}

/** A seed: the shapes line, a newline and the JSON of sym (freed). */
static fuzz_seed seed(const char *label, const char *shapes, mxk_symbol *sym) {
    char *json = NULL;
    if (mxk_symbol_to_json(sym, &json) != MXK_OK)
        fuzz_kernel_fail("fuzz_graph", "seed: to_json failed");
    mxk_symbol_free(sym);
    size_t n = strlen(shapes) + 1 + strlen(json);
    uint8_t *p = malloc(n + 1);
    snprintf((char *)p, n + 1, "%s\n%s", shapes, json);
    free(json);
    if (!run_one(p, n))
        fuzz_kernel_fail(label, "a valid seed was not run");
    return (fuzz_seed){p, n, label};
}

/** Builds the seeds; returns how many (at most 2). */
static int build_seeds(fuzz_seed *seeds) {
    mxk_symbol *x = NULL;
    mxk_symbol_variable("data", &x);
    x = op("FullyConnected", 1, &x, (const char *[]){"num_hidden=4", NULL});
    x = op("Activation", 1, &x, (const char *[]){"act_type=relu", NULL});
    x = op("FullyConnected", 1, &x, (const char *[]){"num_hidden=3", NULL});
    x = op("SoftmaxOutput", 1, &x, (const char *[]){NULL});
    seeds[0] = seed("mlp", "data=2,5", x);

    mxk_symbol *d = NULL;
    mxk_symbol_variable("data", &d);
    mxk_symbol *c = op("Convolution", 1, &d,
                       (const char *[]){"kernel=(3,3)", "num_filter=2", "pad=(1,1)", NULL});
    c = op("BatchNorm", 1, &c, (const char *[]){"fix_gamma=False", NULL});
    c = op("Pooling", 1, &c,
           (const char *[]){"kernel=(2,2)", "stride=(2,2)", "pool_type=max", NULL});
    mxk_symbol *a = NULL, *b = NULL;
    mxk_symbol_get_output(c, 0, &a);
    b = op("Activation", 1, &c, (const char *[]){"act_type=tanh", NULL});
    mxk_symbol *ab[2] = {a, b};
    c = op("Concat", 2, ab, (const char *[]){"num_args=2", "dim=1", NULL});
    c = op("Flatten", 1, &c, (const char *[]){NULL});
    c = op("FullyConnected", 1, &c, (const char *[]){"num_hidden=3", NULL});
    c = op("SoftmaxOutput", 1, &c, (const char *[]){NULL});
    seeds[1] = seed("conv", "data=2,1,4,4", c);
    return 2;
}

/** Graphs bound and run. */
static unsigned long n_ran;

/** Runs one input (the driver passes an exact-size heap copy) and counts it. */
static void drive(const uint8_t *p, size_t n) {
    n_ran += (unsigned long)run_one(p, n);
}

/** Single-byte replacements: digits and JSON syntax. */
static uint8_t replace_byte(size_t at, int r, uint8_t orig) {
    static const char repl[] = {'0', '9', '1', ',', '"', ']', '}', '7'};
    (void)orig;
    return (uint8_t)repl[(at * 3 + (size_t)r * 5) % sizeof repl];
}

/** Tokens of the format for the driver's random mutations (fuzz_mutate_tokens). */
static const char *const tokens[] = {
    "0", "1", "2",      "64",   "(1,1)", "(2,2)", ",",  "\"",  "[0, 0, 0]", "\"True\"", "-1", "3",
    "]", "}", "(0,-1)", ";x=1", "100",   "\"x\"", "[]", "1e9", "\"sum\"",   "(1,0)",    NULL};

/** The graph target for the shared driver. */
static const fuzz_target target = {
    .run = drive,
    .seed_ext = ".graph",
    .per_byte = 1,
    .replace = replace_byte,
    .random_runs = 4000,
    .slack = 64,
    .tokens = tokens,
    .keep = 0,
    .rng_init = 0xbb67ae8584caa73bull,
    .rng_per_seed = 1,
};

int main(int argc, char **argv) {
    fuzz_kernel_start();
    fuzz_seed seeds[2];
    int n = build_seeds(seeds);
    int rc = fuzz_main(&target, argc, argv, seeds, n);
    printf("fuzz_graph: %lu inputs, %lu graphs bound and run\n", fuzz_n_inputs, n_ran);
    mxk_shutdown();
    return rc;
}

#endif /* MXK_FUZZ_STANDALONE */
