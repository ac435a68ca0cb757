/*
 * Command-line parsing helpers of the `mxk` tool: the global options, which may
 * appear before or after the command; the option tables read from the help texts,
 * which expand unambiguous prefixes and suggest near names; small helpers the
 * commands use for their own options.
 */
#include <stdio.h>
#include <string.h>

#include "suggest.h"

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

const char cli_global_options_help[] =
    "  --config-dir DIR   DIR is the only config directory (mxk.conf, plugins.d/)\n"
    "  --plugin PATH      also load the plugin library PATH (repeatable), as MXNet's\n"
    "                     mx.library.load; MXK_PLUGINS=PATH:PATH too (where a failure\n"
    "                     is a warning, not an error)\n"
    "  --backend LIST     backends, most preferred first (\"onednn,cpu-blas\");\n"
    "                     overrides MXK_BACKEND and mxk.conf\n"
    "  --json             machine-readable output (JSON)\n"
    "  -h, --help         show this help, or a command's help after the command\n"
    "  --version          print the library and ABI versions\n";

/** Adds option `name` (len bytes, "--..." ) to t unless it is there or t is full. */
static void table_add(cli_option_table *t, const char *name, size_t len, int takes_value) {
    if (len >= sizeof t->opts[0].name || t->n == CLI_MAX_OPTIONS)
        return;
    for (size_t i = 0; i < t->n; i++)
        if (strlen(t->opts[i].name) == len && strncmp(t->opts[i].name, name, len) == 0)
            return;
    memcpy(t->opts[t->n].name, name, len);
    t->opts[t->n].name[len] = '\0';
    t->opts[t->n].takes_value = takes_value;
    t->n++;
}

/**
 * Adds the long options documented in `help`: every line that starts with two
 * spaces and '-' names options in its first column (up to two spaces), separated
 * by ", "; one followed by a word ("--values N") takes a value.
 */
static void table_add_help(cli_option_table *t, const char *help) {
    for (const char *line = help; line != NULL && *line != '\0';) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        if (len > 3 && line[0] == ' ' && line[1] == ' ' && line[2] == '-') {
            const char *p = line + 2, *end = line + len;
            while (p < end && *p == '-') {
                size_t n = strcspn(p, " ,\n");
                const char *after = p + n;
                int value = after + 1 < end && after[0] == ' ' && after[1] != ' ';
                if (p[1] == '-')
                    table_add(t, p, n, value);
                /* next item of the column: ", --other" */
                const char *comma = p;
                while (comma < end && *comma != ',' && !(comma[0] == ' ' && comma[1] == ' '))
                    comma++;
                if (comma + 2 >= end || comma[0] != ',' || comma[1] != ' ')
                    break;
                p = comma + 2;
            }
        }
        line = eol ? eol + 1 : NULL;
    }
}

void cli_option_table_fill(cli_option_table *t, const cli_command *cmd) {
    t->n = 0;
    table_add_help(t, cli_global_options_help);
    if (cmd != NULL)
        table_add_help(t, cmd->help);
}

int cli_option_lookup(const cli_option_table *t, const char *name, size_t len, size_t *found) {
    size_t matches = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (strncmp(t->opts[i].name, name, len) != 0)
            continue;
        if (t->opts[i].name[len] == '\0') {
            *found = i;
            return 1;
        }
        *found = i;
        matches++;
    }
    return matches > 1 ? -1 : (int)matches;
}

void cli_option_suggest(const cli_option_table *t, const char *name, char *buf, size_t size) {
    const char *names[CLI_MAX_OPTIONS];
    for (size_t i = 0; i < t->n; i++)
        names[i] = t->opts[i].name;
    mxki_suggest(name, names, t->n, buf, size);
}

/**
 * Reports the ambiguous option prefix `arg` (len bytes), naming every option it
 * could be: "option '--b' is ambiguous: it could be --backend, --batch-size" (as
 * argparse's "ambiguous option: --b could match ..."). Returns CLI_USAGE.
 */
static int ambiguous(const cli_command *cmd, const cli_option_table *t, const char *arg,
                     size_t len) {
    char list[1024];
    size_t pos = 0;
    list[0] = '\0';
    for (size_t i = 0; i < t->n && pos < sizeof list; i++)
        if (strncmp(t->opts[i].name, arg, len) == 0)
            pos += (size_t)snprintf(list + pos, sizeof list - pos, "%s%s", pos ? ", " : "",
                                    t->opts[i].name);
    return cli_usage_error(cmd, "option '%.*s' is ambiguous: it could be %s", (int)len, arg, list);
}

/** Stores global option `name`'s value (argument `value`, NULL: missing) into g. */
static int set_global(cli_globals *g, const char *name, const char *value) {
    if (value == NULL || value[0] == '\0')
        return cli_usage_error(NULL, "option %s needs a value", name);
    if (strcmp(name, "--config-dir") == 0)
        g->config_dir = value;
    else if (strcmp(name, "--backend") == 0)
        g->backend = value;
    else if (g->num_plugins < CLI_MAX_PLUGINS)
        g->plugins[g->num_plugins++] = value;
    else
        return cli_usage_error(NULL, "at most %d --plugin options", CLI_MAX_PLUGINS);
    return CLI_OK;
}

/** Sets the flag of global option `name` (--json, --help, --version) in g. */
static void set_global_flag(cli_globals *g, const char *name) {
    if (strcmp(name, "--json") == 0)
        g->json = 1;
    else if (strcmp(name, "--help") == 0)
        g->help = 1;
    else
        g->version = 1;
}

int cli_split_args(int argc, char **argv, const cli_command *const *commands, size_t ncommands,
                   cli_globals *g, const char **command, cli_option_table *t, int *cmd_argc,
                   char **cmd_argv) {
    int n = 0;
    int after_dashes = 0;
    const cli_command *cmd = NULL;
    *command = NULL;
    cli_option_table_fill(t, NULL);
    size_t num_globals = t->n;
    for (int i = 1; i < argc; i++) {
        char *arg = argv[i];
        if (after_dashes || strcmp(arg, "--") == 0 || strncmp(arg, "--", 2) != 0) {
            after_dashes |= strcmp(arg, "--") == 0;
            if (!after_dashes && strcmp(arg, "-h") == 0)
                g->help = 1;
            else if (!after_dashes && *command == NULL && !cli_is_option(arg)) {
                *command = arg;
                for (size_t c = 0; c < ncommands && cmd == NULL; c++)
                    if (strcmp(commands[c]->name, arg) == 0)
                        cmd = commands[c];
                cli_option_table_fill(t, cmd);
            } else
                cmd_argv[n++] = arg;
            continue;
        }
        size_t len = strcspn(arg, "=");
        size_t k = 0;
        int r = cli_option_lookup(t, arg, len, &k);
        if (r < 0)
            return ambiguous(cmd, t, arg, len);
        if (r == 0 && *command != NULL) {
            cmd_argv[n++] = arg; /* the command reports it (cli_reject_argument) */
            continue;
        }
        if (r == 0) {
            char hint[256];
            cli_option_suggest(t, arg, hint, sizeof hint);
            return cli_usage_error(NULL, "unknown option '%.*s'%s", (int)len, arg, hint);
        }
        const char *name = t->opts[k].name;
        const char *value = arg[len] == '=' ? arg + len + 1 : NULL;
        if (!t->opts[k].takes_value && value != NULL)
            return cli_usage_error(cmd, "option %s takes no value", name);
        if (k < num_globals) {
            if (!t->opts[k].takes_value)
                set_global_flag(g, name);
            else if (set_global(g, name, value ? value : i + 1 < argc ? argv[++i] : NULL) != CLI_OK)
                return CLI_USAGE;
            continue;
        }
        /* a command option: its canonical name, then its value as a separate argument */
        cmd_argv[n++] = (char *)name;
        if (value != NULL)
            cmd_argv[n++] = (char *)value;
        else if (t->opts[k].takes_value && i + 1 < argc)
            cmd_argv[n++] = argv[++i];
    }
    cmd_argv[n] = NULL;
    *cmd_argc = n;
    return CLI_OK;
}
