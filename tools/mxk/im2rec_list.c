/*
 * `mxk im2rec --list PREFIX ROOT`: upstream tools/im2rec.py's list_image,
 * make_list and write_list. The images are the regular files (symlinks
 * followed) whose extension, lower-cased as os.path.splitext(name)[1].lower(),
 * is one of --exts; names are sorted byte-wise (Python's order for UTF-8 names).
 * Without --recursive only ROOT's own files are listed, all with label 0; with
 * it the folders are walked as os.walk(followlinks=True) with sorted names,
 * top-down, and each folder holding an image gets the next label when its first
 * image is met (the mapping "FOLDER LABEL" is printed as upstream prints it).
 * The list is shuffled with Python's random.seed(100); random.shuffle (see
 * pyrandom.h) unless --no-shuffle, cut into --chunks, each chunk split by
 * --train-ratio / --test-ratio, and written as lines "%d\t%f\t%s\n" (index,
 * label, path relative to ROOT): byte for byte upstream's files.
 *
 * Differences from upstream, deliberate: a ROOT that cannot be read is an error
 * (upstream lists nothing with --recursive, or raises); a folder that is its
 * own ancestor through a symlink is skipped with a warning (upstream descends
 * until the path is too long); each list is written atomically
 * (mxk_file_write); ratios outside [0, 1] are refused by cmd_im2rec.c.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli.h"
#include "im2rec.h"
#include "pyrandom.h"

/** One image: its path relative to ROOT, its index before shuffling, its label. */
typedef struct list_item {
    char *rel;
    uint64_t index;
    uint64_t label;
} list_item;

/** A growing array of items and the folder labels of a walk. */
typedef struct walk_state {
    const im2rec_opts *o;
    list_item *items;
    size_t n, cap;
    char **folders; /**< folders[label]: the folder relative to ROOT ("." for ROOT) */
    size_t num_folders;
    dev_t anc_dev[256]; /**< the folders being walked (for symlink loops) */
    ino_t anc_ino[256];
    int depth;
} walk_state;

/** os.path.splitext(name)[1]: from the last '.', unless only dots precede it. */
static const char *extension(const char *name) {
    const char *dot = strrchr(name, '.');
    if (dot == NULL)
        return "";
    for (const char *p = name; p < dot; p++)
        if (*p != '.')
            return dot;
    return "";
}

/** True when `name`'s lower-cased extension is one of --exts (compared as given). */
static int wanted(const im2rec_opts *o, const char *name) {
    char ext[64];
    const char *e = extension(name);
    size_t n = strlen(e);
    if (n >= sizeof ext)
        return 0;
    for (size_t i = 0; i <= n; i++)
        ext[i] = (char)tolower((unsigned char)e[i]);
    for (size_t i = 0; i < o->num_exts; i++)
        if (strcmp(ext, o->exts[i]) == 0)
            return 1;
    return 0;
}

/** qsort order of names: byte-wise (Python's for UTF-8 names). */
static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/** The sorted entry names of folder `path` (without . and ..) into *names. -1: errno set. */
static int read_folder(const char *path, char ***names, size_t *n) {
    DIR *d = opendir(path);
    if (d == NULL)
        return -1;
    size_t cap = 0;
    *names = NULL;
    *n = 0;
    struct dirent *e;
    errno = 0;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            char **grown = realloc(*names, cap * sizeof **names);
            if (grown == NULL)
                goto oom;
            *names = grown;
        }
        if (((*names)[*n] = strdup(e->d_name)) == NULL)
            goto oom;
        (*n)++;
    }
    int err = errno;
    closedir(d);
    if (err) {
        for (size_t i = 0; i < *n; i++)
            free((*names)[i]);
        free(*names);
        errno = err;
        return -1;
    }
    if (*n)
        qsort(*names, *n, sizeof **names, cmp_str);
    return 0;
oom:
    closedir(d);
    for (size_t i = 0; i < *n; i++)
        free((*names)[i]);
    free(*names);
    errno = ENOMEM;
    return -1;
}

/** Frees the names of read_folder. */
static void free_names(char **names, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/** Appends an item (rel taken over). -1 when out of memory (rel freed). */
static int add_item(walk_state *w, char *rel, uint64_t label) {
    if (w->n == w->cap) {
        size_t cap = w->cap ? 2 * w->cap : 256;
        list_item *grown = realloc(w->items, cap * sizeof *grown);
        if (grown == NULL) {
            free(rel);
            return -1;
        }
        w->items = grown;
        w->cap = cap;
    }
    w->items[w->n] = (list_item){rel, w->n, label};
    w->n++;
    return 0;
}

/**
 * Lists folder ROOT/rel (rel "" for ROOT): its images, then (recursive) its
 * subfolders in order. A subfolder that cannot be read is skipped silently, as
 * os.walk does; ROOT itself is an error. Returns CLI_OK or CLI_ERROR.
 */
static int walk(walk_state *w, const char *root, const char *rel) {
    char *path = rel[0] ? im2rec_join(root, rel) : strdup(root);
    char **names = NULL;
    size_t n = 0;
    if (path == NULL)
        return cli_error("out of memory");
    if (read_folder(path, &names, &n) != 0) {
        int err = errno;
        free(path);
        if (err == ENOMEM)
            return cli_error("out of memory");
        return rel[0] ? CLI_OK : cli_error("cannot read folder '%s': %s", root, strerror(err));
    }
    int rc = CLI_OK;
    int64_t label = -1; /* this folder's label, given at its first image */
    char **subdirs = calloc(n ? n : 1, sizeof *subdirs);
    size_t num_subdirs = 0;
    if (subdirs == NULL)
        rc = cli_error("out of memory");
    for (size_t i = 0; rc == CLI_OK && i < n; i++) {
        char *full = im2rec_join(path, names[i]);
        char *sub = rel[0] ? im2rec_join(rel, names[i]) : strdup(names[i]);
        struct stat st;
        if (full == NULL || sub == NULL) {
            free(full);
            free(sub);
            rc = cli_error("out of memory");
            break;
        }
        int ok = stat(full, &st) == 0;
        free(full);
        if (ok && S_ISDIR(st.st_mode)) {
            subdirs[num_subdirs++] = sub;
            continue;
        }
        if (!ok || !S_ISREG(st.st_mode) || !wanted(w->o, names[i])) {
            free(sub);
            continue;
        }
        if (label < 0) {
            label = (int64_t)w->num_folders;
            if (w->o->recursive) {
                char **grown = realloc(w->folders, (w->num_folders + 1) * sizeof *grown);
                char *name = strdup(rel[0] ? rel : ".");
                if (grown == NULL || name == NULL) {
                    if (grown)
                        w->folders = grown;
                    free(name);
                    free(sub);
                    rc = cli_error("out of memory");
                    break;
                }
                w->folders = grown;
                w->folders[w->num_folders++] = name;
            }
        }
        if (add_item(w, sub, w->o->recursive ? (uint64_t)label : 0) != 0)
            rc = cli_error("out of memory");
    }
    for (size_t i = 0; rc == CLI_OK && w->o->recursive && i < num_subdirs; i++) {
        char *full = im2rec_join(root, subdirs[i]);
        struct stat st;
        int loop = 0;
        if (full != NULL && stat(full, &st) == 0)
            for (int a = 0; a < w->depth; a++)
                loop |= w->anc_dev[a] == st.st_dev && w->anc_ino[a] == st.st_ino;
        free(full);
        if (loop || w->depth == 256) {
            cli_warning("skipping folder '%s': %s", subdirs[i],
                        loop ? "it is its own ancestor (a symlink loop)" : "nested too deep");
            continue;
        }
        w->anc_dev[w->depth] = st.st_dev;
        w->anc_ino[w->depth++] = st.st_ino;
        rc = walk(w, root, subdirs[i]);
        w->depth--;
    }
    for (size_t i = 0; i < num_subdirs; i++)
        free(subdirs[i]);
    free(subdirs);
    free_names(names, n);
    free(path);
    return rc;
}

/** Writes items[lo, hi) (clamped to n) to `path` as upstream's write_list. */
static int write_list(const char *path, const list_item *items, size_t n, size_t lo, size_t hi,
                      json_t *lists) {
    if (hi > n)
        hi = n;
    if (lo > hi)
        lo = hi;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (f == NULL)
        return cli_error("out of memory");
    for (size_t i = lo; i < hi; i++)
        fprintf(f, "%" PRIu64 "\t%f\t%s\n", items[i].index, (double)items[i].label, items[i].rel);
    if (fclose(f) != 0) {
        free(text);
        return cli_error("out of memory");
    }
    mxk_status st = mxk_file_write(path, text, len);
    free(text);
    if (st != MXK_OK)
        return cli_api_error(st, "cannot write '%s'", path);
    if (lists != NULL)
        json_array_append_new(
            lists, json_pack("{s:s, s:I}", "path", path, "images", (json_int_t)(hi - lo)));
    else
        printf("wrote %s: %zu images\n", path, hi - lo);
    return CLI_OK;
}

/** make_list: shuffles, cuts into chunks and writes each chunk's lists. */
static int write_lists(const im2rec_opts *o, const char *prefix, list_item *items, size_t n,
                       json_t *lists) {
    if (o->shuffle) {
        py_random r;
        list_item tmp;
        py_random_seed(&r, 100);
        py_random_shuffle(&r, items, n, sizeof *items, &tmp);
    }
    size_t chunk_size = (size_t)((n + o->chunks - 1) / o->chunks);
    for (uint64_t c = 0; c < o->chunks; c++) {
        size_t begin = (size_t)(c * chunk_size), end = begin + chunk_size;
        if (begin > n)
            begin = n;
        if (end > n)
            end = n;
        char stem[4200];
        if (o->chunks > 1)
            snprintf(stem, sizeof stem, "%s_%" PRIu64, prefix, c);
        else
            snprintf(stem, sizeof stem, "%s", prefix);
        size_t sep = (size_t)((double)chunk_size * o->train_ratio);
        size_t sep_test = (size_t)((double)chunk_size * o->test_ratio);
        const list_item *chunk = items + begin;
        size_t len = end - begin;
        char path[4300];
        int rc = CLI_OK;
        if (o->train_ratio == 1.0) {
            snprintf(path, sizeof path, "%s.lst", stem);
            rc = write_list(path, chunk, len, 0, len, lists);
        } else {
            if (rc == CLI_OK && o->test_ratio != 0) {
                snprintf(path, sizeof path, "%s_test.lst", stem);
                rc = write_list(path, chunk, len, 0, sep_test, lists);
            }
            if (rc == CLI_OK && o->train_ratio + o->test_ratio < 1.0) {
                snprintf(path, sizeof path, "%s_val.lst", stem);
                rc = write_list(path, chunk, len, sep_test + sep, len, lists);
            }
            if (rc == CLI_OK) {
                snprintf(path, sizeof path, "%s_train.lst", stem);
                rc = write_list(path, chunk, len, sep_test, sep_test + sep, lists);
            }
        }
        if (rc != CLI_OK)
            return rc;
    }
    return CLI_OK;
}

/** List mode (see im2rec.h). */
int im2rec_list(const im2rec_opts *o) {
    char *prefix = im2rec_abspath(o->prefix), *root = im2rec_abspath(o->root);
    walk_state w = {.o = o};
    json_t *lists = o->json ? json_array() : NULL;
    int rc = CLI_OK;
    if (prefix == NULL || root == NULL || (o->json && lists == NULL))
        rc = cli_error("out of memory");
    if (rc == CLI_OK && strlen(prefix) > 4000)
        rc = cli_error("prefix '%s' is too long", o->prefix);
    struct stat st;
    if (rc == CLI_OK && stat(root, &st) == 0) { /* ROOT is the first ancestor */
        w.anc_dev[0] = st.st_dev;
        w.anc_ino[0] = st.st_ino;
        w.depth = 1;
    }
    if (rc == CLI_OK)
        rc = walk(&w, root, "");
    if (rc == CLI_OK && !o->json)
        for (size_t i = 0; i < w.num_folders; i++)
            printf("%s %zu\n", w.folders[i], i);
    if (rc == CLI_OK)
        rc = write_lists(o, prefix, w.items, w.n, lists);
    if (rc == CLI_OK && o->json) {
        json_t *folders = json_array();
        for (size_t i = 0; i < w.num_folders; i++)
            json_array_append_new(
                folders, json_pack("{s:s, s:I}", "folder", w.folders[i], "label", (json_int_t)i));
        rc = cli_json_print(json_pack("{s:s, s:I, s:o, s:o}", "root", root, "images",
                                      (json_int_t)w.n, "labels", folders, "lists", lists),
                            0);
        lists = NULL;
    }
    json_decref(lists);
    for (size_t i = 0; i < w.n; i++)
        free(w.items[i].rel);
    free(w.items);
    for (size_t i = 0; i < w.num_folders; i++)
        free(w.folders[i]);
    free(w.folders);
    free(prefix);
    free(root);
    return rc;
}
