/*
 * Operator dispatch through the kernel with the cpu-blas plugin loaded from the
 * build tree's config dir: imperative invocation, operator instances with explicit
 * write requests and in-place outputs, backward with only the declared
 * dependencies, and the error messages for bad shapes and attributes.
 */
#include <string.h>

#include "mxk.h"
#include "testing.h"

static const mxk_context cpu = {MXK_DEV_CPU, 0};

static mxk_ndarray *from(int ndim, int64_t d0, int64_t d1, const float *v) {
    mxk_shape s = {.ndim = ndim, .dims = {d0, d1}};
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_create(&s, MXK_FLOAT32, cpu, &a) != MXK_OK)
        return NULL;
    mxk_ndarray_copy_from_host(a, v, mxk_ndarray_size(a) * sizeof(float));
    return a;
}

static void host(mxk_ndarray *a, float *out) {
    if (mxk_ndarray_copy_to_host(a, out, mxk_ndarray_size(a) * sizeof(float)) != MXK_OK)
        fprintf(stderr, "copy_to_host: %s\n", mxk_get_last_error());
}

/* By hand: x=[[1,2]], W=[[1,0],[0,1],[1,1]], b=[0,0,1], dy=[[1,1,1]]. */
static void test_fully_connected_numbers_and_write_requests(void) {
    const float xv[] = {1, 2}, wv[] = {1, 0, 0, 1, 1, 1}, bv[] = {0, 0, 1}, ones[] = {1, 1, 1};
    const float five[] = {5, 5, 5, 5, 5, 5};
    mxk_ndarray *x = from(2, 1, 2, xv), *w = from(2, 3, 2, wv), *b = from(1, 3, 0, bv);
    mxk_ndarray *in[3] = {x, w, b}, *out[MXK_MAX_OUTPUTS] = {0};
    uint32_t nout = 0;
    const char *k[] = {"num_hidden"}, *v[] = {"3"};
    CHECK_EQ_INT(mxk_imperative_invoke("FullyConnected", 3, in, &nout, out, 1, k, v), MXK_OK);
    CHECK_EQ_INT(nout, 1);
    float y[3] = {0};
    if (out[0])
        host(out[0], y);
    CHECK(y[0] == 1 && y[1] == 2 && y[2] == 4);

    mxk_shape shapes[3] = {{.ndim = 2, .dims = {1, 2}}, {.ndim = 0}, {.ndim = 0}};
    mxk_op_instance *fc = NULL;
    CHECK_EQ_INT(mxk_op_instance_create("FullyConnected", 1, k, v, cpu, 3, shapes, NULL, &fc),
                 MXK_OK);
    if (fc == NULL)
        return;
    mxk_shape ws;
    mxk_op_instance_shape(fc, 0, 1, &ws, NULL); /* weight inferred from data and num_hidden */
    CHECK(ws.ndim == 2 && ws.dims[0] == 3 && ws.dims[1] == 2);
    uint8_t og[1], id[3], od[1];
    mxk_op_instance_backward_dependency(fc, og, id, od);
    CHECK(og[0] && id[0] && id[1] && !od[0]); /* the output is not needed */

    mxk_ndarray *dy = from(2, 1, 3, ones);
    mxk_ndarray *dx = from(2, 1, 2, five), *dw = from(2, 3, 2, five), *db = from(1, 3, 0, five);
    mxk_ndarray *grads[3] = {dx, dw, db};
    mxk_op_req req[3] = {MXK_REQ_WRITE, MXK_REQ_ADD, MXK_REQ_NULL};
    /* out_data NULL: FullyConnected did not declare it. */
    CHECK_EQ_INT(mxk_op_instance_backward(fc, &dy, in, NULL, grads, req, NULL), MXK_OK);
    float gx[2], gw[6], gb[3];
    host(dx, gx);
    host(dw, gw);
    host(db, gb);
    CHECK(gx[0] == 2 && gx[1] == 2);                             /* WRITE: dy.W */
    CHECK(gw[0] == 6 && gw[1] == 7 && gw[4] == 6 && gw[5] == 7); /* ADD: 5 + dy^T.x */
    CHECK(gb[0] == 5 && gb[1] == 5 && gb[2] == 5);               /* NULL: untouched */
    mxk_ndarray *all[] = {x, w, b, out[0], dy, dx, dw, db};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mxk_ndarray_free(all[i]);
    mxk_op_instance_free(fc);
}

static void test_inplace_equals_out_of_place(void) {
    const float xv[] = {-2, -0.5f, 0, 0.5f, 2, 3};
    mxk_ndarray *a = from(2, 2, 3, xv), *b = from(2, 2, 3, xv), *out = NULL;
    mxk_shape s = {.ndim = 2, .dims = {2, 3}};
    mxk_ndarray_create(&s, MXK_FLOAT32, cpu, &out);
    mxk_op_instance *act = NULL;
    const char *k[] = {"act_type"}, *v[] = {"tanh"};
    CHECK_EQ_INT(mxk_op_instance_create("Activation", 1, k, v, cpu, 1, &s, NULL, &act), MXK_OK);
    if (act == NULL)
        return;
    CHECK_EQ_INT(mxk_op_instance_forward(act, 0, &a, &out, NULL, NULL), MXK_OK);
    CHECK_EQ_INT(mxk_op_instance_forward(act, 0, &b, &b, NULL, NULL), MXK_OK); /* in place */
    float r1[6], r2[6];
    host(out, r1);
    host(b, r2);
    CHECK(memcmp(r1, r2, sizeof r1) == 0);
    CHECK_NEAR(r1[3], 0.462117, 1e-6);
    mxk_ndarray_free(a);
    mxk_ndarray_free(b);
    mxk_ndarray_free(out);
    mxk_op_instance_free(act);
}

static void test_shape_error_names_operator_argument_and_shapes(void) {
    mxk_shape shapes[3] = {
        {.ndim = 2, .dims = {100, 784}}, {.ndim = 2, .dims = {128, 100}}, {.ndim = 0}};
    const char *k[] = {"num_hidden"}, *v[] = {"128"};
    mxk_op_instance *fc = NULL;
    CHECK_EQ_INT(mxk_op_instance_create("FullyConnected", 1, k, v, cpu, 3, shapes, NULL, &fc),
                 MXK_ERR_SHAPE);
    const char *m = mxk_get_last_error();
    CHECK_CONTAINS(m, "FullyConnected: ");
    CHECK_CONTAINS(m, "weight");
    CHECK_CONTAINS(m, "(128,784)");
    CHECK_CONTAINS(m, "(128,100)");
    /* Arrays that do not match an instance's shapes are refused by name. */
    shapes[1].ndim = 0;
    CHECK_EQ_INT(mxk_op_instance_create("FullyConnected", 1, k, v, cpu, 3, shapes, NULL, &fc),
                 MXK_OK);
    if (fc == NULL)
        return;
    mxk_shape bad = {.ndim = 2, .dims = {100, 700}}, good_w = {.ndim = 2, .dims = {128, 784}},
              good_b = {.ndim = 1, .dims = {128}}, ys = {.ndim = 2, .dims = {100, 128}};
    mxk_ndarray *x = NULL, *w = NULL, *bb = NULL, *y = NULL;
    mxk_ndarray_full(&bad, MXK_FLOAT32, cpu, 0, &x);
    mxk_ndarray_full(&good_w, MXK_FLOAT32, cpu, 0, &w);
    mxk_ndarray_full(&good_b, MXK_FLOAT32, cpu, 0, &bb);
    mxk_ndarray_full(&ys, MXK_FLOAT32, cpu, 0, &y);
    mxk_ndarray *in[3] = {x, w, bb};
    CHECK_EQ_INT(mxk_op_instance_forward(fc, 0, in, &y, NULL, NULL), MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "FullyConnected: input 'data' has shape (100,700), expected (100,784)");
    mxk_ndarray *all[] = {x, w, bb, y};
    for (size_t i = 0; i < 4; i++)
        mxk_ndarray_free(all[i]);
    mxk_op_instance_free(fc);
}

static void test_unknown_attribute_lists_valid_ones(void) {
    mxk_shape s = {.ndim = 2, .dims = {2, 3}};
    mxk_op_instance *fc = NULL;
    const char *k[] = {"num_hiden"}, *v[] = {"3"};
    CHECK_EQ_INT(mxk_op_instance_create("FullyConnected", 1, k, v, cpu, 3, &s, NULL, &fc),
                 MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "FullyConnected: unknown attribute 'num_hiden'; valid "
                                         "attributes: num_hidden, no_bias, flatten");
    CHECK_EQ_INT(mxk_op_instance_create("FullyConnected", 0, NULL, NULL, cpu, 3, &s, NULL, &fc),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "FullyConnected: required attribute 'num_hidden' is "
                                         "missing");
}

int main(void) {
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = BUILD_CONFDIR};
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    MXK_RUN(test_fully_connected_numbers_and_write_requests);
    MXK_RUN(test_inplace_equals_out_of_place);
    MXK_RUN(test_shape_error_names_operator_argument_and_shapes);
    MXK_RUN(test_unknown_attribute_lists_valid_ones);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
