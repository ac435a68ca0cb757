/*
 * onednn plugin: helpers of its kernels (dn_pool.c, dn_bn.c, dn_lrn.c,
 * dn_softmax.c, the conv family): parameter copies, the check of a tensor
 * argument, and a forward's workspace kept in a node's state for its backward
 * (max pooling, LRN).
 *
 * Workspace: oneDNN's max pooling and LRN backward read a workspace that only their
 * training forward writes (its layout is the implementation's own,
 * dnnl_query_workspace_md), where MXNet's operators keep nothing of the kind:
 * their backward reads the data (and output). The state keeps the workspace of
 * the last training forward with the data it was computed from, keyed by the
 * data's (pointer, write version) (abi/mxk_abi_op.h mxk_tensor.version: equal
 * keys mean equal contents). A backward whose data does not match the key (no
 * forward on this state yet, the data rewritten since, or a host that does not
 * track versions) recomputes the forward into the workspace first, so the
 * result never depends on the call order.
 *
 * Thread safety: a dn_ws belongs to one state, which the host never uses from
 * two calls at once.
 */
#ifndef MXK_DN_UTIL_H
#define MXK_DN_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "onednn.h"

/**
 * Allocates a copy of the `size` bytes at p as a kernel's parameter object
 * (parse_param), freed by dn_param_free. MXK_ERR_OUT_OF_MEMORY "oneDNN: out of
 * memory (parameters)".
 */
static inline mxk_status dn_param_dup(const void *p, size_t size, void **out, mxk_error_sink *err) {
    void *q = malloc(size);
    if (q == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN: out of memory (parameters)");
    memcpy(q, p, size);
    *out = q;
    return MXK_OK;
}

/** Frees a parameter object of dn_param_dup (free_param). */
static inline void dn_param_free(void *p) {
    free(p);
}

/**
 * 1 when primitive descriptor pd is one of oneDNN's reference implementations
 * (implementation name containing "ref"; also when it cannot be queried): the
 * kernels decline those where they are many times slower than cpu-blas.
 */
static inline int dn_pd_is_ref(const_dnnl_primitive_desc_t pd) {
    const char *impl = NULL;
    return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success ||
           impl == NULL || strstr(impl, "ref") != NULL;
}

/**
 * Checks that tensor t (named `what`, e.g. "argument 'data'") is present with
 * `n` elements. MXK_ERR_INVALID_ARGUMENT "oneDNN FAMILY: WHAT is missing" or
 * MXK_ERR_SHAPE "oneDNN FAMILY: WHAT has K elements, expected N".
 */
static inline mxk_status dn_check_tensor(const mxk_tensor *t, int64_t n, const char *family,
                                         const char *what, mxk_error_sink *err) {
    if (t == NULL || t->data == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "oneDNN %s: %s is missing", family,
                             what);
    if (dn_shape_size(&t->shape) != n)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "oneDNN %s: %s has %lld elements, expected %lld",
                             family, what, (long long)dn_shape_size(&t->shape), (long long)n);
    return MXK_OK;
}

/** A forward's workspace, its buffer and the key of the data its contents belong to. */
typedef struct dn_ws {
    const dnnl_memory_desc_t *md; /**< owned by the forward's pd; NULL: the primitive has none */
    void *data;                   /**< 64-byte aligned, owned; NULL without md */
    const void *src;              /**< data pointer of the forward that filled it; NULL: none */
    uint64_t src_version;         /**< its write version (never 0 when src is set) */
} dn_ws;

/**
 * Sets up the workspace of forward primitive descriptor pd (none when it has
 * none): md from dnnl_query_workspace_md, the buffer allocated. The md pointer
 * is pd's: keep pd alive while w is used. MXK_ERR_OUT_OF_MEMORY "oneDNN: out of
 * memory (workspace of N bytes)".
 */
static inline mxk_status dn_ws_init(dn_ws *w, const_dnnl_primitive_desc_t pd, mxk_error_sink *err) {
    const dnnl_memory_desc_t *md = dn_pd_md(pd, dnnl_query_workspace_md, 0);
    size_t bytes = md != NULL ? dnnl_memory_desc_get_size(md) : 0;
    if (bytes == 0)
        return MXK_OK;
    if (posix_memalign(&w->data, 64, bytes) != 0) {
        w->data = NULL;
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY,
                             "oneDNN: out of memory (workspace of %zu bytes)", bytes);
    }
    w->md = md;
    return MXK_OK;
}

/** The write version of tensor t, 0 when unknown (a host before ABI 1.2). */
static inline uint64_t dn_ws_version(const mxk_tensor *t) {
    return MXK_SDK_HAS_FIELD(t, mxk_tensor, version) ? t->version : 0;
}

/** Records that the workspace now holds the forward of `src` (forgotten when its version is 0). */
static inline void dn_ws_mark(dn_ws *w, const mxk_tensor *src) {
    uint64_t v = dn_ws_version(src);
    w->src = v != 0 ? src->data : NULL;
    w->src_version = v;
}

/** 1 when the workspace holds the forward of `src` (same pointer and write version). */
static inline int dn_ws_matches(const dn_ws *w, const mxk_tensor *src) {
    return w->src != NULL && w->src == src->data && w->src_version == dn_ws_version(src);
}

/** Frees the buffer. */
static inline void dn_ws_free(dn_ws *w) {
    free(w->data);
    w->data = NULL;
    w->md = NULL;
    w->src = NULL;
}

#endif /* MXK_DN_UTIL_H */
