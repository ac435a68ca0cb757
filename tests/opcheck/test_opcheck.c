/*
 * The operator test kit over every operator of the cpu-blas plugin, and its
 * negative test.
 *
 *   test_opcheck all CONFDIR      every operator that cpu-blas registers (listed at
 *                                 run time) through mxk_opcheck_run, with the
 *                                 configurations of opcheck_cases.c: several shapes
 *                                 (dims "a-b" are drawn at random from a fixed seed)
 *                                 and attribute combinations each. An operator
 *                                 registered without a table entry fails ("no opcheck
 *                                 configuration for operator X"); table entries not
 *                                 (yet) registered are reported as skipped by name.
 *                                 Environment: OPCHECK_ONLY=NAME runs one operator,
 *                                 OPCHECK_VERBOSE=1 prints every report,
 *                                 OPCHECK_SEED=N changes the base seed (17).
 *   test_opcheck backend CONFDIR NAME
 *                                 the same over the operators that backend NAME
 *                                 (another plugin, e.g. onednn) has CPU kernels for,
 *                                 forcing that backend (mxk_opcheck_config.backend);
 *                                 configurations its kernels decline run on the next
 *                                 backend and are counted as declined.
 *   test_opcheck broken CONFDIR PLUGIN
 *                                 the deliberately broken operators of
 *                                 broken_ops_plugin.c must fail exactly the check
 *                                 that targets their bug; the correct one passes;
 *                                 bad requests give clear errors.
 *
 * The case tables and their conventions: opcheck_cases.h.
 */
#include <stdlib.h>
#include <string.h>

#include "mxk.h"
#include "mxk_opcheck.h"
#include "opcheck_cases.h"
#include "testing.h"

/** `test_opcheck backend`: the backend whose kernels run (NULL: by preference). */
static const char *g_backend;
/** Cases whose configuration g_backend's kernel declined (they ran on another backend). */
static int g_declined;

/** Runs one case of operator `name`; returns the number of failed checks (or 1 on error). */
static int run_case(const char *name, const op_entry *e, const op_case *c, int ci, uint64_t *rng,
                    int verbose) {
    concrete k;
    if (!opcheck_make_concrete(e, c, rng, &k)) {
        printf("FAIL %s case %d: malformed table entry\n", name, ci);
        return 1;
    }
    /* Unknown shapes ("0") get their size from inference: the in-place pair needs a
     * known input, which the kit checks itself. */
    mxk_opcheck_config cfg;
    mxk_opcheck_config_init(&cfg);
    cfg.op = name;
    cfg.num_attrs = k.num_attrs;
    cfg.keys = k.keys;
    cfg.vals = k.vals;
    cfg.num_inputs = k.num_in;
    cfg.in_shapes = k.shapes;
    cfg.inputs = k.specs;
    const char *seed_env = getenv("OPCHECK_SEED");
    cfg.seed = (seed_env ? strtoull(seed_env, NULL, 10) : 17) + (uint64_t)ci;
    cfg.flags = e->flags | c->flags;
    cfg.forward_ref = e->ref;
    cfg.loss_fn = e->loss;
    cfg.user = opcheck_user_of(e, name);
    cfg.num_inplace = k.num_inplace;
    cfg.inplace = k.inplace;
    cfg.backend = g_backend;
    mxk_opcheck_report rep;
    mxk_status st = mxk_opcheck_run(&cfg, &rep);
    if (st != MXK_OK) {
        printf("FAIL %s [%s] %s: %s\n", name, c->attrs, k.shape_text[0] ? c->shapes : "",
               mxk_opcheck_last_error());
        return 1;
    }
    uint32_t failed = mxk_opcheck_report_failed(&rep);
    if (g_backend && strcmp(rep.backend, g_backend) != 0) {
        g_declined++;
        if (verbose)
            printf("decl %s case %d [%s]: ran on %s\n", name, ci, c->attrs, rep.backend);
    }
    if (failed || verbose) {
        printf("%s %s case %d [%s] [%s]\n", failed ? "FAIL" : "ok", name, ci, c->attrs, c->shapes);
        mxk_opcheck_report_print(stdout, &rep);
    }
    return (int)failed;
}

/** Whether `backend` has a CPU kernel of operator `op`. */
static int has_kernel(const char *op, const char *backend) {
    uint32_t n = mxk_op_kernel_count(op);
    for (uint32_t i = 0; i < n; i++) {
        int32_t dev;
        const char *b, *plugin;
        if (mxk_op_kernel_get(op, i, &dev, &b, &plugin) == MXK_OK && dev == MXK_DEV_CPU &&
            strcmp(b, backend) == 0)
            return 1;
    }
    return 0;
}

/** The kit over every cpu-blas operator (with g_backend: those it has kernels for). */
static int run_all(void) {
    int verbose = getenv("OPCHECK_VERBOSE") != NULL;
    const char *only = getenv("OPCHECK_ONLY");
    int failures = 0, ops = 0, cases = 0;
    for (uint32_t i = 0; i < mxk_op_count(); i++) {
        const char *name = mxk_op_name(i);
        const char *plugin = mxk_op_plugin(name);
        if (plugin == NULL || strcmp(plugin, "cpu-blas") != 0)
            continue;
        if ((only && strcmp(only, name) != 0) || (g_backend && !has_kernel(name, g_backend)))
            continue;
        const op_entry *e = opcheck_find_entry(name);
        if (e == NULL) {
            printf("FAIL no opcheck configuration for operator %s\n", name);
            failures++;
            continue;
        }
        ops++;
        uint64_t rng = 0x5eed0000u + i;
        int op_failed = 0;
        for (int ci = 0; ci < MAX_CASES && e->cases[ci].shapes != NULL; ci++) {
            op_failed += run_case(name, e, &e->cases[ci], ci, &rng, verbose) != 0;
            cases++;
        }
        failures += op_failed != 0;
        if (op_failed == 0)
            printf("ok   %s\n", name);
    }
    /* Table names not registered (yet): skipped by name. */
    for (size_t t = 0; t < opcheck_table_size && only == NULL && g_backend == NULL; t++) {
        char buf[256];
        snprintf(buf, sizeof buf, "%s", opcheck_table[t].names);
        for (char *save = NULL, *n = strtok_r(buf, " ", &save); n; n = strtok_r(NULL, " ", &save))
            if (mxk_op_kernel_count(n) == 0)
                printf("skip %s (not registered)\n", n);
    }
    printf("opcheck: %d operators, %d cases, %d operators failed\n", ops, cases, failures);
    if (g_backend) {
        printf("opcheck: %d cases ran on %s, %d declined by it (ran on the next backend)\n",
               cases - g_declined, g_backend, g_declined);
        if (ops == 0) {
            printf("FAIL backend %s has no kernel of a cpu-blas operator\n", g_backend);
            return 1;
        }
    }
    return failures ? 1 : 0;
}

/* ------------------------------------------------------------------------- */
/* Negative test                                                             */
/* ------------------------------------------------------------------------- */

/** Runs the kit on a broken operator with one 2x3 (or two) inputs. */
static mxk_status run_broken(const char *op, uint32_t num_in, mxk_opcheck_report *rep) {
    mxk_shape s[2] = {{.ndim = 2, .dims = {2, 3}}, {.ndim = 2, .dims = {2, 3}}};
    mxk_opcheck_config cfg;
    mxk_opcheck_config_init(&cfg);
    cfg.op = op;
    cfg.num_inputs = num_in;
    cfg.in_shapes = s;
    cfg.seed = 3;
    mxk_status st = mxk_opcheck_run(&cfg, rep);
    mxk_opcheck_report_print(stdout, rep);
    return st;
}

/** Outcome of check `name` in a report (-1 if absent). */
static int outcome(const mxk_opcheck_report *rep, const char *name) {
    for (uint32_t i = 0; i < rep->num_results; i++)
        if (strcmp(rep->results[i].name, name) == 0)
            return rep->results[i].outcome;
    return -1;
}

/** Message of check `name`. */
static const char *message(const mxk_opcheck_report *rep, const char *name) {
    for (uint32_t i = 0; i < rep->num_results; i++)
        if (strcmp(rep->results[i].name, name) == 0)
            return rep->results[i].message;
    return "";
}

/** The correct operator passes everything. */
static void test_good_passes(void) {
    mxk_opcheck_report rep;
    CHECK_EQ_INT(run_broken("OpcheckGood", 1, &rep), MXK_OK);
    CHECK_EQ_INT(mxk_opcheck_report_failed(&rep), 0);
    CHECK_EQ_INT(outcome(&rep, "backward"), MXK_OPCHECK_PASS);
    CHECK_EQ_INT(outcome(&rep, "backward_req"), MXK_OPCHECK_PASS);
    CHECK_EQ_INT(outcome(&rep, "dependency"), MXK_OPCHECK_PASS);
}

/** Wrong gradient: "backward" fails, the others pass. */
static void test_wrong_gradient_caught(void) {
    mxk_opcheck_report rep;
    CHECK_EQ_INT(run_broken("OpcheckWrongGrad", 1, &rep), MXK_OK);
    CHECK_EQ_INT(outcome(&rep, "backward"), MXK_OPCHECK_FAIL);
    CHECK_CONTAINS(message(&rep, "backward"), "gradient of 'data'");
    CHECK(rep.results[2].max_abs_err > 0.01);
    CHECK_EQ_INT(outcome(&rep, "backward_req"), MXK_OPCHECK_PASS);
    CHECK_EQ_INT(outcome(&rep, "dependency"), MXK_OPCHECK_PASS);
}

/** ADD ignored: "backward_req" fails naming ADD. */
static void test_ignored_add_caught(void) {
    mxk_opcheck_report rep;
    CHECK_EQ_INT(run_broken("OpcheckIgnoresAdd", 1, &rep), MXK_OK);
    CHECK_EQ_INT(outcome(&rep, "backward_req"), MXK_OPCHECK_FAIL);
    CHECK_CONTAINS(message(&rep, "backward_req"), "ADD (pre-filled 5)");
    CHECK_EQ_INT(outcome(&rep, "backward"), MXK_OPCHECK_PASS);
}

/** Undeclared input read: "dependency" fails naming in_data 'rhs'. */
static void test_undeclared_read_caught(void) {
    mxk_opcheck_report rep;
    CHECK_EQ_INT(run_broken("OpcheckUndeclared", 2, &rep), MXK_OK);
    CHECK_EQ_INT(outcome(&rep, "dependency"), MXK_OPCHECK_FAIL);
    CHECK_CONTAINS(message(&rep, "dependency"), "in_data 'rhs'");
}

/**
 * One element written past the output: the storage guard (on for the kit) fails the
 * forward naming the operator, the array and the offset (2x3 float32: 24 bytes).
 */
static void test_overrun_caught(void) {
    mxk_opcheck_report rep;
    CHECK_EQ_INT(run_broken("OpcheckOverrun", 1, &rep), MXK_OK);
    CHECK_EQ_INT(outcome(&rep, "forward"), MXK_OPCHECK_FAIL);
    CHECK(strcmp(message(&rep, "forward"),
                 "forward failed: storage guard: operator 'OpcheckOverrun' (backend "
                 "'opcheck-broken') wrote outside array 'output' (24 bytes): canary damaged at "
                 "byte offset 24") == 0);
    CHECK_EQ_INT(outcome(&rep, "backward"), MXK_OPCHECK_SKIP);
}

/**
 * The same overrun inside a bound graph: the guard's error also names the graph node
 * ("ovr"), so a model author learns which layer's operator wrote out of bounds.
 */
static void test_overrun_in_executor_names_node(void) {
    mxk_symbol *x = NULL, *y = NULL;
    mxk_executor *ex = NULL;
    mxk_context cpu = {MXK_DEV_CPU, 0};
    const char *names[] = {"x"};
    mxk_shape s = {.ndim = 2, .dims = {2, 3}};
    CHECK_EQ_INT(mxk_symbol_variable("x", &x), MXK_OK);
    CHECK_EQ_INT(mxk_symbol_create("OpcheckOverrun", "ovr", 0, NULL, NULL, 1, NULL, &x, &y),
                 MXK_OK);
    CHECK_EQ_INT(mxk_executor_simple_bind(y, cpu, 1, names, &s, "null", 0, NULL, NULL, NULL, &ex),
                 MXK_OK);
    CHECK_EQ_INT(mxk_executor_forward(ex, 0), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(mxk_executor_output(ex, 0)), MXK_ERR_INTERNAL);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "storage guard: operator 'OpcheckOverrun' (node 'ovr', backend "
                   "'opcheck-broken') wrote outside array 'output' (24 bytes): canary damaged at "
                   "byte offset 24");
    mxk_executor_free(ex);
    mxk_symbol_free(y);
    mxk_symbol_free(x);
}

/** Bad requests: clear errors, no crash. */
static void test_bad_requests(void) {
    mxk_opcheck_report rep;
    mxk_shape s = {.ndim = 2, .dims = {2, 3}};
    mxk_opcheck_config cfg;
    mxk_opcheck_config_init(&cfg);
    cfg.op = "NoSuchOperator";
    cfg.num_inputs = 1;
    cfg.in_shapes = &s;
    CHECK_EQ_INT(mxk_opcheck_run(&cfg, &rep), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_opcheck_last_error(), "unknown operator 'NoSuchOperator'");
    cfg.op = "OpcheckUndeclared"; /* two arguments, one shape */
    CHECK(mxk_opcheck_run(&cfg, &rep) != MXK_OK);
    CHECK(mxk_opcheck_last_error()[0] != '\0');
    printf("wrong number of shapes: %s\n", mxk_opcheck_last_error());
    const char *k[] = {"nonsense"}, *v[] = {"1"};
    cfg.op = "OpcheckGood";
    cfg.num_attrs = 1;
    cfg.keys = k;
    cfg.vals = v;
    CHECK_EQ_INT(mxk_opcheck_run(&cfg, &rep), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_opcheck_last_error(), "nonsense");
    cfg.num_attrs = 0;
    cfg.backend = "no-such-backend";
    CHECK_EQ_INT(mxk_opcheck_run(&cfg, &rep), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_opcheck_last_error(), "no-such-backend");
    cfg.backend = NULL;
    cfg.fd_step = -1;
    CHECK_EQ_INT(mxk_opcheck_run(&cfg, &rep), MXK_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(mxk_opcheck_run(NULL, &rep), MXK_ERR_INVALID_ARGUMENT);
    mxk_shape parsed;
    CHECK(mxk_opcheck_parse_shape("2,3", &parsed) && parsed.ndim == 2 && parsed.dims[1] == 3);
    CHECK(mxk_opcheck_parse_shape("(4)", &parsed) && parsed.ndim == 1);
    CHECK(mxk_opcheck_parse_shape("0", &parsed) && parsed.ndim == 0);
    CHECK(!mxk_opcheck_parse_shape("2,x", &parsed));
    CHECK(!mxk_opcheck_parse_shape("2,0", &parsed));
    CHECK(!mxk_opcheck_parse_shape("1,1,1,1,1,1,1,1,1", &parsed));
}

int main(int argc, char **argv) {
    if (argc < 3 || (strcmp(argv[1], "all") != 0 && argc < 4)) {
        fprintf(stderr,
                "usage: test_opcheck all CONFDIR | backend CONFDIR NAME | broken CONFDIR PLUGIN\n");
        return 2;
    }
    /* As `mxk opcheck`: the storage guard and the engine watchdog are on. */
    setenv("MXK_STORAGE_GUARD", "1", 0);
    setenv("MXK_ENGINE_WATCHDOG", "10", 0);
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = argv[2]};
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    int rc;
    if (strcmp(argv[1], "all") == 0) {
        rc = run_all();
    } else if (strcmp(argv[1], "backend") == 0) {
        g_backend = argv[3];
        rc = run_all();
    } else {
        if (mxk_load_plugin(argv[3], NULL) != MXK_OK) {
            fprintf(stderr, "loading %s: %s\n", argv[3], mxk_get_last_error());
            mxk_shutdown();
            return 1;
        }
        MXK_RUN(test_good_passes);
        MXK_RUN(test_wrong_gradient_caught);
        MXK_RUN(test_ignored_add_caught);
        MXK_RUN(test_undeclared_read_caught);
        MXK_RUN(test_overrun_caught);
        MXK_RUN(test_overrun_in_executor_names_node);
        MXK_RUN(test_bad_requests);
        rc = MXK_TEST_EXIT();
    }
    mxk_shutdown();
    return rc;
}
