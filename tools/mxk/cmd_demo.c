/*
 * `mxk demo`: a small imperative run through the public API. Creates a batch of
 * two samples with fixed values, runs FullyConnected -> Activation(relu) ->
 * SoftmaxOutput with mxk_imperative_invoke on the chosen device and prints every
 * step's output and the backend that ran it (mxk_resolve_backend).
 *
 * With data [[1,2],[-1,-2]], weight [[1,0],[0,1],[1,1]] and bias [0,0,1] the
 * FullyConnected output is [[1,2,4],[-1,-2,-2]], relu gives [[1,2,4],[0,0,0]]
 * and the softmax rows are [0.042010, 0.114195, 0.843795] and [1/3, 1/3, 1/3].
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/** Number of operator steps of the demo. */
#define NUM_STEPS 3
/** Largest number of array handles the demo creates. */
#define MAX_HANDLES 32

/** A host copy of an array: shape and float32 values. */
typedef struct host_tensor {
    mxk_shape shape;
    float *values;
    uint64_t size;
} host_tensor;

/** One step of the demo: operator, its attributes and its result. */
typedef struct demo_step {
    const char *op;
    const char *attr_key; /**< NULL: no attribute */
    const char *attr_val;
    const char *backend;
    host_tensor out;
} demo_step;

/** An input of the demo network with its fixed values. */
typedef struct demo_input {
    const char *name;
    int ndim;
    int64_t dims[2];
    float values[6];
} demo_input;

/** The inputs: data (2 samples, 2 features), FC weight and bias, softmax label. */
static const demo_input demo_inputs[] = {
    {"data", 2, {2, 2}, {1, 2, -1, -2}},
    {"weight", 2, {3, 2}, {1, 0, 0, 1, 1, 1}},
    {"bias", 1, {3, 0}, {0, 0, 1}},
    {"label", 1, {2, 0}, {2, 0}},
};

/** Number of demo inputs. */
#define NUM_INPUTS (sizeof demo_inputs / sizeof demo_inputs[0])

/** Handles created by the demo, freed together. */
typedef struct handle_set {
    mxk_ndarray *items[MAX_HANDLES];
    size_t n;
} handle_set;

/** Remembers a handle for release (frees it at once when the set is full). */
static void keep(handle_set *hs, mxk_ndarray *a) {
    if (hs->n < MAX_HANDLES)
        hs->items[hs->n++] = a;
    else
        mxk_ndarray_free(a);
}

/** Frees every handle of the set. */
static void release_all(handle_set *hs) {
    for (size_t i = 0; i < hs->n; i++)
        mxk_ndarray_free(hs->items[i]);
    hs->n = 0;
}

/** Parses "cpu" / "gpu" (optionally ":ID", e.g. "gpu:1") into ctx. Returns 1 on success. */
static int parse_ctx(const char *s, mxk_context *ctx) {
    const char *colon = strchr(s, ':');
    size_t len = colon ? (size_t)(colon - s) : strlen(s);
    uint64_t id = 0;
    if (colon != NULL && !cli_parse_uint(colon + 1, 1023, &id))
        return 0;
    if (len == 3 && strncmp(s, "cpu", 3) == 0)
        ctx->dev_type = MXK_DEV_CPU;
    else if (len == 3 && strncmp(s, "gpu", 3) == 0)
        ctx->dev_type = MXK_DEV_GPU;
    else
        return 0;
    ctx->dev_id = (int32_t)id;
    return 1;
}

/**
 * Checks that every operator of the demo is registered and has a kernel for the
 * device type, and records the backend that will run it. Returns CLI_OK or
 * CLI_ERROR (reported, with a hint to run `mxk plugins`).
 */
static int check_operators(demo_step *steps, int32_t dev_type) {
    char missing[128] = "";
    for (int i = 0; i < NUM_STEPS; i++)
        if (mxk_op_plugin(steps[i].op) == NULL)
            snprintf(missing + strlen(missing), sizeof missing - strlen(missing), "%s%s",
                     missing[0] ? ", " : "", steps[i].op);
    if (missing[0] != '\0') {
        const char *dir = mxk_config_dir();
        cli_error("the demo needs operators that are not registered: %s "
                  "(%u plugin%s loaded from config dir '%s')",
                  missing, (unsigned)mxk_plugin_count(), mxk_plugin_count() == 1 ? "" : "s",
                  dir && dir[0] ? dir : "(none found)");
        cli_note("check 'mxk plugins': a plugin such as cpu-blas provides them; "
                 "use --config-dir DIR to choose the config directory");
        return CLI_ERROR;
    }
    for (int i = 0; i < NUM_STEPS; i++) {
        mxk_status st = mxk_resolve_backend(steps[i].op, dev_type, &steps[i].backend);
        if (st != MXK_OK || steps[i].backend == NULL) {
            cli_api_error(st, "no %s kernel for operator %s", mxk_dev_type_name(dev_type),
                          steps[i].op);
            cli_note("check 'mxk plugins' for the kernels each plugin provides");
            return CLI_ERROR;
        }
    }
    return CLI_OK;
}

/** Creates a demo input on ctx and copies its values in. */
static int make_input(const demo_input *in, mxk_context ctx, handle_set *hs, mxk_ndarray **out) {
    mxk_shape shape;
    memset(&shape, 0, sizeof shape);
    shape.ndim = in->ndim;
    uint64_t size = 1;
    for (int d = 0; d < in->ndim; d++) {
        shape.dims[d] = in->dims[d];
        size *= (uint64_t)in->dims[d];
    }
    mxk_status st = mxk_ndarray_create(&shape, MXK_FLOAT32, ctx, out);
    if (st != MXK_OK)
        return cli_api_error(st, "creating the demo input '%s' failed", in->name);
    keep(hs, *out);
    st = mxk_ndarray_copy_from_host(*out, in->values, size * sizeof(float));
    if (st != MXK_OK)
        return cli_api_error(st, "copying the demo input '%s' failed", in->name);
    return CLI_OK;
}

/** Copies arr (float32, any device) into a host tensor. Returns CLI_OK or CLI_ERROR. */
static int to_host(mxk_ndarray *arr, host_tensor *t) {
    t->shape = mxk_ndarray_shape(arr);
    t->size = mxk_ndarray_size(arr);
    if (mxk_ndarray_dtype(arr) != MXK_FLOAT32)
        return cli_error("expected a float32 result, got dtype code %d",
                         (int)mxk_ndarray_dtype(arr));
    t->values = calloc(t->size + 1, sizeof(float));
    if (t->values == NULL)
        return cli_error("out of memory");
    mxk_status st = mxk_ndarray_copy_to_host(arr, t->values, t->size * sizeof(float));
    if (st != MXK_OK)
        return cli_api_error(st, "copying a result to the host failed");
    return CLI_OK;
}

/**
 * Runs `op` on the inputs with one attribute (or none) and returns its first
 * visible output in *out (kept in hs). Returns CLI_OK or CLI_ERROR.
 */
static int invoke(const demo_step *step, uint32_t num_in, mxk_ndarray *const *in, handle_set *hs,
                  mxk_ndarray **out) {
    mxk_ndarray *outputs[MXK_MAX_OUTPUTS] = {NULL};
    uint32_t num_out = 0;
    const char *keys[1] = {step->attr_key};
    const char *vals[1] = {step->attr_val};
    uint32_t num_attrs = step->attr_key ? 1 : 0;
    mxk_status st =
        mxk_imperative_invoke(step->op, num_in, in, &num_out, outputs, num_attrs, keys, vals);
    if (st != MXK_OK)
        return cli_api_error(st, "running %s failed", step->op);
    for (uint32_t i = 0; i < num_out && i < 16; i++)
        keep(hs, outputs[i]);
    if (num_out == 0 || outputs[0] == NULL)
        return cli_error("%s returned no output", step->op);
    *out = outputs[0];
    return CLI_OK;
}

/** Runs the three steps on ctx, filling steps[i].out. Returns CLI_OK or CLI_ERROR. */
static int run_network(demo_step *steps, mxk_context ctx) {
    handle_set hs;
    hs.n = 0;
    mxk_ndarray *in[NUM_INPUTS];
    int rc = CLI_OK;
    for (size_t i = 0; rc == CLI_OK && i < NUM_INPUTS; i++)
        rc = make_input(&demo_inputs[i], ctx, &hs, &in[i]);

    mxk_ndarray *fc = NULL, *act = NULL, *prob = NULL;
    mxk_ndarray *fc_in[3], *sm_in[2];
    if (rc == CLI_OK) {
        fc_in[0] = in[0], fc_in[1] = in[1], fc_in[2] = in[2];
        rc = invoke(&steps[0], 3, fc_in, &hs, &fc);
    }
    if (rc == CLI_OK)
        rc = invoke(&steps[1], 1, &fc, &hs, &act);
    if (rc == CLI_OK) {
        sm_in[0] = act, sm_in[1] = in[3];
        rc = invoke(&steps[2], 2, sm_in, &hs, &prob);
    }
    mxk_ndarray *results[NUM_STEPS] = {fc, act, prob};
    for (int i = 0; rc == CLI_OK && i < NUM_STEPS; i++)
        rc = to_host(results[i], &steps[i].out);
    release_all(&hs);
    if (rc == CLI_OK) {
        mxk_status st = mxk_wait_all();
        if (st != MXK_OK)
            rc = cli_api_error(st, "the demo's work failed");
    }
    return rc;
}

/** Prints values of a (up to 2-D) tensor as "[[a, b], [c, d]]" with `fmt`. */
static void print_values(const float *v, const mxk_shape *shape, const char *fmt) {
    int64_t rows = shape->ndim == 2 ? shape->dims[0] : 1;
    int64_t cols = shape->ndim >= 1 ? shape->dims[shape->ndim - 1] : 1;
    if (shape->ndim == 2)
        putchar('[');
    for (int64_t r = 0; r < rows; r++) {
        printf("%s[", r ? ", " : "");
        for (int64_t c = 0; c < cols; c++) {
            fputs(c ? ", " : "", stdout);
            printf(fmt, (double)v[r * cols + c]);
        }
        putchar(']');
    }
    if (shape->ndim == 2)
        putchar(']');
}

/** Prints the demo's result for people. */
static void print_human(const demo_step *steps, mxk_context ctx) {
    printf("mxk demo on %s(%d): FullyConnected -> Activation(relu) -> SoftmaxOutput\n\n",
           mxk_dev_type_name(ctx.dev_type), (int)ctx.dev_id);
    puts("inputs:");
    for (size_t i = 0; i < NUM_INPUTS; i++) {
        const demo_input *in = &demo_inputs[i];
        mxk_shape shape;
        memset(&shape, 0, sizeof shape);
        shape.ndim = in->ndim;
        memcpy(shape.dims, in->dims, sizeof in->dims);
        char sh[64];
        cli_format_shape(&shape, sh, sizeof sh);
        printf("  %-7s %-6s ", in->name, sh);
        print_values(in->values, &shape, "%g");
        putchar('\n');
    }
    printf("\n%-16s %-15s %-10s %s\n", "operator", "attributes", "backend", "output");
    for (int i = 0; i < NUM_STEPS; i++) {
        const demo_step *s = &steps[i];
        char attrs[64], sh[64];
        if (s->attr_key)
            snprintf(attrs, sizeof attrs, "%s=%s", s->attr_key, s->attr_val);
        else
            snprintf(attrs, sizeof attrs, "-");
        cli_format_shape(&s->out.shape, sh, sizeof sh);
        printf("%-16s %-15s %-10s %s ", s->op, attrs, s->backend, sh);
        print_values(s->out.values, &s->out.shape, "%.4g");
        putchar('\n');
    }
    const host_tensor *p = &steps[NUM_STEPS - 1].out;
    int64_t cols = p->shape.ndim >= 1 ? p->shape.dims[p->shape.ndim - 1] : 1;
    puts("\nsoftmax output (class probabilities, one row per sample):");
    for (uint64_t r = 0; cols > 0 && r < p->size / (uint64_t)cols; r++) {
        mxk_shape row;
        memset(&row, 0, sizeof row);
        row.ndim = 1;
        row.dims[0] = cols;
        fputs("  ", stdout);
        print_values(p->values + r * (uint64_t)cols, &row, "%.6f");
        putchar('\n');
    }
}

/** A host tensor as JSON: {"shape": [...], "values": nested rows}. */
static json_t *tensor_json(const float *v, const mxk_shape *shape) {
    json_t *o = json_object();
    json_t *dims = json_array();
    int64_t rows = shape->ndim == 2 ? shape->dims[0] : 1;
    int64_t cols = shape->ndim >= 1 ? shape->dims[shape->ndim - 1] : 1;
    for (int d = 0; dims && d < shape->ndim; d++)
        json_array_append_new(dims, json_integer(shape->dims[d]));
    json_t *values = json_array();
    for (int64_t r = 0; values && r < rows; r++) {
        json_t *row = shape->ndim == 2 ? json_array() : values;
        for (int64_t c = 0; row && c < cols; c++)
            json_array_append_new(row, cli_json_number(cli_float_shortest(v[r * cols + c])));
        if (shape->ndim == 2)
            json_array_append_new(values, row);
    }
    json_object_set_new(o, "shape", dims);
    json_object_set_new(o, "values", values);
    return o;
}

/** Prints the demo's result as JSON. */
static int print_json(const demo_step *steps, mxk_context ctx) {
    json_t *root = json_object();
    if (root == NULL)
        return cli_json_print(NULL, 0);
    char where[32];
    snprintf(where, sizeof where, "%s(%d)", mxk_dev_type_name(ctx.dev_type), (int)ctx.dev_id);
    json_object_set_new(root, "context", json_string(where));
    json_t *inputs = json_object();
    for (size_t i = 0; inputs && i < NUM_INPUTS; i++) {
        const demo_input *in = &demo_inputs[i];
        mxk_shape shape;
        memset(&shape, 0, sizeof shape);
        shape.ndim = in->ndim;
        memcpy(shape.dims, in->dims, sizeof in->dims);
        json_object_set_new(inputs, in->name, tensor_json(in->values, &shape));
    }
    json_object_set_new(root, "inputs", inputs);
    json_t *ops = json_array();
    for (int i = 0; ops && i < NUM_STEPS; i++) {
        const demo_step *s = &steps[i];
        json_t *o = json_object();
        json_t *attrs = json_object();
        if (s->attr_key && attrs)
            json_object_set_new(attrs, s->attr_key, json_string(s->attr_val));
        json_object_set_new(o, "op", json_string(s->op));
        json_object_set_new(o, "attrs", attrs);
        json_object_set_new(o, "backend", json_string(s->backend));
        json_object_set_new(o, "output", tensor_json(s->out.values, &s->out.shape));
        json_array_append_new(ops, o);
    }
    json_object_set_new(root, "operators", ops);
    const host_tensor *p = &steps[NUM_STEPS - 1].out;
    json_object_set_new(root, "output", tensor_json(p->values, &p->shape));
    return cli_json_print(root, 15);
}

/**
 * Runs the demo on the device *(mxk_context *)arg with the library initialised
 * (cli_with_library) and prints the result. Returns CLI_OK or CLI_ERROR.
 */
static int demo_body(const cli_globals *g, void *arg) {
    mxk_context ctx = *(const mxk_context *)arg;
    demo_step steps[NUM_STEPS] = {
        {.op = "FullyConnected", .attr_key = "num_hidden", .attr_val = "3"},
        {.op = "Activation", .attr_key = "act_type", .attr_val = "relu"},
        {.op = "SoftmaxOutput"},
    };
    int rc = check_operators(steps, ctx.dev_type);
    if (rc == CLI_OK && mxk_device_count(ctx.dev_type) <= ctx.dev_id) {
        rc = cli_error("no device %s(%d): %d %s device%s available",
                       mxk_dev_type_name(ctx.dev_type), (int)ctx.dev_id,
                       (int)mxk_device_count(ctx.dev_type), mxk_dev_type_name(ctx.dev_type),
                       mxk_device_count(ctx.dev_type) == 1 ? "" : "s");
        cli_note("check 'mxk plugins' for the device backends that are loaded");
    }
    if (rc == CLI_OK)
        rc = run_network(steps, ctx);
    if (rc == CLI_OK)
        rc = g->json ? print_json(steps, ctx) : (print_human(steps, ctx), CLI_OK);
    for (int i = 0; i < NUM_STEPS; i++)
        free(steps[i].out.values);
    return rc;
}

/** Runs `mxk demo [--ctx cpu|gpu] [--json]`. */
static int run_demo(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    mxk_context ctx = {MXK_DEV_CPU, 0};
    for (int i = 0; i < argc; i++) {
        const char *value = NULL;
        if (strcmp(argv[i], "--") == 0)
            continue;
        int r = cli_option_value(argc, argv, &i, "--ctx", &value);
        if (r < 0)
            return cli_usage_error(self, "option --ctx needs a value (cpu or gpu)");
        if (r > 0) {
            if (!parse_ctx(value, &ctx))
                return cli_usage_error(self, "--ctx expects cpu or gpu (or gpu:ID), got '%s'",
                                       value);
            continue;
        }
        return cli_reject_argument(self, argv[i]);
    }
    return cli_with_library(g, demo_body, &ctx);
}

/** The `demo` command. */
const cli_command cli_cmd_demo = {
    .name = "demo",
    .summary = "run FullyConnected + Activation + SoftmaxOutput on a tiny batch",
    .usage = "mxk demo [--ctx cpu|gpu] [--json]",
    .help = "Runs a tiny network imperatively through the public C API\n"
            "(mxk_imperative_invoke) on a batch of two samples with fixed values:\n"
            "  data   [[1, 2], [-1, -2]]\n"
            "  FullyConnected(num_hidden=3), weight [[1, 0], [0, 1], [1, 1]], bias [0, 0, 1]\n"
            "  Activation(act_type=relu)\n"
            "  SoftmaxOutput, label [2, 0]\n"
            "and prints each operator's output and the backend that ran it. The expected\n"
            "softmax rows are [0.042010, 0.114195, 0.843795] and [0.333333, 0.333333,\n"
            "0.333333]. The operators come from plugins: if they are missing, see\n"
            "'mxk plugins'. --backend LIST chooses among backends that provide them.\n"
            "\n"
            "Options:\n"
            "  --ctx cpu|gpu  device to run on (default cpu; gpu:ID for another GPU)\n"
            "  --json         print {\"context\", \"inputs\", \"operators\": [{\"op\", \"attrs\",\n"
            "                 \"backend\", \"output\"}], \"output\": {\"shape\", \"values\"}}\n",
    .run = run_demo,
};
