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
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_opcheck.h"
#include "mxk_sdk_half.h"

/** Most arguments, outputs or aux states the kit handles. */
#define OC_MAX_SLOTS 64

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

/* ------------------------------------------------------------------------- */
/* Random numbers (the kit's own: splitmix64, independent of the library's)  */
/* ------------------------------------------------------------------------- */

/** Next 64 random bits. */
static uint64_t rng_next(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/** Uniform double in [0, 1). */
static double rng_unit(uint64_t *s) {
    return (double)(rng_next(s) >> 11) * (1.0 / 9007199254740992.0);
}

/* ------------------------------------------------------------------------- */
/* Arrays: host float64 values <-> device arrays of any dtype                 */
/* ------------------------------------------------------------------------- */

/** Number of elements of a shape. */
static uint64_t shape_count(const mxk_shape *s) {
    uint64_t n = 1;
    for (int d = 0; d < s->ndim && d < MXK_MAX_NDIM; d++)
        n *= (uint64_t)(s->dims[d] > 0 ? s->dims[d] : 0);
    return s->ndim > 0 ? n : 0;
}

/** Formats a shape "(a,b)". */
static const char *shape_str(const mxk_shape *s, char *buf, size_t size) {
    size_t used = (size_t)snprintf(buf, size, "(");
    for (int d = 0; d < s->ndim && d < MXK_MAX_NDIM && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? "," : "",
                                 (long long)s->dims[d]);
    if (used < size)
        snprintf(buf + used, size - used, ")");
    return buf;
}

/** 1 for dtypes the kit converts. */
static int dtype_ok(int32_t t) {
    return t == MXK_FLOAT32 || t == MXK_FLOAT64 || t == MXK_FLOAT16 || t == MXK_UINT8 ||
           t == MXK_INT32 || t == MXK_INT8 || t == MXK_INT64;
}

/** 1 for floating-point dtypes. */
static int dtype_float(int32_t t) {
    return t == MXK_FLOAT32 || t == MXK_FLOAT64 || t == MXK_FLOAT16;
}

/** Value v as the dtype stores it (rounded / truncated), back in double. */
static double dtype_round(int32_t t, double v) {
    switch (t) {
    case MXK_FLOAT32:
        return (double)(float)v;
    case MXK_FLOAT16:
        return (double)mxk_sdk_f16_to_f32(mxk_sdk_f32_to_f16((float)v));
    case MXK_FLOAT64:
        return v;
    default:
        return floor(v);
    }
}

/** Converts n doubles into raw elements of dtype t. */
static void to_raw(int32_t t, const double *v, uint64_t n, void *raw) {
    for (uint64_t i = 0; i < n; i++) {
        double x = v[i];
        switch (t) {
        case MXK_FLOAT32:
            ((float *)raw)[i] = (float)x;
            break;
        case MXK_FLOAT64:
            ((double *)raw)[i] = x;
            break;
        case MXK_FLOAT16:
            ((uint16_t *)raw)[i] = mxk_sdk_f32_to_f16((float)x);
            break;
        case MXK_UINT8:
            ((uint8_t *)raw)[i] = (uint8_t)(x < 0 ? 0 : x > 255 ? 255 : x);
            break;
        case MXK_INT8:
            ((int8_t *)raw)[i] = (int8_t)(x < -128 ? -128 : x > 127 ? 127 : x);
            break;
        case MXK_INT32:
            ((int32_t *)raw)[i] = (int32_t)(x < -2147483648.0  ? -2147483648.0
                                            : x > 2147483647.0 ? 2147483647.0
                                                               : x);
            break;
        case MXK_INT64:
            ((int64_t *)raw)[i] = (int64_t)(fabs(x) < 9.2e18 ? x : 0);
            break;
        default:
            break;
        }
    }
}

/** Converts n raw elements of dtype t into doubles. */
static void from_raw(int32_t t, const void *raw, uint64_t n, double *v) {
    for (uint64_t i = 0; i < n; i++) {
        switch (t) {
        case MXK_FLOAT32:
            v[i] = ((const float *)raw)[i];
            break;
        case MXK_FLOAT64:
            v[i] = ((const double *)raw)[i];
            break;
        case MXK_FLOAT16:
            v[i] = mxk_sdk_f16_to_f32(((const uint16_t *)raw)[i]);
            break;
        case MXK_UINT8:
            v[i] = ((const uint8_t *)raw)[i];
            break;
        case MXK_INT8:
            v[i] = ((const int8_t *)raw)[i];
            break;
        case MXK_INT32:
            v[i] = ((const int32_t *)raw)[i];
            break;
        case MXK_INT64:
            v[i] = (double)((const int64_t *)raw)[i];
            break;
        default:
            v[i] = NAN;
        }
    }
}

/* ------------------------------------------------------------------------- */
/* State of one run                                                          */
/* ------------------------------------------------------------------------- */

/** One tensor slot: shape, dtype, element count. */
typedef struct oc_slot {
    mxk_shape shape;
    int32_t dtype;
    uint64_t n;
    size_t bytes;
    const char *name;
} oc_slot;

/** Everything a run keeps. */
typedef struct oc_run {
    const mxk_opcheck_config *cfg;
    mxk_context ctx;
    mxk_op_instance *inst;
    uint32_t ni, no, nv, na;
    oc_slot in[OC_MAX_SLOTS], out[OC_MAX_SLOTS], aux[OC_MAX_SLOTS];
    double *in_vals[OC_MAX_SLOTS];  /**< the inputs, as the operator sees them */
    double *aux_vals[OC_MAX_SLOTS]; /**< aux at the start of every forward */
    double *aux_fwd[OC_MAX_SLOTS];  /**< aux after the baseline forward (start of backward) */
    double *w[OC_MAX_SLOTS];        /**< projections of the visible outputs = out_grads */
    mxk_ndarray *in_arr[OC_MAX_SLOTS], *aux_arr[OC_MAX_SLOTS];
    mxk_ndarray *base_out[OC_MAX_SLOTS]; /**< baseline forward outputs (out_data) */
    mxk_ndarray *og_arr[OC_MAX_SLOTS];   /**< out_grads (w) */
    mxk_ndarray *tmp_out[OC_MAX_SLOTS];  /**< outputs of other forwards */
    mxk_ndarray *grad_arr[OC_MAX_SLOTS]; /**< in_grads of backward runs */
    double *base_outv[OC_MAX_SLOTS];     /**< baseline outputs, float64 */
    void *base_outraw[OC_MAX_SLOTS];
    double *base_grad[OC_MAX_SLOTS]; /**< baseline gradients (NULL: no gradient) */
    void *base_gradraw[OC_MAX_SLOTS];
    uint8_t need_og[OC_MAX_SLOTS], need_id[OC_MAX_SLOTS], need_od[OC_MAX_SLOTS];
    uint8_t grad_in[OC_MAX_SLOTS]; /**< gradient requested / checked for input i */
    int is_train;
    int has_backward; /**< the kernel has a backward and it ran */
    int loss_op;      /**< backward ignores out_grad */
    char bwd_error[512];
    uint64_t seed;
} oc_run;

/** Sets a result's outcome and message. */
static void set_result(mxk_opcheck_result *r, int outcome, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_result(mxk_opcheck_result *r, int outcome, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    r->outcome = outcome;
    vsnprintf(r->message, sizeof r->message, fmt, ap);
    va_end(ap);
}

/** The library's last error, or a fallback naming the status. */
static const char *lib_error(mxk_status st) {
    const char *m = mxk_get_last_error();
    return m && m[0] ? m : mxk_status_name(st);
}

/** Creates an array of a slot on the run's device (NULL on failure). */
static mxk_ndarray *slot_array(oc_run *r, const oc_slot *s) {
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_create(&s->shape, s->dtype, r->ctx, &a) != MXK_OK)
        return NULL;
    return a;
}

/** Uploads n doubles into an array of dtype t. */
static mxk_status put(mxk_ndarray *a, const oc_slot *s, const double *v) {
    void *raw = malloc(s->bytes ? s->bytes : 1);
    if (raw == NULL)
        return MXK_ERR_OUT_OF_MEMORY;
    to_raw(s->dtype, v, s->n, raw);
    mxk_status st = mxk_ndarray_copy_from_host(a, raw, s->bytes);
    free(raw);
    return st;
}

/** Downloads an array: raw bytes into raw (may be NULL) and doubles into v (may be NULL). */
static mxk_status get(mxk_ndarray *a, const oc_slot *s, double *v, void *raw) {
    void *buf = raw ? raw : malloc(s->bytes ? s->bytes : 1);
    if (buf == NULL)
        return MXK_ERR_OUT_OF_MEMORY;
    mxk_status st = mxk_ndarray_copy_to_host(a, buf, s->bytes);
    if (st == MXK_OK && v)
        from_raw(s->dtype, buf, s->n, v);
    if (buf != raw)
        free(buf);
    return st;
}

/** Uploads the run's inputs into the instance's input arrays. */
static mxk_status restore_inputs(oc_run *r) {
    for (uint32_t i = 0; i < r->ni; i++) {
        mxk_status st = put(r->in_arr[i], &r->in[i], r->in_vals[i]);
        if (st != MXK_OK)
            return st;
    }
    return MXK_OK;
}

/** Uploads aux values (vals: aux_vals or aux_fwd). */
static mxk_status restore_aux(oc_run *r, double *const *vals) {
    for (uint32_t i = 0; i < r->na; i++) {
        mxk_status st = put(r->aux_arr[i], &r->aux[i], vals[i]);
        if (st != MXK_OK)
            return st;
    }
    return MXK_OK;
}

/** 1 when output j of `outs` is an in-place view of one of `ins` (the in-place run). */
static int aliased_out(const oc_run *r, mxk_ndarray *const *ins, mxk_ndarray *const *outs,
                       uint32_t j) {
    return ins != NULL && ins != r->in_arr && outs != r->tmp_out && outs != r->base_out &&
           outs[j] != r->tmp_out[j];
}

/**
 * One forward from the run's inputs and initial aux after mxk_random_seed: inputs
 * `ins` (NULL: the instance's), outputs `outs` pre-filled with `fill` (except an
 * output that is one of the inputs: in place), requests req (NULL: WRITE). Waits.
 */
static mxk_status forward(oc_run *r, mxk_ndarray *const *ins, mxk_ndarray *const *outs, double fill,
                          const mxk_op_req *req) {
    mxk_status st = restore_inputs(r);
    if (st == MXK_OK)
        st = restore_aux(r, r->aux_vals);
    for (uint32_t j = 0; st == MXK_OK && j < r->no; j++) {
        if (!aliased_out(r, ins, outs, j))
            st = mxk_ndarray_fill(outs[j], fill);
    }
    if (st == MXK_OK)
        st = mxk_random_seed(r->seed);
    if (st == MXK_OK)
        st = mxk_op_instance_forward(r->inst, r->is_train, ins ? ins : r->in_arr, outs, req,
                                     r->na ? r->aux_arr : NULL);
    if (st == MXK_OK)
        st = mxk_wait_all();
    return st;
}

/**
 * One backward with in_grads pre-filled with `fill` and requests req (NULL: WRITE
 * for inputs with a gradient). og / id / od: the out_grads, in_data, out_data to
 * pass (entries may be NULL). Inputs without a gradient get NULL in_grads. Waits.
 */
static mxk_status backward(oc_run *r, mxk_ndarray *const *og, mxk_ndarray *const *id,
                           mxk_ndarray *const *od, double fill, const mxk_op_req *req) {
    mxk_status st = restore_inputs(r);
    if (st == MXK_OK)
        st = restore_aux(r, r->aux_fwd);
    mxk_ndarray *grads[OC_MAX_SLOTS];
    mxk_op_req reqs[OC_MAX_SLOTS];
    for (uint32_t i = 0; st == MXK_OK && i < r->ni; i++) {
        grads[i] = r->grad_in[i] ? r->grad_arr[i] : NULL;
        reqs[i] = !r->grad_in[i] ? MXK_REQ_NULL : req ? req[i] : MXK_REQ_WRITE;
        if (grads[i])
            st = mxk_ndarray_fill(grads[i], fill);
    }
    if (st == MXK_OK)
        st = mxk_random_seed(r->seed);
    if (st == MXK_OK)
        st = mxk_op_instance_backward(r->inst, og, id, od, grads, reqs, r->na ? r->aux_arr : NULL);
    if (st == MXK_OK)
        st = mxk_wait_all();
    return st;
}

/** Reads the gradients of the last backward (inputs with a gradient) into v / raw. */
static mxk_status read_grads(oc_run *r, double **v, void **raw) {
    for (uint32_t i = 0; i < r->ni; i++) {
        if (!r->grad_in[i])
            continue;
        mxk_status st = get(r->grad_arr[i], &r->in[i], v ? v[i] : NULL, raw ? raw[i] : NULL);
        if (st != MXK_OK)
            return st;
    }
    return MXK_OK;
}

/** Running comparison of got vs expected with tolerances. */
typedef struct oc_cmp {
    double rtol, atol;
    double max_abs, max_rel;
    uint64_t bad;    /**< elements out of tolerance */
    char first[320]; /**< description of the first bad element */
} oc_cmp;

/** Compares n values; `what` names the tensor for the first failure. */
static void cmp_values(oc_cmp *c, const char *what, const double *got, const double *exp,
                       uint64_t n) {
    for (uint64_t k = 0; k < n; k++) {
        double g = got[k], e = exp[k];
        double d = fabs(g - e);
        int ok;
        if (isnan(g) || isnan(e)) {
            ok = isnan(g) && isnan(e);
            d = ok ? 0.0 : INFINITY;
        } else if (isinf(g) || isinf(e)) {
            ok = g == e;
            d = ok ? 0.0 : INFINITY;
        } else {
            ok = d <= c->atol + c->rtol * fmax(fabs(e), fabs(g));
        }
        if (d > c->max_abs)
            c->max_abs = d;
        if (e != 0.0 && d / fabs(e) > c->max_rel)
            c->max_rel = d / fabs(e);
        if (!ok && c->bad++ == 0)
            snprintf(c->first, sizeof c->first, "%s[%llu]: got %.9g, expected %.9g", what,
                     (unsigned long long)k, g, e);
    }
}

/** Copies a comparison's statistics into a result. */
static void cmp_to_result(const oc_cmp *c, mxk_opcheck_result *res) {
    if (c->max_abs > res->max_abs_err)
        res->max_abs_err = c->max_abs;
    if (c->max_rel > res->max_rel_err)
        res->max_rel_err = c->max_rel;
}

/* ------------------------------------------------------------------------- */
/* Set-up                                                                    */
/* ------------------------------------------------------------------------- */

/** The spec of input i (a zero spec when none given). */
static mxk_opcheck_input_spec input_spec(const mxk_opcheck_config *cfg, uint32_t i) {
    mxk_opcheck_input_spec s;
    memset(&s, 0, sizeof s);
    if (cfg->inputs)
        s = cfg->inputs[i];
    if (s.low == 0.0 && s.high == 0.0) {
        s.low = cfg->low;
        s.high = cfg->high;
    }
    return s;
}

/** Draws one value of input spec s for dtype t. */
static double draw(uint64_t *rng, const mxk_opcheck_input_spec *s, int32_t t) {
    double v = 0.0;
    for (int tries = 0; tries < 1000; tries++) {
        v = s->low + (s->high - s->low) * rng_unit(rng);
        if (s->integer || !dtype_float(t)) {
            v = floor(v);
            if (v >= s->high && s->high > s->low)
                v = ceil(s->high) - 1.0;
            break;
        }
        v = dtype_round(t, v);
        if (s->kink_margin <= 0.0)
            break;
        double k = 0.5 * round(v * 2.0);
        if (fabs(v - k) >= s->kink_margin)
            break;
    }
    return v;
}

/** Frees everything a run holds. */
static void run_free(oc_run *r) {
    for (uint32_t i = 0; i < OC_MAX_SLOTS; i++) {
        free(r->in_vals[i]);
        free(r->aux_vals[i]);
        free(r->aux_fwd[i]);
        free(r->w[i]);
        free(r->base_outv[i]);
        free(r->base_outraw[i]);
        free(r->base_grad[i]);
        free(r->base_gradraw[i]);
        mxk_ndarray_free(r->in_arr[i]);
        mxk_ndarray_free(r->aux_arr[i]);
        mxk_ndarray_free(r->base_out[i]);
        mxk_ndarray_free(r->og_arr[i]);
        mxk_ndarray_free(r->tmp_out[i]);
        mxk_ndarray_free(r->grad_arr[i]);
    }
    mxk_op_instance_free(r->inst);
    memset(r, 0, sizeof *r);
}

/** Reads one slot kind of the instance into slots[]; returns 0 when a shape or dtype is unknown. */
static int read_slots(oc_run *r, int32_t kind, uint32_t n, oc_slot *slots, char *why,
                      size_t why_size) {
    int complete = 1;
    static const char *const kinds[] = {"input", "output", "aux state"};
    for (uint32_t i = 0; i < n; i++) {
        oc_slot *s = &slots[i];
        mxk_op_instance_shape(r->inst, kind, i, &s->shape, &s->dtype);
        s->name = mxk_op_instance_name(r->inst, kind, i);
        if (s->name == NULL)
            s->name = "?";
        s->n = shape_count(&s->shape);
        size_t es = mxk_dtype_size(s->dtype);
        s->bytes = (size_t)s->n * es;
        char sb[96];
        if (complete && s->n == 0) {
            snprintf(why, why_size, "%s '%s' has an unknown shape %s after inference", kinds[kind],
                     s->name, shape_str(&s->shape, sb, sizeof sb));
            complete = 0;
        } else if (complete && (s->dtype < 0 || es == 0)) {
            snprintf(why, why_size, "%s '%s' has an unknown dtype (%d) after inference",
                     kinds[kind], s->name, (int)s->dtype);
            complete = 0;
        } else if (complete && !dtype_ok(s->dtype)) {
            snprintf(why, why_size, "%s '%s' has dtype %s, which the kit cannot convert",
                     kinds[kind], s->name, mxk_dtype_name(s->dtype));
            complete = 0;
        }
    }
    return complete;
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
/* The checks                                                                */
/* ------------------------------------------------------------------------- */

/** "shape_type": completeness, the references, and re-inference from the inferred inputs. */
static void check_shape_type(oc_run *r, mxk_opcheck_result *res) {
    const mxk_opcheck_config *cfg = r->cfg;
    char sb[96], sb2[96];
    for (uint32_t j = 0; j < cfg->num_ref_out; j++) {
        if (j >= r->nv) {
            set_result(res, MXK_OPCHECK_FAIL, "%u visible outputs, the reference gives %u",
                       (unsigned)r->nv, (unsigned)cfg->num_ref_out);
            return;
        }
        const mxk_shape *e = cfg->ref_out_shapes ? &cfg->ref_out_shapes[j] : NULL;
        const mxk_shape *g = &r->out[j].shape;
        if (e && (e->ndim != g->ndim ||
                  memcmp(e->dims, g->dims, sizeof(int64_t) * (size_t)g->ndim) != 0)) {
            set_result(res, MXK_OPCHECK_FAIL, "output '%s': shape %s, expected %s", r->out[j].name,
                       shape_str(g, sb, sizeof sb), shape_str(e, sb2, sizeof sb2));
            return;
        }
        if (cfg->ref_out_types && cfg->ref_out_types[j] != r->out[j].dtype) {
            set_result(res, MXK_OPCHECK_FAIL, "output '%s': dtype %s, expected %s", r->out[j].name,
                       mxk_dtype_name(r->out[j].dtype), mxk_dtype_name(cfg->ref_out_types[j]));
            return;
        }
    }
    /* Inference again from every inferred input shape and dtype: the same outputs. */
    mxk_shape shapes[OC_MAX_SLOTS];
    int32_t types[OC_MAX_SLOTS];
    for (uint32_t i = 0; i < r->ni; i++) {
        shapes[i] = r->in[i].shape;
        types[i] = r->in[i].dtype;
    }
    mxk_op_instance *again = NULL;
    mxk_status st = mxk_op_instance_create(cfg->op, cfg->num_attrs, cfg->keys, cfg->vals, r->ctx,
                                           r->ni, shapes, types, &again);
    if (st != MXK_OK) {
        set_result(res, MXK_OPCHECK_FAIL,
                   "creating the instance again with the inferred input shapes failed: %s",
                   lib_error(st));
        return;
    }
    for (uint32_t j = 0; j < r->no; j++) {
        mxk_shape s;
        int32_t t = -1;
        mxk_op_instance_shape(again, 1, j, &s, &t);
        if (s.ndim != r->out[j].shape.ndim ||
            memcmp(s.dims, r->out[j].shape.dims, sizeof(int64_t) * (size_t)s.ndim) != 0 ||
            t != r->out[j].dtype) {
            set_result(res, MXK_OPCHECK_FAIL,
                       "output '%s': %s %s from the given shapes, %s %s from the inferred ones",
                       r->out[j].name, shape_str(&r->out[j].shape, sb, sizeof sb),
                       mxk_dtype_name(r->out[j].dtype), shape_str(&s, sb2, sizeof sb2),
                       mxk_dtype_name(t));
            mxk_op_instance_free(again);
            return;
        }
    }
    mxk_op_instance_free(again);
    char outs[200] = "";
    size_t used = 0;
    for (uint32_t j = 0; j < r->nv && used < sizeof outs; j++)
        used += (size_t)snprintf(outs + used, sizeof outs - used, "%s%s %s", j ? ", " : "",
                                 shape_str(&r->out[j].shape, sb, sizeof sb),
                                 mxk_dtype_name(r->out[j].dtype));
    set_result(res, MXK_OPCHECK_PASS, "complete: %u inputs, %u outputs (%u visible), %u aux; %s%s",
               (unsigned)r->ni, (unsigned)r->no, (unsigned)r->nv, (unsigned)r->na, outs,
               cfg->num_ref_out ? "; matches the reference" : "");
}

/** Fills reference args for the callbacks (out: buffers or NULL). */
static void ref_args(oc_run *r, mxk_opcheck_ref_args *a, mxk_shape *in_s, mxk_shape *aux_s,
                     mxk_shape *out_s, double *const *out) {
    memset(a, 0, sizeof *a);
    for (uint32_t i = 0; i < r->ni; i++)
        in_s[i] = r->in[i].shape;
    for (uint32_t i = 0; i < r->na; i++)
        aux_s[i] = r->aux[i].shape;
    for (uint32_t j = 0; j < r->nv; j++)
        out_s[j] = r->out[j].shape;
    a->config = r->cfg;
    a->num_in = r->ni;
    a->in_shapes = in_s;
    a->in = (const double *const *)r->in_vals;
    a->num_aux = r->na;
    a->aux_shapes = aux_s;
    a->aux = (const double *const *)r->aux_vals;
    a->num_out = r->nv;
    a->out_shapes = out_s;
    a->out = out;
}

/** "forward": visible outputs against the float64 reference. */
static void check_forward(oc_run *r, mxk_opcheck_result *res) {
    const mxk_opcheck_config *cfg = r->cfg;
    if (cfg->forward_ref == NULL) {
        set_result(res, MXK_OPCHECK_SKIP, "no reference forward given");
        return;
    }
    double *out[OC_MAX_SLOTS] = {0};
    int oom = 0;
    for (uint32_t j = 0; j < r->nv; j++)
        oom |= (out[j] = calloc(r->out[j].n, sizeof(double))) == NULL;
    if (!oom) {
        mxk_shape in_s[OC_MAX_SLOTS], aux_s[OC_MAX_SLOTS], out_s[OC_MAX_SLOTS];
        mxk_opcheck_ref_args a;
        ref_args(r, &a, in_s, aux_s, out_s, out);
        if (cfg->forward_ref(cfg->user, &a) != 0) {
            set_result(res, MXK_OPCHECK_FAIL, "the reference function failed");
        } else {
            oc_cmp c = {.rtol = cfg->fwd_rtol, .atol = cfg->fwd_atol};
            for (uint32_t j = 0; j < r->nv; j++) {
                char what[160];
                snprintf(what, sizeof what, "output '%s'", r->out[j].name);
                cmp_values(&c, what, r->base_outv[j], out[j], r->out[j].n);
            }
            cmp_to_result(&c, res);
            if (c.bad)
                set_result(res, MXK_OPCHECK_FAIL, "%llu elements differ from the reference; %s",
                           (unsigned long long)c.bad, c.first);
            else
                set_result(res, MXK_OPCHECK_PASS, "matches the float64 reference (rtol %g atol %g)",
                           cfg->fwd_rtol, cfg->fwd_atol);
        }
    } else {
        set_result(res, MXK_OPCHECK_FAIL, "out of memory");
    }
    for (uint32_t j = 0; j < r->nv; j++)
        free(out[j]);
}

/** The projected loss sum_k <w_k, y_k> of the visible outputs in tmp_out. */
static mxk_status projected_loss(oc_run *r, double *loss, double *buf) {
    double l = 0.0;
    for (uint32_t j = 0; j < r->nv; j++) {
        mxk_status st = get(r->tmp_out[j], &r->out[j], buf, NULL);
        if (st != MXK_OK)
            return st;
        for (uint64_t k = 0; k < r->out[j].n; k++)
            l += r->w[j][k] * buf[k];
    }
    *loss = l;
    return MXK_OK;
}

/** The gradient of the caller's implicit loss by float64 central differences. */
static int loss_gradient(oc_run *r, double **num) {
    const mxk_opcheck_config *cfg = r->cfg;
    mxk_shape in_s[OC_MAX_SLOTS], aux_s[OC_MAX_SLOTS], out_s[OC_MAX_SLOTS];
    mxk_opcheck_ref_args a;
    ref_args(r, &a, in_s, aux_s, out_s, NULL);
    for (uint32_t i = 0; i < r->ni; i++) {
        if (!r->grad_in[i])
            continue;
        for (uint64_t k = 0; k < r->in[i].n; k++) {
            double x = r->in_vals[i][k], h = 1e-6 * fmax(1.0, fabs(x)), lp = 0, lm = 0;
            r->in_vals[i][k] = x + h;
            int bad = cfg->loss_fn(cfg->user, &a, &lp);
            r->in_vals[i][k] = x - h;
            bad |= cfg->loss_fn(cfg->user, &a, &lm);
            r->in_vals[i][k] = x;
            if (bad)
                return -1;
            num[i][k] = (lp - lm) / (2 * h);
        }
    }
    return 0;
}

/** "backward": against finite differences (or the implicit loss, or consistency). */
static void check_backward(oc_run *r, mxk_opcheck_result *res) {
    const mxk_opcheck_config *cfg = r->cfg;
    if (!r->has_backward) {
        set_result(res, MXK_OPCHECK_SKIP, "%s", r->bwd_error);
        return;
    }
    uint32_t ngrad = 0;
    for (uint32_t i = 0; i < r->ni; i++)
        ngrad += r->grad_in[i];
    if (ngrad == 0) {
        set_result(res, MXK_OPCHECK_SKIP, "no input with a gradient to check");
        return;
    }
    /* Gradients must be finite. */
    for (uint32_t i = 0; i < r->ni; i++)
        for (uint64_t k = 0; r->grad_in[i] && k < r->in[i].n; k++)
            if (!isfinite(r->base_grad[i][k])) {
                set_result(res, MXK_OPCHECK_FAIL, "gradient of '%s'[%llu] is %g", r->in[i].name,
                           (unsigned long long)k, r->base_grad[i][k]);
                return;
            }
    double *num[OC_MAX_SLOTS] = {0};
    double *buf = NULL;
    uint64_t maxn = 1;
    for (uint32_t j = 0; j < r->nv; j++)
        maxn = r->out[j].n > maxn ? r->out[j].n : maxn;
    int oom = (buf = malloc(maxn * sizeof(double))) == NULL;
    for (uint32_t i = 0; i < r->ni; i++)
        if (r->grad_in[i])
            oom |= (num[i] = calloc(r->in[i].n, sizeof(double))) == NULL;
    if (oom) {
        set_result(res, MXK_OPCHECK_FAIL, "out of memory");
        goto done;
    }
    const char *how;
    uint64_t kinks = 0;
    if (r->loss_op && cfg->loss_fn == NULL) {
        /* Consistency only: out_grad must not matter, results are finite (checked). */
        mxk_ndarray *og2[OC_MAX_SLOTS] = {0};
        mxk_status st = MXK_OK;
        for (uint32_t j = 0; j < r->nv && st == MXK_OK; j++) {
            og2[j] = slot_array(r, &r->out[j]);
            st = og2[j] ? mxk_ndarray_fill(og2[j], 3.0) : MXK_ERR_OUT_OF_MEMORY;
        }
        if (st == MXK_OK)
            st = backward(r, og2, r->in_arr, r->base_out, NAN, NULL);
        if (st == MXK_OK)
            st = read_grads(r, num, NULL);
        for (uint32_t j = 0; j < r->nv; j++)
            mxk_ndarray_free(og2[j]);
        if (st != MXK_OK) {
            set_result(res, MXK_OPCHECK_FAIL, "backward failed: %s", lib_error(st));
            goto done;
        }
        oc_cmp c = {.rtol = 0, .atol = 0};
        for (uint32_t i = 0; i < r->ni; i++)
            if (r->grad_in[i])
                cmp_values(&c, r->in[i].name, num[i], r->base_grad[i], r->in[i].n);
        cmp_to_result(&c, res);
        if (c.bad)
            set_result(res, MXK_OPCHECK_FAIL,
                       "loss operator: the gradient changes with out_grad, which it does not "
                       "declare; %s",
                       c.first);
        else
            set_result(res, MXK_OPCHECK_PASS,
                       "loss operator without an implicit loss given: checked for consistency "
                       "only (finite, independent of out_grad)");
        goto done;
    }
    if (r->loss_op) {
        if (loss_gradient(r, num) != 0) {
            set_result(res, MXK_OPCHECK_FAIL, "the implicit loss function failed");
            goto done;
        }
        how = "the gradient of the implicit loss (float64 central differences)";
    } else {
        /* L0: the loss at the inputs themselves, to spot kinks (one-sided differences
         * that disagree: max, relu, abs near a tie or zero); such elements are skipped. */
        double l0 = 0.0;
        for (uint32_t j = 0; j < r->nv; j++)
            for (uint64_t k = 0; k < r->out[j].n; k++)
                l0 += r->w[j][k] * r->base_outv[j][k];
        for (uint32_t i = 0; i < r->ni; i++) {
            if (!r->grad_in[i])
                continue;
            for (uint64_t k = 0; k < r->in[i].n; k++) {
                double x = r->in_vals[i][k], h = cfg->fd_step;
                double xp = dtype_round(r->in[i].dtype, x + h);
                double xm = dtype_round(r->in[i].dtype, x - h);
                double lp = 0, lm = 0;
                r->in_vals[i][k] = xp;
                mxk_status st = forward(r, NULL, r->tmp_out, NAN, NULL);
                if (st == MXK_OK)
                    st = projected_loss(r, &lp, buf);
                r->in_vals[i][k] = xm;
                if (st == MXK_OK)
                    st = forward(r, NULL, r->tmp_out, NAN, NULL);
                if (st == MXK_OK)
                    st = projected_loss(r, &lm, buf);
                r->in_vals[i][k] = x;
                if (st != MXK_OK) {
                    set_result(res, MXK_OPCHECK_FAIL, "forward failed: %s", lib_error(st));
                    goto done;
                }
                num[i][k] = (lp - lm) / (xp - xm);
                double dp = (lp - l0) / (xp - x), dm = (l0 - lm) / (x - xm);
                double tol = 2.0 * (cfg->grad_atol + cfg->grad_rtol * fmax(fabs(dp), fabs(dm)));
                if (xp != x && xm != x && fabs(dp - dm) > tol) {
                    num[i][k] = r->base_grad[i][k]; /* a kink: not comparable */
                    kinks++;
                }
            }
        }
        how = "float64 central differences of a random projection of the outputs";
    }
    oc_cmp c = {.rtol = cfg->grad_rtol, .atol = cfg->grad_atol};
    for (uint32_t i = 0; i < r->ni; i++) {
        if (!r->grad_in[i])
            continue;
        char what[160];
        snprintf(what, sizeof what, "gradient of '%s'", r->in[i].name);
        cmp_values(&c, what, r->base_grad[i], num[i], r->in[i].n);
    }
    cmp_to_result(&c, res);
    if (c.bad)
        set_result(res, MXK_OPCHECK_FAIL, "%llu elements differ from %s; %s",
                   (unsigned long long)c.bad, how, c.first);
    else
        set_result(res, MXK_OPCHECK_PASS, "matches %s (rtol %g atol %g)", how, cfg->grad_rtol,
                   cfg->grad_atol);
    if (kinks) {
        size_t len = strlen(res->message);
        if (len < sizeof res->message)
            snprintf(res->message + len, sizeof res->message - len,
                     "; %llu element%s at a kink (one-sided differences disagree) not compared",
                     (unsigned long long)kinks, kinks == 1 ? "" : "s");
    }
done:
    free(buf);
    for (uint32_t i = 0; i < r->ni; i++)
        free(num[i]);
}

/** "forward_req": WRITE over 5 and INPLACE for the listed pairs equal the baseline. */
static void check_forward_req(oc_run *r, mxk_opcheck_result *res) {
    const mxk_opcheck_config *cfg = r->cfg;
    double *v = NULL;
    uint64_t maxn = 1;
    for (uint32_t j = 0; j < r->no; j++)
        maxn = r->out[j].n > maxn ? r->out[j].n : maxn;
    if ((v = malloc(maxn * sizeof(double))) == NULL) {
        set_result(res, MXK_OPCHECK_FAIL, "out of memory");
        return;
    }
    oc_cmp c = {.rtol = cfg->req_rtol, .atol = cfg->req_atol};
    mxk_status st = forward(r, NULL, r->tmp_out, 5.0, NULL);
    for (uint32_t j = 0; st == MXK_OK && j < r->no; j++) {
        st = get(r->tmp_out[j], &r->out[j], v, NULL);
        char what[160];
        snprintf(what, sizeof what, "WRITE over 5: output '%s'", r->out[j].name);
        if (st == MXK_OK)
            cmp_values(&c, what, v, r->base_outv[j], r->out[j].n);
    }
    if (st != MXK_OK) {
        set_result(res, MXK_OPCHECK_FAIL, "forward failed: %s", lib_error(st));
        free(v);
        return;
    }
    uint32_t tested = 0;
    for (uint32_t p = 0; p < cfg->num_inplace && !c.bad; p++) {
        uint32_t i = cfg->inplace[2 * p], j = cfg->inplace[2 * p + 1];
        if (i >= r->ni || j >= r->no || r->in[i].n != r->out[j].n ||
            r->in[i].dtype != r->out[j].dtype) {
            set_result(res, MXK_OPCHECK_FAIL,
                       "in-place pair (input %u, output %u) is invalid: no such slots or "
                       "different shapes/dtypes",
                       (unsigned)i, (unsigned)j);
            free(v);
            return;
        }
        /* The output is the input's memory, viewed in the output's shape (Reshape). */
        mxk_ndarray *a = slot_array(r, &r->in[i]), *view = NULL;
        mxk_ndarray *ins[OC_MAX_SLOTS], *outs[OC_MAX_SLOTS];
        memcpy(ins, r->in_arr, sizeof(mxk_ndarray *) * r->ni);
        memcpy(outs, r->tmp_out, sizeof(mxk_ndarray *) * r->no);
        st = a ? put(a, &r->in[i], r->in_vals[i]) : MXK_ERR_OUT_OF_MEMORY;
        if (st == MXK_OK)
            st = mxk_ndarray_reshape(a, &r->out[j].shape, &view);
        ins[i] = a;
        outs[j] = view;
        if (st == MXK_OK) {
            /* forward() uploads the instance's inputs; the aliased copy is `a`. */
            st = forward(r, ins, outs, NAN, NULL);
        }
        for (uint32_t k = 0; st == MXK_OK && k < r->no; k++) {
            st = get(outs[k], &r->out[k], v, NULL);
            char what[200];
            snprintf(what, sizeof what, "in place (input '%s' -> output '%s'): output '%s'",
                     r->in[i].name, r->out[j].name, r->out[k].name);
            if (st == MXK_OK)
                cmp_values(&c, what, v, r->base_outv[k], r->out[k].n);
        }
        mxk_ndarray_free(view);
        mxk_ndarray_free(a);
        if (st != MXK_OK) {
            set_result(res, MXK_OPCHECK_FAIL,
                       "in-place forward (input '%s' -> output '%s') "
                       "failed: %s",
                       r->in[i].name, r->out[j].name, lib_error(st));
            free(v);
            return;
        }
        tested++;
    }
    free(v);
    cmp_to_result(&c, res);
    if (c.bad)
        set_result(res, MXK_OPCHECK_FAIL, "%llu elements differ from the WRITE result; %s",
                   (unsigned long long)c.bad, c.first);
    else if (tested)
        set_result(res, MXK_OPCHECK_PASS,
                   "WRITE (over NaN and over 5) and %u in-place pair%s agree", (unsigned)tested,
                   tested == 1 ? "" : "s");
    else
        set_result(res, MXK_OPCHECK_PASS,
                   "WRITE over NaN and over 5 agree; in place not tested (no pairs given)");
}

/** Request name. */
static const char *req_name(int32_t q) {
    static const char *const names[] = {"NULL", "WRITE", "INPLACE", "ADD"};
    return q >= 0 && q <= 3 ? names[q] : "?";
}

/** Compares the gradients of the last backward run under requests req (pre-filled 5). */
static mxk_status cmp_req_grads(oc_run *r, const mxk_op_req *req, oc_cmp *c, double *v,
                                double *expect) {
    for (uint32_t i = 0; i < r->ni; i++) {
        if (!r->grad_in[i])
            continue;
        mxk_status st = get(r->grad_arr[i], &r->in[i], v, NULL);
        if (st != MXK_OK)
            return st;
        for (uint64_t k = 0; k < r->in[i].n; k++)
            expect[k] = req[i] == MXK_REQ_NULL ? 5.0
                        : req[i] == MXK_REQ_ADD
                            ? dtype_round(r->in[i].dtype, 5.0 + r->base_grad[i][k])
                            : r->base_grad[i][k];
        char what[200];
        snprintf(what, sizeof what, "%s (pre-filled 5): gradient of '%s'", req_name(req[i]),
                 r->in[i].name);
        if (req[i] == MXK_REQ_NULL) {
            oc_cmp exact = {.rtol = 0, .atol = 0};
            cmp_values(&exact, what, v, expect, r->in[i].n);
            if (exact.bad && c->bad++ == 0)
                memcpy(c->first, exact.first, sizeof c->first);
            c->max_abs = fmax(c->max_abs, exact.max_abs);
        } else {
            cmp_values(c, what, v, expect, r->in[i].n);
        }
    }
    return MXK_OK;
}

/** "backward_req": WRITE / ADD / NULL over 5 and a mixed list. */
static void check_backward_req(oc_run *r, mxk_opcheck_result *res) {
    const mxk_opcheck_config *cfg = r->cfg;
    if (!r->has_backward) {
        set_result(res, MXK_OPCHECK_SKIP, "%s", r->bwd_error);
        return;
    }
    uint32_t ngrad = 0;
    uint64_t maxn = 1;
    for (uint32_t i = 0; i < r->ni; i++) {
        ngrad += r->grad_in[i];
        maxn = r->in[i].n > maxn ? r->in[i].n : maxn;
    }
    if (ngrad == 0) {
        set_result(res, MXK_OPCHECK_SKIP, "no input with a gradient");
        return;
    }
    double *v = malloc(maxn * sizeof(double)), *e = malloc(maxn * sizeof(double));
    if (v == NULL || e == NULL) {
        free(v);
        free(e);
        set_result(res, MXK_OPCHECK_FAIL, "out of memory");
        return;
    }
    oc_cmp c = {.rtol = cfg->req_rtol, .atol = cfg->req_atol};
    mxk_op_req reqs[4][OC_MAX_SLOTS];
    int nruns = ngrad > 1 ? 4 : 3;
    for (uint32_t i = 0; i < r->ni; i++) {
        reqs[0][i] = MXK_REQ_WRITE;
        reqs[1][i] = MXK_REQ_ADD;
        reqs[2][i] = MXK_REQ_NULL;
        static const int32_t cycle[3] = {MXK_REQ_ADD, MXK_REQ_NULL, MXK_REQ_WRITE};
        reqs[3][i] = cycle[i % 3];
    }
    mxk_status st = MXK_OK;
    for (int run = 0; run < nruns && st == MXK_OK && !c.bad; run++) {
        st = backward(r, r->og_arr, r->in_arr, r->base_out, 5.0, reqs[run]);
        if (st == MXK_OK)
            st = cmp_req_grads(r, reqs[run], &c, v, e);
    }
    free(v);
    free(e);
    cmp_to_result(&c, res);
    if (st != MXK_OK)
        set_result(res, MXK_OPCHECK_FAIL, "backward failed: %s", lib_error(st));
    else if (c.bad)
        set_result(res, MXK_OPCHECK_FAIL, "%s", c.first);
    else
        set_result(res, MXK_OPCHECK_PASS,
                   "WRITE overwrites, ADD accumulates (5 + grad), NULL leaves 5%s",
                   nruns == 4 ? ", mixed requests too" : "");
}

/** Runs backward with the undeclared arrays replaced (poison: NaN arrays, else NULL). */
static mxk_status dep_run(oc_run *r, int poison, int only_kind, uint32_t only_index,
                          mxk_ndarray **nan_og, mxk_ndarray **nan_id, mxk_ndarray **nan_od,
                          void **raw) {
    mxk_ndarray *og[OC_MAX_SLOTS], *id[OC_MAX_SLOTS], *od[OC_MAX_SLOTS];
    for (uint32_t j = 0; j < r->nv; j++) {
        int repl = !r->need_og[j] && (only_kind < 0 || (only_kind == 0 && only_index == j));
        og[j] = repl ? (poison ? nan_og[j] : NULL) : r->og_arr[j];
    }
    for (uint32_t i = 0; i < r->ni; i++) {
        int repl = !r->need_id[i] && (only_kind < 0 || (only_kind == 1 && only_index == i));
        id[i] = repl ? (poison ? nan_id[i] : NULL) : r->in_arr[i];
    }
    for (uint32_t j = 0; j < r->no; j++) {
        int repl = !r->need_od[j] && (only_kind < 0 || (only_kind == 2 && only_index == j));
        od[j] = repl ? (poison ? nan_od[j] : NULL) : r->base_out[j];
    }
    mxk_status st = backward(r, og, id, od, NAN, NULL);
    if (st == MXK_OK)
        st = read_grads(r, NULL, raw);
    return st;
}

/** 1 when the raw gradients equal the baseline's bit for bit. */
static int same_grads(oc_run *r, void **raw) {
    for (uint32_t i = 0; i < r->ni; i++)
        if (r->grad_in[i] && memcmp(raw[i], r->base_gradraw[i], r->in[i].bytes) != 0)
            return 0;
    return 1;
}

/** "dependency": poisoned and omitted undeclared arrays change nothing. */
static void check_dependency(oc_run *r, mxk_opcheck_result *res) {
    if (!r->has_backward) {
        set_result(res, MXK_OPCHECK_SKIP, "%s", r->bwd_error);
        return;
    }
    uint32_t undeclared = 0;
    for (uint32_t j = 0; j < r->nv; j++)
        undeclared += !r->need_og[j];
    for (uint32_t i = 0; i < r->ni; i++)
        undeclared += !r->need_id[i];
    for (uint32_t j = 0; j < r->no; j++)
        undeclared += !r->need_od[j];
    if (undeclared == 0) {
        set_result(res, MXK_OPCHECK_PASS, "every array is declared: nothing to poison");
        return;
    }
    mxk_ndarray *nan_og[OC_MAX_SLOTS] = {0}, *nan_id[OC_MAX_SLOTS] = {0},
                *nan_od[OC_MAX_SLOTS] = {0};
    void *raw[OC_MAX_SLOTS] = {0};
    mxk_status st = MXK_OK;
    for (uint32_t j = 0; j < r->nv && st == MXK_OK; j++)
        if (!r->need_og[j])
            st = (nan_og[j] = slot_array(r, &r->out[j])) ? mxk_ndarray_fill(nan_og[j], NAN)
                                                         : MXK_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < r->ni && st == MXK_OK; i++)
        if (!r->need_id[i])
            st = (nan_id[i] = slot_array(r, &r->in[i])) ? mxk_ndarray_fill(nan_id[i], NAN)
                                                        : MXK_ERR_OUT_OF_MEMORY;
    for (uint32_t j = 0; j < r->no && st == MXK_OK; j++)
        if (!r->need_od[j])
            st = (nan_od[j] = slot_array(r, &r->out[j])) ? mxk_ndarray_fill(nan_od[j], NAN)
                                                         : MXK_ERR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < r->ni && st == MXK_OK; i++)
        if (r->grad_in[i] && (raw[i] = malloc(r->in[i].bytes ? r->in[i].bytes : 1)) == NULL)
            st = MXK_ERR_OUT_OF_MEMORY;
    int poisoned_ok = 1, omitted_ok = 1;
    char err[400] = "";
    if (st == MXK_OK) {
        mxk_status s1 = dep_run(r, 1, -1, 0, nan_og, nan_id, nan_od, raw);
        if (s1 != MXK_OK)
            snprintf(err, sizeof err, "with the undeclared arrays NaN-filled backward failed: %s",
                     lib_error(s1));
        poisoned_ok = s1 == MXK_OK && same_grads(r, raw);
        /* Omitted (data NULL) only after the poisoned run passed: a kernel that reads
         * an undeclared array would dereference NULL. */
        if (poisoned_ok) {
            mxk_status s2 = dep_run(r, 0, -1, 0, nan_og, nan_id, nan_od, raw);
            if (s2 != MXK_OK)
                snprintf(err, sizeof err,
                         "with the undeclared arrays omitted (NULL) backward failed: %s",
                         lib_error(s2));
            omitted_ok = s2 == MXK_OK && same_grads(r, raw);
        }
    }
    if (st != MXK_OK) {
        set_result(res, MXK_OPCHECK_FAIL, "set-up failed: %s", lib_error(st));
    } else if (poisoned_ok && omitted_ok) {
        set_result(res, MXK_OPCHECK_PASS,
                   "%u undeclared array%s NaN-filled and omitted: gradients unchanged",
                   (unsigned)undeclared, undeclared == 1 ? "" : "s");
    } else {
        /* Name the culprits: poison one undeclared array at a time. */
        char names[300] = "";
        size_t used = 0;
        static const char *const kinds[] = {"out_grad", "in_data", "out_data"};
        for (int kind = 0; kind < 3; kind++) {
            uint32_t n = kind == 0 ? r->nv : kind == 1 ? r->ni : r->no;
            for (uint32_t x = 0; x < n; x++) {
                const uint8_t *need = kind == 0 ? r->need_og : kind == 1 ? r->need_id : r->need_od;
                if (need[x])
                    continue;
                mxk_status s = dep_run(r, 1, kind, x, nan_og, nan_id, nan_od, raw);
                if ((s != MXK_OK || !same_grads(r, raw)) && used < sizeof names)
                    used += (size_t)snprintf(names + used, sizeof names - used, "%s%s '%s'",
                                             used ? ", " : "", kinds[kind],
                                             kind == 1 ? r->in[x].name : r->out[x].name);
            }
        }
        set_result(res, MXK_OPCHECK_FAIL,
                   "backward reads arrays it does not declare as dependencies: %s%s%s",
                   !poisoned_ok ? "NaN-filled undeclared arrays change the gradients" : "",
                   !poisoned_ok && !omitted_ok ? "; " : "",
                   !omitted_ok ? "omitting them (NULL) changes the gradients or fails" : "");
        size_t len = strlen(res->message);
        if (used && len < sizeof res->message)
            snprintf(res->message + len, sizeof res->message - len, " (culprit%s: %s)",
                     strchr(names, ',') ? "s" : "", names);
        len = strlen(res->message);
        if (err[0] && len < sizeof res->message)
            snprintf(res->message + len, sizeof res->message - len, "; %s", err);
    }
    for (uint32_t i = 0; i < OC_MAX_SLOTS; i++) {
        mxk_ndarray_free(nan_og[i]);
        mxk_ndarray_free(nan_id[i]);
        mxk_ndarray_free(nan_od[i]);
        free(raw[i]);
    }
}

/** One forward (+ backward) from a fresh seed; raw outputs and gradients into outs/grads. */
static mxk_status det_run(oc_run *r, mxk_ndarray **outs, void **out_raw, void **grad_raw) {
    mxk_status st = forward(r, NULL, outs, NAN, NULL);
    for (uint32_t j = 0; st == MXK_OK && j < r->no; j++)
        st = get(outs[j], &r->out[j], NULL, out_raw[j]);
    if (st == MXK_OK && r->has_backward) {
        st = backward(r, r->og_arr, r->in_arr, outs, NAN, NULL);
        if (st == MXK_OK)
            st = read_grads(r, NULL, grad_raw);
    }
    return st;
}

/** "determinism": two runs after the same seed are bit-identical. */
static void check_determinism(oc_run *r, mxk_opcheck_result *res) {
    if (r->cfg->flags & MXK_OPCHECK_NO_DETERMINISM) {
        set_result(res, MXK_OPCHECK_SKIP, "not requested (MXK_OPCHECK_NO_DETERMINISM)");
        return;
    }
    void *o[2][OC_MAX_SLOTS] = {{0}}, *g[2][OC_MAX_SLOTS] = {{0}};
    mxk_ndarray *outs[OC_MAX_SLOTS] = {0};
    mxk_status st = MXK_OK;
    for (int k = 0; k < 2; k++) {
        for (uint32_t j = 0; j < r->no && st == MXK_OK; j++)
            if ((o[k][j] = malloc(r->out[j].bytes ? r->out[j].bytes : 1)) == NULL)
                st = MXK_ERR_OUT_OF_MEMORY;
        for (uint32_t i = 0; i < r->ni && st == MXK_OK; i++)
            if (r->grad_in[i] && (g[k][i] = malloc(r->in[i].bytes ? r->in[i].bytes : 1)) == NULL)
                st = MXK_ERR_OUT_OF_MEMORY;
    }
    for (uint32_t j = 0; j < r->no && st == MXK_OK; j++)
        if ((outs[j] = slot_array(r, &r->out[j])) == NULL)
            st = MXK_ERR_OUT_OF_MEMORY;
    for (int k = 0; k < 2 && st == MXK_OK; k++)
        st = det_run(r, outs, o[k], g[k]);
    if (st != MXK_OK) {
        set_result(res, MXK_OPCHECK_FAIL, "run failed: %s", lib_error(st));
    } else {
        const char *diff = NULL;
        for (uint32_t j = 0; j < r->no && !diff; j++)
            if (memcmp(o[0][j], o[1][j], r->out[j].bytes) != 0)
                diff = r->out[j].name;
        for (uint32_t i = 0; i < r->ni && !diff && r->has_backward; i++)
            if (r->grad_in[i] && memcmp(g[0][i], g[1][i], r->in[i].bytes) != 0)
                diff = r->in[i].name;
        if (diff)
            set_result(res, MXK_OPCHECK_FAIL,
                       "two runs after mxk_random_seed(%llu) differ in %s '%s'",
                       (unsigned long long)r->seed,
                       r->has_backward ? "output or gradient of" : "output", diff);
        else
            set_result(res, MXK_OPCHECK_PASS,
                       "two runs after mxk_random_seed(%llu): outputs%s bit-identical",
                       (unsigned long long)r->seed, r->has_backward ? " and gradients" : "");
    }
    for (int k = 0; k < 2; k++)
        for (uint32_t j = 0; j < OC_MAX_SLOTS; j++) {
            free(o[k][j]);
            free(g[k][j]);
        }
    for (uint32_t j = 0; j < OC_MAX_SLOTS; j++)
        mxk_ndarray_free(outs[j]);
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
        mxk_opcheck_input_spec s = input_spec(cfg, i);
        /* Without specs, labels (MXNet's "label", "softmax_label") get no gradient. */
        size_t nl = strlen(r->in[i].name);
        if (cfg->inputs == NULL && nl >= 5 && strcmp(r->in[i].name + nl - 5, "label") == 0)
            s.no_grad = 1;
        r->grad_in[i] =
            !s.no_grad && dtype_float(r->in[i].dtype) && !(cfg->flags & MXK_OPCHECK_NO_BACKWARD);
        if ((r->in_vals[i] = malloc(r->in[i].n * sizeof(double))) == NULL ||
            (r->in_arr[i] = slot_array(r, &r->in[i])) == NULL)
            return oc_fail(MXK_ERR_OUT_OF_MEMORY, "opcheck %s: out of memory", cfg->op);
        for (uint64_t k = 0; k < r->in[i].n; k++)
            r->in_vals[i][k] = draw(&rng, &s, r->in[i].dtype);
        if (r->grad_in[i] && ((r->grad_arr[i] = slot_array(r, &r->in[i])) == NULL ||
                              (r->base_grad[i] = malloc(r->in[i].n * sizeof(double))) == NULL ||
                              (r->base_gradraw[i] = malloc(r->in[i].bytes)) == NULL))
            return oc_fail(MXK_ERR_OUT_OF_MEMORY, "opcheck %s: out of memory", cfg->op);
    }
    mxk_opcheck_input_spec aux_spec = {.low = cfg->aux_low, .high = cfg->aux_high};
    for (uint32_t i = 0; i < r->na; i++) {
        if ((r->aux_vals[i] = malloc(r->aux[i].n * sizeof(double))) == NULL ||
            (r->aux_fwd[i] = malloc(r->aux[i].n * sizeof(double))) == NULL ||
            (r->aux_arr[i] = slot_array(r, &r->aux[i])) == NULL)
            return oc_fail(MXK_ERR_OUT_OF_MEMORY, "opcheck %s: out of memory", cfg->op);
        for (uint64_t k = 0; k < r->aux[i].n; k++)
            r->aux_vals[i][k] = draw(&rng, &aux_spec, r->aux[i].dtype);
    }
    for (uint32_t j = 0; j < r->no; j++) {
        if ((r->base_out[j] = slot_array(r, &r->out[j])) == NULL ||
            (r->tmp_out[j] = slot_array(r, &r->out[j])) == NULL ||
            (r->base_outv[j] = malloc(r->out[j].n * sizeof(double))) == NULL ||
            (r->base_outraw[j] = malloc(r->out[j].bytes)) == NULL)
            return oc_fail(MXK_ERR_OUT_OF_MEMORY, "opcheck %s: out of memory", cfg->op);
    }
    mxk_opcheck_input_spec w_spec = {.low = -1.0, .high = 1.0};
    for (uint32_t j = 0; j < r->nv; j++) {
        if ((r->w[j] = malloc(r->out[j].n * sizeof(double))) == NULL ||
            (r->og_arr[j] = slot_array(r, &r->out[j])) == NULL)
            return oc_fail(MXK_ERR_OUT_OF_MEMORY, "opcheck %s: out of memory", cfg->op);
        for (uint64_t k = 0; k < r->out[j].n; k++)
            r->w[j][k] = draw(&rng, &w_spec, r->out[j].dtype);
        /* The kit's loss uses exactly what the operator gets as out_grad. */
        for (uint64_t k = 0; k < r->out[j].n; k++)
            r->w[j][k] = dtype_round(r->out[j].dtype, r->w[j][k]);
        mxk_status st = put(r->og_arr[j], &r->out[j], r->w[j]);
        if (st != MXK_OK)
            return oc_fail(st, "opcheck %s: %s", cfg->op, lib_error(st));
    }
    /* Baseline forward: WRITE over NaN. */
    mxk_status st = forward(r, NULL, r->base_out, NAN, NULL);
    for (uint32_t j = 0; st == MXK_OK && j < r->no; j++)
        st = get(r->base_out[j], &r->out[j], r->base_outv[j], r->base_outraw[j]);
    for (uint32_t i = 0; st == MXK_OK && i < r->na; i++)
        st = get(r->aux_arr[i], &r->aux[i], r->aux_fwd[i], NULL);
    if (st != MXK_OK) {
        mxk_opcheck_result *res = &rep->results[1];
        set_result(res, MXK_OPCHECK_FAIL, "forward failed: %s", lib_error(st));
        return oc_fail(st, "opcheck %s: forward failed: %s", cfg->op, lib_error(st));
    }
    /* Baseline backward: everything given, WRITE over NaN. */
    r->has_backward = 0;
    if (cfg->flags & MXK_OPCHECK_NO_BACKWARD) {
        snprintf(r->bwd_error, sizeof r->bwd_error,
                 "not differentiable (MXK_OPCHECK_NO_BACKWARD): backward not checked");
        return MXK_OK;
    }
    st = backward(r, r->og_arr, r->in_arr, r->base_out, NAN, NULL);
    if (st == MXK_ERR_UNSUPPORTED) {
        snprintf(r->bwd_error, sizeof r->bwd_error, "the operator has no backward: %s",
                 lib_error(st));
        return MXK_OK;
    }
    if (st == MXK_OK)
        st = read_grads(r, r->base_grad, r->base_gradraw);
    if (st != MXK_OK) {
        snprintf(r->bwd_error, sizeof r->bwd_error, "backward failed: %s", lib_error(st));
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
        set_result(&rep->results[0], MXK_OPCHECK_FAIL, "%s", oc_error);
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
            oc_fail(st, "opcheck %s: %s", cfg->op, lib_error(st));
    }
    if (st == MXK_OK) {
        st = mxk_op_instance_create(cfg->op, cfg->num_attrs, cfg->keys, cfg->vals, r->ctx,
                                    cfg->num_inputs, cfg->in_shapes, cfg->in_types, &r->inst);
        if (st != MXK_OK)
            oc_fail(st, "%s", lib_error(st));
    }
    if (cfg->backend && cfg->backend[0])
        mxk_set_op_backend(cfg->op, NULL);
    if (st != MXK_OK) {
        set_result(&rep->results[0], MXK_OPCHECK_FAIL, "%s", oc_error);
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
        set_result(&rep->results[0], MXK_OPCHECK_FAIL, "%u visible outputs, the reference gives %u",
                   (unsigned)r->nv, (unsigned)cfg->num_ref_out);
    }
    if (st != MXK_OK) {
        set_result(&rep->results[0], MXK_OPCHECK_FAIL, "%s", oc_error);
        run_free(r);
        free(r);
        return st;
    }
    /* (a) shape and type inference. */
    char why[400] = "";
    int complete = read_slots(r, 0, r->ni, r->in, why, sizeof why) &&
                   read_slots(r, 1, r->no, r->out, why, sizeof why) &&
                   read_slots(r, 2, r->na, r->aux, why, sizeof why);
    if (!complete) {
        set_result(&rep->results[0], MXK_OPCHECK_FAIL, "%s", why);
        for (int k = 1; k < MXK_OPCHECK_NUM_CHECKS; k++)
            set_result(&rep->results[k], MXK_OPCHECK_SKIP, "inference incomplete");
        run_free(r);
        free(r);
        return MXK_OK;
    }
    if (rep->results[0].outcome != MXK_OPCHECK_FAIL)
        check_shape_type(r, &rep->results[0]);
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
            set_result(&rep->results[k], MXK_OPCHECK_SKIP, "not run: %s", oc_error);
        run_free(r);
        free(r);
        /* A failing forward is a finding, not a bad request. */
        if (rep->results[1].outcome == MXK_OPCHECK_FAIL)
            return MXK_OK;
        return st;
    }
    check_forward(r, &rep->results[1]);
    if (rep->results[2].outcome == MXK_OPCHECK_FAIL) {
        /* The baseline backward failed: report it on every backward check. */
        for (int k = 4; k <= 5; k++)
            set_result(&rep->results[k], MXK_OPCHECK_SKIP, "backward failed");
    } else {
        check_backward(r, &rep->results[2]);
        check_backward_req(r, &rep->results[4]);
        check_dependency(r, &rep->results[5]);
    }
    check_forward_req(r, &rep->results[3]);
    check_determinism(r, &rep->results[6]);
    run_free(r);
    free(r);
    return MXK_OK;
}
