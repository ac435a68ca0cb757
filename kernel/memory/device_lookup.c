/*
 * Context names, validated device-backend lookup (see device_lookup.h) and the
 * public mxk_device_properties.
 */
#include "device_lookup.h"

#include "error.h"
#include "registry.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/** True for the device types of the ABI (mxk_dev_type). */
static bool known_dev_type(int32_t dev_type) {
    return dev_type == MXK_DEV_CPU || dev_type == MXK_DEV_GPU || dev_type == MXK_DEV_CPU_PINNED;
}

/** Formats ctx as "gpu(1)" / "device type 9(0)" (device_lookup.h). */
const char *mxki_ctx_format(mxk_context ctx, char *buf, size_t n) {
    if (known_dev_type(ctx.dev_type))
        snprintf(buf, n, "%s(%" PRId32 ")", mxk_dev_type_name(ctx.dev_type), ctx.dev_id);
    else
        snprintf(buf, n, "device type %" PRId32 "(%" PRId32 ")", ctx.dev_type, ctx.dev_id);
    return buf;
}

/** The validated backend of ctx, or NULL with the last error set (device_lookup.h). */
const mxk_device_def *mxki_device_lookup(const char *who, mxk_context ctx) {
    const mxk_device_def *def = mxki_registry_device(ctx.dev_type);
    if (def == NULL) {
        mxk_set_error(MXK_ERR_NOT_FOUND,
                      "%s: no device backend is registered for device type %" PRId32 " (%s)", who,
                      ctx.dev_type,
                      known_dev_type(ctx.dev_type) ? mxk_dev_type_name(ctx.dev_type)
                                                   : "unknown device type");
        return NULL;
    }
    int32_t count = def->device_count ? def->device_count() : 0;
    if (ctx.dev_id < 0 || ctx.dev_id >= count) {
        char cs[64];
        mxk_set_error(MXK_ERR_NOT_FOUND,
                      "%s: device %s does not exist: the %s backend has %" PRId32 " device(s)", who,
                      mxki_ctx_format(ctx, cs, sizeof cs), def->name ? def->name : "(unnamed)",
                      count);
        return NULL;
    }
    return def;
}

mxk_status mxk_device_properties(mxk_context ctx, mxk_device_props *out) {
    if (out == NULL)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "mxk_device_properties: out is NULL");
    memset(out, 0, sizeof *out);
    out->struct_size = sizeof *out;
    const mxk_device_def *def = mxki_device_lookup("mxk_device_properties", ctx);
    if (def == NULL)
        return mxki_last_error_code();
    mxk_error_sink sink;
    mxki_error_sink_clear(&sink);
    if (def->get_properties(ctx.dev_id, out, &sink) != MXK_OK) {
        char cs[64];
        mxk_status st = mxki_set_error_from_sink(
            &sink, "mxk_device_properties: %s: ", mxki_ctx_format(ctx, cs, sizeof cs));
        memset(out, 0, sizeof *out);
        return st;
    }
    out->name[sizeof out->name - 1] = '\0';
    return MXK_OK;
}
