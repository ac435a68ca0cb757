/*
 * mxk SDK: the host table, errors and struct-size checks for plugin authors.
 *
 * Header-only (static inline), depends on abi/ only. A plugin stores the host
 * table it receives in mxk_plugin_init with mxk_sdk_set_host(args->host); every
 * other SDK helper that reports an error or reads an attribute goes through it.
 *
 * The stored pointer is one hidden, weak variable per shared object: every
 * translation unit of a plugin that includes this header sees the same value,
 * and two plugins never share it (hidden visibility keeps it out of the dynamic
 * symbol table). Setting it is not synchronised: do it in init, before the
 * kernel can call any of the plugin's callbacks.
 */
#ifndef MXK_SDK_HOST_H
#define MXK_SDK_HOST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "mxk_plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Size of the buffer the SDK formats messages into; longer messages are truncated. */
#define MXK_SDK_MSG_MAX 1024

/**
 * The plugin's copy of the host table (one per shared object; see the file
 * comment). Do not use directly: call mxk_sdk_set_host / mxk_sdk_host.
 */
__attribute__((weak, visibility("hidden"))) const mxk_host_api *mxk_sdk_host_ptr_ = NULL;

/**
 * Stores the host table handed to mxk_plugin_init (args->host) for the SDK
 * helpers. The table is owned by the kernel and valid until process exit; the
 * SDK only keeps the pointer. Call once, in init, before registering anything.
 */
static inline void mxk_sdk_set_host(const mxk_host_api *host) {
    mxk_sdk_host_ptr_ = host;
}

/** The host table stored by mxk_sdk_set_host, or NULL before it was called. */
static inline const mxk_host_api *mxk_sdk_host(void) {
    return mxk_sdk_host_ptr_;
}

/**
 * True when the growable struct at `ptr` (which starts with uint32_t struct_size)
 * is large enough to contain `field` of `type`: use before reading a slot or
 * field that a newer minor added, e.g. MXK_SDK_HAS_FIELD(ctx, mxk_op_ctx, num_threads).
 * False for a NULL pointer.
 */
#define MXK_SDK_HAS_FIELD(ptr, type, field)                                                        \
    ((ptr) != NULL &&                                                                              \
     (size_t)(ptr)->struct_size >= offsetof(type, field) + sizeof(((type *)0)->field))

/**
 * Evaluates `expr` (an mxk_status) and returns it from the enclosing function
 * when it is not MXK_OK. The message is already in the sink; nothing is added.
 */
#define MXK_SDK_CHECK(expr)                                                                        \
    do {                                                                                           \
        mxk_status mxk_sdk_check_st_ = (expr);                                                     \
        if (mxk_sdk_check_st_ != MXK_OK)                                                           \
            return mxk_sdk_check_st_;                                                              \
    } while (0)

/**
 * Writes `code` and a message (vprintf-style) into the kernel-owned sink `err`
 * through host->error and returns `code`. The message is formatted into a local
 * buffer of MXK_SDK_MSG_MAX bytes first (the host's error function has no va_list
 * form). Without a stored host table or with a NULL sink only `code` is returned.
 */
static inline mxk_status mxk_sdk_verror(mxk_error_sink *err, mxk_status code, const char *fmt,
                                        va_list ap) {
    const mxk_host_api *host = mxk_sdk_host_ptr_;
    char buf[MXK_SDK_MSG_MAX];
    if (host == NULL || host->error == NULL || err == NULL)
        return code;
    vsnprintf(buf, sizeof buf, fmt, ap);
    return host->error(err, code, "%s", buf);
}

/**
 * Writes `code` and a printf-style message into `err`; returns `code`, so
 * `return mxk_sdk_error(err, MXK_ERR_SHAPE, "...")` is the idiom. Messages say
 * what was wrong and where (argument name, expected vs got); the kernel adds the
 * operator and node names.
 */
__attribute__((format(printf, 3, 4))) static inline mxk_status
mxk_sdk_error(mxk_error_sink *err, mxk_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    mxk_status st = mxk_sdk_verror(err, code, fmt, ap);
    va_end(ap);
    return st;
}

/**
 * Logs a printf-style message at `level` through host->log (which prefixes the
 * plugin's name); before mxk_sdk_set_host it goes to stderr.
 */
__attribute__((format(printf, 2, 3))) static inline void mxk_sdk_log(mxk_log_level level,
                                                                     const char *fmt, ...) {
    char buf[MXK_SDK_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    const mxk_host_api *host = mxk_sdk_host_ptr_;
    if (host != NULL && host->log != NULL)
        host->log(level, "%s", buf);
    else
        fprintf(stderr, "mxk plugin: %s\n", buf);
}

/** Offset-end of a slot of mxk_host_api, for mxk_sdk_check_host. */
#define MXK_SDK_HOST_SLOT_END(slot)                                                                \
    (offsetof(mxk_host_api, slot) + sizeof(((mxk_host_api *)0)->slot))

/**
 * Checks the host table handed to init: non-NULL, same ABI major is implied by
 * the load, and large enough to hold every slot up to and including `last_slot`
 * (pass the offset-end of the newest slot the plugin uses, e.g.
 * MXK_SDK_HOST_SLOT_END(async_complete)). Returns MXK_ERR_ABI with the sizes in
 * the message otherwise.
 */
static inline mxk_status mxk_sdk_check_host(const mxk_host_api *host, size_t last_slot_end,
                                            mxk_error_sink *err) {
    if (host == NULL)
        return MXK_ERR_ABI;
    if ((size_t)host->struct_size < last_slot_end) {
        if ((size_t)host->struct_size < MXK_SDK_HOST_SLOT_END(error) || host->error == NULL)
            return MXK_ERR_ABI; /* cannot even report */
        return host->error(err, MXK_ERR_ABI,
                           "host table too small: %u bytes, the plugin needs %zu (host minor %u)",
                           (unsigned)host->struct_size, last_slot_end, (unsigned)host->abi_minor);
    }
    return MXK_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* MXK_SDK_HOST_H */
