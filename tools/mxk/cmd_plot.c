/*
 * `mxk plot METRICS.jsonl -o OUT.{png,svg,pdf}`: training and validation curves
 * per metric over the epochs of a `mxk train --metrics-log` file, and the learning
 * rate when the log has it, drawn with PLplot (Debian libplplot-dev; PNG, and the
 * nicer SVG/PDF, through plplot-driver-cairo). One panel per metric plus one for
 * the rate, two panels a row. Without PLplot at build time the command exists but
 * says it was built without plotting.
 *
 * The log is read and checked completely (metrics_log.c) and the output path is
 * checked (mxk_file_check_target) before anything is drawn; PLplot draws into a
 * private temporary file, which is then written to OUT atomically
 * (mxk_file_write), so a bad log or a failure while drawing never leaves a
 * half-written OUT (an existing OUT stays as it was).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "metrics_log.h"

#if MXK_HAVE_PLPLOT
#include <plplot.h>
#endif

/** An output format: file extension, PLplot drivers to try in order. */
typedef struct plot_format {
    const char *ext;        /**< ".png" */
    const char *name;       /**< "png" */
    const char *drivers[2]; /**< "pngcairo", NULL */
} plot_format;

static const plot_format plot_formats[] = {
    {".png", "png", {"pngcairo", NULL}},
    {".svg", "svg", {"svgcairo", "svg"}},
    {".pdf", "pdf", {"pdfcairo", "pdf"}},
};

/** The format of `path` by its extension (case-sensitive), or NULL. */
static const plot_format *format_of(const char *path) {
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof plot_formats / sizeof plot_formats[0]; i++) {
        size_t e = strlen(plot_formats[i].ext);
        if (n > e && strcmp(path + n - e, plot_formats[i].ext) == 0)
            return &plot_formats[i];
    }
    return NULL;
}

#if MXK_HAVE_PLPLOT

/** Colours of cmap0 (index: use): background, axes and text, train, validation, rate. */
enum { COL_BG = 0, COL_FG = 1, COL_TRAIN = 2, COL_VAL = 3, COL_LR = 4 };

/** The temporary file PLplot draws into, removed by the exit handler when PLplot gives up. */
static char plot_tmp[4096];

/** PLplot's exit handler (plexit): removes the temporary file; PLplot then exits 1. */
static int plot_exit_handler(const char *msg) {
    if (plot_tmp[0])
        unlink(plot_tmp);
    fprintf(stderr, "mxk: error: PLplot: %s\n", msg);
    return CLI_ERROR;
}

/** The first of fmt's drivers this PLplot has, or NULL. */
static const char *pick_driver(const plot_format *fmt) {
    const char *menus[128], *names[128];
    const char **pm = menus, **pn = names;
    int n = 128;
    plgFileDevs(&pm, &pn, &n);
    for (int d = 0; d < 2 && fmt->drivers[d]; d++)
        for (int i = 0; i < n; i++)
            if (strcmp(names[i], fmt->drivers[d]) == 0)
                return fmt->drivers[d];
    return NULL;
}

/** Smallest and largest finite values of the columns (n rows each); 0 when none is finite. */
static int finite_range(const double *const *cols, int ncols, uint32_t n, double *lo, double *hi) {
    int any = 0;
    for (int c = 0; c < ncols; c++)
        for (uint32_t i = 0; cols[c] != NULL && i < n; i++) {
            if (!isfinite(cols[c][i]))
                continue;
            *lo = any ? fmin(*lo, cols[c][i]) : cols[c][i];
            *hi = any ? fmax(*hi, cols[c][i]) : cols[c][i];
            any = 1;
        }
    if (any && *hi - *lo < 1e-12 * fmax(1.0, fabs(*hi))) { /* a flat curve: give it room */
        *lo -= 0.5 * fmax(1e-3, fabs(*lo));
        *hi += 0.5 * fmax(1e-3, fabs(*hi));
    }
    return any;
}

/** Draws column y over x in colour `col`: segments between finite neighbours, and marks. */
static void draw_curve(const double *x, const double *y, uint32_t n, int col) {
    plcol0(col);
    for (uint32_t i = 0; i + 1 < n; i++)
        if (isfinite(y[i]) && isfinite(y[i + 1]))
            pljoin(x[i], y[i], x[i + 1], y[i + 1]);
    for (uint32_t i = 0; i < n; i++)
        if (isfinite(y[i]))
            plpoin(1, &x[i], &y[i], 17);
}

/** One panel: the curves over the epochs, titled, with a legend of their names. */
static void draw_panel(const metrics_log *log, const char *title, const double *const *ys,
                       const int *cols, const char *const *labels, int n) {
    double xlo = log->epoch[0], xhi = log->epoch[0], ylo = 0, yhi = 1;
    const double *const xs[1] = {log->epoch};
    finite_range(xs, 1, log->num_epochs, &xlo, &xhi);
    finite_range(ys, n, log->num_epochs, &ylo, &yhi);
    if (xhi - xlo < 1) {
        xlo -= 0.5;
        xhi += 0.5;
    }
    /* room around the points, and above them for the legend (top right) */
    double xpad = 0.05 * (xhi - xlo), ypad = 0.05 * (yhi - ylo);
    plcol0(COL_FG);
    plenv(xlo - xpad, xhi + xpad, ylo - ypad, yhi + 6 * ypad, 0, 0);
    pllab("epoch", "", title);
    PLINT opts[3], lcol[3], lsty[3];
    PLFLT lwid[3];
    const char *text[3];
    int nl = 0;
    for (int c = 0; c < n; c++) {
        if (ys[c] == NULL)
            continue;
        draw_curve(log->epoch, ys[c], log->num_epochs, cols[c]);
        opts[nl] = PL_LEGEND_LINE;
        lcol[nl] = cols[c];
        lsty[nl] = 1;
        lwid[nl] = 1.0;
        text[nl++] = labels[c];
    }
    PLFLT lw, lh;
    plcol0(COL_FG);
    pllegend(&lw, &lh, PL_LEGEND_BACKGROUND | PL_LEGEND_BOUNDING_BOX, PL_POSITION_INSIDE, 0.0, 0.0,
             0.08, COL_BG, COL_FG, 1, 0, 0, nl, opts, 0.8, 0.7, 1.5, 0.0, lcol, text, NULL, NULL,
             NULL, NULL, lcol, lsty, lwid, NULL, NULL, NULL, NULL);
}

/** Draws every panel of `log` into file `path` with PLplot driver `driver`. */
static void draw_log(const metrics_log *log, const char *driver, const char *path) {
    int panels = (int)log->num_metrics + (log->has_lr ? 1 : 0);
    int nx = panels > 1 ? 2 : 1, ny = (panels + 1) / 2;
    plsexit(plot_exit_handler);
    plsdev(driver);
    plsfnam(path);
    plspage(0, 0, 640 * nx, 400 * ny, 0, 0);
    plscolbg(255, 255, 255);
    plscol0(COL_FG, 0, 0, 0);
    plscol0(COL_TRAIN, 31, 119, 180);
    plscol0(COL_VAL, 214, 39, 40);
    plscol0(COL_LR, 44, 160, 44);
    plssub(nx, ny);
    plinit();
    static const int mcols[2] = {COL_TRAIN, COL_VAL};
    static const char *const mlabels[2] = {"train", "validation"};
    for (uint32_t k = 0; k < log->num_metrics; k++) {
        const double *ys[2] = {log->train[k], log->has_validation ? log->validation[k] : NULL};
        draw_panel(log, log->names[k], ys, mcols, mlabels, 2);
    }
    if (log->has_lr) {
        static const int lcols[1] = {COL_LR};
        static const char *const llabels[1] = {"lr"};
        const double *ys[1] = {log->lr};
        draw_panel(log, "learning rate", ys, lcols, llabels, 1);
    }
    plend();
}

/**
 * Renders `log` as `fmt` into a temporary file, then writes it to `out`
 * atomically. Returns CLI_OK or CLI_ERROR after the message.
 */
static int render(const metrics_log *log, const plot_format *fmt, const char *out) {
    const char *driver = pick_driver(fmt);
    if (driver == NULL)
        return cli_error("PLplot has no '%s' driver for %s output: install plplot-driver-cairo, "
                         "or write .svg or .pdf",
                         fmt->drivers[0], fmt->ext);
    const char *dir = getenv("TMPDIR");
    snprintf(plot_tmp, sizeof plot_tmp, "%s/mxk-plot-XXXXXX", dir && dir[0] ? dir : "/tmp");
    int fd = mkstemp(plot_tmp);
    if (fd < 0) {
        plot_tmp[0] = '\0';
        return cli_error("cannot create a temporary file for the plot in '%s'",
                         dir && dir[0] ? dir : "/tmp");
    }
    close(fd);
    fflush(stdout);
    draw_log(log, driver, plot_tmp);
    char *data = NULL;
    size_t size = 0;
    mxk_status st = mxk_file_read(plot_tmp, "plot", UINT64_MAX, &data, &size);
    unlink(plot_tmp);
    plot_tmp[0] = '\0';
    if (st == MXK_OK && size == 0)
        st = MXK_ERR_IO;
    if (st == MXK_OK)
        st = mxk_file_write(out, data, size);
    free(data);
    if (st != MXK_OK)
        return cli_api_error(st, "PLplot wrote no %s output for '%s'", fmt->name, out);
    return CLI_OK;
}

#else

/** Without PLplot: says so. */
static int render(const metrics_log *log, const plot_format *fmt, const char *out) {
    return cli_error("this mxk was built without plotting (PLplot's libplplot-dev was not found "
                     "when it was built)");
}

#endif

/** Prints the --json summary of a plot. */
static int print_json(const metrics_log *log, const plot_format *fmt, const char *out) {
    json_t *root = json_object(), *names = json_array();
    if (root == NULL || names == NULL) {
        json_decref(root);
        json_decref(names);
        return cli_json_print(NULL, 0);
    }
    for (uint32_t k = 0; k < log->num_metrics; k++)
        json_array_append_new(names, json_string(log->names[k]));
    json_object_set_new(root, "output", json_string(out));
    json_object_set_new(root, "format", json_string(fmt->name));
    json_object_set_new(root, "epochs", json_integer(log->num_epochs));
    json_object_set_new(root, "metrics", names);
    json_object_set_new(root, "validation", json_boolean(log->has_validation));
    json_object_set_new(root, "lr", json_boolean(log->has_lr));
    return cli_json_print(root, 0);
}

/** Runs `mxk plot METRICS.jsonl -o OUT`. */
static int run_plot(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    const char *in = NULL, *out = NULL;
    int positional = 0;
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        int r = 0;
        if (!positional && strcmp(argv[i], "--") == 0) {
            positional = 1;
            continue;
        }
        if (!positional && ((r = cli_option_value(argc, argv, &i, "-o", &v)) != 0 ||
                            (r = cli_option_value(argc, argv, &i, "--output", &v)) != 0)) {
            if (r < 0 || v[0] == '\0')
                return cli_usage_error(self, "-o needs an output file");
            out = v;
        } else if (!positional && cli_is_option(argv[i])) {
            return cli_reject_argument(self, argv[i]);
        } else if (in == NULL) {
            in = argv[i];
        } else {
            return cli_reject_argument(self, argv[i]);
        }
    }
    if (in == NULL)
        return cli_usage_error(self, "give the metrics log (written by mxk train --metrics-log)");
    if (out == NULL)
        return cli_usage_error(self, "give the output file with -o");
    const plot_format *fmt = format_of(out);
    if (fmt == NULL)
        return cli_usage_error(self, "cannot tell the format of '%s': end it in .png, .svg or .pdf",
                               out);
    mxk_status st = mxk_file_check_target(out);
    if (st != MXK_OK)
        return cli_api_error(st, "cannot write '%s'", out);
    metrics_log log;
    int rc = metrics_log_read(in, &log) == 0 ? CLI_OK : CLI_ERROR;
    if (rc == CLI_OK)
        rc = render(&log, fmt, out);
    if (rc == CLI_OK && g->json)
        rc = print_json(&log, fmt, out);
    else if (rc == CLI_OK)
        printf("wrote %s: %u epochs, %u metrics%s\n", out, log.num_epochs, log.num_metrics,
               log.has_lr ? " and the learning rate" : "");
    metrics_log_free(&log);
    return rc;
}

/** The `plot` command. */
const cli_command cli_cmd_plot = {
    .name = "plot",
    .summary = "draw training and validation curves from a metrics log",
    .usage = "mxk plot METRICS.jsonl -o OUT.png|OUT.svg|OUT.pdf [--json]",
    .help = "Draws the training and validation value of every metric over the epochs of a\n"
            "metrics log written by 'mxk train --metrics-log FILE' (one JSON object per\n"
            "epoch), one panel per metric, and the learning rate in a panel of its own\n"
            "when the log has it. The format follows the extension of OUT: .png, .svg or\n"
            ".pdf (PLplot; PNG needs its cairo driver, Debian plplot-driver-cairo).\n"
            "\n"
            "The whole log is checked before anything is drawn: a missing or malformed\n"
            "log is an error naming the file and line, and OUT is written atomically, so\n"
            "it is either the complete plot or left as it was.\n"
            "\n"
            "  -o, --output OUT   the picture to write (.png, .svg or .pdf)\n"
            "\n"
            "--json prints {\"output\", \"format\", \"epochs\", \"metrics\": [names],\n"
            "\"validation\": bool, \"lr\": bool} instead of the summary line.\n",
    .run = run_plot,
};
