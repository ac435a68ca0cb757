/*
 * `mxk crosscheck`: runs every node of a symbol on one backend and on a reference
 * backend with identical inputs and reports the first node whose results differ
 * (mxk_crosscheck_executor, kernel/crosscheck.c).
 *
 *   mxk crosscheck --symbol FILE --shape NAME=d1,d2,... [--shape ...]
 *                  --backends TESTED[,...],REFERENCE [--is-train] [--iterations N]
 *                  [--seed S] [--rtol R] [--atol A] [--json]
 *
 * The --backends list is the backend preference of the bound graph (its first
 * entry is the backend under test, the next ones take what it declines); its last
 * entry is the reference. Values come from symbol_fill_random (symbol_bind.h):
 * parameters and aux states once, from the seed; the --shape inputs and the labels
 * fresh in every iteration. Exit status 0 when every node agrees, 1 on a
 * divergence or an error, 2 on wrong usage.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "parse.h"
#include "symbol_bind.h"

/** Most --shape options. */
#define CROSSCHECK_MAX_SHAPES 16
/** Most --iterations. */
#define CROSSCHECK_MAX_ITERATIONS 1000000

/** What `mxk crosscheck` was asked to do. */
typedef struct crosscheck_request {
    const cli_command *cmd;
    const char *symbol;
    const char *backends;
    char reference[64];
    uint32_t num_shapes;
    char *names[CROSSCHECK_MAX_SHAPES]; /**< owned copies of the --shape names */
    mxk_shape shapes[CROSSCHECK_MAX_SHAPES];
    int is_train;
    uint64_t iterations;
    uint64_t seed;
    double rtol, atol; /**< 0: the kernels' declared tolerances */
} crosscheck_request;

/** Stores the reference (the last entry of --backends); 0 when an entry is empty. */
static int split_backends(crosscheck_request *req) {
    const char *s = req->backends, *comma = strrchr(s, ',');
    const char *last = comma ? comma + 1 : s;
    if (*last == '\0' || strlen(last) >= sizeof req->reference || strstr(s, ",,") || *s == ',')
        return 0;
    memcpy(req->reference, last, strlen(last) + 1);
    return 1;
}

/** Parses a --rtol / --atol value (m: cli_option_value's result) into *out; 0 if bad. */
static int parse_tolerance(int m, const char *v, double *out) {
    return m > 0 && cli_parse_real(v, out) && *out >= 0;
}

/** Parses the command's arguments into *req (CLI_OK or a usage error's status). */
static int parse_args(crosscheck_request *req, int argc, char **argv) {
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        int m;
        if ((m = cli_option_value(argc, argv, &i, "--symbol", &v)) != 0) {
            if (m < 0)
                return cli_usage_error(req->cmd, "option '--symbol' needs a file");
            req->symbol = v;
        } else if ((m = cli_option_value(argc, argv, &i, "--shape", &v)) != 0) {
            size_t len = 0;
            if (req->num_shapes == CROSSCHECK_MAX_SHAPES)
                return cli_usage_error(req->cmd, "too many --shape options (at most %d)",
                                       CROSSCHECK_MAX_SHAPES);
            if (m < 0 || !cli_parse_shape_option(v, &len, &req->shapes[req->num_shapes]))
                return cli_usage_error(req->cmd, "bad --shape '%s': expected NAME=d1,d2,...",
                                       m < 0 ? "" : v);
            if ((req->names[req->num_shapes] = strndup(v, len)) == NULL)
                return cli_error("out of memory");
            req->num_shapes++;
        } else if ((m = cli_option_value(argc, argv, &i, "--backends", &v)) != 0) {
            req->backends = v;
            if (m < 0 || !split_backends(req))
                return cli_usage_error(req->cmd, "option '--backends' needs a list "
                                                 "TESTED[,...],REFERENCE of backend names");
        } else if ((m = cli_option_value(argc, argv, &i, "--iterations", &v)) != 0) {
            if (m < 0 || !cli_parse_uint(v, CROSSCHECK_MAX_ITERATIONS, &req->iterations) ||
                req->iterations == 0)
                return cli_usage_error(req->cmd,
                                       "option '--iterations' needs an integer in "
                                       "[1, %d]",
                                       CROSSCHECK_MAX_ITERATIONS);
        } else if ((m = cli_option_value(argc, argv, &i, "--seed", &v)) != 0) {
            if (m < 0 || !cli_parse_uint(v, UINT64_MAX, &req->seed))
                return cli_usage_error(req->cmd, "option '--seed' needs an unsigned integer");
        } else if ((m = cli_option_value(argc, argv, &i, "--rtol", &v)) != 0) {
            if (!parse_tolerance(m, v, &req->rtol))
                return cli_usage_error(req->cmd, "option '--rtol' needs a number >= 0");
        } else if ((m = cli_option_value(argc, argv, &i, "--atol", &v)) != 0) {
            if (!parse_tolerance(m, v, &req->atol))
                return cli_usage_error(req->cmd, "option '--atol' needs a number >= 0");
        } else if (strcmp(argv[i], "--is-train") == 0) {
            req->is_train = 1;
        } else {
            return cli_reject_argument(req->cmd, argv[i]);
        }
    }
    if (req->symbol == NULL)
        return cli_usage_error(req->cmd, "no --symbol given");
    if (req->num_shapes == 0)
        return cli_usage_error(req->cmd, "no --shape given");
    if (req->backends == NULL)
        return cli_usage_error(req->cmd, "no --backends given");
    return CLI_OK;
}

/** The report of one iteration as a JSON object. */
static json_t *report_json(const mxk_crosscheck_report *r, uint64_t iteration) {
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    json_object_set_new(o, "iteration", json_integer((json_int_t)iteration));
    json_object_set_new(o, "nodes_checked", json_integer(r->nodes_checked));
    json_object_set_new(o, "nodes_on_reference", json_integer(r->nodes_on_reference));
    json_object_set_new(o, "nodes_skipped", json_integer(r->nodes_skipped));
    json_object_set_new(o, "diverged", json_boolean(r->diverged));
    if (r->diverged) {
        json_object_set_new(o, "node", json_string(r->node));
        json_object_set_new(o, "op", json_string(r->op));
        json_object_set_new(o, "backend", json_string(r->backend));
        json_object_set_new(o, "reference", json_string(r->reference));
        json_object_set_new(o, "result", json_string(r->result));
        json_object_set_new(o, "max_abs_err", cli_json_number(r->max_abs_err));
        json_object_set_new(o, "max_rel_err", cli_json_number(r->max_rel_err));
        json_object_set_new(o, "worst_index", json_integer((json_int_t)r->worst_index));
        json_object_set_new(o, "value", cli_json_number(r->value));
        json_object_set_new(o, "reference_value", cli_json_number(r->reference_value));
        json_object_set_new(o, "rtol", cli_json_number(r->rtol));
        json_object_set_new(o, "atol", cli_json_number(r->atol));
    }
    return o;
}

/** Prints one iteration's result as text (the divergence on three lines). */
static void print_report(const crosscheck_request *req, const mxk_crosscheck_report *r,
                         uint64_t iteration) {
    char prefix[48] = "";
    if (req->iterations > 1)
        snprintf(prefix, sizeof prefix, "iteration %llu: ", (unsigned long long)iteration);
    char tested[64];
    size_t n = strcspn(req->backends, ",");
    snprintf(tested, sizeof tested, "%.*s", (int)n, req->backends);
    if (!r->diverged) {
        printf("%schecked %u nodes on %s against %s: all agree", prefix, r->nodes_checked, tested,
               req->reference);
        if (r->nodes_skipped)
            printf(" (%u skipped: no %s kernel)", r->nodes_skipped, req->reference);
        putchar('\n');
        return;
    }
    printf("%snode '%s' (%s) differs: %s on %s against %s\n", prefix, r->node, r->op, r->result,
           r->backend, r->reference);
    printf("  max abs error %.6g, max rel error %.6g (rtol %g, atol %g)\n", r->max_abs_err,
           r->max_rel_err, r->rtol, r->atol);
    printf("  worst element [%llu]: %.9g on %s, %.9g on %s\n", (unsigned long long)r->worst_index,
           r->value, r->backend, r->reference_value, r->reference);
}

/** Binds and cross-checks with the library initialised (cli_with_library). */
static int run_body(const cli_globals *g, void *arg) {
    crosscheck_request *req = arg;
    mxk_symbol *sym = NULL;
    mxk_executor *ex = NULL;
    json_t *runs = g->json ? json_array() : NULL;
    mxk_status st = mxk_set_backend_preference(req->backends);
    if (st == MXK_OK)
        st = mxk_symbol_load(req->symbol, &sym);
    if (st == MXK_OK) {
        mxk_context cpu = {MXK_DEV_CPU, 0};
        st = mxk_executor_simple_bind(sym, cpu, req->num_shapes, (const char *const *)req->names,
                                      req->shapes, "null", 0, NULL, NULL, NULL, &ex);
    }
    int rc = st == MXK_OK ? CLI_OK : cli_api_error(st, "binding '%s' failed", req->symbol);
    symbol_inputs in = {req->num_shapes, (const char *const *)req->names, req->shapes};
    if (st == MXK_ERR_SHAPE)
        symbol_note_inputs(sym, &in);
    int diverged = 0;
    for (uint64_t it = 1; it <= req->iterations && rc == CLI_OK && !diverged; it++) {
        rc = symbol_fill_random(sym, &in, ex, it == 1, req->seed * 1000003u + it);
        mxk_crosscheck_options o = {.struct_size = sizeof o,
                                    .reference = req->reference,
                                    .is_train = req->is_train,
                                    .check_backward = req->is_train,
                                    .rtol = req->rtol,
                                    .atol = req->atol,
                                    .seed = req->seed + it};
        mxk_crosscheck_report r;
        if (rc == CLI_OK && (st = mxk_crosscheck_executor(ex, &o, &r)) != MXK_OK)
            rc = cli_api_error(st, "crosscheck failed");
        if (rc != CLI_OK)
            break;
        diverged = r.diverged;
        if (runs)
            json_array_append_new(runs, report_json(&r, it));
        else
            print_report(req, &r, it);
    }
    if (rc == CLI_OK && runs) {
        json_t *root = json_object();
        json_object_set_new(root, "backends", json_string(req->backends));
        json_object_set_new(root, "reference", json_string(req->reference));
        json_object_set_new(root, "is_train", json_boolean(req->is_train));
        json_object_set_new(root, "diverged", json_boolean(diverged));
        json_object_set_new(root, "runs", runs);
        runs = NULL;
        rc = cli_json_print(root, 9);
    }
    json_decref(runs);
    mxk_executor_free(ex);
    mxk_symbol_free(sym);
    return rc == CLI_OK && diverged ? CLI_ERROR : rc;
}

/** Entry point of `mxk crosscheck`. */
static int run_crosscheck(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    crosscheck_request *req = calloc(1, sizeof *req);
    if (req == NULL)
        return cli_error("out of memory");
    req->cmd = self;
    req->iterations = 1;
    int rc = parse_args(req, argc, argv);
    if (rc == CLI_OK)
        rc = cli_with_library(g, run_body, req);
    for (uint32_t i = 0; i < req->num_shapes; i++)
        free(req->names[i]);
    free(req);
    return rc;
}

const cli_command cli_cmd_crosscheck = {
    .name = "crosscheck",
    .summary = "run a symbol's nodes on two backends and report the first that differs",
    .usage = "mxk crosscheck --symbol FILE --shape NAME=d1,d2,... [--shape ...] "
             "--backends TESTED,REFERENCE [--is-train] [--iterations N] [--seed S] "
             "[--rtol R] [--atol A] [--json]",
    .help = "Binds the symbol with the backend preference --backends and runs every\n"
            "operator node, in order, with the kernel the graph runs and with the kernel of\n"
            "the reference backend (the list's last entry) on identical inputs: the values\n"
            "the graph computes up to that node. Compares the outputs, the aux states and\n"
            "(--is-train) the gradients of every input for one random output gradient,\n"
            "within the larger of the two kernels' declared tolerances (default rtol 1e-4,\n"
            "atol 1e-5), and stops at the first node that differs. Parameters are random\n"
            "(uniform, from the seed), the --shape inputs random in [0, 1) and new in every\n"
            "iteration, labels random class indices. Nodes the reference has no kernel for\n"
            "are skipped and counted.\n"
            "\n"
            "Options:\n"
            "  --symbol FILE       MXNet symbol JSON\n"
            "  --shape NAME=DIMS   the shape of input NAME (d1,d2,...), repeatable\n"
            "  --backends LIST     backend preference, most preferred first; the last entry\n"
            "                      is the reference (\"onednn,cpu-blas\")\n"
            "  --is-train          training mode: batch statistics, dropout, and backward\n"
            "  --iterations N      check N times with fresh inputs (1)\n"
            "  --seed S            seed of the parameters, inputs and output gradients (0)\n"
            "  --rtol R, --atol A  tolerances instead of the kernels' declared ones: an element\n"
            "                      agrees when |tested - reference| <= A + R * |reference|\n"
            "  --json              print one JSON object (\"runs\": one entry per iteration)\n"
            "\n"
            "MXK_CROSSCHECK=REFERENCE makes `mxk train` cross-check its first\n"
            "MXK_CROSSCHECK_ITERATIONS (1) iterations the same way on the real batch.\n"
            "\n"
            "Exit status: 0 every node agrees, 1 a node differs or an error (unreadable\n"
            "symbol, unknown backend), 2 wrong usage.\n",
    .run = run_crosscheck,
};
