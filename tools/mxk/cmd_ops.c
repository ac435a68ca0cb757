/*
 * `mxk ops [--json]`: the registered operators in registration order, one line
 * each: name, defining plugin and the first sentence of its description (MXNet's
 * operator list, `mx.sym.__dict__` with the docstrings' first lines). `mxk op NAME`
 * prints one operator's full help.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/**
 * Copies the first sentence of `text` (up to and including the first '.' followed
 * by a space and a capital letter, else the first line) into buf, cut with "..."
 * to fit `size` bytes.
 */
static void first_sentence(const char *text, char *buf, size_t size) {
    size_t n = strcspn(text, "\n");
    for (size_t i = 0; i + 2 < n; i++)
        if (text[i] == '.' && text[i + 1] == ' ' && text[i + 2] >= 'A' && text[i + 2] <= 'Z') {
            n = i + 1;
            break;
        }
    if (n >= size)
        snprintf(buf, size, "%.*s...", (int)(size - 4), text);
    else
        snprintf(buf, size, "%.*s", (int)n, text);
}

/** Prints the list (see the command's help). */
static int list_ops(const cli_globals *g, void *arg) {
    (void)arg;
    uint32_t n = mxk_op_count();
    json_t *list = g->json ? json_array() : NULL;
    size_t name_width = 4;
    for (uint32_t i = 0; i < n; i++)
        if (strlen(mxk_op_name(i)) > name_width)
            name_width = strlen(mxk_op_name(i));
    for (uint32_t i = 0; i < n; i++) {
        mxk_op_doc doc;
        if (mxk_op_get_doc(mxk_op_name(i), &doc) != MXK_OK)
            continue;
        char summary[256];
        if (list == NULL) { /* one line of the output's width ($COLUMNS, else 80) */
            int room = cli_output_width() - (int)name_width - 15;
            size_t size = room < 24 ? 24 : (size_t)room + 1;
            first_sentence(doc.description, summary, size < sizeof summary ? size : sizeof summary);
            printf("%-*s  %-12s %s\n", (int)name_width, doc.name, doc.plugin, summary);
            continue;
        }
        first_sentence(doc.description, summary, sizeof summary);
        json_t *o = json_object(), *al = json_array();
        const char *const *aliases = mxk_op_aliases(doc.name);
        for (size_t k = 0; al != NULL && aliases && aliases[k]; k++)
            json_array_append_new(al, json_string(aliases[k]));
        json_object_set_new(o, "name", json_string(doc.name));
        json_object_set_new(o, "plugin", json_string(doc.plugin));
        json_object_set_new(o, "summary", json_string(summary));
        json_object_set_new(o, "aliases", al);
        json_array_append_new(list, o);
    }
    if (list == NULL)
        return CLI_OK;
    json_t *root = json_object();
    json_object_set_new(root, "operators", list);
    return cli_json_print(root, 0);
}

/** Runs `mxk ops`. */
static int run_ops(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    int rc = cli_no_arguments(self, argc, argv);
    return rc != CLI_OK ? rc : cli_with_library(g, list_ops, NULL);
}

/** The `ops` command. */
const cli_command cli_cmd_ops = {
    .name = "ops",
    .summary = "list the registered operators with a one-line summary each",
    .usage = "mxk ops [--config-dir DIR] [--json]",
    .help = "Loads the plugins of the config directory and lists every registered\n"
            "operator in registration order: its name, the plugin that defines it and\n"
            "the first sentence of its description, cut with \"...\" to the output's width\n"
            "($COLUMNS, else 80). `mxk op NAME` prints one operator's help (attributes,\n"
            "arguments, kernels, backend).\n"
            "\n"
            "--json prints {\"operators\": [{\"name\", \"plugin\", \"summary\",\n"
            "  \"aliases\": [...]}]}.\n",
    .run = run_ops,
};
