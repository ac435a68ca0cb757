/*
 * Reading of integer settings from the environment (see env.h).
 */
#include "env.h"

#include "error.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

/** Skips spaces and tabs. */
static const char *skip_blanks(const char *p) {
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/** Reads an integer setting from the environment (contract in env.h). */
mxk_status mxk_env_uint64(const char *who, const char *name, uint64_t dflt, uint64_t min,
                          uint64_t max, uint64_t *out) {
    *out = dflt;
    const char *s = getenv(name);
    if (s == NULL || s[0] == '\0')
        return MXK_OK;
    const char *p = skip_blanks(s);
    char *end = NULL;
    errno = 0;
    unsigned long long v = *p == '-' ? 0 : strtoull(p, &end, 10);
    if (end == NULL || end == p || errno != 0 || *skip_blanks(end) != '\0' || v < min || v > max)
        return mxk_set_error(MXK_ERR_INVALID_ARGUMENT,
                             "%s: %s=\"%s\" is invalid: expected an integer in [%" PRIu64
                             ", %" PRIu64 "]",
                             who, name, s, min, max);
    *out = (uint64_t)v;
    return MXK_OK;
}
