/*
 * `mxk im2rec` (cmd_im2rec.c parses the options): upstream MXNet's
 * tools/im2rec.py in C. List mode (im2rec_list.c) walks a folder of images and
 * writes `index<TAB>label<TAB>path` lists; pack mode (im2rec_pack.c) reads the
 * lists and writes RecordIO files (.rec + .idx, mxk_recordio.h) of IRHeader'ed
 * images, decoded, cropped, resized and encoded with plugins/io-recordio/image.h.
 */
#ifndef MXK_CLI_IM2REC_H
#define MXK_CLI_IM2REC_H

#include <stddef.h>
#include <stdint.h>

#include "image.h"

/** Most --exts values. */
#define IM2REC_MAX_EXTS 32

/** The options of `mxk im2rec`, with upstream's defaults (im2rec_opts_default). */
typedef struct im2rec_opts {
    const char *prefix; /**< PREFIX as given */
    const char *root;   /**< ROOT as given */
    int json;           /**< --json (global option) */
    /* list mode */
    int list;                          /**< --list */
    int recursive;                     /**< --recursive */
    int shuffle;                       /**< 1 unless --no-shuffle */
    const char *exts[IM2REC_MAX_EXTS]; /**< --exts (default .jpeg .jpg .png) */
    size_t num_exts;                   /**< entries of exts */
    uint64_t chunks;                   /**< --chunks (default 1) */
    double train_ratio;                /**< --train-ratio (default 1.0) */
    double test_ratio;                 /**< --test-ratio (default 0) */
    /* pack mode */
    int pass_through;    /**< --pass-through: pack the files' bytes as they are */
    uint64_t resize;     /**< --resize: short side (0: keep the size) */
    int center_crop;     /**< --center-crop */
    int quality;         /**< --quality (default 95) */
    uint64_t num_thread; /**< --num-thread (default 1) */
    int color;           /**< --color: 1 colour, 0 gray, -1 as stored (default 1) */
    img_format encoding; /**< --encoding .jpg (IMG_JPEG, default) or .png (IMG_PNG) */
    int pack_label;      /**< --pack-label */
} im2rec_opts;

/** Fills *o with upstream tools/im2rec.py's defaults (prefix and root NULL). */
void im2rec_opts_default(im2rec_opts *o);

/**
 * List mode: writes PREFIX.lst (or the _train/_val/_test and _N chunk lists) for
 * the images under ROOT, as upstream's make_list. Returns CLI_OK or CLI_ERROR
 * after printing the error.
 */
int im2rec_list(const im2rec_opts *o);

/**
 * Pack mode: for every PREFIX*.lst, writes the .rec and .idx beside it, as
 * upstream's pack mode. Returns CLI_OK or CLI_ERROR after printing the error.
 */
int im2rec_pack(const im2rec_opts *o);

/**
 * Python's os.path.abspath of `path` (the current directory joined when
 * relative, then ".", ".." and repeated slashes resolved without looking at the
 * file system) into a malloc'd string (NULL: out of memory or no current
 * directory).
 */
char *im2rec_abspath(const char *path);

/** Python's os.path.join(a, b) (b absolute: b) into a malloc'd string (NULL: out of memory). */
char *im2rec_join(const char *a, const char *b);

#endif
