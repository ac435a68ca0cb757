/*
 * The bound reports of `mxk symbol summary` (symbol_bind.h): --backends binds the
 * symbol to ask each node's backend; --profile binds it with random values and
 * times every node's kernels with the executor's profiler
 * (mxk_executor_set_profiling), the per-operator table MXNet's profiler gives
 * (mx.profiler.dumps(), src/profiler/aggregate_stats.cc) per graph node instead of
 * per operator name.
 *
 * The profile's random values are symbol_fill_random's with seed 0, so runs are
 * comparable.
 */
#include "symbol_bind.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int symbol_bind(const mxk_symbol *sym, const symbol_inputs *in, int with_grads,
                mxk_executor **out) {
    mxk_context cpu = {MXK_DEV_CPU, 0};
    mxk_status st =
        mxk_executor_simple_bind(sym, cpu, in->num, in->names, in->shapes,
                                 with_grads ? "write" : "null", 0, NULL, NULL, NULL, out);
    if (st == MXK_OK)
        return CLI_OK;
    cli_api_error(st, "binding the symbol failed");
    if (st == MXK_ERR_SHAPE)
        symbol_note_inputs(sym, in);
    return CLI_ERROR;
}

/** True when `name` ends with `suffix`. */
static int ends_with(const char *name, const char *suffix) {
    size_t n = strlen(name), k = strlen(suffix);
    return n >= k && strcmp(name + n - k, suffix) == 0;
}

int symbol_looks_like_param(const char *name) {
    static const char *const suffixes[] = {"_weight",      "_bias",        "_beta",
                                           "_gamma",       "_moving_var",  "_moving_mean",
                                           "_running_var", "_running_mean"};
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
        if (ends_with(name, suffixes[i]))
            return 1;
    return 0;
}

void symbol_note_inputs(const mxk_symbol *sym, const symbol_inputs *in) {
    uint32_t n = 0;
    char **args = NULL;
    if (mxk_symbol_list_names(sym, MXK_SYMBOL_ARGUMENTS, &n, &args) != MXK_OK)
        return;
    char list[512] = "";
    const char *first = NULL;
    size_t used = 0;
    uint32_t count = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = 0;
        while (k < in->num && strcmp(in->names[k], args[i]) != 0)
            k++;
        if (k < in->num || symbol_looks_like_param(args[i]) || ends_with(args[i], "label"))
            continue;
        first = first ? first : args[i];
        count++;
        if (used < sizeof list)
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "",
                                     args[i]);
    }
    if (count == 1)
        cli_note("give the shape of input '%s' with --shape %s=d1,d2,...", first, first);
    else if (count > 1)
        cli_note("give the shapes of the inputs %s with --shape NAME=d1,d2,...", list);
    mxk_string_list_free(args);
}

/** splitmix64: the next value of the stream *s, uniform in [0, 1) (any seed). */
static double next_uniform(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return (double)((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

/** What an array holds, for its random values (see symbol_fill_random). */
typedef enum fill_kind { FILL_INPUT, FILL_LABEL, FILL_PARAM, FILL_AUX } fill_kind;

/**
 * Fills array `a` (NULL: nothing) named `name` of kind `kind` (see
 * symbol_fill_random; `classes` for labels), through float64 so any dtype takes
 * them. Returns CLI_OK or CLI_ERROR (reported).
 */
static int fill_array(mxk_ndarray *a, fill_kind kind, const char *name, double classes,
                      uint64_t *rng) {
    if (a == NULL)
        return CLI_OK;
    uint64_t n = mxk_ndarray_size(a);
    mxk_shape s = mxk_ndarray_shape(a);
    double fan_in = s.dims[0] > 0 ? (double)n / (double)s.dims[0] : 1;
    double bound = sqrt(3.0 / (fan_in > 0 ? fan_in : 1));
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (v == NULL)
        return cli_error("out of memory");
    for (uint64_t i = 0; i < n; i++) {
        double u = next_uniform(rng);
        if (kind == FILL_INPUT)
            v[i] = u;
        else if (kind == FILL_LABEL)
            v[i] = floor(u * classes);
        else if (kind == FILL_PARAM)
            v[i] = (2 * u - 1) * bound;
        else
            v[i] = ends_with(name, "_var") ? 0.5 + u : u - 0.5;
    }
    mxk_ndarray *f64 = NULL;
    mxk_status st = mxk_ndarray_create(&s, MXK_FLOAT64, mxk_ndarray_context(a), &f64);
    if (st == MXK_OK)
        st = mxk_ndarray_copy_from_host(f64, v, n * sizeof *v);
    if (st == MXK_OK)
        st = mxk_ndarray_copy_to(f64, a);
    mxk_ndarray_free(f64);
    free(v);
    return st == MXK_OK ? CLI_OK : cli_api_error(st, "filling '%s' failed", name);
}

int symbol_fill_random(const mxk_symbol *sym, const symbol_inputs *in, mxk_executor *ex, int params,
                       uint64_t seed) {
    mxk_shape out = mxk_ndarray_shape(mxk_executor_output(ex, 0));
    double classes = out.ndim > 1 ? (double)out.dims[1] : 1.0;
    uint64_t rng = seed;
    int rc = CLI_OK;
    for (int aux = 0; aux < 2 && rc == CLI_OK; aux++) {
        char **names = NULL;
        uint32_t num = 0;
        mxk_status st = mxk_symbol_list_names(
            sym, aux ? MXK_SYMBOL_AUX_STATES : MXK_SYMBOL_ARGUMENTS, &num, &names);
        if (st != MXK_OK)
            return cli_api_error(st, "listing the symbol's names failed");
        for (uint32_t i = 0; i < num && rc == CLI_OK; i++) {
            fill_kind kind = aux                            ? FILL_AUX
                             : ends_with(names[i], "label") ? FILL_LABEL
                                                            : FILL_PARAM;
            for (uint32_t k = 0; !aux && k < in->num; k++)
                if (strcmp(in->names[k], names[i]) == 0)
                    kind = FILL_INPUT;
            if (params || kind == FILL_INPUT || kind == FILL_LABEL)
                rc = fill_array(aux ? mxk_executor_aux(ex, names[i])
                                    : mxk_executor_arg(ex, names[i]),
                                kind, names[i], classes, &rng);
        }
        mxk_string_list_free(names);
    }
    return rc;
}

/** Head gradients of ones, one per output (loss outputs ignore theirs). */
static int make_head_grads(mxk_executor *ex, mxk_ndarray ***out) {
    uint32_t n = mxk_executor_num_outputs(ex);
    mxk_ndarray **h = calloc(n + 1, sizeof *h);
    if (h == NULL)
        return cli_error("out of memory");
    *out = h;
    mxk_context cpu = {MXK_DEV_CPU, 0};
    for (uint32_t i = 0; i < n; i++) {
        mxk_ndarray *o = mxk_executor_output(ex, i);
        mxk_shape s = mxk_ndarray_shape(o);
        mxk_status st = mxk_ndarray_full(&s, mxk_ndarray_dtype(o), cpu, 1.0, &h[i]);
        if (st != MXK_OK)
            return cli_api_error(st, "creating a head gradient failed");
    }
    return CLI_OK;
}

/** Runs `n` iterations (forward; backward with `heads` when not NULL) and waits. */
static int iterate(mxk_executor *ex, int64_t n, mxk_ndarray **heads) {
    uint32_t nh = mxk_executor_num_outputs(ex);
    for (int64_t i = 0; i < n; i++) {
        mxk_status st = mxk_executor_forward(ex, heads != NULL);
        if (st == MXK_OK && heads != NULL)
            st = mxk_executor_backward(ex, nh, heads);
        if (st != MXK_OK)
            return cli_api_error(st, "running the graph failed");
    }
    mxk_status st = mxk_wait_all();
    return st == MXK_OK ? CLI_OK : cli_api_error(st, "running the graph failed");
}

/** CLOCK_MONOTONIC now, in nanoseconds. */
static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** What the profile reports: the executor's entries and the run's totals. */
typedef struct profile_result {
    uint32_t num;
    mxk_executor_node_profile *nodes;
    int64_t iterations;
    int is_train;
    uint64_t fwd_ns, bwd_ns; /**< sums over the nodes */
    uint64_t wall_ns;        /**< the timed iterations, pushes to the final wait */
} profile_result;

/** Milliseconds per iteration of `ns` over the run. */
static double per_iter_ms(const profile_result *r, uint64_t ns) {
    return (double)ns / 1e6 / (double)r->iterations;
}

/** Share of node i in the kernels' total time, in percent (0 when nothing was timed). */
static double share(const profile_result *r, uint32_t i) {
    uint64_t total = r->fwd_ns + r->bwd_ns;
    uint64_t t = r->nodes[i].fwd_ns + r->nodes[i].bwd_ns;
    return total ? 100.0 * (double)t / (double)total : 0;
}

/** Prints the profile as a table (see symbol_profile). */
static void print_profile_text(const profile_result *r) {
    const char *pref = mxk_get_backend_preference();
    printf("Profile: %lld iterations (%s) after 1 warm-up, backend preference: %s\n",
           (long long)r->iterations, r->is_train ? "forward and backward" : "forward, inference",
           pref[0] ? pref : "(none)");
    int w_node = (int)strlen("Node (operator)"), w_backend = (int)strlen("Backend");
    char label[512];
    for (uint32_t i = 0; i < r->num; i++) {
        int w = snprintf(label, sizeof label, "%s (%s)", r->nodes[i].name, r->nodes[i].op);
        w_node = w > w_node ? (w < 72 ? w : 72) : w_node;
        int b = (int)strlen(r->nodes[i].backend);
        w_backend = b > w_backend ? b : w_backend;
    }
    printf("%-*s  %-*s  %12s  %12s  %6s\n", w_node, "Node (operator)", w_backend, "Backend",
           "Forward ms", "Backward ms", "Share");
    for (uint32_t i = 0; i < r->num; i++) {
        const mxk_executor_node_profile *p = &r->nodes[i];
        snprintf(label, sizeof label, "%s (%s)", p->name, p->op);
        printf("%-*s  %-*s  %12.3f  ", w_node, label, w_backend, p->backend,
               per_iter_ms(r, p->fwd_ns));
        if (r->is_train)
            printf("%12.3f", per_iter_ms(r, p->bwd_ns));
        else
            printf("%12s", "-");
        printf("  %5.1f%%\n", share(r, i));
    }
    printf("%-*s  %-*s  %12.3f  ", w_node, "Total (kernels)", w_backend, "",
           per_iter_ms(r, r->fwd_ns));
    if (r->is_train)
        printf("%12.3f", per_iter_ms(r, r->bwd_ns));
    else
        printf("%12s", "-");
    printf("  %5.1f%%\n", r->num ? 100.0 : 0.0);
    printf("Kernels: %.3f ms per iteration; wall time: %.3f ms per iteration\n",
           per_iter_ms(r, r->fwd_ns + r->bwd_ns), per_iter_ms(r, r->wall_ns));
}

/** Prints the profile as JSON (see the command's help). */
static int print_profile_json(const profile_result *r) {
    json_t *root = json_object(), *nodes = json_array();
    if (root == NULL || nodes == NULL) {
        json_decref(nodes);
        return cli_json_print(root, 6);
    }
    json_object_set_new(root, "iterations", json_integer(r->iterations));
    json_object_set_new(root, "is_train", json_boolean(r->is_train));
    json_object_set_new(root, "warmup", json_integer(1));
    json_object_set_new(root, "backend_preference", json_string(mxk_get_backend_preference()));
    for (uint32_t i = 0; i < r->num; i++) {
        const mxk_executor_node_profile *p = &r->nodes[i];
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(p->name));
        json_object_set_new(o, "op", json_string(p->op));
        json_object_set_new(o, "backend", json_string(p->backend));
        json_object_set_new(o, "forward_runs", json_integer((json_int_t)p->fwd_runs));
        json_object_set_new(o, "forward_ms", cli_json_number(per_iter_ms(r, p->fwd_ns)));
        json_object_set_new(o, "backward_runs", json_integer((json_int_t)p->bwd_runs));
        json_object_set_new(o, "backward_ms", cli_json_number(per_iter_ms(r, p->bwd_ns)));
        json_object_set_new(o, "share", cli_json_number(share(r, i) / 100.0));
        json_array_append_new(nodes, o);
    }
    json_object_set_new(root, "nodes", nodes);
    json_object_set_new(root, "forward_ms", cli_json_number(per_iter_ms(r, r->fwd_ns)));
    json_object_set_new(root, "backward_ms", cli_json_number(per_iter_ms(r, r->bwd_ns)));
    json_object_set_new(root, "kernels_ms", cli_json_number(per_iter_ms(r, r->fwd_ns + r->bwd_ns)));
    json_object_set_new(root, "wall_ms", cli_json_number(per_iter_ms(r, r->wall_ns)));
    return cli_json_print(root, 6);
}

int symbol_profile(const cli_globals *g, const mxk_symbol *sym, const symbol_inputs *in,
                   int64_t iterations, int is_train) {
    mxk_executor *ex = NULL;
    mxk_ndarray **heads = NULL;
    profile_result r = {0, NULL, iterations, is_train, 0, 0, 0};
    int rc = symbol_bind(sym, in, is_train, &ex);
    if (rc == CLI_OK)
        rc = symbol_fill_random(sym, in, ex, 1, 0);
    if (rc == CLI_OK && is_train)
        rc = make_head_grads(ex, &heads);
    if (rc == CLI_OK)
        rc = iterate(ex, 1, heads); /* warm-up: first-run set-up is not timed */
    if (rc == CLI_OK) {
        mxk_executor_set_profiling(ex, 1);
        uint64_t t0 = now_ns();
        rc = iterate(ex, iterations, heads);
        r.wall_ns = now_ns() - t0;
    }
    if (rc == CLI_OK) {
        mxk_status st = mxk_executor_get_profile(ex, &r.num, &r.nodes);
        if (st != MXK_OK)
            rc = cli_api_error(st, "reading the profile failed");
    }
    for (uint32_t i = 0; rc == CLI_OK && i < r.num; i++) {
        r.fwd_ns += r.nodes[i].fwd_ns;
        r.bwd_ns += r.nodes[i].bwd_ns;
    }
    if (rc == CLI_OK) {
        if (g->json)
            rc = print_profile_json(&r);
        else
            print_profile_text(&r);
    }
    mxk_free(r.nodes);
    for (uint32_t i = 0; heads != NULL && i < mxk_executor_num_outputs(ex); i++)
        mxk_ndarray_free(heads[i]);
    free(heads);
    mxk_executor_free(ex);
    return rc;
}
