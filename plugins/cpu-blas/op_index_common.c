/*
 * cpu-blas plugin: helpers of the index group (see op_index.h): optional-integer
 * attributes, index conversion, and the common start of a backward. Optional values follow
 * dmlc-core's dmlc::optional
 * ("None" = absent, include/dmlc/optional.h); tuples follow mxnet::Tuple's text
 * form (include/mxnet/tuple.h: "(a,b)", "[a,b]", a bare "a", trailing comma).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "op_index.h"

/** Parses one optional integer at *s (blanks skipped); advances *s. 1 on success. */
static int idx_parse_item(const char **s, int64_t *v, uint8_t *has) {
    const char *p = *s;
    while (isspace((unsigned char)*p))
        p++;
    if (strncmp(p, "None", 4) == 0) {
        *has = 0;
        *v = 0;
        *s = p + 4;
        return 1;
    }
    char *end;
    errno = 0;
    long long x = strtoll(p, &end, 10);
    if (end == p || errno != 0)
        return 0;
    *has = 1;
    *v = (int64_t)x;
    *s = end;
    return 1;
}

/** Optional integer attribute (see op_index.h). */
mxk_status cb_idx_attr_opt_int(const mxk_attrs *attrs, const char *key, int32_t *has,
                               int64_t *value, mxk_error_sink *err) {
    const char *raw = mxk_sdk_attr_raw(attrs, key), *p = raw;
    uint8_t h = 0;
    *has = 0;
    *value = 0;
    if (raw == NULL)
        return MXK_OK;
    if (!idx_parse_item(&p, value, &h))
        goto bad;
    while (isspace((unsigned char)*p))
        p++;
    if (*p != '\0')
        goto bad;
    *has = h;
    return MXK_OK;
bad:
    return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                         "attribute '%s': expected an integer or None, got '%s'", key, raw);
}

/** Tuple of optional integers (see op_index.h). */
mxk_status cb_idx_attr_opt_tuple(const mxk_attrs *attrs, const char *key, int32_t *n,
                                 int64_t *values, uint8_t *has, mxk_error_sink *err) {
    const char *raw = mxk_sdk_attr_raw(attrs, key), *p = raw;
    *n = 0;
    if (raw == NULL)
        return MXK_OK;
    while (isspace((unsigned char)*p))
        p++;
    char close = *p == '(' ? ')' : *p == '[' ? ']' : '\0';
    if (close != '\0')
        p++;
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (close != '\0' && *p == close) {
            p++;
            break;
        }
        if (close == '\0' && *p == '\0' && *n > 0)
            break;
        if (*n >= MXK_MAX_NDIM)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "attribute '%s': more than %d entries (Slicing axis exceeds data "
                                 "dimensions)",
                                 key, MXK_MAX_NDIM);
        if (!idx_parse_item(&p, &values[*n], &has[*n]))
            goto bad;
        (*n)++;
        while (isspace((unsigned char)*p))
            p++;
        if (*p == ',')
            p++;
        else if (*p != close)
            goto bad;
    }
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '\0')
        return MXK_OK;
bad:
    return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                         "attribute '%s': expected a tuple of integers or None, got '%s'", key,
                         raw);
}

/** Index position by mode (see op_index.h). */
int64_t cb_idx_pos(double v, int64_t size, cb_idx_mode mode) {
    double t = isnan(v) ? 0.0 : trunc(v);
    /* saturate far outside any axis: the clip/wrap below then stays in range */
    int64_t j = t <= -4e18  ? INT64_C(-4000000000000000000)
                : t >= 4e18 ? INT64_C(4000000000000000000)
                            : (int64_t)t;
    if (mode == CB_IDX_CLIP)
        return j <= 0 ? 0 : (j >= size ? size - 1 : j);
    j %= size;
    return j < 0 ? j + size : j;
}

/** Common start of a data-gradient backward (see op_index.h). */
mxk_status cb_idx_begin_backward(const mxk_backward_args *args, uint32_t num_in,
                                 const char *aux_name, const mxk_tensor **dy, const mxk_tensor **dx,
                                 mxk_error_sink *err) {
    *dy = *dx = NULL;
    MXK_SDK_CHECK(cb_check_backward_counts(args, num_in, 1, 1, err));
    if (num_in == 2)
        MXK_SDK_CHECK(cbt_zero_grad(args->in_grad[1], args->req[1], aux_name, err));
    if (args->req[0] == MXK_REQ_NULL)
        return MXK_OK;
    MXK_SDK_CHECK(cb_check_tensor(args->out_grad[0], "gradient of 'output'", err));
    MXK_SDK_CHECK(cb_check_tensor(args->in_grad[0], "gradient of argument 0", err));
    *dy = args->out_grad[0];
    *dx = args->in_grad[0];
    return MXK_OK;
}
