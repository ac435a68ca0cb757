/*
 * `mxk train` on RecordIO image data (train_rec.c): the options of upstream
 * example/image-classification/common/data.py (add_data_args,
 * add_data_aug_args) and the ImageRecordIter (plugins/io-recordio) its
 * get_rec_iter creates from them.
 */
#ifndef MXK_CLI_TRAIN_REC_H
#define MXK_CLI_TRAIN_REC_H

#include "cli.h"
#include "mxk_train.h"

/** The RecordIO options of `mxk train`, with upstream's defaults. */
typedef struct train_rec_args {
    const char *data_train, *data_train_idx; /**< --data-train (.rec), --data-train-idx */
    const char *data_val, *data_val_idx;     /**< --data-val (.rec), --data-val-idx */
    const char *rgb_mean, *rgb_std;          /**< "R,G,B" lists as given */
    double mean[3], std[3];                  /**< parsed by train_rec_check */
    int64_t data_nthreads, pad_size, fill_value;
    int64_t random_crop, random_mirror, random_resized_crop, max_random_rotate_angle;
    int64_t max_random_h, max_random_s, max_random_l;       /**< HLS jitter (0: off) */
    int64_t min_crop_size, max_crop_size;                   /**< -1: off */
    double max_random_shear_ratio, min_random_aspect_ratio; /**< 0: off / unset */
    double max_random_scale, min_random_scale, max_random_aspect_ratio;
    double max_random_area, min_random_area, brightness, contrast, saturation, pca_noise;
} train_rec_args;

/** The options' help lines, for `mxk train --help` (a string literal). */
#define TRAIN_REC_HELP                                                                             \
    "RecordIO image data (instead of --data-dir; upstream common/data.py's flags):\n"              \
    "  --data-train FILE     training .rec (e.g. from `mxk im2rec`), read by\n"                    \
    "                        ImageRecordIter, shuffled every epoch\n"                              \
    "  --data-train-idx FILE its .idx (optional)\n"                                                \
    "  --data-val FILE       validation .rec (optional: without it no validation)\n"               \
    "  --data-val-idx FILE   its .idx (optional)\n"                                                \
    "  --rgb-mean R,G,B      subtracted per channel (123.68,116.779,103.939; a gray\n"             \
    "                        image uses R)\n"                                                      \
    "  --rgb-std R,G,B       then divided by (1,1,1); 0,0,0 and 256,256,256 give\n"                \
    "                        MNISTIter's pixel/256\n"                                              \
    "  --data-nthreads N     decoding threads (4)\n"                                               \
    "  --random-crop 0|1     random instead of centre crop (0)\n"                                  \
    "  --random-mirror 0|1   random horizontal flips (0)\n"                                        \
    "  --random-resized-crop 0|1  Inception-style crops of --min/max-random-area\n"                \
    "                        and aspect ratio (0)\n"                                               \
    "  --max-random-scale X  largest random scale (1)\n"                                           \
    "  --min-random-scale X  smallest random scale (1)\n"                                          \
    "  --max-random-aspect-ratio X  aspect ratio jitter (0)\n"                                     \
    "  --max-random-area X   largest crop area fraction (1)\n"                                     \
    "  --min-random-area X   smallest crop area fraction (1)\n"                                    \
    "  --max-random-rotate-angle N  largest rotation, degrees (0)\n"                               \
    "  --max-random-shear-ratio X  largest shear (0)\n"                                            \
    "  --min-random-aspect-ratio X  aspect ratio drawn in [X, --max-random-aspect-ratio]\n"        \
    "                        instead of 1 -/+ the max (unset)\n"                                   \
    "  --min-crop-size N     square crop of a random side in [N, --max-crop-size],\n"              \
    "                        resized to --image-shape (off)\n"                                     \
    "  --max-crop-size N     see --min-crop-size (off)\n"                                          \
    "  --max-random-h N      hue jitter, 0-180 (0)\n"                                              \
    "  --max-random-s N      HLS saturation jitter, 0-255 (0)\n"                                   \
    "  --max-random-l N      lightness jitter, 0-255 (0)\n"                                        \
    "  --pad-size N          pixels of padding on each side (0)\n"                                 \
    "  --fill-value N        value of the padding pixels (127)\n"                                  \
    "  --brightness X        brightness jitter in [0, 1] (0)\n"                                    \
    "  --contrast X          contrast jitter in [0, 1] (0)\n"                                      \
    "  --saturation X        saturation jitter in [0, 1] (0)\n"                                    \
    "  --pca-noise X         PCA lighting noise in [0, 1] (0)\n"                                   \
    "  With --data-train, --image-shape C,H,W is the crop fed to the network and\n"                \
    "  --num-examples only sets the epoch size of the rate schedule (as fit.py).\n"

/** Sets upstream's defaults (rgb-mean 123.68,116.779,103.939, 4 threads, ...). */
void train_rec_defaults(train_rec_args *r);

/**
 * Takes argv[*i] when it is one of the options (advancing *i past its value);
 * with training 0 (score, predict) only --data-val, --data-val-idx, --rgb-mean
 * and --rgb-std.
 * Returns 1 when taken, 0 when argv[*i] is another argument, -1 after reporting
 * a usage error ("option '--X' needs an integer from 0 to N", "option '--X'
 * needs a number", "option '--X' needs a value").
 */
int train_rec_option(train_rec_args *r, const cli_command *cmd, int training, int argc, char **argv,
                     int *i);

/**
 * Checks the options together, before any data is read: the --rgb-mean and
 * --rgb-std lists ("--rgb-mean needs 3 numbers R,G,B"; a std of 0 is refused),
 * for training (training != 0) --data-val, --data-*-idx and the augmentation
 * flags without --data-train ("--data-val needs --data-train"), ranges (--data-nthreads 1 to 64,
 * areas in (0, 1], min <= max). Returns CLI_OK or CLI_USAGE (reported).
 */
int train_rec_check(train_rec_args *r, const cli_command *cmd, int training);

/**
 * Opens the training (train != 0, shuffled with `seed`, augmented) or validation
 * (no augmentation, no shuffle) ImageRecordIter of the options for batches of
 * `batch` images of image_shape (C,H,W), the last batch padded (round_batch), as
 * get_rec_iter does, reading part `part_index` of `num_parts` (ImageRecordIter's
 * partition; 1 and 0 read all), and sets the iterator's source, its num_batches
 * from the part's share of the records (train_rec_count) and *examples to the
 * number of records.
 * Returns CLI_OK or CLI_ERROR (reported, with a note naming the plugin when
 * ImageRecordIter is missing).
 */
int train_open_rec(const train_rec_args *r, int train, const int64_t image_shape[3], int64_t batch,
                   uint64_t seed, int32_t num_parts, int32_t part_index, int64_t *examples,
                   mxkt_iter **out);

/**
 * The number of records of `rec`: the keys of its index `idx` when given, else
 * counted by reading the file. Returns -1 after reporting a read error as
 * "WHAT: <the RecordIO message>" (what: the option, "--data-train").
 */
int64_t train_rec_count(const char *what, const char *rec, const char *idx);

/**
 * Checks that the files of --data-train, --data-val and their indexes can be
 * opened, before any work: "--data-train: cannot open 'PATH': <strerror>",
 * "--data-val: 'PATH' is not a regular file". Returns CLI_OK or CLI_ERROR
 * (reported).
 */
int train_rec_check_files(const train_rec_args *r);

#endif
