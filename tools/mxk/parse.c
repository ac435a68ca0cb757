/*
 * Option-value parsers of the `mxk` command line (parse.h): numbers with range
 * checks, --shape, --ctx, --metrics, --lr-step-epochs and --image-shape. Lists are walked in
 * place, entry by entry, so that no value is cut to a buffer's size.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse.h"

/**
 * Parses the `len` bytes at s as decimal digits in [0, max]. Returns 1 and sets
 * *out on success, 0 for no digits, another byte or a value above max.
 */
static int parse_digits(const char *s, size_t len, uint64_t max, uint64_t *out) {
    if (len == 0)
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        uint64_t d = (uint64_t)(s[i] - '0');
        if (d > max || v > (max - d) / 10) /* d > max: max - d would wrap */
            return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

int cli_parse_uint(const char *s, uint64_t max, uint64_t *out) {
    return parse_digits(s, strlen(s), max, out);
}

int cli_parse_real(const char *s, double *out) {
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

/** Length of the list entry starting at s (up to the next ',' or the end). */
static size_t entry_len(const char *s) {
    return strcspn(s, ",");
}

int cli_parse_shape_option(const char *s, size_t *name_len, mxk_shape *shape) {
    const char *eq = strchr(s, '=');
    if (eq == NULL || eq == s)
        return 0;
    const char *p = eq + 1;
    size_t n = strlen(p);
    if (n > 255)
        return 0;
    if (n >= 2 && p[0] == '(' && p[n - 1] == ')') {
        p++;
        n -= 2;
    }
    mxk_shape out;
    memset(&out, 0, sizeof out);
    for (size_t at = 0;; at++) {
        size_t len = strcspn(p + at, ",");
        if (len > n - at)
            len = n - at;
        uint64_t d = 0;
        if (out.ndim >= MXK_MAX_NDIM || !parse_digits(p + at, len, INT64_MAX, &d) || d == 0)
            return 0;
        out.dims[out.ndim++] = (int64_t)d;
        at += len;
        if (at >= n)
            break;
    }
    *name_len = (size_t)(eq - s);
    *shape = out;
    return 1;
}

int cli_parse_ctx(const char *s, mxk_context *ctx, uint32_t *n) {
    *n = 0;
    for (const char *p = s;; p++) {
        size_t len = entry_len(p);
        mxk_context c = {0, 0};
        if (len >= 3 && strncmp(p, "cpu", 3) == 0)
            c.dev_type = MXK_DEV_CPU;
        else if (len >= 3 && strncmp(p, "gpu", 3) == 0)
            c.dev_type = MXK_DEV_GPU;
        else
            return 0;
        const char *id = p + 3;
        size_t id_len = len - 3;
        if (id_len > 0 && id[0] == ':') {
            id++;
            id_len--;
        } else if (id_len >= 2 && id[0] == '(' && id[id_len - 1] == ')') {
            id++;
            id_len -= 2;
        } else if (id_len > 0) {
            return 0;
        }
        uint64_t v = 0;
        if (id != p + 3 && !parse_digits(id, id_len, CLI_MAX_DEV_ID, &v))
            return 0;
        c.dev_id = (int32_t)v;
        if (*n >= MXKT_MAX_CTX)
            return 0;
        ctx[(*n)++] = c;
        p += len;
        if (*p == '\0')
            return 1;
    }
}

int cli_parse_metrics(const char *s, mxkt_metric *ms, uint32_t *n, char *msg, size_t size) {
    static const char topk[] = "top_k_accuracy_";
    const size_t topk_len = sizeof topk - 1;
    *n = 0;
    if (*s == '\0') {
        snprintf(msg, size, "--metrics is empty");
        return 0;
    }
    for (const char *p = s;; p++) {
        size_t len = entry_len(p);
        if (len == 0) {
            snprintf(msg, size, "empty --metrics entry in '%s'", s);
            return 0;
        }
        if (*n >= CLI_MAX_METRICS) {
            snprintf(msg, size, "at most %d --metrics entries", CLI_MAX_METRICS);
            return 0;
        }
        char name[64];
        uint64_t k = 0;
        if (len > topk_len && strncmp(p, topk, topk_len) == 0) {
            if (!parse_digits(p + topk_len, len - topk_len, INT32_MAX, &k)) {
                snprintf(msg, size, "bad --metrics entry '%.*s': K must be an integer up to %d",
                         (int)len, p, INT32_MAX);
                return 0;
            }
            snprintf(name, sizeof name, "%.*s", (int)topk_len - 1, topk);
        } else if (len < sizeof name) {
            snprintf(name, sizeof name, "%.*s", (int)len, p);
        } else {
            snprintf(name, sizeof name, "%.40s...", p);
        }
        if (mxkt_metric_create(name, (int32_t)k, &ms[*n]) != MXK_OK) {
            snprintf(msg, size, "%s", mxkt_last_error());
            return 0;
        }
        (*n)++;
        p += len;
        if (*p == '\0')
            return 1;
    }
}

int cli_parse_step_epochs(const char *s, int64_t *epochs, int32_t *n, char *msg, size_t size) {
    *n = 0;
    if (*s == '\0')
        return 1;
    for (const char *p = s;; p++) {
        size_t len = entry_len(p);
        uint64_t e = 0;
        if (!parse_digits(p, len, CLI_MAX_EPOCHS, &e) || e < 1) {
            snprintf(msg, size, "bad --lr-step-epochs entry '%.*s' (an epoch from 1 to %d)",
                     (int)len, p, CLI_MAX_EPOCHS);
            return 0;
        }
        if (*n >= MXKT_MAX_STEPS) {
            snprintf(msg, size, "at most %d --lr-step-epochs entries", MXKT_MAX_STEPS);
            return 0;
        }
        epochs[(*n)++] = (int64_t)e;
        p += len;
        if (*p == '\0')
            return 1;
    }
}

int cli_parse_image_shape(const char *s, int64_t dims[3]) {
    const char *p = s;
    for (int k = 0; k < 3; k++) {
        size_t len = entry_len(p);
        uint64_t d = 0;
        if (!parse_digits(p, len, CLI_MAX_IMAGE_DIM, &d) || d == 0)
            return 0;
        dims[k] = (int64_t)d;
        p += len;
        if (k < 2 && *p++ != ',')
            return 0;
    }
    return *p == '\0';
}
