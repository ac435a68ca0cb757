/*
 * Every GPU kernel against cpu-blas's kernel of the same operator, on the same
 * inputs: one parameterised suite over the operator case tables of the operator
 * test kit (tests/opcheck/opcheck_cases.h).
 *
 *   test_gpu_ops CONFDIR
 *
 * For every operator that cpu-blas defines and that has a kernel on MXK_DEV_GPU
 * (asked of the registry at run time: mxk_op_kernel_get), and every case of its
 * table entry: an operator instance on cpu(0) (cpu-blas by preference) and one on
 * gpu(0), the same random inputs and aux states on both (drawn as the kit draws
 * them: per-argument ranges, integer labels, kink margins), then
 *   forward is_train 0 and 1 (WRITE): visible outputs and aux states compared;
 *   forward ADD (outputs pre-filled with 5) in the backward's mode;
 *   backward with the same random output gradients, WRITE then ADD (pre-filled
 *   with 5; labels and indices get NULL): input gradients compared.
 * Backward gets only the arrays the operator's backward dependency declares (the
 * others NULL), as the executor passes them, so a GPU kernel that reads an
 * undeclared array fails here as it would in training. An element agrees when |gpu - cpu| <= atol +
 * rtol * |cpu| (NaN only with NaN), with the larger of the two kernels' crosscheck_rtol /
 * crosscheck_atol (ABI 1.2), else rtol 1e-4 and atol 1e-5, as mxk crosscheck
 * (kernel/graph/crosscheck.c, which compares two backends on ONE device and so
 * cannot serve here). Per-operator exceptions:
 *   - random operators (uniform, normal, randint, exponential, Dropout in
 *     training, ...) are compared by seed identity: before each forward both
 *     devices are seeded with the same seed, which gives cpu(0) and gpu(0) the
 *     same Philox key and counter (the key rule of kernel/memory/resource.c), and
 *     both kernels must then draw the same numbers (they map Philox blocks to
 *     values alike), within the same tolerance;
 *   - a GPU kernel that declines a configuration (supports, MXK_ERR_UNSUPPORTED)
 *     is counted and listed, not failed; one without a backward where cpu-blas
 *     has one fails.
 * Prints one line per operator and the coverage: how many of cpu-blas's
 * operators (canonical names) have a GPU kernel, and the list of those without.
 * Environment: GPU_OPS_ONLY=NAME one operator, GPU_OPS_VERBOSE=1 every case.
 * Exits 77 (skipped) when no GPU is visible.
 *
 * Semantics: MXNet's tests/python/gpu/test_operator_gpu.py, which reruns the CPU
 * operator tests with check_consistency (tests/python/unittest/common.py: one
 * symbol on cpu and gpu contexts, outputs and gradients compared by tolerance).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_test.h"
#include "op_instance.h"
#include "opcheck_cases.h"
#include "registry.h"

/** Most outputs or aux states of one operator. */
#define MAX_SLOTS 16
/** Default tolerances (mxk crosscheck's). */
#define DEFAULT_RTOL 1e-4
#define DEFAULT_ATOL 1e-5
/** The value outputs and gradients are pre-filled with before an ADD. */
#define ADD_BASE 5.0

/** One device's side of a case: its instance and arrays (all owned). */
typedef struct side {
    mxk_context ctx;
    mxk_op_instance *inst;
    mxk_ndarray *in[MAX_IN], *out[MAX_SLOTS], *aux[MAX_SLOTS], *grad[MAX_IN], *ograd[MAX_SLOTS];
} side;

/** A case's host data: slot counts, shapes, dtypes, input and aux values. */
typedef struct case_data {
    const char *op;
    int ci;
    const op_case *c;
    uint32_t num_in, num_out, num_vis, num_aux;
    mxk_shape in_s[MAX_IN], out_s[MAX_SLOTS], aux_s[MAX_SLOTS];
    int32_t in_t[MAX_IN], out_t[MAX_SLOTS], aux_t[MAX_SLOTS];
    double *in_v[MAX_IN], *aux_v[MAX_SLOTS], *ograd_v[MAX_SLOTS];
    int no_grad[MAX_IN];
    double rtol, atol;
    uint64_t seed;
} case_data;

/** Operators whose GPU kernel declined at least one case. */
static char g_declined[4096];

/** Element count of a shape. */
static uint64_t numel(const mxk_shape *s) {
    uint64_t n = 1;
    for (int32_t d = 0; d < s->ndim; d++)
        n *= (uint64_t)s->dims[d];
    return n;
}

/** splitmix64 in [0, 1). */
static double unit(uint64_t *rng) {
    return (double)(opcheck_rnd(rng) >> 11) * 0x1.0p-53;
}

/** Draws n values by spec (range, integer, kink margin) into a new buffer; NULL on OOM. */
static double *draw(uint64_t n, const mxk_opcheck_input_spec *spec, uint64_t *rng) {
    double lo = spec->low, hi = spec->high;
    if (lo == 0 && hi == 0) {
        lo = -1;
        hi = 1;
    }
    double *v = malloc((n ? n : 1) * sizeof *v);
    for (uint64_t i = 0; v != NULL && i < n; i++) {
        double x;
        for (int tries = 0;; tries++) {
            x = lo + (hi - lo) * unit(rng);
            if (spec->integer)
                x = floor(x);
            double m = spec->kink_margin;
            if (spec->integer || m <= 0 || tries > 100 || fabs(x * 2 - round(x * 2)) * 0.5 >= m)
                break;
        }
        v[i] = x;
    }
    return v;
}

/** Frees a side's arrays and instance. */
static void side_free(side *s) {
    for (uint32_t i = 0; i < MAX_IN; i++) {
        mxk_ndarray_free(s->in[i]);
        mxk_ndarray_free(s->grad[i]);
    }
    for (uint32_t i = 0; i < MAX_SLOTS; i++) {
        mxk_ndarray_free(s->out[i]);
        mxk_ndarray_free(s->aux[i]);
        mxk_ndarray_free(s->ograd[i]);
    }
    mxk_op_instance_free(s->inst);
    *s = (side){.ctx = s->ctx};
}

/**
 * (Re)loads a side's inputs and aux states from the host values and makes fresh
 * outputs filled with `out_fill`.
 */
static mxk_status side_load(side *s, const case_data *d, double out_fill) {
    mxk_status rc = MXK_OK;
    for (uint32_t i = 0; i < d->num_in && rc == MXK_OK; i++) {
        mxk_ndarray_free(s->in[i]);
        rc = gpu_test_array(&d->in_s[i], d->in_t[i], s->ctx, d->in_v[i], &s->in[i]);
    }
    for (uint32_t i = 0; i < d->num_aux && rc == MXK_OK; i++) {
        mxk_ndarray_free(s->aux[i]);
        rc = gpu_test_array(&d->aux_s[i], d->aux_t[i], s->ctx, d->aux_v[i], &s->aux[i]);
    }
    for (uint32_t i = 0; i < d->num_out && rc == MXK_OK; i++) {
        mxk_ndarray_free(s->out[i]);
        rc = mxk_ndarray_full(&d->out_s[i], d->out_t[i], s->ctx, out_fill, &s->out[i]);
    }
    return rc;
}

/** Prints a failure line of a case and returns 1. */
static int fail(const case_data *d, const char *what, const char *detail) {
    printf("FAIL %s case %d [%s] [%s] %s: %s\n", d->op, d->ci, d->c->attrs, d->c->shapes, what,
           detail);
    return 1;
}

/**
 * Compares the GPU array g with the CPU array c element-wise; returns 1 (after
 * printing the worst element) when they differ beyond the case's tolerance or
 * cannot be read (a kernel's asynchronous error surfaces here).
 */
static int compare(const case_data *d, const char *what, mxk_ndarray *g, mxk_ndarray *c) {
    double *gv = NULL, *cv = NULL;
    char msg[512];
    if (gpu_test_values(g, &gv) != MXK_OK || gpu_test_values(c, &cv) != MXK_OK) {
        snprintf(msg, sizeof msg, "reading the result: %s", mxk_get_last_error());
        free(gv);
        free(cv);
        return fail(d, what, msg);
    }
    uint64_t n = mxk_ndarray_size(c), worst = 0;
    double worst_excess = 0, max_abs = 0;
    int bad = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (isnan(gv[i]) || isnan(cv[i])) {
            if (isnan(gv[i]) != isnan(cv[i]) && !bad) {
                bad = 1;
                worst = i;
                worst_excess = INFINITY;
            }
            continue;
        }
        double diff = fabs(gv[i] - cv[i]);
        if (gv[i] == cv[i])
            diff = 0; /* equal infinities */
        double excess = diff - (d->atol + d->rtol * fabs(cv[i]));
        max_abs = fmax(max_abs, diff);
        if (excess > 0 && excess > worst_excess) {
            bad = 1;
            worst = i;
            worst_excess = excess;
        }
    }
    if (bad) {
        snprintf(msg, sizeof msg,
                 "max |gpu - cpu| %.3g; element %llu: gpu %.9g, cpu %.9g (rtol %g, atol %g)",
                 max_abs, (unsigned long long)worst, gv[worst], cv[worst], d->rtol, d->atol);
        fail(d, what, msg);
    }
    free(gv);
    free(cv);
    return bad;
}

/**
 * Whether a call that returned rc produced all n arrays without an error (its
 * asynchronous errors surface at the wait). NULL entries are skipped.
 */
static int all_readable(mxk_ndarray *const *arrays, uint32_t n, mxk_status rc) {
    for (uint32_t i = 0; i < n && rc == MXK_OK; i++)
        if (arrays[i] != NULL)
            rc = mxk_ndarray_wait_to_read(arrays[i]);
    return rc == MXK_OK;
}

/**
 * Runs forward on both sides with `req` for the visible outputs (an ADD cpu-blas
 * refuses is not compared); 1 on a failure.
 */
static int forward_both(const case_data *d, side s[2], int is_train, mxk_op_req req,
                        const char *what) {
    mxk_op_req reqs[MAX_SLOTS];
    for (uint32_t i = 0; i < d->num_out; i++)
        reqs[i] = i < d->num_vis ? req : MXK_REQ_WRITE;
    for (int k = 0; k < 2; k++) {
        if (side_load(&s[k], d, req == MXK_REQ_ADD ? ADD_BASE : 0) != MXK_OK ||
            mxk_random_seed(d->seed) != MXK_OK)
            return fail(d, what, mxk_get_last_error());
        mxk_status rc =
            mxk_op_instance_forward(s[k].inst, is_train, s[k].in, s[k].out, reqs, s[k].aux);
        if (k == 0 && req == MXK_REQ_ADD && !all_readable(s[0].out, d->num_vis, rc))
            return 0; /* cpu-blas cannot add into these outputs: no reference */
        if (rc != MXK_OK) {
            char msg[640];
            snprintf(msg, sizeof msg, "on %s: %s", k ? "gpu" : "cpu", mxk_get_last_error());
            return fail(d, what, msg);
        }
    }
    int failed = 0;
    char buf[256];
    for (uint32_t i = 0; i < d->num_vis && !failed; i++) {
        snprintf(buf, sizeof buf, "%s output '%s'", what,
                 mxk_op_instance_name(s[0].inst, MXK_SLOT_OUTPUT, i));
        failed = compare(d, buf, s[1].out[i], s[0].out[i]);
    }
    for (uint32_t i = 0; i < d->num_aux && !failed; i++) {
        snprintf(buf, sizeof buf, "%s aux state '%s'", what,
                 mxk_op_instance_name(s[0].inst, MXK_SLOT_AUX, i));
        failed = compare(d, buf, s[1].aux[i], s[0].aux[i]);
    }
    return failed;
}

/**
 * Runs backward on both sides (after a forward in the same mode) with `req` for
 * every input with a gradient. *no_backward is set when cpu-blas's kernel has none
 * (nothing to compare); an ADD cpu-blas refuses is not compared either. Returns 1
 * on a failure.
 */
static int backward_both(const case_data *d, side s[2], mxk_op_req req, int *no_backward) {
    const char *what = req == MXK_REQ_ADD ? "backward ADD" : "backward WRITE";
    mxk_op_req reqs[MAX_IN];
    for (uint32_t i = 0; i < d->num_in; i++)
        reqs[i] = d->no_grad[i] ? MXK_REQ_NULL : req;
    for (int k = 0; k < 2; k++) {
        mxk_status rc = MXK_OK;
        for (uint32_t i = 0; i < d->num_vis && rc == MXK_OK; i++) {
            mxk_ndarray_free(s[k].ograd[i]);
            rc = gpu_test_array(&d->out_s[i], d->out_t[i], s[k].ctx, d->ograd_v[i], &s[k].ograd[i]);
        }
        for (uint32_t i = 0; i < d->num_in && rc == MXK_OK; i++) {
            mxk_ndarray_free(s[k].grad[i]);
            rc = mxk_ndarray_full(&d->in_s[i], d->in_t[i], s[k].ctx, ADD_BASE, &s[k].grad[i]);
        }
        if (rc == MXK_OK) {
            /* Only what the backward dependency declares, as the executor passes it. */
            uint8_t need_og[MAX_SLOTS] = {0}, need_in[MAX_IN] = {0}, need_out[MAX_SLOTS] = {0};
            mxk_op_instance_backward_dependency(s[k].inst, need_og, need_in, need_out);
            mxk_ndarray *og[MAX_SLOTS], *in[MAX_IN], *out[MAX_SLOTS];
            for (uint32_t i = 0; i < d->num_vis; i++)
                og[i] = need_og[i] ? s[k].ograd[i] : NULL;
            for (uint32_t i = 0; i < d->num_in; i++)
                in[i] = need_in[i] ? s[k].in[i] : NULL;
            for (uint32_t i = 0; i < d->num_out; i++)
                out[i] = need_out[i] ? s[k].out[i] : NULL;
            rc = mxk_op_instance_backward(s[k].inst, og, in, out, s[k].grad, reqs, s[k].aux);
        }
        if (rc == MXK_ERR_UNSUPPORTED && k == 0 && req == MXK_REQ_WRITE) {
            *no_backward = 1;
            return 0;
        }
        if (k == 0 && req == MXK_REQ_ADD && !all_readable(s[0].grad, d->num_in, rc))
            return 0; /* cpu-blas cannot add into these gradients: no reference */
        if (rc != MXK_OK) {
            char msg[640];
            snprintf(msg, sizeof msg, "on %s: %s%s", k ? "gpu" : "cpu", mxk_get_last_error(),
                     rc == MXK_ERR_UNSUPPORTED ? " (cpu-blas's kernel has a backward)" : "");
            return fail(d, what, msg);
        }
    }
    char buf[256];
    for (uint32_t i = 0; i < d->num_in; i++) {
        if (d->no_grad[i])
            continue;
        snprintf(buf, sizeof buf, "%s gradient of '%s'", what,
                 mxk_op_instance_name(s[0].inst, MXK_SLOT_INPUT, i));
        if (compare(d, buf, s[1].grad[i], s[0].grad[i]))
            return 1;
    }
    return 0;
}

/** Fills d's slots from the CPU instance and checks the GPU one agrees; 1 on a failure. */
static int describe(case_data *d, side s[2]) {
    uint32_t g[4];
    mxk_op_instance_counts(s[0].inst, &d->num_in, &d->num_out, &d->num_vis, &d->num_aux);
    mxk_op_instance_counts(s[1].inst, &g[0], &g[1], &g[2], &g[3]);
    if (g[0] != d->num_in || g[1] != d->num_out || g[2] != d->num_vis || g[3] != d->num_aux)
        return fail(d, "slots", "the gpu instance has other slot counts than the cpu one");
    if (d->num_in > MAX_IN || d->num_out > MAX_SLOTS || d->num_aux > MAX_SLOTS)
        return fail(d, "slots", "more slots than the suite holds");
    for (int kind = 0; kind < 3; kind++) {
        uint32_t n = kind == 0 ? d->num_in : kind == 1 ? d->num_out : d->num_aux;
        mxk_shape *shapes = kind == 0 ? d->in_s : kind == 1 ? d->out_s : d->aux_s;
        int32_t *types = kind == 0 ? d->in_t : kind == 1 ? d->out_t : d->aux_t;
        for (uint32_t i = 0; i < n; i++) {
            mxk_shape gs;
            int32_t gt;
            mxk_op_instance_shape(s[0].inst, (mxk_op_slot_kind)kind, i, &shapes[i], &types[i]);
            mxk_op_instance_shape(s[1].inst, (mxk_op_slot_kind)kind, i, &gs, &gt);
            if (gt != types[i] || gs.ndim != shapes[i].ndim ||
                memcmp(gs.dims, shapes[i].dims, sizeof(gs.dims[0]) * (size_t)gs.ndim) != 0)
                return fail(d, "shape_type", "gpu and cpu instances infer different shapes/types");
        }
    }
    return 0;
}

/** The larger of the two kernels' declared tolerances, else the defaults. */
static void tolerance(case_data *d, const side s[2]) {
    const mxk_op_kernel_def *a = &s[0].inst->kernel->def, *b = &s[1].inst->kernel->def;
    double r = fmax(a->crosscheck_rtol, b->crosscheck_rtol);
    double t = fmax(a->crosscheck_atol, b->crosscheck_atol);
    d->rtol = r > 0 ? r : DEFAULT_RTOL;
    d->atol = t > 0 ? t : DEFAULT_ATOL;
}

/** Draws the case's inputs, aux states and output gradients; 1 on OOM. */
static int draw_values(case_data *d, const concrete *k, uint64_t seed) {
    uint64_t rng = seed * 0x9E3779B97F4A7C15ull + 1;
    mxk_opcheck_input_spec aux_spec = {.low = 0.5, .high = 1.5};
    mxk_opcheck_input_spec og_spec = {.low = -1, .high = 1};
    int ok = 1;
    for (uint32_t i = 0; i < d->num_in; i++) {
        d->in_v[i] = draw(numel(&d->in_s[i]), &k->specs[i], &rng);
        d->no_grad[i] = k->specs[i].no_grad || k->specs[i].integer;
        ok &= d->in_v[i] != NULL;
    }
    for (uint32_t i = 0; i < d->num_aux; i++)
        ok &= (d->aux_v[i] = draw(numel(&d->aux_s[i]), &aux_spec, &rng)) != NULL;
    for (uint32_t i = 0; i < d->num_vis; i++)
        ok &= (d->ograd_v[i] = draw(numel(&d->out_s[i]), &og_spec, &rng)) != NULL;
    return ok ? 0 : fail(d, "inputs", "out of host memory");
}

/** Frees the host values of a case. */
static void values_free(case_data *d) {
    for (uint32_t i = 0; i < MAX_IN; i++)
        free(d->in_v[i]);
    for (uint32_t i = 0; i < MAX_SLOTS; i++) {
        free(d->aux_v[i]);
        free(d->ograd_v[i]);
    }
}

/** Records that `op`'s GPU kernel declined a case (once per operator). */
static void note_declined(const char *op) {
    size_t len = strlen(g_declined), n = strlen(op);
    const char *p = strstr(g_declined, op);
    if (p != NULL && (p == g_declined || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
        return;
    snprintf(g_declined + len, sizeof g_declined - len, "%s%s", len ? " " : "", op);
}

/** Runs case `ci` of entry e for operator op; returns 1 when it failed. */
static int run_case(const char *op, const op_entry *e, int ci, uint64_t *rng, int verbose) {
    concrete k;
    case_data d = {.op = op, .ci = ci, .c = &e->cases[ci]};
    if (!opcheck_make_concrete(e, &e->cases[ci], rng, &k))
        return fail(&d, "table", "malformed table entry");
    side s[2] = {{.ctx = gpu_test_cpu}, {.ctx = gpu_test_gpu}};
    uint32_t flags = e->flags | e->cases[ci].flags;
    d.seed = 17 + (uint64_t)ci;
    int failed = 0;
    for (int j = 0; j < 2 && !failed; j++) {
        mxk_status rc = mxk_op_instance_create(op, k.num_attrs, k.keys, k.vals, s[j].ctx, k.num_in,
                                               k.num_in ? k.shapes : NULL, NULL, &s[j].inst);
        if (rc == MXK_ERR_UNSUPPORTED && j == 1) {
            note_declined(op);
            if (verbose)
                printf("decl %s case %d: %s\n", op, ci, mxk_get_last_error());
            side_free(&s[0]);
            return 0;
        }
        if (rc != MXK_OK) {
            char msg[640];
            snprintf(msg, sizeof msg, "instance on %s: %s", j ? "gpu" : "cpu",
                     mxk_get_last_error());
            failed = fail(&d, "create", msg);
        }
    }
    if (!failed)
        failed = describe(&d, s);
    if (!failed) {
        tolerance(&d, s);
        failed = draw_values(&d, &k, d.seed);
    }
    int train = (flags & MXK_OPCHECK_INFERENCE) ? 0 : 1;
    if (!failed)
        failed = forward_both(&d, s, 1 - train, MXK_REQ_WRITE,
                              train ? "forward is_train=0" : "forward is_train=1");
    if (!failed)
        failed = forward_both(&d, s, train, MXK_REQ_ADD, "forward ADD");
    if (!failed)
        failed = forward_both(&d, s, train, MXK_REQ_WRITE,
                              train ? "forward is_train=1" : "forward is_train=0");
    int no_backward = (flags & MXK_OPCHECK_NO_BACKWARD) != 0;
    if (!failed && !no_backward)
        failed = backward_both(&d, s, MXK_REQ_WRITE, &no_backward);
    if (!failed && !no_backward)
        failed = backward_both(&d, s, MXK_REQ_ADD, &no_backward);
    if (verbose && !failed)
        printf("ok   %s case %d [%s] [%s] on %s (rtol %g, atol %g)%s\n", op, ci, e->cases[ci].attrs,
               e->cases[ci].shapes, mxk_op_instance_backend(s[1].inst), d.rtol, d.atol,
               no_backward ? ", forward only" : "");
    values_free(&d);
    side_free(&s[0]);
    side_free(&s[1]);
    return failed;
}

/** Whether operator `op` has a kernel on device type `dev`. */
static int has_kernel(const char *op, int32_t dev) {
    uint32_t n = mxk_op_kernel_count(op);
    for (uint32_t i = 0; i < n; i++) {
        int32_t t;
        const char *b, *plugin;
        if (mxk_op_kernel_get(op, i, &t, &b, &plugin) == MXK_OK && t == dev)
            return 1;
    }
    return 0;
}

/**
 * Runs every case of every cpu-blas operator (canonical names) that has a GPU
 * kernel and prints the coverage. Returns the number of failed operators.
 */
static int run_all(void) {
    const char *only = getenv("GPU_OPS_ONLY");
    int verbose = getenv("GPU_OPS_VERBOSE") != NULL;
    int failures = 0, ops = 0, covered = 0, cases = 0;
    size_t cap = 1 << 16, len = 0;
    char *missing = calloc(1, cap);
    for (uint32_t i = 0; i < mxk_op_count() && missing != NULL; i++) {
        const char *name = mxk_op_name(i);
        const char *plugin = mxk_op_plugin(name);
        const char *canon = mxk_op_canonical_name(name);
        if (plugin == NULL || strcmp(plugin, "cpu-blas") != 0 || canon == NULL ||
            strcmp(canon, name) != 0)
            continue;
        ops++;
        if (!has_kernel(name, MXK_DEV_GPU)) {
            len += (size_t)snprintf(missing + len, cap - len, " %s", name);
            len = len < cap ? len : cap - 1;
            continue;
        }
        covered++;
        if (only && strcmp(only, name) != 0)
            continue;
        const op_entry *e = opcheck_find_entry(name);
        if (e == NULL) {
            printf("FAIL no opcheck configuration for operator %s\n", name);
            failures++;
            continue;
        }
        uint64_t rng = 0x5eed0000u + i;
        int op_failed = 0;
        for (int ci = 0; ci < MAX_CASES && e->cases[ci].shapes != NULL; ci++, cases++)
            op_failed += run_case(name, e, ci, &rng, verbose);
        failures += op_failed != 0;
        if (op_failed == 0)
            printf("ok   %s\n", name);
    }
    printf("coverage: %d of %d cpu-blas operators have a gpu kernel\n", covered, ops);
    printf("without a gpu kernel (%d):%s\n", ops - covered, missing ? missing : " ?");
    if (g_declined[0])
        printf("gpu kernels that declined some cases (ran on neither side): %s\n", g_declined);
    printf("gpu ops: %d cases, %d operators failed\n", cases, failures);
    free(missing);
    return failures;
}

/** Entry point: test_gpu_ops CONFDIR. */
int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: test_gpu_ops CONFDIR\n");
        return 2;
    }
    setenv("MXK_ENGINE_WATCHDOG", "30", 0);
    gpu_test_init(argv[1]);
    int failures = run_all();
    mxk_shutdown();
    return failures ? 1 : 0;
}
