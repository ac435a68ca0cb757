/*
 * Command-line parsing helpers of the `mxk` tool: the global options, which may
 * appear before or after the command, and small helpers the commands use for
 * their own options.
 */
#include <string.h>

#include "cli.h"

/** True when `arg` looks like an option ("-x", "--xyz"; "-" alone is not one). */
int cli_is_option(const char *arg) {
    return arg[0] == '-' && arg[1] != '\0';
}

/**
 * Matches option `name` ("--values") at argv[*i], as "--values N" or "--values=N".
 * Returns 1 and sets *value (advancing *i past a separate value), 0 when argv[*i]
 * is another argument, -1 when the option is there but its value is missing.
 */
int cli_option_value(int argc, char **argv, int *i, const char *name, const char **value) {
    const char *arg = argv[*i];
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0)
        return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
        return 1;
    }
    if (arg[len] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *i += 1;
    *value = argv[*i];
    return 1;
}

/**
 * Consumes a global option taking a value at argv[*i] into *slot. Returns 1 when
 * argv[*i] was that option, 0 when not, -1 (after a usage message) when its value
 * is missing or empty.
 */
static int take_global_value(int argc, char **argv, int *i, const char *name, const char **slot) {
    const char *value = NULL;
    int r = cli_option_value(argc, argv, i, name, &value);
    if (r == 0)
        return 0;
    if (r < 0 || value[0] == '\0') {
        cli_usage_error(NULL, "option %s needs a value", name);
        return -1;
    }
    *slot = value;
    return 1;
}

/**
 * Splits the process arguments: global options (anywhere) go into *g, the first
 * word that is not an option becomes *command (NULL if none), everything else is
 * copied in order into cmd_argv (room for argc entries), *cmd_argc set.
 * After "--" nothing is taken as a global option ("--" itself is passed on).
 * Returns CLI_OK, or CLI_USAGE after printing what was wrong.
 */
int cli_split_args(int argc, char **argv, cli_globals *g, const char **command, int *cmd_argc,
                   char **cmd_argv) {
    int n = 0;
    int after_dashes = 0;
    *command = NULL;
    for (int i = 1; i < argc; i++) {
        char *arg = argv[i];
        if (after_dashes) {
            cmd_argv[n++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            after_dashes = 1;
            cmd_argv[n++] = arg;
            continue;
        }
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            g->help = 1;
            continue;
        }
        if (strcmp(arg, "--version") == 0) {
            g->version = 1;
            continue;
        }
        if (strcmp(arg, "--json") == 0) {
            g->json = 1;
            continue;
        }
        int r = take_global_value(argc, argv, &i, "--config-dir", &g->config_dir);
        if (r == 0)
            r = take_global_value(argc, argv, &i, "--backend", &g->backend);
        if (r < 0)
            return CLI_USAGE;
        if (r > 0)
            continue;
        if (*command == NULL && !cli_is_option(arg)) {
            *command = arg;
            continue;
        }
        cmd_argv[n++] = arg;
    }
    cmd_argv[n] = NULL;
    *cmd_argc = n;
    return CLI_OK;
}
