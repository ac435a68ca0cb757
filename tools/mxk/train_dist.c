/*
 * Distributed training in `mxk train` (train_dist.h): the store, the rank line,
 * the quiet log of ranks other than 0 and the per-rank checkpoint prefix.
 * Semantics of upstream's example/image-classification/common/fit.py (rank 0
 * logs and saves) and python/mxnet/module/module.py (_create_kvstore).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mxk_train.h"
#include "train_dist.h"

/** Opens the store of a dist --kv-store (see train_dist.h). */
int train_dist_open(const char *kv_store, train_dist *d) {
    memset(d, 0, sizeof *d);
    d->num_workers = 1;
    if (kv_store == NULL || strstr(kv_store, "dist") == NULL)
        return CLI_OK;
    if (mxk_kvstore_create(kv_store, &d->kv) != MXK_OK)
        return cli_error("%s", mxk_get_last_error());
    d->rank = mxk_kvstore_rank(d->kv);
    d->num_workers = mxk_kvstore_num_workers(d->kv);
    d->is_server = mxk_kvstore_is_server(d->kv);
    if (d->is_server) {
        fprintf(stderr, "server %d of the %s store, for %d workers\n", (int)d->rank, kv_store,
                (int)d->num_workers);
        return CLI_OK;
    }
    fprintf(stderr, "rank %d of %d\n", (int)d->rank, (int)d->num_workers);
    if (d->rank != 0) {
        const char *level = getenv("MXK_LOG_LEVEL");
        int debug = level && strcmp(level, "debug") == 0;
        d->quiet_log = debug ? stderr : fopen("/dev/null", "w");
        if (d->quiet_log == NULL)
            d->quiet_log = stderr;
    }
    return CLI_OK;
}

/** Serves the store until the workers are done (see train_dist.h). */
int train_dist_serve(train_dist *d) {
    if (mxkt_kvstore_run_server(d->kv) != MXK_OK)
        return cli_error("%s", mxk_get_last_error());
    fprintf(stderr, "server %d: every worker is done\n", (int)d->rank);
    return CLI_OK;
}

/** Frees the store and the quiet log (see train_dist.h). */
void train_dist_close(train_dist *d) {
    mxk_kvstore_free(d->kv);
    if (d->quiet_log && d->quiet_log != stderr)
        fclose(d->quiet_log);
    memset(d, 0, sizeof *d);
}

/** This worker's training log (see train_dist.h). */
FILE *train_dist_log(const train_dist *d, FILE *log) {
    return d->quiet_log ? d->quiet_log : log;
}

/** The prefix with the rank token replaced (see train_dist.h). */
int train_dist_prefix(const train_dist *d, const char *prefix, char *buf, size_t n) {
    size_t len = 0, tok = strlen(TRAIN_DIST_RANK_TOKEN);
    int found = 0;
    for (const char *p = prefix; *p && len < n;) {
        if (strncmp(p, TRAIN_DIST_RANK_TOKEN, tok) == 0) {
            len += (size_t)snprintf(buf + len, n - len, "%d", (int)d->rank);
            p += tok;
            found = 1;
        } else {
            buf[len++] = *p++;
        }
    }
    if (len >= n) {
        cli_error("--model-prefix '%s' is too long with the rank in it", prefix);
        return -1;
    }
    buf[len] = '\0';
    return found;
}
