/* The trainer's error messages: mxkt_error, mxkt_kernel_error, mxkt_last_error. */
#include <stdarg.h>
#include <stdio.h>

#include "train_internal.h"

/** This thread's last message of mxk_train ("" when the kernel's applies). */
static _Thread_local char last_error[1024];

/** Records a message of this library and returns `st`. */
mxk_status mxkt_error(mxk_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return st;
}

/** Records "<what>: <kernel's last error>" and returns `st`. */
mxk_status mxkt_kernel_error(mxk_status st, const char *what) {
    char tmp[900];
    snprintf(tmp, sizeof tmp, "%s", mxk_get_last_error());
    return mxkt_error(st, "%s: %s", what, tmp);
}

/** The last error message of this library on the calling thread. */
const char *mxkt_last_error(void) {
    return last_error[0] ? last_error : mxk_get_last_error();
}
