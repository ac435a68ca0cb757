/*
 * Memory of bucketing (python/mxnet/module/bucketing_module.py): a word-level LSTM
 * language model (example/rnn/bucketing/lstm_bucketing.py's defaults: 2 layers of
 * 200, embedding 200, batch 32; buckets 4,8,12,16,20 as the lines of the fortunes
 * corpus hold 1 to 19 words) trained for one epoch on a
 * BucketingModule, beside the same model bound only for the largest bucket (every
 * sentence padded to 20). Each runs in its own process; the figure is the CPU
 * storage pool's peak bytes in use (mxk_storage_get_stats: parameters, gradients,
 * optimizer states, executors' memory), and their ratio.
 *   bench_bucketing TEXT   (MXK_CONFIG_DIR: the config dir with cpu-blas)
 * Prints one JSON line per mode, then {"ratio": peak(buckets) / peak(largest)}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mxk_rnn.h"
#include "mxk_train.h"

/** Exits with the last error when `st` failed. */
static void ok(mxk_status st, const char *what) {
    if (st != MXK_OK) {
        fprintf(stderr, "bench_bucketing: %s: %s\n", what, mxkt_last_error());
        exit(1);
    }
}

/** One epoch with the given buckets; prints {"buckets", "batches", "peak_bytes", "seconds"}. */
static void run(const char *path, const int64_t *buckets, uint32_t nb) {
    ok(mxk_init(NULL), "init");
    char *text = NULL;
    uint64_t len = 0;
    ok(mxk_file_read(path, "text file", 1u << 30, &text, &len), "read");
    mxkt_tokens tok;
    mxkt_encoded enc;
    mxkt_vocab *vocab = NULL;
    ok(mxkt_tokenize_words(text, len, &tok), "tokenize");
    ok(mxkt_encode_sentences(&tok, &vocab, 0, "\n", 1, &enc), "encode");
    mxkt_bucket_iter_options o = {
        .batch_size = 32, .buckets = buckets, .num_buckets = nb, .shuffle = 1, .seed = 1};
    mxkt_iter *it = NULL;
    ok(mxkt_bucket_sentence_iter_create(&enc, &o, NULL, &it), "iterator");
    mxkt_rnn_lm_config c = {.mode = "lstm",
                            .num_layers = 2,
                            .num_hidden = 200,
                            .num_embed = 200,
                            .vocab_size = (int32_t)mxkt_vocab_size(vocab) + 1,
                            .level = "word"};
    mxk_context cpu = {MXK_DEV_CPU, 0};
    mxkt_module *m = NULL;
    ok(mxkt_bucketing_module_create(mxkt_rnn_lm_sym_gen, &c, it->default_bucket_key, "data",
                                    "softmax_label", &cpu, 1, &m),
       "module");
    ok(mxkt_module_bind(m, &it->data_shape, &it->label_shape, 1), "bind");
    mxkt_initializer init;
    ok(mxkt_initializer_parse("xavier(factor_type=\"in\", magnitude=2.34)", 1, &init), "init");
    ok(mxkt_module_init_params(m, &init, 0, NULL, NULL, 0, 0), "init_params");
    mxkt_optimizer sgd;
    mxkt_optimizer_sgd(&sgd, 0.01, 0.0, 1e-5);
    ok(mxkt_module_init_optimizer(m, "local", &sgd, 0), "init_optimizer");
    mxkt_metric ppl;
    ok(mxkt_metric_create("perplexity", 0, &ppl), "metric");
    ppl.has_ignore = 1; /* Perplexity(invalid_label) */
    mxkt_fit_options fo = {.num_epoch = 1, .metrics = &ppl, .num_metrics = 1};
    FILE *null = fopen("/dev/null", "w");
    fo.log = null;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ok(mxkt_module_fit(m, it, NULL, &fo), "fit");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    mxk_storage_stats s;
    ok(mxk_storage_get_stats(cpu, &s), "stats");
    printf("{\"buckets\": %u, \"bound\": %u, \"batches\": %lld, \"peak_bytes\": %llu, "
           "\"seconds\": %.2f, \"perplexity\": %.3f}\n",
           nb, mxkt_module_num_buckets(m), (long long)it->num_batches,
           (unsigned long long)s.peak_in_use,
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
           fo.last_train[0]);
    fflush(stdout);
    fclose(null);
    mxkt_module_free(m);
    mxkt_iter_free(it);
    mxkt_encoded_free(&enc);
    mxkt_tokens_free(&tok);
    mxkt_vocab_free(vocab);
    mxk_free(text);
    mxk_shutdown();
}

/** Runs one mode in a child process; returns its peak (read back through a pipe). */
static unsigned long long child(const char *path, const int64_t *buckets, uint32_t nb) {
    int fd[2];
    if (pipe(fd) != 0)
        exit(1);
    fflush(stdout); /* the child must not inherit (and repeat) buffered lines */
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], STDOUT_FILENO);
        run(path, buckets, nb);
        exit(0);
    }
    close(fd[1]);
    char line[512] = "";
    FILE *f = fdopen(fd[0], "r");
    if (f == NULL || fgets(line, sizeof line, f) == NULL)
        line[0] = '\0';
    if (f)
        fclose(f);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || line[0] == '\0')
        exit(1);
    fputs(line, stdout);
    const char *p = strstr(line, "\"peak_bytes\": ");
    return p ? strtoull(p + 14, NULL, 10) : 0;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: bench_bucketing TEXT\n");
        return 2;
    }
    static const int64_t five[] = {4, 8, 12, 16, 20}, largest[] = {20};
    unsigned long long a = child(argv[1], five, 5), b = child(argv[1], largest, 1);
    printf("{\"ratio\": %.3f}\n", b ? (double)a / (double)b : 0.0);
    return 0;
}
