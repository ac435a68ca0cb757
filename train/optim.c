/*
 * Training policy of mxk_train that needs no executor: errors, learning-rate
 * schedulers (python/mxnet/lr_scheduler.py), optimizers over the update operators
 * (python/mxnet/optimizer/optimizer.py), initializers (python/mxnet/initializer.py),
 * metrics (python/mxnet/metric.py), _split_input_slice
 * (python/mxnet/executor_manager.py), the Speedometer line (python/mxnet/callback.py)
 * and checkpoint names (python/mxnet/model.py save_checkpoint).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_philox.h"
#include "train_internal.h"

/* ------------------------------------------------------------------------- */
/* errors and small helpers                                                  */
/* ------------------------------------------------------------------------- */

/** Records "<what>: <kernel's last error>" and returns `st`. */
mxk_status mxkt_kernel_error(mxk_status st, const char *what) {
    mxk_error_add_context("%s", what);
    return st;
}

/** The calling thread's last error: the kernel's channel. */
const char *mxkt_last_error(void) {
    return mxk_get_last_error();
}

/** Number of elements of a shape. */
int64_t mxkt_shape_size(const mxk_shape *s) {
    int64_t n = 1;
    for (int32_t d = 0; d < s->ndim; d++)
        n *= s->dims[d];
    return n;
}

/** FNV-1a over the bytes of s. */
uint64_t mxkt_hash(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

/** Uniform double in [0,1) (24 random bits) number i of stream `stream` under `seed`. */
double mxkt_rand_unit(uint64_t seed, uint64_t stream, uint64_t i) {
    mxk_philox_block b = mxk_philox4x32_10(mxk_philox_counter(i / 4, stream, 0), seed);
    return (double)(b.v[i % 4] >> 8) / 16777216.0;
}

/* ------------------------------------------------------------------------- */
/* learning-rate schedulers                                                  */
/* ------------------------------------------------------------------------- */

/**
 * Checks the step and factor of a scheduler as upstream's constructors do
 * (ValueError texts); `increasing`: the step follows a smaller one.
 */
static mxk_status sched_check(int64_t step, int increasing, double factor) {
    if (!increasing)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "Schedule step must be an increasing integer list");
    if (step < 1)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "Schedule step must be greater or equal than 1 round");
    if (factor > 1.0)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "Factor must be no more than 1 to make lr reduce");
    return MXK_OK;
}

/** Starts `s` as a scheduler of `kind` at base_lr (state cleared). */
static void sched_start(mxkt_lr_scheduler *s, int32_t kind, double factor, double base_lr) {
    memset(s, 0, sizeof *s);
    s->kind = kind;
    s->factor = factor;
    s->stop_factor_lr = 1e-8;
    s->base_lr = s->lr = base_lr;
}

/** FactorScheduler(step, factor, stop_factor_lr=1e-8, base_lr) (lr_scheduler.py). */
mxk_status mxkt_lr_factor(mxkt_lr_scheduler *s, int64_t step, double factor, double base_lr) {
    MXKT_CHECK(sched_check(step, 1, factor));
    sched_start(s, MXKT_SCHED_FACTOR, factor, base_lr);
    s->step = step;
    return MXK_OK;
}

/** MultiFactorScheduler(step=[...], factor, base_lr) (lr_scheduler.py). */
mxk_status mxkt_lr_multifactor(mxkt_lr_scheduler *s, const int64_t *steps, int32_t n, double factor,
                               double base_lr) {
    if (n < 1 || n > MXKT_MAX_STEPS)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "MultiFactorScheduler: 1 to %d steps needed",
                          MXKT_MAX_STEPS);
    for (int32_t i = 0; i < n; i++) /* every step first, then the factor (upstream's order) */
        MXKT_CHECK(sched_check(steps[i], i == 0 || steps[i] > steps[i - 1], 1.0));
    MXKT_CHECK(sched_check(1, 1, factor));
    sched_start(s, MXKT_SCHED_MULTIFACTOR, factor, base_lr);
    for (int32_t i = 0; i < n; i++)
        s->steps[i] = steps[i];
    s->num_steps = n;
    return MXK_OK;
}

/** The scheduler's rate at num_update (upstream __call__, stateful). */
double mxkt_lr_get(mxkt_lr_scheduler *s, int64_t num_update) {
    if (s->kind == MXKT_SCHED_FACTOR) {
        while (num_update > s->count + s->step) {
            s->count += s->step;
            s->lr *= s->factor;
            if (s->lr < s->stop_factor_lr)
                s->lr = s->stop_factor_lr;
        }
    } else if (s->kind == MXKT_SCHED_MULTIFACTOR) {
        while (s->cur_step_ind < s->num_steps && num_update > s->steps[s->cur_step_ind]) {
            s->count = s->steps[s->cur_step_ind];
            s->cur_step_ind++;
            s->lr *= s->factor;
        }
    }
    return s->lr;
}

/* ------------------------------------------------------------------------- */
/* optimizers                                                                */
/* ------------------------------------------------------------------------- */

/** SGD(learning_rate, momentum, wd) with upstream defaults otherwise. */
void mxkt_optimizer_sgd(mxkt_optimizer *o, double lr, double momentum, double wd) {
    memset(o, 0, sizeof *o);
    o->kind = MXKT_OPT_SGD;
    o->lr = lr;
    o->momentum = momentum;
    o->wd = wd;
    o->rescale_grad = 1.0;
    o->clip_gradient = -1.0;
}

/** Adam(learning_rate, wd) with beta1 0.9, beta2 0.999, epsilon 1e-8. */
void mxkt_optimizer_adam(mxkt_optimizer *o, double lr, double wd) {
    memset(o, 0, sizeof *o);
    o->kind = MXKT_OPT_ADAM;
    o->lr = lr;
    o->wd = wd;
    o->rescale_grad = 1.0;
    o->clip_gradient = -1.0;
    o->beta1 = 0.9;
    o->beta2 = 0.999;
    o->epsilon = 1e-8;
}

/** States per parameter: SGD momentum → 1 (mom), Adam → 2 (mean, var), else 0. */
uint32_t mxkt_optimizer_num_states(const mxkt_optimizer *o) {
    if (o->kind == MXKT_OPT_ADAM)
        return 2;
    return o->momentum != 0.0 ? 1 : 0;
}

/** True when `s` ends with `suffix`. */
static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/** upstream Optimizer.set_wd_mult: no decay unless the name ends in _weight or _gamma. */
double mxkt_optimizer_wd_mult(const char *name) {
    if (name == NULL)
        return 1.0;
    return ends_with(name, "_weight") || ends_with(name, "_gamma") ? 1.0 : 0.0;
}

/** _update_count(index) then _get_lr(index) (plus Adam's bias correction). */
double mxkt_optimizer_step(mxkt_optimizer *o, int32_t index) {
    int64_t t = 1;
    if (index >= 0 && index < MXKT_MAX_PARAMS) {
        t = ++o->counts[index];
        if (t > o->num_update)
            o->num_update = t;
    }
    double lr = o->sched.kind != MXKT_SCHED_NONE ? mxkt_lr_get(&o->sched, o->num_update) : o->lr;
    if (o->kind == MXKT_OPT_ADAM)
        lr *= sqrt(1.0 - pow(o->beta2, (double)t)) / (1.0 - pow(o->beta1, (double)t));
    return lr;
}

/** Runs sgd_update / sgd_mom_update / adam_update in place on `weight`. */
mxk_status mxkt_optimizer_apply(const mxkt_optimizer *o, double lr, double wd_mult,
                                mxk_ndarray *weight, mxk_ndarray *grad,
                                mxk_ndarray *const *states) {
    char v[8][40];
    const char *keys[8], *vals[8];
    uint32_t na = 0;
#define ATTR(k, x)                                                                                 \
    do {                                                                                           \
        snprintf(v[na], sizeof v[na], "%.17g", (double)(x));                                       \
        keys[na] = (k);                                                                            \
        vals[na] = v[na];                                                                          \
        na++;                                                                                      \
    } while (0)
    ATTR("lr", lr);
    ATTR("wd", o->wd * wd_mult);
    ATTR("rescale_grad", o->rescale_grad);
    ATTR("clip_gradient", o->clip_gradient);
    mxk_ndarray *in[4] = {weight, grad, NULL, NULL};
    uint32_t nin = 2;
    const char *op = "sgd_update";
    if (o->kind == MXKT_OPT_ADAM) {
        op = "adam_update";
        ATTR("beta1", o->beta1);
        ATTR("beta2", o->beta2);
        ATTR("epsilon", o->epsilon);
        in[2] = states[0];
        in[3] = states[1];
        nin = 4;
    } else if (o->momentum != 0.0) {
        op = "sgd_mom_update";
        ATTR("momentum", o->momentum);
        in[2] = states[0];
        nin = 3;
    }
#undef ATTR
    uint32_t nout = 1;
    mxk_ndarray *out[MXK_MAX_OUTPUTS] = {weight};
    mxk_status st = mxk_imperative_invoke(op, nin, in, &nout, out, na, keys, vals);
    if (st != MXK_OK)
        return mxkt_kernel_error(st, op);
    return MXK_OK;
}

/* ------------------------------------------------------------------------- */
/* initializers                                                              */
/* ------------------------------------------------------------------------- */

/** Most arguments of an initializer spec. */
#define INIT_MAX_ARGS 4

/** One argument of an initializer spec: "key=value", or a positional "value" (key ""). */
typedef struct init_arg {
    char key[32], val[32];
} init_arg;

/** Copies s[0..n) into buf without surrounding blanks and quotes; 0 when it does not fit. */
static int init_token(const char *s, size_t n, char *buf, size_t size) {
    while (n > 0 && (isspace((unsigned char)*s) || *s == '\'' || *s == '"'))
        s++, n--;
    while (n > 0 && (isspace((unsigned char)s[n - 1]) || s[n - 1] == '\'' || s[n - 1] == '"'))
        n--;
    if (n == 0 || n >= size)
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return 1;
}

/**
 * Splits "name(a, key=b)" into a lower-case name and its arguments. Returns 0 on a
 * malformed spec (no closing parenthesis, text after it, an empty argument).
 */
static int init_split(const char *spec, char *name, size_t size, init_arg *args, int *nargs) {
    const char *open = strchr(spec, '(');
    size_t n = open ? (size_t)(open - spec) : strlen(spec);
    if (!init_token(spec, n, name, size))
        return 0;
    for (char *c = name; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    *nargs = 0;
    if (open == NULL)
        return 1;
    const char *close = strrchr(open, ')');
    if (close == NULL || close[1] != '\0')
        return 0;
    for (const char *p = open + 1; p < close;) {
        const char *comma = memchr(p, ',', (size_t)(close - p));
        const char *e = comma ? comma : close;
        const char *eq = memchr(p, '=', (size_t)(e - p));
        if (*nargs == INIT_MAX_ARGS)
            return 0;
        init_arg *a = &args[(*nargs)++];
        a->key[0] = '\0';
        if (eq && !init_token(p, (size_t)(eq - p), a->key, sizeof a->key))
            return 0;
        if (!init_token(eq ? eq + 1 : p, (size_t)(e - (eq ? eq + 1 : p)), a->val, sizeof a->val))
            return 0;
        p = comma ? comma + 1 : close;
    }
    return 1;
}

/** Parses a real number that fills the whole string. */
static int init_real(const char *s, double *x) {
    char *end = NULL;
    *x = strtod(s, &end);
    return end != s && *end == '\0' && isfinite(*x);
}

/**
 * Applies the arguments of one initializer: `keys` names its parameters in
 * upstream's positional order (NULL-terminated). Keys: scale, sigma, value,
 * magnitude, slope (numbers), rnd_type (uniform|gaussian), factor_type
 * (avg|in|out).
 */
static mxk_status init_apply(const char *spec, const char *const *keys, const init_arg *args,
                             int nargs, mxkt_initializer *out, double *slope) {
    for (int i = 0; i < nargs; i++) {
        /* positional argument i is parameter i; a keyword must name a parameter */
        int k = 0;
        while (keys[k] && (args[i].key[0] ? strcmp(keys[k], args[i].key) != 0 : k < i))
            k++;
        if (keys[k] == NULL && args[i].key[0])
            return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "initializer '%s': unknown argument '%s'",
                              spec, args[i].key);
        if (keys[k] == NULL)
            return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "initializer '%s': too many arguments",
                              spec);
        const char *key = keys[k];
        const char *v = args[i].val;
        double x = 0.0;
        int ok = 1;
        if (strcmp(key, "rnd_type") == 0) {
            ok = strcmp(v, "uniform") == 0 || strcmp(v, "gaussian") == 0;
            out->gaussian = strcmp(v, "gaussian") == 0;
        } else if (strcmp(key, "factor_type") == 0) {
            ok = strcmp(v, "avg") == 0 || strcmp(v, "in") == 0 || strcmp(v, "out") == 0;
            out->factor_type = strcmp(v, "in") == 0 ? 1 : strcmp(v, "out") == 0 ? 2 : 0;
        } else if ((ok = init_real(v, &x)) != 0) {
            if (strcmp(key, "scale") == 0)
                out->scale = x;
            else if (strcmp(key, "sigma") == 0)
                out->sigma = x;
            else if (strcmp(key, "value") == 0)
                out->value = x;
            else if (strcmp(key, "magnitude") == 0)
                out->magnitude = x;
            else
                *slope = x;
        }
        if (!ok)
            return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "initializer '%s': bad %s '%s'", spec, key,
                              v);
    }
    return MXK_OK;
}

/** Parses an initializer spec (see mxk_train.h). */
mxk_status mxkt_initializer_parse(const char *spec, uint64_t seed, mxkt_initializer *out) {
    static const char *const k_none[] = {NULL}, *const k_uniform[] = {"scale", NULL},
                             *const k_normal[] = {"sigma", NULL},
                             *const k_constant[] = {"value", NULL},
                             *const k_xavier[] = {"rnd_type", "factor_type", "magnitude", NULL},
                             *const k_msra[] = {"factor_type", "slope", NULL};
    memset(out, 0, sizeof *out);
    out->seed = seed;
    char name[32];
    init_arg args[INIT_MAX_ARGS];
    int nargs = 0;
    if (!init_split(spec, name, sizeof name, args, &nargs))
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "malformed initializer '%s' (NAME or NAME(ARG, KEY=VALUE, ...))", spec);
    const char *const *keys = k_none;
    double slope = 0.25;
    out->kind = MXKT_INIT_XAVIER;
    out->magnitude = 3.0;
    if (strcmp(name, "xavier") == 0) {
        keys = k_xavier;
    } else if (strcmp(name, "glorot") == 0) {
        out->magnitude = 1.0;
    } else if (strcmp(name, "he") == 0 || strcmp(name, "default") == 0) {
        /* fit.py's "default": Xavier(rnd_type='gaussian', factor_type='in', magnitude=2) */
        out->gaussian = 1;
        out->factor_type = 1;
        out->magnitude = 2.0;
    } else if (strcmp(name, "msraprelu") == 0 || strcmp(name, "msra") == 0) {
        out->gaussian = 1;
        keys = k_msra;
    } else if (strcmp(name, "uniform") == 0) {
        out->kind = MXKT_INIT_UNIFORM;
        out->scale = 0.07;
        keys = k_uniform;
    } else if (strcmp(name, "normal") == 0) {
        out->kind = MXKT_INIT_NORMAL;
        out->sigma = 0.01;
        keys = k_normal;
    } else if (strcmp(name, "one") == 0 || strcmp(name, "zero") == 0 ||
               strcmp(name, "constant") == 0) {
        out->kind = MXKT_INIT_CONSTANT;
        out->value = strcmp(name, "one") == 0 ? 1.0 : 0.0;
        keys = strcmp(name, "constant") == 0 ? k_constant : k_none;
    } else {
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "unknown initializer '%s' (xavier, glorot, he, default, msra, "
                          "uniform, normal, one, zero, constant)",
                          spec);
    }
    MXKT_CHECK(init_apply(spec, keys, args, nargs, out, &slope));
    if (keys == k_msra) /* MSRAPrelu: Xavier("gaussian", factor_type, 2 / (1 + slope^2)) */
        out->magnitude = 2.0 / (1.0 + slope * slope);
    return MXK_OK;
}

/** Xavier._init_weight's scale: sqrt(magnitude / factor). */
mxk_status mxkt_xavier_scale(const mxkt_initializer *init, const mxk_shape *shape, double *scale) {
    if (shape->ndim < 2)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "Xavier initializer cannot be applied to vector. It requires at least "
                          "2D.");
    double hw = 1.0;
    for (int32_t d = 2; d < shape->ndim; d++)
        hw *= (double)shape->dims[d];
    double fan_in = (double)shape->dims[1] * hw, fan_out = (double)shape->dims[0] * hw;
    double factor = init->factor_type == 1   ? fan_in
                    : init->factor_type == 2 ? fan_out
                                             : (fan_in + fan_out) / 2.0;
    *scale = sqrt(init->magnitude / factor);
    return MXK_OK;
}

/** Initializer._init_weight: Constant's value, else the random distribution. */
static mxk_status init_weight(const mxkt_initializer *init, const char *name,
                              const mxk_shape *shape, float *values) {
    int64_t n = mxkt_shape_size(shape);
    if (init->kind == MXKT_INIT_CONSTANT) {
        for (int64_t i = 0; i < n; i++)
            values[i] = (float)init->value;
        return MXK_OK;
    }
    uint64_t stream = mxkt_hash(name);
    int gaussian =
        init->kind == MXKT_INIT_NORMAL || (init->kind == MXKT_INIT_XAVIER && init->gaussian);
    double scale = init->kind == MXKT_INIT_UNIFORM ? init->scale : init->sigma;
    if (init->kind == MXKT_INIT_XAVIER)
        MXKT_CHECK(mxkt_xavier_scale(init, shape, &scale));
    for (int64_t i = 0; i < n; i++) {
        if (gaussian) {
            /* Box-Muller on two uniforms of the stream */
            double u1 = mxkt_rand_unit(init->seed, stream, 2 * (uint64_t)i);
            double u2 = mxkt_rand_unit(init->seed, stream, 2 * (uint64_t)i + 1);
            double r = sqrt(-2.0 * log(1.0 - u1));
            values[i] = (float)(scale * r * cos(2.0 * M_PI * u2));
        } else {
            double u = mxkt_rand_unit(init->seed, stream, (uint64_t)i);
            values[i] = (float)(scale * (2.0 * u - 1.0));
        }
    }
    return MXK_OK;
}

/** Fills by name suffix (Initializer.__call__ with the legacy suffix rules). */
mxk_status mxkt_initializer_fill(const mxkt_initializer *init, const char *name,
                                 const mxk_shape *shape, float *values) {
    double c = NAN;
    if (ends_with(name, "bias") || ends_with(name, "beta") || ends_with(name, "moving_mean") ||
        ends_with(name, "moving_inv_var") || ends_with(name, "moving_avg") ||
        ends_with(name, "min"))
        c = 0.0;
    else if (ends_with(name, "gamma") || ends_with(name, "moving_var") || ends_with(name, "max"))
        c = 1.0;
    else if (!ends_with(name, "weight"))
        return mxkt_error(
            MXK_ERR_INVALID_ARGUMENT,
            "Unknown initialization pattern for %s. Default initialization is now limited to "
            "\"weight\", \"bias\", \"gamma\" (1.0), and \"beta\" (0.0) (and \"moving_mean\", "
            "\"moving_var\", \"min\", \"max\"): end the name with one of these or give the "
            "variable an __init__ attribute such as [\"zero\", {}] (mx.sym.Variable(init=...))",
            name);
    if (isnan(c))
        return init_weight(init, name, shape, values);
    for (int64_t i = 0; i < mxkt_shape_size(shape); i++)
        values[i] = (float)c;
    return MXK_OK;
}

/** Skips blanks; returns the next byte. */
static const char *json_ws(const char *p) {
    while (isspace((unsigned char)*p))
        p++;
    return p;
}

/**
 * Copies the JSON token at p (a string without escapes, or a bare number /
 * true / false) into buf, a string quoted; returns the byte after it or NULL.
 */
static const char *json_token(const char *p, char *buf, size_t size) {
    const char *end;
    if (*p == '"') {
        end = strchr(p + 1, '"');
        if (end == NULL || memchr(p + 1, '\\', (size_t)(end - p - 1)))
            return NULL;
        end++;
    } else {
        end = p + strcspn(p, ",}] \t\r\n");
    }
    if (end == p || (size_t)(end - p) >= size)
        return NULL;
    memcpy(buf, p, (size_t)(end - p));
    buf[end - p] = '\0';
    return end;
}

/**
 * Rewrites an `__init__` value ["name", {"key": value, ...}] as the spec
 * name(key=value, ...) of mxkt_initializer_parse. Returns 0 when malformed.
 */
static int init_attr_spec(const char *attr, char *spec, size_t size) {
    char tok[64];
    const char *p = json_ws(attr);
    if (*p++ != '[' || (p = json_token(json_ws(p), tok, sizeof tok)) == NULL || tok[0] != '"')
        return 0;
    size_t len = (size_t)snprintf(spec, size, "%.*s(", (int)strlen(tok) - 2, tok + 1);
    p = json_ws(p);
    if (*p == ',') {
        p = json_ws(p + 1);
        if (*p++ != '{')
            return 0;
        for (int first = 1; *(p = json_ws(p)) != '}'; first = 0) {
            char val[64];
            if (!first && *p++ != ',')
                return 0;
            if ((p = json_token(json_ws(p), tok, sizeof tok)) == NULL || tok[0] != '"')
                return 0;
            p = json_ws(p);
            if (*p++ != ':' || (p = json_token(json_ws(p), val, sizeof val)) == NULL)
                return 0;
            len += (size_t)snprintf(spec + len, len < size ? size - len : 0, "%s%.*s=%s",
                                    first ? "" : ", ", (int)strlen(tok) - 2, tok + 1, val);
        }
        p = json_ws(p + 1);
    }
    if (*p++ != ']' || *json_ws(p) != '\0')
        return 0;
    len += (size_t)snprintf(spec + len, len < size ? size - len : 0, ")");
    return len < size;
}

mxk_status mxkt_initializer_fill_desc(const mxkt_initializer *init, const char *name,
                                      const char *init_attr, const mxk_shape *shape,
                                      float *values) {
    if (init_attr == NULL || init_attr[0] == '\0')
        return mxkt_initializer_fill(init, name, shape, values);
    char spec[512], msg[600];
    mxkt_initializer own;
    if (!init_attr_spec(init_attr, spec, sizeof spec))
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "%s: malformed __init__ '%.200s' (MXNet's [\"name\", {\"key\": value}])",
                          name, init_attr);
    if (mxkt_initializer_parse(spec, init->seed, &own) != MXK_OK) {
        snprintf(msg, sizeof msg, "%s", mxkt_last_error());
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "%s: __init__ '%.200s': %s", name, init_attr,
                          msg);
    }
    return init_weight(&own, name, shape, values);
}

/* ------------------------------------------------------------------------- */
/* metrics                                                                   */
/* ------------------------------------------------------------------------- */

/** Creates a metric by name (metric.py create). */
mxk_status mxkt_metric_create(const char *name, int32_t top_k, mxkt_metric *out) {
    memset(out, 0, sizeof *out);
    if (strcmp(name, "acc") == 0 || strcmp(name, "accuracy") == 0) {
        out->kind = MXKT_METRIC_ACC;
        snprintf(out->name, sizeof out->name, "accuracy");
    } else if (strcmp(name, "top_k_accuracy") == 0 || strcmp(name, "top_k_acc") == 0) {
        if (top_k < 2)
            return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                              "Please use Accuracy if top_k is no more than 1");
        out->kind = MXKT_METRIC_TOPK;
        out->top_k = top_k;
        snprintf(out->name, sizeof out->name, "top_k_accuracy_%d", top_k);
    } else if (strcmp(name, "ce") == 0 || strcmp(name, "cross-entropy") == 0) {
        out->kind = MXKT_METRIC_CE;
        snprintf(out->name, sizeof out->name, "cross-entropy");
    } else if (strcmp(name, "nll_loss") == 0 || strcmp(name, "nll-loss") == 0) {
        out->kind = MXKT_METRIC_NLL;
        snprintf(out->name, sizeof out->name, "nll-loss");
    } else if (strcmp(name, "perplexity") == 0) {
        out->kind = MXKT_METRIC_PERPLEXITY;
        snprintf(out->name, sizeof out->name, "perplexity");
    } else if (strcmp(name, "mse") == 0 || strcmp(name, "mae") == 0 || strcmp(name, "rmse") == 0) {
        out->kind = name[1] == 's'   ? MXKT_METRIC_MSE
                    : name[1] == 'a' ? MXKT_METRIC_MAE
                                     : MXKT_METRIC_RMSE;
        snprintf(out->name, sizeof out->name, "%s", name);
    } else {
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "unknown metric '%s' (acc, top_k_accuracy, ce, nll_loss, perplexity, "
                          "mse, mae, rmse)",
                          name);
    }
    return MXK_OK;
}

/** EvalMetric.reset. */
void mxkt_metric_reset(mxkt_metric *m) {
    m->sum_metric = 0.0;
    m->num_inst = 0.0;
}

/** EvalMetric.update for one batch of host values. */
void mxkt_metric_update(mxkt_metric *m, const float *labels, const float *preds, int64_t n,
                        int64_t width) {
    switch (m->kind) {
    case MXKT_METRIC_ACC:
    case MXKT_METRIC_TOPK:
        for (int64_t i = 0; i < n; i++) {
            const float *p = preds + i * width;
            int64_t label = (int64_t)labels[i];
            if (m->kind == MXKT_METRIC_ACC) {
                int64_t best = 0;
                if (width > 1) {
                    for (int64_t j = 1; j < width; j++)
                        if (p[j] > p[best])
                            best = j;
                } else {
                    best = (int64_t)p[0];
                }
                m->sum_metric += best == label ? 1.0 : 0.0;
            } else if (label >= 0 && label < width) {
                /* rank of the label's score: the label is in the top k when fewer than k
                 * scores are greater (argsort order, ties favour lower indices) */
                int64_t greater = 0;
                for (int64_t j = 0; j < width; j++)
                    if (p[j] > p[label] || (p[j] == p[label] && j > label))
                        greater++;
                m->sum_metric += greater < m->top_k ? 1.0 : 0.0;
            }
            m->num_inst += 1.0;
        }
        break;
    case MXKT_METRIC_CE:
    case MXKT_METRIC_NLL:
    case MXKT_METRIC_PERPLEXITY:
        for (int64_t i = 0; i < n; i++) {
            int64_t label = (int64_t)labels[i];
            if (m->kind == MXKT_METRIC_PERPLEXITY && m->has_ignore && label == m->ignore_label)
                continue;
            double p = label >= 0 && label < width ? preds[i * width + label] : 0.0;
            if (m->kind == MXKT_METRIC_PERPLEXITY)
                m->sum_metric += -log(p > 1e-10 ? p : 1e-10);
            else
                m->sum_metric += -log(p + 1e-12);
            m->num_inst += 1.0;
        }
        break;
    default: {
        /* upstream reshapes a (B,) label to (B, 1), which broadcasts over the
         * prediction's columns */
        double s = 0.0;
        int64_t w = width > 0 ? width : 1, cnt = n * w;
        for (int64_t i = 0; i < n; i++)
            for (int64_t j = 0; j < w; j++) {
                double d = (double)labels[i] - (double)preds[i * w + j];
                s += m->kind == MXKT_METRIC_MAE ? fabs(d) : d * d;
            }
        double mean = cnt > 0 ? s / (double)cnt : 0.0;
        m->sum_metric += m->kind == MXKT_METRIC_RMSE ? sqrt(mean) : mean;
        m->num_inst += 1.0;
        break;
    }
    }
}

/** EvalMetric.get. */
double mxkt_metric_get(const mxkt_metric *m) {
    if (m->num_inst == 0.0)
        return NAN;
    double v = m->sum_metric / m->num_inst;
    return m->kind == MXKT_METRIC_PERPLEXITY ? exp(v) : v;
}

/* ------------------------------------------------------------------------- */
/* data parallelism, callbacks, names                                        */
/* ------------------------------------------------------------------------- */

/** _split_input_slice with Python 3 semantics (true division, round half to even). */
mxk_status mxkt_split_input_slice(int64_t batch_size, const double *work_load, int32_t n,
                                  int64_t *begin, int64_t *end) {
    double total = 0.0;
    for (int32_t i = 0; i < n; i++)
        total += work_load[i];
    int64_t sum = 0, counts[MXKT_MAX_CTX];
    if (n < 1 || n > MXKT_MAX_CTX || total <= 0.0)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "Invalid settings for work load.");
    for (int32_t i = 0; i < n; i++) {
        counts[i] = (int64_t)nearbyint(work_load[i] * (double)batch_size / total);
        sum += counts[i];
    }
    if (sum < batch_size)
        counts[n - 1] += batch_size - sum;
    int64_t start = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t b = start < batch_size ? start : batch_size;
        int64_t e = start + counts[i] < batch_size ? start + counts[i] : batch_size;
        if (b >= e)
            return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "Too many slices. Some splits are empty.");
        begin[i] = b;
        end[i] = e;
        start += counts[i];
    }
    return MXK_OK;
}

/** Speedometer's line (callback.py). */
void mxkt_speedometer_line(char *buf, size_t size, int32_t epoch, int64_t nbatch, double speed,
                           const mxkt_metric *metrics, uint32_t num_metrics) {
    int used = snprintf(buf, size, "%s[%d] Batch [%lld]\tSpeed: %.2f samples/sec",
                        num_metrics ? "Epoch" : "Iter", epoch, (long long)nbatch, speed);
    for (uint32_t i = 0; i < num_metrics && used > 0 && (size_t)used < size; i++)
        used += snprintf(buf + used, size - (size_t)used, "\t%s=%f", metrics[i].name,
                         mxkt_metric_get(&metrics[i]));
}

/** Checkpoint file names (model.py save_checkpoint). */
void mxkt_checkpoint_name(char *buf, size_t size, const char *prefix, int32_t epoch,
                          const char *kind) {
    if (strcmp(kind, "symbol") == 0)
        snprintf(buf, size, "%s-symbol.json", prefix);
    else
        snprintf(buf, size, "%s-%04d.%s", prefix, epoch, kind);
}
