/*
 * Kernel-internal reading of settings from the environment (MXK_* variables).
 */
#ifndef MXK_KERNEL_ENV_H
#define MXK_KERNEL_ENV_H

#include <stdint.h>

#include "mxk.h"

/**
 * Reads environment variable `name` as a decimal integer in [min, max] into *out.
 * Unset or empty: *out = dflt and MXK_OK. Blanks (spaces, tabs) around the number
 * are allowed; a sign "-", other characters or a value out of range are not: then
 * *out = dflt and MXK_ERR_INVALID_ARGUMENT is returned with the thread's last error
 * set to "<who>: NAME=\"VALUE\" is invalid: expected an integer in [MIN, MAX]"
 * (who, e.g. "storage", names the part of the kernel that reads the variable).
 */
mxk_status mxk_env_uint64(const char *who, const char *name, uint64_t dflt, uint64_t min,
                          uint64_t max, uint64_t *out);

#endif /* MXK_KERNEL_ENV_H */
