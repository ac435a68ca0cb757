/*
 * onednn plugin: Convolution and Deconvolution, declarations shared by
 * dn_conv_param.c (attributes, geometry, supports), dn_conv_port.c (primitives
 * with user scratchpads, layout reorders, weight caches) and dn_conv.c (state,
 * forward, backward, registration).
 *
 * The parameters (mxk_conv_param) and the output-size rule are shared with the
 * cuda plugin (plugins/common/mxk_conv_param.h).
 * Semantics are the operators' (cpu-blas op_convolution.c; upstream MXNet
 * src/operator/nn/convolution-inl.h, deconvolution-inl.h); the mapping onto
 * oneDNN follows MXNet 1.9.1's src/operator/nn/mkldnn/mkldnn_convolution.cc and
 * mkldnn_deconvolution.cc.
 */
#ifndef MXK_ONEDNN_DN_CONV_H
#define MXK_ONEDNN_DN_CONV_H

#include "mxk_conv_param.h"
#include "onednn.h"

/**
 * oneDNN's view of one bound configuration: the logical dims of src (N, C,
 * x...), dst (N, F, o...) and weights ((G, F/G, C/G, k...) with groups, else
 * (F, C, k...); "o" is the output channels of either operator), and the
 * strides, dilations (MXNet's minus 1) and paddings (left = right = MXNet's pad,
 * or the pad derived from target_shape) of the descriptor.
 */
typedef struct dn_cv_geom {
    int src_nd, wei_nd;
    dnnl_dims_t src, dst, wei;
    dnnl_dims_t strides, dilates, pad;
} dn_cv_geom;

/** parse_param of Convolution (dn_conv_param.c). Errors: mxk_sdk_attr_*'s, out of memory. */
mxk_status dn_cv_parse_conv(const mxk_attrs *attrs, void **out, mxk_error_sink *err);

/** parse_param of Deconvolution (dn_conv_param.c). */
mxk_status dn_cv_parse_deconv(const mxk_attrs *attrs, void **out, mxk_error_sink *err);

/**
 * The geometry of `p` on data of shape `data` (dn_conv_param.c); 1 when the
 * configuration maps onto oneDNN (data of nd + 2 non-zero dims, groups dividing
 * both channel counts, a positive output size, Deconvolution's adj below the
 * stride and target_shape reachable, as cpu-blas's shape inference demands), 0
 * otherwise (g is then unspecified).
 */
int dn_cv_geom_of(const mxk_conv_param *p, const mxk_shape *data, dn_cv_geom *g);

/** `supports` of both (dn_conv_param.c). */
int32_t dn_cv_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                       uint32_t num_in);

/**
 * One tensor's crossing between mxk's layout (`user`) and a primitive's
 * (`prim`): `reorder` converts user to prim for an input (to_user 0) or prim to
 * user for an output (to_user 1); NULL when the two descriptors are equal.
 */
typedef struct dn_cv_port {
    dnnl_memory_desc_t user;
    dnnl_memory_desc_t prim;
    dnnl_primitive_t reorder;
    int to_user;
} dn_cv_port;

/**
 * Weights in a primitive's layout, reordered into `buf` (owned, malloc'd when
 * the port reorders) from the array (`data`, `version`) of the last reorder;
 * version 0 (untracked) never hits.
 */
typedef struct dn_cv_wcache {
    dn_cv_port port;
    void *buf;
    const void *data;
    uint64_t version;
} dn_cv_wcache;

/* --- dn_conv_port.c: primitives with user scratchpads, layout ports, weight caches --- */

/** Creates a primitive (descriptor `desc`, or a reorder from/to) with a user scratchpad. */
mxk_status dn_cv_make(const void *desc, const dnnl_memory_desc_t *from,
                      const dnnl_memory_desc_t *to, const_dnnl_primitive_desc_t hint,
                      const char *what, dnnl_primitive_desc_t *pd_out, dnnl_primitive_t *prim,
                      mxk_error_sink *err);

/** Sets up a port between mxk's descriptor and the one `pd` wants for `what`. */
mxk_status dn_cv_port_init(dn_cv_port *pt, const dnnl_memory_desc_t *user,
                           const_dnnl_primitive_desc_t pd, dnnl_query_t what, int to_user,
                           mxk_error_sink *err);

/** Releases a port's reorder. */
void dn_cv_port_free(dn_cv_port *pt);

/** Runs a port's reorder from `from` to `to`. */
mxk_status dn_cv_port_run(const mxk_op_ctx *ctx, const dn_cv_port *pt, const void *from, void *to,
                          mxk_error_sink *err);

/** Where the primitive finds input `data` (itself, or its reorder into scratch `slot`). */
mxk_status dn_cv_port_in(const mxk_op_ctx *ctx, const dn_cv_port *pt, const void *data, int slot,
                         void **out, mxk_error_sink *err);

/** Where the primitive writes output `data` (itself, or scratch `slot`); NULL when out of memory.
 */
void *dn_cv_port_out(const dn_cv_port *pt, void *data, int slot, mxk_error_sink *err);

/** Sets up a weight cache (its port and buffer). */
mxk_status dn_cv_wcache_init(dn_cv_wcache *c, const dnnl_memory_desc_t *user,
                             const_dnnl_primitive_desc_t pd, dnnl_query_t what,
                             mxk_error_sink *err);

/** Releases a weight cache. */
void dn_cv_wcache_free(dn_cv_wcache *c);

/** The weights in the cache's layout, reordered unless (data, version) matches. */
mxk_status dn_cv_wcache_get(const mxk_op_ctx *ctx, dn_cv_wcache *c, const mxk_tensor *w, void **out,
                            mxk_error_sink *err);

#endif /* MXK_ONEDNN_DN_CONV_H */
