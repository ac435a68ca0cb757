/*
 * `mxk im2rec PREFIX ROOT` without --list: upstream tools/im2rec.py's read_list,
 * image_encode and write_worker. For each PREFIX*.lst (PREFIX a folder: each
 * .lst in it) the images are read from ROOT/PATH, decoded (--color: 1 RGB,
 * 0 gray, -1 as stored), centre-cropped to a square (--center-crop: the middle
 * rows or columns, margin (long - short) / 2 as upstream), resized so that the
 * short side is --resize (the long side scaled with integer division, bilinear:
 * cv2.resize's default INTER_LINEAR -> IMG_BILINEAR), encoded (--encoding,
 * --quality; JPEG of an image with alpha drops the alpha, as OpenCV's encoder
 * does) and packed with the IRHeader (flag, label, id = INDEX, id2 = 0) of
 * python/mxnet/recordio.py's pack: with --pack-label and more than one label,
 * flag = the number of labels and the labels ahead of the image; else the first
 * label. --pass-through packs the file's bytes unchanged. Records and .idx lines
 * (INDEX, offset) are written in list order through mxk_recordio_indexed_open,
 * so the files appear complete or not at all.
 *
 * As cv2.imread, --color 1 and 0 turn a JPEG upright by its EXIF orientation
 * (img_exif_orientation); -1 (IMREAD_UNCHANGED) keeps the stored pixels.
 *
 * Differences from upstream, deliberate: a malformed list line (fewer than
 * three fields, an index that is not a non-negative integer, a label that is
 * not a number) is an error naming the file and line, where read_list prints
 * it and goes on; with --pack-label every line must have the same number of
 * labels (ImageRecordIter's label_width is one number); the lists are taken in
 * name order, not os.listdir's; pixels differ from OpenCV's within the
 * resampling's tolerance (image.h).
 *
 * --num-thread workers decode and encode; the main thread writes. A worker
 * takes the next list entry only while it is fewer than PACK_WINDOW_PER_THREAD *
 * threads entries ahead of the writer, so memory stays bounded whatever the
 * list's length.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli.h"
#include "im2rec.h"
#include "mxk_recordio.h"
#include "train_progress.h"

/** Entries a worker may run ahead of the writer, per thread. */
#define PACK_WINDOW_PER_THREAD 4
/** Largest list file and largest image file read. */
#define PACK_MAX_FILE (1ull << 30)

/** One list line: the image's path, its index and its labels. */
typedef struct pack_job {
    char *path;    /**< PATH as in the list (points into the list's text) */
    int64_t index; /**< INDEX: the record's id and .idx key */
    float *labels; /**< the labels (owned) */
    uint32_t nlabels;
} pack_job;

/** A worker's result for one job. */
typedef struct pack_result {
    void *rec;    /**< the packed record (mxk_free), NULL when skipped */
    size_t len;   /**< its bytes */
    char *reason; /**< why it was skipped (malloc'd), NULL when packed */
    int done;     /**< set by the worker */
} pack_result;

/** The state shared by the workers and the writer of one list. */
typedef struct packer {
    const im2rec_opts *o;
    const char *root; /**< absolute ROOT */
    const pack_job *jobs;
    pack_result *res;
    size_t n;
    size_t window;   /**< most jobs taken ahead of the writer */
    size_t next_job; /**< the next job to take */
    size_t written;  /**< jobs the writer has consumed */
    int stop;        /**< the writer gave up: workers end */
    pthread_mutex_t mu;
    pthread_cond_t done_cv; /**< a result is ready */
    pthread_cond_t room_cv; /**< the writer moved on, or stop */
} packer;

/** Skips a job: the reason (formatted) into *r. */
static void skip(pack_result *r, const char *fmt, const char *path, const char *why) {
    size_t n = strlen(fmt) + strlen(path) + strlen(why) + 1;
    r->reason = malloc(n);
    if (r->reason != NULL)
        snprintf(r->reason, n, fmt, path, why);
}

/** Drops the alpha channel of an RGBA image in place (OpenCV's JPEG encoder does). */
static void drop_alpha(img_image *im) {
    size_t px = (size_t)im->w * im->h;
    for (size_t i = 0; i < px; i++)
        memmove(im->pix + 3 * i, im->pix + 4 * i, 3);
    im->c = 3;
}

/**
 * Decodes, crops, resizes and encodes `data` as the options say into *out
 * (malloc'd, *len bytes). Returns 0, or -1 with the reason in msg.
 */
static int transform(const im2rec_opts *o, img_codec *cx, const uint8_t *data, size_t size,
                     uint8_t **out, size_t *len, char *msg, size_t cap) {
    img_image im = {0}, sized = {0};
    uint32_t channels = o->color == 1 ? 3 : o->color == 0 ? 1 : 0;
    if (img_decode(cx, data, size, channels, 0, 0, &im, msg, cap) != 0)
        return -1;
    /* cv2.imread turns the image upright unless it reads it unchanged (-1) */
    if (o->color != -1 && img_orient(&im, img_exif_orientation(data, size), msg, cap) != 0) {
        img_free(&im);
        return -1;
    }
    uint32_t x0 = 0, y0 = 0, cw = im.w, ch = im.h;
    if (o->center_crop) {
        if (im.h > im.w) {
            y0 = (im.h - im.w) / 2;
            ch = im.w;
        } else {
            x0 = (im.w - im.h) / 2;
            cw = im.h;
        }
    }
    uint32_t w = cw, h = ch;
    if (o->resize) {
        uint64_t r = o->resize;
        uint64_t nw = ch > cw ? r : (uint64_t)cw * r / ch, nh = ch > cw ? (uint64_t)ch * r / cw : r;
        if (nw > UINT32_MAX || nh > UINT32_MAX) {
            img_free(&im);
            snprintf(msg, cap, "cannot resize %u x %u to a short side of %" PRIu64, cw, ch, r);
            return -1;
        }
        w = (uint32_t)nw;
        h = (uint32_t)nh;
    }
    img_image *dst = &im;
    if (o->center_crop || o->resize) {
        int rc = img_resize(&im, x0, y0, cw, ch, w, h, IMG_BILINEAR, &sized, msg, cap);
        img_free(&im);
        if (rc != 0)
            return -1;
        dst = &sized;
    }
    if (o->encoding == IMG_JPEG && dst->c == 4)
        drop_alpha(dst);
    int q = o->encoding == IMG_JPEG ? (o->quality < 1 ? 1 : o->quality)
                                    : (o->quality > 9 ? 9 : o->quality);
    int rc = img_encode(cx, dst, o->encoding, q, out, len, msg, cap);
    img_free(dst);
    return rc;
}

/** Produces job i's record into *r (never fails: a failure is a skip with its reason). */
static void pack_one(packer *p, img_codec *cx, size_t i, pack_result *r) {
    const pack_job *job = &p->jobs[i];
    char *full = im2rec_join(p->root, job->path);
    char *data = NULL, msg[512];
    size_t size = 0;
    uint8_t *enc = NULL;
    size_t enc_len = 0;
    if (full == NULL) {
        skip(r, "'%s': %s", job->path, "out of memory");
        return;
    }
    mxk_status st = mxk_file_read(full, "image", PACK_MAX_FILE, &data, &size);
    if (st != MXK_OK) {
        skip(r, "%s%s", "", mxk_get_last_error());
    } else if (!p->o->pass_through && transform(p->o, cx, (const uint8_t *)data, size, &enc,
                                                &enc_len, msg, sizeof msg) != 0) {
        skip(r, "cannot use image '%s': %s", full, msg);
    } else {
        mxk_irheader hdr = {0, job->labels[0], (uint64_t)job->index, 0};
        const float *labels = NULL;
        if (p->o->pack_label && job->nlabels > 1) {
            hdr.flag = job->nlabels;
            hdr.label = 0;
            labels = job->labels;
        }
        const void *payload = p->o->pass_through ? (const void *)data : enc;
        size_t plen = p->o->pass_through ? size : enc_len;
        if (mxk_recordio_pack(&hdr, labels, payload, plen, &r->rec, &r->len) != MXK_OK)
            skip(r, "'%s': %s", full, mxk_get_last_error());
    }
    free(enc);
    mxk_free(data);
    free(full);
}

/** A worker thread: takes jobs while the window allows, packs them. */
static void *worker(void *arg) {
    packer *p = arg;
    img_codec *cx = p->o->pass_through ? NULL : img_codec_new();
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (!p->stop && p->next_job < p->n && p->next_job >= p->written + p->window)
            pthread_cond_wait(&p->room_cv, &p->mu);
        if (p->stop || p->next_job >= p->n) {
            pthread_mutex_unlock(&p->mu);
            break;
        }
        size_t i = p->next_job++;
        pthread_mutex_unlock(&p->mu);
        pack_result r = {0};
        if (cx == NULL && !p->o->pass_through)
            skip(&r, "'%s': %s", p->jobs[i].path, "cannot initialise the image codec");
        else
            pack_one(p, cx, i, &r);
        pthread_mutex_lock(&p->mu);
        r.done = 1;
        p->res[i] = r;
        pthread_cond_broadcast(&p->done_cv);
        pthread_mutex_unlock(&p->mu);
    }
    img_codec_free(cx);
    return NULL;
}

/** Trims ASCII whitespace from both ends of s in place. */
static char *trim(char *s) {
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/** Frees the jobs of a list. */
static void free_jobs(pack_job *jobs, size_t n) {
    for (size_t i = 0; i < n; i++)
        free(jobs[i].labels);
    free(jobs);
}

/**
 * Parses list `text` (modified in place; the jobs point into it) as upstream's
 * read_list: lines of tab-separated fields, each trimmed; blank lines skipped.
 * Returns CLI_OK or CLI_ERROR after reporting "LIST:LINE: ...".
 */
static int parse_list(const im2rec_opts *o, const char *lst, char *text, pack_job **out,
                      size_t *n_out) {
    size_t n = 0, cap = 0, lineno = 0, first_line = 0;
    pack_job *jobs = NULL;
    int rc = CLI_OK;
    for (char *line = text, *next; rc == CLI_OK && line != NULL; line = next) {
        lineno++;
        next = strchr(line, '\n');
        if (next != NULL)
            *next++ = '\0';
        line = trim(line);
        if (line[0] == '\0')
            continue;
        char *fields[1 + 1024 + 1];
        size_t nf = 0;
        for (char *f = line; f != NULL && nf < sizeof fields / sizeof fields[0];) {
            char *tab = strchr(f, '\t');
            if (tab != NULL)
                *tab++ = '\0';
            fields[nf++] = trim(f);
            f = tab;
        }
        if (nf < 3) {
            rc = cli_error("%s:%zu: expected 'INDEX<TAB>LABEL<TAB>PATH', got %zu field%s", lst,
                           lineno, nf, nf == 1 ? "" : "s");
            break;
        }
        if (nf == sizeof fields / sizeof fields[0]) {
            rc = cli_error("%s:%zu: more than 1024 labels", lst, lineno);
            break;
        }
        char *end = NULL;
        errno = 0;
        long long index = strtoll(fields[0], &end, 10);
        if (fields[0][0] == '\0' || *end != '\0' || errno != 0 || index < 0) {
            rc = cli_error("%s:%zu: index '%s' is not a non-negative integer", lst, lineno,
                           fields[0]);
            break;
        }
        uint32_t nl = (uint32_t)(nf - 2);
        if (o->pack_label && n > 0 && nl != jobs[0].nlabels) {
            rc = cli_error("%s:%zu: %u labels, but line %zu has %u (--pack-label needs the same "
                           "number on every line)",
                           lst, lineno, nl, first_line, jobs[0].nlabels);
            break;
        }
        if (n == cap) {
            cap = cap ? 2 * cap : 1024;
            pack_job *grown = realloc(jobs, cap * sizeof *grown);
            if (grown == NULL) {
                rc = cli_error("out of memory");
                break;
            }
            jobs = grown;
        }
        pack_job *j = &jobs[n];
        *j = (pack_job){fields[nf - 1], index, malloc(nl * sizeof(float)), nl};
        if (j->labels == NULL) {
            rc = cli_error("out of memory");
            break;
        }
        n++;
        if (n == 1)
            first_line = lineno;
        for (uint32_t k = 0; k < nl; k++) {
            double v = strtod(fields[1 + k], &end);
            if (fields[1 + k][0] == '\0' || *end != '\0') {
                rc = cli_error("%s:%zu: label '%s' is not a number", lst, lineno, fields[1 + k]);
                break;
            }
            j->labels[k] = (float)v;
        }
    }
    if (rc != CLI_OK) {
        free_jobs(jobs, n);
        return rc;
    }
    *out = jobs;
    *n_out = n;
    return CLI_OK;
}

/** Prints the progress bar's line for `done` of `n` images. */
static void show_progress(train_progress *bar, size_t done, size_t n, double t0, int end) {
    mxkt_progress prog = {
        "pack", -1, (int64_t)done, (int64_t)n, (int64_t)done, train_now_s() - t0, NULL, 0.0, end};
    train_progress_cb(&prog, bar);
}

/**
 * Packs the images of list `lst` into `rec` and `idx`. Returns CLI_OK or
 * CLI_ERROR; adds {"list", "rec", "idx", "records", "skipped", "bytes"} to
 * `files` (JSON) or prints the summary line.
 */
static int pack_list(const im2rec_opts *o, const char *root, const char *lst, const char *rec,
                     const char *idx, json_t *files) {
    char *text = NULL;
    size_t size = 0;
    pack_job *jobs = NULL;
    size_t n = 0;
    mxk_status st = mxk_file_read(lst, "image list", PACK_MAX_FILE, &text, &size);
    if (st != MXK_OK)
        return cli_api_error(st, "cannot read '%s'", lst);
    int rc = parse_list(o, lst, text, &jobs, &n);
    if (rc == CLI_OK && ((st = mxk_file_check_target(rec)) != MXK_OK ||
                         (st = mxk_file_check_target(idx)) != MXK_OK))
        rc = cli_api_error(st, "cannot write '%s'", rec);
    packer p = {.o = o, .root = root, .jobs = jobs, .n = n};
    p.window = PACK_WINDOW_PER_THREAD * (size_t)o->num_thread;
    pthread_t threads[256];
    size_t num_threads = 0;
    mxk_recordio *w = NULL;
    if (rc == CLI_OK && (p.res = calloc(n ? n : 1, sizeof *p.res)) == NULL)
        rc = cli_error("out of memory");
    int synced = rc == CLI_OK;
    if (synced) {
        pthread_mutex_init(&p.mu, NULL);
        pthread_cond_init(&p.done_cv, NULL);
        pthread_cond_init(&p.room_cv, NULL);
        while (num_threads < o->num_thread &&
               pthread_create(&threads[num_threads], NULL, worker, &p) == 0)
            num_threads++;
        if (num_threads == 0)
            rc = cli_error("cannot start a worker thread");
    }
    /* opened last: closing it commits the files, which only a complete run may do */
    if (rc == CLI_OK && (st = mxk_recordio_indexed_open(idx, rec, "w", &w)) != MXK_OK)
        rc = cli_api_error(st, "cannot write '%s'", rec);
    train_progress bar;
    train_progress_open(&bar, 1);
    double t0 = train_now_s();
    size_t records = 0, skipped = 0;
    for (size_t i = 0; rc == CLI_OK && i < n; i++) {
        pthread_mutex_lock(&p.mu);
        while (!p.res[i].done)
            pthread_cond_wait(&p.done_cv, &p.mu);
        pthread_mutex_unlock(&p.mu);
        pack_result *r = &p.res[i];
        if (r->rec != NULL) {
            st = mxk_recordio_write_idx(w, jobs[i].index, r->rec, r->len);
            if (st != MXK_OK)
                rc = cli_api_error(st, "cannot write '%s'", rec);
            records++;
        } else {
            fprintf(bar.log, "mxk: warning: skipping %s:%zu: %s\n", lst, i + 1,
                    r->reason ? r->reason : "out of memory");
            skipped++;
        }
        mxk_free(r->rec);
        free(r->reason);
        *r = (pack_result){0};
        pthread_mutex_lock(&p.mu);
        p.written = i + 1;
        pthread_cond_broadcast(&p.room_cv);
        pthread_mutex_unlock(&p.mu);
        show_progress(&bar, i + 1, n, t0, 0);
    }
    if (num_threads > 0) {
        pthread_mutex_lock(&p.mu);
        p.stop = 1;
        pthread_cond_broadcast(&p.room_cv);
        pthread_mutex_unlock(&p.mu);
        for (size_t t = 0; t < num_threads; t++)
            pthread_join(threads[t], NULL);
        for (size_t i = 0; i < n; i++) {
            mxk_free(p.res[i].rec);
            free(p.res[i].reason);
        }
    }
    if (synced) {
        pthread_mutex_destroy(&p.mu);
        pthread_cond_destroy(&p.done_cv);
        pthread_cond_destroy(&p.room_cv);
    }
    show_progress(&bar, n, n, t0, 1); /* clears the bar */
    train_progress_close(&bar);
    uint64_t bytes = 0;
    if (w != NULL) {
        if (rc == CLI_OK)
            mxk_recordio_tell(w, &bytes);
        st = mxk_recordio_close(w); /* after an error: a failed write, nothing is renamed */
        if (rc == CLI_OK && st != MXK_OK)
            rc = cli_api_error(st, "cannot write '%s'", rec);
    }
    if (rc == CLI_OK && files != NULL)
        json_array_append_new(files,
                              json_pack("{s:s, s:s, s:s, s:I, s:I, s:I}", "list", lst, "rec", rec,
                                        "idx", idx, "records", (json_int_t)records, "skipped",
                                        (json_int_t)skipped, "bytes", (json_int_t)bytes));
    else if (rc == CLI_OK)
        printf("wrote %s and %s: %zu records, %zu skipped, %" PRIu64 " bytes\n", rec, idx, records,
               skipped, bytes);
    free(p.res);
    free_jobs(jobs, n);
    mxk_free(text);
    return rc;
}

/** The .lst files of working_dir whose path starts with prefix, sorted, into *out. */
static int find_lists(const char *prefix, const char *dir, char ***out, size_t *n_out) {
    DIR *d = opendir(dir);
    if (d == NULL)
        return cli_error("cannot read folder '%s': %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0;
    int rc = CLI_OK;
    struct dirent *e;
    while (rc == CLI_OK && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        char *full = im2rec_join(dir, e->d_name);
        struct stat st;
        if (full == NULL) {
            rc = cli_error("out of memory");
            break;
        }
        if (len > 4 && strcmp(e->d_name + len - 4, ".lst") == 0 &&
            strncmp(full, prefix, strlen(prefix)) == 0 && stat(full, &st) == 0 &&
            S_ISREG(st.st_mode)) {
            char **grown = realloc(names, (n + 1) * sizeof *names);
            if (grown == NULL) {
                free(full);
                rc = cli_error("out of memory");
                break;
            }
            names = grown;
            names[n++] = full;
        } else {
            free(full);
        }
    }
    closedir(d);
    for (size_t i = 0; i + 1 < n; i++) /* a few names: insertion sort */
        for (size_t j = i + 1; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    *out = names;
    *n_out = n;
    return rc;
}

/** Pack mode (see im2rec.h). */
int im2rec_pack(const im2rec_opts *o) {
    char *prefix = im2rec_abspath(o->prefix), *root = im2rec_abspath(o->root);
    char *dir = NULL, **lists = NULL;
    size_t num_lists = 0;
    json_t *files = o->json ? json_array() : NULL;
    int rc = CLI_OK;
    struct stat st;
    if (prefix == NULL || root == NULL || (o->json && files == NULL))
        rc = cli_error("out of memory");
    if (rc == CLI_OK) {
        /* working_dir: PREFIX when it is a folder, else its parent */
        dir = strdup(prefix);
        if (dir == NULL)
            rc = cli_error("out of memory");
        else if (!(stat(prefix, &st) == 0 && S_ISDIR(st.st_mode)))
            *strrchr(dir, '/') = '\0';
        if (rc == CLI_OK && dir[0] == '\0')
            strcpy(dir, "/");
    }
    if (rc == CLI_OK)
        rc = find_lists(prefix, dir, &lists, &num_lists);
    if (rc == CLI_OK && num_lists == 0)
        rc = cli_error("no list file '%s*.lst' (make one with --list)", prefix);
    for (size_t i = 0; rc == CLI_OK && i < num_lists; i++) {
        /* PREFIXsomething.lst -> PREFIXsomething.rec / .idx */
        size_t len = strlen(lists[i]);
        char *rec = strdup(lists[i]), *idx = strdup(lists[i]);
        if (rec == NULL || idx == NULL)
            rc = cli_error("out of memory");
        else {
            memcpy(rec + len - 4, ".rec", 4);
            memcpy(idx + len - 4, ".idx", 4);
            rc = pack_list(o, root, lists[i], rec, idx, files);
        }
        free(rec);
        free(idx);
    }
    if (rc == CLI_OK && files != NULL) {
        rc = cli_json_print(json_pack("{s:o}", "files", files), 0);
        files = NULL;
    }
    json_decref(files);
    for (size_t i = 0; i < num_lists; i++)
        free(lists[i]);
    free(lists);
    free(dir);
    free(prefix);
    free(root);
    return rc;
}
