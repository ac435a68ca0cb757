/*
 * Helpers of `mxk train`, `mxk score` and `mxk predict` (train_opts.h): the
 * Fashion-MNIST iterators (MNISTIter of plugins/io-recordio through
 * mxk_data_iter_*), the data shape a network takes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "train_opts.h"

/**
 * Path of a data file in the data dir, DIR/BASE.gz or else DIR/BASE, into buf.
 * Returns 1 when it exists and is readable, 0 when neither exists, -1 when it
 * exists but cannot be read (reported: "Fashion-MNIST file 'PATH' is not
 * readable: <strerror>").
 */
static int data_file(const char *dir, const char *base, char *buf, size_t size) {
    const char *suffix[] = {".gz", ""};
    for (int k = 0; k < 2; k++) {
        snprintf(buf, size, "%s/%s%s", dir, base, suffix[k]);
        if (access(buf, F_OK) != 0)
            continue;
        if (access(buf, R_OK) == 0)
            return 1;
        cli_error("Fashion-MNIST file '%s' is not readable: %s", buf, strerror(errno));
        return -1;
    }
    return 0;
}

int train_iter_create(const char *name, uint32_t n, const char *const *keys,
                      const char *const *vals, mxkt_iter **out) {
    mxk_data_iter *it = NULL;
    mxk_status st = mxk_data_iter_create(name, n, keys, vals, &it);
    if (st != MXK_OK) {
        cli_api_error(st, "creating %s failed", name);
        if (st == MXK_ERR_NOT_FOUND)
            cli_note("%s comes from the io-recordio plugin; see `mxk plugins`", name);
        return CLI_ERROR;
    }
    st = mxkt_kernel_iter_wrap(it, out);
    if (st != MXK_OK) {
        mxk_data_iter_free(it);
        return cli_error("%s", mxkt_last_error());
    }
    return CLI_OK;
}

/** Creates a MNISTIter over the train or test set of the data dir (part part_index of num_parts).
 */
int train_open_mnist(const char *dir, int train, int64_t batch, int flat, uint64_t seed,
                     int64_t num_examples, int32_t num_parts, int32_t part_index, mxkt_iter **out) {
    char img[4096], lbl[4096];
    const char *ib = train ? "train-images-idx3-ubyte" : "t10k-images-idx3-ubyte";
    const char *lb = train ? "train-labels-idx1-ubyte" : "t10k-labels-idx1-ubyte";
    int fi = data_file(dir, ib, img, sizeof img);
    int fl = fi < 0 ? fi : data_file(dir, lb, lbl, sizeof lbl);
    if (fi < 0 || fl < 0)
        return CLI_ERROR;
    if (fi == 0 || fl == 0) {
        cli_error("Fashion-MNIST not found in %s (%s.gz)", dir, fi == 0 ? ib : lb);
        cli_note("install it with `apt-get install dataset-fashion-mnist` "
                 "(/usr/share/datasets/fashion-mnist), or pass --data-dir DIR");
        return CLI_ERROR;
    }
    char bs[32], sd[32], ne[32], np[32], pi[32];
    snprintf(bs, sizeof bs, "%lld", (long long)batch);
    snprintf(sd, sizeof sd, "%llu", (unsigned long long)(seed % 2147483647ull));
    snprintf(ne, sizeof ne, "%lld", (long long)num_examples);
    snprintf(np, sizeof np, "%d", (int)num_parts);
    snprintf(pi, sizeof pi, "%d", (int)part_index);
    const char *keys[] = {"image",  "label",       "batch_size",   "shuffle",   "flat",      "seed",
                          "silent", "round_batch", "num_examples", "num_parts", "part_index"};
    const char *vals[] = {
        img, lbl, bs, train ? "True" : "False", flat ? "True" : "False", sd, "True", "True",
        ne,  np,  pi};
    if (train_iter_create("MNISTIter", 11, keys, vals, out) != CLI_OK)
        return CLI_ERROR;
    /* MNISTIter's part: examples [floor(n/k*i), floor(n/k*(i+1))) */
    int64_t all = train_count_examples(dir, train);
    int64_t n = num_examples > 0 ? num_examples
                                 : (int64_t)((double)all / num_parts * (part_index + 1)) -
                                       (int64_t)((double)all / num_parts * part_index);
    if (n > 0) /* the progress bar's total */
        (*out)->num_batches = (n + batch - 1) / batch;
    snprintf((*out)->source, sizeof(*out)->source, "%s", lbl);
    return CLI_OK;
}

/** 1 when `sym` takes flat (batch, 784) data, 0 when (batch, 1, 28, 28). */
int train_symbol_is_flat(const mxk_symbol *sym, int64_t batch) {
    mxk_shape s = {.ndim = 2};
    s.dims[0] = batch;
    s.dims[1] = 784;
    const char *name = "data";
    int32_t complete = 0;
    uint32_t nargs = 0;
    char **args = NULL;
    if (mxk_symbol_list_names(sym, MXK_SYMBOL_ARGUMENTS, &nargs, &args) != MXK_OK)
        return 1;
    mxk_shape *as = calloc(nargs + 1, sizeof *as);
    uint32_t nout = mxk_symbol_num_outputs(sym);
    mxk_shape *os = calloc(nout + 1, sizeof *os);
    uint32_t naux = 0;
    char **aux = NULL;
    mxk_symbol_list_names(sym, MXK_SYMBOL_AUX_STATES, &naux, &aux);
    mxk_shape *xs = calloc(naux + 1, sizeof *xs);
    int flat = as && os && xs &&
               mxk_symbol_infer_shape(sym, 1, &name, &s, as, os, xs, &complete) == MXK_OK &&
               complete;
    free(as);
    free(os);
    free(xs);
    mxk_string_list_free(args);
    mxk_string_list_free(aux);
    return flat;
}

/** Examples of a set, from its label file's length (see train_opts.h). */
int64_t train_count_examples(const char *dir, int train) {
    char path[4096];
    const char *base = train ? "train-labels-idx1-ubyte" : "t10k-labels-idx1-ubyte";
    if (data_file(dir, base, path, sizeof path) != 1)
        return -1;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    int64_t len = -1;
    size_t n = strlen(path);
    if (n > 3 && strcmp(path + n - 3, ".gz") == 0) {
        unsigned char t[4]; /* gzip's trailer ends with ISIZE, little-endian */
        if (fseek(f, -4, SEEK_END) == 0 && fread(t, 1, 4, f) == 4)
            len = (int64_t)t[0] | (int64_t)t[1] << 8 | (int64_t)t[2] << 16 | (int64_t)t[3] << 24;
    } else if (fseek(f, 0, SEEK_END) == 0) {
        len = ftell(f);
    }
    fclose(f);
    return len >= 8 ? len - 8 : -1; /* an IDX label file: 8 header bytes, 1 per label */
}
