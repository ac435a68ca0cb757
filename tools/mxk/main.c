/*
 * `mxk`: the command line of the mxk framework. Parses the global options,
 * dispatches to a subcommand (cmd_*.c) and prints the global help.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "suggest.h"

/** Every subcommand, in the order `mxk --help` lists them. */
static const cli_command *const commands[] = {
    &cli_cmd_plugins, &cli_cmd_op,      &cli_cmd_ops,        &cli_cmd_ndarray,
    &cli_cmd_symbol,  &cli_cmd_opcheck, &cli_cmd_crosscheck, &cli_cmd_train,
    &cli_cmd_score,   &cli_cmd_predict, &cli_cmd_sample,     &cli_cmd_plot,
    &cli_cmd_im2rec,  &cli_cmd_rec,     &cli_cmd_demo,       &cli_cmd_version,
};

/** Number of entries of `commands`. */
#define NUM_COMMANDS (sizeof commands / sizeof commands[0])

/** The command named `name`, or NULL. */
static const cli_command *find_command(const char *name) {
    for (size_t i = 0; i < NUM_COMMANDS; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

/** Reports "unknown command 'NAME'; did you mean 'X'?". Returns CLI_USAGE. */
static int unknown_command(const char *name) {
    const char *names[NUM_COMMANDS + 1];
    for (size_t i = 0; i < NUM_COMMANDS; i++)
        names[i] = commands[i]->name;
    names[NUM_COMMANDS] = "help";
    char hint[256];
    mxki_suggest(name, names, NUM_COMMANDS + 1, hint, sizeof hint);
    return cli_usage_error(NULL, "unknown command '%s'%s", name, hint);
}

/** Prints `mxk --help` on stdout. */
static void print_global_help(void) {
    puts("usage: mxk [GLOBAL OPTIONS] COMMAND [ARGS]\n"
         "\n"
         "Inspect and exercise the mxk deep-learning framework: its plugins, MXNet\n"
         "parameter files and the operators loaded at run time.\n"
         "\n"
         "Commands:");
    for (size_t i = 0; i < NUM_COMMANDS; i++)
        printf("  %-10s %s\n", commands[i]->name, commands[i]->summary);
    printf("  %-10s %s\n", "help", "show the help of a command (mxk help COMMAND)");
    puts("\n"
         "Global options (before or after the command; a long option may be\n"
         "shortened to any unambiguous prefix, --num-ep for --num-epochs):");
    fputs(cli_global_options_help, stdout);
    puts("\n"
         "Config: the install's config dir (<prefix>/etc/mxk; /etc/mxk for /usr),\n"
         "then the user's $XDG_CONFIG_HOME/mxk (~/.config/mxk) over it: a user\n"
         "plugins.d/NAME.conf replaces the install's NAME.conf ('enabled = false' in it\n"
         "disables that plugin), user mxk.conf keys replace the install's.\n"
         "--config-dir DIR or $MXK_CONFIG_DIR is used alone. Plugins named by --plugin\n"
         "and $MXK_PLUGINS load after the confs'.\n"
         "MXK_LOG_LEVEL=debug|info|warning|error sets the library's log on stderr.\n"
         "\n"
         "Exit status: 0 success, 1 error, 2 wrong usage.\n"
         "Run 'mxk COMMAND --help' for the options of a command.");
}

/** `mxk help [COMMAND]`: the global help or one command's help. */
static int run_help(int argc, char **argv) {
    int i = 0;
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (i >= argc) {
        print_global_help();
        return CLI_OK;
    }
    if (argc - i > 1)
        return cli_usage_error(NULL, "help takes at most one command");
    const cli_command *cmd = find_command(argv[i]);
    if (cmd == NULL)
        return unknown_command(argv[i]);
    cli_print_command_help(cmd);
    return CLI_OK;
}

/** Entry point: splits the arguments and runs the command. */
int main(int argc, char **argv) {
    cli_globals g;
    memset(&g, 0, sizeof g);
    const char *name = NULL;
    int cmd_argc = 0;
    char **cmd_argv = calloc(2 * (size_t)argc + 1, sizeof *cmd_argv);
    cli_option_table *options = malloc(sizeof *options);
    if (cmd_argv == NULL || options == NULL) {
        free(cmd_argv);
        free(options);
        return cli_error("out of memory");
    }

    int rc =
        cli_split_args(argc, argv, commands, NUM_COMMANDS, &g, &name, options, &cmd_argc, cmd_argv);
    if (rc != CLI_OK) {
        free(cmd_argv);
        free(options);
        return rc;
    }
    const cli_command *cmd = name ? find_command(name) : NULL;
    if (name != NULL && strcmp(name, "help") == 0) {
        rc = run_help(cmd_argc, cmd_argv);
    } else if (name != NULL && cmd == NULL) {
        rc = unknown_command(name);
    } else if (g.help) {
        if (cmd != NULL)
            cli_print_command_help(cmd);
        else
            print_global_help();
        rc = CLI_OK;
    } else if (g.version) {
        rc = cli_cmd_version.run(&cli_cmd_version, &g, 0, cmd_argv);
    } else if (cmd == NULL) {
        rc = cli_usage_error(NULL, "no command given");
    } else {
        rc = cmd->run(cmd, &g, cmd_argc, cmd_argv);
    }
    free(cmd_argv);
    free(options);
    if (fflush(stdout) != 0 && rc == CLI_OK)
        rc = cli_error("writing the output failed");
    return rc;
}
