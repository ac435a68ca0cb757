/* Backend selection: preference lists, per-operator overrides, the kernel run per operator. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "error.h"
#include "registry_internal.h"

/* A per-operator backend override (a singly linked list, newest first). */
typedef struct op_override {
    char *op;
    char *backend;
    struct op_override *next;
} op_override;

/* The selection settings; every field under `lock`. Never freed (process lifetime). */
static struct {
    pthread_mutex_t lock;
    char *pref_api;              /* mxk_set_backend_preference */
    char *pref_conf;             /* mxk.conf backend = */
    op_override *overrides_api;  /* mxk_set_op_backend */
    op_override *overrides_conf; /* mxk.conf [op_backend] */
    char effective[1024];
} S = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Replaces *dst with a copy of src with spaces removed ("" or NULL clears). */
static mxk_status set_pref(char **dst, const char *src) {
    char *c = NULL;
    if (src != NULL && *src != '\0') {
        c = malloc(strlen(src) + 1);
        if (c == NULL)
            return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
        size_t k = 0;
        for (const char *p = src; *p; p++)
            if (*p != ' ' && *p != '\t')
                c[k++] = *p;
        c[k] = '\0';
    }
    pthread_mutex_lock(&S.lock);
    free(*dst);
    *dst = c;
    pthread_mutex_unlock(&S.lock);
    return MXK_OK;
}

mxk_status mxk_set_backend_preference(const char *list) {
    return set_pref(&S.pref_api, list);
}

mxk_status mxki_registry_set_conf_preference(const char *list) {
    return set_pref(&S.pref_conf, list);
}

/* The effective list: API > MXK_BACKEND > mxk.conf. Caller holds the lock. */
static const char *effective_pref_locked(void) {
    const char *env = getenv("MXK_BACKEND");
    if (S.pref_api)
        return S.pref_api;
    if (env && *env)
        return env;
    return S.pref_conf ? S.pref_conf : "";
}

const char *mxk_get_backend_preference(void) {
    pthread_mutex_lock(&S.lock);
    snprintf(S.effective, sizeof S.effective, "%s", effective_pref_locked());
    pthread_mutex_unlock(&S.lock);
    return S.effective;
}

/* Sets (backend non-empty) or clears the override of `op` in the list *head. */
static mxk_status set_override(op_override **head, const char *op, const char *backend) {
    if (op == NULL || *op == '\0')
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_set_op_backend: empty operator name");
    char *copy = NULL;
    if (backend && *backend && (copy = strdup(backend)) == NULL)
        return mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
    pthread_mutex_lock(&S.lock);
    for (op_override *o = *head; o != NULL; o = o->next) {
        if (strcmp(o->op, op) == 0) {
            free(o->backend);
            o->backend = copy;
            pthread_mutex_unlock(&S.lock);
            return MXK_OK;
        }
    }
    mxk_status rc = MXK_OK;
    if (copy != NULL) {
        op_override *o = calloc(1, sizeof *o);
        if (o == NULL || (o->op = strdup(op)) == NULL) {
            free(o);
            free(copy);
            rc = mxk_set_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
        } else {
            o->backend = copy;
            o->next = *head;
            *head = o;
        }
    }
    pthread_mutex_unlock(&S.lock);
    return rc;
}

mxk_status mxk_set_op_backend(const char *op, const char *backend) {
    return set_override(&S.overrides_api, op, backend);
}

mxk_status mxki_registry_set_conf_op_backend(const char *op, const char *backend) {
    return set_override(&S.overrides_conf, op, backend);
}

/* The override for op, set under its name or an alias (API first, then conf), or NULL.
 * Caller holds the lock. */
static const char *override_locked(const mxk_op_entry *op) {
    const op_override *lists[2] = {S.overrides_api, S.overrides_conf};
    for (int l = 0; l < 2; l++)
        for (const op_override *o = lists[l]; o != NULL; o = o->next)
            if (o->backend && mxki_op_entry_named(op, o->op))
                return o->backend;
    return NULL;
}

mxk_status mxk_get_op_backend(const char *op, char *buf, size_t size) {
    if (op == NULL || buf == NULL || size == 0)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_get_op_backend: op or buf is NULL");
    buf[0] = '\0';
    const mxk_op_entry *e = mxki_registry_find_op(op);
    if (e == NULL)
        return mxki_registry_unknown_op(op);
    pthread_mutex_lock(&S.lock);
    const char *forced = override_locked(e);
    snprintf(buf, size, "%s", forced ? forced : "");
    pthread_mutex_unlock(&S.lock);
    return MXK_OK;
}

/* Position of backend in the comma-separated list, or -1. */
static int pref_rank(const char *list, const char *backend) {
    int rank = 0;
    size_t n = strlen(backend);
    for (const char *p = list; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, backend, n) == 0)
            return rank;
        rank++;
        if (comma == NULL)
            break;
        p = comma + 1;
    }
    return -1;
}

/* True when kernel a should be tried before b. */
static int better(const mxk_kernel_entry *a, const mxk_kernel_entry *b, const char *forced,
                  const char *pref) {
    int fa = forced && strcmp(a->def.backend, forced) == 0;
    int fb = forced && strcmp(b->def.backend, forced) == 0;
    if (fa != fb)
        return fa;
    int ra = pref_rank(pref, a->def.backend), rb = pref_rank(pref, b->def.backend);
    if ((ra >= 0) != (rb >= 0))
        return ra >= 0;
    if (ra >= 0 && ra != rb)
        return ra < rb;
    return a->def.priority > b->def.priority;
}

/* Asks kernel k whether it runs the configuration, with its own parameter object
 * when it parses one (returned in *kparam on success, else freed). */
static int kernel_accepts(const mxk_kernel_entry *k, const void *param, const mxk_attrs *attrs,
                          const mxk_shape *in_shapes, const int32_t *in_types, uint32_t num_in,
                          void **kparam) {
    *kparam = NULL;
    if (k->def.parse_param != NULL && attrs != NULL) {
        mxk_error_sink sink;
        mxki_error_sink_clear(&sink);
        if (k->def.parse_param(attrs, kparam, &sink) != MXK_OK) {
            mxki_log(MXK_LOG_DEBUG, "backend '%s' declines operator '%s': %s", k->def.backend,
                     k->def.op_name, sink.msg);
            return 0;
        }
        param = *kparam;
    }
    if (k->def.supports == NULL || in_shapes == NULL ||
        k->def.supports(param, in_shapes, in_types, num_in))
        return 1;
    if (*kparam != NULL)
        k->def.free_param(*kparam);
    *kparam = NULL;
    return 0;
}

const mxk_kernel_entry *mxki_registry_resolve_kernel(const mxk_op_entry *op, int32_t dev_type,
                                                     const void *param, const mxk_attrs *attrs,
                                                     const mxk_shape *in_shapes,
                                                     const int32_t *in_types, uint32_t num_in,
                                                     void **kparam) {
    enum { MAX_CANDIDATES = 32 };
    const mxk_kernel_entry *cand[MAX_CANDIDATES];
    uint32_t n = 0;
    char backends[512] = "";
    size_t pos = 0;
    void *kp = NULL;
    const mxk_kernel_entry *found[MAX_CANDIDATES];
    uint32_t nfound = mxki_registry_kernels_of(op, dev_type, found, MAX_CANDIDATES);
    pthread_mutex_lock(&S.lock);
    const char *forced = override_locked(op);
    const char *pref = effective_pref_locked();
    for (uint32_t f = 0; f < nfound; f++) {
        const mxk_kernel_entry *k = found[f];
        /* insertion sort keeps registration order among equals */
        uint32_t j = n++;
        while (j > 0 && better(k, cand[j - 1], forced, pref)) {
            cand[j] = cand[j - 1];
            j--;
        }
        cand[j] = k;
    }
    pthread_mutex_unlock(&S.lock);
    for (uint32_t i = 0; i < n; i++) {
        const mxk_kernel_entry *k = cand[i];
        if (kernel_accepts(k, param, attrs, in_shapes, in_types, num_in, &kp)) {
            mxki_log(MXK_LOG_DEBUG,
                     "operator '%s' on %s: backend '%s' of plugin '%s' chosen (%u candidate%s%s%s)",
                     op->def.name, mxk_dev_type_name(dev_type), k->def.backend, k->plugin->name,
                     (unsigned)n, n == 1 ? "" : "s", pos ? "; tried first: " : "", backends);
            if (kparam != NULL)
                *kparam = kp;
            else if (kp != NULL)
                k->def.free_param(kp);
            return k;
        }
        if (pos < sizeof backends)
            pos += (size_t)snprintf(backends + pos, sizeof backends - pos, "%s%s (declined)",
                                    pos ? ", " : "", k->def.backend);
    }
    if (n == 0)
        mxk_set_error(MXK_ERR_NOT_FOUND, "operator '%s' has no kernel for device type %s",
                      op->def.name, mxk_dev_type_name(dev_type));
    else
        mxk_set_error(MXK_ERR_UNSUPPORTED,
                      "operator '%s': no kernel for device type %s supports this configuration; "
                      "backends tried: %s",
                      op->def.name, mxk_dev_type_name(dev_type), backends);
    return NULL;
}

mxk_status mxk_resolve_backend(const char *op, int32_t dev_type, const char **backend) {
    const mxk_op_entry *e = mxki_registry_find_op(op);
    *backend = NULL;
    if (e == NULL)
        return mxki_registry_unknown_op(op);
    const mxk_kernel_entry *k =
        mxki_registry_resolve_kernel(e, dev_type, NULL, NULL, NULL, NULL, 0, NULL);
    if (k == NULL)
        return mxki_last_error_code();
    *backend = k->def.backend;
    return MXK_OK;
}
