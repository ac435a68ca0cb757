/*
 * `mxk ndarray FILE`: lists the arrays of an MXNet NDArray list file (.params,
 * .states, the output of mx.nd.save): name or index, dtype, shape, the first
 * values, and min / max over all elements (exact for integer dtypes, in double for
 * floating-point ones).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/** Default number of leading values shown per array (--values). */
#define DEFAULT_VALUES 5
/** Largest accepted --values. */
#define MAX_VALUES 1000000

/** One element: `i` for integer dtypes (every one fits int64 exactly), `d` otherwise. */
typedef struct cell {
    int64_t i;
    double d;
} cell;

/** Summary of one array. */
typedef struct array_stats {
    uint64_t size; /**< number of elements */
    int integer;   /**< the dtype is an integer type: values use `i` */
    cell *first;   /**< the first min(size, N) values */
    size_t n_first;
    cell min, max; /**< NaN elements skipped; NaN when all are NaN; unset when size 0 */
} array_stats;

/** Converts an IEEE 754 half (binary16) to double. */
static double half_to_double(uint16_t h) {
    int sign = (h >> 15) & 1;
    int exp = (h >> 10) & 0x1f;
    int mant = h & 0x3ff;
    double v;
    if (exp == 0)
        v = ldexp((double)mant, -24); /* zero or subnormal */
    else if (exp == 31)
        v = mant ? NAN : INFINITY;
    else
        v = ldexp((double)(mant | 0x400), exp - 25);
    return sign ? -v : v;
}

/** Element i of typed data (float32/float16 via their shortest decimal). */
static cell element(const void *data, int32_t dtype, uint64_t i) {
    switch (dtype) {
    case MXK_FLOAT32:
        return (cell){0, cli_float_shortest(((const float *)data)[i])};
    case MXK_FLOAT64:
        return (cell){0, ((const double *)data)[i]};
    case MXK_FLOAT16:
        return (cell){0, cli_float_shortest((float)half_to_double(((const uint16_t *)data)[i]))};
    case MXK_UINT8:
        return (cell){((const uint8_t *)data)[i], 0};
    case MXK_INT32:
        return (cell){((const int32_t *)data)[i], 0};
    case MXK_INT8:
        return (cell){((const int8_t *)data)[i], 0};
    case MXK_INT64:
        return (cell){((const int64_t *)data)[i], 0};
    default:
        return (cell){0, NAN};
    }
}

/** a < b in the array's kind of values. */
static int less(const array_stats *s, cell a, cell b) {
    return s->integer ? a.i < b.i : a.d < b.d;
}

/** Formats a value for the table. */
static void format_value(const array_stats *s, cell v, char *buf, size_t size) {
    if (s->integer)
        snprintf(buf, size, "%" PRId64, v.i);
    else
        cli_format_number(v.d, buf, size);
}

/** A value as JSON: an exact integer for integer dtypes. */
static json_t *value_json(const array_stats *s, cell v) {
    return s->integer ? json_integer((json_int_t)v.i) : cli_json_number(v.d);
}

/**
 * Computes the summary of arr (a CPU array, as mxk_ndarray_load returns) keeping
 * `num_first` leading values. Returns CLI_OK or CLI_ERROR (reported).
 */
static int compute_stats(mxk_ndarray *arr, size_t num_first, array_stats *s) {
    memset(s, 0, sizeof *s);
    int32_t dtype = mxk_ndarray_dtype(arr);
    if (mxk_dtype_size(dtype) == 0)
        return cli_error("unsupported dtype code %d", (int)dtype);
    s->size = mxk_ndarray_size(arr);
    s->integer = cli_dtype_is_integer(dtype);
    s->n_first = s->size < num_first ? (size_t)s->size : num_first;
    s->first = calloc(s->n_first + 1, sizeof *s->first);
    if (s->first == NULL)
        return cli_error("out of memory");
    if (s->size == 0)
        return CLI_OK;
    void *data = NULL;
    mxk_status st = mxk_ndarray_data(arr, &data);
    if (st != MXK_OK)
        return cli_api_error(st, "reading array data failed");
    int seen = 0;
    s->min = s->max = (cell){0, NAN};
    for (uint64_t i = 0; i < s->size; i++) {
        cell v = element(data, dtype, i);
        if (i < s->n_first)
            s->first[i] = v;
        if (!s->integer && isnan(v.d))
            continue;
        if (!seen || less(s, v, s->min))
            s->min = v;
        if (!seen || less(s, s->max, v))
            s->max = v;
        seen = 1;
    }
    return CLI_OK;
}

/** The JSON object of one array. */
static json_t *array_json(uint32_t index, const char *name, mxk_ndarray *arr,
                          const array_stats *s) {
    int32_t dtype = mxk_ndarray_dtype(arr);
    mxk_shape shape = mxk_ndarray_shape(arr);
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    json_object_set_new(o, "index", json_integer(index));
    json_object_set_new(o, "name", name ? json_string(name) : json_null());
    json_object_set_new(o, "dtype", json_string(mxk_dtype_name(dtype)));
    json_t *dims = json_array();
    for (int d = 0; dims != NULL && d < shape.ndim && d < MXK_MAX_NDIM; d++)
        json_array_append_new(dims, json_integer(shape.dims[d]));
    json_object_set_new(o, "shape", dims);
    json_object_set_new(o, "size", json_integer((json_int_t)s->size));
    json_t *first = json_array();
    for (size_t i = 0; first != NULL && i < s->n_first; i++)
        json_array_append_new(first, value_json(s, s->first[i]));
    json_object_set_new(o, "first", first);
    json_object_set_new(o, "min", s->size ? value_json(s, s->min) : json_null());
    json_object_set_new(o, "max", s->size ? value_json(s, s->max) : json_null());
    return o;
}

/** One row of the human table, every cell formatted. */
typedef struct row {
    char name[24]; /**< index, when the file has no names */
    const char *label;
    const char *dtype;
    char shape[8 * 22 + 4];
    char min[32], max[32];
    char *first;
} row;

/** Formats the first values as "[a, b, c]" (", ..." when there are more). Malloc'd. */
static char *format_first(const array_stats *s) {
    size_t cap = 16 + s->n_first * 34, used = 0;
    char *buf = malloc(cap);
    if (buf == NULL)
        return NULL;
    used += (size_t)snprintf(buf, cap, "[");
    for (size_t i = 0; i < s->n_first; i++) {
        char num[32];
        format_value(s, s->first[i], num, sizeof num);
        used += (size_t)snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", num);
    }
    const char *more = s->size <= s->n_first ? "" : s->n_first ? ", ..." : "...";
    snprintf(buf + used, cap - used, "%s]", more);
    return buf;
}

/** Prints the arrays as an aligned table. Returns CLI_OK or CLI_ERROR. */
static int print_table(const char *path, uint32_t num, mxk_ndarray **arrays, char **names,
                       const array_stats *stats) {
    row *rows = calloc(num + 1, sizeof *rows);
    if (rows == NULL)
        return cli_error("out of memory");
    int w_name = 4, w_dtype = 5, w_shape = 5, w_min = 3, w_max = 3;
    int rc = CLI_OK;
    for (uint32_t i = 0; i < num; i++) {
        row *r = &rows[i];
        int32_t dtype = mxk_ndarray_dtype(arrays[i]);
        mxk_shape shape = mxk_ndarray_shape(arrays[i]);
        snprintf(r->name, sizeof r->name, "%u", (unsigned)i);
        r->label = names ? names[i] : r->name;
        r->dtype = mxk_dtype_name(dtype);
        cli_format_shape(&shape, r->shape, sizeof r->shape);
        if (stats[i].size > 0) {
            format_value(&stats[i], stats[i].min, r->min, sizeof r->min);
            format_value(&stats[i], stats[i].max, r->max, sizeof r->max);
        } else {
            snprintf(r->min, sizeof r->min, "-");
            snprintf(r->max, sizeof r->max, "-");
        }
        r->first = format_first(&stats[i]);
        if (r->first == NULL) {
            rc = cli_error("out of memory");
            break;
        }
#define WIDEN(w, s) w = (int)strlen(s) > w ? (int)strlen(s) : w
        WIDEN(w_name, r->label);
        WIDEN(w_dtype, r->dtype);
        WIDEN(w_shape, r->shape);
        WIDEN(w_min, r->min);
        WIDEN(w_max, r->max);
#undef WIDEN
    }
    if (rc == CLI_OK) {
        printf("%s: %u array%s%s\n", path, (unsigned)num, num == 1 ? "" : "s",
               names || num == 0 ? "" : " (unnamed: shown by index)");
        if (num > 0)
            printf("%-*s  %-*s  %-*s  %-*s  %-*s  %s\n", w_name, "NAME", w_dtype, "DTYPE", w_shape,
                   "SHAPE", w_min, "MIN", w_max, "MAX", "FIRST VALUES");
        for (uint32_t i = 0; i < num; i++) {
            const row *r = &rows[i];
            printf("%-*s  %-*s  %-*s  %-*s  %-*s  %s\n", w_name, r->label, w_dtype, r->dtype,
                   w_shape, r->shape, w_min, r->min, w_max, r->max, r->first);
        }
    }
    for (uint32_t i = 0; i < num; i++)
        free(rows[i].first);
    free(rows);
    return rc;
}

/** Prints the arrays as one JSON object. */
static int print_json(const char *path, uint32_t num, mxk_ndarray **arrays, char **names,
                      const array_stats *stats) {
    json_t *root = json_object();
    if (root == NULL)
        return cli_json_print(NULL, 0);
    int exact = 0; /* float64 data needs all 17 digits */
    json_object_set_new(root, "file", json_string(path));
    json_t *list = json_array();
    for (uint32_t i = 0; list != NULL && i < num; i++) {
        if (mxk_ndarray_dtype(arrays[i]) == MXK_FLOAT64)
            exact = 1;
        json_array_append_new(list, array_json(i, names ? names[i] : NULL, arrays[i], &stats[i]));
    }
    json_object_set_new(root, "arrays", list);
    return cli_json_print(root, exact ? 17 : 15);
}

/** What `mxk ndarray` lists: the file and how many leading values per array. */
typedef struct list_request {
    const char *path;
    size_t num_values;
} list_request;

/**
 * Loads the file of the list_request `arg` and prints its arrays. Runs with the
 * library initialised (cli_with_library; plugins loaded) because array memory
 * comes from the CPU device backend of a plugin.
 */
static int list_file(const cli_globals *g, void *arg) {
    const char *path = ((const list_request *)arg)->path;
    size_t num_values = ((const list_request *)arg)->num_values;
    uint32_t num = 0;
    mxk_ndarray **arrays = NULL;
    char **names = NULL;
    mxk_status st = mxk_ndarray_load(path, &num, &arrays, &names);
    if (st != MXK_OK) {
        const char *msg = mxk_get_last_error();
        if (msg != NULL && msg[0] != '\0' && strstr(msg, path) == NULL)
            cli_error("%s: %s", path, msg);
        else
            cli_api_error(st, "cannot load NDArray file '%s'", path);
        if (st != MXK_ERR_IO && st != MXK_ERR_FORMAT && mxk_device_count(MXK_DEV_CPU) == 0)
            cli_note("no CPU device backend is loaded (it comes from a plugin such as "
                     "cpu-blas); check 'mxk plugins'");
        return CLI_ERROR;
    }
    int rc = CLI_OK;
    array_stats *stats = calloc(num + 1, sizeof *stats);
    if (stats == NULL)
        rc = cli_error("out of memory");
    for (uint32_t i = 0; rc == CLI_OK && i < num; i++) {
        rc = compute_stats(arrays[i], num_values, &stats[i]);
        if (rc != CLI_OK)
            cli_note("in array %u of '%s'", (unsigned)i, path);
    }
    if (rc == CLI_OK)
        rc = g->json ? print_json(path, num, arrays, names, stats)
                     : print_table(path, num, arrays, names, stats);
    for (uint32_t i = 0; stats != NULL && i < num; i++)
        free(stats[i].first);
    free(stats);
    mxk_ndarray_list_free(num, arrays, names);
    return rc;
}

/** Runs `mxk ndarray FILE [--values N] [--json]`. */
static int run_ndarray(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    const char *file = NULL;
    uint64_t num_values = DEFAULT_VALUES;
    int positional_only = 0;
    for (int i = 0; i < argc; i++) {
        const char *value = NULL;
        if (!positional_only && strcmp(argv[i], "--") == 0) {
            positional_only = 1;
            continue;
        }
        int r = positional_only ? 0 : cli_option_value(argc, argv, &i, "--values", &value);
        if (r < 0)
            return cli_usage_error(self, "option --values needs a number");
        if (r > 0) {
            if (!cli_parse_uint(value, MAX_VALUES, &num_values))
                return cli_usage_error(self, "--values expects a number from 0 to %d, got '%s'",
                                       MAX_VALUES, value);
            continue;
        }
        if (!positional_only && cli_is_option(argv[i]))
            return cli_reject_argument(self, argv[i]);
        if (file != NULL)
            return cli_usage_error(self, "expected one FILE, got '%s' and '%s'", file, argv[i]);
        file = argv[i];
    }
    if (file == NULL)
        return cli_usage_error(self, "missing FILE");
    list_request req = {file, (size_t)num_values};
    return cli_with_library(g, list_file, &req);
}

/** The `ndarray` command. */
const cli_command cli_cmd_ndarray = {
    .name = "ndarray",
    .summary = "list the arrays of an MXNet NDArray file (.params, .states, mx.nd.save)",
    .usage = "mxk ndarray FILE [--values N] [--json]",
    .help = "Loads FILE (MXNet's NDArray list format: V1/V2/V3 and legacy records) and\n"
            "lists each array: its name (its index when the file has no names), dtype,\n"
            "shape, min and max (computed in double over all elements; NaN values are\n"
            "skipped) and its first values.\n"
            "\n"
            "Options:\n"
            "  --values N   show the first N values of each array (default 5, 0: none)\n"
            "  --json       print {\"file\", \"arrays\": [{\"index\", \"name\" (null when\n"
            "               unnamed), \"dtype\", \"shape\": [...], \"size\", \"first\": [...],\n"
            "               \"min\", \"max\"}]}; non-finite values are the strings \"NaN\",\n"
            "               \"Infinity\", \"-Infinity\"; min/max are null for empty arrays\n"
            "\n"
            "The arrays are loaded into CPU memory, which comes from a plugin's CPU device\n"
            "backend: the config directory must enable one (see 'mxk plugins').\n",
    .run = run_ndarray,
};
