/*
 * Fuzz target for attribute-string parsing (kernel/attrs.c: ints, floats, bools,
 * enums, shapes such as "(5,5)") and every cpu-blas operator's parameter check and
 * shape inference, through mxk_op_instance_create (the cached operator of
 * upstream's src/executor/graph_executor.cc; the parameter parsing of
 * dmlc::Parameter::Init and each operator's InferShape).
 *
 * Input: byte 0 picks the operator (index modulo mxk_op_count(), in registration
 * order); then text lines: "key=value" attributes up to a line "--", then one line
 * per argument after it with its shape as "d1,d2,..." (an empty line: unknown,
 * inferred; "--" as the last line: no arguments).
 * Shapes beyond FUZZ_MAX_ELEMS elements or MXK_MAX_NDIM dims are not run.
 *
 * Property checked on every input: creation returns MXK_OK or one of
 * MXK_ERR_INVALID_ARGUMENT, MXK_ERR_NOT_FOUND, MXK_ERR_SHAPE, MXK_ERR_TYPE,
 * MXK_ERR_UNSUPPORTED, MXK_ERR_OUT_OF_MEMORY with a message, and never crashes;
 * a success has every input, output and aux shape
 * complete, and the given input shapes unchanged (except BatchNorm's gamma and beta,
 * which upstream's BatchNormShape, src/operator/nn/batch_norm.cc, assigns from the
 * data's channel count over whatever was given).
 *
 * Builds as the other targets: libFuzzer (the kernel and the cpu-blas plugin
 * compiled instrumented, fuzz_kernel.h) and the standalone ctest driver (seeds:
 * one call per operator family with valid attributes and shapes).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_PLUGINS                                                                               \
    { "libmxk-cpu-blas.so", NULL }
#include "fuzz_kernel.h"
#include "fuzz_target.h"

/** Most attributes and arguments of one input. */
#define MAX_ITEMS 16

/** One decoded input: the operator and its attributes and argument shapes. */
typedef struct op_call {
    const char *op;
    uint32_t nattrs, nin;
    const char *keys[MAX_ITEMS], *vals[MAX_ITEMS];
    mxk_shape shapes[MAX_ITEMS];
} op_call;

/** Parses "d1,d2,..." (or "" for unknown) into s; 0 when malformed or too big. */
static int parse_dims(char *line, mxk_shape *s) {
    memset(s, 0, sizeof *s);
    if (*line == '\0')
        return 1;
    uint64_t elems = 1;
    for (char *p = line;;) {
        char *end = p;
        uint64_t d = 0;
        while (*end >= '0' && *end <= '9' && d <= FUZZ_MAX_ELEMS)
            d = d * 10 + (uint64_t)(*end++ - '0');
        if (end == p || d > FUZZ_MAX_ELEMS || s->ndim >= MXK_MAX_NDIM)
            return 0;
        elems *= d ? d : 1;
        if (elems > FUZZ_MAX_ELEMS)
            return 0;
        s->dims[s->ndim++] = (int64_t)d;
        if (*end == '\0')
            return 1;
        if (*end != ',')
            return 0;
        p = end + 1;
    }
}

/** Splits the text (modified in place) into c's attributes and shapes; 0 when unusable. */
static int decode(char *text, op_call *c) {
    int in_shapes = 0;
    for (char *line = text; line != NULL;) {
        char *nl = strchr(line, '\n');
        if (nl != NULL)
            *nl = '\0';
        if (!in_shapes && strcmp(line, "--") == 0) {
            in_shapes = 1;
        } else if (!in_shapes) {
            char *eq = strchr(line, '=');
            if (eq == NULL || c->nattrs >= MAX_ITEMS)
                return 0;
            *eq = '\0';
            c->keys[c->nattrs] = line;
            c->vals[c->nattrs++] = eq + 1;
        } else {
            if (c->nin >= MAX_ITEMS || !parse_dims(line, &c->shapes[c->nin++]))
                return 0;
        }
        line = nl ? nl + 1 : NULL;
    }
    return 1;
}

/** True when every dim of s is known. */
static int complete(const mxk_shape *s) {
    if (s->ndim < 1)
        return 0;
    for (int32_t d = 0; d < s->ndim; d++)
        if (s->dims[d] < 1)
            return 0;
    return 1;
}

/** 1 when operator `op` may replace the given shape of its input i (see the file comment). */
static int reassigns_input(const char *op, uint32_t i) {
    return strcmp(op, "BatchNorm") == 0 && (i == 1 || i == 2);
}

/** Checks a created instance's shapes (see the file comment). */
static void check_instance(const mxk_op_instance *inst, const op_call *c) {
    uint32_t n[3] = {0, 0, 0}, visible = 0;
    mxk_op_instance_counts(inst, &n[0], &n[1], &visible, &n[2]);
    if (n[0] != c->nin || visible > n[1])
        fuzz_kernel_fail(c->op, "instance counts disagree with the call");
    for (int32_t kind = 0; kind < 3; kind++)
        for (uint32_t i = 0; i < n[kind]; i++) {
            mxk_shape s;
            int32_t dtype = -1;
            if (mxk_op_instance_shape(inst, kind, i, &s, &dtype) != MXK_OK)
                fuzz_kernel_fail(c->op, "cannot read a slot's shape");
            if (!complete(&s))
                fuzz_kernel_fail(c->op, "a shape is incomplete after creation");
            if (kind == 0 && complete(&c->shapes[i]) && !reassigns_input(c->op, i) &&
                (s.ndim != c->shapes[i].ndim ||
                 memcmp(s.dims, c->shapes[i].dims, sizeof(int64_t) * (size_t)s.ndim) != 0))
                fuzz_kernel_fail(c->op, "a given input shape was changed");
        }
}

/** Runs one input; returns the creation's status (MXK_OK when the input was not run). */
static mxk_status run_one(const uint8_t *data, size_t size) {
    fuzz_kernel_start();
    uint32_t nops = mxk_op_count();
    if (size == 0 || nops == 0)
        return MXK_OK;
    op_call c;
    memset(&c, 0, sizeof c);
    c.op = mxk_op_name(data[0] % nops);
    char *text = malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    mxk_status st = MXK_OK;
    if (strlen(text) == size - 1 && decode(text, &c)) {
        mxk_op_instance *inst = NULL;
        st = mxk_op_instance_create(c.op, c.nattrs, c.keys, c.vals, (mxk_context){MXK_DEV_CPU, 0},
                                    c.nin, c.shapes, NULL, &inst);
        if (st == MXK_OK) {
            check_instance(inst, &c);
            mxk_op_instance_free(inst);
        } else {
            if (st != MXK_ERR_INVALID_ARGUMENT && st != MXK_ERR_NOT_FOUND && st != MXK_ERR_SHAPE &&
                st != MXK_ERR_TYPE && st != MXK_ERR_UNSUPPORTED && st != MXK_ERR_OUT_OF_MEMORY)
                fuzz_kernel_fail(c.op, "unexpected status");
            if (mxk_get_last_error()[0] == '\0')
                fuzz_kernel_fail(c.op, "error without a message");
        }
    }
    free(text);
    return st;
}

MXK_FUZZ_TARGET(run_one)

#ifdef MXK_FUZZ_STANDALONE

#include "fuzz_driver.h"

/** A seed call: operator name and its text (attributes, "--", shapes). */
static const char *const seed_calls[][2] = {
    {"FullyConnected", "num_hidden=4\n--\n2,3\n\n"},
    {"Convolution", "kernel=(3,3)\nnum_filter=2\npad=(1,1)\nstride=(1,1)\n--\n1,1,5,5\n\n"},
    {"Deconvolution", "kernel=(2,2)\nnum_filter=2\nstride=(2,2)\nno_bias=True\n--\n1,1,3,3\n"},
    {"Pooling", "kernel=(2,2)\nstride=(2,2)\npool_type=max\n--\n1,1,4,4"},
    {"Reshape", "shape=(0,-1)\n--\n2,3,4"},
    {"Concat", "num_args=2\ndim=1\n--\n2,3\n2,2"},
    {"BatchNorm", "eps=0.001\nfix_gamma=False\n--\n2,3\n\n"},
    {"Activation", "act_type=tanh\n--\n2,3"},
    {"SoftmaxOutput", "grad_scale=1.5\n--\n2,3\n2"},
    {"transpose", "axes=(1,0)\n--\n2,3"},
    {"broadcast_add", "--\n2,1\n1,3"},
    {"Embedding", "input_dim=5\noutput_dim=3\n--\n4\n"},
    {"sum", "axis=1\nkeepdims=True\n--\n2,3"},
    {"SliceChannel", "num_outputs=2\naxis=1\n--\n2,4"},
    {"Crop", "num_args=1\nh_w=(2,2)\noffset=(1,1)\n--\n1,1,4,4"},
    {"UpSampling", "scale=2\nsample_type=nearest\nnum_args=1\n--\n1,1,2,2"},
    {"LRN", "nsize=3\nalpha=0.0001\n--\n1,3,2,2"},
    {"one_hot", "depth=4\n--\n3"},
    {"clip", "a_min=-1.5\na_max=2e0\n--\n3"},
    {"LeakyReLU", "act_type=leaky\nslope=0.25\n--\n2,3"},
    {"Cast", "dtype=float32\n--\n2"},
    {"SwapAxis", "dim1=0\ndim2=1\n--\n2,3"},
    {"dot", "transpose_b=True\n--\n2,3\n4,3"},
    {"_random_uniform", "low=0\nhigh=1\nshape=(2,3)\n--"},
};

/** How many seed calls there are. */
#define N_SEEDS ((int)(sizeof seed_calls / sizeof seed_calls[0]))

/** Builds the seeds whose operator is registered; returns how many. */
static int build_seeds(fuzz_seed *seeds) {
    int n = 0;
    for (int k = 0; k < N_SEEDS; k++) {
        uint32_t i = 0;
        while (i < mxk_op_count() && strcmp(mxk_op_name(i), seed_calls[k][0]) != 0)
            i++;
        if (i == mxk_op_count() || i > 255)
            continue;
        size_t len = strlen(seed_calls[k][1]);
        uint8_t *p = malloc(len + 1);
        p[0] = (uint8_t)i;
        memcpy(p + 1, seed_calls[k][1], len);
        if (run_one(p, len + 1) != MXK_OK)
            fuzz_kernel_fail(seed_calls[k][0], "a valid seed failed");
        seeds[n++] = (fuzz_seed){p, len + 1, seed_calls[k][0]};
    }
    return n;
}

/** Counts of created instances and rejected calls. */
static unsigned long n_ok, n_err;

/** Runs one input (the driver passes an exact-size heap copy) and counts it. */
static void drive(const uint8_t *p, size_t n) {
    if (run_one(p, n) == MXK_OK)
        n_ok++;
    else
        n_err++;
}

/** Single-byte replacements: the operator byte moves by one, text bytes become syntax. */
static uint8_t replace_byte(size_t at, int r, uint8_t orig) {
    static const char repl[] = {'0', '-', ',', '(', ')', 'e', '9', '\n'};
    if (at == 0)
        return (uint8_t)(orig + (r ? 1 : 255));
    return (uint8_t)repl[(at * 3 + (size_t)r * 5) % sizeof repl];
}

/** Tokens of the format for the driver's random mutations (fuzz_mutate_tokens). */
static const char *const tokens[] = {"0",     "-1",     "99999999999999999999",
                                     "(",     ")",      ",",
                                     "=",     "\n--\n", "\n",
                                     "1e308", "nan",    "-0",
                                     "(0,0)", "()",     "True",
                                     "4096",  "(1,)",   "[2, 2]",
                                     " ",     NULL};

/** The operator target for the shared driver. */
static const fuzz_target target = {
    .run = drive,
    .seed_ext = ".op",
    .per_byte = 2,
    .replace = replace_byte,
    .random_runs = 1500,
    .slack = 64,
    .tokens = tokens,
    .keep = 1,
    .rng_init = 0x6a09e667f3bcc908ull,
    .rng_per_seed = 1,
};

int main(int argc, char **argv) {
    fuzz_kernel_start();
    fuzz_seed seeds[N_SEEDS];
    int n = build_seeds(seeds);
    if (n < N_SEEDS / 2)
        fuzz_kernel_fail("fuzz_op_attrs", "most seed operators are not registered");
    int rc = fuzz_main(&target, argc, argv, seeds, n);
    printf("fuzz_op_attrs: %lu inputs, %lu instances created, %lu rejected cleanly\n",
           fuzz_n_inputs, n_ok, n_err);
    mxk_shutdown();
    return rc;
}

#endif /* MXK_FUZZ_STANDALONE */
