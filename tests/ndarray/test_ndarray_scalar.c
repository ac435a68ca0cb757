/*
 * NumPy 0-d arrays in NDArray list files: mx.npx.save writes V3 records in which
 * ndim 0 is a scalar of shape () with one element (upstream src/ndarray/ndarray.cc
 * NDArray::Save/Load with NumPy shape semantics). mxk loads such a scalar as shape
 * (1,) marked 0-d and writes it back as 0-d, in V3 records for the whole list, so
 * that mx.npx.load reads the file as MXNet wrote it (it refuses V2 records). The
 * fixture below is a file written by MXNet 1.9.1 itself; saving what mxk loads
 * from it reproduces it byte for byte.
 */
#include "nd_bytes.h"
#include "nd_test_util.h"

/**
 * Written by MXNet 1.9.1 (pip mxnet==1.9.1):
 *   from mxnet import np, npx; npx.set_np()
 *   npx.save('mixed.params', {'s': np.array(3.5, dtype='float32'),
 *       'm': np.array([[1, 2, 3], [4, 5, 6]], dtype='float32'),
 *       'i': np.array(-7, dtype='int32'), 'd': np.array(0.25, dtype='float64')})
 * mx.npx.load gives shapes (), (2, 3), (), ().
 */
static const uint8_t npx_mixed[220] = {
    0x12, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xca, 0xfa, 0x93, 0xf9, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x60, 0x40, 0xca, 0xfa, 0x93, 0xf9, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00,
    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x3f,
    0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x40, 0x40, 0x00, 0x00, 0x80, 0x40, 0x00, 0x00, 0xa0, 0x40,
    0x00, 0x00, 0xc0, 0x40, 0xca, 0xfa, 0x93, 0xf9, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0xf9, 0xff, 0xff, 0xff,
    0xca, 0xfa, 0x93, 0xf9, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xd0, 0x3f,
    0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x73, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0x00, 0x69, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64,
};

/** Checks shape, dtype and the host bytes of `a` against `want` (size bytes). */
static void check_bytes(mxk_ndarray *a, const mxk_shape *s, int32_t dtype, const void *want,
                        size_t size) {
    mxk_shape got = mxk_ndarray_shape(a);
    CHECK(mxki_shape_equal(&got, s));
    CHECK_EQ_INT(mxk_ndarray_dtype(a), dtype);
    uint8_t buf[64] = {0};
    CHECK(size <= sizeof buf && mxki_ndarray_bytes(a) == size);
    if (size <= sizeof buf && mxki_ndarray_bytes(a) == size) {
        CHECK_EQ_INT(mxk_ndarray_copy_to_host(a, buf, size), MXK_OK);
        CHECK(memcmp(buf, want, size) == 0);
    }
}

/** MXNet's file loads (scalars as (1,)) and saves back byte for byte. */
static void test_mxnet_file_roundtrip(void) {
    uint32_t num = 0;
    mxk_ndarray **arr = NULL;
    char **names = NULL;
    CHECK_EQ_INT(mxk_ndarray_load_buffer(npx_mixed, sizeof npx_mixed, NULL, &num, &arr, &names),
                 MXK_OK);
    CHECK_EQ_INT(num, 4);
    if (num != 4 || names == NULL)
        return;
    const char *want_names[4] = {"s", "m", "i", "d"};
    for (int i = 0; i < 4; i++)
        CHECK(strcmp(names[i], want_names[i]) == 0);
    mxk_shape one = nd_shape(1, 1, 0, 0, 0), m = nd_shape(2, 2, 3, 0, 0);
    const float s = 3.5f, mv[6] = {1, 2, 3, 4, 5, 6};
    const int32_t iv = -7;
    const double dv = 0.25;
    check_bytes(arr[0], &one, MXK_FLOAT32, &s, sizeof s);
    check_bytes(arr[1], &m, MXK_FLOAT32, mv, sizeof mv);
    check_bytes(arr[2], &one, MXK_INT32, &iv, sizeof iv);
    check_bytes(arr[3], &one, MXK_FLOAT64, &dv, sizeof dv);
    uint8_t *out = NULL;
    size_t len = 0;
    CHECK_EQ_INT(mxki_ndarray_save_buffer(num, arr, (const char *const *)names, &out, &len),
                 MXK_OK);
    CHECK_EQ_INT(len, sizeof npx_mixed);
    CHECK(out != NULL && len == sizeof npx_mixed && memcmp(out, npx_mixed, len) == 0);
    free(out);
    /* Without the scalars the list is V2 again (what mx.nd.load reads). */
    CHECK_EQ_INT(mxki_ndarray_save_buffer(1, &arr[1], NULL, &out, &len), MXK_OK);
    CHECK(len > 28 && out[24] == 0xc9 && out[25] == 0xfa && out[26] == 0x93 && out[27] == 0xf9);
    free(out);
    mxk_ndarray_list_free(num, arr, names);
}

/** Beside a scalar, an empty array is written as V3's unknown shape (ndim -1) and loads empty. */
static void test_scalar_beside_empty_array(void) {
    nd_bytes b = {0};
    nb_header(&b, 1);
    nb_u32(&b, 0xF993FACAu); /* V3 0-d float32 -2 */
    nb_i32(&b, 0);
    nb_i32(&b, 0);
    nb_i32(&b, 1);
    nb_i32(&b, 0);
    nb_i32(&b, MXK_FLOAT32);
    nb_f32(&b, -2.0f);
    nb_u64(&b, 0);
    uint32_t num = 0;
    mxk_ndarray **arr = NULL;
    char **names = NULL;
    CHECK_EQ_INT(mxk_ndarray_load_buffer(b.p, b.len, NULL, &num, &arr, &names), MXK_OK);
    CHECK_EQ_INT(num, 1);
    mxk_ndarray *empty = NULL;
    CHECK_EQ_INT(mxki_ndarray_create_empty(MXK_FLOAT32, nd_cpu(), &empty), MXK_OK);
    if (num == 1 && empty != NULL) {
        mxk_ndarray *both[2] = {empty, arr[0]};
        uint8_t *out = NULL;
        size_t len = 0;
        CHECK_EQ_INT(mxki_ndarray_save_buffer(2, both, NULL, &out, &len), MXK_OK);
        nd_bytes want = {0};
        nb_header(&want, 2);
        nb_u32(&want, 0xF993FACAu); /* the empty array: V3, ndim -1 */
        nb_i32(&want, 0);
        nb_i32(&want, -1);
        nb_raw(&want, b.p + 24, b.len - 24 - 8); /* the scalar's record as read */
        nb_u64(&want, 0);
        CHECK_EQ_INT(len, want.len);
        CHECK(out != NULL && len == want.len && memcmp(out, want.p, len) == 0);
        uint32_t n2 = 0;
        mxk_ndarray **back = NULL;
        CHECK_EQ_INT(mxk_ndarray_load_buffer(out, len, NULL, &n2, &back, &names), MXK_OK);
        CHECK_EQ_INT(n2, 2);
        if (n2 == 2) {
            CHECK_EQ_INT(mxk_ndarray_shape(back[0]).ndim, 0);
            mxk_shape one = nd_shape(1, 1, 0, 0, 0);
            const float v = -2.0f;
            check_bytes(back[1], &one, MXK_FLOAT32, &v, sizeof v);
        }
        mxk_ndarray_list_free(n2, back, names);
        free(want.p);
        free(out);
    }
    mxk_ndarray_free(empty);
    mxk_ndarray_list_free(num, arr, NULL);
    free(b.p);
}

/** A view of a scalar is an ordinary (1,) array: saved alone it is a V2 record of shape (1,). */
static void test_view_is_not_scalar(void) {
    uint32_t num = 0;
    mxk_ndarray **arr = NULL;
    char **names = NULL;
    CHECK_EQ_INT(mxk_ndarray_load_buffer(npx_mixed, sizeof npx_mixed, NULL, &num, &arr, &names),
                 MXK_OK);
    if (num != 4) {
        mxk_ndarray_list_free(num, arr, names);
        return;
    }
    mxk_shape one = nd_shape(1, 1, 0, 0, 0);
    mxk_ndarray *v = NULL;
    CHECK_EQ_INT(mxk_ndarray_reshape(arr[0], &one, &v), MXK_OK);
    uint8_t *out = NULL;
    size_t len = 0;
    CHECK_EQ_INT(mxki_ndarray_save_buffer(1, &v, NULL, &out, &len), MXK_OK);
    nd_bytes want = {0};
    nb_header(&want, 1);
    nb_u32(&want, 0xF993FAC9u);
    nb_i32(&want, 0);
    nb_i32(&want, 1);
    nb_i64(&want, 1);
    nb_i32(&want, MXK_DEV_CPU);
    nb_i32(&want, 0);
    nb_i32(&want, MXK_FLOAT32);
    nb_f32(&want, 3.5f);
    nb_u64(&want, 0);
    CHECK_EQ_INT(len, want.len);
    CHECK(out != NULL && len == want.len && memcmp(out, want.p, len) == 0);
    free(want.p);
    free(out);
    mxk_ndarray_free(v);
    mxk_ndarray_list_free(num, arr, names);
}

int main(void) {
    nd_start();
    MXK_RUN(test_mxnet_file_roundtrip);
    MXK_RUN(test_scalar_beside_empty_array);
    MXK_RUN(test_view_is_not_scalar);
    nd_stop();
    return MXK_TEST_EXIT();
}
