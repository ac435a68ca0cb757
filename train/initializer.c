/* Initializers and their spec strings (python/mxnet/initializer.py). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_rnn.h"
#include "train_internal.h"

/** Most arguments of an initializer spec. */
#define INIT_MAX_ARGS 6

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
            else if (strcmp(key, "value") == 0 || strcmp(key, "forget_bias") == 0)
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
                             *const k_lstmbias[] = {"forget_bias", NULL},
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
    } else if (strcmp(name, "lstmbias") == 0) {
        out->kind = MXKT_INIT_LSTMBIAS;
        out->value = 1.0;
        keys = k_lstmbias;
    } else {
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "unknown initializer '%s' (xavier, glorot, he, default, msra, "
                          "uniform, normal, one, zero, constant, lstmbias)",
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

/** Initializer._init_weight: Constant's value, LSTMBias's gates, else the random distribution. */
static mxk_status init_weight(const mxkt_initializer *init, const char *name,
                              const mxk_shape *shape, float *values) {
    int64_t n = mxkt_shape_size(shape);
    if (init->kind == MXKT_INIT_CONSTANT || init->kind == MXKT_INIT_LSTMBIAS) {
        int64_t h = init->kind == MXKT_INIT_LSTMBIAS ? n / 4 : -1; /* int(shape[0] / 4) */
        for (int64_t i = 0; i < n; i++)
            values[i] = h < 0 || (i >= h && i < 2 * h) ? (float)init->value : 0.0f;
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
    if (mxkt_ends_with(name, "bias") || mxkt_ends_with(name, "beta") ||
        mxkt_ends_with(name, "moving_mean") || mxkt_ends_with(name, "moving_inv_var") ||
        mxkt_ends_with(name, "moving_avg") || mxkt_ends_with(name, "min"))
        c = 0.0;
    else if (mxkt_ends_with(name, "gamma") || mxkt_ends_with(name, "moving_var") ||
             mxkt_ends_with(name, "max"))
        c = 1.0;
    else if (!mxkt_ends_with(name, "weight"))
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

/**
 * FusedRNN(init, num_hidden, num_layers, mode, bidirectional, forget_bias)
 * (initializer.py) on the flat parameter vector of `name`: only init=None (the global
 * initializer `init`) is supported; mxkt_fused_rnn_init_fill does the rest.
 */
static mxk_status fused_rnn_fill(const mxkt_initializer *init, const char *name,
                                 const char *init_attr, const char *spec, const mxk_shape *shape,
                                 float *values) {
    char iname[32], mode[32] = "";
    init_arg args[INIT_MAX_ARGS];
    int nargs = 0, ok = init_split(spec, iname, sizeof iname, args, &nargs);
    double hidden = 0, layers = 0, forget = 1.0;
    mxkt_fused_rnn f = {.mode = mode};
    for (int i = 0; ok && i < nargs; i++) {
        const char *k = args[i].key, *v = args[i].val;
        if (strcmp(k, "init") == 0)
            ok = strcmp(v, "null") == 0;
        else if (strcmp(k, "num_hidden") == 0)
            ok = init_real(v, &hidden) && hidden >= 1 && hidden <= INT32_MAX;
        else if (strcmp(k, "num_layers") == 0)
            ok = init_real(v, &layers) && layers >= 1 && layers <= INT32_MAX;
        else if (strcmp(k, "mode") == 0)
            ok = snprintf(mode, sizeof mode, "%s", v) < (int)sizeof mode;
        else if (strcmp(k, "bidirectional") == 0)
            ok = (f.bidirectional = strcmp(v, "true") == 0) || strcmp(v, "false") == 0;
        else if (strcmp(k, "forget_bias") == 0)
            ok = init_real(v, &forget);
        else
            ok = 0;
    }
    if (!ok || hidden < 1 || layers < 1)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                          "%s: __init__ '%.200s': fusedrnn takes init null, num_hidden, "
                          "num_layers, mode, bidirectional and forget_bias",
                          name, init_attr);
    f.num_hidden = (int32_t)hidden;
    f.num_layers = (int32_t)layers;
    f.prefix = "";
    return mxkt_fused_rnn_init_fill(&f, forget, init, name, mxkt_shape_size(shape), values);
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
    if (strncmp(spec, "fusedrnn(", 9) == 0)
        return fused_rnn_fill(init, name, init_attr, spec, shape, values);
    if (mxkt_initializer_parse(spec, init->seed, &own) != MXK_OK) {
        snprintf(msg, sizeof msg, "%s", mxkt_last_error());
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "%s: __init__ '%.200s': %s", name, init_attr,
                          msg);
    }
    return init_weight(&own, name, shape, values);
}
