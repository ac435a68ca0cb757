/*
 * `mxk train` on RecordIO image data (train_rec.h): upstream
 * example/image-classification/common/data.py's options and get_rec_iter,
 * over ImageRecordIter (plugins/io-recordio).
 */
#include <stdlib.h>
#include <string.h>

#include "mxk_recordio.h"
#include "parse.h"
#include "train_opts.h"
#include "train_rec.h"

void train_rec_defaults(train_rec_args *r) {
    memset(r, 0, sizeof *r);
    r->rgb_mean = "123.68,116.779,103.939";
    r->rgb_std = "1,1,1";
    r->data_nthreads = 4;
    r->fill_value = 127;
    r->max_random_scale = 1;
    r->min_random_scale = 1;
    r->max_random_area = 1;
    r->min_random_area = 1;
    r->min_crop_size = r->max_crop_size = -1;
}

int train_rec_option(train_rec_args *r, const cli_command *cmd, int training, int argc, char **argv,
                     int *i) {
    static const struct {
        const char *flag;
        size_t off;
    } strs[] = {
        {"--data-train", offsetof(train_rec_args, data_train)},
        {"--data-train-idx", offsetof(train_rec_args, data_train_idx)},
        {"--data-val", offsetof(train_rec_args, data_val)},
        {"--data-val-idx", offsetof(train_rec_args, data_val_idx)},
        {"--rgb-mean", offsetof(train_rec_args, rgb_mean)},
        {"--rgb-std", offsetof(train_rec_args, rgb_std)},
    };
    static const struct {
        const char *flag;
        size_t off;
        uint64_t max;
    } ints[] = {
        {"--data-nthreads", offsetof(train_rec_args, data_nthreads), 64},
        {"--pad-size", offsetof(train_rec_args, pad_size), 4096},
        {"--fill-value", offsetof(train_rec_args, fill_value), 255},
        {"--random-crop", offsetof(train_rec_args, random_crop), 1},
        {"--random-mirror", offsetof(train_rec_args, random_mirror), 1},
        {"--random-resized-crop", offsetof(train_rec_args, random_resized_crop), 1},
        {"--max-random-rotate-angle", offsetof(train_rec_args, max_random_rotate_angle), 360},
        {"--max-random-h", offsetof(train_rec_args, max_random_h), 180},
        {"--max-random-s", offsetof(train_rec_args, max_random_s), 255},
        {"--max-random-l", offsetof(train_rec_args, max_random_l), 255},
        {"--min-crop-size", offsetof(train_rec_args, min_crop_size), 65535},
        {"--max-crop-size", offsetof(train_rec_args, max_crop_size), 65535},
    };
    static const struct {
        const char *flag;
        size_t off;
    } reals[] = {
        {"--max-random-scale", offsetof(train_rec_args, max_random_scale)},
        {"--min-random-scale", offsetof(train_rec_args, min_random_scale)},
        {"--max-random-aspect-ratio", offsetof(train_rec_args, max_random_aspect_ratio)},
        {"--min-random-aspect-ratio", offsetof(train_rec_args, min_random_aspect_ratio)},
        {"--max-random-shear-ratio", offsetof(train_rec_args, max_random_shear_ratio)},
        {"--max-random-area", offsetof(train_rec_args, max_random_area)},
        {"--min-random-area", offsetof(train_rec_args, min_random_area)},
        {"--brightness", offsetof(train_rec_args, brightness)},
        {"--contrast", offsetof(train_rec_args, contrast)},
        {"--saturation", offsetof(train_rec_args, saturation)},
        {"--pca-noise", offsetof(train_rec_args, pca_noise)},
    };
    const char *v = NULL;
    char *base = (char *)r;
    int k;
    for (size_t j = 0; j < sizeof strs / sizeof strs[0]; j++) {
        if (!training && (strs[j].off == offsetof(train_rec_args, data_train) ||
                          strs[j].off == offsetof(train_rec_args, data_train_idx)))
            continue; /* score / predict: the --data-val set and its normalisation only */
        if ((k = cli_option_value(argc, argv, i, strs[j].flag, &v)) != 0) {
            if (k < 0) {
                cli_usage_error(cmd, "option '%s' needs a value", strs[j].flag);
                return -1;
            }
            *(const char **)(base + strs[j].off) = v;
            return 1;
        }
    }
    if (!training)
        return 0;
    for (size_t j = 0; j < sizeof ints / sizeof ints[0]; j++)
        if ((k = cli_option_value(argc, argv, i, ints[j].flag, &v)) != 0) {
            uint64_t u = 0;
            if (k < 0 || !cli_parse_uint(v, ints[j].max, &u)) {
                cli_usage_error(cmd, "option '%s' needs an integer from 0 to %llu", ints[j].flag,
                                (unsigned long long)ints[j].max);
                return -1;
            }
            *(int64_t *)(base + ints[j].off) = (int64_t)u;
            return 1;
        }
    for (size_t j = 0; j < sizeof reals / sizeof reals[0]; j++)
        if ((k = cli_option_value(argc, argv, i, reals[j].flag, &v)) != 0) {
            if (k < 0 || !cli_parse_real(v, (double *)(base + reals[j].off))) {
                cli_usage_error(cmd, "option '%s' needs a number", reals[j].flag);
                return -1;
            }
            return 1;
        }
    return 0;
}

/** Parses "A,B,C" into out[3]. Returns 1 on success. */
static int parse_triple(const char *s, double out[3]) {
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return 0;
    strcpy(buf, s);
    char *save = NULL, *tok = strtok_r(buf, ",", &save);
    int n = 0;
    for (; tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        if (n == 3 || !cli_parse_real(tok, &out[n]))
            return 0;
        n++;
    }
    return n == 3;
}

int train_rec_check(train_rec_args *r, const cli_command *cmd, int training) {
    if (!parse_triple(r->rgb_mean, r->mean))
        return cli_usage_error(cmd, "--rgb-mean needs 3 numbers R,G,B, not '%s'", r->rgb_mean);
    if (!parse_triple(r->rgb_std, r->std))
        return cli_usage_error(cmd, "--rgb-std needs 3 numbers R,G,B, not '%s'", r->rgb_std);
    for (int c = 0; c < 3; c++)
        if (!(r->std[c] > 0))
            return cli_usage_error(cmd, "--rgb-std values must be positive, not %g", r->std[c]);
    if (training && r->data_train == NULL) {
        const char *stray = r->data_val              ? "--data-val"
                            : r->data_train_idx      ? "--data-train-idx"
                            : r->data_val_idx        ? "--data-val-idx"
                            : r->random_crop         ? "--random-crop"
                            : r->random_mirror       ? "--random-mirror"
                            : r->pad_size            ? "--pad-size"
                            : r->random_resized_crop ? "--random-resized-crop"
                                                     : NULL;
        if (stray)
            return cli_usage_error(cmd, "%s needs --data-train", stray);
    }
    if (r->data_val_idx && r->data_val == NULL)
        return cli_usage_error(cmd, "--data-val-idx needs --data-val");
    if (r->data_nthreads < 1)
        return cli_usage_error(cmd, "--data-nthreads must be at least 1");
    if (!(r->min_random_area > 0 && r->min_random_area <= r->max_random_area &&
          r->max_random_area <= 1))
        return cli_usage_error(cmd,
                               "--min-random-area and --max-random-area need 0 < min <= max <= 1, "
                               "not %g and %g",
                               r->min_random_area, r->max_random_area);
    if (!(r->min_random_scale > 0 && r->min_random_scale <= r->max_random_scale))
        return cli_usage_error(cmd,
                               "--min-random-scale and --max-random-scale need 0 < min <= max, "
                               "not %g and %g",
                               r->min_random_scale, r->max_random_scale);
    return CLI_OK;
}

int64_t train_rec_count(const char *what, const char *rec, const char *idx) {
    mxk_recordio *h = NULL;
    mxk_status st =
        idx ? mxk_recordio_indexed_open(idx, rec, "r", &h) : mxk_recordio_open(rec, "r", &h);
    int64_t n = 0;
    if (st == MXK_OK && idx) {
        const int64_t *keys = NULL;
        size_t nk = 0;
        st = mxk_recordio_keys(h, &keys, &nk);
        n = (int64_t)nk;
    } else if (st == MXK_OK) {
        const void *buf = NULL;
        size_t len = 0;
        while ((st = mxk_recordio_read(h, &buf, &len)) == MXK_OK && buf != NULL)
            n++;
    }
    if (st != MXK_OK) {
        cli_error("%s: %s", what, mxk_get_last_error());
        n = -1;
    }
    mxk_recordio_close(h);
    return n;
}

int train_rec_check_files(const train_rec_args *r) {
    const char *names[4] = {"--data-train", "--data-train-idx", "--data-val", "--data-val-idx"};
    const char *paths[4] = {r->data_train, r->data_train_idx, r->data_val, r->data_val_idx};
    for (int k = 0; k < 4; k++) {
        mxk_recordio *h = NULL;
        if (paths[k] == NULL)
            continue;
        if (mxk_recordio_open(paths[k], "r", &h) != MXK_OK)
            return cli_error("%s: %s", names[k], mxk_get_last_error());
        mxk_recordio_close(h);
    }
    return CLI_OK;
}

/** Appends key = value (a formatted number) to the attribute lists. */
#define ATTR(key, ...)                                                                             \
    do {                                                                                           \
        keys[n] = (key);                                                                           \
        snprintf(vbuf[n], sizeof vbuf[n], __VA_ARGS__);                                            \
        vals[n] = vbuf[n];                                                                         \
        n++;                                                                                       \
    } while (0)

int train_open_rec(const train_rec_args *r, int train, const int64_t image_shape[3], int64_t batch,
                   uint64_t seed, int32_t num_parts, int32_t part_index, int64_t *examples,
                   mxkt_iter **out) {
    const char *rec = train ? r->data_train : r->data_val;
    const char *idx = train ? r->data_train_idx : r->data_val_idx;
    int64_t count = train_rec_count(train ? "--data-train" : "--data-val", rec, idx);
    if (count < 0)
        return CLI_ERROR;
    const char *keys[48];
    const char *vals[48];
    char vbuf[48][64];
    uint32_t n = 0;
    keys[n] = "path_imgrec";
    vals[n++] = rec;
    if (idx) {
        keys[n] = "path_imgidx";
        vals[n++] = idx;
    }
    ATTR("data_shape", "(%lld,%lld,%lld)", (long long)image_shape[0], (long long)image_shape[1],
         (long long)image_shape[2]);
    ATTR("batch_size", "%lld", (long long)batch);
    ATTR("num_parts", "%d", (int)num_parts);
    ATTR("part_index", "%d", (int)part_index);
    ATTR("mean_r", "%.17g", r->mean[0]);
    ATTR("mean_g", "%.17g", r->mean[1]);
    ATTR("mean_b", "%.17g", r->mean[2]);
    ATTR("std_r", "%.17g", r->std[0]);
    ATTR("std_g", "%.17g", r->std[1]);
    ATTR("std_b", "%.17g", r->std[2]);
    ATTR("preprocess_threads", "%lld", (long long)r->data_nthreads);
    ATTR("round_batch", "True");
    ATTR("pad", "%lld", (long long)r->pad_size);
    ATTR("fill_value", "%lld", (long long)r->fill_value);
    if (train) { /* get_rec_iter's validation iterator has no augmentation */
        ATTR("shuffle", "True");
        ATTR("seed", "%llu", (unsigned long long)(seed % 2147483647ull));
        ATTR("rand_crop", "%s", r->random_crop ? "True" : "False");
        ATTR("rand_mirror", "%s", r->random_mirror ? "True" : "False");
        ATTR("random_resized_crop", "%s", r->random_resized_crop ? "True" : "False");
        ATTR("max_random_scale", "%.17g", r->max_random_scale);
        ATTR("min_random_scale", "%.17g", r->min_random_scale);
        ATTR("max_aspect_ratio", "%.17g", r->max_random_aspect_ratio);
        ATTR("max_random_area", "%.17g", r->max_random_area);
        ATTR("min_random_area", "%.17g", r->min_random_area);
        ATTR("max_rotate_angle", "%lld", (long long)r->max_random_rotate_angle);
        ATTR("brightness", "%.17g", r->brightness);
        ATTR("contrast", "%.17g", r->contrast);
        ATTR("saturation", "%.17g", r->saturation);
        ATTR("pca_noise", "%.17g", r->pca_noise);
        ATTR("max_shear_ratio", "%.17g", r->max_random_shear_ratio);
        ATTR("min_aspect_ratio", "%.17g", r->min_random_aspect_ratio);
        ATTR("min_crop_size", "%lld", (long long)r->min_crop_size);
        ATTR("max_crop_size", "%lld", (long long)r->max_crop_size);
        ATTR("random_h", "%lld", (long long)r->max_random_h);
        ATTR("random_s", "%lld", (long long)r->max_random_s);
        ATTR("random_l", "%lld", (long long)r->max_random_l);
    }
    if (train_iter_create("ImageRecordIter", n, keys, vals, out) != CLI_OK)
        return CLI_ERROR;
    (*out)->num_batches = (count / num_parts + batch - 1) / batch; /* about the part's */
    *examples = count;
    snprintf((*out)->source, sizeof(*out)->source, "%s", rec);
    return CLI_OK;
}
