/*
 * `mxk im2rec [OPTIONS] PREFIX ROOT`: upstream MXNet's tools/im2rec.py, its
 * options, defaults and files (im2rec.h; list mode in im2rec_list.c, pack mode
 * in im2rec_pack.c). This file parses the command line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "im2rec.h"

/** Upstream's defaults (see im2rec.h). */
void im2rec_opts_default(im2rec_opts *o) {
    memset(o, 0, sizeof *o);
    o->shuffle = 1;
    o->exts[0] = ".jpeg";
    o->exts[1] = ".jpg";
    o->exts[2] = ".png";
    o->num_exts = 3;
    o->chunks = 1;
    o->train_ratio = 1.0;
    o->quality = 95;
    o->num_thread = 1;
    o->color = 1;
    o->encoding = IMG_JPEG;
}

/** os.path.join (see im2rec.h). */
char *im2rec_join(const char *a, const char *b) {
    if (b[0] == '/' || a[0] == '\0')
        return strdup(b);
    size_t la = strlen(a), lb = strlen(b);
    int slash = a[la - 1] != '/';
    char *s = malloc(la + slash + lb + 1);
    if (s != NULL) {
        memcpy(s, a, la);
        if (slash)
            s[la] = '/';
        memcpy(s + la + slash, b, lb + 1);
    }
    return s;
}

/** os.path.abspath (see im2rec.h). */
char *im2rec_abspath(const char *path) {
    char *cwd = path[0] == '/' ? strdup("") : getcwd(NULL, 0);
    char *full = cwd ? im2rec_join(cwd[0] ? cwd : "/", path) : NULL;
    free(cwd);
    if (full == NULL)
        return NULL;
    /* normalise in place: components split at '/', "." dropped, ".." pops one */
    char *out = full, *w = full;
    const char *p = full;
    while (*p) {
        while (*p == '/')
            p++;
        const char *end = strchr(p, '/');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0 || (len == 1 && p[0] == '.')) {
            /* nothing */
        } else if (len == 2 && p[0] == '.' && p[1] == '.') {
            while (w > out && *--w != '/')
                ;
        } else {
            *w++ = '/';
            memmove(w, p, len);
            w += len;
        }
        p += len;
    }
    if (w == out)
        *w++ = '/';
    *w = '\0';
    return out;
}

/** Parses a ratio in [0, 1] for option `name`. */
static int parse_ratio(const cli_command *self, const char *name, const char *v, double *out) {
    if (!cli_parse_real(v, out) || *out < 0 || *out > 1)
        return cli_usage_error(self, "%s expects a number from 0 to 1, got '%s'", name, v);
    return CLI_OK;
}

/** Parses an integer in [lo, hi] for option `name`. */
static int parse_int(const cli_command *self, const char *name, const char *v, uint64_t lo,
                     uint64_t hi, uint64_t *out) {
    if (!cli_parse_uint(v, hi, out) || *out < lo)
        return cli_usage_error(self, "%s expects a number from %llu to %llu, got '%s'", name,
                               (unsigned long long)lo, (unsigned long long)hi, v);
    return CLI_OK;
}

/** Reads the options and PREFIX ROOT into *o. Returns CLI_OK or CLI_USAGE. */
static int parse_options(const cli_command *self, int argc, char **argv, im2rec_opts *o) {
    static const struct {
        const char *name;
        size_t off;
        int value;
    } flags[] = {
        {"--list", offsetof(im2rec_opts, list), 1},
        {"--recursive", offsetof(im2rec_opts, recursive), 1},
        {"--shuffle", offsetof(im2rec_opts, shuffle), 1},
        {"--no-shuffle", offsetof(im2rec_opts, shuffle), 0},
        {"--pass-through", offsetof(im2rec_opts, pass_through), 1},
        {"--center-crop", offsetof(im2rec_opts, center_crop), 1},
        {"--pack-label", offsetof(im2rec_opts, pack_label), 1},
    };
    int positional = 0, exts_given = 0;
    for (int i = 0; i < argc; i++) {
        const char *v = NULL, *a = argv[i];
        int r = 0, rc = CLI_OK;
        if (!positional && strcmp(a, "--") == 0) {
            positional = 1;
            continue;
        }
        if (!positional && cli_is_option(a)) {
            size_t f = 0;
            while (f < sizeof flags / sizeof flags[0] && strcmp(a, flags[f].name) != 0)
                f++;
            if (f < sizeof flags / sizeof flags[0]) {
                *(int *)((char *)o + flags[f].off) = flags[f].value;
                continue;
            }
            const char *name = a;
            uint64_t u = 0;
            if ((r = cli_option_value(argc, argv, &i, name, &v)) <= 0)
                return cli_reject_argument(self, a);
            if (strcmp(name, "--exts") == 0) {
                if (!exts_given)
                    o->num_exts = 0;
                exts_given = 1;
                /* nargs='+': the value and the extensions that follow it */
                for (;;) {
                    if (o->num_exts == IM2REC_MAX_EXTS)
                        return cli_usage_error(self, "at most %d --exts", IM2REC_MAX_EXTS);
                    o->exts[o->num_exts++] = v;
                    if (i + 1 < argc && argv[i + 1][0] == '.' && strchr(argv[i + 1], '/') == NULL)
                        v = argv[++i];
                    else
                        break;
                }
            } else if (strcmp(name, "--chunks") == 0) {
                rc = parse_int(self, name, v, 1, 1000000, &o->chunks);
            } else if (strcmp(name, "--train-ratio") == 0) {
                rc = parse_ratio(self, name, v, &o->train_ratio);
            } else if (strcmp(name, "--test-ratio") == 0) {
                rc = parse_ratio(self, name, v, &o->test_ratio);
            } else if (strcmp(name, "--resize") == 0) {
                rc = parse_int(self, name, v, 0, 65536, &o->resize);
            } else if (strcmp(name, "--quality") == 0) {
                rc = parse_int(self, name, v, 0, 100, &u);
                o->quality = (int)u;
            } else if (strcmp(name, "--num-thread") == 0) {
                rc = parse_int(self, name, v, 1, 256, &o->num_thread);
            } else if (strcmp(name, "--color") == 0) {
                if (strcmp(v, "1") != 0 && strcmp(v, "0") != 0 && strcmp(v, "-1") != 0)
                    return cli_usage_error(self, "--color expects 1, 0 or -1, got '%s'", v);
                o->color = atoi(v);
            } else if (strcmp(name, "--encoding") == 0) {
                if (strcmp(v, ".jpg") != 0 && strcmp(v, ".png") != 0)
                    return cli_usage_error(self, "--encoding expects .jpg or .png, got '%s'", v);
                o->encoding = v[1] == 'j' ? IMG_JPEG : IMG_PNG;
            } else {
                return cli_reject_argument(self, a);
            }
            if (rc != CLI_OK)
                return rc;
            continue;
        }
        if (o->prefix == NULL)
            o->prefix = a;
        else if (o->root == NULL)
            o->root = a;
        else
            return cli_reject_argument(self, a);
    }
    if (o->prefix == NULL || o->root == NULL)
        return cli_usage_error(self, "expected PREFIX and ROOT");
    if (o->prefix[0] == '\0' || o->root[0] == '\0')
        return cli_usage_error(self, "PREFIX and ROOT must not be empty");
    return CLI_OK;
}

/** Runs `mxk im2rec`. */
static int run_im2rec(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    im2rec_opts o;
    im2rec_opts_default(&o);
    o.json = g->json;
    int rc = parse_options(self, argc, argv, &o);
    if (rc != CLI_OK)
        return rc;
    return o.list ? im2rec_list(&o) : im2rec_pack(&o);
}

/** The `im2rec` command. */
const cli_command cli_cmd_im2rec = {
    .name = "im2rec",
    .summary = "make image lists and .rec files of images (MXNet's tools/im2rec.py)",
    .usage = "mxk im2rec [OPTIONS] PREFIX ROOT",
    .help = "Makes the image data sets of MXNet's ImageRecordIter, as upstream's\n"
            "tools/im2rec.py does and with its options and defaults: with --list, writes\n"
            "PREFIX.lst listing the images under the folder ROOT; without, packs the\n"
            "images of every PREFIX*.lst into a RecordIO file beside it (PREFIX.rec and\n"
            "its index PREFIX.idx). 'mxk rec' inspects the result.\n"
            "\n"
            "Lists: one line per image, 'INDEX<TAB>LABEL<TAB>PATH' (the label as %f,\n"
            "PATH relative to ROOT), byte for byte as im2rec.py writes them, shuffled in\n"
            "the same order (Python's random.seed(100) and random.shuffle). More labels\n"
            "may follow the first one in a list made by hand (see --pack-label).\n"
            "\n"
            "Options for creating image lists:\n"
            "  --list             make list(s) instead of packing images\n"
            "  --exts EXT         extensions of the images, one or more (default .jpeg\n"
            "                     .jpg .png; compared with the lower-cased extension)\n"
            "  --chunks N         cut the list into N chunks, PREFIX_0.lst ... (default 1)\n"
            "  --train-ratio R    fraction of each chunk for training (default 1.0); below\n"
            "                     1 the lists are PREFIX_train.lst and PREFIX_val.lst\n"
            "  --test-ratio R     fraction for testing, PREFIX_test.lst (default 0)\n"
            "  --recursive        walk ROOT's subfolders (symlinks followed, names sorted)\n"
            "                     and give the images of each folder its own label, in the\n"
            "                     order the folders are met (printed as 'FOLDER LABEL');\n"
            "                     without it only ROOT's own images are listed, label 0\n"
            "  --shuffle          shuffle the list (the default)\n"
            "  --no-shuffle       keep the listed order\n"
            "\n"
            "Options for creating the database (PREFIX may also be a folder: all its .lst):\n"
            "  --pass-through     pack each file's bytes as they are (no decoding)\n"
            "  --resize N         resize the shorter side to N pixels (bilinear, as\n"
            "                     cv2.resize's default; 0: keep the size, the default)\n"
            "  --center-crop      crop the centre square before resizing\n"
            "  --quality Q        JPEG quality 1-100, or PNG compression level 0-9, larger\n"
            "                     values taken as 9 (default 95)\n"
            "  --num-thread N     images decoded and encoded on N threads; the records are\n"
            "                     written in list order whatever N is (default 1)\n"
            "  --color C          1: colour (alpha dropped, gray expanded; the default),\n"
            "                     0: grayscale, -1: as stored (with alpha)\n"
            "  --encoding ENC     .jpg (the default) or .png\n"
            "  --pack-label       store every label of a list line in the record\n"
            "                     (IRHeader flag = number of labels; the lines must all\n"
            "                     have the same number); without it only the first label\n"
            "\n"
            "An image that cannot be read or decoded is skipped with a warning and counted\n"
            "in the summary, as im2rec.py skips it; a list line that is not 'INDEX<TAB>\n"
            "LABEL...<TAB>PATH' is an error naming the file and line. Each .rec and .idx\n"
            "is written atomically: after an error no part of it is left. A progress bar\n"
            "is drawn on a terminal; a summary line per file follows.\n"
            "\n"
            "Differences from im2rec.py: the .lst files of pack mode are taken in name\n"
            "order (upstream: directory order); a malformed list line is an error\n"
            "(upstream prints it and goes on); --pack-label lines must agree on the\n"
            "number of labels; ratios must lie in [0, 1]; a ROOT that cannot be read is\n"
            "an error and a symlink back to an enclosing folder is skipped with a\n"
            "warning; images are decoded with libjpeg-turbo and libpng and resized with\n"
            "stb_image_resize (pixels within the resampling's tolerance of OpenCV's).\n"
            "As cv2.imread, --color 1 and 0 turn a JPEG upright by its EXIF\n"
            "orientation; --color -1 keeps the stored pixels.\n"
            "\n"
            "--json prints, for --list, {\"root\", \"images\", \"labels\": [{\"folder\",\n"
            "\"label\"}], \"lists\": [{\"path\", \"images\"}]}; for packing, {\"files\":\n"
            "[{\"list\", \"rec\", \"idx\", \"records\", \"skipped\", \"bytes\"}]}.\n",
    .run = run_im2rec,
};
