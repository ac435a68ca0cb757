/*
 * mxk_opcheck: the operator test kit (see sdk/include/mxk_opcheck.h for the
 * contract of every check).
 *
 * Everything goes through the public API of libmxk (mxk.h): an operator instance
 * is created from the configuration, arrays are created on the configured device,
 * filled from host buffers the kit keeps in float64 (converted to and from the
 * arrays' dtypes here), and forward / backward are pushed with explicit write
 * requests. Every run starts from the same input and aux values and after the same
 * mxk_random_seed, so runs differ only in what a check varies.
 *
 * Run it with the storage guard and the engine watchdog on (MXK_STORAGE_GUARD=1,
 * MXK_ENGINE_WATCHDOG=SECONDS before mxk_init; `mxk opcheck` and tests/opcheck set
 * them): a kernel writing outside an array then fails the check that ran it with
 * the guard's message ("forward failed: storage guard: operator 'OP' wrote outside
 * array ..."), and a kernel that hangs is named on stderr.
 *
 * This file holds the public functions, the checks of the configuration and the
 * run (set-up, baselines, the checks in report order). Each check has its own
 * file: check_shape_type.c, check_forward.c, check_backward.c (numeric gradient),
 * check_forward_req.c and check_backward_req.c (write requests),
 * check_dependency.c (undeclared reads) and check_determinism.c; oc_run.c runs
 * the operator and compares, oc_values.c converts and draws values, and
 * oc_internal.h is the state they share.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_opcheck.h"

#include "oc_internal.h"

/** Sets the thread's last error (libmxk's one channel, mxk.h mxk_set_error) and returns `st`. */
#define oc_fail(...) mxk_set_error(__VA_ARGS__)
/** The thread's last error message. */
#define oc_error mxk_get_last_error()

const char *mxk_opcheck_last_error(void) {
    return mxk_get_last_error();
}

void mxk_opcheck_config_init(mxk_opcheck_config *cfg) {
    memset(cfg, 0, sizeof *cfg);
    cfg->struct_size = sizeof *cfg;
    cfg->ctx.dev_type = MXK_DEV_CPU;
    cfg->low = -1.0;
    cfg->high = 1.0;
    cfg->aux_low = 0.5;
    cfg->aux_high = 1.5;
    cfg->fd_step = 1e-3;
    cfg->grad_rtol = 1e-2;
    cfg->grad_atol = 1e-3;
    cfg->fwd_rtol = 1e-4;
    cfg->fwd_atol = 1e-5;
    cfg->req_rtol = 1e-5;
    cfg->req_atol = 1e-5;
}

const char *mxk_opcheck_outcome_name(int32_t outcome) {
    switch (outcome) {
    case MXK_OPCHECK_PASS:
        return "pass";
    case MXK_OPCHECK_FAIL:
        return "FAIL";
    case MXK_OPCHECK_SKIP:
        return "skip";
    default:
        return "?";
    }
}

uint32_t mxk_opcheck_report_failed(const mxk_opcheck_report *report) {
    uint32_t n = 0;
    for (uint32_t i = 0; report && i < report->num_results && i < MXK_OPCHECK_NUM_CHECKS; i++)
        n += report->results[i].outcome == MXK_OPCHECK_FAIL;
    return n;
}

void mxk_opcheck_report_print(FILE *f, const mxk_opcheck_report *report) {
    fprintf(f, "opcheck %s (backend %s)\n", report->op, report->backend[0] ? report->backend : "-");
    for (uint32_t i = 0; i < report->num_results && i < MXK_OPCHECK_NUM_CHECKS; i++) {
        const mxk_opcheck_result *r = &report->results[i];
        fprintf(f, "  %-13s %-4s  abs %-9.3g rel %-9.3g %s\n", r->name,
                mxk_opcheck_outcome_name(r->outcome), r->max_abs_err, r->max_rel_err, r->message);
    }
}

int mxk_opcheck_parse_shape(const char *text, mxk_shape *shape) {
    memset(shape, 0, sizeof *shape);
    if (text == NULL)
        return 0;
    char buf[256];
    size_t n = strlen(text);
    if (n >= sizeof buf)
        return 0;
    memcpy(buf, text, n + 1);
    char *b = buf;
    if (n >= 2 && b[0] == '(' && b[n - 1] == ')') {
        b[n - 1] = '\0';
        b++;
    }
    if (*b == '\0' || strcmp(b, "0") == 0)
        return 1; /* unknown */
    for (char *tok = b;;) {
        char *comma = strchr(tok, ',');
        if (comma != NULL)
            *comma = '\0';
        char *end = NULL;
        while (*tok == ' ')
            tok++;
        if (*tok < '0' || *tok > '9')
            return 0;
        unsigned long long d = strtoull(tok, &end, 10);
        while (end && *end == ' ')
            end++;
        if (end == tok || *end != '\0' || d == 0 || d > (1ull << 40) || shape->ndim >= MXK_MAX_NDIM)
            return 0;
        shape->dims[shape->ndim++] = (int64_t)d;
        if (comma == NULL)
            break;
        tok = comma + 1;
        if (*tok == '\0' && comma[1] == '\0')
            break; /* trailing comma: "3," */
    }
    return 1;
}

/**
 * The library's last error without a leading "OP: " (the kit's messages start with
 * "opcheck OP: " already), or a fallback naming the status.
 */
static const char *lib_detail(mxk_status st, const char *op) {
    const char *m = oc_lib_error(st);
    size_t n = strlen(op);
    return strncmp(m, op, n) == 0 && m[n] == ':' && m[n + 1] == ' ' ? m + n + 2 : m;
}

/** Checks the configuration itself. */
static mxk_status check_config(const mxk_opcheck_config *cfg) {
    if (cfg == NULL || cfg->struct_size < sizeof(mxk_opcheck_config))
        return oc_fail(MXK_ERR_INVALID_ARGUMENT,
                       "opcheck: configuration missing or struct_size too small "
                       "(initialise it with mxk_opcheck_config_init)");
    if (cfg->op == NULL || cfg->op[0] == '\0')
        return oc_fail(MXK_ERR_INVALID_ARGUMENT, "opcheck: no operator name given");
    if (cfg->num_attrs > 0 && (cfg->keys == NULL || cfg->vals == NULL))
        return oc_fail(MXK_ERR_INVALID_ARGUMENT, "opcheck %s: attribute keys/values missing",
                       cfg->op);
    for (uint32_t i = 0; i < cfg->num_attrs; i++)
        if (cfg->keys[i] == NULL || cfg->vals[i] == NULL)
            return oc_fail(MXK_ERR_INVALID_ARGUMENT, "opcheck %s: attribute %u is NULL", cfg->op,
                           (unsigned)i);
    if (cfg->num_inputs > OC_MAX_SLOTS)
        return oc_fail(MXK_ERR_INVALID_ARGUMENT, "opcheck %s: %u inputs, at most %d supported",
                       cfg->op, (unsigned)cfg->num_inputs, OC_MAX_SLOTS);
    if (cfg->num_inputs > 0 && cfg->in_shapes == NULL)
        return oc_fail(MXK_ERR_INVALID_ARGUMENT, "opcheck %s: in_shapes missing", cfg->op);
    if (!(cfg->high >= cfg->low) || !(cfg->aux_high >= cfg->aux_low) || !(cfg->fd_step > 0) ||
        !(cfg->grad_rtol >= 0) || !(cfg->grad_atol >= 0) || !(cfg->fwd_rtol >= 0) ||
        !(cfg->fwd_atol >= 0) || !(cfg->req_rtol >= 0) || !(cfg->req_atol >= 0))
        return oc_fail(MXK_ERR_INVALID_ARGUMENT,
                       "opcheck %s: bad range, step or tolerance (ranges need low <= high; step "
                       "> 0; tolerances >= 0)",
                       cfg->op);
    if (cfg->num_inplace > 0 && cfg->inplace == NULL)
        return oc_fail(MXK_ERR_INVALID_ARGUMENT, "opcheck %s: inplace pairs missing", cfg->op);
    if (cfg->num_ref_out > 0 && cfg->ref_out_shapes == NULL && cfg->ref_out_types == NULL)
        return oc_fail(MXK_ERR_INVALID_ARGUMENT, "opcheck %s: num_ref_out without references",
                       cfg->op);
    if (mxk_op_kernel_count(cfg->op) == 0) {
        int known = 0;
        for (uint32_t i = 0; i < mxk_op_count() && !known; i++)
            known = strcmp(mxk_op_name(i), cfg->op) == 0;
        if (!known)
            return oc_fail(MXK_ERR_NOT_FOUND, "opcheck: unknown operator '%s'", cfg->op);
    }
    return MXK_OK;
}

/** Checks that `backend` has a kernel of the operator on the device type. */
static mxk_status check_backend(const mxk_opcheck_config *cfg, int32_t dev_type) {
    char avail[256] = "";
    size_t used = 0;
    for (uint32_t i = 0; i < mxk_op_kernel_count(cfg->op); i++) {
        int32_t dt = 0;
        const char *be = NULL, *plugin = NULL;
        if (mxk_op_kernel_get(cfg->op, i, &dt, &be, &plugin) != MXK_OK || dt != dev_type)
            continue;
        if (be && strcmp(be, cfg->backend) == 0)
            return MXK_OK;
        if (be && used < sizeof avail)
            used +=
                (size_t)snprintf(avail + used, sizeof avail - used, "%s%s", used ? ", " : "", be);
    }
    return oc_fail(MXK_ERR_NOT_FOUND,
                   "opcheck %s: backend '%s' has no kernel of the operator on %s (available: %s)",
                   cfg->op, cfg->backend, mxk_dev_type_name(dev_type), used ? avail : "none");
}

/* ------------------------------------------------------------------------- */
/* The run                                                                   */
/* ------------------------------------------------------------------------- */

/** Names of the checks, in report order. */
static const char *const check_names[MXK_OPCHECK_NUM_CHECKS] = {
    "shape_type",   "forward",    "backward",   "forward_req",
    "backward_req", "dependency", "determinism"};

/** Allocates arrays and host buffers, draws the data, runs the baselines. */
static mxk_status prepare(oc_run *r, mxk_opcheck_report *rep) {
    const mxk_opcheck_config *cfg = r->cfg;
    uint64_t rng = cfg->seed * 0x2545F4914F6CDD1Dull + 0x1234567ull;
    for (uint32_t i = 0; i < r->ni; i++) {
        mxk_opcheck_input_spec s = oc_input_spec(cfg, i);
        /* Without specs, labels (MXNet's "label", "softmax_label") get no gradient. */
        size_t nl = strlen(r->in[i].name);
        if (cfg->inputs == NULL && nl >= 5 && strcmp(r->in[i].name + nl - 5, "label") == 0)
            s.no_grad = 1;
        r->grad_in[i] =
            !s.no_grad && oc_dtype_float(r->in[i].dtype) && !(cfg->flags & MXK_OPCHECK_NO_BACKWARD);
        if ((r->in_vals[i] = malloc(r->in[i].n * sizeof(double))) == NULL ||
            (r->in_arr[i] = oc_slot_array(r, &r->in[i])) == NULL)
            return oc_fail(MXK_ERR_OUT_OF_MEMORY, "opcheck %s: out of memory", cfg->op);
        for (uint64_t k = 0; k < r->in[i].n; k++)
            r->in_vals[i][k] = oc_draw(&rng, &s, r->in[i].dtype);
        if (r->grad_in[i] && ((r->grad_arr[i] = oc_slot_array(r, &r->in[i])) == NULL ||
                              (r->base_grad[i] = malloc(r->in[i].n * sizeof(double))) == NULL ||
                              (r->base_gradraw[i] = malloc(r->in[i].bytes)) == NULL))
            return oc_fail(MXK_ERR_OUT_OF_MEMORY, "opcheck %s: out of memory", cfg->op);
    }
    mxk_opcheck_input_spec aux_spec = {.low = cfg->aux_low, .high = cfg->aux_high};
    for (uint32_t i = 0; i < r->na; i++) {
        if ((r->aux_vals[i] = malloc(r->aux[i].n * sizeof(double))) == NULL ||
            (r->aux_fwd[i] = malloc(r->aux[i].n * sizeof(double))) == NULL ||
            (r->aux_arr[i] = oc_slot_array(r, &r->aux[i])) == NULL)
            return oc_fail(MXK_ERR_OUT_OF_MEMORY, "opcheck %s: out of memory", cfg->op);
        for (uint64_t k = 0; k < r->aux[i].n; k++)
            r->aux_vals[i][k] = oc_draw(&rng, &aux_spec, r->aux[i].dtype);
    }
    for (uint32_t j = 0; j < r->no; j++) {
        if ((r->base_out[j] = oc_slot_array(r, &r->out[j])) == NULL ||
            (r->tmp_out[j] = oc_slot_array(r, &r->out[j])) == NULL ||
            (r->base_outv[j] = malloc(r->out[j].n * sizeof(double))) == NULL ||
            (r->base_outraw[j] = malloc(r->out[j].bytes)) == NULL)
            return oc_fail(MXK_ERR_OUT_OF_MEMORY, "opcheck %s: out of memory", cfg->op);
    }
    mxk_opcheck_input_spec w_spec = {.low = -1.0, .high = 1.0};
    for (uint32_t j = 0; j < r->nv; j++) {
        if ((r->w[j] = malloc(r->out[j].n * sizeof(double))) == NULL ||
            (r->og_arr[j] = oc_slot_array(r, &r->out[j])) == NULL)
            return oc_fail(MXK_ERR_OUT_OF_MEMORY, "opcheck %s: out of memory", cfg->op);
        for (uint64_t k = 0; k < r->out[j].n; k++)
            r->w[j][k] = oc_draw(&rng, &w_spec, r->out[j].dtype);
        /* The kit's loss uses exactly what the operator gets as out_grad. */
        for (uint64_t k = 0; k < r->out[j].n; k++)
            r->w[j][k] = oc_dtype_round(r->out[j].dtype, r->w[j][k]);
        mxk_status st = oc_put(r->og_arr[j], &r->out[j], r->w[j]);
        if (st != MXK_OK)
            return oc_fail(st, "opcheck %s: %s", cfg->op, oc_lib_error(st));
    }
    /* Baseline forward: WRITE over NaN. */
    mxk_status st = oc_forward(r, NULL, r->base_out, NAN, NULL);
    for (uint32_t j = 0; st == MXK_OK && j < r->no; j++)
        st = oc_get(r->base_out[j], &r->out[j], r->base_outv[j], r->base_outraw[j]);
    for (uint32_t i = 0; st == MXK_OK && i < r->na; i++)
        st = oc_get(r->aux_arr[i], &r->aux[i], r->aux_fwd[i], NULL);
    if (st != MXK_OK) {
        mxk_opcheck_result *res = &rep->results[1];
        oc_set_result(res, MXK_OPCHECK_FAIL, "forward failed: %s", oc_lib_error(st));
        return oc_fail(st, "opcheck %s: forward failed: %s", cfg->op, oc_lib_error(st));
    }
    /* Baseline backward: everything given, WRITE over NaN. */
    r->has_backward = 0;
    if (cfg->flags & MXK_OPCHECK_NO_BACKWARD) {
        snprintf(r->bwd_error, sizeof r->bwd_error,
                 "not differentiable (MXK_OPCHECK_NO_BACKWARD): backward not checked");
        return MXK_OK;
    }
    st = oc_backward(r, r->og_arr, r->in_arr, r->base_out, NAN, NULL);
    if (st == MXK_ERR_UNSUPPORTED) {
        snprintf(r->bwd_error, sizeof r->bwd_error, "the operator has no backward: %s",
                 oc_lib_error(st));
        return MXK_OK;
    }
    if (st == MXK_OK)
        st = oc_read_grads(r, r->base_grad, r->base_gradraw);
    if (st != MXK_OK) {
        snprintf(r->bwd_error, sizeof r->bwd_error, "backward failed: %s", oc_lib_error(st));
        rep->results[2].outcome = MXK_OPCHECK_FAIL;
        snprintf(rep->results[2].message, sizeof rep->results[2].message, "%s", r->bwd_error);
        return MXK_OK; /* the backward checks report it */
    }
    r->has_backward = 1;
    return MXK_OK;
}

mxk_status mxk_opcheck_run(const mxk_opcheck_config *cfg, mxk_opcheck_report *rep) {
    if (rep == NULL)
        return oc_fail(MXK_ERR_INVALID_ARGUMENT, "opcheck: report is NULL");
    memset(rep, 0, sizeof *rep);
    rep->num_results = MXK_OPCHECK_NUM_CHECKS;
    for (int k = 0; k < MXK_OPCHECK_NUM_CHECKS; k++) {
        rep->results[k].name = check_names[k];
        rep->results[k].outcome = MXK_OPCHECK_SKIP;
        snprintf(rep->results[k].message, sizeof rep->results[k].message, "not run");
    }
    mxk_status st = check_config(cfg);
    if (cfg && cfg->op)
        snprintf(rep->op, sizeof rep->op, "%s", cfg->op);
    if (st != MXK_OK) {
        oc_set_result(&rep->results[0], MXK_OPCHECK_FAIL, "%s", oc_error);
        return st;
    }
    oc_run *r = calloc(1, sizeof *r);
    if (r == NULL)
        return oc_fail(MXK_ERR_OUT_OF_MEMORY, "opcheck: out of memory");
    r->cfg = cfg;
    r->ctx = cfg->ctx;
    if (r->ctx.dev_type == 0)
        r->ctx.dev_type = MXK_DEV_CPU;
    r->seed = cfg->seed;
    r->is_train = !(cfg->flags & MXK_OPCHECK_INFERENCE);
    if (cfg->backend && cfg->backend[0]) {
        st = check_backend(cfg, r->ctx.dev_type);
        if (st == MXK_OK && (st = mxk_set_op_backend(cfg->op, cfg->backend)) != MXK_OK)
            oc_fail(st, "opcheck %s: %s", cfg->op, oc_lib_error(st));
    }
    if (st == MXK_OK) {
        st = mxk_op_instance_create(cfg->op, cfg->num_attrs, cfg->keys, cfg->vals, r->ctx,
                                    cfg->num_inputs, cfg->in_shapes, cfg->in_types, &r->inst);
        if (st != MXK_OK)
            oc_fail(st, "opcheck %s: %s", cfg->op, lib_detail(st, cfg->op));
    }
    if (cfg->backend && cfg->backend[0])
        mxk_set_op_backend(cfg->op, NULL);
    if (st != MXK_OK) {
        oc_set_result(&rep->results[0], MXK_OPCHECK_FAIL, "%s", oc_error);
        free(r);
        return st;
    }
    const char *be = mxk_op_instance_backend(r->inst);
    snprintf(rep->backend, sizeof rep->backend, "%s", be ? be : "");
    mxk_op_instance_counts(r->inst, &r->ni, &r->no, &r->nv, &r->na);
    if (r->ni != cfg->num_inputs) {
        st = oc_fail(MXK_ERR_INVALID_ARGUMENT,
                     "opcheck %s: %u input shapes given, the operator has %u arguments", cfg->op,
                     (unsigned)cfg->num_inputs, (unsigned)r->ni);
    } else if (r->ni > OC_MAX_SLOTS || r->no > OC_MAX_SLOTS || r->na > OC_MAX_SLOTS) {
        st = oc_fail(MXK_ERR_UNSUPPORTED, "opcheck %s: more than %d slots of one kind", cfg->op,
                     OC_MAX_SLOTS);
    } else if (cfg->num_ref_out > r->nv) {
        oc_set_result(&rep->results[0], MXK_OPCHECK_FAIL,
                      "%u visible outputs, the reference gives %u", (unsigned)r->nv,
                      (unsigned)cfg->num_ref_out);
    }
    if (st != MXK_OK) {
        oc_set_result(&rep->results[0], MXK_OPCHECK_FAIL, "%s", oc_error);
        oc_run_free(r);
        free(r);
        return st;
    }
    /* (a) shape and type inference. */
    char why[400] = "";
    int complete = oc_read_slots(r, 0, r->ni, r->in, why, sizeof why) &&
                   oc_read_slots(r, 1, r->no, r->out, why, sizeof why) &&
                   oc_read_slots(r, 2, r->na, r->aux, why, sizeof why);
    if (!complete) {
        oc_set_result(&rep->results[0], MXK_OPCHECK_FAIL, "%s", why);
        for (int k = 1; k < MXK_OPCHECK_NUM_CHECKS; k++)
            oc_set_result(&rep->results[k], MXK_OPCHECK_SKIP, "inference incomplete");
        oc_run_free(r);
        free(r);
        return MXK_OK;
    }
    if (rep->results[0].outcome != MXK_OPCHECK_FAIL)
        oc_check_shape_type(r, &rep->results[0]);
    uint8_t og[OC_MAX_SLOTS] = {0}, id[OC_MAX_SLOTS] = {0}, od[OC_MAX_SLOTS] = {0};
    mxk_op_instance_backward_dependency(r->inst, og, id, od);
    memcpy(r->need_og, og, sizeof og);
    memcpy(r->need_id, id, sizeof id);
    memcpy(r->need_od, od, sizeof od);
    int any_og = 0;
    for (uint32_t j = 0; j < r->nv; j++)
        any_og |= og[j];
    r->loss_op = (cfg->flags & MXK_OPCHECK_LOSS_OP) || !any_og;

    st = prepare(r, rep);
    if (st != MXK_OK) {
        for (int k = 2; k < MXK_OPCHECK_NUM_CHECKS; k++)
            oc_set_result(&rep->results[k], MXK_OPCHECK_SKIP, "not run: %s", oc_error);
        oc_run_free(r);
        free(r);
        /* A failing forward is a finding, not a bad request. */
        if (rep->results[1].outcome == MXK_OPCHECK_FAIL)
            return MXK_OK;
        return st;
    }
    oc_check_forward(r, &rep->results[1]);
    if (rep->results[2].outcome == MXK_OPCHECK_FAIL) {
        /* The baseline backward failed: report it on every backward check. */
        for (int k = 4; k <= 5; k++)
            oc_set_result(&rep->results[k], MXK_OPCHECK_SKIP, "backward failed");
    } else {
        oc_check_backward(r, &rep->results[2]);
        oc_check_backward_req(r, &rep->results[4]);
        oc_check_dependency(r, &rep->results[5]);
    }
    oc_check_forward_req(r, &rep->results[3]);
    oc_check_determinism(r, &rep->results[6]);
    oc_run_free(r);
    free(r);
    return MXK_OK;
}
