/*
 * The KVStore's parameter-server side and its commands (public API in mxk.h,
 * section "KVStore"): mxk_kvstore_is_server, mxk_kvstore_run_server,
 * mxk_kvstore_send_command_to_servers, mxk_kvstore_set_gradient_compression.
 *
 * Semantics: upstream MXNet's KVStoreDistServer (src/kvstore/kvstore_dist_server.h)
 * in async mode and python/mxnet/kvstore/kvstore_server.py: a server process holds
 * its share of the keys, runs the controller for each command of the workers
 * (upstream command 0 sets the optimizer, which the controller turns into the
 * updater) and applies every worker's push at once with the updater; a pull
 * returns the current value. The transport (abi/mxk_abi_kvstore.h, ABI 1.5) moves
 * the messages and calls the handler below, one message at a time, in the thread
 * running mxk_kvstore_run_server. The server's keys are ordinary entries of the
 * store (host memory): `stored` the value, `merged` the received push.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "kvstore.h"
#include "ndarray.h"
#include "shape.h"

/** The server loop's state: the store and the application's controller. */
typedef struct kv_server {
    mxk_kvstore *kv;
    mxk_kvstore_server_controller controller;
    void *user;
} kv_server;

/** Writes the kernel's last error into the transport's buffer, with a prefix. */
static mxk_status kv_server_fail(mxk_status st, char *msg, size_t len, const char *what,
                                 const char *key) {
    snprintf(msg, len, "KVStore server: %s%s%s: %s", what, key ? " of key " : "", key ? key : "",
             mxki_last_error_message());
    return st;
}

/** The entry of `key` checked against tensor `t` (lock not held), or NULL with the error set. */
static kv_entry *kv_server_entry(kv_server *s, const char *key, const mxk_tensor *t) {
    pthread_mutex_lock(&s->kv->lock);
    kv_entry *e = mxki_kvstore_find(s->kv, key);
    pthread_mutex_unlock(&s->kv->lock);
    if (e == NULL) {
        mxk_set_error(MXK_ERR_NOT_FOUND, "key %s doesn't exist. Did you init?", key);
        return NULL;
    }
    if (t->dtype != e->stored->dtype || !mxki_shape_equal(&t->shape, &e->stored->shape)) {
        char s1[256], s2[256];
        mxk_set_error(MXK_ERR_SHAPE, "stored %s %s, given %s %s",
                      mxki_shape_format(&e->stored->shape, s1, sizeof s1),
                      mxk_dtype_name(e->stored->dtype), mxki_shape_format(&t->shape, s2, sizeof s2),
                      mxk_dtype_name(t->dtype));
        return NULL;
    }
    return e;
}

/** handler.command: the application's controller (upstream KVStoreServer._controller). */
static mxk_status kv_server_command(void *user, int32_t head, const char *body, char *msg,
                                    size_t msg_len) {
    kv_server *s = user;
    mxk_status st = s->controller(head, body, s->user);
    return st == MXK_OK ? MXK_OK : kv_server_fail(st, msg, msg_len, "command", NULL);
}

/**
 * handler.init: a host copy of the value (upstream DataHandleDefault's first push),
 * complete before returning (the transport owns `value` only during the call).
 */
static mxk_status kv_server_init(void *user, const char *key, const mxk_tensor *value, char *msg,
                                 size_t msg_len) {
    kv_server *s = user;
    kv_entry *e = calloc(1, sizeof *e);
    mxk_status st = MXK_ERR_OUT_OF_MEMORY;
    mxk_set_error(st, "out of memory");
    pthread_mutex_lock(&s->kv->lock);
    if (mxki_kvstore_find(s->kv, key) != NULL)
        st = mxk_set_error(MXK_ERR_STATE, "duplicate init of key %s", key);
    else if (e != NULL && (e->key = strdup(key)) != NULL &&
             (st = mxk_ndarray_create(&value->shape, value->dtype, KV_CPU, &e->stored)) == MXK_OK &&
             (st = mxk_ndarray_copy_from_host(e->stored, value->data,
                                              mxki_ndarray_bytes(e->stored))) == MXK_OK &&
             (st = mxk_ndarray_wait_to_read(e->stored)) == MXK_OK &&
             (st = mxk_ndarray_create(&value->shape, value->dtype, KV_CPU, &e->merged)) == MXK_OK)
        st = mxki_kvstore_append(s->kv, e);
    pthread_mutex_unlock(&s->kv->lock);
    if (st == MXK_OK)
        return MXK_OK;
    if (e != NULL) {
        mxk_ndarray_free(e->stored);
        mxk_ndarray_free(e->merged);
        free(e->key);
        free(e);
    }
    return kv_server_fail(st, msg, msg_len, "init", key);
}

/**
 * handler.push: the updater on (received, stored), at once (upstream
 * KVStoreDistServer::DataHandleDefault, async mode: "Updater needs to be set for
 * async mode"); waits for the update so that its errors reach the transport.
 */
static mxk_status kv_server_push(void *user, const char *key, const mxk_tensor *value, char *msg,
                                 size_t msg_len) {
    kv_server *s = user;
    kv_entry *e = kv_server_entry(s, key, value);
    if (e == NULL)
        return kv_server_fail(mxki_last_error_code(), msg, msg_len, "push", key);
    pthread_mutex_lock(&s->kv->lock);
    mxk_kvstore_updater fn = s->kv->updater;
    void *fn_user = s->kv->updater_user;
    pthread_mutex_unlock(&s->kv->lock);
    if (fn == NULL) {
        mxk_set_error(MXK_ERR_STATE, "no updater: the workers must send the optimizer "
                                     "(set_optimizer) before they push");
        return kv_server_fail(MXK_ERR_STATE, msg, msg_len, "push", key);
    }
    /* The copy is asynchronous and `value` is the transport's only during this call. */
    mxk_status st =
        mxk_ndarray_copy_from_host(e->merged, value->data, mxki_ndarray_bytes(e->merged));
    if (st == MXK_OK)
        st = mxk_ndarray_wait_to_read(e->merged);
    if (st == MXK_OK) {
        fn(key, e->merged, e->stored, fn_user);
        st = mxk_ndarray_wait_to_read(e->stored);
    }
    return st == MXK_OK ? MXK_OK : kv_server_fail(st, msg, msg_len, "update", key);
}

/** handler.pull: the key's current value into `out`. */
static mxk_status kv_server_pull(void *user, const char *key, const mxk_tensor *out, char *msg,
                                 size_t msg_len) {
    kv_server *s = user;
    kv_entry *e = kv_server_entry(s, key, out);
    mxk_status st =
        e ? mxk_ndarray_copy_to_host(e->stored, out->data, mxki_ndarray_bytes(e->stored))
          : mxki_last_error_code();
    return st == MXK_OK ? MXK_OK : kv_server_fail(st, msg, msg_len, "pull", key);
}

int32_t mxk_kvstore_is_server(const mxk_kvstore *kv) {
    return kv != NULL && mxki_kvstore_has_servers(kv) && kv->tdef->is_server(kv->transport) != 0;
}

mxk_status mxk_kvstore_run_server(mxk_kvstore *kv, mxk_kvstore_server_controller controller,
                                  void *user) {
    if (kv == NULL || controller == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_kvstore_run_server: kv or controller is NULL");
    if (!mxk_kvstore_is_server(kv))
        return mxk_set_error(MXK_ERR_STATE, "KVStore %s: this process is not a server of the store",
                             kv->type);
    kv_server s = {kv, controller, user};
    mxk_kvstore_server_handler h = {.user = &s,
                                    .command = kv_server_command,
                                    .init = kv_server_init,
                                    .push = kv_server_push,
                                    .pull = kv_server_pull};
    mxk_error_sink err;
    mxki_error_sink_clear(&err);
    if (kv->tdef->run_server(kv->transport, &h, &err) != MXK_OK)
        return mxki_set_error_from_sink(&err, "KVStore %s server: ", kv->type);
    return MXK_OK;
}

mxk_status mxk_kvstore_send_command_to_servers(mxk_kvstore *kv, int32_t head, const char *body) {
    if (kv == NULL || body == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_kvstore_send_command_to_servers: kv or body is NULL");
    if (!mxki_kvstore_has_servers(kv))
        return mxk_set_error(MXK_ERR_UNSUPPORTED, "KVStore %s has no servers to send commands to",
                             kv->type);
    if (mxk_kvstore_is_server(kv))
        return mxk_set_error(MXK_ERR_STATE, "KVStore %s: a server cannot send commands", kv->type);
    mxk_error_sink err;
    mxki_error_sink_clear(&err);
    if (kv->tdef->send_command(kv->transport, head, body, &err) != MXK_OK)
        return mxki_set_error_from_sink(&err, "KVStore %s: command %d: ", kv->type, (int)head);
    return MXK_OK;
}

mxk_status mxk_kvstore_set_gradient_compression(mxk_kvstore *kv, const char *type,
                                                double threshold) {
    if (kv == NULL || type == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "mxk_kvstore_set_gradient_compression: kv or type is NULL");
    /* upstream GradientCompression::SetParams: "Unknown type for gradient compression" */
    if (strcmp(type, "2bit") != 0 && strcmp(type, "none") != 0)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "Unknown type for gradient compression %s (known: 2bit, none)", type);
    if (strcmp(type, "2bit") == 0 && !(threshold > 0.0 && threshold < 1e30))
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "gradient compression 2bit: threshold must be positive, not %g",
                             threshold);
    if (kv->tdef->set_gradient_compression == NULL)
        return mxk_set_error(MXK_ERR_UNSUPPORTED,
                             "KVStore %s: gradient compression needs a dist store "
                             "(its transport compresses what it sends)",
                             kv->type);
    mxk_error_sink err;
    mxki_error_sink_clear(&err);
    if (kv->tdef->set_gradient_compression(kv->transport, type, threshold, &err) != MXK_OK)
        return mxki_set_error_from_sink(&err, "KVStore %s: gradient compression: ", kv->type);
    return MXK_OK;
}
