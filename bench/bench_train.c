/*
 * Training and inference throughput of the reference networks on Fashion-MNIST
 * through mxk_train (the Module over MNISTIter), for comparison with the peers'
 * train.py that bench_train.sh and bench_onednn.sh run beside it (PEER_DIR):
 * `bench_train mlp|lenet|resnet20 [epochs] [data_dir]
 * [num_examples]` (resnet20: mxkt_net_create's resnet with 20 layers on 1x28x28, batch
 * 128, as the peers; num_examples: the first N shuffled examples per epoch, for
 * short timed runs; the backend comes from the preference, e.g. MXK_BACKEND).
 * Prints one JSON line: per-epoch training samples/s (timed fit loop, data
 * streamed by MNISTIter's prefetch thread), test accuracy, inference samples/s at
 * the training batch (median of 3 passes over the test set) and peak RSS (getrusage).
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
static mxkt_iter *open_set(const char *dir, int train, int flat, const char *batch,
                           const char *num_examples) {
    char img[1024], lbl[1024];
    snprintf(img, sizeof img, "%s/%s-images-idx3-ubyte.gz", dir, train ? "train" : "t10k");
    snprintf(lbl, sizeof lbl, "%s/%s-labels-idx1-ubyte.gz", dir, train ? "train" : "t10k");
    const char *k[] = {"image", "label", "batch_size", "shuffle",
                       "flat",  "seed",  "silent",     "num_examples"};
    const char *v[] = {img,
                       lbl,
                       batch,
                       train ? "True" : "False",
                       flat ? "True" : "False",
                       "0",
                       "True",
                       train ? num_examples : "0"};
    mxk_data_iter *it = NULL;
    mxkt_iter *w = NULL;
    if (mxk_data_iter_create("MNISTIter", 8, k, v, &it) != MXK_OK ||
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
    const char *num_examples = argc > 4 ? argv[4] : "0";
    int lenet = strcmp(net, "lenet") == 0, resnet = strcmp(net, "resnet20") == 0;
    ok(mxk_init(NULL), "init");
    mxkt_net_config nc;
    mxkt_net_config_default(&nc, resnet ? "resnet" : net);
    nc.num_layers = resnet ? 20 : 0;
    mxk_symbol *sym = NULL;
    ok(mxkt_net_create(&nc, &sym), "network");
    const char *batch = resnet ? "128" : "100";
    int flat = !lenet && !resnet;
    mxkt_iter *train = open_set(dir, 1, flat, batch, num_examples);
    mxkt_iter *test = open_set(dir, 0, flat, batch, "0");
    mxk_context cpu = {MXK_DEV_CPU, 0};
    mxkt_module *m = NULL;
    ok(mxkt_module_create(sym, "data", "softmax_label", &cpu, 1, &m), "module");
    ok(mxkt_module_bind(m, &train->data_shape, &train->label_shape, 1), "bind");
    mxkt_initializer init;
    mxkt_initializer_parse(resnet ? "xavier(gaussian, in, 2)" : "xavier", 0, &init);
    ok(mxkt_module_init_params(m, &init, 0, NULL, NULL, 0, 0), "init_params");
    mxkt_optimizer opt;
    mxkt_optimizer_sgd(&opt, lenet ? 0.05 : 0.1, 0.9, lenet ? 0.0 : 1e-4); /* the peers' */
    ok(mxkt_module_init_optimizer(m, "local", &opt, 0), "init_optimizer");
    printf("{\"model\": \"%s\", \"backend\": \"%s\", \"threads\": %d, \"epochs\": [", net,
           mxk_get_backend_preference(), mxk_get_num_threads());
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
    /* inference at the training batch: forward only (is_train 0) over the test set, whose
     * last partial batch MNISTIter drops */
    double samples = (double)(10000 / atoi(batch) * atoi(batch));
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
    printf("], \"infer_sps_bs%s\": %.1f, \"ru_maxrss_MiB\": %.1f}\n", batch, samples / med,
           (double)ru.ru_maxrss / 1024.0);
    mxkt_module_free(m);
    mxkt_iter_free(train);
    mxkt_iter_free(test);
    mxk_symbol_free(sym);
    mxk_shutdown();
    return 0;
}
