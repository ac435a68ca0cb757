/*
 * Throughput of the RecordIO image pipeline, for bench_imagerec.sh, which runs
 * it beside MXNet 1.9.1's ImageRecordIter (imagerec_mxnet.py) on the same files:
 *
 *   bench_imagerec iter REC C,H,W THREADS AUG [PREFETCH]
 *       ImageRecordIter (plugins/io-recordio) over REC: batches of 128 images of
 *       C,H,W, float32, mean/std normalised, THREADS preprocess threads, AUG 1:
 *       rand_crop + rand_mirror (0: centre crop); PREFETCH batches (4). Times
 *       the second epoch (the first warms the page cache and the threads).
 *   bench_imagerec decode REC C
 *       the limit: every record's image decoded at full size to C channels with
 *       TurboJPEG / libpng (image.c) on one thread, nothing else.
 *   bench_imagerec mnist IMAGES LABELS
 *       MNISTIter over an IDX pair (batch 128), second epoch timed.
 *
 * Prints one JSON line: {"mode", "threads", "images", "seconds",
 * "images_per_sec", "peak_rss_mb"} (peak RSS from getrusage, the whole process).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "image.h"
#include "mxk.h"
#include "mxk_recordio.h"

/** Monotonic seconds. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/** Exits with the library's message when st failed. */
static void ok(mxk_status st, const char *what) {
    if (st != MXK_OK) {
        fprintf(stderr, "bench_imagerec: %s: %s\n", what, mxk_get_last_error());
        exit(1);
    }
}

/** Prints the JSON line. */
static void report(const char *mode, int threads, long long images, double secs) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"mode\": \"%s\", \"threads\": %d, \"images\": %lld, \"seconds\": %.3f, "
           "\"images_per_sec\": %.1f, \"peak_rss_mb\": %.1f}\n",
           mode, threads, images, secs, (double)images / secs, (double)ru.ru_maxrss / 1024.0);
}

/** Runs two epochs of `it`, returns the images (batch rows less pad) of the second. */
static long long time_epochs(mxk_data_iter *it, double *secs) {
    long long images = 0;
    for (int epoch = 0; epoch < 2; epoch++) {
        double t0 = now_s();
        int32_t has = 0;
        images = 0;
        ok(mxk_data_iter_reset(it), "reset");
        while (ok(mxk_data_iter_next(it, &has), "next"), has) {
            uint32_t nd = 0, nl = 0, pad = 0;
            mxk_ndarray *const *d = NULL, *const *l = NULL;
            ok(mxk_data_iter_batch(it, &nd, &d, &nl, &l, &pad), "batch");
            images += mxk_ndarray_shape(d[0]).dims[0] - pad;
        }
        *secs = now_s() - t0;
    }
    return images;
}

/** `iter` mode. */
static void run_iter(const char *rec, const char *shape, const char *threads, const char *aug,
                     const char *prefetch) {
    char ds[64];
    snprintf(ds, sizeof ds, "(%s)", shape);
    int color = shape[0] == '3';
    const char *k[] = {"path_imgrec",     "data_shape",  "batch_size", "preprocess_threads",
                       "rand_crop",       "rand_mirror", "mean_r",     "mean_g",
                       "mean_b",          "std_r",       "std_g",      "std_b",
                       "prefetch_buffer", "round_batch", "verbose"};
    const char *v[] = {rec,
                       ds,
                       "128",
                       threads,
                       aug[0] == '1' ? "True" : "False",
                       aug[0] == '1' ? "True" : "False",
                       "123.68",
                       color ? "116.779" : "0",
                       color ? "103.939" : "0",
                       "58.393",
                       color ? "57.12" : "1",
                       color ? "57.375" : "1",
                       prefetch,
                       "False",
                       "False"};
    mxk_data_iter *it = NULL;
    ok(mxk_data_iter_create("ImageRecordIter", 15, k, v, &it), "ImageRecordIter");
    double secs = 0;
    long long images = time_epochs(it, &secs);
    mxk_data_iter_free(it);
    report("iter", atoi(threads), images, secs);
}

/** `decode` mode. */
static void run_decode(const char *rec, uint32_t channels) {
    mxk_recordio *h = NULL;
    ok(mxk_recordio_open(rec, "r", &h), rec);
    img_codec *cx = img_codec_new();
    long long images = 0;
    double secs = 0;
    for (;;) {
        const void *buf = NULL;
        size_t len = 0;
        ok(mxk_recordio_read(h, &buf, &len), "read");
        if (buf == NULL)
            break;
        mxk_irheader hd;
        const void *labels = NULL;
        const void *payload = NULL;
        size_t plen = 0;
        ok(mxk_recordio_unpack(buf, len, &hd, &labels, &payload, &plen), "unpack");
        char msg[512];
        img_image im = {0};
        double t0 = now_s();
        if (img_decode(cx, payload, plen, channels, 0, 0, &im, msg, sizeof msg) != 0) {
            fprintf(stderr, "bench_imagerec: record %lld: %s\n", images, msg);
            exit(1);
        }
        secs += now_s() - t0;
        img_free(&im);
        images++;
    }
    img_codec_free(cx);
    mxk_recordio_close(h);
    report("decode", 1, images, secs);
}

/** `mnist` mode. */
static void run_mnist(const char *images, const char *labels) {
    const char *k[] = {"image", "label", "batch_size", "shuffle", "silent"};
    const char *v[] = {images, labels, "128", "False", "True"};
    mxk_data_iter *it = NULL;
    ok(mxk_data_iter_create("MNISTIter", 5, k, v, &it), "MNISTIter");
    double secs = 0;
    long long n = time_epochs(it, &secs);
    mxk_data_iter_free(it);
    report("mnist", 1, n, secs);
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "decode") != 0)
        ok(mxk_init(NULL), "init"); /* the config dir's plugins: io-recordio */
    if (argc >= 6 && strcmp(argv[1], "iter") == 0)
        run_iter(argv[2], argv[3], argv[4], argv[5], argc > 6 ? argv[6] : "4");
    else if (argc == 4 && strcmp(argv[1], "decode") == 0)
        run_decode(argv[2], (uint32_t)atoi(argv[3]));
    else if (argc == 4 && strcmp(argv[1], "mnist") == 0)
        run_mnist(argv[2], argv[3]);
    else {
        fprintf(stderr, "usage: bench_imagerec iter REC C,H,W THREADS AUG [PREFETCH] | "
                        "decode REC C | mnist IMAGES LABELS\n");
        return 2;
    }
    return 0;
}
