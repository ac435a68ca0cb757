/*
 * The bound reports of `mxk symbol summary` (symbol_bind.c): binding a symbol on
 * the CPU for --backends, random values for a bound graph, and the per-node
 * profile of --profile.
 */
#ifndef MXK_CLI_SYMBOL_BIND_H
#define MXK_CLI_SYMBOL_BIND_H

#include "cli.h"

/** The inputs given by --shape: `num` names and their shapes. */
typedef struct symbol_inputs {
    uint32_t num;
    const char *const *names;
    const mxk_shape *shapes;
} symbol_inputs;

/**
 * 1 when a variable name looks like a parameter or an aux state (MXNet
 * plot_network's looks_like_weight: *_weight, *_bias, *_beta, *_gamma,
 * *_moving_var, *_moving_mean, *_running_var, *_running_mean).
 */
int symbol_looks_like_param(const char *name);

/**
 * After a shape error: prints a note naming the arguments of `sym` that need a
 * --shape, those not given in `in` that look like neither parameters
 * (symbol_looks_like_param) nor labels (names ending in "label"), as upstream's
 * Module names its candidate inputs: "give the shape of input 'image' with
 * --shape image=d1,d2,..." (several: "give the shapes of the inputs a, b with
 * --shape NAME=d1,d2,..."). Prints nothing when there is none.
 */
void symbol_note_inputs(const mxk_symbol *sym, const symbol_inputs *in);

/**
 * Binds `sym` on cpu(0) with mxk_executor_simple_bind from the input shapes
 * (float32, zero-filled; gradients "write" for every argument when `with_grads`,
 * else none). The caller frees *out (mxk_executor_free). Returns CLI_OK, or
 * CLI_ERROR after reporting the library's error ("binding the symbol failed: ...")
 * and, for a shape error, symbol_note_inputs.
 */
int symbol_bind(const mxk_symbol *sym, const symbol_inputs *in, int with_grads, mxk_executor **out);

/**
 * Fills the bound executor's arrays with random values of the stream `seed`
 * (splitmix64): the inputs named in `in` uniform in [0, 1); labels (arguments
 * whose names end in "label") whole numbers in [0, C), C the second dim of output
 * 0 (1 without one), classes of every classifier; with `params` also the other
 * arguments (parameters) uniform in [-a, a) with a = sqrt(3 / fan_in), fan_in the
 * product of the non-leading dims (a unit-variance signal keeps its scale through
 * deep nets), and the aux states uniform in [0.5, 1.5) for names ending in "_var"
 * (moving variances), else in [-0.5, 0.5). Values go through float64
 * (mxk_ndarray_copy_to converts), so any dtype takes them. Returns CLI_OK, or
 * CLI_ERROR after reporting the library's error.
 */
int symbol_fill_random(const mxk_symbol *sym, const symbol_inputs *in, mxk_executor *ex, int params,
                       uint64_t seed);

/**
 * `mxk symbol summary --profile`: binds `sym` (gradients when `is_train`), fills
 * the arguments and aux states with symbol_fill_random (seed 0), runs one untimed warm-up
 * iteration, then `iterations` iterations with the executor's profiler on (forward,
 * in training mode plus backward when `is_train`), and prints per operator node in
 * the graph's order its operator, backend, forward and backward kernel
 * milliseconds per iteration and share of the kernels' total, then the totals and
 * the wall time per iteration (g->json: one JSON object). Returns CLI_OK, or
 * CLI_ERROR after reporting a library error.
 */
int symbol_profile(const cli_globals *g, const mxk_symbol *sym, const symbol_inputs *in,
                   int64_t iterations, int is_train);

#endif /* MXK_CLI_SYMBOL_BIND_H */
