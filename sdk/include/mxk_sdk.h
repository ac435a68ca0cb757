/*
 * mxk SDK: helpers for plugin authors (custom operators, backends). Include this
 * one header; it includes the plugin ABI (abi/mxk_plugin.h) and every helper:
 *
 *   mxk_sdk_host.h      storing the host table, errors (mxk_sdk_error,
 *                       MXK_SDK_CHECK), logging, struct-size checks
 *   mxk_sdk_dtype.h     dtype names and sizes, type inference
 *   mxk_sdk_shape.h     shape formatting, counts, merging, shape inference
 *   mxk_sdk_attr.h      typed attribute getters naming the attribute, options
 *   mxk_sdk_req.h       float32 stores through write requests (NULL/WRITE/INPLACE/ADD)
 *   mxk_sdk_register.h  zero-filled definitions with sizes set, attribute
 *                       schema initialiser, in-place and resource helpers
 *   mxk_sdk_half.h      float16 conversions
 *
 * Everything is header-only (static inline) and depends only on abi/; a plugin
 * never links libmxk. Build with the include paths abi/ and sdk/include.
 *
 * Minimal plugin:
 *   MXK_PLUGIN_EXPORT mxk_status mxk_plugin_init(const mxk_plugin_init_args *a,
 *                                                mxk_error_sink *err) {
 *       mxk_sdk_set_host(a->host);
 *       mxk_op_def def;
 *       mxk_sdk_op_def_init(&def);
 *       def.name = "MyOp"; def.infer_shape = my_infer_shape;
 *       MXK_SDK_CHECK(a->registrar->register_op(a->registrar, &def, err));
 *       ...
 *   }
 */
#ifndef MXK_SDK_H
#define MXK_SDK_H

#include "mxk_plugin.h"

#include "mxk_sdk_host.h"
#include "mxk_sdk_dtype.h"
#include "mxk_sdk_shape.h"
#include "mxk_sdk_attr.h"
#include "mxk_sdk_req.h"
#include "mxk_sdk_register.h"
#include "mxk_sdk_half.h"

#endif /* MXK_SDK_H */
