/*
 * Direct tests of the cpu-blas plugin, without the mxk kernel: the test dlopens
 * the plugin (path in argv[1], else MXK_CPU_BLAS_PLUGIN), calls its entry points
 * with a test-local host table and registrar, and drives the captured operator
 * and device definitions itself.
 *
 * What is checked here is what only a direct caller sees or what is specific to
 * one operator: the plugin contract (entry points, registration, init options,
 * the device backend, the thread knob, the SDK helpers), shape and type
 * inference with exact error messages, forward against a float64 reference
 * computed here, backward against the closed form where it is not a derivative
 * (SoftmaxOutput, BlockGrad), fixed numbers worked out by hand (FullyConnected,
 * Activation, softmax and SoftmaxOutput) and Reshape's special values. Numeric
 * gradients, write requests (WRITE / ADD / NULL), in-place runs and undeclared
 * dependencies are the operator test kit's (sdk/opcheck), run on every operator
 * by tests/opcheck with the configurations used here among its own.
 *
 * Exit code 77 (skipped) when the plugin cannot be loaded.
 */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mxk_sdk.h"
#include "reshape_infer.h"
#include "testing.h"

/* ------------------------------------------------------------------------- */
/* Test-local host: error sinks, attributes, name lists                       */
/* ------------------------------------------------------------------------- */

/** The test's error sink: the last code and message written. */
struct mxk_error_sink {
    mxk_status code;
    char msg[2048];
};

/** The test's attribute dictionary (strings owned by the test). */
#define T_MAX_ATTRS 32
struct mxk_attrs {
    int n;
    const char *k[T_MAX_ATTRS];
    const char *v[T_MAX_ATTRS];
};

/** The test's name list. */
struct mxk_name_list {
    int n;
    char names[16][64];
};

/** Resets a sink. */
static void sink_reset(mxk_error_sink *e) {
    e->code = MXK_OK;
    e->msg[0] = '\0';
}

/** host->error: records code and message. */
__attribute__((format(printf, 3, 4))) static mxk_status
th_error(mxk_error_sink *sink, mxk_status code, const char *fmt, ...) {
    if (sink != NULL) {
        va_list ap;
        va_start(ap, fmt);
        sink->code = code;
        vsnprintf(sink->msg, sizeof sink->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

static int t_log_count;
static char t_last_log[512];

/** host->log: counts and keeps the last message. */
__attribute__((format(printf, 2, 3))) static void th_log(mxk_log_level level, const char *fmt,
                                                         ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t_last_log, sizeof t_last_log, fmt, ap);
    va_end(ap);
    t_log_count++;
}

/** host->attr_get. */
static const char *th_attr_get(const mxk_attrs *a, const char *key) {
    if (a == NULL)
        return NULL;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->k[i], key) == 0)
            return a->v[i];
    return NULL;
}

/** Parses a whole decimal integer. */
static int t_parse_int(const char *s, int64_t *v) {
    char *end;
    long long x = strtoll(s, &end, 10);
    if (end == s || *end != '\0')
        return 0;
    *v = x;
    return 1;
}

/** Parses a whole real number. */
static int t_parse_float(const char *s, double *v) {
    char *end;
    double x = strtod(s, &end);
    if (end == s || *end != '\0')
        return 0;
    *v = x;
    return 1;
}

/** Parses 1/0/true/false/True/False. */
static int t_parse_bool(const char *s, int32_t *v) {
    if (!strcmp(s, "1") || !strcmp(s, "true") || !strcmp(s, "True")) {
        *v = 1;
        return 1;
    }
    if (!strcmp(s, "0") || !strcmp(s, "false") || !strcmp(s, "False")) {
        *v = 0;
        return 1;
    }
    return 0;
}

/** Parses "(a,b)", "[a]", "(a,)", "()" or "a" (negative values allowed). */
static int t_parse_shape(const char *s, mxk_shape *v) {
    memset(v, 0, sizeof *v);
    while (*s == ' ')
        s++;
    char close = 0;
    if (*s == '(' || *s == '[') {
        close = *s == '(' ? ')' : ']';
        s++;
    }
    for (;;) {
        while (*s == ' ')
            s++;
        if (close && *s == close) {
            s++;
            break;
        }
        if (!close && *s == '\0')
            break;
        char *end;
        long long x = strtoll(s, &end, 10);
        if (end == s || v->ndim >= MXK_MAX_NDIM)
            return 0;
        v->dims[v->ndim++] = x;
        s = end;
        while (*s == ' ')
            s++;
        if (*s == ',')
            s++;
        else if (close && *s != close)
            return 0;
    }
    while (*s == ' ')
        s++;
    return *s == '\0';
}

/**
 * Finishes a typed attribute getter: the text `s` of attribute `key` (NULL: absent)
 * parsed (`parsed` nonzero) as `what` ("an int", ...); otherwise the host's error.
 */
static mxk_status th_attr_typed(const char *s, int parsed, const char *key, const char *what,
                                mxk_error_sink *err) {
    if (s == NULL)
        return th_error(err, MXK_ERR_NOT_FOUND, "attribute '%s' not found", key);
    if (!parsed)
        return th_error(err, MXK_ERR_INVALID_ARGUMENT, "attribute '%s': not %s", key, what);
    return MXK_OK;
}

/** host->attr_get_int. */
static mxk_status th_attr_get_int(const mxk_attrs *a, const char *key, int64_t *value,
                                  mxk_error_sink *err) {
    const char *s = th_attr_get(a, key);
    return th_attr_typed(s, s && t_parse_int(s, value), key, "an int", err);
}

/** host->attr_get_float. */
static mxk_status th_attr_get_float(const mxk_attrs *a, const char *key, double *value,
                                    mxk_error_sink *err) {
    const char *s = th_attr_get(a, key);
    return th_attr_typed(s, s && t_parse_float(s, value), key, "a float", err);
}

/** host->attr_get_bool. */
static mxk_status th_attr_get_bool(const mxk_attrs *a, const char *key, int32_t *value,
                                   mxk_error_sink *err) {
    const char *s = th_attr_get(a, key);
    return th_attr_typed(s, s && t_parse_bool(s, value), key, "a bool", err);
}

/** host->attr_get_shape. */
static mxk_status th_attr_get_shape(const mxk_attrs *a, const char *key, mxk_shape *value,
                                    mxk_error_sink *err) {
    const char *s = th_attr_get(a, key);
    return th_attr_typed(s, s && t_parse_shape(s, value), key, "a tuple", err);
}

/** host->attr_count, attr_key, attr_value. */
static uint32_t th_attr_count(const mxk_attrs *a) {
    return (uint32_t)a->n;
}
static const char *th_attr_key(const mxk_attrs *a, uint32_t i) {
    return i < (uint32_t)a->n ? a->k[i] : NULL;
}
static const char *th_attr_value(const mxk_attrs *a, uint32_t i) {
    return i < (uint32_t)a->n ? a->v[i] : NULL;
}

/** host->name_list_add. */
static mxk_status th_name_list_add(mxk_name_list *l, const char *name, mxk_error_sink *err) {
    if (l->n >= 16 || strlen(name) >= 64)
        return th_error(err, MXK_ERR_INVALID_ARGUMENT, "name list full");
    strcpy(l->names[l->n++], name);
    return MXK_OK;
}

/** The host table handed to the plugin (unused service slots stay NULL). */
static mxk_host_api t_host;

/** Fills the test host table. */
static void host_init(void) {
    memset(&t_host, 0, sizeof t_host);
    t_host.struct_size = sizeof t_host;
    t_host.abi_minor = MXK_ABI_MINOR;
    t_host.error = th_error;
    t_host.log = th_log;
    t_host.attr_get = th_attr_get;
    t_host.attr_get_int = th_attr_get_int;
    t_host.attr_get_float = th_attr_get_float;
    t_host.attr_get_bool = th_attr_get_bool;
    t_host.attr_get_shape = th_attr_get_shape;
    t_host.attr_count = th_attr_count;
    t_host.attr_key = th_attr_key;
    t_host.attr_value = th_attr_value;
    t_host.name_list_add = th_name_list_add;
}

/* ------------------------------------------------------------------------- */
/* Test-local registrar: captures (copies of) what the plugin registers        */
/* ------------------------------------------------------------------------- */

#define T_MAX_OPS 256
#define T_MAX_NAMES 8

/** A captured operator: the definition with its arrays copied (strings are the
 *  plugin's constants; the plugin stays loaded). */
typedef struct cap_op {
    mxk_op_def def;
    mxk_attr_def attrs[16];
    const char *args[T_MAX_NAMES + 1];
    const char *outs[T_MAX_NAMES + 1];
    const char *aliases[T_MAX_NAMES + 1];
} cap_op;

/** A captured kernel. */
typedef struct cap_kernel {
    mxk_op_kernel_def def;
} cap_kernel;

static cap_op t_ops[T_MAX_OPS];
static int t_nops;
static cap_kernel t_kernels[T_MAX_OPS];
static int t_nkernels;
static mxk_device_def t_device;
static int t_ndevices;
static int t_reg_problems; /* definitions the registrar found malformed */

/** Copies a NULL-terminated name array (at most T_MAX_NAMES); 0 when too long. */
static int copy_names(const char **dst, const char *const *src) {
    int n = 0;
    if (src != NULL)
        for (; src[n] != NULL; n++) {
            if (n >= T_MAX_NAMES)
                return 0;
            dst[n] = src[n];
        }
    dst[n] = NULL;
    return 1;
}

/** Checks that an attribute default parses as its declared type. */
static int default_parses(const mxk_attr_def *a) {
    int64_t i;
    double f;
    int32_t b;
    mxk_shape s;
    if (a->default_value == NULL)
        return 1; /* required, or optional without a default (absent unless given) */
    switch (a->type) {
    case MXK_ATTR_INT:
        return t_parse_int(a->default_value, &i);
    case MXK_ATTR_FLOAT:
        return t_parse_float(a->default_value, &f);
    case MXK_ATTR_BOOL:
        return t_parse_bool(a->default_value, &b);
    case MXK_ATTR_SHAPE:
        return t_parse_shape(a->default_value, &s);
    case MXK_ATTR_ENUM: {
        size_t n = strlen(a->default_value);
        const char *p = a->enum_values;
        while (p != NULL && *p) {
            size_t w = strcspn(p, "|");
            if (w == n && strncmp(p, a->default_value, n) == 0)
                return 1;
            p += w + (p[w] == '|');
        }
        return 0;
    }
    default:
        return 1;
    }
}

/** registrar->register_op: validates like the kernel's registrar, then copies. */
static mxk_status tr_register_op(mxk_registrar *reg, const mxk_op_def *def, mxk_error_sink *err) {
    if (def->struct_size != sizeof(mxk_op_def) || def->abi_minor != MXK_ABI_MINOR ||
        def->name == NULL || def->infer_shape == NULL ||
        (def->parse_param != NULL) != (def->free_param != NULL) || def->num_attrs > 16) {
        t_reg_problems++;
        return th_error(err, MXK_ERR_ABI, "malformed op definition '%s'",
                        def->name ? def->name : "?");
    }
    for (int i = 0; i < t_nops; i++)
        if (strcmp(t_ops[i].def.name, def->name) == 0) {
            t_reg_problems++;
            return th_error(err, MXK_ERR_DUPLICATE, "operator '%s' registered twice", def->name);
        }
    if (t_nops >= T_MAX_OPS)
        return th_error(err, MXK_ERR_OUT_OF_MEMORY, "too many ops");
    cap_op *c = &t_ops[t_nops];
    memset(c, 0, sizeof *c);
    c->def = *def;
    for (uint32_t i = 0; i < def->num_attrs; i++) {
        const mxk_attr_def *a = &def->attrs[i];
        if (a->struct_size != sizeof(mxk_attr_def) || a->name == NULL ||
            (a->type == MXK_ATTR_ENUM && a->enum_values == NULL) || !default_parses(a)) {
            t_reg_problems++;
            return th_error(err, MXK_ERR_ABI, "op '%s': malformed attribute %u", def->name,
                            (unsigned)i);
        }
        c->attrs[i] = *a;
    }
    c->def.attrs = c->attrs;
    if (!copy_names(c->args, def->arguments) || !copy_names(c->outs, def->outputs) ||
        !copy_names(c->aliases, def->aliases)) {
        t_reg_problems++;
        return th_error(err, MXK_ERR_ABI, "op '%s': too many names", def->name);
    }
    c->def.arguments = def->arguments ? c->args : NULL;
    c->def.outputs = def->outputs ? c->outs : NULL;
    c->def.aliases = def->aliases ? c->aliases : NULL; /* the list may live on the stack */
    t_nops++;
    return MXK_OK;
}

/** registrar->register_kernel. */
static mxk_status tr_register_kernel(mxk_registrar *reg, const mxk_op_kernel_def *def,
                                     mxk_error_sink *err) {
    if (def->struct_size != sizeof(mxk_op_kernel_def) || def->op_name == NULL ||
        def->forward == NULL || t_nkernels >= T_MAX_OPS) {
        t_reg_problems++;
        return th_error(err, MXK_ERR_ABI, "malformed kernel");
    }
    t_kernels[t_nkernels++].def = *def;
    return MXK_OK;
}

/** registrar->register_device. */
static mxk_status tr_register_device(mxk_registrar *reg, const mxk_device_def *def,
                                     mxk_error_sink *err) {
    if (def->struct_size != sizeof(mxk_device_def) || t_ndevices > 0) {
        t_reg_problems++;
        return th_error(err, MXK_ERR_ABI, "malformed or second device");
    }
    t_device = *def;
    t_ndevices++;
    return MXK_OK;
}

static mxk_registrar t_reg;

/** Clears everything captured. */
static void registrar_reset(void) {
    memset(&t_reg, 0, sizeof t_reg);
    t_reg.struct_size = sizeof t_reg;
    t_reg.register_op = tr_register_op;
    t_reg.register_kernel = tr_register_kernel;
    t_reg.register_device = tr_register_device;
    t_nops = t_nkernels = t_ndevices = t_reg_problems = 0;
}

/** The captured operator named `name` (its name or an alias), or NULL. */
static const cap_op *find_op(const char *name) {
    for (int i = 0; i < t_nops; i++) {
        if (strcmp(t_ops[i].def.name, name) == 0)
            return &t_ops[i];
        for (const char *const *a = t_ops[i].def.aliases; a != NULL && *a != NULL; a++)
            if (strcmp(*a, name) == 0)
                return &t_ops[i];
    }
    return NULL;
}

/** The captured CPU kernel of `name`, or NULL. */
static const cap_kernel *find_kernel(const char *name) {
    const cap_op *op = find_op(name); /* kernels are registered under the canonical name */
    if (op != NULL)
        name = op->def.name;
    for (int i = 0; i < t_nkernels; i++)
        if (strcmp(t_kernels[i].def.op_name, name) == 0 && t_kernels[i].def.dev_type == MXK_DEV_CPU)
            return &t_kernels[i];
    return NULL;
}

/* ------------------------------------------------------------------------- */
/* Loading the plugin                                                         */
/* ------------------------------------------------------------------------- */

static void *t_dl;
static mxk_plugin_get_info_fn t_get_info;
static mxk_plugin_init_fn t_init;
static int (*t_openblas_get_num_threads)(void);

/** Runs the plugin's init with `options` (may be NULL); captures into the registrar. */
static mxk_status plugin_init_with(const mxk_attrs *options, mxk_error_sink *err) {
    registrar_reset();
    mxk_plugin_init_args args;
    memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.negotiated_minor = MXK_ABI_MINOR;
    args.host = &t_host;
    args.registrar = &t_reg;
    args.plugin_path = "libmxk-cpu-blas.so";
    args.options = options;
    return t_init(&args, err);
}

/* ------------------------------------------------------------------------- */
/* Small helpers: random numbers, shapes, tensors                             */
/* ------------------------------------------------------------------------- */

static uint64_t t_rng = 0x9E3779B97F4A7C15ull;

/** Uniform in [0, 1) (xorshift64*). */
static double urand(void) {
    t_rng ^= t_rng >> 12;
    t_rng ^= t_rng << 25;
    t_rng ^= t_rng >> 27;
    return (double)((t_rng * 0x2545F4914F6CDD1Dull) >> 11) * (1.0 / 9007199254740992.0);
}

/** A shape from a list of dims. */
static mxk_shape shp_make(const int64_t *d, int n) {
    return mxk_sdk_shape_from(d, n);
}
#define SHP(...)                                                                                   \
    shp_make((const int64_t[]){__VA_ARGS__},                                                       \
             (int)(sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t)))

/** Element count (0 for unknown). */
static size_t cnt(const mxk_shape *s) {
    return (size_t)mxk_sdk_shape_count(s);
}

/** Formats a shape into a rotating static buffer (for messages). */
static const char *fmt_shape(const mxk_shape *s) {
    static char bufs[4][MXK_SDK_SHAPE_STR_MAX];
    static int k;
    k = (k + 1) % 4;
    return mxk_sdk_shape_format(s, bufs[k], sizeof bufs[k]);
}

/** A float32 CPU tensor over `data`. */
static mxk_tensor mk(float *data, mxk_shape s) {
    mxk_tensor t;
    memset(&t, 0, sizeof t);
    t.struct_size = sizeof t;
    t.dtype = MXK_FLOAT32;
    t.data = data;
    t.shape = s;
    t.dev_type = MXK_DEV_CPU;
    t.dev_id = 0;
    return t;
}

/** n floats, filled with v. */
static float *falloc(size_t n, float v) {
    float *p = malloc((n ? n : 1) * sizeof(float));
    for (size_t i = 0; i < n; i++)
        p[i] = v;
    return p;
}

/* ------------------------------------------------------------------------- */
/* Binding and calling operators                                              */
/* ------------------------------------------------------------------------- */

/** One attribute given by a test. */
typedef struct kv {
    const char *k, *v;
} kv;

/** An operator with parsed parameters. */
typedef struct bound {
    const cap_op *op;
    const cap_kernel *k;
    void *param;
    uint32_t ni, no;
    const char *arg_names[T_MAX_NAMES];
} bound;

/**
 * Builds the attribute dictionary the kernel would hand to parse_param: the given
 * attributes (each must be in the schema) plus the schema's defaults.
 */
static int build_attrs(const cap_op *op, const kv *given, int n, mxk_attrs *a) {
    a->n = 0;
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (uint32_t j = 0; j < op->def.num_attrs; j++)
            found |= strcmp(op->attrs[j].name, given[i].k) == 0;
        if (!found) {
            fprintf(stderr, "op %s has no attribute %s\n", op->def.name, given[i].k);
            return 0;
        }
        a->k[a->n] = given[i].k;
        a->v[a->n++] = given[i].v;
    }
    for (uint32_t j = 0; j < op->def.num_attrs; j++) {
        if (th_attr_get(a, op->attrs[j].name) == NULL && op->attrs[j].default_value != NULL) {
            a->k[a->n] = op->attrs[j].name;
            a->v[a->n++] = op->attrs[j].default_value;
        }
    }
    return 1;
}

/**
 * Looks up and parses operator `name` with the given attributes. Returns the
 * parse status (MXK_ERR_NOT_FOUND for an unknown op / attribute); err gets the message.
 */
static mxk_status bind_op(bound *b, const char *name, const kv *given, int n, mxk_error_sink *err) {
    memset(b, 0, sizeof *b);
    sink_reset(err);
    b->op = find_op(name);
    b->k = find_kernel(name);
    if (b->op == NULL || b->k == NULL)
        return th_error(err, MXK_ERR_NOT_FOUND, "no op/kernel %s", name);
    mxk_attrs a;
    if (!build_attrs(b->op, given, n, &a))
        return th_error(err, MXK_ERR_NOT_FOUND, "unknown attribute");
    for (uint32_t j = 0; j < b->op->def.num_attrs; j++)
        if (b->op->attrs[j].required && th_attr_get(&a, b->op->attrs[j].name) == NULL)
            return th_error(err, MXK_ERR_INVALID_ARGUMENT, "missing required %s",
                            b->op->attrs[j].name);
    if (b->op->def.parse_param != NULL) {
        mxk_status st = b->op->def.parse_param(&a, &b->param, err);
        if (st != MXK_OK)
            return st;
    }
    if (b->op->def.list_arguments != NULL) {
        static mxk_name_list l; /* names copied out below */
        static char keep[T_MAX_NAMES][64];
        l.n = 0;
        mxk_status st = b->op->def.list_arguments(b->param, &l, err);
        if (st != MXK_OK)
            return st;
        b->ni = (uint32_t)l.n;
        for (int i = 0; i < l.n && i < T_MAX_NAMES; i++) {
            strcpy(keep[i], l.names[i]);
            b->arg_names[i] = keep[i];
        }
    } else if (b->op->def.arguments != NULL) {
        while (b->op->args[b->ni] != NULL) {
            b->arg_names[b->ni] = b->op->args[b->ni];
            b->ni++;
        }
    } else {
        b->ni = 1;
        b->arg_names[0] = "data";
    }
    b->no = 0;
    if (b->op->def.outputs != NULL)
        while (b->op->outs[b->no] != NULL)
            b->no++;
    else
        b->no = 1;
    return MXK_OK;
}

/** Frees the parameters of a bound operator. */
static void unbind(bound *b) {
    if (b->param != NULL && b->op->def.free_param != NULL)
        b->op->def.free_param(b->param);
    b->param = NULL;
}

/** Runs infer_shape on copies of in (b->ni) / out (b->no) shapes; results written back. */
static mxk_status infer_shapes(const bound *b, mxk_shape *in, mxk_shape *out, mxk_error_sink *err) {
    sink_reset(err);
    return b->op->def.infer_shape(b->param, in, b->ni, out, b->no, NULL, 0, err);
}

/** Thread knob handed to kernels by call_forward / call_backward. */
static uint32_t t_threads = 2;

/** The op context the tests use. */
static mxk_op_ctx t_ctx(uint32_t threads) {
    mxk_op_ctx c;
    memset(&c, 0, sizeof c);
    c.struct_size = sizeof c;
    c.dev_type = MXK_DEV_CPU;
    c.is_train = 1;
    c.need_grad = 1;
    c.num_threads = threads;
    return c;
}

/** Calls forward with one output. */
static mxk_status call_forward(const bound *b, const mxk_tensor *in, const mxk_tensor *out,
                               mxk_op_req req, mxk_error_sink *err) {
    const mxk_tensor *ip[8], *op[1] = {out};
    for (uint32_t i = 0; i < b->ni; i++)
        ip[i] = &in[i];
    mxk_forward_args a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.num_in = b->ni;
    a.in_data = ip;
    a.num_out = 1;
    a.out_data = op;
    a.req = &req;
    mxk_op_ctx c = t_ctx(t_threads);
    sink_reset(err);
    return b->k->def.forward(&c, b->param, NULL, &a, err);
}

/** Calls backward with one output; grads/req have b->ni entries. */
static mxk_status call_backward(const bound *b, const mxk_tensor *dy, const mxk_tensor *in,
                                const mxk_tensor *out, const mxk_tensor *grads,
                                const mxk_op_req *req, mxk_error_sink *err) {
    const mxk_tensor *ip[8], *gp[8], *og[1] = {dy}, *od[1] = {out};
    for (uint32_t i = 0; i < b->ni; i++) {
        ip[i] = &in[i];
        gp[i] = &grads[i];
    }
    mxk_backward_args a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    a.num_out_grad = 1;
    a.out_grad = og;
    a.num_in = b->ni;
    a.in_data = ip;
    a.num_out = 1;
    a.out_data = od;
    a.in_grad = gp;
    a.req = req;
    mxk_op_ctx c = t_ctx(t_threads);
    sink_reset(err);
    return b->k->def.backward(&c, b->param, NULL, &a, err);
}

/* ------------------------------------------------------------------------- */
/* Comparisons                                                                */
/* ------------------------------------------------------------------------- */

/** Compares n floats with float64 expectations: |got - want| <= tol * (1 + |want|). */
static int check_close_(const char *file, int line, const char *what, const float *got,
                        const double *want, size_t n, double tol) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)got[i] - want[i]);
        if (!(d <= tol * (1.0 + fabs(want[i])))) {
            if (bad < 5)
                fprintf(stderr, "%s:%d: %s[%zu] = %.9g, expected %.9g\n", file, line, what, i,
                        (double)got[i], want[i]);
            bad++;
        }
    }
    if (bad) {
        fprintf(stderr, "%s:%d: %s: %zu of %zu values differ\n", file, line, what, bad, n);
        mxk_t_failed_checks++;
    }
    return bad == 0;
}
#define CHECK_CLOSE(what, got, want, n, tol)                                                       \
    check_close_(__FILE__, __LINE__, what, got, want, n, tol)

/** Checks n floats all equal v exactly. */
static int check_all_(const char *file, int line, const char *what, const float *got, size_t n,
                      float v) {
    for (size_t i = 0; i < n; i++)
        if (got[i] != v) {
            fprintf(stderr, "%s:%d: %s[%zu] = %.9g, expected exactly %.9g\n", file, line, what, i,
                    (double)got[i], (double)v);
            mxk_t_failed_checks++;
            return 0;
        }
    return 1;
}
#define CHECK_ALL(what, got, n, v) check_all_(__FILE__, __LINE__, what, got, n, v)

/** Checks a status and prints the sink's message when it differs. */
#define CHECK_ST(expr, want, err)                                                                  \
    do {                                                                                           \
        mxk_status st_ = (expr);                                                                   \
        if (st_ != (want))                                                                         \
            fprintf(stderr, "%s:%d: status %d (want %d): %s\n", __FILE__, __LINE__, (int)st_,      \
                    (int)(want), (err)->msg);                                                      \
        CHECK_EQ_INT(st_, want);                                                                   \
    } while (0)

/* ------------------------------------------------------------------------- */
/* The generic operator check                                                 */
/* ------------------------------------------------------------------------- */

typedef struct op_case op_case;
/** Float64 reference forward: in[i] has cnt(c->in[i]) values, out cnt(c->out). */
typedef void (*ref_fn)(const op_case *c, double *const *in, double *out);
/** Float64 reference backward for ops whose backward is not d(forward): grads[i] per input. */
typedef void (*ref_bwd_fn)(const op_case *c, double *const *in, const double *y, const double *dy,
                           double **grads);

/** One configuration of one operator. */
struct op_case {
    const char *op;
    kv attrs[8];
    int nattrs;
    uint32_t ni;
    mxk_shape in[4];
    mxk_shape out;  /**< expected output shape */
    double lo, hi;  /**< range of random inputs */
    double min_abs; /**< random inputs keep |x| >= min_abs (kinks, division) */
    ref_fn ref;
    ref_bwd_fn ref_bwd;    /**< closed-form backward; NULL: tests/opcheck checks it */
    const float *fixed[4]; /**< fixed input values (NULL: random) */
    int ip[4];             /**< integer parameters of the reference */
    double dp[4];          /**< real parameters of the reference */
};

/** Random value in [lo, hi) with |v| >= min_abs. */
static float rand_in(double lo, double hi, double min_abs) {
    for (;;) {
        double v = lo + (hi - lo) * urand();
        if (fabs(v) >= min_abs)
            return (float)v;
    }
}

/**
 * Checks one operator configuration against its references: shape inference from
 * the inputs, type inference (float32 everywhere; a float64 input among float32
 * ones rejected naming it), forward (WRITE) against the float64 reference and, for
 * operators whose backward is not the derivative of their forward (ref_bwd:
 * SoftmaxOutput, BlockGrad), backward (WRITE) against that closed form. Gradients
 * by finite differences, the write requests, in-place runs and undeclared
 * dependencies are the operator test kit's checks (tests/opcheck runs them on
 * every operator).
 */
static void run_case(const op_case *c) {
    mxk_error_sink err;
    bound b;
    char what[160];
    mxk_status st = bind_op(&b, c->op, c->attrs, c->nattrs, &err);
    CHECK_ST(st, MXK_OK, &err);
    if (st != MXK_OK)
        return;
    CHECK_EQ_INT(b.ni, c->ni);
    CHECK_EQ_INT(b.no, 1);
    CHECK(b.k->def.flags & MXK_KERNEL_SUPPORTS_ADDTO);
    if (b.ni != c->ni || b.no != 1) {
        unbind(&b);
        return;
    }

    /* shape inference from the inputs */
    mxk_shape is[4], os[1];
    for (uint32_t i = 0; i < c->ni; i++)
        is[i] = c->in[i];
    os[0] = mxk_sdk_shape_unknown();
    CHECK_ST(infer_shapes(&b, is, os, &err), MXK_OK, &err);
    if (!mxk_sdk_shape_equal(&os[0], &c->out))
        fprintf(stderr, "%s: inferred output %s, expected %s\n", c->op, fmt_shape(&os[0]),
                fmt_shape(&c->out));
    CHECK(mxk_sdk_shape_equal(&os[0], &c->out));
    for (uint32_t i = 0; i < c->ni; i++)
        CHECK(mxk_sdk_shape_equal(&is[i], &c->in[i]));

    /* type inference: float32 everywhere; a float64 input among float32 ones rejected
     * naming it (one input of another dtype is not a mix: Reshape takes any) */
    if (b.op->def.infer_type != NULL && c->ni >= 2) {
        int32_t it[4], ot[1] = {-1};
        for (uint32_t i = 0; i < c->ni; i++)
            it[i] = -1;
        it[0] = MXK_FLOAT32;
        sink_reset(&err);
        CHECK_ST(b.op->def.infer_type(b.param, it, b.ni, ot, 1, NULL, 0, &err), MXK_OK, &err);
        for (uint32_t i = 0; i < c->ni; i++)
            CHECK_EQ_INT(it[i], MXK_FLOAT32);
        CHECK_EQ_INT(ot[0], MXK_FLOAT32);
        it[c->ni - 1] = MXK_FLOAT64;
        ot[0] = -1;
        sink_reset(&err);
        CHECK_ST(b.op->def.infer_type(b.param, it, b.ni, ot, 1, NULL, 0, &err), MXK_ERR_TYPE, &err);
        CHECK_CONTAINS(err.msg, "float64");
        CHECK_CONTAINS(err.msg, b.arg_names[c->ni - 1]);
    }

    /* inputs and the float64 reference */
    float *x[4];
    double *xd[4];
    size_t n[4];
    mxk_tensor tin[4];
    for (uint32_t i = 0; i < c->ni; i++) {
        n[i] = cnt(&c->in[i]);
        x[i] = falloc(n[i], 0.0f);
        xd[i] = malloc((n[i] + 1) * sizeof(double));
        for (size_t k = 0; k < n[i]; k++) {
            x[i][k] = c->fixed[i] ? c->fixed[i][k] : rand_in(c->lo, c->hi, c->min_abs);
            xd[i][k] = x[i][k];
        }
        tin[i] = mk(x[i], c->in[i]);
    }
    size_t ny = cnt(&c->out);
    double *yref = malloc((ny + 1) * sizeof(double));
    c->ref(c, xd, yref);

    /* forward over 5: WRITE gives the reference */
    float *y = falloc(ny, 5.0f);
    mxk_tensor ty = mk(y, c->out);
    CHECK_ST(call_forward(&b, tin, &ty, MXK_REQ_WRITE, &err), MXK_OK, &err);
    snprintf(what, sizeof what, "%s forward", c->op);
    CHECK_CLOSE(what, y, yref, ny, 2e-5);

    /* backward against the closed form, every tensor given */
    if (c->ref_bwd != NULL) {
        double *r = malloc((ny + 1) * sizeof(double));
        float *rf = falloc(ny, 0.0f);
        for (size_t k = 0; k < ny; k++) {
            rf[k] = (float)(2.0 * urand() - 1.0);
            r[k] = rf[k];
        }
        double *gref[4];
        float *g[4];
        mxk_tensor gt[4];
        mxk_op_req rq[4];
        for (uint32_t i = 0; i < c->ni; i++) {
            gref[i] = calloc(n[i] + 1, sizeof(double));
            g[i] = falloc(n[i], 5.0f);
            gt[i] = mk(g[i], c->in[i]);
            rq[i] = MXK_REQ_WRITE;
        }
        c->ref_bwd(c, xd, yref, r, gref);
        mxk_tensor dy = mk(rf, c->out);
        CHECK_ST(call_backward(&b, &dy, tin, &ty, gt, rq, &err), MXK_OK, &err);
        for (uint32_t i = 0; i < c->ni; i++) {
            snprintf(what, sizeof what, "%s backward d%s", c->op, b.arg_names[i]);
            CHECK_CLOSE(what, g[i], gref[i], n[i], 2e-4);
            free(gref[i]);
            free(g[i]);
        }
        free(r);
        free(rf);
    }

    for (uint32_t i = 0; i < c->ni; i++) {
        free(x[i]);
        free(xd[i]);
    }
    free(yref);
    free(y);
    unbind(&b);
}

/* ------------------------------------------------------------------------- */
/* Float64 references                                                         */
/* ------------------------------------------------------------------------- */

/** FullyConnected: ip = {num_hidden, no_bias, flatten}. */
static void ref_fc(const op_case *c, double *const *in, double *out) {
    const mxk_shape *d = &c->in[0];
    size_t H = (size_t)c->ip[0];
    size_t K = c->ip[2] ? cnt(d) / (size_t)d->dims[0] : (size_t)d->dims[d->ndim - 1];
    size_t M = cnt(d) / K;
    for (size_t m = 0; m < M; m++)
        for (size_t h = 0; h < H; h++) {
            double s = c->ip[1] ? 0.0 : in[2][h];
            for (size_t k = 0; k < K; k++)
                s += in[0][m * K + k] * in[1][h * K + k];
            out[m * H + h] = s;
        }
}

/** Activation: ip[0] = 0 relu, 1 sigmoid, 2 tanh, 3 softrelu, 4 softsign. */
static double act_ref1(int t, double x) {
    switch (t) {
    case 0:
        return x > 0 ? x : 0;
    case 1:
        return 1.0 / (1.0 + exp(-x));
    case 2:
        return tanh(x);
    case 3:
        return x > 20 ? x : log1p(exp(x));
    default:
        return x / (1.0 + fabs(x));
    }
}
/** Activation reference over the whole input. */
static void ref_act(const op_case *c, double *const *in, double *out) {
    for (size_t i = 0; i < cnt(&c->in[0]); i++)
        out[i] = act_ref1(c->ip[0], in[0][i]);
}

/** Binary element-wise: ip[0] = 0 +, 1 -, 2 *, 3 /. */
static void ref_ew(const op_case *c, double *const *in, double *out) {
    for (size_t i = 0; i < cnt(&c->in[0]); i++) {
        double a = in[0][i], b = in[1][i];
        out[i] = c->ip[0] == 0 ? a + b : c->ip[0] == 1 ? a - b : c->ip[0] == 2 ? a * b : a / b;
    }
}

/** Scalar ops: ip[0] = 0 x+s, 1 x-s, 2 s-x, 3 x*s, 4 x/s, 5 s/x; dp[0] = s. */
static void ref_sc(const op_case *c, double *const *in, double *out) {
    double s = c->dp[0];
    for (size_t i = 0; i < cnt(&c->in[0]); i++) {
        double x = in[0][i];
        double v[6] = {x + s, x - s, s - x, x * s, x / s, s / x};
        out[i] = v[c->ip[0]];
    }
}

/** Identity (Reshape, Flatten, _copyto, BlockGrad forward). */
static void ref_identity(const op_case *c, double *const *in, double *out) {
    for (size_t i = 0; i < cnt(&c->in[0]); i++)
        out[i] = in[0][i];
}

/** BlockGrad backward: zero. */
static void ref_bwd_zero(const op_case *c, double *const *in, const double *y, const double *dy,
                         double **grads) {
    for (size_t i = 0; i < cnt(&c->in[0]); i++)
        grads[0][i] = 0.0;
}

/** dot: ip = {transpose_a, transpose_b}; lhs/rhs viewed as matrices as MXNet does. */
static void ref_dot(const op_case *c, double *const *in, double *out) {
    const mxk_shape *l = &c->in[0], *r = &c->in[1];
    if (l->ndim == 1 && r->ndim == 1) {
        double s = 0;
        for (int64_t i = 0; i < l->dims[0]; i++)
            s += in[0][i] * in[1][i];
        out[0] = s;
        return;
    }
    size_t nl = cnt(l), nr = cnt(r);
    size_t k = c->ip[0] ? (size_t)l->dims[0] : (size_t)l->dims[l->ndim - 1];
    size_t m = nl / k;
    size_t kb = c->ip[1] ? (size_t)r->dims[r->ndim - 1] : (size_t)r->dims[0];
    size_t n = nr / kb;
    for (size_t i = 0; i < m; i++)
        for (size_t j = 0; j < n; j++) {
            double s = 0;
            for (size_t q = 0; q < k; q++) {
                double a = c->ip[0] ? in[0][q * m + i] : in[0][i * k + q];
                double bb = c->ip[1] ? in[1][j * k + q] : in[1][q * n + j];
                s += a * bb;
            }
            out[i * n + j] = s;
        }
}

/** sum: ip[0] = bit mask of the reduced input axes. */
static void ref_sum(const op_case *c, double *const *in, double *out) {
    const mxk_shape *d = &c->in[0];
    for (size_t o = 0; o < cnt(&c->out); o++)
        out[o] = 0;
    for (size_t i = 0; i < cnt(d); i++) {
        size_t rem = i, o = 0, mul = 1;
        for (int a = d->ndim - 1; a >= 0; a--) {
            size_t idx = rem % (size_t)d->dims[a];
            rem /= (size_t)d->dims[a];
            if (!(c->ip[0] & (1 << a))) {
                o += idx * mul;
                mul *= (size_t)d->dims[a];
            }
        }
        out[o] += in[0][i];
    }
}

/** The softmax view of SoftmaxOutput: ip[0] = 0 default, 1 preserve_shape, 2 multi_output. */
static void smo_ref_view(const op_case *c, size_t *outer, size_t *k, size_t *inner) {
    const mxk_shape *d = &c->in[0];
    size_t total = cnt(d);
    if (c->ip[0] == 2) {
        *outer = (size_t)d->dims[0];
        *k = (size_t)d->dims[1];
        *inner = total / *outer / *k;
    } else if (c->ip[0] == 1) {
        *k = (size_t)d->dims[d->ndim - 1];
        *outer = total / *k;
        *inner = 1;
    } else {
        *outer = (size_t)d->dims[0];
        *k = total / *outer;
        *inner = 1;
    }
}

/** SoftmaxOutput forward. */
static void ref_smo(const op_case *c, double *const *in, double *out) {
    size_t outer, k, inner;
    smo_ref_view(c, &outer, &k, &inner);
    for (size_t o = 0; o < outer; o++)
        for (size_t r = 0; r < inner; r++) {
            double mx = -INFINITY, s = 0;
            for (size_t j = 0; j < k; j++)
                mx = fmax(mx, in[0][(o * k + j) * inner + r]);
            for (size_t j = 0; j < k; j++)
                s += exp(in[0][(o * k + j) * inner + r] - mx);
            for (size_t j = 0; j < k; j++)
                out[(o * k + j) * inner + r] = exp(in[0][(o * k + j) * inner + r] - mx) / s;
        }
}

/**
 * SoftmaxOutput backward (the cross-entropy gradient; MXNet softmax_output-inl.h):
 * ip[1] use_ignore, ip[2] normalization (0 null, 1 batch, 2 valid), ip[3] out_grad (which
 * multiplies by the output y, as upstream 1.9.1's SoftmaxOutputGradCompute);
 * dp[0] grad_scale, dp[1] ignore_label, dp[2] smooth_alpha.
 */
static void ref_bwd_smo(const op_case *c, double *const *in, const double *y, const double *dy,
                        double **grads) {
    size_t outer, k, inner, total = cnt(&c->in[0]);
    smo_ref_view(c, &outer, &k, &inner);
    const double *lab = in[1];
    for (size_t i = 0; i < cnt(&c->in[1]); i++)
        grads[1][i] = 0.0;
    if (mxk_sdk_shape_equal(&c->in[0], &c->in[1])) {
        for (size_t i = 0; i < total; i++)
            grads[0][i] = (y[i] - lab[i]) * c->dp[0] * (c->ip[3] ? y[i] : 1.0);
        return;
    }
    size_t nlab = outer * inner;
    double valid = 1;
    if (c->ip[2] == 1)
        valid = (double)nlab;
    if (c->ip[2] == 2) {
        size_t v = 0;
        for (size_t i = 0; i < nlab; i++)
            v += (int)lab[i] != (int)c->dp[1];
        valid = v ? (double)v : 1.0;
    }
    if (c->ip[0] == 2 && c->ip[2] == 0)
        valid = (double)inner;
    double a = c->dp[2];
    for (size_t o = 0; o < outer; o++)
        for (size_t r = 0; r < inner; r++) {
            double l = lab[o * inner + r];
            int ign = c->ip[1] && (int)l == (int)c->dp[1];
            for (size_t j = 0; j < k; j++) {
                size_t i = (o * k + j) * inner + r;
                double t = (int)j == (int)l ? 1.0 - a : a / (double)(k - 1);
                double g = ign ? 0.0 : (y[i] - t) * c->dp[0] / valid;
                grads[0][i] = g * (c->ip[3] ? y[i] : 1.0);
            }
        }
}

/* ------------------------------------------------------------------------- */
/* Plugin, registration, device, threads                                      */
/* ------------------------------------------------------------------------- */

/** mxk_plugin_get_info: constant data for ABI 1.x, name cpu-blas. */
static void test_plugin_info(void) {
    const mxk_plugin_info *i = t_get_info();
    CHECK(i != NULL);
    if (i == NULL)
        return;
    CHECK(i == t_get_info());
    CHECK_EQ_INT(i->struct_size, sizeof(mxk_plugin_info));
    CHECK_EQ_INT(i->abi_major, MXK_ABI_MAJOR);
    CHECK_EQ_INT(i->abi_minor, MXK_ABI_MINOR);
    CHECK(i->min_host_minor <= MXK_ABI_MINOR);
    CHECK(strcmp(i->name, "cpu-blas") == 0);
    CHECK(i->version != NULL && i->description != NULL);
    CHECK(i->provides & MXK_PROVIDES_OPERATORS);
    CHECK(i->provides & MXK_PROVIDES_KERNELS);
    CHECK(i->provides & MXK_PROVIDES_DEVICES);
}

/** Every operator is registered once, with a CPU kernel of backend cpu-blas. */
static void test_registration(void) {
    static const char *const names[] = {"FullyConnected",
                                        "Activation",
                                        "SoftmaxOutput",
                                        "_plus",
                                        "_minus",
                                        "_mul",
                                        "_div",
                                        "elemwise_add",
                                        "elemwise_sub",
                                        "elemwise_mul",
                                        "elemwise_div",
                                        "_plus_scalar",
                                        "_minus_scalar",
                                        "_rminus_scalar",
                                        "_mul_scalar",
                                        "_div_scalar",
                                        "_rdiv_scalar",
                                        "dot",
                                        "sum",
                                        "Flatten",
                                        "Reshape",
                                        "BlockGrad",
                                        "_copyto"};
    CHECK_EQ_INT(t_reg_problems, 0);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const cap_op *op = find_op(names[i]);
        const cap_kernel *k = find_kernel(names[i]);
        if (op == NULL || k == NULL)
            fprintf(stderr, "missing operator or kernel %s\n", names[i]);
        CHECK(op != NULL && k != NULL);
        if (k == NULL)
            continue;
        CHECK(strcmp(k->def.backend, "cpu-blas") == 0);
        CHECK(k->def.flags & MXK_KERNEL_SUPPORTS_ADDTO);
        CHECK(k->def.backward != NULL);
        int32_t f32[3] = {MXK_FLOAT32, MXK_FLOAT32, MXK_FLOAT32};
        if (k->def.supports != NULL) /* float32 always; Flatten and Reshape take every dtype */
            CHECK(k->def.supports(NULL, NULL, f32, 3) == 1);
    }
    CHECK_EQ_INT(t_nops, t_nkernels);
    CHECK_EQ_INT(t_ndevices, 1);
}

/** Options: num_threads must be an integer in [0, 4096]. */
static void test_init_options(void) {
    mxk_error_sink err;
    mxk_attrs opt = {1, {"num_threads"}, {"many"}};
    sink_reset(&err);
    CHECK_ST(plugin_init_with(&opt, &err), MXK_ERR_INVALID_ARGUMENT, &err);
    CHECK_CONTAINS(err.msg, "num_threads");
    CHECK_CONTAINS(err.msg, "many");
    opt.v[0] = "-1";
    sink_reset(&err);
    CHECK_ST(plugin_init_with(&opt, &err), MXK_ERR_INVALID_ARGUMENT, &err);
    opt.v[0] = "2";
    sink_reset(&err);
    CHECK_ST(plugin_init_with(&opt, &err), MXK_OK, &err);
    CHECK_EQ_INT(t_reg_problems, 0);
    /* a host table of another (smaller) layout is rejected */
    mxk_host_api small = t_host;
    small.struct_size = 16;
    mxk_plugin_init_args args;
    memset(&args, 0, sizeof args);
    args.struct_size = sizeof args;
    args.host = &small;
    args.registrar = &t_reg;
    registrar_reset();
    sink_reset(&err);
    CHECK_ST(t_init(&args, &err), MXK_ERR_ABI, &err);
    CHECK_CONTAINS(err.msg, "host table too small");
    CHECK_EQ_INT(t_nops, 0);
    small.struct_size = 8; /* not even the error slot: refused without a message */
    sink_reset(&err);
    CHECK_ST(t_init(&args, &err), MXK_ERR_ABI, &err);
    CHECK(err.msg[0] == '\0');
    sink_reset(&err);
    CHECK_ST(plugin_init_with(NULL, &err), MXK_OK, &err);
}

/** The CPU device backend. */
static void test_device(void) {
    mxk_error_sink err;
    CHECK_EQ_INT(t_device.dev_type, MXK_DEV_CPU);
    CHECK(strcmp(t_device.name, "cpu") == 0);
    /* one cpu(i) per online CPU, all aliases of host memory */
    int32_t ncpu = t_device.device_count();
    CHECK_EQ_INT(ncpu, sysconf(_SC_NPROCESSORS_ONLN));
    CHECK(t_device.stream_create == NULL && t_device.stream_destroy == NULL);
    mxk_device_props p;
    memset(&p, 0, sizeof p);
    p.struct_size = sizeof p;
    CHECK_ST(t_device.get_properties(0, &p, &err), MXK_OK, &err);
    CHECK(p.name[0] != '\0');
    CHECK(p.total_memory > 0);
    CHECK_EQ_INT(p.alignment, 64);
    CHECK_ST(t_device.get_properties(ncpu - 1, &p, &err), MXK_OK, &err);
    CHECK_ST(t_device.get_properties(ncpu, &p, &err), MXK_ERR_INVALID_ARGUMENT, &err);
    CHECK_ST(t_device.get_properties(-1, &p, &err), MXK_ERR_INVALID_ARGUMENT, &err);
    /* an older, smaller props struct: fields past its size are not written */
    mxk_device_props q;
    memset(&q, 0x7f, sizeof q);
    q.struct_size = (uint32_t)offsetof(mxk_device_props, total_memory);
    CHECK_ST(t_device.get_properties(0, &q, &err), MXK_OK, &err);
    CHECK(q.alignment == 0x7f7f7f7fu);

    void *a = NULL, *b = NULL;
    CHECK_ST(t_device.alloc(0, 1000, &a, &err), MXK_OK, &err);
    CHECK_ST(t_device.alloc(0, 3, &b, &err), MXK_OK, &err);
    CHECK(a != NULL && ((uintptr_t)a % 64) == 0);
    CHECK(b != NULL && ((uintptr_t)b % 64) == 0);
    void *c = (void *)&err;
    CHECK_ST(t_device.alloc(0, 0, &c, &err), MXK_ERR_INVALID_ARGUMENT, &err);
    CHECK_ST(t_device.alloc(0, UINT64_MAX, &c, &err), MXK_ERR_OUT_OF_MEMORY, &err);
    CHECK(c == NULL);
    CHECK_ST(t_device.alloc(2, 16, &c, &err), MXK_ERR_INVALID_ARGUMENT, &err);

    /* fill every dtype */
    CHECK_ST(t_device.fill(0, a, MXK_FLOAT32, 10, 1.5, NULL, &err), MXK_OK, &err);
    CHECK_ALL("fill float32", (float *)a, 10, 1.5f);
    CHECK_ST(t_device.fill(0, a, MXK_FLOAT64, 10, 0.1, NULL, &err), MXK_OK, &err);
    CHECK(((double *)a)[0] == 0.1 && ((double *)a)[9] == 0.1);
    static const struct {
        double v;
        uint16_t bits;
    } h[] = {{1.0, 0x3C00},
             {-2.5, 0xC100},
             {0.1, 0x2E66},
             {65504.0, 0x7BFF},
             {1e6, 0x7C00},
             {0.0, 0x0000},
             {5.960464477539063e-08, 0x0001}};
    for (size_t i = 0; i < sizeof h / sizeof h[0]; i++) {
        CHECK_ST(t_device.fill(0, a, MXK_FLOAT16, 7, h[i].v, NULL, &err), MXK_OK, &err);
        CHECK_EQ_INT(((uint16_t *)a)[0], h[i].bits);
        CHECK_EQ_INT(((uint16_t *)a)[6], h[i].bits);
    }
    CHECK_ST(t_device.fill(0, a, MXK_UINT8, 5, 300.0, NULL, &err), MXK_OK, &err);
    CHECK_EQ_INT(((uint8_t *)a)[4], 255);
    CHECK_ST(t_device.fill(0, a, MXK_UINT8, 5, -5.0, NULL, &err), MXK_OK, &err);
    CHECK_EQ_INT(((uint8_t *)a)[0], 0);
    CHECK_ST(t_device.fill(0, a, MXK_INT8, 5, -200.0, NULL, &err), MXK_OK, &err);
    CHECK_EQ_INT(((int8_t *)a)[2], -128);
    CHECK_ST(t_device.fill(0, a, MXK_INT32, 5, 3.7, NULL, &err), MXK_OK, &err);
    CHECK_EQ_INT(((int32_t *)a)[4], 3);
    CHECK_ST(t_device.fill(0, a, MXK_INT64, 5, -3.7, NULL, &err), MXK_OK, &err);
    CHECK_EQ_INT(((int64_t *)a)[4], -3);
    CHECK_ST(t_device.fill(0, a, MXK_INT64, 5, 1e30, NULL, &err), MXK_OK, &err);
    CHECK(((int64_t *)a)[0] == INT64_MAX);
    CHECK_ST(t_device.fill(0, a, MXK_INT32, 5, NAN, NULL, &err), MXK_OK, &err);
    CHECK_EQ_INT(((int32_t *)a)[0], 0);
    CHECK_ST(t_device.fill(0, a, 9, 5, 1.0, NULL, &err), MXK_ERR_INVALID_ARGUMENT, &err);

    /* copies in every direction */
    float src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dst[8] = {0};
    CHECK_ST(t_device.copy(MXK_COPY_HOST_TO_DEVICE, a, 0, src, 0, sizeof src, NULL, &err), MXK_OK,
             &err);
    CHECK_ST(
        t_device.copy(MXK_COPY_DEVICE_TO_DEVICE, (float *)a + 8, 0, a, 0, sizeof src, NULL, &err),
        MXK_OK, &err);
    CHECK_ST(
        t_device.copy(MXK_COPY_DEVICE_TO_HOST, dst, 0, (float *)a + 8, 0, sizeof dst, NULL, &err),
        MXK_OK, &err);
    CHECK(memcmp(src, dst, sizeof src) == 0);
    CHECK_ST(t_device.copy(MXK_COPY_DEVICE_TO_HOST, dst, 0, a, 3, 4, NULL, &err),
             MXK_ERR_INVALID_ARGUMENT, &err);
    CHECK_ST(t_device.copy((mxk_copy_kind)7, dst, 0, a, 0, 4, NULL, &err), MXK_ERR_INVALID_ARGUMENT,
             &err);
    CHECK_ST(t_device.synchronize(0, NULL, &err), MXK_OK, &err);
    t_device.free(0, a);
    t_device.free(0, b);
    t_device.free(0, NULL);
}

/** Threads of this process ("Threads:" of /proc/self/status); -1 when unreadable. */
static int proc_threads(void) {
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    char line[256];
    int n = -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (sscanf(line, "Threads: %d", &n) == 1)
            break;
    fclose(f);
    return n;
}

/** Inputs of the big FullyConnected case: x (64 x 256), w (96 x 256), bias (96). */
typedef struct fc_big {
    float x[64 * 256], w[96 * 256], bias[96];
    double want[64 * 96]; /**< x w^T + bias in float64 */
} fc_big;

/** The big FullyConnected case, made on first use from the test's random stream. */
static const fc_big *fc_big_case(void) {
    static fc_big c;
    static int ready;
    if (ready)
        return &c;
    for (int i = 0; i < 64 * 256; i++)
        c.x[i] = (float)(urand() - 0.5);
    for (int i = 0; i < 96 * 256; i++)
        c.w[i] = (float)(urand() - 0.5);
    for (int i = 0; i < 96; i++)
        c.bias[i] = (float)(urand() - 0.5);
    for (int m = 0; m < 64; m++)
        for (int h = 0; h < 96; h++) {
            double s = c.bias[h];
            for (int k = 0; k < 256; k++)
                s += (double)c.x[m * 256 + k] * c.w[h * 256 + k];
            c.want[m * 96 + h] = s;
        }
    ready = 1;
    return &c;
}

/**
 * FullyConnected (64 x 256) . (96 x 256)^T + b, big enough to be split, with
 * knob `threads`: returns the number of outputs off the float64 result (-1 when
 * the call fails), and leaves the output in y (64 x 96).
 */
static int fc_big_forward(uint32_t threads, float *y) {
    const fc_big *c = fc_big_case();
    float *x = (float *)c->x, *w = (float *)c->w, *bias = (float *)c->bias;
    const double *want = c->want;
    mxk_error_sink err;
    bound b;
    kv at[] = {{"num_hidden", "96"}};
    if (bind_op(&b, "FullyConnected", at, 1, &err) != MXK_OK)
        return -1;
    mxk_tensor in[3] = {mk(x, SHP(64, 256)), mk(w, SHP(96, 256)), mk(bias, SHP(96))};
    mxk_tensor out = mk(y, SHP(64, 96));
    uint32_t saved = t_threads;
    t_threads = threads;
    mxk_status st = call_forward(&b, in, &out, MXK_REQ_WRITE, &err);
    t_threads = saved;
    unbind(&b);
    if (st != MXK_OK)
        return -1;
    int bad = 0;
    for (int i = 0; i < 64 * 96; i++)
        bad += !(fabs(y[i] - want[i]) <= 1e-4 * (1 + fabs(want[i])));
    return bad;
}

/** Built with ThreadSanitizer (gcc's macro, or clang's feature test)? */
#if defined(__SANITIZE_THREAD__)
#define T_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define T_TSAN 1
#endif
#endif
#ifndef T_TSAN
#define T_TSAN 0
#endif

/** A thread that does nothing (test_threads starts one to settle the runtime's own threads). */
static void *noop_thread(void *arg) {
    return arg;
}

/**
 * The thread knob sizes the plugin's pool (knob 1: no worker; knob 3: two), the
 * option num_threads caps it, OpenBLAS stays at one thread, the result does not
 * depend on the thread count, a forked child computes with a pool of its own
 * (not under TSan, which refuses threads in the child of a multi-threaded
 * fork), and mxk_plugin_shutdown joins the workers.
 */
static void test_threads(void) {
    void (*shutdown)(void) = NULL;
    *(void **)&shutdown = dlsym(t_dl, MXK_PLUGIN_SHUTDOWN_SYMBOL);
    CHECK(shutdown != NULL);
    if (shutdown == NULL)
        return;
    if (t_openblas_get_num_threads != NULL)
        CHECK_EQ_INT(t_openblas_get_num_threads(), 1);
    shutdown();
    /* A sanitizer runtime starts a background thread of its own with the first
       pthread_create; start one here so that it is counted in `base`. */
    pthread_t first;
    CHECK_EQ_INT(pthread_create(&first, NULL, noop_thread, NULL), 0);
    pthread_join(first, NULL);
    int base = proc_threads();
    if (base < 0)
        MXK_SKIP("/proc/self/status is not readable");
    static float y1[64 * 96], y3[64 * 96];
    CHECK_EQ_INT(fc_big_forward(1, y1), 0);
    CHECK_EQ_INT(proc_threads(), base);
    CHECK_EQ_INT(fc_big_forward(3, y3), 0);
    CHECK_EQ_INT(proc_threads(), base + 2);
    CHECK(memcmp(y1, y3, sizeof y1) == 0);
    if (t_openblas_get_num_threads != NULL)
        CHECK_EQ_INT(t_openblas_get_num_threads(), 1);
    /* a child of fork() starts with an empty pool (the workers are not copied) */
    if (T_TSAN) {
        printf("note: test_threads: fork check skipped under ThreadSanitizer\n");
    } else {
        fflush(NULL);
        pid_t child = fork();
        if (child == 0) {
            alarm(20); /* a hang is a failure */
            _exit(fc_big_forward(3, y3) == 0 && memcmp(y1, y3, sizeof y1) == 0 ? 0 : 1);
        }
        CHECK(child > 0);
        int status = -1;
        CHECK(child > 0 && waitpid(child, &status, 0) == child);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    shutdown();
    CHECK_EQ_INT(proc_threads(), base);
    shutdown(); /* idempotent */
    /* option num_threads=1 caps the knob: no worker is started */
    mxk_error_sink err;
    mxk_attrs opt = {1, {"num_threads"}, {"1"}};
    CHECK_ST(plugin_init_with(&opt, &err), MXK_OK, &err);
    CHECK_EQ_INT(fc_big_forward(3, y3), 0);
    CHECK_EQ_INT(proc_threads(), base);
    CHECK(memcmp(y1, y3, sizeof y1) == 0);
    CHECK_ST(plugin_init_with(NULL, &err), MXK_OK, &err);
}

/** One worker of test_threads_concurrent: FC forwards with its own knob. */
typedef struct fc_worker {
    const bound *b;
    uint32_t threads;
    const float *x, *w, *bias;
    const double *want;
    int bad;
} fc_worker;

/** Runs 40 FullyConnected forwards (64 x 256 . 256 x 96, split over the pool when it is free) with
 * the worker's knob. */
static void *fc_worker_main(void *arg) {
    fc_worker *wk = arg;
    static _Thread_local float y[64 * 96];
    mxk_tensor in[3] = {mk((float *)wk->x, SHP(64, 256)), mk((float *)wk->w, SHP(96, 256)),
                        mk((float *)wk->bias, SHP(96))};
    mxk_tensor out = mk(y, SHP(64, 96));
    for (int it = 0; it < 40; it++) {
        const mxk_tensor *ip[3] = {&in[0], &in[1], &in[2]}, *op[1] = {&out};
        mxk_op_req req = MXK_REQ_WRITE;
        mxk_forward_args a;
        memset(&a, 0, sizeof a);
        a.struct_size = sizeof a;
        a.num_in = 3;
        a.in_data = ip;
        a.num_out = 1;
        a.out_data = op;
        a.req = &req;
        mxk_op_ctx c = t_ctx(wk->threads);
        mxk_error_sink err;
        sink_reset(&err);
        if (wk->b->k->def.forward(&c, wk->b->param, NULL, &a, &err) != MXK_OK)
            wk->bad++;
        for (int i = 0; i < 64 * 96; i++)
            if (fabs(y[i] - wk->want[i]) > 1e-4 * (1 + fabs(wk->want[i])))
                wk->bad++;
    }
    return NULL;
}

/** Kernels on several engine-like threads with different knobs stay correct. */
static void test_threads_concurrent(void) {
    mxk_error_sink err;
    bound b;
    kv at[] = {{"num_hidden", "96"}};
    CHECK_ST(bind_op(&b, "FullyConnected", at, 1, &err), MXK_OK, &err);
    const fc_big *c = fc_big_case();
    const float *x = c->x, *w = c->w, *bias = c->bias;
    const double *want = c->want;
    fc_worker wk[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        wk[i] = (fc_worker){&b, 1u + (uint32_t)(i % 3), x, w, bias, want, 0};
        CHECK_EQ_INT(pthread_create(&th[i], NULL, fc_worker_main, &wk[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ_INT(wk[i].bad, 0);
    }
    unbind(&b);
}

/* ------------------------------------------------------------------------- */
/* SDK helpers                                                                */
/* ------------------------------------------------------------------------- */

/** Shape formatting, counts, merging and the assign message. */
static void test_sdk_shapes(void) {
    char buf[MXK_SDK_SHAPE_STR_MAX];
    mxk_shape a = SHP(128, 784), one = SHP(5), unk = mxk_sdk_shape_unknown();
    CHECK(strcmp(mxk_sdk_shape_format(&a, buf, sizeof buf), "(128,784)") == 0);
    CHECK(strcmp(mxk_sdk_shape_format(&one, buf, sizeof buf), "(5,)") == 0);
    CHECK(strcmp(mxk_sdk_shape_format(&unk, buf, sizeof buf), "()") == 0);
    mxk_shape big = SHP(2, 3, 4);
    CHECK_EQ_INT(mxk_sdk_shape_count(&big), 24);
    CHECK_EQ_INT(mxk_sdk_shape_count(&unk), 0);
    mxk_shape part = SHP(2, 0, 4);
    CHECK_EQ_INT(mxk_sdk_shape_count(&part), 0);
    CHECK(!mxk_sdk_shape_is_known(&part) && mxk_sdk_shape_is_known(&big));
    CHECK_EQ_INT(mxk_sdk_shape_prod(&big, 1, 3), 12);
    mxk_shape huge = SHP(1LL << 40, 1LL << 40);
    CHECK(mxk_sdk_shape_count(&huge) == UINT64_MAX);

    mxk_error_sink err;
    sink_reset(&err);
    mxk_shape slot = SHP(128, 100), want = SHP(128, 784);
    CHECK_EQ_INT(mxk_sdk_shape_assign(&slot, &want, "argument 'weight'", &err), MXK_ERR_SHAPE);
    CHECK(strcmp(err.msg, "argument 'weight': expected (128,784), got (128,100)") == 0);
    CHECK(mxk_sdk_shape_equal(&slot, &(mxk_shape){2, 0, {128, 100}}));
    slot = unk;
    CHECK_EQ_INT(mxk_sdk_shape_assign(&slot, &want, "x", &err), MXK_OK);
    CHECK(mxk_sdk_shape_equal(&slot, &want));
    slot = SHP(0, 784);
    mxk_shape w2 = SHP(128, 0);
    CHECK_EQ_INT(mxk_sdk_shape_assign_named(&slot, &w2, "argument", "w", &err), MXK_OK);
    CHECK(mxk_sdk_shape_equal(&slot, &want));
    slot = SHP(128);
    CHECK_EQ_INT(mxk_sdk_shape_assign_named(&slot, &want, "output", "y", &err), MXK_ERR_SHAPE);
    CHECK(strcmp(err.msg, "output 'y': expected (128,784), got (128,)") == 0);

    /* element-wise unification names the inconsistent argument */
    static const char *const names[] = {"lhs", "rhs", NULL};
    mxk_shape in[2] = {SHP(0, 3), SHP(2, 0)}, out[1] = {unk};
    CHECK_EQ_INT(mxk_sdk_infer_shape_same(in, 2, names, out, 1, NULL, &err), MXK_OK);
    CHECK(mxk_sdk_shape_equal(&out[0], &(mxk_shape){2, 0, {2, 3}}));
    CHECK(mxk_sdk_shape_equal(&in[0], &out[0]) && mxk_sdk_shape_equal(&in[1], &out[0]));
    in[1] = SHP(3, 2);
    CHECK_EQ_INT(mxk_sdk_infer_shape_same(in, 2, names, out, 1, NULL, &err), MXK_ERR_SHAPE);
    CHECK(strcmp(err.msg, "argument 'rhs': expected (2,3), got (3,2)") == 0);
}

/** dtype names, type assignment, attributes and options. */
static void test_sdk_types_attrs(void) {
    mxk_error_sink err;
    sink_reset(&err);
    CHECK(strcmp(mxk_sdk_dtype_name(MXK_FLOAT16), "float16") == 0);
    CHECK_EQ_INT(mxk_sdk_dtype_size(MXK_INT64), 8);
    CHECK_EQ_INT(mxk_sdk_dtype_size(42), 0);
    int32_t t = -1;
    CHECK_EQ_INT(mxk_sdk_type_assign(&t, MXK_FLOAT32, "argument 'data'", &err), MXK_OK);
    CHECK_EQ_INT(t, MXK_FLOAT32);
    t = MXK_FLOAT64;
    CHECK_EQ_INT(mxk_sdk_type_assign(&t, MXK_FLOAT32, "argument 'data'", &err), MXK_ERR_TYPE);
    CHECK(strcmp(err.msg, "argument 'data': expected float32, got float64") == 0);

    mxk_attrs at = {4, {"act_type", "n", "flag", "shape"}, {"foo", "12x", "True", "(2, -1)"}};
    int32_t idx = -1;
    CHECK_EQ_INT(mxk_sdk_attr_enum(&at, "act_type", "relu|sigmoid", &idx, &err),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(err.msg, "attribute 'act_type': expected one of relu|sigmoid, got 'foo'") == 0);
    at.v[0] = "sigmoid";
    CHECK_EQ_INT(mxk_sdk_attr_enum(&at, "act_type", "relu|sigmoid", &idx, &err), MXK_OK);
    CHECK_EQ_INT(idx, 1);
    at.v[0] = "sig";
    CHECK_EQ_INT(mxk_sdk_attr_enum(&at, "act_type", "relu|sigmoid", &idx, &err),
                 MXK_ERR_INVALID_ARGUMENT);
    int64_t v = 0;
    CHECK_EQ_INT(mxk_sdk_attr_int(&at, "n", &v, &err), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(err.msg, "attribute 'n': expected an integer, got '12x'") == 0);
    CHECK_EQ_INT(mxk_sdk_attr_int(&at, "missing", &v, &err), MXK_ERR_NOT_FOUND);
    CHECK(strcmp(err.msg, "attribute 'missing': required but not given") == 0);
    at.v[1] = "0";
    CHECK_EQ_INT(mxk_sdk_attr_int_range(&at, "n", 1, 10, &v, &err), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(err.msg, "attribute 'n': must be in [1, 10], got 0") == 0);
    int32_t bl = 0;
    CHECK_EQ_INT(mxk_sdk_attr_bool(&at, "flag", &bl, &err), MXK_OK);
    CHECK_EQ_INT(bl, 1);
    mxk_shape s;
    CHECK_EQ_INT(mxk_sdk_attr_shape(&at, "shape", &s, &err), MXK_OK);
    CHECK(s.ndim == 2 && s.dims[0] == 2 && s.dims[1] == -1);

    mxk_attrs opt = {1, {"num_threads"}, {" 7 "}};
    CHECK_EQ_INT(mxk_sdk_option_int(&opt, "num_threads", 0, 0, 64, &v, &err), MXK_OK);
    CHECK_EQ_INT(v, 7);
    CHECK_EQ_INT(mxk_sdk_option_int(&opt, "other", 3, 0, 64, &v, &err), MXK_OK);
    CHECK_EQ_INT(v, 3);
    CHECK_EQ_INT(mxk_sdk_option_int(NULL, "other", 4, 0, 64, &v, &err), MXK_OK);
    CHECK_EQ_INT(v, 4);
    opt.v[0] = "99";
    CHECK_EQ_INT(mxk_sdk_option_int(&opt, "num_threads", 0, 0, 64, &v, &err),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(err.msg, "option 'num_threads': expected an integer in [0, 64], got '99'") == 0);

    /* struct-size checks of growable structs */
    mxk_op_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.struct_size = (uint32_t)offsetof(mxk_op_ctx, num_threads);
    CHECK(!MXK_SDK_HAS_FIELD(&ctx, mxk_op_ctx, num_threads));
    CHECK(MXK_SDK_HAS_FIELD(&ctx, mxk_op_ctx, stream));
    ctx.struct_size = sizeof ctx;
    CHECK(MXK_SDK_HAS_FIELD(&ctx, mxk_op_ctx, num_threads));

    mxk_op_def d;
    mxk_sdk_op_def_init(&d);
    CHECK_EQ_INT(d.struct_size, sizeof d);
    CHECK(d.infer_shape == NULL && d.name == NULL);
    mxk_inplace_pair pairs[1];
    uint32_t np = 0;
    mxk_sdk_inplace_add(pairs, 1, &np, 3, 0, 1);
    mxk_sdk_inplace_add(pairs, 1, &np, 4, 0, 1);
    CHECK(np == 1 && pairs[0].in_index == 3 && pairs[0].identity == 1);
}

/** Write-request stores. */
static void test_sdk_req(void) {
    float o = 5.0f;
    mxk_sdk_assign_f32(&o, 2.0f, MXK_REQ_NULL);
    CHECK(o == 5.0f);
    mxk_sdk_assign_f32(&o, 2.0f, MXK_REQ_ADD);
    CHECK(o == 7.0f);
    mxk_sdk_assign_f32(&o, 2.0f, MXK_REQ_WRITE);
    CHECK(o == 2.0f);
    mxk_sdk_assign_f32(&o, 3.0f, MXK_REQ_INPLACE);
    CHECK(o == 3.0f);
    float a[5] = {1, 2, 3, 4, 5}, b[5] = {5, 5, 5, 5, 5};
    mxk_sdk_copy_f32(b, a, 5, MXK_REQ_ADD);
    CHECK(b[0] == 6.0f && b[4] == 10.0f);
    mxk_sdk_copy_f32(a, a, 5, MXK_REQ_ADD); /* in place: doubles */
    CHECK(a[0] == 2.0f && a[4] == 10.0f);
    mxk_sdk_copy_f32(a, a, 5, MXK_REQ_INPLACE);
    CHECK(a[2] == 6.0f);
    mxk_sdk_scale_f32(b, a, -0.5f, 5, MXK_REQ_WRITE);
    CHECK(b[0] == -1.0f && b[4] == -5.0f);
    mxk_sdk_scale_f32(a, a, 0.5f, 5, MXK_REQ_WRITE);
    CHECK(a[0] == 1.0f && a[4] == 5.0f);
    mxk_sdk_fill_f32(b, 0.0f, 5, MXK_REQ_ADD);
    CHECK(b[0] == -1.0f);
    mxk_sdk_fill_f32(b, 0.0f, 5, MXK_REQ_WRITE);
    CHECK_ALL("fill", b, 5, 0.0f);
    mxk_sdk_copy_f32(b, a, 5, MXK_REQ_NULL);
    CHECK_ALL("null copy", b, 5, 0.0f);
    CHECK(mxk_sdk_req_beta(MXK_REQ_ADD) == 1.0f && mxk_sdk_req_beta(MXK_REQ_WRITE) == 0.0f);
}

/** float16 conversions: rounding, subnormals, overflow, NaN, and every round trip. */
static void test_sdk_half(void) {
    CHECK_EQ_INT(mxk_sdk_f32_to_f16(1.0f), 0x3C00);
    CHECK_EQ_INT(mxk_sdk_f32_to_f16(1.0f + 0x1p-11f), 0x3C00);     /* tie to even */
    CHECK_EQ_INT(mxk_sdk_f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3C02); /* tie to even */
    CHECK_EQ_INT(mxk_sdk_f32_to_f16(1.0f + 0x1p-11f + 0x1p-20f), 0x3C01);
    CHECK_EQ_INT(mxk_sdk_f32_to_f16(0x1p-24f), 0x0001);
    CHECK_EQ_INT(mxk_sdk_f32_to_f16(0x1p-25f), 0x0000);
    CHECK_EQ_INT(mxk_sdk_f32_to_f16(3 * 0x1p-25f), 0x0002);
    CHECK_EQ_INT(mxk_sdk_f32_to_f16(0x1p-14f), 0x0400);
    CHECK_EQ_INT(mxk_sdk_f32_to_f16(65519.0f), 0x7BFF);
    CHECK_EQ_INT(mxk_sdk_f32_to_f16(65520.0f), 0x7C00);
    CHECK_EQ_INT(mxk_sdk_f32_to_f16(-INFINITY), 0xFC00);
    CHECK_EQ_INT(mxk_sdk_f32_to_f16(-0.0f), 0x8000);
    uint16_t n = mxk_sdk_f32_to_f16(NAN);
    CHECK((n & 0x7C00) == 0x7C00 && (n & 0x3FF) != 0 && (n & 0x8000) == 0);
    int bad = 0;
    for (uint32_t h = 0; h < 0x10000u; h++) {
        float f = mxk_sdk_f16_to_f32((uint16_t)h);
        if ((h & 0x7C00) == 0x7C00 && (h & 0x3FF)) {
            bad += !isnan(f);
            continue;
        }
        bad += mxk_sdk_f32_to_f16(f) != h;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(mxk_sdk_f16_to_f32(0x0001) == 0x1p-24f);
    CHECK(mxk_sdk_f16_to_f32(0xC100) == -2.5f);
}

/* ------------------------------------------------------------------------- */
/* FullyConnected                                                             */
/* ------------------------------------------------------------------------- */

/** FullyConnected on a small input, numbers worked out by hand. */
static void test_fc_numbers(void) {
    mxk_error_sink err;
    bound b;
    kv at[] = {{"num_hidden", "3"}};
    CHECK_ST(bind_op(&b, "FullyConnected", at, 1, &err), MXK_OK, &err);
    float x[2] = {1, 2}, w[6] = {1, 0, 0, 1, 1, 1}, bias[3] = {0, 0, 1}, y[3], dy[3] = {1, 1, 1};
    float dx[2], dw[6], db[3];
    mxk_tensor in[3] = {mk(x, SHP(1, 2)), mk(w, SHP(3, 2)), mk(bias, SHP(3))};
    mxk_tensor out = mk(y, SHP(1, 3)), g = mk(dy, SHP(1, 3));
    CHECK_ST(call_forward(&b, in, &out, MXK_REQ_WRITE, &err), MXK_OK, &err);
    CHECK_CLOSE("FC y", y, ((double[]){1, 2, 4}), 3, 1e-6);
    mxk_tensor gr[3] = {mk(dx, SHP(1, 2)), mk(dw, SHP(3, 2)), mk(db, SHP(3))};
    mxk_op_req rq[3] = {MXK_REQ_WRITE, MXK_REQ_WRITE, MXK_REQ_WRITE};
    CHECK_ST(call_backward(&b, &g, in, &out, gr, rq, &err), MXK_OK, &err);
    CHECK_CLOSE("FC dW", dw, ((double[]){1, 2, 1, 2, 1, 2}), 6, 1e-6);
    CHECK_CLOSE("FC db", db, ((double[]){1, 1, 1}), 3, 1e-6);
    CHECK_CLOSE("FC dx", dx, ((double[]){2, 2}), 2, 1e-6);
    /* backward dependency: out_grad, data, weight; not the output, not bias */
    uint8_t og = 0, id[3] = {0}, od = 0;
    b.op->def.backward_dependency(b.param, 1, 3, 1, &og, id, &od);
    CHECK(og == 1 && id[0] == 1 && id[1] == 1 && id[2] == 0 && od == 0);
    unbind(&b);
}

/** Shape inference of FullyConnected, forwards and backwards, and its errors. */
static void test_fc_shapes(void) {
    mxk_error_sink err;
    bound b;
    kv at[] = {{"num_hidden", "128"}};
    CHECK_ST(bind_op(&b, "FullyConnected", at, 1, &err), MXK_OK, &err);
    CHECK_EQ_INT(b.ni, 3);
    CHECK(strcmp(b.arg_names[2], "bias") == 0);
    mxk_shape in[3] = {SHP(100, 784), mxk_sdk_shape_unknown(), mxk_sdk_shape_unknown()};
    mxk_shape out[1] = {mxk_sdk_shape_unknown()};
    CHECK_ST(infer_shapes(&b, in, out, &err), MXK_OK, &err);
    CHECK(mxk_sdk_shape_equal(&in[1], &(mxk_shape){2, 0, {128, 784}}));
    CHECK(mxk_sdk_shape_equal(&in[2], &(mxk_shape){1, 0, {128}}));
    CHECK(mxk_sdk_shape_equal(&out[0], &(mxk_shape){2, 0, {100, 128}}));
    /* wrong weight: the message names it and both shapes */
    in[1] = SHP(128, 100);
    in[2] = mxk_sdk_shape_unknown();
    out[0] = mxk_sdk_shape_unknown();
    CHECK_ST(infer_shapes(&b, in, out, &err), MXK_ERR_SHAPE, &err);
    CHECK_CONTAINS(err.msg, "weight");
    CHECK_CONTAINS(err.msg, "(128,784)");
    CHECK_CONTAINS(err.msg, "(128,100)");
    CHECK(strcmp(err.msg, "argument 'weight': expected (128,784), got (128,100)") == 0);
    /* bias (H, 1) is accepted, (H+1,) is not */
    in[1] = mxk_sdk_shape_unknown();
    in[2] = SHP(128, 1);
    CHECK_ST(infer_shapes(&b, in, out, &err), MXK_OK, &err);
    in[2] = SHP(129);
    CHECK_ST(infer_shapes(&b, in, out, &err), MXK_ERR_SHAPE, &err);
    CHECK_CONTAINS(err.msg, "bias");
    CHECK_CONTAINS(err.msg, "(129,)");
    /* backwards: the output's batch fills data's first dim; flattened data */
    in[0] = SHP(0, 1, 28, 28);
    in[1] = in[2] = mxk_sdk_shape_unknown();
    out[0] = SHP(64, 128);
    CHECK_ST(infer_shapes(&b, in, out, &err), MXK_OK, &err);
    CHECK(mxk_sdk_shape_equal(&in[0], &(mxk_shape){4, 0, {64, 1, 28, 28}}));
    CHECK(mxk_sdk_shape_equal(&in[1], &(mxk_shape){2, 0, {128, 784}}));
    /* unknown data: incomplete, not an error */
    in[0] = in[1] = in[2] = out[0] = mxk_sdk_shape_unknown();
    CHECK_ST(infer_shapes(&b, in, out, &err), MXK_OK, &err);
    CHECK_EQ_INT(out[0].ndim, 0);
    /* wrong output */
    in[0] = SHP(10, 784);
    out[0] = SHP(10, 127);
    CHECK_ST(infer_shapes(&b, in, out, &err), MXK_ERR_SHAPE, &err);
    CHECK_CONTAINS(err.msg, "output");
    /* a kernel handed inconsistent tensors reports, never reads out of bounds */
    float x[6] = {0}, w[6] = {0}, bb[3] = {0}, y[6];
    unbind(&b);
    kv at3[] = {{"num_hidden", "3"}};
    CHECK_ST(bind_op(&b, "FullyConnected", at3, 1, &err), MXK_OK, &err);
    mxk_tensor t[3] = {mk(x, SHP(2, 3)), mk(w, SHP(3, 2)), mk(bb, SHP(3))};
    mxk_tensor to = mk(y, SHP(2, 3));
    CHECK_ST(call_forward(&b, t, &to, MXK_REQ_WRITE, &err), MXK_ERR_SHAPE, &err);
    CHECK_CONTAINS(err.msg, "weight");
    t[1].shape = SHP(3, 3);
    t[1].dtype = MXK_FLOAT64;
    CHECK_ST(call_forward(&b, t, &to, MXK_REQ_WRITE, &err), MXK_ERR_TYPE, &err);
    t[1].dtype = MXK_FLOAT32;
    t[0].data = NULL;
    CHECK_ST(call_forward(&b, t, &to, MXK_REQ_WRITE, &err), MXK_ERR_INVALID_ARGUMENT, &err);
    unbind(&b);
    /* attributes */
    kv bad[] = {{"num_hidden", "0"}};
    CHECK_ST(bind_op(&b, "FullyConnected", bad, 1, &err), MXK_ERR_INVALID_ARGUMENT, &err);
    CHECK_CONTAINS(err.msg, "num_hidden");
    kv nb[] = {{"num_hidden", "4"}, {"no_bias", "True"}};
    CHECK_ST(bind_op(&b, "FullyConnected", nb, 2, &err), MXK_OK, &err);
    CHECK_EQ_INT(b.ni, 2);
    unbind(&b);
}

/** Generic checks of FullyConnected configurations. */
static void test_fc_cases(void) {
    op_case c1 = {.op = "FullyConnected",
                  .attrs = {{"num_hidden", "5"}},
                  .nattrs = 1,
                  .ni = 3,
                  .in = {SHP(3, 2, 2), SHP(5, 4), SHP(5)},
                  .out = SHP(3, 5),
                  .lo = -1,
                  .hi = 1,
                  .ref = ref_fc,
                  .ip = {5, 0, 1}};
    run_case(&c1);
    op_case c2 = {.op = "FullyConnected",
                  .attrs = {{"num_hidden", "2"}, {"no_bias", "True"}},
                  .nattrs = 2,
                  .ni = 2,
                  .in = {SHP(4, 3), SHP(2, 3)},
                  .out = SHP(4, 2),
                  .lo = -1,
                  .hi = 1,
                  .ref = ref_fc,
                  .ip = {2, 1, 1}};
    run_case(&c2);
    op_case c3 = {.op = "FullyConnected",
                  .attrs = {{"num_hidden", "3"}, {"flatten", "False"}},
                  .nattrs = 2,
                  .ni = 3,
                  .in = {SHP(2, 3, 4), SHP(3, 4), SHP(3)},
                  .out = SHP(2, 3, 3),
                  .lo = -1,
                  .hi = 1,
                  .ref = ref_fc,
                  .ip = {3, 0, 0}};
    run_case(&c3);
    op_case c4 = {.op = "FullyConnected",
                  .attrs = {{"num_hidden", "4"}},
                  .nattrs = 1,
                  .ni = 3,
                  .in = {SHP(2, 3), SHP(4, 3), SHP(4, 1)},
                  .out = SHP(2, 4),
                  .lo = -2,
                  .hi = 2,
                  .ref = ref_fc,
                  .ip = {4, 0, 1}};
    run_case(&c4);
}

/* ------------------------------------------------------------------------- */
/* Activation                                                                 */
/* ------------------------------------------------------------------------- */

/** Runs Activation of `type` on x (n values) with dy = 1; y and dx out. */
static void act_run(const char *type, const float *x, int n, float *y, float *dx) {
    mxk_error_sink err;
    bound b;
    kv at[] = {{"act_type", type}};
    CHECK_ST(bind_op(&b, "Activation", at, 1, &err), MXK_OK, &err);
    float xx[8], dy[8];
    for (int i = 0; i < n; i++) {
        xx[i] = x[i];
        dy[i] = 1.0f;
    }
    mxk_tensor in = mk(xx, SHP(n)), out = mk(y, SHP(n)), g = mk(dy, SHP(n)), gx = mk(dx, SHP(n));
    CHECK_ST(call_forward(&b, &in, &out, MXK_REQ_WRITE, &err), MXK_OK, &err);
    mxk_op_req rq = MXK_REQ_WRITE;
    CHECK_ST(call_backward(&b, &g, &in, &out, &gx, &rq, &err), MXK_OK, &err);
    unbind(&b);
}

/** Activation numbers worked out by hand, softrelu's x > 20 branch, relu of NaN, unknown
 * act_type. */
static void test_activation_numbers(void) {
    float x[4] = {0.0f, 0.5f, 25.0f, 100.0f}, y[4], dx[4];
    act_run("sigmoid", x, 1, y, dx);
    CHECK_NEAR(y[0], 0.5, 1e-6);
    CHECK_NEAR(dx[0], 0.25, 1e-6);
    act_run("softrelu", x, 4, y, dx);
    CHECK_NEAR(y[0], 0.693147, 1e-6);
    CHECK_NEAR(dx[0], 0.5, 1e-6);
    CHECK(y[2] == 25.0f);
    CHECK_NEAR(dx[2], 1.0, 1e-6);
    CHECK(y[3] == 100.0f); /* x > 20 returns x: no overflow of e^x */
    CHECK(dx[3] == 1.0f);
    act_run("tanh", x, 2, y, dx);
    CHECK_NEAR(y[1], 0.462117, 1e-6);
    CHECK_NEAR(dx[1], 0.786448, 1e-6);
    float r[3] = {-1.0f, 2.0f, NAN};
    act_run("relu", r, 3, y, dx);
    CHECK(y[0] == 0.0f && y[1] == 2.0f && y[2] == 0.0f);
    CHECK(dx[0] == 0.0f && dx[1] == 1.0f);
    act_run("softsign", r, 2, y, dx);
    CHECK_NEAR(y[0], -0.5, 1e-6);
    CHECK_NEAR(dx[1], 1.0 / 9.0, 1e-6);

    mxk_error_sink err;
    bound b;
    kv bad[] = {{"act_type", "gelu"}};
    CHECK_ST(bind_op(&b, "Activation", bad, 1, &err), MXK_ERR_INVALID_ARGUMENT, &err);
    CHECK_CONTAINS(err.msg, "act_type");
    CHECK_CONTAINS(err.msg, "gelu");
    CHECK_ST(bind_op(&b, "Activation", NULL, 0, &err), MXK_ERR_INVALID_ARGUMENT, &err);
    /* backward dependencies: out_grad + output, softsign out_grad + data */
    kv at[] = {{"act_type", "relu"}};
    CHECK_ST(bind_op(&b, "Activation", at, 1, &err), MXK_OK, &err);
    uint8_t og = 0, id = 0, od = 0;
    b.op->def.backward_dependency(b.param, 1, 1, 1, &og, &id, &od);
    CHECK(og == 1 && id == 0 && od == 1);
    unbind(&b);
    kv at2[] = {{"act_type", "softsign"}};
    CHECK_ST(bind_op(&b, "Activation", at2, 1, &err), MXK_OK, &err);
    og = id = od = 0;
    b.op->def.backward_dependency(b.param, 1, 1, 1, &og, &id, &od);
    CHECK(og == 1 && id == 1 && od == 0);
    unbind(&b);
}

/** Generic checks of every act_type. */
static void test_activation_cases(void) {
    static const char *const types[] = {"relu", "sigmoid", "tanh", "softrelu", "softsign"};
    for (int t = 0; t < 5; t++) {
        op_case c = {.op = "Activation",
                     .attrs = {{"act_type", types[t]}},
                     .nattrs = 1,
                     .ni = 1,
                     .in = {SHP(3, 7)},
                     .out = SHP(3, 7),
                     .lo = -3,
                     .hi = 3,
                     .min_abs = 0.05,
                     .ref = ref_act,
                     .ip = {t}};
        run_case(&c);
    }
}

/* ------------------------------------------------------------------------- */
/* SoftmaxOutput                                                              */
/* ------------------------------------------------------------------------- */

/** Runs SoftmaxOutput on (rows, 3) data with labels; y and the data gradient out. */
static void smo_run(const kv *at, int nat, const float *x, const float *lab, int rows, float *y,
                    float *g) {
    mxk_error_sink err;
    bound b;
    CHECK_ST(bind_op(&b, "SoftmaxOutput", at, nat, &err), MXK_OK, &err);
    float xx[12], ll[4], dy[12], gl[4];
    for (int i = 0; i < rows * 3; i++) {
        xx[i] = x[i];
        dy[i] = 100.0f; /* ignored unless out_grad */
    }
    for (int i = 0; i < rows; i++)
        ll[i] = lab[i];
    mxk_tensor in[2] = {mk(xx, SHP(rows, 3)), mk(ll, SHP(rows))};
    mxk_tensor out = mk(y, SHP(rows, 3)), og = mk(dy, SHP(rows, 3));
    CHECK_ST(call_forward(&b, in, &out, MXK_REQ_WRITE, &err), MXK_OK, &err);
    mxk_tensor gr[2] = {mk(g, SHP(rows, 3)), mk(gl, SHP(rows))};
    mxk_op_req rq[2] = {MXK_REQ_WRITE, MXK_REQ_NULL};
    CHECK_ST(call_backward(&b, &og, in, &out, gr, rq, &err), MXK_OK, &err);
    unbind(&b);
}

/** softmax and SoftmaxOutput numbers worked out by hand. */
static void test_softmax_numbers(void) {
    float x[6] = {1, 2, 3, 1, 2, 3}, y[6], g[6];
    float lab1[1] = {2};
    smo_run(NULL, 0, x, lab1, 1, y, g);
    CHECK_CLOSE("softmax y", y, ((double[]){0.090031, 0.244728, 0.665241}), 3, 2e-6);
    CHECK_CLOSE("softmax grad", g, ((double[]){0.090031, 0.244728, -0.334759}), 3, 2e-6);
    /* normalization batch, N = 2: each row's gradient halved */
    float lab2[2] = {2, 2};
    kv batch[] = {{"normalization", "batch"}};
    smo_run(batch, 1, x, lab2, 2, y, g);
    CHECK_CLOSE("softmax batch grad", g,
                ((double[]){0.0450155, 0.122364, -0.1673795, 0.0450155, 0.122364, -0.1673795}), 6,
                2e-6);
    /* use_ignore: the row labelled ignore_label (-1) gets zero */
    float lab3[2] = {2, -1};
    kv ign[] = {{"use_ignore", "True"}};
    smo_run(ign, 1, x, lab3, 2, y, g);
    CHECK_CLOSE("softmax ignore grad", g, ((double[]){0.090031, 0.244728, -0.334759, 0, 0, 0}), 6,
                2e-6);
    /* normalization valid: divides by the one valid row */
    kv valid[] = {{"use_ignore", "True"}, {"normalization", "valid"}};
    smo_run(valid, 2, x, lab3, 2, y, g);
    CHECK_CLOSE("softmax valid grad", g, ((double[]){0.090031, 0.244728, -0.334759, 0, 0, 0}), 6,
                2e-6);
    /* grad_scale */
    kv scale[] = {{"grad_scale", "2"}};
    smo_run(scale, 1, x, lab1, 1, y, g);
    CHECK_CLOSE("softmax grad_scale", g, ((double[]){0.180062, 0.489456, -0.669518}), 3, 2e-6);
}

/** Shape inference of SoftmaxOutput. */
static void test_softmax_shapes(void) {
    mxk_error_sink err;
    bound b;
    CHECK_ST(bind_op(&b, "SoftmaxOutput", NULL, 0, &err), MXK_OK, &err);
    mxk_shape in[2] = {SHP(4, 10), mxk_sdk_shape_unknown()}, out[1] = {mxk_sdk_shape_unknown()};
    CHECK_ST(infer_shapes(&b, in, out, &err), MXK_OK, &err);
    CHECK(mxk_sdk_shape_equal(&in[1], &(mxk_shape){1, 0, {4}}));
    CHECK(mxk_sdk_shape_equal(&out[0], &(mxk_shape){2, 0, {4, 10}}));
    in[1] = SHP(4, 10); /* probabilities */
    CHECK_ST(infer_shapes(&b, in, out, &err), MXK_OK, &err);
    in[1] = SHP(5);
    CHECK_ST(infer_shapes(&b, in, out, &err), MXK_ERR_SHAPE, &err);
    CHECK_CONTAINS(err.msg, "label");
    CHECK_CONTAINS(err.msg, "(4,)");
    CHECK_CONTAINS(err.msg, "(5,)");
    in[0] = SHP(7);
    in[1] = mxk_sdk_shape_unknown();
    out[0] = mxk_sdk_shape_unknown();
    CHECK_ST(infer_shapes(&b, in, out, &err), MXK_ERR_SHAPE, &err);
    CHECK_CONTAINS(err.msg, "data");
    /* output known, data unknown: data from the output */
    in[0] = mxk_sdk_shape_unknown();
    out[0] = SHP(3, 2);
    CHECK_ST(infer_shapes(&b, in, out, &err), MXK_OK, &err);
    CHECK(mxk_sdk_shape_equal(&in[0], &out[0]));
    CHECK(mxk_sdk_shape_equal(&in[1], &(mxk_shape){1, 0, {3}}));
    /* deps: label and output, not out_grad */
    uint8_t og = 0, id[2] = {0}, od = 0;
    b.op->def.backward_dependency(b.param, 1, 2, 1, &og, id, &od);
    CHECK(og == 0 && id[0] == 0 && id[1] == 1 && od == 1);
    unbind(&b);
    kv mo[] = {{"multi_output", "True"}};
    CHECK_ST(bind_op(&b, "SoftmaxOutput", mo, 1, &err), MXK_OK, &err);
    in[0] = SHP(2, 3, 4, 5);
    in[1] = out[0] = mxk_sdk_shape_unknown();
    CHECK_ST(infer_shapes(&b, in, out, &err), MXK_OK, &err);
    CHECK(mxk_sdk_shape_equal(&in[1], &(mxk_shape){2, 0, {2, 20}}));
    in[1] = SHP(2, 4, 5);
    CHECK_ST(infer_shapes(&b, in, out, &err), MXK_OK, &err);
    in[1] = SHP(2, 1, 4, 5);
    CHECK_ST(infer_shapes(&b, in, out, &err), MXK_OK, &err);
    in[1] = SHP(2, 3, 5);
    CHECK_ST(infer_shapes(&b, in, out, &err), MXK_ERR_SHAPE, &err);
    CHECK_CONTAINS(err.msg, "label");
    unbind(&b);
    kv og1[] = {{"out_grad", "True"}};
    CHECK_ST(bind_op(&b, "SoftmaxOutput", og1, 1, &err), MXK_OK, &err);
    og = 0;
    id[0] = id[1] = od = 0;
    b.op->def.backward_dependency(b.param, 1, 2, 1, &og, id, &od);
    CHECK(og == 0 && id[1] == 1 && od == 1); /* out_grad=True multiplies by the output */
    unbind(&b);
    kv bad[] = {{"normalization", "all"}};
    CHECK_ST(bind_op(&b, "SoftmaxOutput", bad, 1, &err), MXK_ERR_INVALID_ARGUMENT, &err);
    CHECK_CONTAINS(err.msg, "normalization");
}

/** Generic checks of SoftmaxOutput configurations. */
static void test_softmax_cases(void) {
    static const float lab4[4] = {0, 3, 4, 1};
    op_case c1 = {.op = "SoftmaxOutput",
                  .ni = 2,
                  .in = {SHP(4, 5), SHP(4)},
                  .out = SHP(4, 5),
                  .lo = -2,
                  .hi = 2,
                  .ref = ref_smo,
                  .ref_bwd = ref_bwd_smo,
                  .fixed = {NULL, lab4},
                  .ip = {0, 0, 0, 0},
                  .dp = {1, -1, 0}};
    run_case(&c1);
    static const float lab4b[4] = {3, 1, 3, 0};
    op_case c2 = c1;
    c2.attrs[0] = (kv){"grad_scale", "0.5"};
    c2.attrs[1] = (kv){"normalization", "valid"};
    c2.attrs[2] = (kv){"use_ignore", "True"};
    c2.attrs[3] = (kv){"ignore_label", "3"};
    c2.nattrs = 4;
    c2.fixed[1] = lab4b;
    c2.ip[1] = 1;
    c2.ip[2] = 2;
    c2.dp[0] = 0.5;
    c2.dp[1] = 3;
    run_case(&c2);
    op_case c3 = {.op = "SoftmaxOutput", /* probability labels */
                  .ni = 2,
                  .in = {SHP(3, 4), SHP(3, 4)},
                  .out = SHP(3, 4),
                  .lo = 0,
                  .hi = 1,
                  .ref = ref_smo,
                  .ref_bwd = ref_bwd_smo,
                  .dp = {1, -1, 0}};
    run_case(&c3);
    static const float lab8[8] = {0, 2, 1, 1, 2, 0, 0, 1};
    op_case c4 = {.op = "SoftmaxOutput", /* multi_output: softmax over axis 1 */
                  .attrs = {{"multi_output", "True"}},
                  .nattrs = 1,
                  .ni = 2,
                  .in = {SHP(2, 3, 4), SHP(2, 4)},
                  .out = SHP(2, 3, 4),
                  .lo = -2,
                  .hi = 2,
                  .ref = ref_smo,
                  .ref_bwd = ref_bwd_smo,
                  .fixed = {NULL, lab8},
                  .ip = {2, 0, 0, 0},
                  .dp = {1, -1, 0}};
    run_case(&c4);
    static const float lab6[6] = {0, 3, 2, 1, 1, 0};
    op_case c5 = {.op = "SoftmaxOutput", /* preserve_shape: over the last axis */
                  .attrs = {{"preserve_shape", "True"}, {"normalization", "batch"}},
                  .nattrs = 2,
                  .ni = 2,
                  .in = {SHP(2, 3, 4), SHP(2, 3)},
                  .out = SHP(2, 3, 4),
                  .lo = -2,
                  .hi = 2,
                  .ref = ref_smo,
                  .ref_bwd = ref_bwd_smo,
                  .fixed = {NULL, lab6},
                  .ip = {1, 0, 1, 0},
                  .dp = {1, -1, 0}};
    run_case(&c5);
    static const float lab3[3] = {1, 0, 3};
    op_case c6 = {.op = "SoftmaxOutput", /* out_grad multiplies, label smoothing */
                  .attrs = {{"out_grad", "True"}, {"smooth_alpha", "0.1"}},
                  .nattrs = 2,
                  .ni = 2,
                  .in = {SHP(3, 4), SHP(3)},
                  .out = SHP(3, 4),
                  .lo = -2,
                  .hi = 2,
                  .ref = ref_smo,
                  .ref_bwd = ref_bwd_smo,
                  .fixed = {NULL, lab3},
                  .ip = {0, 0, 0, 1},
                  .dp = {1, -1, 0.1}};
    run_case(&c6);
}

/* ------------------------------------------------------------------------- */
/* Element-wise                                                               */
/* ------------------------------------------------------------------------- */

/** _plus, _minus, _mul, _div and their aliases; shape errors. */
static void test_elemwise(void) {
    static const char *const ops[4][2] = {{"_plus", "elemwise_add"},
                                          {"_minus", "elemwise_sub"},
                                          {"_mul", "elemwise_mul"},
                                          {"_div", "elemwise_div"}};
    for (int o = 0; o < 4; o++)
        for (int a = 0; a < 2; a++) {
            op_case c = {.op = ops[o][a],
                         .ni = 2,
                         .in = {SHP(2, 3), SHP(2, 3)},
                         .out = SHP(2, 3),
                         .lo = -2,
                         .hi = 2,
                         .min_abs = o == 3 ? 0.5 : 0.0,
                         .ref = ref_ew,
                         .ip = {o}};
            run_case(&c);
        }
    /* the same array as both operands (x * x) */
    mxk_error_sink err;
    bound b;
    CHECK_ST(bind_op(&b, "_mul", NULL, 0, &err), MXK_OK, &err);
    float x[3] = {1, -2, 3}, y[3];
    mxk_tensor in[2] = {mk(x, SHP(3)), mk(x, SHP(3))}, out = mk(y, SHP(3));
    CHECK_ST(call_forward(&b, in, &out, MXK_REQ_WRITE, &err), MXK_OK, &err);
    CHECK_CLOSE("x*x", y, ((double[]){1, 4, 9}), 3, 0);
    /* ... in place into that array */
    mxk_tensor o2 = mk(x, SHP(3));
    CHECK_ST(call_forward(&b, in, &o2, MXK_REQ_INPLACE, &err), MXK_OK, &err);
    CHECK_CLOSE("x*x in place", x, ((double[]){1, 4, 9}), 3, 0);
    /* shapes: merged both ways, mismatches named */
    mxk_shape is[2] = {SHP(0, 3), SHP(2, 0)}, os[1] = {mxk_sdk_shape_unknown()};
    CHECK_ST(infer_shapes(&b, is, os, &err), MXK_OK, &err);
    CHECK(mxk_sdk_shape_equal(&os[0], &(mxk_shape){2, 0, {2, 3}}));
    is[0] = SHP(2, 3);
    is[1] = SHP(3, 2);
    os[0] = mxk_sdk_shape_unknown();
    CHECK_ST(infer_shapes(&b, is, os, &err), MXK_ERR_SHAPE, &err);
    CHECK(strcmp(err.msg, "argument 'rhs': expected (2,3), got (3,2)") == 0);
    /* and the kernel refuses mismatched tensors */
    float z[6] = {0};
    mxk_tensor bad[2] = {mk(z, SHP(2, 3)), mk(z, SHP(3, 2))};
    mxk_tensor bo = mk(z, SHP(2, 3));
    CHECK_ST(call_forward(&b, bad, &bo, MXK_REQ_WRITE, &err), MXK_ERR_SHAPE, &err);
    CHECK_CONTAINS(err.msg, "rhs");
    /* _mul's backward reads both inputs; _plus's only out_grad */
    uint8_t og = 0, id[2] = {0}, od = 0;
    b.op->def.backward_dependency(b.param, 1, 2, 1, &og, id, &od);
    CHECK(og == 1 && id[0] == 1 && id[1] == 1 && od == 0);
    unbind(&b);
    CHECK_ST(bind_op(&b, "_plus", NULL, 0, &err), MXK_OK, &err);
    og = id[0] = id[1] = od = 0;
    b.op->def.backward_dependency(b.param, 1, 2, 1, &og, id, &od);
    CHECK(og == 1 && id[0] == 0 && id[1] == 0 && od == 0);
    unbind(&b);
}

/** The six scalar operators. */
static void test_elemwise_scalar(void) {
    static const char *const ops[6] = {"_plus_scalar", "_minus_scalar", "_rminus_scalar",
                                       "_mul_scalar",  "_div_scalar",   "_rdiv_scalar"};
    for (int o = 0; o < 6; o++) {
        op_case c = {.op = ops[o],
                     .attrs = {{"scalar", "2.5"}},
                     .nattrs = 1,
                     .ni = 1,
                     .in = {SHP(4, 3)},
                     .out = SHP(4, 3),
                     .lo = -2,
                     .hi = 2,
                     .min_abs = o == 5 ? 0.5 : 0.0,
                     .ref = ref_sc,
                     .ip = {o},
                     .dp = {2.5}};
        run_case(&c);
    }
    mxk_error_sink err;
    bound b;
    float x[2] = {1, 4}, y[2];
    mxk_tensor in = mk(x, SHP(2)), out = mk(y, SHP(2));
    /* scalar defaults to 1, as MXNet 1.9.1's NumpyBinaryScalarParam */
    CHECK_ST(bind_op(&b, "_mul_scalar", NULL, 0, &err), MXK_OK, &err);
    CHECK_ST(call_forward(&b, &in, &out, MXK_REQ_WRITE, &err), MXK_OK, &err);
    CHECK(y[0] == 1.0f && y[1] == 4.0f);
    unbind(&b);
    kv at[] = {{"scalar", "-3"}, {"is_int", "True"}};
    CHECK_ST(bind_op(&b, "_rminus_scalar", at, 2, &err), MXK_OK, &err);
    CHECK_ST(call_forward(&b, &in, &out, MXK_REQ_WRITE, &err), MXK_OK, &err);
    CHECK(y[0] == -4.0f && y[1] == -7.0f);
    unbind(&b);
}

/* ------------------------------------------------------------------------- */
/* dot, sum                                                                   */
/* ------------------------------------------------------------------------- */

/** dot: all transpose combinations, vectors, N-D, errors. */
static void test_dot(void) {
    struct {
        const char *ta, *tb;
        mxk_shape l, r, o;
    } cases[] = {
        {"False", "False", SHP(3, 4), SHP(4, 5), SHP(3, 5)},
        {"True", "False", SHP(4, 3), SHP(4, 5), SHP(3, 5)},
        {"False", "True", SHP(3, 4), SHP(5, 4), SHP(3, 5)},
        {"True", "True", SHP(4, 3), SHP(5, 4), SHP(3, 5)},
        {"False", "False", SHP(4), SHP(4), SHP(1)},
        {"False", "False", SHP(4), SHP(4, 5), SHP(5)},
        {"False", "False", SHP(3, 4), SHP(4), SHP(3)},
        {"False", "False", SHP(2, 3, 4), SHP(4, 5), SHP(2, 3, 5)},
        {"True", "False", SHP(4, 2, 3), SHP(4, 5), SHP(2, 3, 5)},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        op_case c = {.op = "dot",
                     .attrs = {{"transpose_a", cases[i].ta}, {"transpose_b", cases[i].tb}},
                     .nattrs = 2,
                     .ni = 2,
                     .in = {cases[i].l, cases[i].r},
                     .out = cases[i].o,
                     .lo = -1,
                     .hi = 1,
                     .ref = ref_dot,
                     .ip = {cases[i].ta[0] == 'T', cases[i].tb[0] == 'T'}};
        run_case(&c);
    }
    mxk_error_sink err;
    bound b;
    CHECK_ST(bind_op(&b, "dot", NULL, 0, &err), MXK_OK, &err);
    mxk_shape is[2] = {SHP(3, 4), SHP(5, 6)}, os[1] = {mxk_sdk_shape_unknown()};
    CHECK_ST(infer_shapes(&b, is, os, &err), MXK_ERR_SHAPE, &err);
    CHECK_CONTAINS(err.msg, "(3,4)");
    CHECK_CONTAINS(err.msg, "(5,6)");
    is[1] = mxk_sdk_shape_unknown();
    CHECK_ST(infer_shapes(&b, is, os, &err), MXK_OK, &err);
    CHECK_EQ_INT(os[0].ndim, 0);
    unbind(&b);
    kv t[] = {{"transpose_a", "True"}};
    CHECK_ST(bind_op(&b, "dot", t, 1, &err), MXK_OK, &err);
    is[0] = SHP(3);
    is[1] = SHP(3);
    CHECK_ST(infer_shapes(&b, is, os, &err), MXK_ERR_SHAPE, &err);
    CHECK_CONTAINS(err.msg, "transpose");
    unbind(&b);
}

/** sum over axes, keepdims, exclude, negative axes, errors. */
static void test_sum(void) {
    struct {
        const char *axis, *keep, *excl;
        mxk_shape out;
        int mask;
    } cases[] = {
        {"()", "False", "False", SHP(1), 7},          {"()", "True", "False", SHP(1, 1, 1), 7},
        {"(1,)", "False", "False", SHP(2, 4), 2},     {"1", "False", "False", SHP(2, 4), 2},
        {"(0, 2)", "True", "False", SHP(1, 3, 1), 5}, {"(-1)", "False", "False", SHP(2, 3), 4},
        {"(1)", "False", "True", SHP(3), 5},          {"(0,1,2)", "False", "True", SHP(2, 3, 4), 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        op_case c = {.op = "sum",
                     .attrs = {{"axis", cases[i].axis},
                               {"keepdims", cases[i].keep},
                               {"exclude", cases[i].excl}},
                     .nattrs = 3,
                     .ni = 1,
                     .in = {SHP(2, 3, 4)},
                     .out = cases[i].out,
                     .lo = -1,
                     .hi = 1,
                     .ref = ref_sum,
                     .ip = {cases[i].mask}};
        run_case(&c);
    }
    mxk_error_sink err;
    bound b;
    kv a3[] = {{"axis", "(3)"}};
    CHECK_ST(bind_op(&b, "sum", a3, 1, &err), MXK_OK, &err);
    mxk_shape is[1] = {SHP(2, 3, 4)}, os[1] = {mxk_sdk_shape_unknown()};
    CHECK_ST(infer_shapes(&b, is, os, &err), MXK_ERR_SHAPE, &err);
    CHECK_CONTAINS(err.msg, "axis");
    unbind(&b);
    kv dup[] = {{"axis", "(1,-2)"}};
    CHECK_ST(bind_op(&b, "sum", dup, 1, &err), MXK_OK, &err);
    CHECK_ST(infer_shapes(&b, is, os, &err), MXK_ERR_SHAPE, &err);
    CHECK_CONTAINS(err.msg, "twice");
    unbind(&b);
    /* float64 accumulation: 1e6 ones and a large offset */
    CHECK_ST(bind_op(&b, "sum", NULL, 0, &err), MXK_OK, &err);
    size_t n = 1u << 20;
    float *x = falloc(n, 1.0f), y = 0;
    x[0] = 16777216.0f; /* 2^24: float accumulation would stop adding 1s */
    mxk_tensor in = mk(x, SHP((int64_t)n)), out = mk(&y, SHP(1));
    CHECK_ST(call_forward(&b, &in, &out, MXK_REQ_WRITE, &err), MXK_OK, &err);
    CHECK(y == 16777216.0f + (float)(n - 1));
    free(x);
    unbind(&b);
}

/* ------------------------------------------------------------------------- */
/* Reshape, Flatten, BlockGrad, _copyto                                       */
/* ------------------------------------------------------------------------- */

/** One example of Reshape's rules: spec on input gives want (ndim 0: expect `code`). */
static void reshape_example(const int64_t *spec, int ns, int reverse, mxk_shape in, mxk_shape want,
                            mxk_status code) {
    char msg[512] = "";
    mxk_shape out = mxk_sdk_shape_unknown();
    mxk_status st = cb_reshape_infer(spec, ns, reverse, &in, &out, msg, sizeof msg);
    if (st != code || (code == MXK_OK && !mxk_sdk_shape_equal(&out, &want)))
        fprintf(stderr, "reshape of %s (reverse %d): status %d, got %s, want %s: %s\n",
                fmt_shape(&in), reverse, (int)st, fmt_shape(&out), fmt_shape(&want), msg);
    CHECK_EQ_INT(st, code);
    if (code == MXK_OK)
        CHECK(mxk_sdk_shape_equal(&out, &want));
    else
        CHECK(msg[0] != '\0');
}
#define RS(...) (const int64_t[]){__VA_ARGS__}, (int)(sizeof((const int64_t[]){__VA_ARGS__}) / 8)

/** Reshape's special values (the examples of MXNet's Reshape documentation, matrix_op.cc). */
static void test_reshape_rules(void) {
    mxk_shape i234 = SHP(2, 3, 4), none = mxk_sdk_shape_unknown();
    reshape_example(RS(4, 0, 2), 0, i234, SHP(4, 3, 2), MXK_OK);
    reshape_example(RS(3, -1, 8), 0, i234, SHP(3, 1, 8), MXK_OK);
    reshape_example(RS(-2, 1, 1), 0, i234, SHP(2, 3, 4, 1, 1), MXK_OK);
    reshape_example(RS(0, -3), 0, i234, SHP(2, 12), MXK_OK);
    reshape_example(RS(-4, 1, 2, -2), 0, i234, SHP(1, 2, 3, 4), MXK_OK);
    reshape_example(RS(-1, 0), 0, SHP(10, 5, 4), SHP(40, 5), MXK_OK);
    reshape_example(RS(-1, 0), 1, SHP(10, 5, 4), SHP(50, 4), MXK_OK);
    reshape_example(RS(2, 0, 0), 0, i234, i234, MXK_OK);
    reshape_example(RS(6, 1, -1), 0, i234, SHP(6, 1, 4), MXK_OK);
    reshape_example(RS(-1), 0, i234, SHP(24), MXK_OK);
    reshape_example(RS(-2), 0, i234, i234, MXK_OK);
    reshape_example(RS(2, -2), 0, i234, i234, MXK_OK);
    reshape_example(RS(-3, 4), 0, i234, SHP(6, 4), MXK_OK);
    reshape_example(RS(-3, -3), 0, SHP(2, 3, 4, 5), SHP(6, 20), MXK_OK);
    reshape_example(RS(-3, -2), 0, i234, SHP(6, 4), MXK_OK);
    reshape_example(RS(-4, -1, 2, -2), 0, i234, SHP(1, 2, 3, 4), MXK_OK);
    reshape_example(RS(2, -4, -1, 3, -2), 0, i234, SHP(2, 1, 3, 4), MXK_OK);
    /* reverse: a -4 takes the two values before it ("a b -4" splits into (a, b)) */
    reshape_example(RS(-2, 4, 1, -4), 1, i234, SHP(2, 3, 4, 1), MXK_OK);
    reshape_example(RS(-2, 2, 2, -4), 1, i234, SHP(2, 3, 2, 2), MXK_OK);
    reshape_example(RS(-2, 1, 2, -4), 1, i234, none, MXK_ERR_SHAPE);
    /* errors */
    reshape_example(RS(3, 5), 0, i234, none, MXK_ERR_SHAPE);
    reshape_example(RS(-1, -1), 0, i234, none, MXK_ERR_INVALID_ARGUMENT);
    reshape_example(RS(0, 0, 0, 0), 0, i234, none, MXK_ERR_SHAPE);
    reshape_example(RS(-4, 5, -1, -2), 0, i234, none, MXK_ERR_SHAPE);
    reshape_example(RS(-5, 2), 0, i234, none, MXK_ERR_INVALID_ARGUMENT);
    reshape_example(RS(-4, 1), 0, i234, none, MXK_ERR_INVALID_ARGUMENT);
    reshape_example(RS(-4, -1, -1, -2), 0, i234, none, MXK_ERR_INVALID_ARGUMENT);
    reshape_example(RS(0, 0, -3), 0, i234, none, MXK_ERR_SHAPE);
    reshape_example(RS(5, -1), 0, i234, none, MXK_ERR_SHAPE);
    char msg[256];
    mxk_shape out;
    CHECK_EQ_INT(cb_reshape_infer(RS(3, 5), 0, &i234, &out, msg, sizeof msg), MXK_ERR_SHAPE);
    CHECK(strcmp(msg, "target shape (3,5) has 15 elements, input (2,3,4) has 24") == 0);
    /* the deprecated target_shape */
    CHECK_EQ_INT(cb_reshape_infer_legacy(RS(0, 4), 0, &i234, &out, msg, sizeof msg), MXK_OK);
    CHECK(mxk_sdk_shape_equal(&out, &(mxk_shape){2, 0, {6, 4}}));
    CHECK_EQ_INT(cb_reshape_infer_legacy(RS(1, 0, 4), 1, &i234, &out, msg, sizeof msg), MXK_OK);
    CHECK(mxk_sdk_shape_equal(&out, &i234));
    CHECK_EQ_INT(cb_reshape_infer_legacy(RS(0, 0), 0, &i234, &out, msg, sizeof msg),
                 MXK_ERR_INVALID_ARGUMENT);
}

/** Reshape and Flatten as operators. */
static void test_reshape_ops(void) {
    op_case c1 = {.op = "Reshape",
                  .attrs = {{"shape", "(4,-1)"}},
                  .nattrs = 1,
                  .ni = 1,
                  .in = {SHP(2, 3, 4)},
                  .out = SHP(4, 6),
                  .lo = -1,
                  .hi = 1,
                  .ref = ref_identity};
    run_case(&c1);
    op_case c2 = c1;
    c2.attrs[0] = (kv){"shape", "(-1, 0)"};
    c2.attrs[1] = (kv){"reverse", "True"};
    c2.nattrs = 2;
    c2.in[0] = SHP(10, 5, 4);
    c2.out = SHP(50, 4);
    run_case(&c2);
    op_case c3 = c1;
    c3.attrs[0] = (kv){"target_shape", "(0,4)"};
    c3.out = SHP(6, 4);
    int logs = t_log_count;
    run_case(&c3);
    CHECK(t_log_count > logs); /* the deprecation is logged */
    CHECK_CONTAINS(t_last_log, "target_shape");
    op_case c4 = {.op = "Flatten",
                  .ni = 1,
                  .in = {SHP(2, 3, 4)},
                  .out = SHP(2, 12),
                  .lo = -1,
                  .hi = 1,
                  .ref = ref_identity};
    run_case(&c4);
    c4.in[0] = SHP(5);
    c4.out = SHP(5, 1);
    run_case(&c4);

    mxk_error_sink err;
    bound b;
    CHECK_ST(bind_op(&b, "Reshape", NULL, 0, &err), MXK_ERR_INVALID_ARGUMENT, &err);
    CHECK_CONTAINS(err.msg, "shape");
    kv two[] = {{"shape", "(-1,-1)"}};
    CHECK_ST(bind_op(&b, "Reshape", two, 1, &err), MXK_ERR_INVALID_ARGUMENT, &err);
    CHECK_CONTAINS(err.msg, "-1");
    kv ok[] = {{"shape", "(3,-1)"}};
    CHECK_ST(bind_op(&b, "Reshape", ok, 1, &err), MXK_OK, &err);
    mxk_shape is[1] = {SHP(2, 5)}, os[1] = {mxk_sdk_shape_unknown()};
    CHECK_ST(infer_shapes(&b, is, os, &err), MXK_ERR_SHAPE, &err);
    /* backwards: one unknown input dim from the output */
    is[0] = SHP(0, 4);
    os[0] = SHP(3, 8);
    CHECK_ST(infer_shapes(&b, is, os, &err), MXK_OK, &err);
    CHECK(mxk_sdk_shape_equal(&is[0], &(mxk_shape){2, 0, {6, 4}}));
    /* in-place identity */
    mxk_inplace_pair p[4];
    CHECK_EQ_INT(b.op->def.forward_inplace(b.param, p, 4), 1);
    CHECK(p[0].identity == 1);
    unbind(&b);
    CHECK_ST(bind_op(&b, "Flatten", NULL, 0, &err), MXK_OK, &err);
    is[0] = SHP(0, 3, 4);
    os[0] = SHP(7, 12);
    CHECK_ST(infer_shapes(&b, is, os, &err), MXK_OK, &err);
    CHECK(mxk_sdk_shape_equal(&is[0], &(mxk_shape){3, 0, {7, 3, 4}}));
    unbind(&b);
}

/** BlockGrad (zero gradient) and _copyto. */
static void test_misc(void) {
    op_case c1 = {.op = "BlockGrad",
                  .ni = 1,
                  .in = {SHP(3, 4)},
                  .out = SHP(3, 4),
                  .lo = -1,
                  .hi = 1,
                  .ref = ref_identity,
                  .ref_bwd = ref_bwd_zero};
    run_case(&c1);
    op_case c2 = c1;
    c2.op = "_copyto";
    c2.ref_bwd = NULL;
    run_case(&c2);
    const cap_op *bg = find_op("BlockGrad");
    if (bg != NULL) {
        uint8_t og = 0, id = 0, od = 0;
        bg->def.backward_dependency(NULL, 1, 1, 1, &og, &id, &od);
        CHECK(og == 0 && id == 0 && od == 0);
    }
}

/* ------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : NULL;
#ifdef MXK_CPU_BLAS_PLUGIN
    if (path == NULL)
        path = MXK_CPU_BLAS_PLUGIN;
#endif
    if (path == NULL) {
        printf("SKIP: no plugin path (argv[1])\n");
        return 77;
    }
    t_dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (t_dl == NULL) {
        printf("SKIP: cannot load %s: %s\n", path, dlerror());
        return 77;
    }
    t_get_info = (mxk_plugin_get_info_fn)dlsym(t_dl, MXK_PLUGIN_INFO_SYMBOL);
    t_init = (mxk_plugin_init_fn)dlsym(t_dl, MXK_PLUGIN_INIT_SYMBOL);
    *(void **)&t_openblas_get_num_threads = dlsym(t_dl, "openblas_get_num_threads");
    if (t_get_info == NULL || t_init == NULL) {
        printf("FAIL: entry points missing in %s\n", path);
        return 1;
    }
    host_init();
    mxk_sdk_set_host(&t_host); /* the test's own SDK copy reports through the test host */
    mxk_error_sink err;
    sink_reset(&err);
    mxk_status st = plugin_init_with(NULL, &err);
    if (st != MXK_OK) {
        printf("FAIL: mxk_plugin_init: %d %s\n", (int)st, err.msg);
        return 1;
    }
    MXK_RUN(test_plugin_info);
    MXK_RUN(test_registration);
    MXK_RUN(test_device);
    MXK_RUN(test_sdk_shapes);
    MXK_RUN(test_sdk_types_attrs);
    MXK_RUN(test_sdk_req);
    MXK_RUN(test_sdk_half);
    MXK_RUN(test_fc_numbers);
    MXK_RUN(test_fc_shapes);
    MXK_RUN(test_fc_cases);
    MXK_RUN(test_activation_numbers);
    MXK_RUN(test_activation_cases);
    MXK_RUN(test_softmax_numbers);
    MXK_RUN(test_softmax_shapes);
    MXK_RUN(test_softmax_cases);
    MXK_RUN(test_elemwise);
    MXK_RUN(test_elemwise_scalar);
    MXK_RUN(test_dot);
    MXK_RUN(test_sum);
    MXK_RUN(test_reshape_rules);
    MXK_RUN(test_reshape_ops);
    MXK_RUN(test_misc);
    MXK_RUN(test_threads);
    MXK_RUN(test_threads_concurrent);
    MXK_RUN(test_init_options);
    /* the plugin stays loaded, as under the kernel (never dlclose'd) */
    return MXK_TEST_EXIT();
}
