/*
 * One operator node on the command line (op_node.h): --attr and --shape parsing
 * and the arguments left to inference.
 */
#include "op_node.h"

#include <stdlib.h>
#include <string.h>

#include "mxk_opcheck.h"

int cli_op_node_option(cli_op_node *node, const cli_command *cmd, int argc, char **argv, int *i) {
    const char *v = NULL;
    int m;
    if ((m = cli_option_value(argc, argv, i, "--attr", &v)) != 0) {
        if (m < 0)
            return cli_usage_error(cmd, "option '--attr' needs KEY=VALUE"), -1;
        const char *eq = strchr(v, '=');
        if (eq == NULL || eq == v)
            return cli_usage_error(cmd, "bad --attr '%s': expected KEY=VALUE", v), -1;
        if (node->num_attrs >= CLI_OP_NODE_MAX)
            return cli_usage_error(cmd, "too many --attr options (at most %d)", CLI_OP_NODE_MAX),
                   -1;
        char *copy = strdup(v);
        if (copy == NULL)
            return cli_error("out of memory"), -1;
        copy[eq - v] = '\0';
        node->attr_buf[node->num_attrs] = copy;
        node->keys[node->num_attrs] = copy;
        node->vals[node->num_attrs] = copy + (eq - v) + 1;
        node->num_attrs++;
        return 1;
    }
    if ((m = cli_option_value(argc, argv, i, "--shape", &v)) != 0) {
        if (m < 0)
            return cli_usage_error(cmd, "option '--shape' needs d1,d2,..."), -1;
        if (node->num_shapes >= CLI_OP_NODE_MAX)
            return cli_usage_error(cmd, "too many --shape options (at most %d)", CLI_OP_NODE_MAX),
                   -1;
        if (!mxk_opcheck_parse_shape(v, &node->shapes[node->num_shapes]))
            return cli_usage_error(cmd,
                                   "bad --shape '%s': expected positive integers d1,d2,... "
                                   "(at most %d), or 0 for a shape left to inference",
                                   v, MXK_MAX_NDIM),
                   -1;
        node->num_shapes++;
        return 1;
    }
    return 0;
}

int cli_op_node_fill_shapes(cli_op_node *node, const char *prefix) {
    mxk_symbol *s = NULL;
    uint32_t n = 0;
    char **names = NULL;
    if (mxk_symbol_create(node->op, "x", node->num_attrs, node->keys, node->vals, 0, NULL, NULL,
                          &s) != MXK_OK ||
        mxk_symbol_list_names(s, MXK_SYMBOL_ARGUMENTS, &n, &names) != MXK_OK) {
        mxk_symbol_free(s);
        return CLI_OK;
    }
    mxk_symbol_free(s);
    int rc = CLI_OK;
    if (node->num_shapes > n) {
        char list[512] = "";
        size_t used = 0;
        for (uint32_t i = 0; i < n && used < sizeof list; i++) /* variables are x_NAME */
            used += (size_t)snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "",
                                     names[i] + (strncmp(names[i], "x_", 2) == 0 ? 2 : 0));
        rc = cli_error("%s%s: %u shapes given, the operator takes %u argument%s (%s)", prefix,
                       node->op, (unsigned)node->num_shapes, (unsigned)n, n == 1 ? "" : "s", list);
    } else {
        for (; node->num_shapes < n && node->num_shapes < CLI_OP_NODE_MAX; node->num_shapes++)
            node->shapes[node->num_shapes] = (mxk_shape){0};
    }
    mxk_string_list_free(names);
    return rc;
}

void cli_op_node_free(cli_op_node *node) {
    for (uint32_t i = 0; i < node->num_attrs; i++)
        free(node->attr_buf[i]);
    node->num_attrs = 0;
}
