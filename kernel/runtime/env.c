/*
 * Reading of settings from the environment and the kernel's log (see env.h).
 */
#include "env.h"

#include "error.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Skips spaces and tabs. */
static const char *skip_blanks(const char *p) {
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/**
 * Parses `s` as mxki_env_uint64 describes. Returns true with *out set, or false after
 * writing "<who>: NAME=\"VALUE\" is invalid: expected an integer in [MIN, MAX]" to msg.
 */
static bool parse_uint64(const char *who, const char *name, const char *s, uint64_t min,
                         uint64_t max, uint64_t *out, char *msg, size_t size) {
    const char *p = skip_blanks(s);
    char *end = NULL;
    errno = 0;
    unsigned long long v = *p == '-' ? 0 : strtoull(p, &end, 10);
    if (end == NULL || end == p || errno != 0 || *skip_blanks(end) != '\0' || v < min || v > max) {
        snprintf(msg, size,
                 "%s: %s=\"%s\" is invalid: expected an integer in [%" PRIu64 ", %" PRIu64 "]", who,
                 name, s, min, max);
        return false;
    }
    *out = (uint64_t)v;
    return true;
}

/** Reads an integer setting from the environment (contract in env.h). */
mxk_status mxki_env_uint64(const char *who, const char *name, uint64_t dflt, uint64_t min,
                           uint64_t max, uint64_t *out) {
    *out = dflt;
    const char *s = getenv(name);
    char msg[MXK_ERROR_MSG_MAX];
    if (s == NULL || s[0] == '\0' || parse_uint64(who, name, s, min, max, out, msg, sizeof msg))
        return MXK_OK;
    return mxk_set_error(MXK_ERR_INVALID_ARGUMENT, "%s", msg);
}

/** Variables already warned about (names are the callers' literals); guarded by mu. */
static struct {
    pthread_mutex_t mu;
    const char *names[32];
    size_t n;
} g_warned = {PTHREAD_MUTEX_INITIALIZER, {NULL}, 0};

/**
 * True the first time it is called for `name` (then false): whether to warn about
 * the variable. Past 32 distinct variables every call is true (there are fewer).
 */
static bool first_warning(const char *name) {
    bool first = true;
    pthread_mutex_lock(&g_warned.mu);
    for (size_t i = 0; i < g_warned.n && first; i++)
        first = strcmp(g_warned.names[i], name) != 0;
    if (first && g_warned.n < sizeof g_warned.names / sizeof g_warned.names[0])
        g_warned.names[g_warned.n++] = name;
    pthread_mutex_unlock(&g_warned.mu);
    return first;
}

/** Reads an integer setting, warning once about a bad value (contract in env.h). */
uint64_t mxki_env_uint64_or_warn(const char *who, const char *name, uint64_t dflt, uint64_t min,
                                 uint64_t max) {
    const char *s = getenv(name);
    uint64_t v = dflt;
    char msg[MXK_ERROR_MSG_MAX];
    if (s != NULL && s[0] != '\0' && !parse_uint64(who, name, s, min, max, &v, msg, sizeof msg)) {
        v = dflt;
        if (first_warning(name))
            mxki_log(MXK_LOG_WARNING, "%s; it is ignored", msg);
    }
    return v;
}

/** The log threshold from MXK_LOG_LEVEL (contract in env.h). */
mxk_log_level mxki_env_log_level(void) {
    static const char *const names[] = {"debug", "info", "warning", "error"};
    const char *s = getenv("MXK_LOG_LEVEL");
    if (s == NULL || s[0] == '\0')
        return MXK_LOG_INFO;
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0)
            return (mxk_log_level)i;
    /* Marked before logging, so the log's own read of the variable does not recurse. */
    if (first_warning("MXK_LOG_LEVEL"))
        mxki_log(MXK_LOG_WARNING,
                 "log: MXK_LOG_LEVEL=\"%s\" is invalid: expected debug, info, warning or error; "
                 "it is ignored",
                 s);
    return MXK_LOG_INFO;
}

/** Writes one log line (contract in env.h). */
void mxki_log(mxk_log_level level, const char *fmt, ...) {
    static const char *const names[] = {"DEBUG", "INFO", "WARNING", "ERROR"};
    if (level < mxki_env_log_level())
        return;
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "[mxk %s] %s\n", names[level >= 0 && level <= 3 ? level : 3], msg);
}
