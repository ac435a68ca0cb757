/*
 * The error channel: the thread-local last-error message of mxk_get_last_error and
 * status names (see error.h).
 */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local mxk_status tl_code = MXK_OK;
static _Thread_local char tl_msg[MXK_ERROR_MSG_MAX];

void mxki_error_sink_clear(mxk_error_sink *sink) {
    sink->code = MXK_OK;
    sink->msg[0] = '\0';
}

mxk_status mxki_sink_vset(mxk_error_sink *sink, mxk_status code, const char *fmt, va_list ap) {
    if (sink == NULL)
        return code;
    sink->code = code;
    vsnprintf(sink->msg, sizeof sink->msg, fmt, ap);
    return code;
}

mxk_status mxki_sink_set(mxk_error_sink *sink, mxk_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    mxki_sink_vset(sink, code, fmt, ap);
    va_end(ap);
    return code;
}

mxk_status mxk_set_error(mxk_status code, const char *fmt, ...) {
    /* Formatted aside first: an argument may be the message itself (a caller
     * wrapping mxk_get_last_error()). */
    char msg[MXK_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tl_code = code;
    memcpy(tl_msg, msg, sizeof msg);
    return code;
}

mxk_status mxk_error_add_context(const char *fmt, ...) {
    char context[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(context, sizeof context, fmt, ap);
    va_end(ap);
    return mxk_set_error(tl_code == MXK_OK ? MXK_ERR_INTERNAL : tl_code, "%s: %s", context, tl_msg);
}

mxk_status mxki_set_error_from_sink(const mxk_error_sink *sink, const char *prefix_fmt, ...) {
    char prefix[512];
    va_list ap;
    va_start(ap, prefix_fmt);
    vsnprintf(prefix, sizeof prefix, prefix_fmt, ap);
    va_end(ap);
    mxk_status code = sink->code == MXK_OK ? MXK_ERR_INTERNAL : sink->code;
    const char *msg = sink->msg[0] ? sink->msg : "error reported without a message";
    return mxk_set_error(code, "%s%s", prefix, msg);
}

const char *mxki_last_error_message(void) {
    return tl_msg;
}

mxk_status mxki_last_error_code(void) {
    return tl_code;
}

const char *mxk_status_name(mxk_status code) {
    switch (code) {
    case MXK_OK:
        return "MXK_OK";
    case MXK_ERR_INVALID_ARGUMENT:
        return "MXK_ERR_INVALID_ARGUMENT";
    case MXK_ERR_SHAPE:
        return "MXK_ERR_SHAPE";
    case MXK_ERR_TYPE:
        return "MXK_ERR_TYPE";
    case MXK_ERR_NOT_FOUND:
        return "MXK_ERR_NOT_FOUND";
    case MXK_ERR_OUT_OF_MEMORY:
        return "MXK_ERR_OUT_OF_MEMORY";
    case MXK_ERR_UNSUPPORTED:
        return "MXK_ERR_UNSUPPORTED";
    case MXK_ERR_IO:
        return "MXK_ERR_IO";
    case MXK_ERR_FORMAT:
        return "MXK_ERR_FORMAT";
    case MXK_ERR_ABI:
        return "MXK_ERR_ABI";
    case MXK_ERR_DUPLICATE:
        return "MXK_ERR_DUPLICATE";
    case MXK_ERR_BACKEND:
        return "MXK_ERR_BACKEND";
    case MXK_ERR_STATE:
        return "MXK_ERR_STATE";
    case MXK_ERR_INTERNAL:
        return "MXK_ERR_INTERNAL";
    }
    return "MXK_ERR_UNKNOWN";
}
