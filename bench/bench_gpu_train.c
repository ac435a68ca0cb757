/*
 * Training throughput on gpu(0) with synthetic data, through mxk_train's Module
 * (bind, init_params, init_optimizer, forward_backward + update per batch), as
 * MXNet's example/image-classification/benchmark_score.py and train_imagenet.py
 * --benchmark 1 (synthetic data, fit on mx.gpu(0)) measure it.
 *
 *   bench_gpu_train NETWORK [BATCH] [ITERS] [C,H,W] [NUM_LAYERS] [CLASSES]
 *
 * NETWORK is one of mxkt_net_names() (resnet with NUM_LAYERS 50 on 3,224,224 and
 * 1000 classes is ResNet-50). The data (uniform [0, 1)) and labels are built once
 * on the host and copied into the executors each batch, as a host iterator's
 * batches are. 5 warm-up batches (cuDNN algorithm choice, memory pools), then
 * ITERS timed batches ended by mxk_wait_all. Prints one JSON line: device name,
 * network, batch, samples/s, ms per batch. Without a GPU prints "SKIP: no GPU"
 * and exits 0. Environment: the cuda plugin's (MXK_CUDNN_AUTOTUNE, MXK_CUDA_TF32,
 * MXK_CUDNN_WORKSPACE_MB).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mxk_train.h"

/** Warm-up batches before timing. */
#define WARMUP 5

/** Monotonic seconds. */
static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/** Prints the failing step with the library's message and returns 1. */
static int fail(const char *what) {
    fprintf(stderr, "bench_gpu_train: %s: %s\n", what, mxkt_last_error());
    return 1;
}

/** A host array of `shape` filled by value(i) for element i (labels or pixels). */
static mxk_ndarray *host_array(const mxk_shape *shape, int classes) {
    uint64_t n = 1;
    for (int32_t d = 0; d < shape->ndim; d++)
        n *= (uint64_t)shape->dims[d];
    float *v = malloc(n * sizeof *v);
    mxk_ndarray *a = NULL;
    if (v == NULL)
        return NULL;
    uint64_t s = 0x9E3779B97F4A7C15ull;
    for (uint64_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        double u = (double)(s >> 11) * 0x1.0p-53;
        v[i] = classes > 0 ? (float)(int)(u * classes) : (float)u;
    }
    mxk_context cpu = {MXK_DEV_CPU, 0};
    if (mxk_ndarray_create(shape, MXK_FLOAT32, cpu, &a) != MXK_OK ||
        mxk_ndarray_copy_from_host(a, v, n * sizeof *v) != MXK_OK) {
        mxk_ndarray_free(a);
        a = NULL;
    }
    free(v);
    return a;
}

/** Entry point: see the file comment. */
int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: bench_gpu_train NETWORK [BATCH] [ITERS] [C,H,W] [NUM_LAYERS] "
                        "[CLASSES]\n");
        return 2;
    }
    int batch = argc > 2 ? atoi(argv[2]) : 64, iters = argc > 3 ? atoi(argv[3]) : 50;
    mxkt_net_config cfg;
    mxkt_net_config_default(&cfg, argv[1]);
    long long c = 1, h = 28, w = 28;
    if (argc > 4 && sscanf(argv[4], "%lld,%lld,%lld", &c, &h, &w) != 3) {
        fprintf(stderr, "bench_gpu_train: bad C,H,W '%s'\n", argv[4]);
        return 2;
    }
    cfg.image_shape[0] = c;
    cfg.image_shape[1] = h;
    cfg.image_shape[2] = w;
    cfg.num_layers = argc > 5 ? atoi(argv[5]) : 0;
    cfg.num_classes = argc > 6 ? atoi(argv[6]) : 10;
    if (batch < 1 || iters < 1) {
        fprintf(stderr, "bench_gpu_train: BATCH and ITERS must be positive\n");
        return 2;
    }
    mxk_init_options o = {.struct_size = sizeof o};
    if (mxk_init(&o) != MXK_OK)
        return fail("mxk_init");
    mxk_context gpu = {MXK_DEV_GPU, 0};
    mxk_device_props props = {.struct_size = sizeof props};
    if (mxk_device_count(MXK_DEV_GPU) == 0 || mxk_device_properties(gpu, &props) != MXK_OK) {
        printf("SKIP: no GPU (mxk_device_count(gpu) == 0)\n");
        mxk_shutdown();
        return 0;
    }
    mxk_symbol *sym = NULL;
    mxkt_module *m = NULL;
    int rc = 0;
    mxk_shape ds = {.ndim = 4, .dims = {batch, c, h, w}};
    mxk_shape ls = {.ndim = 1, .dims = {batch}};
    if (strcmp(argv[1], "mlp") == 0) {
        ds.ndim = 2;
        ds.dims[1] = c * h * w;
    }
    mxk_ndarray *data = host_array(&ds, 0), *label = host_array(&ls, cfg.num_classes);
    mxkt_initializer init;
    mxkt_optimizer opt;
    mxkt_optimizer_sgd(&opt, 0.01, 0.9, 1e-4);
    if (data == NULL || label == NULL)
        rc = fail("synthetic batch");
    else if (mxkt_net_create(&cfg, &sym) != MXK_OK)
        rc = fail("network");
    else if (mxkt_module_create(sym, "data", "softmax_label", &gpu, 1, &m) != MXK_OK ||
             mxkt_module_bind(m, &ds, &ls, 1) != MXK_OK ||
             mxkt_initializer_parse("xavier", 0, &init) != MXK_OK ||
             mxkt_module_init_params(m, &init, 0, NULL, NULL, 0, 0) != MXK_OK ||
             mxkt_module_init_optimizer(m, "local", &opt, 0) != MXK_OK)
        rc = fail("module");
    double t0 = 0;
    for (int i = 0; rc == 0 && i < WARMUP + iters; i++) {
        if (i == WARMUP) {
            if (mxk_wait_all() != MXK_OK) {
                rc = fail("warm-up");
                break;
            }
            t0 = now_s();
        }
        if (mxkt_module_forward_backward(m, data, label) != MXK_OK ||
            mxkt_module_update(m) != MXK_OK)
            rc = fail("batch");
    }
    if (rc == 0 && mxk_wait_all() != MXK_OK)
        rc = fail("training");
    if (rc == 0) {
        double dt = now_s() - t0;
        printf("{\"bench\": \"gpu_train\", \"device\": \"%s\", \"network\": \"%s\", "
               "\"num_layers\": %d, \"image_shape\": \"%lld,%lld,%lld\", \"batch\": %d, "
               "\"iters\": %d, \"samples_per_sec\": %.1f, \"ms_per_batch\": %.3f}\n",
               props.name, argv[1], (int)cfg.num_layers, c, h, w, batch, iters,
               (double)batch * iters / dt, 1e3 * dt / iters);
    }
    mxkt_module_free(m);
    mxk_symbol_free(sym);
    mxk_ndarray_free(data);
    mxk_ndarray_free(label);
    mxk_shutdown();
    return rc;
}
