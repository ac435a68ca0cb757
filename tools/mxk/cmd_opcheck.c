/*
 * `mxk opcheck`: runs the operator test kit (sdk/include/mxk_opcheck.h) on any
 * registered operator.
 *
 *   mxk opcheck OP [--attr KEY=VALUE ...] [--shape d1,d2,... ...] [--only-backend NAME]
 *                  [--seed N] [--inplace IN:OUT ...] [--json]
 *
 * The --shape options give the shapes of the operator's first arguments, in
 * argument order ("0" or "()" leaves one to inference); the arguments after the
 * last --shape are left to inference too (FullyConnected: --shape 2,3 is enough).
 * Inputs are random in [-1, 1) from the seed, the loss is a random projection of
 * the outputs; no forward reference is known here, so the "forward" check is
 * skipped. --only-backend forces that backend's kernel; the global --backend is a
 * preference list, as in every command. Prints one
 * line per check (or JSON) and exits 1 when a check fails, 2 on wrong usage. Runs
 * with the storage guard (MXK_STORAGE_GUARD=1: a write outside an array fails the
 * check naming it) and the engine watchdog (MXK_ENGINE_WATCHDOG=10: a kernel running
 * over 10 s is reported) unless the environment sets them.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mxk_opcheck.h"
#include "op_node.h"

/** Most --inplace options. */
#define OPCHECK_MAX_INPLACE 64

/** What `mxk opcheck` was asked to do. */
typedef struct opcheck_request {
    const cli_command *cmd;
    cli_op_node node; /**< the operator, --attr and --shape */
    uint32_t num_inplace;
    uint32_t inplace[2 * OPCHECK_MAX_INPLACE];
    uint64_t seed;
    const char *only_backend; /**< --only-backend, or NULL */
} opcheck_request;

/** Parses "IN:OUT" (two small unsigned integers). */
static int parse_pair(const char *s, uint32_t *a, uint32_t *b) {
    const char *colon = strchr(s, ':');
    if (colon == NULL || colon == s)
        return 0;
    char left[32];
    size_t n = (size_t)(colon - s);
    if (n >= sizeof left)
        return 0;
    memcpy(left, s, n);
    left[n] = '\0';
    uint64_t x = 0, y = 0;
    if (!cli_parse_uint(left, 1000, &x) || !cli_parse_uint(colon + 1, 1000, &y))
        return 0;
    *a = (uint32_t)x;
    *b = (uint32_t)y;
    return 1;
}

/** Parses the command's arguments into *req (CLI_OK or a usage error's status). */
static int parse_args(opcheck_request *req, int argc, char **argv) {
    int positional_only = 0;
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        int m;
        if (!positional_only && strcmp(argv[i], "--") == 0) {
            positional_only = 1;
            continue;
        }
        if (!positional_only &&
            (m = cli_op_node_option(&req->node, req->cmd, argc, argv, &i)) != 0) {
            if (m < 0)
                return CLI_USAGE;
        } else if (!positional_only &&
                   (m = cli_option_value(argc, argv, &i, "--only-backend", &v)) != 0) {
            if (m < 0)
                return cli_usage_error(req->cmd, "option '--only-backend' needs a backend name");
            req->only_backend = v;
        } else if (!positional_only && (m = cli_option_value(argc, argv, &i, "--seed", &v)) != 0) {
            if (m < 0 || !cli_parse_uint(v, UINT64_MAX, &req->seed))
                return cli_usage_error(req->cmd, "option '--seed' needs an unsigned integer");
        } else if (!positional_only &&
                   (m = cli_option_value(argc, argv, &i, "--inplace", &v)) != 0) {
            uint32_t a = 0, b = 0;
            if (m < 0 || !parse_pair(v, &a, &b))
                return cli_usage_error(req->cmd, "option '--inplace' needs IN:OUT (indices)");
            if (req->num_inplace >= OPCHECK_MAX_INPLACE)
                return cli_usage_error(req->cmd, "too many --inplace options");
            req->inplace[2 * req->num_inplace] = a;
            req->inplace[2 * req->num_inplace + 1] = b;
            req->num_inplace++;
        } else if (!positional_only && cli_is_option(argv[i])) {
            return cli_reject_argument(req->cmd, argv[i]);
        } else if (req->node.op == NULL) {
            req->node.op = argv[i];
        } else {
            return cli_reject_argument(req->cmd, argv[i]);
        }
    }
    if (req->node.op == NULL)
        return cli_usage_error(req->cmd, "no operator given");
    return CLI_OK;
}

/** The report as JSON. */
static json_t *report_json(const mxk_opcheck_report *rep) {
    json_t *root = json_object(), *checks = json_array();
    if (root == NULL || checks == NULL) {
        json_decref(root);
        json_decref(checks);
        return NULL;
    }
    json_object_set_new(root, "op", json_string(rep->op));
    json_object_set_new(root, "backend", json_string(rep->backend));
    json_object_set_new(root, "passed", json_boolean(mxk_opcheck_report_failed(rep) == 0));
    for (uint32_t i = 0; i < rep->num_results; i++) {
        const mxk_opcheck_result *r = &rep->results[i];
        json_t *c = json_object();
        if (c == NULL)
            continue;
        static const char *const outcomes[] = {"pass", "fail", "skip"};
        json_object_set_new(c, "name", json_string(r->name));
        json_object_set_new(
            c, "outcome",
            json_string(r->outcome >= 0 && r->outcome <= 2 ? outcomes[r->outcome] : "?"));
        json_object_set_new(c, "max_abs_err", cli_json_number(r->max_abs_err));
        json_object_set_new(c, "max_rel_err", cli_json_number(r->max_rel_err));
        json_object_set_new(c, "message", json_string(r->message));
        json_array_append_new(checks, c);
    }
    json_object_set_new(root, "checks", checks);
    return root;
}

/** Runs the kit with the library initialised (cli_with_library). */
static int run_body(const cli_globals *g, void *arg) {
    opcheck_request *req = arg;
    const cli_op_node *node = &req->node;
    int frc = cli_op_node_fill_shapes(&req->node, "opcheck ");
    if (frc != CLI_OK)
        return frc;
    mxk_opcheck_config cfg;
    mxk_opcheck_config_init(&cfg);
    cfg.op = node->op;
    cfg.num_attrs = node->num_attrs;
    cfg.keys = node->keys;
    cfg.vals = node->vals;
    cfg.num_inputs = node->num_shapes;
    cfg.in_shapes = node->shapes;
    cfg.seed = req->seed;
    cfg.num_inplace = req->num_inplace;
    cfg.inplace = req->inplace;
    cfg.backend = req->only_backend; /* the global --backend is the preference (mxk_init) */
    mxk_opcheck_report rep;
    mxk_status st = mxk_opcheck_run(&cfg, &rep);
    if (st != MXK_OK) {
        cli_error("%s", mxk_opcheck_last_error()); /* names "opcheck OP" */
        if (st == MXK_ERR_NOT_FOUND && mxk_op_canonical_name(node->op) == NULL)
            cli_note("'mxk ops' lists the registered operators");
        else if (st == MXK_ERR_SHAPE)
            cli_note("--shape gives the shapes of the first arguments, in argument order "
                     "('mxk op %s' lists them); the others are inferred",
                     node->op);
        return CLI_ERROR;
    }
    if (g->json) {
        int rc = cli_json_print(report_json(&rep), 6);
        if (rc != CLI_OK)
            return rc;
    } else {
        mxk_opcheck_report_print(stdout, &rep);
    }
    uint32_t failed = mxk_opcheck_report_failed(&rep);
    if (failed) {
        if (!g->json)
            printf("%u check%s failed\n", (unsigned)failed, failed == 1 ? "" : "s");
        return CLI_ERROR;
    }
    if (!g->json)
        puts("all checks passed");
    return CLI_OK;
}

/** Entry point of `mxk opcheck`. */
static int run_opcheck(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    opcheck_request *req = calloc(1, sizeof *req);
    if (req == NULL)
        return cli_error("out of memory");
    req->cmd = self;
    int rc = parse_args(req, argc, argv);
    /* Catch what a kernel does wrong beyond its numbers: writes outside its arrays
     * (storage guard) and hangs (engine watchdog), unless the environment says else.
     * Read when the library starts. */
    setenv("MXK_STORAGE_GUARD", "1", 0);
    setenv("MXK_ENGINE_WATCHDOG", "10", 0);
    if (rc == CLI_OK)
        rc = cli_with_library(g, run_body, req);
    cli_op_node_free(&req->node);
    free(req);
    return rc;
}

const cli_command cli_cmd_opcheck = {
    .name = "opcheck",
    .summary = "check an operator: inference, gradients, write requests, dependencies",
    .usage = "mxk opcheck OP [--attr KEY=VALUE ...] --shape d1,d2,... [--shape ...] "
             "[--only-backend NAME] [--seed N] [--inplace IN:OUT ...] [--json]",
    .help = "Runs the operator test kit (sdk/include/mxk_opcheck.h) on operator OP:\n"
            "  shape_type    shape and type inference is complete and consistent\n"
            "  forward       against a float64 reference (skipped: none from the CLI)\n"
            "  backward      against float64 central finite differences of a random\n"
            "                projection of the outputs (loss operators: consistency)\n"
            "  forward_req   WRITE over NaN and over 5 agree; in place (--inplace)\n"
            "  backward_req  WRITE overwrites, ADD gives 5 + grad, NULL leaves 5\n"
            "  dependency    undeclared backward inputs NaN-filled or omitted change nothing\n"
            "  determinism   two runs after the same random seed are bit-identical\n"
            "A write outside an array fails the check that ran it (storage guard,\n"
            "MXK_STORAGE_GUARD=1) and a kernel running over 10 s is reported (engine\n"
            "watchdog, MXK_ENGINE_WATCHDOG=10); the environment may set other values.\n"
            "\n"
            "Options:\n"
            "  --attr KEY=VALUE   an attribute of the operator (MXNet's names), repeatable\n"
            "  --shape d1,d2,...  the shape of the next argument, in argument order; 0 leaves\n"
            "                     it to inference, as are the arguments after the last\n"
            "                     --shape (FullyConnected: --shape 2,3 --attr num_hidden=4\n"
            "                     infers weight and bias)\n"
            "  --only-backend NAME\n"
            "                     run the kernel of backend NAME (an error when it has\n"
            "                     none); the global --backend LIST is a preference, as in\n"
            "                     every command (the first backend of LIST with a kernel)\n"
            "  --seed N           seed of the inputs, projections and random streams (0)\n"
            "  --inplace IN:OUT   also run with output OUT as the same array as input IN\n"
            "  --json             print the results as JSON\n"
            "\n"
            "Exit status: 0 all checks passed (or skipped), 1 a check failed or an error\n"
            "(unknown operator, bad attribute, wrong number of shapes), 2 wrong usage.\n",
    .run = run_opcheck,
};
