/*
 * The configuration of one operator node on the command line, shared by
 * `mxk opcheck` and `mxk op describe`: the operator, its attributes
 * (--attr KEY=VALUE, MXNet's names) and the shapes of its first arguments
 * (--shape d1,d2,..., in argument order; "0" or "()" leaves one to inference).
 * The arguments after the last --shape are left to inference too
 * (cli_op_node_fill_shapes). Not thread-safe (one per command run).
 */
#ifndef MXK_CLI_OP_NODE_H
#define MXK_CLI_OP_NODE_H

#include "cli.h"

/** Most --attr and --shape options (and arguments of an operator). */
#define CLI_OP_NODE_MAX 64

/** One operator node: the operator, attributes and argument shapes. */
typedef struct cli_op_node {
    const char *op; /**< the operator's name as given (an alias too), or NULL */
    uint32_t num_attrs;
    const char *keys[CLI_OP_NODE_MAX];
    const char *vals[CLI_OP_NODE_MAX];
    char *attr_buf[CLI_OP_NODE_MAX]; /**< owned copies of KEY=VALUE split at '=' */
    uint32_t num_shapes;
    mxk_shape shapes[CLI_OP_NODE_MAX]; /**< ndim 0: left to inference */
} cli_op_node;

/**
 * Consumes argv[*i] (and its value) when it is --attr or --shape: returns 1 and
 * advances *i; 0 when it is another argument; -1 (the command then exits with
 * CLI_USAGE) after printing "option '--attr' needs KEY=VALUE",
 * "bad --attr 'X': expected KEY=VALUE", "option '--shape' needs d1,d2,...",
 * "bad --shape 'X': expected positive integers d1,d2,... (at most 8), or 0 for a
 * shape left to inference", "too many --attr options (at most 64)" or
 * "too many --shape options (at most 64)" with the command's usage.
 */
int cli_op_node_option(cli_op_node *node, const cli_command *cmd, int argc, char **argv, int *i);

/**
 * Pads node->shapes with unknown shapes up to the operator's argument count with
 * the node's attributes (a node "x" of the operator with a variable per argument,
 * MXNet's compose). When no such node can be built (unknown operator, bad
 * attributes) nothing changes: the caller's next library call reports why. More
 * shapes than arguments prints "OP: N shapes given, the operator takes M
 * argument(s) (NAMES)" with `prefix` before it ("opcheck " or "") and returns
 * CLI_ERROR; else CLI_OK. Needs the library initialised.
 */
int cli_op_node_fill_shapes(cli_op_node *node, const char *prefix);

/** Frees the attribute copies (the struct itself is the caller's). */
void cli_op_node_free(cli_op_node *node);

#endif /* MXK_CLI_OP_NODE_H */
