/*
 * `mxk train`, `mxk score`, `mxk predict`: the reference trainer on Fashion-MNIST
 * with the flags of MXNet's example/image-classification scripts (common/fit.py,
 * train_mnist.py), on the Module of mxk_train (train/include/mxk_train.h).
 *
 *   mxk train [--network mlp|lenet | --symbol FILE] [--num-epochs 10] ...
 *   mxk score --model-prefix P --load-epoch N [--data-dir D] [--batch-size B]
 *   mxk predict --model-prefix P --load-epoch N [--output FILE]
 *
 * Logs go to stderr as MXNet's logging writes them, with a header and a summary
 * line around `mxk train`'s; a progress bar is drawn on stderr only when stderr is
 * a terminal (train_progress.c); --json puts machine-readable objects on stdout.
 * Every option is checked before any data is read or anything trained.
 *
 * With a dist --kv-store (train_dist.h, docs/distributed.md) each worker trains on
 * its part of the training set, and only rank 0 logs, saves checkpoints and
 * appends to the metrics log, as upstream's common/fit.py.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "train_dist.h"
#include "train_opts.h"
#include "train_progress.h"
#include "train_rec.h"
#include "train_text.h"

/** Creates the directory part of a checkpoint prefix (fit.py _save_model's makedirs). */
static int make_prefix_dir(const char *prefix) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", prefix);
    char *slash = strrchr(dir, '/');
    if (slash == NULL || slash == dir)
        return CLI_OK;
    *slash = '\0';
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            if (mkdir(dir, 0777) != 0 && errno != EEXIST)
                return cli_error("cannot create '%s': %s", dir, strerror(errno));
            *p = '/';
        }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        return cli_error("cannot create '%s': %s", dir, strerror(errno));
    return CLI_OK;
}

/** The longest checkpoint suffix: "-NNNNNNN.states" (--num-epochs is at most 1000000). */
#define LONGEST_CKPT_SUFFIX "-1000000.states"

/**
 * Refuses output paths that cannot be written, before any work: an empty
 * --model-prefix or one whose checkpoint file names would not fit in PATH_MAX
 * (they would be cut short, and the cut names could coincide), and a --output
 * that is empty or that mxk_file_check_target refuses (a device node, a FIFO or a
 * directory at the path, a missing directory). Returns CLI_OK, CLI_USAGE or
 * CLI_ERROR.
 */
static int check_output_paths(const cli_command *cmd, const char *model_prefix,
                              const char *output) {
    size_t max = PATH_MAX - 1 - strlen(LONGEST_CKPT_SUFFIX);
    if (model_prefix && model_prefix[0] == '\0')
        return cli_usage_error(cmd, "--model-prefix must not be empty");
    if (model_prefix && strlen(model_prefix) > max)
        return cli_usage_error(cmd,
                               "--model-prefix is %zu bytes long; a checkpoint file name must "
                               "fit in %d bytes, so at most %zu",
                               strlen(model_prefix), PATH_MAX - 1, max);
    if (output && output[0] == '\0')
        return cli_usage_error(cmd, "--output must not be empty");
    if (output && mxk_file_check_target(output) != MXK_OK)
        return cli_error("--output: %s", mxk_get_last_error());
    return CLI_OK;
}

/** Options of the three commands. */
typedef struct train_args {
    const cli_command *cmd;
    const char *network, *symbol_file, *optimizer, *initializer, *kv_store, *ctx;
    const char *model_prefix, *data_dir, *metrics_log, *lr_step_epochs, *output, *metrics;
    int64_t num_epochs, batch_size, load_epoch, disp_batches, num_examples, save_period;
    mxkt_net_config net; /**< --network's builder arguments (--num-layers, --image-shape, ...) */
    uint64_t seed;
    double lr, lr_factor, mom, wd;
    double clip_gradient; /**< --clip-gradient (NAN: the network's default) */
    const char *gc_type;  /**< --gc-type: none or 2bit (fit.py's gradient compression) */
    double gc_threshold;  /**< --gc-threshold */
    int lr_set;
    int no_progress; /**< --no-progress */
    /* parsed by parse_args, so that a bad list is reported before any data is read */
    mxkt_metric metric[CLI_MAX_METRICS]; /**< --metrics */
    uint32_t num_metrics;
    int64_t step_epochs[MXKT_MAX_STEPS]; /**< --lr-step-epochs, else default_step_epochs */
    int32_t num_step_epochs;
    mxk_context contexts[MXKT_MAX_CTX]; /**< --ctx */
    uint32_t num_contexts;
    mxkt_initializer init; /**< --initializer with --seed */
    train_rec_args rec;    /**< --data-train X.rec and its augmentation flags (train only) */
    train_text_args text;  /**< --network char-lstm's options (train only) */
} train_args;

/**
 * The default --lr-step-epochs: the epochs nearest 60% and 90% of the run (num_epochs),
 * those inside it (after epoch 0, before the last): "6,9" for 10 epochs, "2" for 3,
 * "" for 1. Written into buf.
 */
static void default_step_epochs(int64_t num_epochs, char *buf, size_t size) {
    int64_t a = (6 * num_epochs + 5) / 10, b = (9 * num_epochs + 5) / 10;
    buf[0] = '\0';
    if (a > 0 && a < num_epochs)
        snprintf(buf, size, "%lld", (long long)a);
    if (b > a && b > 0 && b < num_epochs)
        snprintf(buf + strlen(buf), size - strlen(buf), "%s%lld", buf[0] ? "," : "", (long long)b);
}

/** 1 when --network names a text network (train_text.h) and no --symbol replaces it. */
static int is_text(const train_args *a) {
    return !a->symbol_file && train_text_network(a->network);
}

static void network_defaults(train_args *a, int text);

/** Parses the options shared by the commands. Returns CLI_OK or CLI_USAGE. */
static int parse_args(train_args *a, int argc, char **argv) {
    for (int i = 0; i < argc; i++) {
        const char *v = NULL;
        uint64_t u = 0;
        int r;
#define REAL_OPT(flag, field)                                                                      \
    if ((r = cli_option_value(argc, argv, &i, flag, &v)) != 0) {                                   \
        if (r < 0 || !cli_parse_real(v, &a->field))                                                \
            return cli_usage_error(a->cmd, "option '%s' needs a number", flag);                    \
        continue;                                                                                  \
    }
        if (strcmp(argv[i], "--") == 0)
            continue;
        if ((r = train_rec_option(&a->rec, a->cmd, a->cmd == &cli_cmd_train, argc, argv, &i))) {
            if (r < 0)
                return CLI_USAGE;
            continue;
        }
        if (a->cmd == &cli_cmd_train && (r = train_text_option(&a->text, a->cmd, argc, argv, &i))) {
            if (r < 0)
                return CLI_USAGE;
            continue;
        }
        CLI_STR_OPT(a->cmd, "--network", a->network)
        CLI_STR_OPT(a->cmd, "--symbol", a->symbol_file)
        CLI_STR_OPT(a->cmd, "--optimizer", a->optimizer)
        CLI_STR_OPT(a->cmd, "--initializer", a->initializer)
        CLI_STR_OPT(a->cmd, "--kv-store", a->kv_store)
        CLI_STR_OPT(a->cmd, "--ctx", a->ctx)
        CLI_STR_OPT(a->cmd, "--model-prefix", a->model_prefix)
        CLI_STR_OPT(a->cmd, "--data-dir", a->data_dir)
        CLI_STR_OPT(a->cmd, "--metrics-log", a->metrics_log)
        CLI_STR_OPT(a->cmd, "--lr-step-epochs", a->lr_step_epochs)
        CLI_STR_OPT(a->cmd, "--output", a->output)
        CLI_STR_OPT(a->cmd, "--metrics", a->metrics)
        CLI_UINT_OPT(a->cmd, "--num-epochs", a->num_epochs, CLI_MAX_EPOCHS)
        CLI_UINT_OPT(a->cmd, "--batch-size", a->batch_size, 1000000)
        CLI_UINT_OPT(a->cmd, "--load-epoch", a->load_epoch, 100000)
        CLI_UINT_OPT(a->cmd, "--disp-batches", a->disp_batches, 100000000)
        CLI_UINT_OPT(a->cmd, "--num-examples", a->num_examples, 1000000000)
        CLI_UINT_OPT(a->cmd, "--save-period", a->save_period, 100000)
        if ((r = cli_option_value(argc, argv, &i, "--image-shape", &v)) != 0) {
            if (r < 0 || !cli_parse_image_shape(v, a->net.image_shape))
                return cli_usage_error(a->cmd, "option '--image-shape' needs C,H,W (each 1 to %d)",
                                       CLI_MAX_IMAGE_DIM);
            continue;
        }
#define NET_OPT(flag, field, min)                                                                  \
    if ((r = cli_option_value(argc, argv, &i, flag, &v)) != 0) {                                   \
        if (r < 0 || !cli_parse_uint(v, MXKT_NET_MAX_DIM, &u) || u < (min))                        \
            return cli_usage_error(a->cmd, "option '%s' needs an integer from %d to %d", flag,     \
                                   (min), MXKT_NET_MAX_DIM);                                       \
        a->net.field = (int32_t)u;                                                                 \
        continue;                                                                                  \
    }
        NET_OPT("--num-layers", num_layers, 1)
        NET_OPT("--num-classes", num_classes, 1)
        NET_OPT("--num-group", num_group, 1)
        if ((r = cli_option_value(argc, argv, &i, "--multiplier", &v)) != 0) {
            if (r < 0 || !cli_parse_real(v, &a->net.multiplier) || a->net.multiplier <= 0)
                return cli_usage_error(a->cmd, "option '--multiplier' needs a positive number");
            continue;
        }
        if (strcmp(argv[i], "--batch-norm") == 0) {
            a->net.batch_norm = 1;
            continue;
        }
        if (strcmp(argv[i], "--no-progress") == 0) {
            a->no_progress = 1;
            continue;
        }
        if ((r = cli_option_value(argc, argv, &i, "--seed", &v)) != 0) {
            if (r < 0 || !cli_parse_uint(v, UINT64_MAX, &a->seed))
                return cli_usage_error(a->cmd, "option '--seed' needs an integer from 0 to %llu",
                                       (unsigned long long)UINT64_MAX);
            continue;
        }
        if ((r = cli_option_value(argc, argv, &i, "--lr", &v)) != 0) {
            if (r < 0 || !cli_parse_real(v, &a->lr) || a->lr <= 0)
                return cli_usage_error(a->cmd, "option '--lr' needs a positive number");
            a->lr_set = 1;
            continue;
        }
        REAL_OPT("--lr-factor", lr_factor)
        REAL_OPT("--mom", mom)
        REAL_OPT("--wd", wd)
        if (a->cmd == &cli_cmd_train) {
            CLI_STR_OPT(a->cmd, "--gc-type", a->gc_type)
            if ((r = cli_option_value(argc, argv, &i, "--gc-threshold", &v)) != 0) {
                if (r < 0 || !cli_parse_real(v, &a->gc_threshold) || !(a->gc_threshold > 0))
                    return cli_usage_error(a->cmd,
                                           "option '--gc-threshold' needs a positive number");
                continue;
            }
        }
        if ((r = cli_option_value(argc, argv, &i, "--clip-gradient", &v)) != 0) {
            if (r < 0 || !cli_parse_real(v, &a->clip_gradient) || a->clip_gradient <= 0)
                return cli_usage_error(a->cmd, "option '--clip-gradient' needs a positive number");
            continue;
        }
#undef REAL_OPT
#undef NET_OPT
        return cli_reject_argument(a->cmd, argv[i]);
    }
    int text = is_text(a);
    network_defaults(a, text);
    if (a->batch_size < 1)
        return cli_usage_error(a->cmd, "--batch-size must be at least 1");
    if (text && (a->num_examples > 0 || a->rec.data_train))
        return cli_usage_error(a->cmd, "--%s does not apply to --network char-lstm",
                               a->num_examples > 0 ? "num-examples" : "data-train");
    if (train_rec_check(&a->rec, a->cmd, a->cmd == &cli_cmd_train) != CLI_OK)
        return CLI_USAGE;
    if (a->cmd != &cli_cmd_train && a->rec.data_val && a->num_examples > 0)
        return cli_usage_error(a->cmd, "--num-examples does not apply to --data-val");
    if (a->num_epochs < 1)
        return cli_usage_error(a->cmd, "--num-epochs must be at least 1");
    /* the ranges in which the update rules of optimizer.py make sense: momentum
     * below 1 (1 or more never forgets a gradient and diverges), no negative decay */
    if (!(a->mom >= 0.0 && a->mom < 1.0))
        return cli_usage_error(a->cmd, "--mom must be in [0, 1), not %g", a->mom);
    if (!(a->wd >= 0.0))
        return cli_usage_error(a->cmd, "--wd must be at least 0, not %g", a->wd);
    if (strcmp(a->gc_type, "none") != 0 && strcmp(a->gc_type, "2bit") != 0)
        return cli_usage_error(a->cmd, "--gc-type must be none or 2bit, not '%s'", a->gc_type);
    if (strcmp(a->gc_type, "none") != 0 && strstr(a->kv_store, "dist") == NULL)
        return cli_usage_error(a->cmd,
                               "--gc-type %s needs a dist --kv-store (dist_sync, "
                               "dist_device_sync or dist_async under mpirun), not '%s': it "
                               "compresses what the workers send",
                               a->gc_type, a->kv_store);
    if (a->load_epoch >= 0 && a->model_prefix == NULL)
        return cli_usage_error(a->cmd, "--load-epoch needs --model-prefix");
    if (a->save_period < 1)
        return cli_usage_error(a->cmd, "--save-period must be at least 1");
    if (!cli_parse_ctx(a->ctx, a->contexts, &a->num_contexts))
        return cli_usage_error(a->cmd, "bad --ctx '%s' (e.g. cpu:0,cpu:1)", a->ctx);
    if (strcmp(a->optimizer, "sgd") != 0 && strcmp(a->optimizer, "adam") != 0)
        return cli_usage_error(a->cmd, "unknown optimizer '%s' (sgd, adam)", a->optimizer);
    if (mxkt_initializer_parse(a->initializer, a->seed, &a->init) != MXK_OK)
        return cli_usage_error(a->cmd, "%s", mxkt_last_error());
    char msg[512], steps[64];
    default_step_epochs(a->num_epochs, steps, sizeof steps);
    if (!cli_parse_metrics(a->metrics, a->metric, &a->num_metrics, msg, sizeof msg) ||
        !cli_parse_step_epochs(a->lr_step_epochs ? a->lr_step_epochs : steps, a->step_epochs,
                               &a->num_step_epochs, msg, sizeof msg))
        return cli_usage_error(a->cmd, "%s", msg);
    for (uint32_t k = 0; text && a->text.num_buckets && k < a->num_metrics; k++)
        if (a->metric[k].kind == MXKT_METRIC_PERPLEXITY) { /* Perplexity(invalid_label) */
            a->metric[k].has_ignore = 1;
            a->metric[k].ignore_label = 0;
        }
    return CLI_OK;
}

/**
 * Defaults of every option: MXNet.jl's MNIST examples' settings (julia/examples/
 * mnist/mlp.jl, lenet.jl) for the reference networks (batch
 * 100, SGD momentum 0.9, wd 1e-5, lr 0.1 MLP / 0.05 LeNet; 10 epochs), fit.py's
 * lr-factor 0.1 with steps that follow the run's length (default_step_epochs),
 * Xavier, and the local KVStore. MXNet's train_mnist.py differs (batch 64, wd
 * 1e-4, disp-batches 20, kv-store device, 20 epochs).
 */
static void defaults(train_args *a, const cli_command *cmd) {
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->network = "mlp";
    a->optimizer = NULL; /* network_defaults: sgd, char-lstm adam */
    a->initializer = "xavier";
    a->kv_store = "local";
    a->ctx = "cpu:0";
    a->data_dir = TRAIN_DEFAULT_DATA_DIR;
    a->metrics = NULL; /* network_defaults */
    a->num_epochs = 10;
    a->batch_size = -1; /* network_defaults */
    a->load_epoch = -1;
    a->disp_batches = 100;
    a->save_period = 1;
    a->lr_factor = NAN; /* network_defaults: fit.py's 0.1, stepping at --lr-step-epochs */
    a->clip_gradient = NAN;
    a->gc_type = "none";
    a->gc_threshold = 0.5;
    a->lr_step_epochs = NULL; /* default_step_epochs: 60% and 90% of --num-epochs */
    a->mom = 0.9;
    a->wd = 1e-5;
    mxkt_net_config_default(&a->net, a->network);
    train_rec_defaults(&a->rec);
    train_text_defaults(&a->text);
}

/**
 * The defaults that depend on the network, for the options not given: batch 100,
 * SGD, fit.py's lr factor 0.1, metric acc, no clipping; char-lstm the char-LSTM
 * tutorial's configuration (julia/examples/char-lstm/config.jl): batch 32, Adam
 * (lr 0.01 in make_optimizer), no lr steps, gradient clip 1, 2 layers, metrics NLL and
 * perplexity (--buckets: perplexity ignoring the padding label 0, as
 * lstm_bucketing.py).
 */
static void network_defaults(train_args *a, int text) {
    if (a->batch_size < 0)
        a->batch_size = text ? 32 : 100;
    if (a->optimizer == NULL)
        a->optimizer = text ? "adam" : "sgd";
    if (a->metrics == NULL)
        a->metrics = !text ? "acc" : a->text.num_buckets ? "perplexity" : "nll-loss,perplexity";
    if (isnan(a->lr_factor))
        a->lr_factor = text ? 1.0 : 0.1;
    if (isnan(a->clip_gradient))
        a->clip_gradient = text ? 1.0 : -1.0;
    if (text && a->net.num_layers == 0)
        a->net.num_layers = 2;
}

/** Builds (mxkt_net_create) or loads the network of the options. */
static int make_symbol(const train_args *a, mxk_symbol **sym) {
    if (a->symbol_file) {
        if (mxk_symbol_load(a->symbol_file, sym) != MXK_OK)
            return cli_error("%s", mxk_get_last_error());
        return CLI_OK;
    }
    mxkt_net_config net = a->net;
    net.network = a->network;
    mxk_status st = mxkt_net_create(&net, sym);
    if (st != MXK_OK) /* a bad --network, --num-layers, ... is a usage error */
        return st == MXK_ERR_INVALID_ARGUMENT ? cli_usage_error(a->cmd, "%s", mxkt_last_error())
                                              : cli_error("%s", mxkt_last_error());
    return CLI_OK;
}

/**
 * The optimizer of the options with fit.py's _get_lr_scheduler: the rate times
 * --lr-factor at each step epoch (none when the factor is <= 0 or >= 1). Steps are
 * update counts: (epoch - shift) * epoch_size for the epochs after `shift`, and the
 * starting rate already reduced for the steps at or before it ("Adjust learning
 * rate to ..." is logged), where shift is the resumed epoch when the update count
 * was not restored from a .states file, else 0.
 */
static int make_optimizer(const train_args *a, int64_t num_examples, int64_t shift,
                          mxkt_optimizer *opt) {
    int lenet = !a->symbol_file && strcmp(a->network, "lenet") == 0;
    int text = is_text(a);
    if (strcmp(a->optimizer, "sgd") == 0)
        mxkt_optimizer_sgd(opt, a->lr_set ? a->lr : lenet ? 0.05 : 0.1, a->mom, a->wd);
    else /* adam (parse_args refused the rest) */
        mxkt_optimizer_adam(opt, a->lr_set ? a->lr : text ? 0.01 : 0.001, a->wd);
    opt->clip_gradient = a->clip_gradient;
    const int64_t *epochs = a->step_epochs;
    int32_t ne = a->num_step_epochs, ns = 0;
    int64_t steps[MXKT_MAX_STEPS];
    if (a->lr_factor <= 0.0 || a->lr_factor >= 1.0 || ne == 0)
        return CLI_OK;
    /* updates per epoch: the last, padded batch counts too */
    int64_t epoch_size = (num_examples + a->batch_size - 1) / a->batch_size;
    double lr = opt->lr;
    for (int32_t k = 0; k < ne; k++) {
        if (epochs[k] <= shift)
            lr *= a->lr_factor;
        else
            steps[ns++] = (epochs[k] - shift) * epoch_size;
    }
    if (lr != opt->lr)
        fprintf(stderr, "Adjust learning rate to %e for epoch %lld\n", lr, (long long)shift);
    opt->lr = lr;
    if (ns > 0 && mxkt_lr_multifactor(&opt->sched, steps, ns, a->lr_factor, lr) != MXK_OK)
        return cli_usage_error(a->cmd, "%s", mxkt_last_error());
    return CLI_OK;
}

/** Creates and binds a module for the data iterator's shapes. */
static int make_module(const train_args *a, mxk_symbol *sym, mxkt_iter *it, int for_training,
                       mxkt_module **m) {
    mxk_status st =
        mxkt_module_create(sym, "data", "softmax_label", a->contexts, a->num_contexts, m);
    if (st == MXK_OK)
        st = mxkt_module_bind(*m, &it->data_shape, &it->label_shape, for_training);
    if (st != MXK_OK)
        return cli_error("%s", mxkt_last_error());
    return CLI_OK;
}

/**
 * 1 when the .states file at `path` is a Python pickle: MXNet's
 * Module.save_optimizer_states (python/mxnet/module/module.py) pickles its
 * optimizer's states, which mxk cannot read. Then a warning is printed and training
 * resumes without them, as when no .states file exists. 0 otherwise (mxk's own
 * NDArray-list format, or unreadable: mxkt_module_load_states reports that).
 */
static int mxnet_pickled_states(const char *path) {
    unsigned char head[2] = {0, 0};
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(head, 1, sizeof head, f) : 0;
    if (f != NULL)
        fclose(f);
    /* A pickle of protocol 2 or later starts with PROTO (0x80) and the protocol number. */
    if (got != sizeof head || head[0] != 0x80 || head[1] < 2 || head[1] > 5)
        return 0;
    fprintf(stderr,
            "warning: %s is a Python pickle (MXNet's optimizer states); mxk cannot read MXNet "
            "optimizer states: resuming without them\n",
            path);
    return 1;
}

/**
 * Refuses a --metrics-log that cannot be appended to, before any work: what
 * mxk_file_check_target refuses, a directory that cannot be written (the log is
 * rewritten through a temporary file there), an existing log that cannot be read.
 * Returns CLI_OK or CLI_ERROR ("--metrics-log: cannot write 'PATH': ...").
 */
static int check_metrics_log(const char *path) {
    if (mxk_file_check_target(path) != MXK_OK)
        return cli_error("--metrics-log: %s", mxk_get_last_error());
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else
        slash[slash == dir] = '\0'; /* "/m.jsonl": the root */
    if (access(dir, W_OK | X_OK) != 0)
        return cli_error("--metrics-log: cannot write '%s': %s", path, strerror(errno));
    if (access(path, F_OK) == 0 && access(path, R_OK) != 0)
        return cli_error("--metrics-log: cannot read '%s': %s", path, strerror(errno));
    return CLI_OK;
}

/**
 * Checks that the checkpoint of --load-epoch (train, score, predict) is there,
 * before anything is loaded or printed. Returns CLI_OK or CLI_ERROR ("--load-epoch N: cannot read
 * 'P-%04d.params': <strerror>").
 */
static int check_checkpoint(const char *prefix, int64_t epoch) {
    char path[4096];
    mxkt_checkpoint_name(path, sizeof path, prefix, (int32_t)epoch, "params");
    if (access(path, R_OK) != 0)
        return cli_error("--load-epoch %lld: cannot read '%s': %s", (long long)epoch, path,
                         strerror(errno));
    return CLI_OK;
}

/**
 * Refuses a --num-examples larger than the training (train != 0) or test set in
 * --data-dir, before the data is read ("--num-examples N is more than the M
 * examples of the training set in DIR"). A set whose size cannot be found passes
 * (opening it reports why). Returns CLI_OK or CLI_ERROR.
 */
static int check_num_examples(const train_args *a, int train) {
    int64_t all = train_count_examples(a->data_dir, train);
    if (a->num_examples > 0 && all > 0 && a->num_examples > all)
        return cli_error("--num-examples %lld is more than the %lld examples of the %s set in %s",
                         (long long)a->num_examples, (long long)all, train ? "training" : "test",
                         a->data_dir);
    return CLI_OK;
}

/** What fit's epoch callback adds up and prints. */
typedef struct epoch_sink {
    int json;          /**< --json: each epoch's JSON line on stdout */
    train_summary sum; /**< for the summary line */
} epoch_sink;

/** mxkt_epoch_cb: counts the epoch for the summary; with --json prints its line. */
static void on_epoch(int32_t epoch, const char *json, const mxkt_fit_options *o, void *user) {
    epoch_sink *s = user;
    if (s->sum.epochs++ == 0)
        s->sum.first_epoch = epoch;
    s->sum.train_seconds += o->last_seconds;
    s->sum.train_samples += o->last_speed * o->last_seconds;
    if (s->json) {
        printf("%s\n", json);
        fflush(stdout);
    }
}

/** 1 when the names of a .params file ("arg:X" or X) are exactly the parameters of `sym`. */
static int names_match(const mxk_symbol *sym, uint32_t n, char *const *names) {
    uint32_t nargs = 0, nparams = 0, matched = 0;
    char **args = NULL;
    if (mxk_symbol_list_names(sym, MXK_SYMBOL_ARGUMENTS, &nargs, &args) != MXK_OK)
        return 0;
    for (uint32_t i = 0; i < nargs; i++) {
        if (strcmp(args[i], "data") == 0 || strcmp(args[i], "softmax_label") == 0)
            continue;
        nparams++;
        for (uint32_t k = 0; k < n; k++)
            if (strcmp(strncmp(names[k], "arg:", 4) == 0 ? names[k] + 4 : names[k], args[i]) == 0)
                matched++;
    }
    mxk_string_list_free(args);
    return nparams == n && matched == n;
}

/**
 * The built-in network (mlp or lenet with their defaults) whose parameters are
 * exactly those of the checkpoint of --load-epoch, or NULL (none, or unreadable).
 */
static const char *builtin_network_of(const train_args *a) {
    static const char *const nets[] = {"mlp", "lenet"};
    char path[4096];
    mxkt_checkpoint_name(path, sizeof path, a->model_prefix, (int32_t)a->load_epoch, "params");
    uint32_t n = 0;
    mxk_ndarray **arrs = NULL;
    char **names = NULL;
    const char *found = NULL;
    if (mxk_ndarray_load(path, &n, &arrs, &names) != MXK_OK)
        return NULL;
    for (size_t k = 0; names && k < sizeof nets / sizeof nets[0] && !found; k++) {
        mxkt_net_config c;
        mxkt_net_config_default(&c, nets[k]);
        c.network = nets[k];
        mxk_symbol *sym = NULL;
        if (mxkt_net_create(&c, &sym) == MXK_OK && names_match(sym, n, names))
            found = nets[k];
        mxk_symbol_free(sym);
    }
    mxk_ndarray_list_free(n, arrs, names);
    return found;
}

/**
 * Loads the checkpoint a run resumes from (.params, and .states when `shift` is
 * 0) and logs "Loaded model". A checkpoint of another network is named with a
 * note on the network it was saved with. Returns CLI_OK or CLI_ERROR.
 */
static int resume(const train_args *a, mxkt_module *m, int64_t shift) {
    mxk_status st = mxkt_module_load_params(m, a->model_prefix, (int32_t)a->load_epoch);
    if (st == MXK_ERR_INVALID_ARGUMENT && strstr(mxkt_last_error(), "does not match the network")) {
        cli_error("%s", mxkt_last_error());
        const char *net = builtin_network_of(a);
        if (net != NULL)
            cli_note("the checkpoint holds the parameters of --network %s: resume with "
                     "--network %s",
                     net, net);
        else
            cli_note("the checkpoint was saved with the network of '%s-symbol.json': resume with "
                     "--symbol %s-symbol.json or with the --network it was trained with",
                     a->model_prefix, a->model_prefix);
        return CLI_ERROR;
    }
    if (st == MXK_OK && shift == 0)
        st = mxkt_module_load_states(m, a->model_prefix, (int32_t)a->load_epoch);
    if (st != MXK_OK)
        return cli_error("%s", mxkt_last_error());
    fprintf(stderr, "Loaded model %s-%04d.params\n", a->model_prefix, (int)a->load_epoch);
    return CLI_OK;
}

/**
 * Runs fit with the header, the progress bar, --json and the summary line (on
 * worker d's log: see train_dist_log), saving checkpoints when `saves`.
 */
static int run_fit(const cli_globals *g, const train_args *a, const train_dist *d, int saves,
                   mxkt_module *m, const mxk_symbol *sym, mxkt_iter *train, mxkt_iter *val,
                   int64_t all_train, int64_t all_val, const char *data_line) {
    train_progress bar;
    train_progress_open(&bar, !a->no_progress && d->rank == 0);
    mxkt_module_set_progress(m, train_progress_cb, &bar);
    FILE *log = train_dist_log(d, bar.log);
    train_header h = {.network = a->symbol_file ? a->symbol_file : a->network,
                      .sym = sym,
                      .data_shape = &train->data_shape,
                      .ctx = a->contexts,
                      .nctx = a->num_contexts,
                      .data_dir = a->data_dir,
                      .data_train = a->rec.data_train,
                      .data_val = a->rec.data_val,
                      .train_examples = a->num_examples > 0 ? a->num_examples : all_train,
                      .all_train = all_train,
                      .val_examples = all_val,
                      .data_line = data_line};
    train_print_header(log, &h);
    mxkt_fit_options fo;
    memset(&fo, 0, sizeof fo);
    epoch_sink sink = {.json = g->json && d->rank == 0};
    fo.begin_epoch = a->load_epoch > 0 ? (int32_t)a->load_epoch : 0;
    fo.num_epoch = (int32_t)a->num_epochs;
    fo.metrics = a->metric;
    fo.num_metrics = a->num_metrics;
    fo.disp_batches = (int32_t)a->disp_batches;
    fo.ckpt_prefix = saves ? a->model_prefix : NULL;
    fo.ckpt_period = (int32_t)a->save_period;
    fo.log = log;
    fo.metrics_log = a->metrics_log;
    fo.epoch_cb = on_epoch;
    fo.epoch_cb_user = &sink;
    double tic = train_now_s();
    mxk_status st = mxkt_module_fit(m, train, val, &fo);
    sink.sum.wall_seconds = train_now_s() - tic;
    train_progress_close(&bar);
    if (st != MXK_OK)
        return cli_error("%s", mxkt_last_error());
    fprintf(train_dist_log(d, stderr), "Trained on %lld examples per epoch, validated on %lld\n",
            (long long)fo.last_examples, (long long)fo.last_val_examples);
    train_print_summary(train_dist_log(d, stderr), &sink.sum, a->metric, a->num_metrics, &fo);
    return CLI_OK;
}

/**
 * Opens the training and validation iterators: ImageRecordIter over --data-train
 * and --data-val (none without it), else MNISTIter over --data-dir (flat when
 * the network takes (batch, 784)); *all_train and *all_val get the sets' sizes
 * (-1: unknown; 0: no validation). Worker d reads its part of the training set
 * (part d->rank of d->num_workers, as fit.py's (kv.rank, kv.num_workers)) and
 * --num-examples / num_workers examples of it (at least 1); the validation set is
 * not split. Returns CLI_OK or CLI_ERROR (reported).
 */
static int open_train_data(const train_args *a, const train_dist *d, const mxk_symbol *sym,
                           mxkt_iter **train, mxkt_iter **val, int64_t *all_train,
                           int64_t *all_val) {
    *all_val = 0;
    if (a->rec.data_train) {
        int rc = train_open_rec(&a->rec, 1, a->net.image_shape, a->batch_size, a->seed,
                                d->num_workers, d->rank, all_train, train);
        if (rc == CLI_OK && a->rec.data_val)
            rc = train_open_rec(&a->rec, 0, a->net.image_shape, a->batch_size, 0, 1, 0, all_val,
                                val);
        return rc;
    }
    int flat = train_symbol_is_flat(sym, a->batch_size);
    *all_train = train_count_examples(a->data_dir, 1);
    *all_val = train_count_examples(a->data_dir, 0);
    int64_t part = a->num_examples / d->num_workers;
    int64_t examples = a->num_examples > 0 ? (part > 0 ? part : 1) : 0;
    int rc = train_open_mnist(a->data_dir, 1, a->batch_size, flat, a->seed, examples,
                              d->num_workers, d->rank, train);
    if (rc == CLI_OK)
        rc = train_open_mnist(a->data_dir, 0, a->batch_size, flat, 0, 0, 1, 0, val);
    return rc;
}

/**
 * Trains as worker d (rank 0 of 1 without a dist store), saving checkpoints when
 * `saves`.
 */
static int train_run(const cli_globals *g, train_args *a, const train_dist *d, int saves) {
    mxk_symbol *sym = NULL;
    mxkt_iter *train = NULL, *val = NULL;
    mxkt_module *m = NULL;
    /* every option is checked before any work: devices, output paths, the checkpoint */
    int rc = cli_check_ctx(a->contexts, a->num_contexts);
    if (rc == CLI_OK)
        rc = check_output_paths(a->cmd, a->model_prefix, NULL);
    if (rc == CLI_OK && a->metrics_log)
        rc = check_metrics_log(a->metrics_log);
    if (rc == CLI_OK && a->load_epoch >= 0)
        rc = check_checkpoint(a->model_prefix, a->load_epoch);
    if (rc == CLI_OK && !a->rec.data_train)
        rc = check_num_examples(a, 1);
    if (rc == CLI_OK)
        rc = train_rec_check_files(&a->rec);
    if (rc != CLI_OK)
        return rc;
    if (a->load_epoch >= a->num_epochs) { /* fit.py: fit runs no epoch */
        fprintf(stderr,
                "Nothing to train: the checkpoint of --load-epoch %lld has epochs 0 to %lld done, "
                "and --num-epochs %lld stops after epoch %lld; pass --num-epochs %lld or more to "
                "train on\n",
                (long long)a->load_epoch, (long long)a->load_epoch - 1, (long long)a->num_epochs,
                (long long)a->num_epochs - 1, (long long)a->load_epoch + 1);
        return CLI_OK;
    }
    int text = is_text(a);
    train_text_data td;
    memset(&td, 0, sizeof td);
    int64_t all_train = 0, all_val = 0;
    char data_line[4400] = "";
    if (text) {
        mxk_random_seed(a->seed);
        rc = train_text_open(&a->text, a->batch_size, a->net.num_layers, a->seed,
                             a->load_epoch >= 0 ? a->model_prefix : NULL, &td);
        if (rc == CLI_OK)
            rc = train_text_module(&td, a->contexts, a->num_contexts, &sym, &m);
        train = td.train;
        val = td.val;
        all_train = td.train_seqs;
        all_val = td.val_seqs;
        snprintf(data_line, sizeof data_line,
                 "%s, %lld %ss (%s level), %lld training %s, %lld validation", td.source,
                 (long long)td.tokens, td.cfg.level, td.cfg.level, (long long)all_train,
                 a->text.num_buckets ? "sentences" : "sequences", (long long)all_val);
    } else {
        rc = make_symbol(a, &sym);
        if (rc != CLI_OK)
            return rc;
        mxk_random_seed(a->seed);
        rc = open_train_data(a, d, sym, &train, &val, &all_train, &all_val);
        if (rc == CLI_OK)
            rc = make_module(a, sym, train, 1, &m);
    }
    int64_t num_examples = text && train         ? train->num_batches * a->batch_size
                           : a->num_examples > 0 ? a->num_examples
                           : all_train > 0       ? all_train
                                                 : 60000;
    mxkt_optimizer opt;
    /* resuming without a .states file: the update count starts again at 0, so the
     * schedule is shifted by the epochs already done (fit.py's way) */
    int64_t shift = 0;
    if (rc == CLI_OK && a->load_epoch >= 0) {
        char path[4096];
        mxkt_checkpoint_name(path, sizeof path, a->model_prefix, (int32_t)a->load_epoch, "states");
        shift = access(path, R_OK) == 0 && !mxnet_pickled_states(path) ? 0 : a->load_epoch;
    }
    /* fit.py's epoch_size: the updates of one worker's epoch */
    if (rc == CLI_OK)
        rc = make_optimizer(a, num_examples / d->num_workers, shift, &opt);
    if (rc == CLI_OK) {
        mxk_status st = mxkt_module_init_params(m, &a->init, 0, NULL, NULL, 0, 0);
        if (st == MXK_OK)
            st = d->kv ? mxkt_module_init_optimizer_kv(m, d->kv, &opt, 0)
                       : mxkt_module_init_optimizer(m, a->kv_store, &opt, 0);
        if (st != MXK_OK)
            rc = cli_error("%s", mxkt_last_error());
    }
    if (rc == CLI_OK && a->load_epoch >= 0)
        rc = resume(a, m, shift);
    if (rc == CLI_OK && a->model_prefix && saves)
        rc = make_prefix_dir(a->model_prefix);
    if (rc == CLI_OK && text && a->model_prefix && saves &&
        mxkt_rnn_lm_save(a->model_prefix, &td.cfg, td.vocab) != MXK_OK)
        rc = cli_error("%s", mxkt_last_error());
    if (rc == CLI_OK)
        rc = run_fit(g, a, d, saves, m, sym, train, val, all_train, all_val,
                     text ? data_line : NULL);
    mxkt_module_free(m);
    if (text) {
        train_text_close(&td);
    } else {
        mxkt_iter_free(train);
        mxkt_iter_free(val);
    }
    mxk_symbol_free(sym);
    return rc;
}

/**
 * The body of `mxk train` (with the library initialised): opens the dist store of
 * --kv-store if any, puts the rank into a --model-prefix holding
 * TRAIN_DIST_RANK_TOKEN (then every rank saves; else only rank 0 does), keeps the
 * metrics log to rank 0, then trains. The text networks are refused with a dist
 * store (their data is not split, and bucketing would push different keys).
 */
static int train_body(const cli_globals *g, void *arg) {
    train_args *a = arg;
    train_dist d;
    char prefix[PATH_MAX];
    int saves = 1;
    int rc = train_dist_open(a->kv_store, &d);
    if (rc == CLI_OK && d.is_server) { /* dist_async's servers: no data, no network */
        rc = train_dist_serve(&d);
        train_dist_close(&d);
        return rc;
    }
    if (rc == CLI_OK && d.kv && strcmp(a->gc_type, "none") != 0 &&
        mxk_kvstore_set_gradient_compression(d.kv, a->gc_type, a->gc_threshold) != MXK_OK)
        rc = cli_error("--gc-type %s: %s", a->gc_type, mxk_get_last_error());
    if (rc == CLI_OK && d.kv && is_text(a))
        rc = cli_error("--kv-store %s: the text networks do not train distributed: every worker "
                       "would read the whole text, and the buckets would differ between workers",
                       a->kv_store);
    if (rc == CLI_OK && a->model_prefix) {
        int per_rank = train_dist_prefix(&d, a->model_prefix, prefix, sizeof prefix);
        rc = per_rank < 0 ? CLI_ERROR : CLI_OK;
        a->model_prefix = prefix;
        saves = per_rank > 0 || d.rank == 0;
    }
    if (d.rank != 0)
        a->metrics_log = NULL;
    if (rc == CLI_OK)
        rc = train_run(g, a, &d, saves);
    train_dist_close(&d);
    return rc;
}

/**
 * Loads prefix-symbol.json and prefix-%04d.params into a module bound for
 * inference, after checking the output paths and that the checkpoint is there,
 * and sets the progress bar `bar` on it.
 */
static int load_checkpoint(train_args *a, train_progress *bar, mxk_symbol **sym, mxkt_iter **it,
                           mxkt_module **m) {
    if (a->model_prefix == NULL || a->load_epoch < 0)
        return cli_usage_error(a->cmd, "--model-prefix and --load-epoch are required");
    int rc = check_output_paths(a->cmd, a->model_prefix, a->output);
    if (rc == CLI_OK)
        rc = check_checkpoint(a->model_prefix, a->load_epoch);
    char lm[4096];
    snprintf(lm, sizeof lm, "%s-lm.json", a->model_prefix);
    if (rc == CLI_OK && access(lm, F_OK) == 0) /* a model of `mxk train --network char-lstm` */
        return cli_error("%s: a recurrent language model: %s reads images, not text; its "
                         "validation NLL and perplexity are in mxk train's log (--metrics-log), "
                         "and `mxk sample` writes text with it",
                         lm, a->cmd->name);
    if (rc == CLI_OK && !a->rec.data_val)
        rc = check_num_examples(a, 0);
    if (rc == CLI_OK)
        rc = train_rec_check_files(&a->rec);
    if (rc != CLI_OK)
        return rc;
    if (mxkt_load_symbol(a->model_prefix, sym) != MXK_OK)
        return cli_error("%s", mxkt_last_error());
    if (a->rec.data_val) {
        int64_t n = 0;
        rc = train_open_rec(&a->rec, 0, a->net.image_shape, a->batch_size, 0, 1, 0, &n, it);
    } else {
        int flat = train_symbol_is_flat(*sym, a->batch_size);
        rc = train_open_mnist(a->data_dir, 0, a->batch_size, flat, 0, a->num_examples, 1, 0, it);
    }
    if (rc == CLI_OK)
        rc = make_module(a, *sym, *it, 0, m);
    if (rc == CLI_OK &&
        mxkt_module_load_params(*m, a->model_prefix, (int32_t)a->load_epoch) != MXK_OK)
        rc = cli_error("%s", mxkt_last_error());
    if (rc == CLI_OK) {
        train_progress_open(bar, !a->no_progress);
        mxkt_module_set_progress(*m, train_progress_cb, bar);
    }
    return rc;
}

/** The body of `mxk score`. */
static int score_body(const cli_globals *g, void *arg) {
    train_args *a = arg;
    mxk_symbol *sym = NULL;
    mxkt_iter *it = NULL;
    mxkt_module *m = NULL;
    mxkt_metric *ms = a->metric;
    uint32_t nm = a->num_metrics;
    train_progress bar = {.log = stderr};
    int rc = cli_check_ctx(a->contexts, a->num_contexts);
    if (rc == CLI_OK)
        rc = load_checkpoint(a, &bar, &sym, &it, &m);
    if (rc == CLI_OK && mxkt_module_score(m, it, ms, nm) != MXK_OK)
        rc = cli_error("%s", mxkt_last_error());
    train_progress_close(&bar);
    if (rc == CLI_OK) {
        int64_t n = mxkt_module_scored_examples(m);
        fprintf(stderr, "Scored %lld examples\n", (long long)n);
        if (g->json)
            rc = train_print_score_json(ms, nm, n);
        else
            for (uint32_t k = 0; k < nm; k++)
                printf("%s=%f\n", ms[k].name, mxkt_metric_get(&ms[k]));
    }
    mxkt_module_free(m);
    mxkt_iter_free(it);
    mxk_symbol_free(sym);
    return rc;
}

/** Saves predict's outputs (rows x width) to `path` as the NDArray "softmax_output". */
static int save_outputs(const char *path, const float *out, int64_t rows, int64_t width) {
    mxk_shape s = {.ndim = 2};
    s.dims[0] = rows;
    s.dims[1] = width;
    mxk_ndarray *arr = NULL;
    const char *name = "softmax_output";
    mxk_status st = mxk_ndarray_create(&s, MXK_FLOAT32, (mxk_context){MXK_DEV_CPU, 0}, &arr);
    if (st == MXK_OK)
        st = mxk_ndarray_copy_from_host(arr, out, (uint64_t)(rows * width) * sizeof(float));
    if (st == MXK_OK)
        st = mxk_ndarray_save(path, 1, &arr, &name);
    mxk_ndarray_free(arr);
    if (st != MXK_OK)
        return cli_api_error(st, "writing %s failed", path);
    fprintf(stderr, "Saved %lld predictions to \"%s\"\n", (long long)rows, path);
    return CLI_OK;
}

/** The body of `mxk predict`. */
static int predict_body(const cli_globals *g, void *arg) {
    train_args *a = arg;
    mxk_symbol *sym = NULL;
    mxkt_iter *it = NULL;
    mxkt_module *m = NULL;
    float *out = NULL;
    int64_t rows = 0, width = 0;
    train_progress bar = {.log = stderr};
    int rc = cli_check_ctx(a->contexts, a->num_contexts);
    if (rc == CLI_OK)
        rc = load_checkpoint(a, &bar, &sym, &it, &m);
    if (rc == CLI_OK && mxkt_module_predict(m, it, &out, &rows, &width) != MXK_OK)
        rc = cli_error("%s", mxkt_last_error());
    train_progress_close(&bar);
    if (rc == CLI_OK && a->output)
        rc = save_outputs(a->output, out, rows, width);
    else if (rc == CLI_OK)
        fprintf(stderr, "Predicted %lld examples\n", (long long)rows);
    if (rc == CLI_OK && g->json) {
        rc = train_print_predict_json(out, rows, width, a->output, "softmax_output");
    } else if (rc == CLI_OK && !a->output) {
        for (int64_t r = 0; r < rows; r++) {
            int64_t best = train_argmax(out + r * width, width);
            printf("%lld\t%lld\t%.6f\n", (long long)r, (long long)best, out[r * width + best]);
        }
    }
    free(out);
    mxkt_module_free(m);
    mxkt_iter_free(it);
    mxk_symbol_free(sym);
    return rc;
}

/** Runs one of the commands: parse, then the body with the library. */
static int run_cmd(const cli_command *self, const cli_globals *g, int argc, char **argv,
                   int (*body)(const cli_globals *, void *)) {
    train_args a;
    defaults(&a, self);
    int rc = parse_args(&a, argc, argv);
    if (rc != CLI_OK)
        return rc;
    return cli_with_library(g, body, &a);
}

/** `mxk train`. */
static int run_train(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    return run_cmd(self, g, argc, argv, train_body);
}
/** `mxk score`. */
static int run_score(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    return run_cmd(self, g, argc, argv, score_body);
}
/** `mxk predict`. */
static int run_predict(const cli_command *self, const cli_globals *g, int argc, char **argv) {
    return run_cmd(self, g, argc, argv, predict_body);
}

/** Options shared by score and predict, for the help texts. */
#define CKPT_HELP                                                                                  \
    "  --model-prefix P      checkpoint prefix (P-symbol.json, P-%04d.params)\n"                   \
    "  --load-epoch N        checkpoint epoch to load\n"                                           \
    "  --data-dir DIR        Fashion-MNIST IDX files (" TRAIN_DEFAULT_DATA_DIR ")\n"               \
    "  --batch-size N        batch size (100)\n"                                                   \
    "  --num-examples N      use exactly the first N test examples (all); a last\n"                \
    "                        partial batch is padded, the pad rows not counted\n"                  \
    "  --ctx LIST            contexts, e.g. cpu:0, gpu:0 or gpu:0,gpu:1 (cpu:0;\n"                 \
    "                        host batches are copied to each device)\n"                            \
    "  --no-progress         no progress bar, even on a terminal\n"                                \
    "  --data-val FILE       a RecordIO .rec read by ImageRecordIter instead of\n"                 \
    "                        Fashion-MNIST (no augmentation, as mxk train's\n"                     \
    "                        validation; --num-examples does not apply)\n"                         \
    "  --data-val-idx FILE   its .idx (optional)\n"                                                \
    "  --image-shape C,H,W   with --data-val: the crop fed to the network (1,28,28)\n"             \
    "  --rgb-mean R,G,B      with --data-val: subtracted (123.68,116.779,103.939)\n"               \
    "  --rgb-std R,G,B       with --data-val: then divided by (1,1,1)\n"

const cli_command cli_cmd_train = {
    "train",
    "train a network on Fashion-MNIST (MXNet image-classification flags)",
    "mxk train [--network NAME [--num-layers N] [--image-shape C,H,W] | --symbol FILE]\n"
    "          [OPTIONS]",
    "Trains with SGD (or Adam) on the Fashion-MNIST training set read by MNISTIter\n"
    "(io-recordio plugin) and validates on the test set after every epoch, or on\n"
    "RecordIO images read by ImageRecordIter (--data-train, below). MNISTIter\n"
    "scales each pixel byte by 1/256 as upstream's (src/io/iter_mnist.cc), so the\n"
    "inputs lie in [0, 255/256].\n"
    "\n"
    "The log (stderr) starts with a header (config dir, plugins, the backend of each\n"
    "operator per device type, network and parameter count, data set and its size),\n"
    "follows MXNet: \"Epoch[0] Batch [100]\\tSpeed: N samples/sec\\taccuracy=...\",\n"
    "\"Epoch[0] Train-accuracy=...\", \"Epoch[0] Time cost=...\",\n"
    "\"Epoch[0] Validation-accuracy=...\", and ends with \"Trained on N examples per\n"
    "epoch, validated on M\" and \"Summary: E epochs (A to B) in T s, S samples/s;\n"
    "Train-accuracy=... Validation-accuracy=...\". On a terminal a progress bar\n"
    "(batch i/N, percent, samples/s, ETA, running metric) is redrawn on stderr.\n"
    "With --json, stdout has one JSON object per epoch, the --metrics-log line.\n"
    "Every option is checked before any work; resuming a run that is already done\n"
    "(--load-epoch N with --num-epochs N or less) trains nothing and says so (exit 0).\n"
    "\n"
    "Options:\n"
    "  --network NAME        mlp (784-128-64-10 ReLU), lenet, or one of MXNet's\n"
    "                        example/image-classification/symbols: resnet, resnext,\n"
    "                        vgg, alexnet, googlenet, inception-bn, inception-v3,\n"
    "                        mobilenet, mobilenetv2; or char-lstm, a recurrent\n"
    "                        language model on text (see Text below) (mlp)\n"
    "  --num-layers N        resnet/resnext depth (20 for images up to 28x28 / 32x32,\n"
    "                        else 50), vgg 11/13/16/19 (11)\n"
    "  --image-shape C,H,W   the image shape the network is built for (1,28,28):\n"
    "                        resnet, resnext and inception-bn take their CIFAR-style\n"
    "                        variant up to 28 (resnext: 32) rows\n"
    "  --num-classes N       classes of the last layer (10)\n"
    "  --batch-norm          vgg: BatchNorm after each convolution\n"
    "  --num-group N         resnext: groups of the 3x3 convolutions (32)\n"
    "  --multiplier X        mobilenet: alpha 0.25/0.5/0.75/1; mobilenetv2: width (1)\n"
    "  --symbol FILE         train the symbol JSON FILE instead (data: 'data', label:\n"
    "                        'softmax_label'; (B,784) or (B,1,28,28) found by inference)\n"
    "  --num-epochs N        epochs (10)\n"
    "  --batch-size N        batch size (100; char-lstm 32)\n"
    "  --lr X                learning rate (0.05 lenet, else 0.1; adam 0.001;\n"
    "                        char-lstm 0.01)\n"
    "  --lr-factor X         multiply the rate by X at each --lr-step-epochs (0.1;\n"
    "                        <= 0 or >= 1: a constant rate)\n"
    "  --lr-step-epochs L    epochs at which the rate changes (the epochs nearest 60%\n"
    "                        and 90% of --num-epochs: 6,9 for 10, 2 for 3): with a\n"
    "                        constant rate (MXNet.jl's) the MLP hovers near 0.86 and\n"
    "                        LeNet near 0.88 on Fashion-MNIST's [0,1] inputs; the steps bring\n"
    "                        them to ~0.879 (10 epochs) and ~0.897 (3 epochs)\n"
    "  --optimizer NAME      sgd or adam (sgd; char-lstm adam)\n"
    "  --clip-gradient X     clip each gradient to [-X, X] (off; char-lstm 1)\n"
    "  --mom X               SGD momentum, in [0, 1) (0.9)\n"
    "  --wd X                weight decay on *_weight, at least 0 (1e-5)\n"
    "  --initializer SPEC    xavier[(rnd_type, factor_type, magnitude)], glorot, he,\n"
    "                        default (fit.py's: xavier(gaussian, in, 2)), msra,\n"
    "                        uniform(S), normal(S), one, zero, constant(V) (xavier)\n"
    "  --kv-store TYPE       local or device, used with several contexts (local);\n"
    "                        dist_sync or dist_device_sync under mpirun: each worker\n"
    "                        trains on its part of the data with --batch-size, so the\n"
    "                        total batch is batch * workers, and --num-examples\n"
    "                        counts all workers' examples (docs/distributed.md);\n"
    "                        dist_async: the last MXK_KVSTORE_NUM_SERVERS (1) ranks\n"
    "                        serve, run the optimizer and apply each worker's\n"
    "                        gradient as it arrives\n"
    "  --gc-type TYPE        gradient compression of a dist --kv-store: none or 2bit\n"
    "                        (each gradient element sent as 0 or +-threshold in 2\n"
    "                        bits, the rest kept for the next push) (none)\n"
    "  --gc-threshold X      the 2bit threshold, positive (0.5)\n"
    "  --ctx LIST            contexts, e.g. cpu:0, gpu:0 or gpu:0,gpu:1 (cpu:0):\n"
    "                        one device per slice of each batch (data parallel)\n"
    "  --model-prefix P      save P-symbol.json and P-%04d.params/.states (dist: rank\n"
    "                        0 only, or every rank when P holds {rank}, the rank)\n"
    "  --save-period N       save every N epochs (1)\n"
    "  --load-epoch N        resume from P-%04d.params (and .states) at epoch N\n"
    "                        (needs --model-prefix; the file must exist)\n"
    "  --disp-batches N      speed log every N batches (100; 0: off)\n"
    "  --num-examples N      train on exactly N examples per epoch (all 60000); a last\n"
    "                        partial batch is padded from the epoch's start: the pad\n"
    "                        rows take part in the update, not in the metrics\n"
    "  --seed N              seed of initialisation and shuffling (0)\n"
    "  --data-dir DIR        Fashion-MNIST IDX files (" TRAIN_DEFAULT_DATA_DIR ")\n"
    "  --metrics LIST        acc, ce, nll_loss, top_k_accuracy_K, ... (acc)\n"
    "  --metrics-log FILE    append one JSON line per epoch: {\"epoch\", \"train\": {NAME:\n"
    "                        V}, \"validation\", \"lr\", \"samples_per_sec\", \"seconds\"},\n"
    "                        numbers in their shortest exact form (metrics: double,\n"
    "                        lr: float32)\n"
    "  --no-progress         no progress bar, even on a terminal\n"
    "\n" TRAIN_REC_HELP "\n" TRAIN_TEXT_HELP,
    run_train,
};

const cli_command cli_cmd_score = {
    "score",
    "evaluate a saved checkpoint on the Fashion-MNIST test set",
    "mxk score --model-prefix P --load-epoch N [OPTIONS]",
    "Prints NAME=VALUE per metric, and \"Scored N examples\" on stderr; with --json\n"
    "the object {\"examples\": N, \"metrics\": {NAME: V}} (shortest exact numbers).\n"
    "On a terminal a progress bar is drawn on stderr.\n\nOptions:\n" CKPT_HELP
    "  --metrics LIST        acc, ce, nll_loss, top_k_accuracy_K, ... (acc)\n",
    run_score,
};

const cli_command cli_cmd_predict = {
    "predict",
    "run a saved checkpoint on the Fashion-MNIST test set",
    "mxk predict --model-prefix P --load-epoch N [--output FILE] [OPTIONS]",
    "Prints \"index<TAB>class<TAB>probability\" per example (\"Predicted N examples\" on\n"
    "stderr), or with --output FILE saves the outputs (N x 10) as an NDArray file (key\n"
    "softmax_output; \"Saved N predictions to ...\"). With --json stdout has one\n"
    "object: {\"examples\": N, \"outputs\": 10, \"classes\": [...], \"probabilities\":\n"
    "[...]}, or with --output {\"examples\", \"outputs\", \"file\", \"key\"}. On a\n"
    "terminal a progress bar is drawn on stderr.\n\nOptions:\n" CKPT_HELP
    "  --output FILE         write the outputs to FILE\n",
    run_predict,
};
