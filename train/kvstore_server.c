/*
 * The optimizer on KVStore servers (mxk_train.h, "KVStore servers"): upstream's
 * KVStore.set_optimizer (python/mxnet/kvstore/kvstore.py: the optimizer sent to the
 * servers as command 0) and KVStoreServer (python/mxnet/kvstore/kvstore_server.py:
 * the controller turns command 0 into the server's updater, optimizer.get_updater).
 *
 * Upstream pickles the Python optimizer object; mxk sends its name and attributes
 * as JSON (the optimizer is plain data: mxkt_optimizer), with the parameters' names
 * and learning-rate / weight-decay multipliers (upstream's idx2name, lr_mult and
 * wd_mult travel inside the pickled object):
 *   {"optimizer": "sgd"|"adam", "learning_rate", "wd", "rescale_grad",
 *    "clip_gradient", "momentum", "beta1", "beta2", "epsilon",
 *    "lr_scheduler": {"kind", "base_lr", "factor", "stop_factor_lr", "step",
 *                     "steps": [...]},
 *    "params": [[name, lr_mult, wd_mult], ...]}
 * The server's updater counts updates per parameter index (a key's position in
 * "params") as upstream's server-side optimizer does, so with N workers it counts
 * N updates per key and round (num_update, schedulers and Adam's bias correction
 * see every worker's push, as upstream).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "train_internal.h"

/** One key's optimizer states on a server (created at its first update). */
typedef struct server_states {
    char *key;
    mxk_ndarray *s[2];
    struct server_states *next;
} server_states;

/** A server's optimizer: what the last command 0 set. */
typedef struct kv_server_opt {
    mxk_kvstore *kv;
    int set;
    mxkt_optimizer opt;
    uint32_t nparams;
    char **names;
    double *lr_mult, *wd_mult;
    server_states *states;
} kv_server_opt;

/** Builds the JSON of command 0 (see the file comment); NULL when out of memory. */
static char *optimizer_json(const mxkt_optimizer *o, uint32_t n, const char *const *names,
                            const double *lr_mult, const double *wd_mult) {
    json_t *steps = json_array(), *params = json_array();
    for (int32_t i = 0; i < o->sched.num_steps && i < MXKT_MAX_STEPS; i++)
        json_array_append_new(steps, json_integer(o->sched.steps[i]));
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(params, json_pack("[s f f]", names[i], lr_mult ? lr_mult[i] : 1.0,
                                                wd_mult ? wd_mult[i] : 1.0));
    json_t *sched =
        json_pack("{s i s f s f s f s I s o}", "kind", (int)o->sched.kind, "base_lr",
                  o->sched.base_lr, "factor", o->sched.factor, "stop_factor_lr",
                  o->sched.stop_factor_lr, "step", (json_int_t)o->sched.step, "steps", steps);
    json_t *j = json_pack("{s s s f s f s f s f s f s f s f s f s o s o}", "optimizer",
                          o->kind == MXKT_OPT_ADAM ? "adam" : "sgd", "learning_rate", o->lr, "wd",
                          o->wd, "rescale_grad", o->rescale_grad, "clip_gradient", o->clip_gradient,
                          "momentum", o->momentum, "beta1", o->beta1, "beta2", o->beta2, "epsilon",
                          o->epsilon, "lr_scheduler", sched, "params", params);
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    return s;
}

mxk_status mxkt_kvstore_set_optimizer(mxk_kvstore *kv, const mxkt_optimizer *opt, uint32_t n,
                                      const char *const *names, const double *lr_mult,
                                      const double *wd_mult) {
    if (kv == NULL || opt == NULL || (n > 0 && names == NULL))
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "set_optimizer: kv, opt or names is NULL");
    MXKT_CHECK(mxkt_optimizer_check(opt));
    char *body = optimizer_json(opt, n, names, lr_mult, wd_mult);
    if (body == NULL)
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "set_optimizer: out of memory");
    mxk_status st = mxk_kvstore_send_command_to_servers(kv, MXKT_KV_SET_OPTIMIZER, body);
    free(body);
    return st == MXK_OK ? MXK_OK : mxkt_kernel_error(st, "set_optimizer");
}

/** Frees the parameter table and the states. */
static void server_opt_clear(kv_server_opt *s) {
    for (uint32_t i = 0; i < s->nparams; i++)
        free(s->names[i]);
    free(s->names);
    free(s->lr_mult);
    free(s->wd_mult);
    s->names = NULL;
    s->lr_mult = s->wd_mult = NULL;
    s->nparams = 0;
    while (s->states) {
        server_states *st = s->states;
        s->states = st->next;
        mxk_ndarray_free(st->s[0]);
        mxk_ndarray_free(st->s[1]);
        free(st->key);
        free(st);
    }
    s->set = 0;
}

/**
 * Reads command 0's JSON into `s` (dropping the previous optimizer and its states);
 * MXK_ERR_INVALID_ARGUMENT (set) when malformed, leaving `s` as it was.
 */
static mxk_status server_opt_parse(kv_server_opt *s, const char *body) {
    json_error_t jerr;
    json_t *j = json_loads(body, 0, &jerr), *sched = NULL, *steps = NULL, *params = NULL;
    const char *name = NULL;
    mxkt_optimizer o;
    memset(&o, 0, sizeof o);
    int kind = 0;
    json_int_t step = 0;
    if (j == NULL ||
        json_unpack_ex(j, &jerr, JSON_STRICT, "{s s s F s F s F s F s F s F s F s F s o s o}",
                       "optimizer", &name, "learning_rate", &o.lr, "wd", &o.wd, "rescale_grad",
                       &o.rescale_grad, "clip_gradient", &o.clip_gradient, "momentum", &o.momentum,
                       "beta1", &o.beta1, "beta2", &o.beta2, "epsilon", &o.epsilon, "lr_scheduler",
                       &sched, "params", &params) != 0 ||
        json_unpack_ex(sched, &jerr, JSON_STRICT, "{s i s F s F s F s I s o}", "kind", &kind,
                       "base_lr", &o.sched.base_lr, "factor", &o.sched.factor, "stop_factor_lr",
                       &o.sched.stop_factor_lr, "step", &step, "steps", &steps) != 0 ||
        !json_is_array(steps) || json_array_size(steps) > MXKT_MAX_STEPS ||
        !json_is_array(params)) {
        json_decref(j);
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "set_optimizer: a malformed optimizer: %s",
                          j ? jerr.text : "not JSON");
    }
    if (strcmp(name, "sgd") != 0 && strcmp(name, "adam") != 0) {
        mxk_status st = mxkt_error(MXK_ERR_INVALID_ARGUMENT,
                                   "set_optimizer: unknown optimizer '%s' (sgd, adam)", name);
        json_decref(j);
        return st;
    }
    o.kind = strcmp(name, "adam") == 0 ? MXKT_OPT_ADAM : MXKT_OPT_SGD;
    o.sched.kind = kind;
    o.sched.step = step;
    o.sched.num_steps = (int32_t)json_array_size(steps);
    for (size_t i = 0; i < json_array_size(steps); i++)
        o.sched.steps[i] = json_integer_value(json_array_get(steps, i));
    o.sched.lr = o.sched.base_lr;
    mxk_status st = mxkt_optimizer_check(&o);
    size_t n = json_array_size(params);
    /* Parsed aside: a rejected command leaves the optimizer in use as it was. */
    kv_server_opt fresh;
    memset(&fresh, 0, sizeof fresh);
    if (st == MXK_OK && n > 0 &&
        ((fresh.names = calloc(n, sizeof *fresh.names)) == NULL ||
         (fresh.lr_mult = calloc(n, sizeof *fresh.lr_mult)) == NULL ||
         (fresh.wd_mult = calloc(n, sizeof *fresh.wd_mult)) == NULL))
        st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "set_optimizer: out of memory");
    for (size_t i = 0; st == MXK_OK && i < n; i++) {
        const char *pn = NULL;
        if (json_unpack(json_array_get(params, i), "[s F F]", &pn, &fresh.lr_mult[i],
                        &fresh.wd_mult[i]) != 0)
            st =
                mxkt_error(MXK_ERR_INVALID_ARGUMENT, "set_optimizer: a malformed parameter %zu", i);
        else if ((fresh.names[i] = strdup(pn)) == NULL)
            st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "set_optimizer: out of memory");
        fresh.nparams = (uint32_t)(i + 1);
    }
    json_decref(j);
    if (st != MXK_OK) {
        server_opt_clear(&fresh);
        return st;
    }
    server_opt_clear(s); /* the new optimizer starts with fresh states, as upstream's updater */
    s->names = fresh.names;
    s->lr_mult = fresh.lr_mult;
    s->wd_mult = fresh.wd_mult;
    s->nparams = fresh.nparams;
    s->opt = o;
    s->set = 1;
    return MXK_OK;
}

/** The states of `key`, created as zeros like `stored` at its first update; NULL: failed. */
static server_states *server_states_of(kv_server_opt *s, const char *key, mxk_ndarray *stored) {
    for (server_states *st = s->states; st; st = st->next)
        if (strcmp(st->key, key) == 0)
            return st;
    server_states *st = calloc(1, sizeof *st);
    if (st == NULL || (st->key = strdup(key)) == NULL) {
        free(st);
        mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    mxk_shape sh = mxk_ndarray_shape(stored);
    mxk_context cpu = {MXK_DEV_CPU, 0};
    for (uint32_t i = 0; i < mxkt_optimizer_num_states(&s->opt); i++)
        if (mxk_ndarray_full(&sh, MXK_FLOAT32, cpu, 0.0, &st->s[i]) != MXK_OK) {
            mxk_ndarray_free(st->s[0]);
            free(st->key);
            free(st);
            return NULL;
        }
    st->next = s->states;
    s->states = st;
    return st;
}

/**
 * The server's updater (optimizer.get_updater): one optimizer step of `key` with
 * the pushed gradient. A failure is printed (the kernel's updater type returns
 * nothing) and the key keeps its value.
 */
static void server_update(const char *key, mxk_ndarray *recv, mxk_ndarray *stored, void *user) {
    kv_server_opt *s = user;
    int32_t index = -1;
    for (uint32_t i = 0; i < s->nparams && index < 0; i++)
        if (strcmp(s->names[i], key) == 0)
            index = (int32_t)i;
    double lr_mult = index >= 0 ? s->lr_mult[index] : 1.0;
    double wd_mult = index >= 0 ? s->wd_mult[index] : mxkt_optimizer_wd_mult(key);
    server_states *st = server_states_of(s, key, stored);
    mxk_status rc = MXK_ERR_OUT_OF_MEMORY;
    if (st != NULL) {
        double lr = mxkt_optimizer_step(&s->opt, index) * lr_mult;
        rc = mxkt_optimizer_apply(&s->opt, lr, wd_mult, stored, recv, st->s);
    }
    if (rc != MXK_OK)
        fprintf(stderr, "KVStore server: update of key %s: %s\n", key, mxk_get_last_error());
}

/** The controller (kvstore_server.py _controller): command 0 sets the optimizer. */
static mxk_status server_controller(int32_t head, const char *body, void *user) {
    kv_server_opt *s = user;
    if (head != MXKT_KV_SET_OPTIMIZER)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "unknown command (%d, %.60s)", (int)head, body);
    MXKT_CHECK(server_opt_parse(s, body));
    return mxk_kvstore_set_updater(s->kv, server_update, s);
}

mxk_status mxkt_kvstore_run_server(mxk_kvstore *kv) {
    if (kv == NULL)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "run_server: kv is NULL");
    kv_server_opt s;
    memset(&s, 0, sizeof s);
    s.kv = kv;
    mxk_status st = mxk_kvstore_run_server(kv, server_controller, &s);
    server_opt_clear(&s);
    return st == MXK_OK ? MXK_OK : mxkt_kernel_error(st, "run_server");
}
