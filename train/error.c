/* The trainer's error messages: mxkt_kernel_error and mxkt_last_error, on the kernel's one error
 * channel. */
#include "train_internal.h"

/** Records "<what>: <kernel's last error>" and returns `st`. */
mxk_status mxkt_kernel_error(mxk_status st, const char *what) {
    mxk_error_add_context("%s", what);
    return st;
}

/** The calling thread's last error: the kernel's channel. */
const char *mxkt_last_error(void) {
    return mxk_get_last_error();
}
