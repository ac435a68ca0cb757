/*
 * The bound reports of `mxk symbol summary` (symbol_bind.c): binding a symbol on
 * the CPU for --backends, and the per-node profile of --profile.
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
 * Binds `sym` on cpu(0) with mxk_executor_simple_bind from the input shapes
 * (float32, zero-filled; gradients "write" for every argument when `with_grads`,
 * else none). The caller frees *out (mxk_executor_free). Returns CLI_OK, or
 * CLI_ERROR after reporting the library's error ("binding the symbol failed: ...").
 */
int symbol_bind(const mxk_symbol *sym, const symbol_inputs *in, int with_grads, mxk_executor **out);

/**
 * `mxk symbol summary --profile`: binds `sym` (gradients when `is_train`), fills
 * the arguments with random values (see symbol_bind.c), runs one untimed warm-up
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
