/*
 * Training and inference throughput of the reference networks on Fashion-MNIST
 * through mxk_train (the Module over MNISTIter), beside the PyTorch peer
 * (../shared/peers/train.py): `bench_train mlp|lenet [epochs] [data_dir]`.
 * Prints one JSON line: per-epoch training samples/s (timed fit loop, data
 * streamed by MNISTIter's prefetch thread), test accuracy, inference samples/s at
 * batch 100 (median of 3 passes over the test set) and peak RSS (getrusage).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "mxk_train.h"

/** Monotonic seconds. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/** MNISTIter over the train or test set as an mxkt_iter. */
static mxkt_iter *open_set(const char *dir, int train, int flat) {
    char img[1024], lbl[1024];
    snprintf(img, sizeof img, "%s/%s-images-idx3-ubyte.gz", dir, train ? "train" : "t10k");
    snprintf(lbl, sizeof lbl, "%s/%s-labels-idx1-ubyte.gz", dir, train ? "train" : "t10k");
    const char *k[] = {"image", "label", "batch_size", "shuffle", "flat", "seed", "silent"};
    const char *v[] = {img, lbl,   "100", train ? "True" : "False", flat ? "True" : "False",
                       "0", "True"};
    mxk_data_iter *it = NULL;
    mxkt_iter *w = NULL;
    if (mxk_data_iter_create("MNISTIter", 7, k, v, &it) != MXK_OK ||
        mxkt_kernel_iter_wrap(it, &w) != MXK_OK) {
        fprintf(stderr, "bench_train: %s\n", mxkt_last_error());
        exit(1);
    }
    return w;
}

/** Exits with the library's message when st failed. */
static void ok(mxk_status st, const char *what) {
    if (st != MXK_OK) {
        fprintf(stderr, "bench_train: %s: %s\n", what, mxkt_last_error());
        exit(1);
    }
}

int main(int argc, char **argv) {
    const char *net = argc > 1 ? argv[1] : "mlp";
    int epochs = argc > 2 ? atoi(argv[2]) : 1;
    const char *dir = argc > 3 ? argv[3] : "/usr/share/datasets/fashion-mnist";
    int lenet = strcmp(net, "lenet") == 0;
    ok(mxk_init(NULL), "init");
    mxk_symbol *sym = NULL;
    ok(lenet ? mxkt_net_lenet(&sym) : mxkt_net_mlp(&sym), "network");
    mxkt_iter *train = open_set(dir, 1, !lenet), *test = open_set(dir, 0, !lenet);
    mxk_context cpu = {MXK_DEV_CPU, 0};
    mxkt_module *m = NULL;
    ok(mxkt_module_create(sym, "data", "softmax_label", &cpu, 1, &m), "module");
    ok(mxkt_module_bind(m, &train->data_shape, &train->label_shape, 1), "bind");
    mxkt_initializer init;
    mxkt_initializer_parse("xavier", 0, &init);
    ok(mxkt_module_init_params(m, &init, 0, NULL, NULL, 0, 0), "init_params");
    mxkt_optimizer opt;
    mxkt_optimizer_sgd(&opt, lenet ? 0.05 : 0.1, 0.9, 1e-5);
    ok(mxkt_module_init_optimizer(m, "local", &opt, 0), "init_optimizer");
    printf("{\"model\": \"%s\", \"threads\": %d, \"epochs\": [", net, mxk_get_num_threads());
    mxkt_metric acc;
    mxkt_metric_create("acc", 0, &acc);
    for (int e = 0; e < epochs; e++) {
        mxkt_fit_options fo;
        memset(&fo, 0, sizeof fo);
        fo.begin_epoch = e;
        fo.num_epoch = e + 1;
        fo.log = fopen("/dev/null", "w");
        ok(mxkt_module_fit(m, train, NULL, &fo), "fit");
        fclose(fo.log);
        ok(mxkt_module_score(m, test, &acc, 1), "score");
        printf("%s{\"epoch\": %d, \"train_s\": %.4f, \"train_sps\": %.1f, \"test_acc\": %.4f}",
               e ? ", " : "", e + 1, fo.last_seconds, fo.last_speed, mxkt_metric_get(&acc));
    }
    /* inference at batch 100: forward only (is_train 0) over the test set */
    double t[3];
    for (int r = 0; r < 3; r++) {
        double t0 = now_s();
        ok(mxkt_module_score(m, test, &acc, 1), "score");
        t[r] = now_s() - t0;
    }
    double a = t[0], b = t[1], c = t[2];
    double med = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("], \"infer_sps_bs100\": %.1f, \"ru_maxrss_MiB\": %.1f}\n", 10000.0 / med,
           (double)ru.ru_maxrss / 1024.0);
    mxkt_module_free(m);
    mxkt_iter_free(train);
    mxkt_iter_free(test);
    mxk_symbol_free(sym);
    mxk_shutdown();
    return 0;
}
