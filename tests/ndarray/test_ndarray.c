/*
 * NDArray core: creation and properties, fill/full, host copies, slices and
 * reshapes (write-through views), copy_to across dtypes and devices, waits, and
 * error reporting through the engine (once).
 */
#include "nd_test_util.h"

#include <math.h>

#include "dtype_convert.h"

/** Reads a float32 array into out (n elements). */
static void read_f32(mxk_ndarray *a, float *out, uint64_t n) {
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(a, out, n * sizeof(float)), MXK_OK);
}

/** Creation, shape/dtype/context/size/tensor view, and creation errors. */
static void test_create_and_properties(void) {
    mxk_shape s = nd_shape(3, 2, 3, 4, 0);
    mxk_ndarray *a = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT64, nd_cpu(), &a), MXK_OK);
    if (a == NULL)
        return;
    mxk_shape got = mxk_ndarray_shape(a);
    CHECK(mxki_shape_equal(&got, &s));
    CHECK_EQ_INT(mxk_ndarray_dtype(a), MXK_FLOAT64);
    CHECK_EQ_INT(mxk_ndarray_context(a).dev_type, MXK_DEV_CPU);
    CHECK_EQ_INT(mxk_ndarray_context(a).dev_id, 0);
    CHECK_EQ_INT(mxk_ndarray_size(a), 24);
    CHECK_EQ_INT(mxki_ndarray_bytes(a), 192);
    mxk_tensor t;
    mxki_ndarray_to_tensor(a, &t);
    CHECK_EQ_INT(t.struct_size, sizeof(mxk_tensor));
    CHECK_EQ_INT(t.dtype, MXK_FLOAT64);
    CHECK(t.data == mxk_ndarray_ptr(a) && t.data != NULL);
    CHECK(mxki_shape_equal(&t.shape, &s));
    CHECK_EQ_INT(t.dev_type, MXK_DEV_CPU);
    void *p = NULL;
    CHECK_EQ_INT(mxk_ndarray_data(a, &p), MXK_OK);
    CHECK(p == t.data);
    mxk_ndarray_free(a);
    mxk_ndarray_free(NULL); /* no-op */

    /* Errors. */
    mxk_shape s0 = nd_shape(0, 0, 0, 0, 0);
    CHECK_EQ_INT(mxk_ndarray_create(&s0, MXK_FLOAT32, nd_cpu(), &a), MXK_ERR_SHAPE);
    CHECK(a == NULL);
    CHECK_EQ_INT(mxk_ndarray_create(&s, 9, nd_cpu(), &a), MXK_ERR_TYPE);
    CHECK_CONTAINS(mxki_last_error_message(), "unknown dtype code 9");
    /* cpu_pinned(1): the fake GPU has no host_alloc, so pinned memory is the CPU's. */
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, (mxk_context){MXK_DEV_CPU_PINNED, 1}, &a),
                 MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxki_last_error_message(),
                   "storage: device cpu_pinned(1) does not exist: pinned memory comes from the "
                   "cpu backend, which has 1 device(s)");
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, nd_gpu(2), &a), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxki_last_error_message(), "gpu(2)");
    mxk_shape neg = nd_shape(2, 2, -1, 0, 0);
    CHECK_EQ_INT(mxk_ndarray_create(&neg, MXK_FLOAT32, nd_cpu(), &a), MXK_ERR_SHAPE);
    mxk_shape huge = nd_shape(3, INT64_MAX, INT64_MAX, 4, 0);
    CHECK_EQ_INT(mxk_ndarray_create(&huge, MXK_FLOAT32, nd_cpu(), &a), MXK_ERR_SHAPE);
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, nd_cpu(), NULL), MXK_ERR_INVALID_ARGUMENT);

    /* Zero-size arrays are valid and have no memory. */
    mxk_shape z = nd_shape(2, 0, 3, 0, 0);
    CHECK_EQ_INT(mxk_ndarray_create(&z, MXK_FLOAT32, nd_cpu(), &a), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_size(a), 0);
    CHECK(mxk_ndarray_ptr(a) == NULL);
    CHECK_EQ_INT(mxk_ndarray_fill(a, 1.0), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(a, NULL, 0), MXK_OK);
    mxk_ndarray_free(a);
}

/** fill / full / zeros / ones, with dtype conversion of the value, on CPU and fake GPU. */
static void test_fill_full(void) {
    mxk_shape s = nd_shape(2, 2, 2, 0, 0);
    mxk_ndarray *a = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_FLOAT32, nd_cpu(), 3.5, &a), MXK_OK);
    float f[4];
    read_f32(a, f, 4);
    for (int i = 0; i < 4; i++)
        CHECK(f[i] == 3.5f);
    CHECK_EQ_INT(mxk_ndarray_fill(a, -1.25), MXK_OK);
    read_f32(a, f, 4);
    for (int i = 0; i < 4; i++)
        CHECK(f[i] == -1.25f);
    mxk_ndarray_free(a);

    /* zeros / ones in integer types */
    mxk_ndarray *z = NULL, *o = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_INT32, nd_cpu(), 0, &z), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_UINT8, nd_cpu(), 1, &o), MXK_OK);
    int32_t zi[4] = {9, 9, 9, 9};
    uint8_t ob[4] = {0};
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(z, zi, sizeof zi), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(o, ob, sizeof ob), MXK_OK);
    for (int i = 0; i < 4; i++) {
        CHECK_EQ_INT(zi[i], 0);
        CHECK_EQ_INT(ob[i], 1);
    }
    mxk_ndarray_free(z);
    mxk_ndarray_free(o);

    /* Conversion of the fill value: float16 rounding, int truncation and saturation. */
    mxk_ndarray *h = NULL, *i8 = NULL, *i32 = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_FLOAT16, nd_cpu(), 0.1, &h), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_INT8, nd_cpu(), -3.7, &i8), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_INT32, nd_cpu(), 1e20, &i32), MXK_OK);
    uint16_t hb[4];
    int8_t ib[4];
    int32_t jb[4];
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(h, hb, sizeof hb), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(i8, ib, sizeof ib), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(i32, jb, sizeof jb), MXK_OK);
    CHECK_EQ_INT(hb[3], 0x2E66);
    CHECK_EQ_INT(ib[3], -3);
    CHECK_EQ_INT(jb[3], INT32_MAX);
    mxk_ndarray_free(h);
    mxk_ndarray_free(i8);
    mxk_ndarray_free(i32);

    /* On the fake GPU (fill goes through the backend). */
    int before = atomic_load(&fake.gpu_fill);
    mxk_ndarray *g = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_FLOAT64, nd_gpu(1), 2.5, &g), MXK_OK);
    double d[4];
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(g, d, sizeof d), MXK_OK);
    for (int i = 0; i < 4; i++)
        CHECK(d[i] == 2.5);
    CHECK(atomic_load(&fake.gpu_fill) == before + 1);
    mxk_ndarray_free(g);
    CHECK_EQ_INT(mxk_ndarray_fill(NULL, 1), MXK_ERR_INVALID_ARGUMENT);
}

/** copy_from_host stages the buffer (reusable at once); byte-count checks. */
static void test_host_copies(void) {
    mxk_shape s = nd_shape(1, 5, 0, 0, 0);
    float src[5] = {1, 2, 3, 4, 5}, dst[5] = {0};
    mxk_ndarray *a = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, nd_cpu(), &a), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(a, src, sizeof src), MXK_OK);
    for (int i = 0; i < 5; i++)
        src[i] = -1; /* the caller may reuse its buffer at once */
    read_f32(a, dst, 5);
    for (int i = 0; i < 5; i++)
        CHECK(dst[i] == (float)(i + 1));
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(a, src, 16), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxki_last_error_message(), "needs 20");
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(a, dst, 24), MXK_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(a, NULL, 20), MXK_ERR_INVALID_ARGUMENT);
    mxk_ndarray_free(a);
}

/** Slices share the chunk: writes through a view reach the parent (MXNet.jl example). */
static void test_slice_write_through(void) {
    /* MXNet.jl: a (3,2) array of ones; rows [0,2) set to 2 -> [[2,2],[2,2],[1,1]]. */
    mxk_shape s = nd_shape(2, 3, 2, 0, 0);
    mxk_ndarray *a = NULL, *v = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_FLOAT32, nd_cpu(), 1.0, &a), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_slice(a, 0, 2, &v), MXK_OK);
    mxk_shape vs = mxk_ndarray_shape(v);
    CHECK_EQ_INT(vs.ndim, 2);
    CHECK_EQ_INT(vs.dims[0], 2);
    CHECK_EQ_INT(vs.dims[1], 2);
    CHECK_EQ_INT(mxk_ndarray_fill(v, 2.0), MXK_OK);
    float f[6];
    read_f32(a, f, 6);
    const float want[6] = {2, 2, 2, 2, 1, 1};
    for (int i = 0; i < 6; i++)
        CHECK(f[i] == want[i]);
    CHECK(mxk_ndarray_var(v) == mxk_ndarray_var(a));

    /* A slice of the last row, its offset, and a slice of a slice. */
    mxk_ndarray *last = NULL, *inner = NULL;
    CHECK_EQ_INT(mxk_ndarray_slice(a, 2, 3, &last), MXK_OK);
    CHECK_EQ_INT(last->offset, 2 * 2 * sizeof(float));
    CHECK_EQ_INT(mxk_ndarray_slice(v, 1, 2, &inner), MXK_OK);
    CHECK_EQ_INT(inner->offset, 2 * sizeof(float));
    float src[2] = {7, 8};
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(inner, src, sizeof src), MXK_OK);
    read_f32(a, f, 6);
    CHECK(f[2] == 7 && f[3] == 8 && f[0] == 2 && f[4] == 1);

    /* Views keep the memory alive after the parent handle is freed. */
    mxk_ndarray_free(a);
    mxk_ndarray_free(v);
    CHECK_EQ_INT(mxk_ndarray_fill(last, 5.0), MXK_OK);
    float l[2];
    read_f32(last, l, 2);
    CHECK(l[0] == 5 && l[1] == 5);
    read_f32(inner, l, 2);
    CHECK(l[0] == 7 && l[1] == 8);
    mxk_ndarray_free(last);
    mxk_ndarray_free(inner);

    /* An empty slice is allowed. */
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_FLOAT32, nd_cpu(), 1.0, &a), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_slice(a, 3, 3, &v), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_size(v), 0);
    mxk_ndarray_free(v);
    mxk_ndarray_free(a);
}

/** Out-of-range and reversed slice ranges name the range and the shape. */
static void test_slice_errors(void) {
    mxk_shape s = nd_shape(2, 3, 2, 0, 0);
    mxk_ndarray *a = NULL, *v = (mxk_ndarray *)&v;
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, nd_cpu(), &a), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_slice(a, 2, 1, &v), MXK_ERR_INVALID_ARGUMENT);
    CHECK(v == NULL);
    CHECK_CONTAINS(mxki_last_error_message(), "[2, 1)");
    CHECK_CONTAINS(mxki_last_error_message(), "(3,2)");
    CHECK_EQ_INT(mxk_ndarray_slice(a, 1, 4, &v), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxki_last_error_message(), "[1, 4) is out of bounds for shape (3,2)");
    CHECK_EQ_INT(mxk_ndarray_slice(a, -1, 2, &v), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxki_last_error_message(), "[-1, 2)");
    CHECK_EQ_INT(mxk_ndarray_slice(NULL, 0, 1, &v), MXK_ERR_INVALID_ARGUMENT);
    mxk_ndarray_free(a);
}

/** Reshape views share memory; a size mismatch is MXK_ERR_SHAPE naming both shapes. */
static void test_reshape(void) {
    mxk_shape s = nd_shape(2, 3, 2, 0, 0), t = nd_shape(2, 2, 3, 0, 0),
              flat = nd_shape(1, 6, 0, 0, 0);
    float src[6] = {0, 1, 2, 3, 4, 5};
    mxk_ndarray *a = nd_from(&s, MXK_FLOAT32, nd_cpu(), src), *r = NULL, *f = NULL;
    if (a == NULL)
        return;
    CHECK_EQ_INT(mxk_ndarray_reshape(a, &t, &r), MXK_OK);
    mxk_shape rs = mxk_ndarray_shape(r);
    CHECK(mxki_shape_equal(&rs, &t));
    CHECK(mxk_ndarray_same_memory(a, r));
    CHECK_EQ_INT(mxk_ndarray_reshape(r, &flat, &f), MXK_OK);
    /* Writing row 1 of the (2,3) view writes elements 3..5 of the parent. */
    mxk_ndarray *row = NULL;
    CHECK_EQ_INT(mxk_ndarray_slice(r, 1, 2, &row), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_fill(row, 9.0), MXK_OK);
    float got[6];
    read_f32(f, got, 6);
    const float want[6] = {0, 1, 2, 9, 9, 9};
    for (int i = 0; i < 6; i++)
        CHECK(got[i] == want[i]);

    mxk_shape bad = nd_shape(2, 4, 2, 0, 0);
    mxk_ndarray *x = (mxk_ndarray *)&x;
    CHECK_EQ_INT(mxk_ndarray_reshape(a, &bad, &x), MXK_ERR_SHAPE);
    CHECK(x == NULL);
    CHECK_CONTAINS(mxki_last_error_message(), "(3,2) (6 elements) to (4,2) (8 elements)");
    mxk_shape none = nd_shape(0, 0, 0, 0, 0);
    CHECK_EQ_INT(mxk_ndarray_reshape(a, &none, &x), MXK_ERR_SHAPE);
    mxk_shape negs = nd_shape(2, -2, -3, 0, 0);
    CHECK_EQ_INT(mxk_ndarray_reshape(a, &negs, &x), MXK_ERR_SHAPE);
    mxk_ndarray_free(row);
    mxk_ndarray_free(f);
    mxk_ndarray_free(r);
    mxk_ndarray_free(a);
}

/** copy_to between dtypes: truncation, saturation, float16 rounding, wrapping. */
static void test_copy_dtypes(void) {
    /* float32 -> int32 truncates toward zero (static_cast); NaN 0; out of range saturates. */
    mxk_shape s6 = nd_shape(1, 7, 0, 0, 0);
    float fv[7] = {-2.7f, -0.5f, 0.5f, 2.7f, 1e10f, -1e10f, NAN};
    mxk_ndarray *f = nd_from(&s6, MXK_FLOAT32, nd_cpu(), fv), *i = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(&s6, MXK_INT32, nd_cpu(), &i), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to(f, i), MXK_OK);
    int32_t iv[7];
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(i, iv, sizeof iv), MXK_OK);
    const int32_t iwant[7] = {-2, 0, 0, 2, INT32_MAX, INT32_MIN, 0};
    for (int k = 0; k < 7; k++)
        CHECK_EQ_INT(iv[k], iwant[k]);
    mxk_ndarray_free(f);
    mxk_ndarray_free(i);

    /* float64 -> float16 -> float32. */
    mxk_shape s5 = nd_shape(1, 5, 0, 0, 0);
    double dv[5] = {1.0 / 3.0, 65504.0, 1e-8, 70000.0, -2.0029296875};
    mxk_ndarray *d = nd_from(&s5, MXK_FLOAT64, nd_cpu(), dv), *h = NULL, *o = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(&s5, MXK_FLOAT16, nd_cpu(), &h), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_create(&s5, MXK_FLOAT32, nd_cpu(), &o), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to(d, h), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to(h, o), MXK_OK);
    float ov[5];
    read_f32(o, ov, 5);
    CHECK(ov[0] == 0.333251953125f);
    CHECK(ov[1] == 65504.0f);
    CHECK(ov[2] == 0.0f);
    CHECK(isinf(ov[3]) && ov[3] > 0);
    CHECK(ov[4] == -2.00390625f); /* 2 + 1.5 ulp: a tie, rounds to the even mantissa 2 */
    mxk_ndarray_free(d);
    mxk_ndarray_free(h);
    mxk_ndarray_free(o);

    /* Integer narrowing wraps like static_cast. */
    mxk_shape s3 = nd_shape(1, 3, 0, 0, 0);
    int64_t lv[3] = {300, -1, -129};
    mxk_ndarray *l = nd_from(&s3, MXK_INT64, nd_cpu(), lv), *u = NULL, *b = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(&s3, MXK_UINT8, nd_cpu(), &u), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_create(&s3, MXK_INT8, nd_cpu(), &b), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to(l, u), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to(l, b), MXK_OK);
    uint8_t uv[3];
    int8_t bv[3];
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(u, uv, 3), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(b, bv, 3), MXK_OK);
    CHECK_EQ_INT(uv[0], 44);
    CHECK_EQ_INT(uv[1], 255);
    CHECK_EQ_INT(uv[2], 127);
    CHECK_EQ_INT(bv[0], 44);
    CHECK_EQ_INT(bv[1], -1);
    CHECK_EQ_INT(bv[2], 127);
    mxk_ndarray_free(l);
    mxk_ndarray_free(u);
    mxk_ndarray_free(b);

    /* Every pair of dtypes carries small integers exactly. */
    double small[6] = {0, 1, 2, 3, 4, 5};
    for (int32_t sd = 0; sd <= 6; sd++) {
        for (int32_t dd = 0; dd <= 6; dd++) {
            mxk_shape s = nd_shape(2, 2, 3, 0, 0);
            mxk_ndarray *x = NULL, *y = NULL, *z = NULL, *src = NULL;
            src = nd_from(&s, MXK_FLOAT64, nd_cpu(), small);
            CHECK_EQ_INT(mxk_ndarray_create(&s, sd, nd_cpu(), &x), MXK_OK);
            CHECK_EQ_INT(mxk_ndarray_create(&s, dd, nd_cpu(), &y), MXK_OK);
            CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT64, nd_cpu(), &z), MXK_OK);
            CHECK_EQ_INT(mxk_ndarray_copy_to(src, x), MXK_OK);
            CHECK_EQ_INT(mxk_ndarray_copy_to(x, y), MXK_OK);
            CHECK_EQ_INT(mxk_ndarray_copy_to(y, z), MXK_OK);
            double back[6];
            CHECK_EQ_INT(mxk_ndarray_copy_to_host(z, back, sizeof back), MXK_OK);
            for (int k = 0; k < 6; k++)
                CHECK(back[k] == small[k]);
            mxk_ndarray_free(src);
            mxk_ndarray_free(x);
            mxk_ndarray_free(y);
            mxk_ndarray_free(z);
        }
    }

    /* Shape mismatch. */
    mxk_shape a23 = nd_shape(2, 2, 3, 0, 0), a32 = nd_shape(2, 3, 2, 0, 0);
    mxk_ndarray *p = NULL, *q = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(&a23, MXK_FLOAT32, nd_cpu(), &p), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_create(&a32, MXK_FLOAT32, nd_cpu(), &q), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to(p, q), MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxki_last_error_message(), "source (2,3), destination (3,2)");
    CHECK_EQ_INT(mxk_ndarray_copy_to(p, NULL), MXK_ERR_INVALID_ARGUMENT);
    mxk_ndarray_free(p);
    mxk_ndarray_free(q);
}

/** copy_to across devices (CPU -> GPU -> GPU -> CPU), conversions, overlap. */
static void test_copy_devices(void) {
    mxk_shape s = nd_shape(2, 2, 3, 0, 0);
    float src[6] = {1.5f, -2, 3, 4.25f, 5, -6};
    int h2d = atomic_load(&fake.gpu_h2d), d2h = atomic_load(&fake.gpu_d2h),
        d2d = atomic_load(&fake.gpu_d2d);
    mxk_ndarray *c = nd_from(&s, MXK_FLOAT32, nd_cpu(), src), *g0 = NULL, *g1 = NULL, *back = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, nd_gpu(0), &g0), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, nd_gpu(1), &g1), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, nd_cpu(), &back), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to(c, g0), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to(g0, g1), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to(g1, back), MXK_OK);
    float got[6];
    read_f32(back, got, 6);
    for (int i = 0; i < 6; i++)
        CHECK(got[i] == src[i]);
    CHECK(atomic_load(&fake.gpu_h2d) == h2d + 1);
    CHECK(atomic_load(&fake.gpu_d2d) == d2d + 1);
    CHECK(atomic_load(&fake.gpu_d2h) == d2h + 1);

    /* copy_to_host / copy_from_host of a device array go through the backend. */
    read_f32(g1, got, 6);
    for (int i = 0; i < 6; i++)
        CHECK(got[i] == src[i]);
    float other[6] = {9, 8, 7, 6, 5, 4};
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(g0, other, sizeof other), MXK_OK);
    read_f32(g0, got, 6);
    for (int i = 0; i < 6; i++)
        CHECK(got[i] == other[i]);

    /* dtype conversion across devices: gpu float32 -> cpu int32, gpu -> gpu float16. */
    mxk_ndarray *ci = NULL, *gh = NULL, *cf = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_INT32, nd_cpu(), &ci), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT16, nd_gpu(1), &gh), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, nd_cpu(), &cf), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to(g1, ci), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to(g1, gh), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to(gh, cf), MXK_OK);
    int32_t iv[6];
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(ci, iv, sizeof iv), MXK_OK);
    CHECK_EQ_INT(iv[0], 1);
    CHECK_EQ_INT(iv[1], -2);
    CHECK_EQ_INT(iv[3], 4);
    read_f32(cf, got, 6);
    for (int i = 0; i < 6; i++)
        CHECK(got[i] == src[i]); /* all exactly representable in float16 */

    /* A device array has no host pointer. */
    void *p = (void *)&p;
    CHECK_EQ_INT(mxk_ndarray_data(g0, &p), MXK_ERR_UNSUPPORTED);
    CHECK(p == NULL);
    CHECK_CONTAINS(mxki_last_error_message(), "gpu(0)");

    /* Overlapping copies within one chunk (memmove on the CPU, a host bounce on the GPU). */
    mxk_shape s4 = nd_shape(1, 4, 0, 0, 0);
    float v4[4] = {0, 1, 2, 3};
    for (int dev = 0; dev < 2; dev++) {
        mxk_ndarray *x = nd_from(&s4, MXK_FLOAT32, dev ? nd_gpu(0) : nd_cpu(), v4), *lo = NULL,
                    *hi = NULL;
        CHECK_EQ_INT(mxk_ndarray_slice(x, 0, 3, &lo), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_slice(x, 1, 4, &hi), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_copy_to(lo, hi), MXK_OK);
        float r[4];
        read_f32(x, r, 4);
        CHECK(r[0] == 0 && r[1] == 0 && r[2] == 1 && r[3] == 2);
        CHECK_EQ_INT(mxk_ndarray_copy_to(x, x), MXK_OK); /* onto itself: nothing to do */
        mxk_ndarray_free(lo);
        mxk_ndarray_free(hi);
        mxk_ndarray_free(x);
    }
    mxk_ndarray *all[] = {c, g0, g1, back, ci, gh, cf};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mxk_ndarray_free(all[i]);
}

/* ---- waits ---------------------------------------------------------------- */

static atomic_int reader_done;
static mxk_async_handle *reader_handle;

/** An async reader that finishes only when the completer thread says so. */
static void slow_reader(void *arg, const mxk_run_ctx *rctx, mxk_async_handle *done) {
    reader_handle = done; /* published to the completer through the engine's ordering */
    atomic_store((atomic_int *)arg, 1);
}

/** Completes the slow reader after a delay. */
static void *completer(void *arg) {
    atomic_int *started = arg;
    while (atomic_load(started) == 0)
        nd_sleep_ms(1);
    nd_sleep_ms(100);
    atomic_store(&reader_done, 1);
    mxki_engine_complete(reader_handle, MXK_OK, NULL);
    return NULL;
}

/** wait_to_write returns only after a pending reader has finished. */
static void test_wait_to_write_waits_for_readers(void) {
    mxk_shape s = nd_shape(1, 4, 0, 0, 0);
    mxk_ndarray *a = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_FLOAT32, nd_cpu(), 1.0, &a), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(a), MXK_OK);
    static atomic_int started;
    atomic_store(&started, 0);
    atomic_store(&reader_done, 0);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, completer, &started) == 0);
    mxk_engine_var *v = mxk_ndarray_var(a);
    mxk_engine_push_desc d = {.async_fn = slow_reader,
                              .arg = &started,
                              .dev_type = MXK_DEV_CPU,
                              .read_vars = &v,
                              .num_read = 1,
                              .name = "slow_reader"};
    CHECK_EQ_INT(mxki_engine_push(&d), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_write(a), MXK_OK);
    CHECK_EQ_INT(atomic_load(&reader_done), 1);
    pthread_join(th, NULL);
    mxk_ndarray_free(a);
}

/* ---- errors --------------------------------------------------------------- */

/** The message of the failing writes of test_failed_array_stays_failed. */
#define FAILURE "injected failure writing the array"

/**
 * An array whose write failed stays failed (upstream
 * docs/static_site/src/pages/api/architecture/exception_handling.md: the exception
 * stays with the variable): copy_to_host, data and waits report the error at every
 * call, never MXK_OK with undefined contents, until the array is written again.
 */
static void test_failed_array_stays_failed(void) {
    mxk_shape s = nd_shape(1, 3, 0, 0, 0);
    mxk_ndarray *a = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_FLOAT32, nd_cpu(), 1.0, &a), MXK_OK);
    CHECK_EQ_INT(nd_push_failing_write(a, FAILURE), MXK_OK);
    float f[3] = {7.0f, 7.0f, 7.0f};
    for (int i = 0; i < 2; i++) {
        CHECK_EQ_INT(mxk_ndarray_copy_to_host(a, f, sizeof f), MXK_ERR_BACKEND);
        CHECK_CONTAINS(mxki_last_error_message(), FAILURE);
        CHECK(f[0] == 7.0f); /* nothing copied */
        CHECK_EQ_INT(mxk_ndarray_wait_to_read(a), MXK_ERR_BACKEND);
        void *p = NULL;
        CHECK_EQ_INT(mxk_ndarray_data(a, &p), MXK_ERR_BACKEND);
    }
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK); /* reported already */

    /* The error flows through dependents: a copy reading `a` into `b` is skipped and
     * `b` reports it, at every read too. */
    mxk_ndarray *b = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_FLOAT32, nd_cpu(), 0.0, &b), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to(a, b), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(b), MXK_ERR_BACKEND);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(b), MXK_ERR_BACKEND);
    CHECK_CONTAINS(mxki_last_error_message(), FAILURE);

    /* Written again (from the host), `a` is healthy; then the copy heals `b`. */
    const float ones[3] = {2.0f, 3.0f, 4.0f};
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(a, ones, sizeof ones), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(a, f, sizeof f), MXK_OK);
    CHECK(f[0] == 2.0f && f[2] == 4.0f);
    CHECK_EQ_INT(mxk_ndarray_copy_to(a, b), MXK_OK);
    float g[3];
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(b, g, sizeof g), MXK_OK);
    CHECK(g[1] == 3.0f);

    /* wait_to_write reports a failure, then (an empty write, as upstream's) heals. */
    CHECK_EQ_INT(nd_push_failing_write(a, FAILURE), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_write(a), MXK_ERR_BACKEND);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(a), MXK_ERR_BACKEND);
    CHECK_EQ_INT(mxk_ndarray_wait_to_write(a), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_read(a), MXK_OK);
    mxk_ndarray_free(a);
    mxk_ndarray_free(b);
}

/** A failing backend copy is reported at the next sync point, once. */
static void test_backend_copy_failure(void) {
    mxk_shape s = nd_shape(1, 2, 0, 0, 0);
    float v[2] = {1, 2};
    mxk_ndarray *c = nd_from(&s, MXK_FLOAT32, nd_cpu(), v), *g = NULL;
    CHECK_EQ_INT(mxk_ndarray_create(&s, MXK_FLOAT32, nd_gpu(0), &g), MXK_OK);
    atomic_store(&fake.gpu_fail_copies, 1);
    CHECK_EQ_INT(mxk_ndarray_copy_to(c, g), MXK_OK); /* async: fails on the engine */
    float got[2];
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(g, got, sizeof got), MXK_ERR_BACKEND);
    CHECK_CONTAINS(mxki_last_error_message(), "fake gpu copy failure");
    CHECK_EQ_INT(mxk_ndarray_copy_to(c, g), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(g, got, sizeof got), MXK_OK);
    CHECK(got[0] == 1 && got[1] == 2);
    /* A failing synchronous device-to-host copy is reported directly. */
    atomic_store(&fake.gpu_fail_copies, 1);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(g, got, sizeof got), MXK_ERR_BACKEND);
    CHECK_CONTAINS(mxki_last_error_message(), "copy from gpu(0) failed: fake gpu copy failure");
    mxk_ndarray_free(c);
    mxk_ndarray_free(g);
}

/** The empty (ndim 0) array: no memory, no-op data movement, no views. */
static void test_empty_array(void) {
    mxk_ndarray *e = NULL;
    CHECK_EQ_INT(mxki_ndarray_create_empty(MXK_FLOAT32, nd_cpu(), &e), MXK_OK);
    if (e == NULL)
        return;
    CHECK_EQ_INT(mxk_ndarray_shape(e).ndim, 0);
    CHECK_EQ_INT(mxk_ndarray_size(e), 0);
    CHECK_EQ_INT(mxki_ndarray_bytes(e), 0);
    void *p = (void *)&p;
    CHECK_EQ_INT(mxk_ndarray_data(e, &p), MXK_OK);
    CHECK(p == NULL);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(e, NULL, 0), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(e, NULL, 0), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_fill(e, 3), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_wait_to_write(e), MXK_OK);
    mxk_ndarray *v = NULL;
    CHECK_EQ_INT(mxk_ndarray_slice(e, 0, 0, &v), MXK_ERR_SHAPE);
    mxk_shape one = nd_shape(1, 1, 0, 0, 0);
    CHECK_EQ_INT(mxk_ndarray_reshape(e, &one, &v), MXK_ERR_SHAPE);
    mxk_ndarray_free(e);
}

static atomic_int late_started;
static mxk_async_handle *late_handle;

/** An async reader completed later by the test thread. */
static void late_reader(void *arg, const mxk_run_ctx *rctx, mxk_async_handle *done) {
    late_handle = done;
    atomic_store(&late_started, 1);
}

/** Completes the late reader after a delay (reading the array's memory first). */
static void *late_completer(void *arg) {
    while (atomic_load(&late_started) == 0)
        nd_sleep_ms(1);
    nd_sleep_ms(20);
    volatile float x = *(float *)arg; /* the memory must still be alive (ASan checks) */
    (void)x;
    mxki_engine_complete(late_handle, MXK_OK, NULL);
    return NULL;
}

/** Freeing a handle while work is pending keeps the memory until it ends. */
static void test_free_with_pending_work(void) {
    mxk_shape s = nd_shape(1, 1024, 0, 0, 0);
    mxk_ndarray *a = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_FLOAT32, nd_cpu(), 1.0, &a), MXK_OK);
    atomic_store(&late_started, 0);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, late_completer, mxk_ndarray_ptr(a)) == 0);
    mxk_engine_var *v = mxk_ndarray_var(a);
    mxk_engine_push_desc d = {.async_fn = late_reader,
                              .dev_type = MXK_DEV_CPU,
                              .read_vars = &v,
                              .num_read = 1,
                              .name = "late_reader"};
    CHECK_EQ_INT(mxki_engine_push(&d), MXK_OK);
    mxk_ndarray_free(a); /* deletion is scheduled after the reader */
    pthread_join(th, NULL);
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

/** retain_view: another handle on the same view that keeps the memory alive. */
static void test_retain_view(void) {
    mxk_shape s = nd_shape(2, 4, 2, 0, 0);
    mxk_ndarray *a = NULL, *v = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_INT32, nd_cpu(), 3, &a), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_slice(a, 1, 3, &v), MXK_OK);
    mxk_ndarray *r = mxki_ndarray_retain_view(v);
    CHECK(r != NULL && r != v);
    if (r == NULL)
        return;
    CHECK(mxk_ndarray_same_memory(r, v));
    mxk_shape rs = mxk_ndarray_shape(r), vs = mxk_ndarray_shape(v);
    CHECK(mxki_shape_equal(&rs, &vs));
    CHECK_EQ_INT(mxk_ndarray_dtype(r), MXK_INT32);
    mxk_ndarray_free(a);
    mxk_ndarray_free(v);
    int32_t got[4];
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(r, got, sizeof got), MXK_OK);
    CHECK(got[0] == 3 && got[3] == 3);
    mxk_ndarray_free(r);
    CHECK(mxki_ndarray_retain_view(NULL) == NULL);
}

/** Many views freed in any order release their chunk exactly once. */
static void test_many_views_threads_free(void) {
    /* Views freed in any order from several threads release the chunk exactly once. */
    mxk_shape s = nd_shape(2, 64, 4, 0, 0);
    for (int rep = 0; rep < 20; rep++) {
        mxk_ndarray *a = NULL;
        CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_INT64, nd_cpu(), 7, &a), MXK_OK);
        mxk_ndarray *views[64];
        for (int i = 0; i < 64; i++)
            CHECK_EQ_INT(mxk_ndarray_slice(a, i, i + 1, &views[i]), MXK_OK);
        mxk_ndarray_free(a);
        for (int i = 0; i < 64; i++) {
            CHECK_EQ_INT(mxk_ndarray_fill(views[i], i), MXK_OK);
            mxk_ndarray_free(views[i]);
        }
    }
    CHECK_EQ_INT(mxki_engine_wait_all(), MXK_OK);
}

int main(void) {
    nd_start();
    MXK_RUN(test_create_and_properties);
    MXK_RUN(test_fill_full);
    MXK_RUN(test_host_copies);
    MXK_RUN(test_slice_write_through);
    MXK_RUN(test_slice_errors);
    MXK_RUN(test_reshape);
    MXK_RUN(test_copy_dtypes);
    MXK_RUN(test_copy_devices);
    MXK_RUN(test_wait_to_write_waits_for_readers);
    MXK_RUN(test_failed_array_stays_failed);
    MXK_RUN(test_backend_copy_failure);
    MXK_RUN(test_empty_array);
    MXK_RUN(test_free_with_pending_work);
    MXK_RUN(test_retain_view);
    MXK_RUN(test_many_views_threads_free);
    nd_stop();
    return MXK_TEST_EXIT();
}
