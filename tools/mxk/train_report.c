/*
 * What the training commands report (train_opts.h): the header and the summary of
 * `mxk train`, and the --json objects of `mxk train`, `mxk score` and `mxk predict`.
 */
#include <stdlib.h>
#include <string.h>

#include "train_opts.h"

/** Parameters and aux states of `sym` for `data_shape` ("data"), -1 when shapes are not known. */
static int64_t param_count(const mxk_symbol *sym, const mxk_shape *data_shape) {
    const char *name = "data";
    uint32_t nargs = 0, naux = 0, nout = mxk_symbol_num_outputs(sym);
    char **args = NULL, **aux = NULL;
    int64_t total = -1;
    if (mxk_symbol_list_names(sym, MXK_SYMBOL_ARGUMENTS, &nargs, &args) != MXK_OK)
        return -1;
    if (mxk_symbol_list_names(sym, MXK_SYMBOL_AUX_STATES, &naux, &aux) != MXK_OK) {
        mxk_string_list_free(args);
        return -1;
    }
    mxk_shape *as = calloc(nargs + 1, sizeof *as), *os = calloc(nout + 1, sizeof *os),
              *xs = calloc(naux + 1, sizeof *xs);
    int32_t complete = 0;
    if (as && os && xs &&
        mxk_symbol_infer_shape(sym, 1, &name, data_shape, as, os, xs, &complete) == MXK_OK) {
        /* the label may stay unknown (a language model reshapes it): parameters suffice */
        total = 0;
        for (uint32_t i = 0; i < nargs + naux; i++) {
            const char *n = i < nargs ? args[i] : aux[i - nargs];
            const mxk_shape *s = i < nargs ? &as[i] : &xs[i - nargs];
            if (strcmp(n, "data") == 0 || strcmp(n, "softmax_label") == 0)
                continue;
            if (s->ndim <= 0) {
                total = -1;
                break;
            }
            int64_t size = 1;
            for (int32_t d = 0; d < s->ndim; d++)
                size *= s->dims[d];
            total += size;
        }
    }
    free(as);
    free(os);
    free(xs);
    mxk_string_list_free(args);
    mxk_string_list_free(aux);
    return total;
}

/** Prints "Backend DEV: B1 (op, op), B2 (op)" for device type `dev` and the ops of `sym`. */
static void print_backends(FILE *log, const mxk_symbol *sym, int32_t dev) {
    char *text = NULL;
    json_t *root = NULL;
    if (mxk_symbol_to_json(sym, &text) == MXK_OK)
        root = json_loads(text, 0, NULL);
    free(text);
    json_t *nodes = json_object_get(root, "nodes");
    size_t n = json_array_size(nodes);
    const char **ops = calloc(n + 1, sizeof *ops), **backs = calloc(n + 1, sizeof *backs);
    size_t nops = 0;
    for (size_t i = 0; ops && backs && i < n; i++) {
        const char *op = json_string_value(json_object_get(json_array_get(nodes, i), "op"));
        if (op == NULL || strcmp(op, "null") == 0)
            continue;
        size_t k = 0;
        while (k < nops && strcmp(ops[k], op) != 0)
            k++;
        if (k < nops)
            continue;
        ops[nops] = op;
        if (mxk_resolve_backend(op, dev, &backs[nops]) != MXK_OK)
            backs[nops] = "none";
        nops++;
    }
    fprintf(log, "Backend %s:", mxk_dev_type_name(dev));
    /* each backend once, with its operators, in the order of first use */
    for (size_t i = 0; i < nops; i++) {
        size_t first = 0;
        while (strcmp(backs[first], backs[i]) != 0)
            first++;
        if (first != i)
            continue;
        fprintf(log, "%s %s (", i ? ";" : "", backs[i]);
        for (size_t k = i, shown = 0; k < nops; k++)
            if (strcmp(backs[k], backs[i]) == 0)
                fprintf(log, "%s%s", shown++ ? ", " : "", ops[k]);
        fputc(')', log);
    }
    fputc('\n', log);
    free(ops);
    free(backs);
    json_decref(root);
}

/** Prints the header of `mxk train` (see train_opts.h). */
void train_print_header(FILE *log, const train_header *h) {
    const char *dir = mxk_config_dir();
    fprintf(log, "Config dir: %s\n", dir[0] ? dir : "(none found)");
    fprintf(log, "Plugins:");
    uint32_t np = mxk_plugin_count();
    for (uint32_t i = 0; i < np; i++) {
        mxk_plugin_record r = {.struct_size = sizeof r};
        if (mxk_plugin_get(i, &r) == MXK_OK)
            fprintf(log, "%s %s %s", i ? "," : "", r.name, r.version);
    }
    fprintf(log, "%s\n", np ? "" : " none");
    for (uint32_t c = 0; c < h->nctx; c++) {
        uint32_t seen = 0;
        while (h->ctx[seen].dev_type != h->ctx[c].dev_type)
            seen++;
        if (seen == c) /* each device type once */
            print_backends(log, h->sym, h->ctx[c].dev_type);
    }
    int64_t params = param_count(h->sym, h->data_shape);
    char shape[128];
    cli_format_shape(h->data_shape, shape, sizeof shape);
    fprintf(log, "Network: %s, data %s, ", h->network, shape);
    if (params >= 0)
        fprintf(log, "%lld parameters\n", (long long)params);
    else
        fprintf(log, "parameters not known (shapes not inferred)\n");
    if (h->data_line) {
        fprintf(log, "Data: text %s\n", h->data_line);
        return;
    }
    if (h->data_train) {
        fprintf(log, "Data: RecordIO %s: %lld training examples, ", h->data_train,
                (long long)h->all_train);
        if (h->data_val)
            fprintf(log, "%s: %lld validation examples\n", h->data_val, (long long)h->val_examples);
        else
            fprintf(log, "no validation\n");
        return;
    }
    fprintf(log, "Data: Fashion-MNIST in %s: %lld training examples", h->data_dir,
            (long long)h->train_examples);
    if (h->all_train >= 0 && h->all_train != h->train_examples)
        fprintf(log, " (of %lld)", (long long)h->all_train);
    fprintf(log, ", %lld validation examples\n", (long long)h->val_examples);
}

/** Prints the summary line of `mxk train` (see train_opts.h). */
void train_print_summary(FILE *log, const train_summary *s, const mxkt_metric *metrics, uint32_t nm,
                         const mxkt_fit_options *fo) {
    fprintf(log, "Summary: %d epoch%s (%d to %d) in %.3f s, %.1f samples/s;", s->epochs,
            s->epochs == 1 ? "" : "s", s->first_epoch, s->first_epoch + s->epochs - 1,
            s->wall_seconds, s->train_seconds > 0 ? s->train_samples / s->train_seconds : 0.0);
    for (uint32_t k = 0; k < nm; k++)
        fprintf(log, " Train-%s=%f", metrics[k].name, fo->last_train[k]);
    for (uint32_t k = 0; fo->last_val_examples > 0 && k < nm; k++)
        fprintf(log, " Validation-%s=%f", metrics[k].name, fo->last_val[k]);
    fputc('\n', log);
}

/** The index of the largest of v[0..n) (the first of equals; see train_opts.h). */
int64_t train_argmax(const float *v, int64_t n) {
    int64_t best = 0;
    for (int64_t j = 1; j < n; j++)
        if (v[j] > v[best])
            best = j;
    return best;
}

/** Prints a JSON string (Jansson's escaping) on stdout. */
static void put_json_string(const char *s) {
    json_t *j = json_string(s);
    char *text = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    fputs(text ? text : "null", stdout);
    free(text);
    json_decref(j);
}

/** Prints `score`'s JSON object (see train_opts.h). */
int train_print_score_json(const mxkt_metric *metrics, uint32_t nm, int64_t examples) {
    printf("{\"examples\": %lld, \"metrics\": {", (long long)examples);
    for (uint32_t k = 0; k < nm; k++) {
        char num[40];
        mxkt_format_shortest(mxkt_metric_get(&metrics[k]), 0, num, sizeof num);
        printf("%s", k ? ", " : "");
        put_json_string(metrics[k].name);
        printf(": %s", num);
    }
    printf("}}\n");
    return fflush(stdout) == 0 && !ferror(stdout) ? CLI_OK
                                                  : cli_error("writing the JSON output failed");
}

/** Prints `predict`'s JSON object (see train_opts.h). */
int train_print_predict_json(const float *out, int64_t rows, int64_t width, const char *file,
                             const char *key) {
    printf("{\"examples\": %lld, \"outputs\": %lld, ", (long long)rows, (long long)width);
    if (file) {
        printf("\"file\": ");
        put_json_string(file);
        printf(", \"key\": ");
        put_json_string(key);
    } else {
        char num[40];
        printf("\"classes\": [");
        for (int64_t r = 0; r < rows; r++)
            printf("%s%lld", r ? ", " : "", (long long)train_argmax(out + r * width, width));
        printf("], \"probabilities\": [");
        for (int64_t r = 0; r < rows; r++) {
            mxkt_format_shortest(out[r * width + train_argmax(out + r * width, width)], 1, num,
                                 sizeof num);
            printf("%s%s", r ? ", " : "", num);
        }
        printf("]");
    }
    printf("}\n");
    return fflush(stdout) == 0 && !ferror(stdout) ? CLI_OK
                                                  : cli_error("writing the JSON output failed");
}
