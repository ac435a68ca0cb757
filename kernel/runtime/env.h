/*
 * Kernel-internal reading of settings from the environment (MXK_* variables) and
 * the kernel's log (MXK_LOG_LEVEL), which reports bad settings.
 */
#ifndef MXK_KERNEL_ENV_H
#define MXK_KERNEL_ENV_H

#include <stdint.h>

#include "mxk.h"
#include "mxk_abi_host.h"

/**
 * Reads environment variable `name` as a decimal integer in [min, max] into *out.
 * Unset or empty: *out = dflt and MXK_OK. Blanks (spaces, tabs) around the number
 * are allowed; a sign "-", other characters or a value out of range are not: then
 * *out = dflt and MXK_ERR_INVALID_ARGUMENT is returned with the thread's last error
 * set to "<who>: NAME=\"VALUE\" is invalid: expected an integer in [MIN, MAX]"
 * (who, e.g. "storage", names the part of the kernel that reads the variable).
 * Use it for settings whose bad value must fail the operation that reads them
 * (engine worker counts, storage rounding). Thread-safe (getenv aside).
 */
mxk_status mxki_env_uint64(const char *who, const char *name, uint64_t dflt, uint64_t min,
                           uint64_t max, uint64_t *out);

/**
 * Reads `name` as mxki_env_uint64 does, for settings with no caller to fail
 * (MXK_NUM_THREADS): a bad value is ignored and `dflt` returned, and the first time
 * per variable (per process) a WARNING is logged:
 * "<who>: NAME=\"VALUE\" is invalid: expected an integer in [MIN, MAX]; it is ignored".
 * Never sets the thread's last error. Thread-safe.
 */
uint64_t mxki_env_uint64_or_warn(const char *who, const char *name, uint64_t dflt, uint64_t min,
                                 uint64_t max);

/**
 * The log threshold from MXK_LOG_LEVEL: "debug" (also traces the config search,
 * each plugin conf, dlopen, ABI negotiation and the kernel chosen per operator and
 * device type), "info" (default, also when unset or empty), "warning" or "error"
 * (silences warnings such as rejected plugin candidates). Any other value gives
 * the default and is warned about once: "log: MXK_LOG_LEVEL=\"VALUE\" is invalid:
 * expected debug, info, warning or error; it is ignored". Read at every call, so a
 * change takes effect at once.
 */
mxk_log_level mxki_env_log_level(void);

/**
 * Writes "[mxk LEVEL] message\n" to stderr (the kernel's log) when `level` is at or
 * above mxki_env_log_level(). The message is cut at 2047 bytes. Thread-safe (one
 * fprintf per line). Upstream: dmlc LOG(...) of MXNet.
 */
void mxki_log(mxk_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* MXK_KERNEL_ENV_H */
