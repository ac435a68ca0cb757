/*
 * The `mxk` command line: shared declarations.
 *
 * main.c has the table of cli_command's; options.c splits the arguments (global
 * options before or after the command; option prefixes expanded from each
 * command's help) and main.c hands the command the remaining arguments. Each
 * command lives in its own cmd_*.c file and uses only the public C API (mxk.h).
 *
 * Exit status of every command: 0 success, 1 error (message on stderr, prefixed
 * "mxk: error: "), 2 usage error (short usage line on stderr).
 */
#ifndef MXK_CLI_H
#define MXK_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "mxk.h"
#include "parse.h"

/** Exit status: success. */
#define CLI_OK 0
/** Exit status: the command failed (bad file, missing operator, library error). */
#define CLI_ERROR 1
/** Exit status: the command line was wrong. */
#define CLI_USAGE 2

/** Most --plugin options on one command line. */
#define CLI_MAX_PLUGINS 16

/** Options that every command accepts, before or after the command name. */
typedef struct cli_globals {
    const char *config_dir;               /**< --config-dir DIR (NULL: the library searches) */
    const char *backend;                  /**< --backend LIST (NULL: config / environment) */
    const char *plugins[CLI_MAX_PLUGINS]; /**< --plugin PATH, in order */
    int num_plugins;                      /**< entries of plugins */
    int json;                             /**< --json: machine-readable output */
    int help;                             /**< -h / --help was given */
    int version;                          /**< --version was given */
} cli_globals;

typedef struct cli_command cli_command;

/** A subcommand. */
struct cli_command {
    const char *name;    /**< word on the command line */
    const char *summary; /**< one line for `mxk --help` */
    const char *usage;   /**< usage line without the leading "usage: " */
    const char *help;    /**< body of `mxk CMD --help`, printed after the usage line */
    /**
     * Runs the command. argv[0..argc) are the arguments after the command name with
     * the global options removed; a "--" is kept so the command knows that what
     * follows is positional. Returns the exit status (CLI_OK, CLI_ERROR, CLI_USAGE).
     */
    int (*run)(const cli_command *self, const cli_globals *g, int argc, char **argv);
};

/* The commands (one per cmd_*.c file). */
extern const cli_command cli_cmd_plugins;
extern const cli_command cli_cmd_op;
extern const cli_command cli_cmd_ops;
extern const cli_command cli_cmd_ndarray;
extern const cli_command cli_cmd_demo;
extern const cli_command cli_cmd_symbol;
extern const cli_command cli_cmd_opcheck;
extern const cli_command cli_cmd_crosscheck;
extern const cli_command cli_cmd_train;
extern const cli_command cli_cmd_score;
extern const cli_command cli_cmd_predict;
extern const cli_command cli_cmd_sample;
extern const cli_command cli_cmd_version;
extern const cli_command cli_cmd_plot;
extern const cli_command cli_cmd_im2rec;
extern const cli_command cli_cmd_rec;

/* ------------------------------------------------------------------------- */
/* options.c: command-line parsing helpers                                   */
/* ------------------------------------------------------------------------- */

/**
 * The help lines of the global options, printed by `mxk --help` and after every
 * command's help; the global options are read from it (cli_option_table_fill).
 */
extern const char cli_global_options_help[];

/** Most options of one command (its own and the global ones). */
#define CLI_MAX_OPTIONS 96

/**
 * The long options a command accepts, read from the help texts: the one source of
 * truth, so that what the help documents is what the parsers are offered.
 */
typedef struct cli_option_table {
    size_t n; /**< entries of opts; the global options come first */
    struct {
        char name[48];   /**< "--num-epochs" */
        int takes_value; /**< documented with a value ("--num-epochs N") */
    } opts[CLI_MAX_OPTIONS];
} cli_option_table;

/**
 * Fills t with the global options (cli_global_options_help), then the options cmd's
 * help documents (cmd NULL: the global ones only). A documented option is a help
 * line starting with two spaces and '-', naming options in its first column (up to
 * two spaces) separated by ", "; an option followed by a word ("--values N") takes a
 * value. Options past CLI_MAX_OPTIONS or 47 bytes are left out.
 */
void cli_option_table_fill(cli_option_table *t, const cli_command *cmd);

/**
 * Looks up the option named by the first len bytes of `name` in t, as Python's
 * argparse does (allow_abbrev): an exact name, else the one option it is a prefix
 * of. Returns 1 with *found set, 0 when none matches, -1 when several do.
 */
int cli_option_lookup(const cli_option_table *t, const char *name, size_t len, size_t *found);

/** Writes "; did you mean '--X'?" for the options of t nearest to `name`, or "" (mxki_suggest). */
void cli_option_suggest(const cli_option_table *t, const char *name, char *buf, size_t size);

/**
 * Splits the process arguments (argparse-like). Global options (anywhere before a
 * "--") go into *g; the first word that is not an option becomes *command (NULL if
 * none) and, when it names one of commands[0..ncommands), t is filled with its
 * options. A "--name" that is a unique prefix of an option of t is taken as that
 * option; a command option is passed on in cmd_argv under its full name, with its
 * value ("--opt=V" or the next argument, copied as it is) as the next entry.
 * Everything else is copied in order into cmd_argv (room for 2 * argc + 1 entries),
 * *cmd_argc set; "--" and what follows are passed on as they are. The option names
 * in cmd_argv point into t, which must outlive cmd_argv.
 * Usage errors (CLI_USAGE, message printed by cli_usage_error): an ambiguous prefix
 * ("option '--b' is ambiguous: it could be --backend, --batch-size"), an unknown
 * option before the command ("unknown option '--confg-dir'; did you mean
 * '--config-dir'?"; after a command, unknown options are passed on for the command
 * to reject), "option --json takes no value", "option --config-dir needs a value",
 * "at most 16 --plugin options". Returns CLI_OK otherwise.
 */
int cli_split_args(int argc, char **argv, const cli_command *const *commands, size_t ncommands,
                   cli_globals *g, const char **command, cli_option_table *t, int *cmd_argc,
                   char **cmd_argv);

/**
 * Matches option `name` ("--values") at argv[*i], as "--values N" or "--values=N".
 * Returns 1 and sets *value (advancing *i past a separate value), 0 when argv[*i]
 * is another argument, -1 when the option is there but its value is missing.
 */
int cli_option_value(int argc, char **argv, int *i, const char *name, const char **value);

/**
 * Steps of a command's option loop `for (int i = 0; i < argc; i++)` that has the
 * locals `const char *v; uint64_t u; int r;` in scope: when argv[i] is option FLAG,
 * CLI_STR_OPT stores its value in DEST and CLI_UINT_OPT its value parsed as an
 * integer in [0, MAX] (cli_parse_uint), then `continue`; a missing or bad value
 * returns cli_usage_error(CMD, ...): "option '--x' needs a value", "option '--x'
 * needs an integer (0 to MAX)".
 */
#define CLI_STR_OPT(cmd, flag, dest)                                                               \
    if ((r = cli_option_value(argc, argv, &i, flag, &v)) != 0) {                                   \
        if (r < 0)                                                                                 \
            return cli_usage_error(cmd, "option '%s' needs a value", flag);                        \
        (dest) = v;                                                                                \
        continue;                                                                                  \
    }
#define CLI_UINT_OPT(cmd, flag, dest, max)                                                         \
    if ((r = cli_option_value(argc, argv, &i, flag, &v)) != 0) {                                   \
        if (r < 0 || !cli_parse_uint(v, max, &u))                                                  \
            return cli_usage_error(cmd, "option '%s' needs an integer (0 to %llu)", flag,          \
                                   (unsigned long long)(max));                                     \
        (dest) = u;                                                                                \
        continue;                                                                                  \
    }

/** True when `arg` looks like an option ("-x", "--xyz"; "-" alone is not one). */
int cli_is_option(const char *arg);

/* ------------------------------------------------------------------------- */
/* common.c: messages, library set-up, formatting                            */
/* ------------------------------------------------------------------------- */

/** Prints "mxk: error: <message>" on stderr. Returns CLI_ERROR. */
int cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * Reports a failed library call: prints "mxk: error: " and mxk_get_last_error(),
 * or, when the library left no message, the formatted fallback and the status name.
 * Returns CLI_ERROR.
 */
int cli_api_error(mxk_status st, const char *fallback_fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** Prints "mxk: note: <message>" on stderr (a hint after an error). */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** Prints "mxk: warning: <message>" on stderr (the command goes on). */
void cli_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * Prints "mxk CMD: <message>", the command's usage line and a pointer to
 * `mxk CMD --help` on stderr. cmd NULL: the global usage. Returns CLI_USAGE.
 */
int cli_usage_error(const cli_command *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** Prints a command's full help (usage line and body) on stdout. */
void cli_print_command_help(const cli_command *cmd);

/**
 * Reports an argument that the command does not take: "unknown option 'ARG'" when
 * it looks like an option (followed by "; did you mean '--X'?" naming the nearest
 * options of the command, see cli_option_suggest), else "unexpected argument
 * 'ARG'" (see cli_usage_error). Returns CLI_USAGE.
 */
int cli_reject_argument(const cli_command *cmd, const char *arg);

/**
 * Checks that a command that takes no arguments got none (a "--" is allowed).
 * Returns CLI_OK, or CLI_USAGE after reporting the first argument.
 */
int cli_no_arguments(const cli_command *cmd, int argc, char **argv);

/**
 * Initialises the library with the global options (config dir, backend list), then
 * loads each --plugin library (mxk_load_plugin; a failure is an error, as MXNet's
 * mx.library.load raises). Returns CLI_OK, or CLI_ERROR after reporting the error
 * (the library shut down again). Pair with mxk_shutdown().
 */
int cli_init_library(const cli_globals *g);

/**
 * Checks, with the library initialised, that every context of a --ctx list exists:
 * "--ctx gpu:0: no GPU is visible (the cuda plugin reports 0 devices)", "--ctx
 * gpu:0: no gpu device backend is loaded (...)" when the cuda plugin is absent,
 * "--ctx gpu:3: gpu(3) does not exist (2 gpu device(s) visible)". Returns CLI_OK,
 * or CLI_ERROR after printing the message.
 */
int cli_check_ctx(const mxk_context *ctx, uint32_t n);

/**
 * Initialises the library (cli_init_library), runs body(g, arg) and shuts the
 * library down again. Returns the initialisation's error or what body returned.
 */
int cli_with_library(const cli_globals *g, int (*body)(const cli_globals *g, void *arg), void *arg);

/* Names and sizes of status codes, dtypes and device types come from the public
 * API: mxk_status_name, mxk_dtype_name, mxk_dtype_size, mxk_dev_type_name. */

/** True for the integer dtypes (uint8, int8, int32, int64). */
int cli_dtype_is_integer(int32_t dtype);

/** Writes a shape as "(a,b,c)" ("()" for ndim 0) into buf (always terminated). */
void cli_format_shape(const mxk_shape *shape, char *buf, size_t size);

/**
 * The double nearest to the shortest decimal that reads back as `f`, so that a
 * float32 value 0.1f prints as 0.1 (not 0.100000001490116) with up to 15 digits.
 */
double cli_float_shortest(float f);

/** Writes a double compactly ("%.6g"; "nan", "inf", "-inf") into buf. */
void cli_format_number(double v, char *buf, size_t size);

/**
 * A JSON real for v; the strings "NaN", "Infinity", "-Infinity" for non-finite
 * values (JSON has no such numbers). Never NULL unless out of memory.
 */
json_t *cli_json_number(double v);

/**
 * Prints `root` on stdout (2-space indent, containers of scalars on one line, keys
 * in insertion order, reals with `real_precision` significant digits, 0: exact),
 * then a newline, and releases it. Returns CLI_OK, or CLI_ERROR when root is NULL
 * (out of memory) or writing failed.
 */
int cli_json_print(json_t *root, int real_precision);

/** Width for wrapped human output: $COLUMNS when set and sane, else 80. */
int cli_output_width(void);

/**
 * Prints items separated by ", ", starting at column `col` (the caller has already
 * printed that much of the line), wrapping before `width` and indenting wrapped
 * lines by `indent` spaces. Ends with a newline. Prints "-" when n is 0.
 */
void cli_print_wrapped(FILE *f, const char *const *items, size_t n, int col, int indent, int width);

#endif /* MXK_CLI_H */
