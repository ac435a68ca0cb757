/*
 * `mxk version` (also `mxk --version`): the library version (mxk_version) and
 * the plugin ABI version this build speaks (MXK_ABI_MAJOR.MXK_ABI_MINOR).
 */
#include <stdio.h>

#include "cli.h"

/** Runs `mxk version [--json]`. Takes no arguments and needs no plugins. */
static int run_version(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    int rc = cli_no_arguments(self, argc, argv);
    if (rc != CLI_OK)
        return rc;
    char abi[32];
    snprintf(abi, sizeof abi, "%d.%d", MXK_ABI_MAJOR, MXK_ABI_MINOR);
    if (g->json) {
        json_t *root = json_object();
        if (root != NULL) {
            json_object_set_new(root, "version", json_string(mxk_version()));
            json_object_set_new(root, "abi", json_string(abi));
        }
        return cli_json_print(root, 0);
    }
    printf("mxk %s\nplugin ABI %s\n", mxk_version(), abi);
    return CLI_OK;
}

/** The `version` command. */
const cli_command cli_cmd_version = {
    .name = "version",
    .summary = "print the library version and the plugin ABI version",
    .usage = "mxk version [--json]",
    .help = "Prints the version of libmxk (mxk_version()) and the plugin ABI version\n"
            "(major.minor) the library and this tool were built with. Plugins built for\n"
            "another ABI major, or a newer minor, are rejected (see 'mxk plugins').\n"
            "\n"
            "--json prints {\"version\": \"...\", \"abi\": \"MAJOR.MINOR\"}.\n",
    .run = run_version,
};
