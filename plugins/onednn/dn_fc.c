/* onednn plugin: placeholder until the family's kernels land (registers nothing). */
#include "onednn.h"

mxk_status dn_register_fc(mxk_registrar *reg, mxk_error_sink *err) {
    (void)reg;
    (void)err;
    return MXK_OK;
}
