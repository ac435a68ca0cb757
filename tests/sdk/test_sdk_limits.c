/*
 * The SDK's checked shape arithmetic and finite-attribute getter
 * (sdk/include/mxk_sdk_shape.h, mxk_sdk_attr.h) at their boundaries, with the
 * kernel's host table (as a plugin gets it): mxk_sdk_dim_mul / mxk_sdk_dim_add
 * accept exactly up to MXK_SDK_MAX_ELEMS = 2^60 and refuse past it, negatives and
 * int64 overflow with MXK_ERR_SHAPE and the exact message; shape counts skip
 * unknown dims; mxk_sdk_shape_assign refuses a too large expected shape and
 * leaves the slot alone; mxk_sdk_attr_float_finite refuses NaN and both
 * infinities, quoting the raw value; the host's attribute getters refuse a NULL
 * name or output.
 */
#include <stdint.h>

#include "attrs.h"
#include "error.h"
#include "host_api.h"
#include "mxk_sdk.h"
#include "testing.h"

/** A clear error sink. */
static mxk_error_sink sink(void) {
    mxk_error_sink e;
    mxki_error_sink_clear(&e);
    return e;
}

static void test_dim_mul_add(void) {
    mxk_error_sink e = sink();
    int64_t r = -1;
    CHECK_EQ_INT(mxk_sdk_dim_mul(INT64_C(1) << 30, INT64_C(1) << 30, &r, "x", &e), MXK_OK);
    CHECK_EQ_INT(r, MXK_SDK_MAX_ELEMS);
    CHECK_EQ_INT(mxk_sdk_dim_mul(0, INT64_MAX, &r, "x", &e), MXK_OK);
    CHECK_EQ_INT(r, 0);
    CHECK_EQ_INT(mxk_sdk_dim_mul(MXK_SDK_MAX_ELEMS, 2, &r, "rows * cols", &e), MXK_ERR_SHAPE);
    CHECK_EQ_INT(r, 0);
    CHECK_CONTAINS(e.msg, "rows * cols: 1152921504606846976 * 2 is too large (more than "
                          "1152921504606846976 elements)");
    e = sink();
    CHECK_EQ_INT(mxk_sdk_dim_mul(INT64_C(4294967296), INT64_C(4294967296), &r, "a * b", &e),
                 MXK_ERR_SHAPE); /* 2^64: int64 overflow, refused, not computed */
    CHECK_CONTAINS(e.msg, "a * b: 4294967296 * 4294967296 is too large");
    CHECK_EQ_INT(mxk_sdk_dim_mul(-1, 2, &r, "neg", &e), MXK_ERR_SHAPE);
    CHECK_EQ_INT(mxk_sdk_dim_add(MXK_SDK_MAX_ELEMS - 1, 1, &r, "x", &e), MXK_OK);
    CHECK_EQ_INT(r, MXK_SDK_MAX_ELEMS);
    e = sink();
    CHECK_EQ_INT(mxk_sdk_dim_add(MXK_SDK_MAX_ELEMS, 1, &r, "sum", &e), MXK_ERR_SHAPE);
    CHECK_CONTAINS(e.msg, "sum: 1152921504606846976 + 1 is too large (more than "
                          "1152921504606846976 elements)");
    CHECK_EQ_INT(mxk_sdk_dim_add(INT64_MAX, INT64_MAX, &r, "sum", &e), MXK_ERR_SHAPE);
    CHECK_EQ_INT(mxk_sdk_dim_add(1, -2, &r, "sum", &e), MXK_ERR_SHAPE);
}

static void test_shape_counts(void) {
    mxk_error_sink e = sink();
    mxk_shape s = mxk_sdk_shape2(INT64_C(1) << 30, INT64_C(1) << 30);
    CHECK_EQ_INT(mxk_sdk_shape_check_count(&s, "argument 'data'", &e), MXK_OK);
    s.ndim = 3;
    s.dims[2] = 0; /* unknown: skipped */
    CHECK_EQ_INT(mxk_sdk_shape_check_count(&s, "argument 'data'", &e), MXK_OK);
    s.dims[2] = 2;
    CHECK_EQ_INT(mxk_sdk_shape_check_count(&s, "argument 'data'", &e), MXK_ERR_SHAPE);
    CHECK_CONTAINS(e.msg, "argument 'data': shape (1073741824,1073741824,2) has too many "
                          "elements (more than 1152921504606846976)");
    mxk_shape two[2] = {mxk_sdk_shape1(4), s};
    static const char *const names[] = {"lhs", "rhs", NULL};
    e = sink();
    CHECK_EQ_INT(mxk_sdk_shapes_check_count(two, 2, "argument", names, &e), MXK_ERR_SHAPE);
    CHECK_CONTAINS(e.msg, "argument 'rhs': shape (1073741824,1073741824,2) has too many");
    /* assign refuses the expected shape and keeps the slot */
    mxk_shape slot = mxk_sdk_shape_unknown();
    e = sink();
    CHECK_EQ_INT(mxk_sdk_shape_assign(&slot, &s, "output 'output'", &e), MXK_ERR_SHAPE);
    CHECK_CONTAINS(e.msg, "output 'output': shape (1073741824,1073741824,2) has too many");
    CHECK_EQ_INT(slot.ndim, 0);
}

static void test_attr_float_finite(void) {
    const char *keys[] = {"a", "b", "c", "d"};
    const char *vals[] = {"nan", "inf", "-Infinity", "1e300"};
    mxk_attrs *a = mxki_attrs_from_arrays(4, keys, vals);
    CHECK(a != NULL);
    if (a == NULL)
        return;
    double v = 0.0;
    mxk_error_sink e = sink();
    CHECK_EQ_INT(mxk_sdk_attr_float_finite(a, "a", &v, &e), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.msg, "attribute 'a': must be finite, got 'nan'");
    e = sink();
    CHECK_EQ_INT(mxk_sdk_attr_float_finite(a, "b", &v, &e), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.msg, "attribute 'b': must be finite, got 'inf'");
    e = sink();
    CHECK_EQ_INT(mxk_sdk_attr_float_finite(a, "c", &v, &e), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.msg, "attribute 'c': must be finite, got '-Infinity'");
    CHECK_EQ_INT(mxk_sdk_attr_float_finite(a, "d", &v, &e), MXK_OK);
    CHECK(v == 1e300);
    e = sink();
    CHECK_EQ_INT(mxk_sdk_attr_float_finite(a, "e", &v, &e), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(e.msg, "attribute 'e': required but not given");
    mxki_attrs_free(a);
}

/** The host's attribute getters refuse NULL names and outputs instead of crashing. */
static void test_host_attr_null_arguments(void) {
    const char *keys[] = {"k"}, *vals[] = {"3"};
    mxk_attrs *a = mxki_attrs_from_arrays(1, keys, vals);
    const mxk_host_api *host = mxki_host_api_table();
    CHECK(a != NULL);
    if (a == NULL)
        return;
    int64_t i = 0;
    mxk_error_sink e = sink();
    CHECK(host->attr_get(a, NULL) == NULL);
    CHECK_EQ_INT(host->attr_get_int(a, NULL, &i, &e), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.msg, "attribute getter: the attribute name is NULL");
    e = sink();
    CHECK_EQ_INT(host->attr_get_float(a, "k", NULL, &e), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.msg, "attribute getter: the output pointer is NULL");
    e = sink();
    CHECK_EQ_INT(mxk_sdk_attr_int(a, NULL, &i, &e), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(e.msg, "attribute getter: the attribute name is NULL");
    CHECK_EQ_INT(host->attr_get_int(a, "k", &i, &e), MXK_OK);
    CHECK_EQ_INT(i, 3);
    mxki_attrs_free(a);
}

int main(void) {
    mxk_sdk_set_host(mxki_host_api_table());
    MXK_RUN(test_dim_mul_add);
    MXK_RUN(test_shape_counts);
    MXK_RUN(test_attr_float_finite);
    MXK_RUN(test_host_attr_null_arguments);
    return MXK_TEST_EXIT();
}
