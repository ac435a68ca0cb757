/*
 * conform_run: the mxk side of the conformance suite (tests/conformance/run.py).
 *
 * Usage: conform_run [--config-dir DIR] [--list FILE] [CASE_DIR...]
 *
 * For each case directory (given as arguments, or one per line in FILE) it reads
 *   symbol.json    the case's graph, written by MXNet 1.9.1's Symbol.tojson()
 *   inputs.params  MXNet's NDArray list format: "arg:NAME" (every argument),
 *                  "aux:NAME" (every aux state), "grad:NAME" (initial gradient;
 *                  zeros when absent), "ograd:I" (the head gradient of output I;
 *                  NULL when absent: loss outputs ignore it)
 *   run.json       {"known": {NAME: SHAPE}, "grad_req": {NAME: "write"|"add"|"null"},
 *                   "is_train": BOOL, "backward": BOOL}
 * binds the symbol on cpu(0), or on the context of the environment variable
 * MXK_CONFORM_CTX ("gpu:0": the inputs are copied there, the results back; the
 * GPU variant of the suite, tests/gpu) (upstream python/mxnet/symbol/symbol.py
 * Symbol.bind),
 * runs forward and, when asked, backward (upstream src/executor/graph_executor.cc),
 * and writes
 *   outputs.params "out:I" (outputs after forward), "aux_fwd:NAME" (aux states
 *                  after forward), "grad:NAME" (gradients after backward),
 *                  "aux_bwd:NAME" (aux states after backward)
 *   info.json      {"arguments": [...], "outputs": [...], "aux_states": [...],
 *                   "arg_shapes": [...], "out_shapes": [...], "aux_shapes": [...]}
 *                  from shape inference with the known shapes only, plus
 *                  {"error": MESSAGE, "stage": "load"|"infer_shape"|"inputs"|"bind"|
 *                  "forward"|"backward"} when mxk refused the case.
 * Only the public API (kernel/include/mxk.h) is used. A case mxk refuses is
 * recorded in its info.json, never a crash; the exit status is 0 unless the
 * runner itself could not work (usage, mxk_init, an unwritable case directory),
 * and 77 with "SKIP: ..." when MXK_CONFORM_CTX names a device that does not exist
 * (run it without case directories to ask only that).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk.h"

#define MAX_PATH 4096

/** The context the cases run on (MXK_CONFORM_CTX, default cpu(0)). */
static mxk_context g_ctx = {MXK_DEV_CPU, 0};

/** What one case's run produced; the arrays are owned here and freed by case_free. */
typedef struct conf_case {
    mxk_symbol *sym;
    char **args, **outs, **auxs; /* NULL-terminated name lists */
    uint32_t num_args, num_outs, num_auxs;
    uint32_t num_in; /* loaded inputs */
    mxk_ndarray **in_arrays;
    char **in_names;
    mxk_ndarray **arg_arrays, **grad_arrays, **aux_arrays; /* borrowed from in_arrays or owned */
    uint8_t *grad_owned;
    mxk_executor *exec;
    uint32_t num_saved; /* arrays to write to outputs.params */
    mxk_ndarray **saved;
    char **saved_names;
    json_t *info;
} conf_case;

/** Records mxk's last error and the stage in the case's info. */
static void case_error(conf_case *c, const char *stage) {
    json_object_set_new(c->info, "error", json_string(mxk_get_last_error()));
    json_object_set_new(c->info, "stage", json_string(stage));
}

/** A shape as a JSON array of its dims (new reference). */
static json_t *shape_json(const mxk_shape *s) {
    json_t *a = json_array();
    for (int32_t d = 0; d < s->ndim; d++)
        json_array_append_new(a, json_integer(s->dims[d]));
    return a;
}

/** A NULL-terminated name list as a JSON array of strings (new reference). */
static json_t *names_json(char **names) {
    json_t *a = json_array();
    for (char **n = names; n && *n; n++)
        json_array_append_new(a, json_string(*n));
    return a;
}

/** The loaded input named PREFIX:NAME (e.g. "arg:x_weight"), or NULL. */
static mxk_ndarray *find_exact(const conf_case *c, const char *prefix, const char *name) {
    size_t pl = strlen(prefix);
    for (uint32_t i = 0; c->in_names && i < c->num_in; i++) {
        const char *n = c->in_names[i];
        if (strncmp(n, prefix, pl) == 0 && n[pl] == ':' && strcmp(n + pl + 1, name) == 0)
            return c->in_arrays[i];
    }
    return NULL;
}

/**
 * find_exact, except that an argument MXNet lists as an aux state (or the reverse) still
 * gets its value, so that the run goes on and the name lists show the difference.
 */
static mxk_ndarray *find_input(const conf_case *c, const char *prefix, const char *name) {
    mxk_ndarray *a = find_exact(c, prefix, name);
    if (!a && strcmp(prefix, "arg") == 0)
        return find_exact(c, "aux", name);
    if (!a && strcmp(prefix, "aux") == 0)
        return find_exact(c, "arg", name);
    return a;
}

/** Reads a JSON shape ([d0, d1, ...]) into `s`; 0 when it is not one. */
static int shape_from_json(const json_t *j, mxk_shape *s) {
    if (!json_is_array(j) || json_array_size(j) > MXK_MAX_NDIM)
        return 0;
    memset(s, 0, sizeof(*s));
    s->ndim = (int32_t)json_array_size(j);
    for (size_t d = 0; d < json_array_size(j); d++) {
        const json_t *v = json_array_get(j, d);
        if (!json_is_integer(v))
            return 0;
        s->dims[d] = json_integer_value(v);
    }
    return 1;
}

/** Shape inference from the known shapes of run.json; fills the info's shape lists. */
static int infer_shapes(conf_case *c, const json_t *known) {
    uint32_t nk = (uint32_t)json_object_size(known), k = 0;
    const char **names = calloc(nk + 1, sizeof(*names));
    mxk_shape *shapes = calloc(nk + 1, sizeof(*shapes));
    mxk_shape *as = calloc(c->num_args + 1, sizeof(*as));
    mxk_shape *os = calloc(c->num_outs + 1, sizeof(*os));
    mxk_shape *xs = calloc(c->num_auxs + 1, sizeof(*xs));
    int ok = names && shapes && as && os && xs;
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)known, key, val) {
        if (ok && shape_from_json(val, &shapes[k]))
            names[k++] = key;
    }
    int32_t complete = 0;
    if (ok && mxk_symbol_infer_shape(c->sym, k, names, shapes, as, os, xs, &complete) == MXK_OK) {
        json_t *ja = json_array(), *jo = json_array(), *jx = json_array();
        for (uint32_t i = 0; i < c->num_args; i++)
            json_array_append_new(ja, shape_json(&as[i]));
        for (uint32_t i = 0; i < c->num_outs; i++)
            json_array_append_new(jo, shape_json(&os[i]));
        for (uint32_t i = 0; i < c->num_auxs; i++)
            json_array_append_new(jx, shape_json(&xs[i]));
        json_object_set_new(c->info, "arg_shapes", ja);
        json_object_set_new(c->info, "out_shapes", jo);
        json_object_set_new(c->info, "aux_shapes", jx);
        json_object_set_new(c->info, "complete", json_boolean(complete));
    } else {
        ok = 0;
        case_error(c, "infer_shape");
    }
    free(names);
    free(shapes);
    free(as);
    free(os);
    free(xs);
    return ok;
}

/**
 * Appends a host copy of `src` (after pending work) to the arrays written to
 * outputs.params.
 */
static int save_copy(conf_case *c, const char *prefix, const char *name, mxk_ndarray *src) {
    mxk_shape s = mxk_ndarray_shape(src);
    mxk_ndarray *dst = NULL;
    mxk_context cpu = {MXK_DEV_CPU, 0};
    if (mxk_ndarray_create(&s, mxk_ndarray_dtype(src), cpu, &dst) != MXK_OK)
        return 0;
    if (mxk_ndarray_copy_to(src, dst) != MXK_OK || mxk_ndarray_wait_to_read(dst) != MXK_OK) {
        mxk_ndarray_free(dst);
        return 0;
    }
    size_t len = strlen(prefix) + strlen(name) + 2;
    char *full = malloc(len);
    if (!full) {
        mxk_ndarray_free(dst);
        return 0;
    }
    snprintf(full, len, "%s:%s", prefix, name);
    c->saved[c->num_saved] = dst;
    c->saved_names[c->num_saved++] = full;
    return 1;
}

/** Copies the outputs (out:I) and aux states (aux_fwd:NAME) after forward. */
static int save_forward(conf_case *c) {
    char idx[16];
    for (uint32_t i = 0; i < c->num_outs; i++) {
        snprintf(idx, sizeof(idx), "%u", i);
        if (!save_copy(c, "out", idx, mxk_executor_output(c->exec, i)))
            return 0;
    }
    for (uint32_t i = 0; i < c->num_auxs; i++)
        if (!save_copy(c, "aux_fwd", c->auxs[i], c->aux_arrays[i]))
            return 0;
    return 1;
}

/** The request of argument `name` in run.json ("null" when absent). */
static int32_t grad_req_of(const json_t *reqs, const char *name) {
    const char *r = json_string_value(json_object_get(reqs, name));
    if (r && strcmp(r, "write") == 0)
        return MXK_REQ_WRITE;
    if (r && strcmp(r, "add") == 0)
        return MXK_REQ_ADD;
    return MXK_REQ_NULL;
}

/** Creates the gradient arrays (initial values from grad:NAME, else zeros) and binds. */
static int bind_case(conf_case *c, const json_t *reqs, mxk_op_req *req) {
    for (uint32_t i = 0; i < c->num_args; i++) {
        c->arg_arrays[i] = find_input(c, "arg", c->args[i]);
        if (!c->arg_arrays[i]) {
            json_object_set_new(c->info, "error",
                                json_sprintf("inputs.params has no arg:%s", c->args[i]));
            json_object_set_new(c->info, "stage", json_string("inputs"));
            return 0;
        }
        req[i] = grad_req_of(reqs, c->args[i]);
        if (req[i] == MXK_REQ_NULL)
            continue;
        mxk_shape s = mxk_ndarray_shape(c->arg_arrays[i]);
        if (mxk_ndarray_create(&s, mxk_ndarray_dtype(c->arg_arrays[i]), g_ctx,
                               &c->grad_arrays[i]) != MXK_OK) {
            case_error(c, "inputs");
            return 0;
        }
        c->grad_owned[i] = 1;
        mxk_ndarray *init = find_input(c, "grad", c->args[i]);
        mxk_status st = init ? mxk_ndarray_copy_to(init, c->grad_arrays[i])
                             : mxk_ndarray_fill(c->grad_arrays[i], 0.0);
        if (st != MXK_OK) {
            case_error(c, "inputs");
            return 0;
        }
    }
    for (uint32_t i = 0; i < c->num_auxs; i++) {
        c->aux_arrays[i] = find_input(c, "aux", c->auxs[i]);
        if (!c->aux_arrays[i]) {
            json_object_set_new(c->info, "error",
                                json_sprintf("inputs.params has no aux:%s", c->auxs[i]));
            json_object_set_new(c->info, "stage", json_string("inputs"));
            return 0;
        }
    }
    if (mxk_executor_bind(c->sym, g_ctx, c->num_args, c->arg_arrays, c->grad_arrays, req,
                          c->num_auxs, c->aux_arrays, NULL, &c->exec) != MXK_OK) {
        case_error(c, "bind");
        return 0;
    }
    return 1;
}

/** Backward with the head gradients ograd:I (absent ones NULL), then saves grads and aux. */
static int run_backward(conf_case *c, const mxk_op_req *req) {
    mxk_ndarray **heads = calloc(c->num_outs + 1, sizeof(*heads));
    if (!heads)
        return 0;
    char idx[16];
    for (uint32_t i = 0; i < c->num_outs; i++) {
        snprintf(idx, sizeof(idx), "%u", i);
        heads[i] = find_input(c, "ograd", idx);
    }
    int ok = mxk_executor_backward(c->exec, c->num_outs, heads) == MXK_OK;
    free(heads);
    for (uint32_t i = 0; ok && i < c->num_args; i++)
        if (req[i] != MXK_REQ_NULL)
            ok = save_copy(c, "grad", c->args[i], c->grad_arrays[i]);
    for (uint32_t i = 0; ok && i < c->num_auxs; i++)
        ok = save_copy(c, "aux_bwd", c->auxs[i], c->aux_arrays[i]);
    if (!ok)
        case_error(c, "backward");
    return ok;
}

/** Moves the loaded inputs to g_ctx (copies replace them); 0 with mxk's error set. */
static int inputs_to_ctx(conf_case *c) {
    if (g_ctx.dev_type == MXK_DEV_CPU)
        return 1;
    for (uint32_t i = 0; i < c->num_in; i++) {
        mxk_shape s = mxk_ndarray_shape(c->in_arrays[i]);
        mxk_ndarray *d = NULL;
        if (mxk_ndarray_create(&s, mxk_ndarray_dtype(c->in_arrays[i]), g_ctx, &d) != MXK_OK)
            return 0;
        if (mxk_ndarray_copy_to(c->in_arrays[i], d) != MXK_OK) {
            mxk_ndarray_free(d);
            return 0;
        }
        mxk_ndarray_free(c->in_arrays[i]);
        c->in_arrays[i] = d;
    }
    return 1;
}

/**
 * Reads MXK_CONFORM_CTX ("cpu:N" or "gpu:N") into g_ctx. Returns 0 (after a message)
 * when it is malformed, 77 when the device does not exist, else 1.
 */
static int read_ctx(void) {
    const char *v = getenv("MXK_CONFORM_CTX");
    char type[8];
    int id = 0;
    if (v == NULL || *v == '\0')
        return 1;
    if (sscanf(v, "%3[a-z]:%d", type, &id) != 2 || id < 0 ||
        (strcmp(type, "cpu") != 0 && strcmp(type, "gpu") != 0)) {
        fprintf(stderr, "conform_run: MXK_CONFORM_CTX=%s: expected cpu:N or gpu:N\n", v);
        return 0;
    }
    g_ctx.dev_type = strcmp(type, "gpu") == 0 ? MXK_DEV_GPU : MXK_DEV_CPU;
    g_ctx.dev_id = id;
    int32_t n = mxk_device_count(g_ctx.dev_type);
    if (id >= n) {
        printf("SKIP: MXK_CONFORM_CTX=%s: %s(%d) does not exist (mxk_device_count(%s) == %d)\n", v,
               type, id, type, (int)n);
        return 77;
    }
    return 1;
}

/** Loads, infers, binds and runs one case; everything it reached goes to c->info / c->saved. */
static void run_case(conf_case *c, const char *dir) {
    char path[MAX_PATH];
    snprintf(path, sizeof(path), "%s/run.json", dir);
    json_error_t jerr;
    json_t *run = json_load_file(path, 0, &jerr);
    if (!run) {
        json_object_set_new(c->info, "error", json_sprintf("run.json: %s", jerr.text));
        json_object_set_new(c->info, "stage", json_string("inputs"));
        return;
    }
    snprintf(path, sizeof(path), "%s/symbol.json", dir);
    if (mxk_symbol_load(path, &c->sym) != MXK_OK) {
        case_error(c, "load");
        goto out;
    }
    if (mxk_symbol_list_names(c->sym, MXK_SYMBOL_ARGUMENTS, &c->num_args, &c->args) != MXK_OK ||
        mxk_symbol_list_names(c->sym, MXK_SYMBOL_OUTPUTS, &c->num_outs, &c->outs) != MXK_OK ||
        mxk_symbol_list_names(c->sym, MXK_SYMBOL_AUX_STATES, &c->num_auxs, &c->auxs) != MXK_OK) {
        case_error(c, "load");
        goto out;
    }
    json_object_set_new(c->info, "arguments", names_json(c->args));
    json_object_set_new(c->info, "outputs", names_json(c->outs));
    json_object_set_new(c->info, "aux_states", names_json(c->auxs));
    if (!infer_shapes(c, json_object_get(run, "known")))
        goto out;
    snprintf(path, sizeof(path), "%s/inputs.params", dir);
    if (mxk_ndarray_load(path, &c->num_in, &c->in_arrays, &c->in_names) != MXK_OK ||
        !inputs_to_ctx(c)) {
        case_error(c, "inputs");
        goto out;
    }
    uint32_t n = c->num_args + 1, m = c->num_auxs + 1;
    c->arg_arrays = calloc(n, sizeof(*c->arg_arrays));
    c->grad_arrays = calloc(n, sizeof(*c->grad_arrays));
    c->grad_owned = calloc(n, 1);
    c->aux_arrays = calloc(m, sizeof(*c->aux_arrays));
    uint32_t cap = c->num_outs + 2 * c->num_auxs + c->num_args + 1;
    c->saved = calloc(cap, sizeof(*c->saved));
    c->saved_names = calloc(cap, sizeof(*c->saved_names));
    mxk_op_req *req = calloc(n, sizeof(*req));
    if (!c->arg_arrays || !c->grad_arrays || !c->grad_owned || !c->aux_arrays || !c->saved ||
        !c->saved_names || !req) {
        json_object_set_new(c->info, "error", json_string("conform_run: out of memory"));
        json_object_set_new(c->info, "stage", json_string("inputs"));
        free(req);
        goto out;
    }
    if (bind_case(c, json_object_get(run, "grad_req"), req)) {
        int train = json_is_true(json_object_get(run, "is_train"));
        if (mxk_executor_forward(c->exec, train) != MXK_OK || !save_forward(c))
            case_error(c, "forward");
        else if (json_is_true(json_object_get(run, "backward")))
            run_backward(c, req);
    }
    free(req);
out:
    json_decref(run);
}

/** Frees everything a case holds (after the executor's pending work). */
static void case_free(conf_case *c) {
    mxk_executor_free(c->exec);
    for (uint32_t i = 0; c->grad_owned && i < c->num_args; i++)
        if (c->grad_owned[i])
            mxk_ndarray_free(c->grad_arrays[i]);
    for (uint32_t i = 0; i < c->num_saved; i++) {
        mxk_ndarray_free(c->saved[i]);
        free(c->saved_names[i]);
    }
    free(c->saved);
    free(c->saved_names);
    free(c->arg_arrays);
    free(c->grad_arrays);
    free(c->grad_owned);
    free(c->aux_arrays);
    if (c->in_arrays)
        mxk_ndarray_list_free(c->num_in, c->in_arrays, c->in_names);
    mxk_string_list_free(c->args);
    mxk_string_list_free(c->outs);
    mxk_string_list_free(c->auxs);
    mxk_symbol_free(c->sym);
    json_decref(c->info);
}

/** Runs the case in `dir` and writes its outputs.params and info.json; 0 if they cannot be written.
 */
static int do_case(const char *dir) {
    conf_case c;
    memset(&c, 0, sizeof(c));
    c.info = json_object();
    run_case(&c, dir);
    mxk_wait_all(); /* errors were reported per array above; clear the rest */
    char path[MAX_PATH];
    int ok = 1;
    snprintf(path, sizeof(path), "%s/outputs.params", dir);
    if (mxk_ndarray_save(path, c.num_saved, c.saved, (const char *const *)c.saved_names) !=
        MXK_OK) {
        fprintf(stderr, "conform_run: %s\n", mxk_get_last_error());
        ok = 0;
    }
    char *text = json_dumps(c.info, JSON_INDENT(1));
    snprintf(path, sizeof(path), "%s/info.json", dir);
    if (!text || mxk_file_write(path, text, strlen(text)) != MXK_OK) {
        fprintf(stderr, "conform_run: cannot write %s: %s\n", path, mxk_get_last_error());
        ok = 0;
    }
    free(text);
    case_free(&c);
    return ok;
}

/** Runs every case directory listed in `list` (one per line). */
static int do_list(const char *list) {
    FILE *f = fopen(list, "r");
    if (!f) {
        perror(list);
        return 0;
    }
    char line[MAX_PATH];
    int ok = 1;
    while (ok && fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0])
            ok = do_case(line);
    }
    fclose(f);
    return ok;
}

int main(int argc, char **argv) {
    mxk_init_options opt;
    memset(&opt, 0, sizeof(opt));
    opt.struct_size = sizeof(opt);
    int first = 1;
    const char *list = NULL;
    while (first + 1 < argc && argv[first][0] == '-') {
        if (strcmp(argv[first], "--config-dir") == 0)
            opt.config_dir = argv[first + 1];
        else if (strcmp(argv[first], "--list") == 0)
            list = argv[first + 1];
        else
            break;
        first += 2;
    }
    if (first < argc && argv[first][0] == '-') {
        fprintf(stderr, "usage: conform_run [--config-dir DIR] [--list FILE] [CASE_DIR...]\n");
        return 2;
    }
    if (mxk_init(&opt) != MXK_OK) {
        fprintf(stderr, "conform_run: mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    int ctx_ok = read_ctx();
    if (ctx_ok != 1) {
        mxk_shutdown();
        return ctx_ok == 0 ? 2 : 77;
    }
    int ok = list ? do_list(list) : 1;
    for (int i = first; ok && i < argc; i++)
        ok = do_case(argv[i]);
    mxk_shutdown();
    return ok ? 0 : 1;
}
