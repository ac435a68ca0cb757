/*
 * The error convention of the io-recordio format code (recordio.c, image.c):
 * functions return -1 with a message in the caller's buffer (msg, cap). Header
 * only, so that each file compiled alone (into libmxk, the plugin, the CLI, the
 * fuzz targets) has it.
 */
#ifndef MXK_IO_MSG_H
#define MXK_IO_MSG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/** Writes a printf-style message to (msg, cap) (nothing when cap is 0) and returns -1. */
__attribute__((format(printf, 3, 4))) static inline int io_fail(char *msg, size_t cap,
                                                                const char *fmt, ...) {
    if (cap > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, cap, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#endif /* MXK_IO_MSG_H */
