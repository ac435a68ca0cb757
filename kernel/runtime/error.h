/*
 * Kernel-internal error handling: the per-call error sink handed to plugins,
 * and the thread-local "last error" behind the public mxk_get_last_error().
 */
#ifndef MXK_KERNEL_ERROR_H
#define MXK_KERNEL_ERROR_H

#include "mxk.h"

/** Longest message kept (bytes, including the terminator); longer ones are truncated. */
#define MXK_ERROR_MSG_MAX 2048

/**
 * Definition of the ABI's opaque error sink: a status and a message buffer.
 * Lives on the caller's stack for one call; no allocation when all is well.
 */
struct mxk_error_sink {
    mxk_status code;
    char msg[MXK_ERROR_MSG_MAX];
};

/** Clears a sink (code MXK_OK, empty message). */
void mxki_error_sink_clear(mxk_error_sink *sink);

/**
 * Records `code` and a printf-style message in `sink` (overwriting what was there)
 * and returns `code`. A NULL sink is allowed (the message is dropped).
 */
mxk_status mxki_sink_set(mxk_error_sink *sink, mxk_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Same as mxki_sink_set with a va_list. */
mxk_status mxki_sink_vset(mxk_error_sink *sink, mxk_status code, const char *fmt,
                          __builtin_va_list ap);

/* mxk_set_error and mxk_error_add_context (the thread's last error) are public: mxk.h. */

/**
 * Sets the calling thread's last error from a sink, with a printf-style prefix
 * ("FullyConnected (node fc1): ") placed before the sink's message, and returns
 * the sink's code (MXK_ERR_INTERNAL if the sink says MXK_OK, which means a plugin
 * returned an error without describing it).
 */
mxk_status mxki_set_error_from_sink(const mxk_error_sink *sink, const char *prefix_fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** The calling thread's last error message ("" if none). Valid until the next error on this thread.
 */
const char *mxki_last_error_message(void);

/** The calling thread's last error code (MXK_OK if none). */
mxk_status mxki_last_error_code(void);

/* mxk_status_name is public (mxk.h). */

#endif /* MXK_KERNEL_ERROR_H */
