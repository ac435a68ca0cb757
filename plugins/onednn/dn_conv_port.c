/*
 * onednn plugin: the convolution kernels' plumbing (dn_conv.h): primitives made
 * with a user-managed scratchpad, "ports" that carry a tensor between mxk's plain
 * layout and the layout a primitive chose (a reorder primitive made once), and
 * weight caches keyed by (data pointer, mxk_tensor.version) (oneDNN 2.x C API:
 * dnnl_reorder_primitive_desc_create, dnnl_primitive_attr_set_scratchpad_mode).
 *
 * Scratchpads are user-managed (dn_pd_create, onednn.h says why); dn_execute takes
 * them from the calling thread's scratch slot 3, which therefore never holds a
 * tensor across a primitive call.
 */
#include "dn_conv.h"

#include <stdlib.h>
#include <string.h>

/**
 * Creates a primitive descriptor for `desc` (an op descriptor, or NULL with
 * `from`/`to` for a reorder) with a user-managed scratchpad (dn_pd_create), and its
 * primitive. `what` names it in errors. Errors: dn_check's.
 */
mxk_status dn_cv_make(const void *desc, const dnnl_memory_desc_t *from,
                      const dnnl_memory_desc_t *to, const_dnnl_primitive_desc_t hint,
                      const char *what, dnnl_primitive_desc_t *pd_out, dnnl_primitive_t *prim,
                      mxk_error_sink *err) {
    dnnl_primitive_desc_t pd = NULL;
    mxk_status rc = dn_check(
        desc ? dn_pd_create(&pd, desc, hint) : dn_reorder_pd_create(&pd, from, to), what, err);
    if (rc == MXK_OK)
        rc = dn_primitive(prim, pd, what, err);
    if (pd_out != NULL && rc == MXK_OK)
        *pd_out = pd;
    else
        dnnl_primitive_desc_destroy(pd);
    return rc;
}

/** Releases a port's reorder (NULL allowed). */
void dn_cv_port_free(dn_cv_port *pt) {
    dnnl_primitive_destroy(pt->reorder);
    pt->reorder = NULL;
}

/**
 * Sets up a port between mxk's descriptor `user` and the descriptor that `pd`
 * wants for `what`; the reorder primitive is made when they differ. Errors:
 * dn_check's.
 */
mxk_status dn_cv_port_init(dn_cv_port *pt, const dnnl_memory_desc_t *user,
                           const_dnnl_primitive_desc_t pd, dnnl_query_t what, int to_user,
                           mxk_error_sink *err) {
    pt->user = *user;
    pt->prim = *dn_pd_md(pd, what, 0);
    pt->to_user = to_user;
    pt->reorder = NULL;
    if (dnnl_memory_desc_equal(&pt->user, &pt->prim))
        return MXK_OK;
    return dn_cv_make(NULL, to_user ? &pt->prim : &pt->user, to_user ? &pt->user : &pt->prim, NULL,
                      "reorder", NULL, &pt->reorder, err);
}

/** Runs a port's reorder from `from` to `to` (laid out as its direction says). */
mxk_status dn_cv_port_run(const mxk_op_ctx *ctx, const dn_cv_port *pt, const void *from, void *to,
                          mxk_error_sink *err) {
    dn_arg a[] = {{DNNL_ARG_FROM, pt->to_user ? &pt->prim : &pt->user, (void *)from},
                  {DNNL_ARG_TO, pt->to_user ? &pt->user : &pt->prim, to}};
    return dn_execute(ctx, pt->reorder, 2, a, err);
}

/**
 * Where the primitive finds input `data`: the data itself, or its reorder into
 * the calling thread's scratch `slot`. Errors: dn_scratch's, dn_execute's.
 */
mxk_status dn_cv_port_in(const mxk_op_ctx *ctx, const dn_cv_port *pt, const void *data, int slot,
                         void **out, mxk_error_sink *err) {
    *out = (void *)data;
    if (pt->reorder == NULL)
        return MXK_OK;
    *out = dn_scratch(slot, dnnl_memory_desc_get_size(&pt->prim), err);
    if (*out == NULL)
        return MXK_ERR_OUT_OF_MEMORY;
    return dn_cv_port_run(ctx, pt, data, *out, err);
}

/**
 * Where the primitive writes output `data`: the data itself, or scratch `slot`
 * (port_run then reorders it into data). NULL with MXK_ERR_OUT_OF_MEMORY.
 */
void *dn_cv_port_out(const dn_cv_port *pt, void *data, int slot, mxk_error_sink *err) {
    return pt->reorder == NULL ? data : dn_scratch(slot, dnnl_memory_desc_get_size(&pt->prim), err);
}

/** Sets up a weight cache: its port (an input) and, when that reorders, its buffer. */
mxk_status dn_cv_wcache_init(dn_cv_wcache *c, const dnnl_memory_desc_t *user,
                             const_dnnl_primitive_desc_t pd, dnnl_query_t what,
                             mxk_error_sink *err) {
    MXK_SDK_CHECK(dn_cv_port_init(&c->port, user, pd, what, 0, err));
    if (c->port.reorder == NULL)
        return MXK_OK;
    size_t bytes = (dnnl_memory_desc_get_size(&c->port.prim) + 63) & ~(size_t)63;
    if (posix_memalign(&c->buf, 64, bytes) != 0) {
        c->buf = NULL;
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN convolution: out of memory");
    }
    return MXK_OK;
}

/** Releases a weight cache. */
void dn_cv_wcache_free(dn_cv_wcache *c) {
    dn_cv_port_free(&c->port);
    free(c->buf);
    c->buf = NULL;
}

/**
 * The weights `w` in the cache's layout: w's data when no reorder is needed,
 * else the cached copy, reordered again unless (data, version) matches the last
 * reorder with a known version. Errors: dn_execute's.
 */
mxk_status dn_cv_wcache_get(const mxk_op_ctx *ctx, dn_cv_wcache *c, const mxk_tensor *w, void **out,
                            mxk_error_sink *err) {
    *out = w->data;
    if (c->port.reorder == NULL)
        return MXK_OK;
    *out = c->buf;
    uint64_t version = MXK_SDK_HAS_FIELD(w, mxk_tensor, version) ? w->version : 0;
    if (version != 0 && c->data == w->data && c->version == version)
        return MXK_OK;
    c->data = NULL;
    MXK_SDK_CHECK(dn_cv_port_run(ctx, &c->port, w->data, c->buf, err));
    c->data = w->data;
    c->version = version;
    return MXK_OK;
}
