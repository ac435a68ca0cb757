/*
 * Loader, registry and backend-selection tests with the test plugins of
 * test_plugin.c (built into TP_DIR). Every rejection must leave the kernel working
 * and be listed with its reason.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mxk.h"
#include "testing.h"

static char path_buf[4096];

static const char *tp(const char *name) {
    snprintf(path_buf, sizeof path_buf, "%s/libtp-%s.so", TP_DIR, name);
    return path_buf;
}

/* True when some rejection's reason contains `needle`. */
static int rejected_with(const char *needle) {
    for (uint32_t i = 0; i < mxk_plugin_rejected_count(); i++) {
        const char *path, *reason;
        if (mxk_plugin_rejected_get(i, &path, &reason) == MXK_OK && strstr(reason, needle))
            return 1;
    }
    return 0;
}

/* Runs TestOp-like `op` on a (2,3) array of `x` and returns out[0] (NaN on error). */
static float run_op(const char *op, float x) {
    mxk_shape s = {.ndim = 2, .dims = {2, 3}};
    mxk_context cpu = {MXK_DEV_CPU, 0};
    mxk_ndarray *in = NULL, *out[16] = {0};
    uint32_t nout = 0;
    float r = NAN, host[6];
    if (mxk_ndarray_full(&s, MXK_FLOAT32, cpu, x, &in) != MXK_OK)
        return r;
    if (mxk_imperative_invoke(op, 1, &in, &nout, out, 0, NULL, NULL) == MXK_OK &&
        mxk_ndarray_copy_to_host(out[0], host, sizeof host) == MXK_OK)
        r = host[5];
    else
        fprintf(stderr, "run_op(%s): %s\n", op, mxk_get_last_error());
    mxk_ndarray_free(in);
    mxk_ndarray_free(out[0]);
    return r;
}

static void test_valid_plugin_loads(void) {
    CHECK_EQ_INT(mxk_load_plugin(tp("valid"), NULL), MXK_OK);
    CHECK(mxk_op_plugin("TestOp") != NULL);
    CHECK(strcmp(mxk_op_plugin("TestOp"), "tp-valid") == 0);
    mxk_plugin_record r = {.struct_size = sizeof r};
    CHECK_EQ_INT(mxk_plugin_get(0, &r), MXK_OK);
    CHECK(strcmp(r.name, "tp-valid") == 0);
    CHECK(strcmp(r.version, "1.2.3") == 0);
    CHECK_EQ_INT(r.abi_major, MXK_ABI_MAJOR);
    CHECK_EQ_INT(r.num_ops, 2);
    CHECK_EQ_INT(r.num_kernels, 2);
    CHECK_EQ_INT(r.num_devices, 1);
    CHECK_EQ_INT(mxk_device_count(MXK_DEV_CPU), 1);
    CHECK_EQ_INT(r.num_iterators, 1);
    CHECK_EQ_INT(r.num_transports, 1);
    CHECK(mxk_iterator_name(0) && strcmp(mxk_iterator_name(0), "TestIter") == 0);
    CHECK(mxk_iterator_plugin("TestIter") &&
          strcmp(mxk_iterator_plugin("TestIter"), "tp-valid") == 0);
    CHECK(mxk_kvstore_transport_name(0) &&
          strcmp(mxk_kvstore_transport_name(0), "test_transport") == 0);
    CHECK(mxk_iterator_name(1) == NULL);
    CHECK_NEAR(run_op("TestOp", 3.0f), 4.0f, 0);
}

static void test_same_file_twice_is_one_plugin(void) {
    uint32_t n = mxk_plugin_count();
    CHECK_EQ_INT(mxk_load_plugin(tp("valid"), NULL), MXK_OK);
    char link[4096];
    snprintf(link, sizeof link, "%s/tp-valid-link.so", TP_DIR);
    unlink(link);
    CHECK(symlink(tp("valid"), link) == 0);
    CHECK_EQ_INT(mxk_load_plugin(link, NULL), MXK_OK);
    CHECK_EQ_INT(mxk_plugin_count(), n);
    unlink(link);
}

static void test_abi_major_mismatch(void) {
    uint32_t n = mxk_plugin_count(), ops = mxk_op_count();
    CHECK_EQ_INT(mxk_load_plugin(tp("major"), NULL), MXK_ERR_ABI);
    CHECK_CONTAINS(mxk_get_last_error(), "was built for ABI 2.5; this host implements ABI 1.5 "
                                         "(major versions must match)");
    CHECK(rejected_with("was built for ABI 2.5"));
    CHECK_EQ_INT(mxk_plugin_count(), n);
    CHECK_EQ_INT(mxk_op_count(), ops);
}

static void test_needs_newer_host_minor(void) {
    CHECK_EQ_INT(mxk_load_plugin(tp("newer"), NULL), MXK_ERR_ABI);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "plugin 'tp-newer' needs a host with ABI minor >= 6; this host implements "
                   "ABI 1.5");
    CHECK(rejected_with("needs a host with ABI minor >= 6"));
}

static void test_older_minor_short_structs(void) {
    CHECK_EQ_INT(mxk_load_plugin(tp("old"), NULL), MXK_OK);
    /* The poisoned tail was not read: defaults apply, and the op runs. */
    CHECK_NEAR(run_op("OldOp", 1.0f), 2.0f, 0);
    mxk_shape s = {.ndim = 1, .dims = {4}};
    mxk_context cpu = {MXK_DEV_CPU, 0};
    mxk_op_instance *inst = NULL;
    CHECK_EQ_INT(mxk_op_instance_create("OldOp", 0, NULL, NULL, cpu, 1, &s, NULL, &inst), MXK_OK);
    if (inst == NULL)
        return;
    uint8_t og[1], id[1], od[1];
    mxk_op_instance_backward_dependency(inst, og, id, od);
    CHECK(og[0] == 1 && id[0] == 1 && od[0] == 1); /* no declaration: everything */
    /* The kernel cannot add: the executor emulates add-to. */
    mxk_ndarray *x = NULL, *y = NULL;
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 1.0, &x);
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 5.0, &y);
    mxk_op_req req = MXK_REQ_ADD;
    CHECK_EQ_INT(mxk_op_instance_forward(inst, 0, &x, &y, &req, NULL), MXK_OK);
    float h[4] = {0};
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(y, h, sizeof h), MXK_OK);
    CHECK_NEAR(h[3], 7.0f, 0); /* 5 + (1 + 1) */
    CHECK_EQ_INT(mxk_op_instance_backward(inst, &y, &x, &y, &x, NULL, NULL), MXK_ERR_UNSUPPORTED);
    CHECK_CONTAINS(mxk_get_last_error(), "OldOp: backend 'old' has no backward");
    mxk_ndarray_free(x);
    mxk_ndarray_free(y);
    mxk_op_instance_free(inst);
    /* Its GPU backend (an ABI 1.3 struct) is registered; host_alloc, after the end of
     * the struct, reads as NULL, so cpu_pinned arrays are ordinary host memory. */
    CHECK_EQ_INT(mxk_device_count(MXK_DEV_GPU), 1);
    mxk_ndarray *p = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&s, MXK_FLOAT32, (mxk_context){MXK_DEV_CPU_PINNED, 0}, 3.0, &p),
                 MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(p, h, sizeof h), MXK_OK);
    CHECK_NEAR(h[0], 3.0f, 0);
    mxk_ndarray_free(p);
}

static void test_host_alloc_needs_host_free(void) {
    uint32_t n = mxk_plugin_count();
    CHECK_EQ_INT(mxk_load_plugin(tp("nohostfree"), NULL), MXK_ERR_ABI);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "register_device: device type 2: host_alloc needs host_free");
    CHECK(rejected_with("host_alloc needs host_free"));
    CHECK_EQ_INT(mxk_plugin_count(), n);
}

static void test_missing_entry_points(void) {
    CHECK_EQ_INT(mxk_load_plugin(tp("noinit"), NULL), MXK_ERR_ABI);
    CHECK_CONTAINS(mxk_get_last_error(), "plugin 'tp-noinit' does not export mxk_plugin_init()");
    CHECK_EQ_INT(mxk_load_plugin(tp("noinfo"), NULL), MXK_ERR_ABI);
    CHECK_CONTAINS(mxk_get_last_error(), "not an mxk plugin");
    CHECK_CONTAINS(mxk_get_last_error(), "does not export mxk_plugin_get_info()");
    CHECK(rejected_with("does not export mxk_plugin_get_info()"));
}

static void test_not_a_shared_object(void) {
    char p[4096];
    snprintf(p, sizeof p, "%s/not-a-plugin.so", TP_DIR);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("this is text, not ELF\n", f);
        fclose(f);
    }
    CHECK_EQ_INT(mxk_load_plugin(p, NULL), MXK_ERR_ABI);
    CHECK_CONTAINS(mxk_get_last_error(), "cannot load");
    CHECK_EQ_INT(mxk_load_plugin("/nonexistent/libnothing.so", NULL), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "library '/nonexistent/libnothing.so' not found");
}

static void test_init_failure_leaves_no_trace(void) {
    uint32_t n = mxk_plugin_count(), ops = mxk_op_count();
    CHECK_EQ_INT(mxk_load_plugin(tp("initfail"), NULL), MXK_ERR_BACKEND);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "plugin 'tp-initfail': init failed (MXK_ERR_BACKEND): no accelerator found");
    CHECK(mxk_op_plugin("ShouldVanish") == NULL);
    CHECK_EQ_INT(mxk_plugin_count(), n);
    CHECK_EQ_INT(mxk_op_count(), ops);
    CHECK_NEAR(run_op("TestOp", 0.0f), 1.0f, 0); /* the kernel keeps working */
}

static void test_duplicate_operator_names_both_plugins(void) {
    CHECK_EQ_INT(mxk_load_plugin(tp("dup"), NULL), MXK_ERR_DUPLICATE);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "operator 'TestOp' from plugin 'tp-dup' is already registered by plugin "
                   "'tp-valid'");
    CHECK(strcmp(mxk_op_plugin("TestOp"), "tp-valid") == 0);
}

/* Aliases (MXNet's add_alias) name the same operator everywhere; the canonical name is
 * what JSON records; an alias taken by another operator or not a valid name is refused. */
static void test_aliases(void) {
    CHECK(mxk_op_canonical_name("test_op") &&
          strcmp(mxk_op_canonical_name("test_op"), "TestOp") == 0);
    CHECK(mxk_op_canonical_name("TestOp") &&
          strcmp(mxk_op_canonical_name("TestOp"), "TestOp") == 0);
    CHECK(mxk_op_canonical_name("testop") == NULL);
    CHECK(mxk_op_aliases("nope") == NULL);
    const char *const *a = mxk_op_aliases("_TestOp");
    CHECK(a && a[0] && strcmp(a[0], "test_op") == 0 && a[1] && strcmp(a[1], "_TestOp") == 0 &&
          a[2] == NULL);
    a = mxk_op_aliases("StatefulOp");
    CHECK(a && a[0] == NULL);
    CHECK(strcmp(mxk_op_plugin("_TestOp"), "tp-valid") == 0);
    CHECK_NEAR(run_op("test_op", 1.0f), 2.0f, 0);

    mxk_symbol *x = NULL, *y = NULL;
    CHECK_EQ_INT(mxk_symbol_variable("x", &x), MXK_OK);
    CHECK_EQ_INT(mxk_symbol_create("_TestOp", "y", 0, NULL, NULL, 1, NULL, &x, &y), MXK_OK);
    char *json = NULL;
    CHECK_EQ_INT(mxk_symbol_to_json(y, &json), MXK_OK);
    CHECK(json && strstr(json, "\"op\": \"TestOp\"") && !strstr(json, "_TestOp"));
    free(json);
    mxk_symbol_free(y);
    mxk_symbol_free(x);
}

/* The first internal output of a one-node symbol: its auto-created input variable. */
static mxk_symbol *first_input(const mxk_symbol *s) {
    mxk_symbol *all = NULL, *v = NULL;
    if (mxk_symbol_get_internals(s, &all) == MXK_OK)
        mxk_symbol_get_output(all, 0, &v);
    mxk_symbol_free(all);
    return v;
}

/* ABI 1.3 input_var_attrs: TestOp's pairs land on the variables feeding it, keys a
 * variable already has stay; a 1.0-sized definition (OldOp) gives none. */
static void test_input_var_attrs(void) {
    mxk_symbol *x = NULL, *y = NULL, *z = NULL, *o = NULL;
    CHECK_EQ_INT(mxk_symbol_variable("x", &x), MXK_OK);
    CHECK_EQ_INT(mxk_symbol_set_attr(x, "__init__", "[\"zero\", {}]"), MXK_OK);
    CHECK_EQ_INT(mxk_symbol_create("TestOp", "y", 0, NULL, NULL, 1, NULL, &x, &y), MXK_OK);
    CHECK(strcmp(mxk_symbol_get_attr(x, "__init__"), "[\"zero\", {}]") == 0);
    CHECK(strcmp(mxk_symbol_get_attr(x, "__wd_mult__"), "0") == 0);
    CHECK_EQ_INT(mxk_symbol_create("TestOp", "z", 0, NULL, NULL, 0, NULL, NULL, &z), MXK_OK);
    mxk_symbol *in = first_input(z);
    CHECK(in && strcmp(mxk_symbol_get_attr(in, "__init__"), "[\"one\", {}]") == 0);
    mxk_symbol_free(in);
    CHECK_EQ_INT(mxk_symbol_create("OldOp", "o", 0, NULL, NULL, 0, NULL, NULL, &o), MXK_OK);
    in = first_input(o);
    CHECK(in && mxk_symbol_get_attr(in, "__init__") == NULL);
    mxk_symbol_free(in);
    mxk_symbol_free(o);
    mxk_symbol_free(z);
    mxk_symbol_free(y);
    mxk_symbol_free(x);

    uint32_t n = mxk_plugin_count(), ops = mxk_op_count();
    CHECK_EQ_INT(mxk_load_plugin(tp("dupalias"), NULL), MXK_ERR_DUPLICATE);
    CHECK_CONTAINS(mxk_get_last_error(), "operator '_TestOp' from plugin 'tp-dupalias' is already "
                                         "registered by plugin 'tp-valid'");
    CHECK_EQ_INT(mxk_load_plugin(tp("badalias"), NULL), MXK_ERR_ABI);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "operator 'AliasClash': alias 'bad alias' is not a valid name");
    CHECK(mxk_op_canonical_name("alias_clash") == NULL);
    CHECK_EQ_INT(mxk_plugin_count(), n);
    CHECK_EQ_INT(mxk_op_count(), ops);
}

static void test_failed_registration_rejects_plugin(void) {
    CHECK_EQ_INT(mxk_load_plugin(tp("regfail"), NULL), MXK_ERR_ABI);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "a registration failed: register_iterator: 'HalfIter' needs a valid name and "
                   "the slots create, destroy, reset, next, current and describe");
    CHECK(mxk_op_plugin("RegFailGood") == NULL);
}

static void test_backend_swap(void) {
    /* A second backend for TestOp from another plugin is not a duplicate. */
    CHECK_EQ_INT(mxk_load_plugin(tp("beta"), NULL), MXK_OK);
    CHECK_EQ_INT(mxk_op_kernel_count("TestOp"), 2);
    const char *b = NULL;
    unsetenv("MXK_BACKEND");
    CHECK_EQ_INT(mxk_set_backend_preference(NULL), MXK_OK);
    CHECK_EQ_INT(mxk_resolve_backend("TestOp", MXK_DEV_CPU, &b), MXK_OK);
    CHECK(b && strcmp(b, "alpha") == 0); /* equal priority: registration order */
    CHECK_NEAR(run_op("TestOp", 1.0f), 2.0f, 0);

    CHECK_EQ_INT(mxk_set_backend_preference("beta, alpha"), MXK_OK);
    CHECK(strcmp(mxk_get_backend_preference(), "beta,alpha") == 0);
    CHECK_NEAR(run_op("TestOp", 1.0f), 3.0f, 0);

    /* Per-operator override beats the list, set under the name or an alias. */
    CHECK_EQ_INT(mxk_set_op_backend("TestOp", "alpha"), MXK_OK);
    CHECK_NEAR(run_op("TestOp", 1.0f), 2.0f, 0);
    CHECK_EQ_INT(mxk_set_op_backend("TestOp", NULL), MXK_OK);
    CHECK_EQ_INT(mxk_set_op_backend("_TestOp", "alpha"), MXK_OK);
    CHECK_NEAR(run_op("test_op", 1.0f), 2.0f, 0);
    CHECK_EQ_INT(mxk_set_op_backend("_TestOp", NULL), MXK_OK);
    CHECK_NEAR(run_op("TestOp", 1.0f), 3.0f, 0);

    /* Precedence: API > MXK_BACKEND. */
    setenv("MXK_BACKEND", "alpha", 1);
    CHECK_NEAR(run_op("TestOp", 1.0f), 3.0f, 0);
    CHECK_EQ_INT(mxk_set_backend_preference(""), MXK_OK);
    CHECK_NEAR(run_op("TestOp", 1.0f), 2.0f, 0);
    unsetenv("MXK_BACKEND");

    /* A live instance re-resolves between iterations. */
    mxk_shape s = {.ndim = 1, .dims = {3}};
    mxk_context cpu = {MXK_DEV_CPU, 0};
    mxk_op_instance *inst = NULL;
    mxk_set_backend_preference("alpha");
    CHECK_EQ_INT(mxk_op_instance_create("TestOp", 0, NULL, NULL, cpu, 1, &s, NULL, &inst), MXK_OK);
    if (inst == NULL)
        return;
    CHECK(strcmp(mxk_op_instance_backend(inst), "alpha") == 0);
    mxk_ndarray *x = NULL, *y = NULL;
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 10.0, &x);
    mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 0.0, &y);
    float h[3];
    CHECK_EQ_INT(mxk_op_instance_forward(inst, 0, &x, &y, NULL, NULL), MXK_OK);
    mxk_ndarray_copy_to_host(y, h, sizeof h);
    CHECK_NEAR(h[0], 11.0f, 0);
    mxk_set_backend_preference("beta");
    CHECK_EQ_INT(mxk_op_instance_reresolve(inst), MXK_OK);
    CHECK(strcmp(mxk_op_instance_backend(inst), "beta") == 0);
    CHECK_EQ_INT(mxk_op_instance_forward(inst, 0, &x, &y, NULL, NULL), MXK_OK);
    mxk_ndarray_copy_to_host(y, h, sizeof h);
    CHECK_NEAR(h[0], 12.0f, 0);
    mxk_set_backend_preference(NULL);
    mxk_ndarray_free(x);
    mxk_ndarray_free(y);
    mxk_op_instance_free(inst);
}

/* Calls of one instance share its kernel state and must never overlap, even with
 * several engine workers and independent arrays. */
static void test_calls_sharing_a_state_are_serialised(void) {
    mxk_shape s = {.ndim = 1, .dims = {4}};
    mxk_context cpu = {MXK_DEV_CPU, 0};
    mxk_op_instance *inst = NULL;
    CHECK_EQ_INT(mxk_op_instance_create("StatefulOp", 0, NULL, NULL, cpu, 1, &s, NULL, &inst),
                 MXK_OK);
    if (inst == NULL)
        return;
    enum { N = 8 };
    mxk_ndarray *x[N], *y[N];
    for (int i = 0; i < N; i++) {
        mxk_ndarray_full(&s, MXK_FLOAT32, cpu, i, &x[i]);
        mxk_ndarray_full(&s, MXK_FLOAT32, cpu, 0, &y[i]);
        CHECK_EQ_INT(mxk_op_instance_forward(inst, 0, &x[i], &y[i], NULL, NULL), MXK_OK);
    }
    CHECK_EQ_INT(mxk_wait_all(), MXK_OK);
    for (int i = 0; i < N; i++) {
        float h[4];
        CHECK_EQ_INT(mxk_ndarray_copy_to_host(y[i], h, sizeof h), MXK_OK);
        CHECK_NEAR(h[0], i + 1.0f, 0);
        mxk_ndarray_free(x[i]);
        mxk_ndarray_free(y[i]);
    }
    mxk_op_instance_free(inst);
}

static void test_unknown_operator_and_attribute(void) {
    mxk_shape s = {.ndim = 1, .dims = {3}};
    mxk_context cpu = {MXK_DEV_CPU, 0};
    mxk_op_instance *inst = NULL;
    CHECK_EQ_INT(mxk_op_instance_create("NoSuchOp", 0, NULL, NULL, cpu, 1, &s, NULL, &inst),
                 MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "unknown operator 'NoSuchOp': no loaded plugin registers it");
    CHECK_EQ_INT(mxk_op_instance_create("TestOq", 0, NULL, NULL, cpu, 1, &s, NULL, &inst),
                 MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "unknown operator 'TestOq': no loaded plugin registers "
                                         "it; did you mean 'TestOp'?");
    const char *k[] = {"modee"}, *v[] = {"fast"};
    CHECK_EQ_INT(mxk_op_instance_create("TestOp", 1, k, v, cpu, 1, &s, NULL, &inst),
                 MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "TestOp: unknown attribute 'modee'; valid attributes: mode, scale; did you mean "
                   "'mode'?");
    const char *k2[] = {"mode"}, *v2[] = {"slow"};
    CHECK_EQ_INT(mxk_op_instance_create("TestOp", 1, k2, v2, cpu, 1, &s, NULL, &inst),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "TestOp: attribute 'mode': 'slow' is not one of "
                                         "{fast|exact}");
    const char *k3[] = {"scale"}, *v3[] = {"big"};
    CHECK_EQ_INT(mxk_op_instance_create("TestOp", 1, k3, v3, cpu, 1, &s, NULL, &inst),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "TestOp: attribute 'scale': expected a real number, got 'big'");
    /* Hidden MXNet keys are ignored. */
    const char *k4[] = {"__lr_mult__"}, *v4[] = {"2"};
    CHECK_EQ_INT(mxk_op_instance_create("TestOp", 1, k4, v4, cpu, 1, &s, NULL, &inst), MXK_OK);
    mxk_op_instance_free(inst);
    CHECK_EQ_INT(mxk_op_instance_create("TestOp", 0, NULL, NULL, cpu, 2, &s, NULL, &inst),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "TestOp expects 1 input (data), got 2");
}

int main(void) {
    mxk_init_options o = {.struct_size = sizeof o, .no_plugins = 1};
    if (mxk_init(&o) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    MXK_RUN(test_valid_plugin_loads);
    MXK_RUN(test_same_file_twice_is_one_plugin);
    MXK_RUN(test_abi_major_mismatch);
    MXK_RUN(test_needs_newer_host_minor);
    MXK_RUN(test_host_alloc_needs_host_free);
    MXK_RUN(test_older_minor_short_structs);
    MXK_RUN(test_missing_entry_points);
    MXK_RUN(test_not_a_shared_object);
    MXK_RUN(test_init_failure_leaves_no_trace);
    MXK_RUN(test_duplicate_operator_names_both_plugins);
    MXK_RUN(test_aliases);
    MXK_RUN(test_input_var_attrs);
    MXK_RUN(test_failed_registration_rejects_plugin);
    MXK_RUN(test_backend_swap);
    MXK_RUN(test_calls_sharing_a_state_are_serialised);
    MXK_RUN(test_unknown_operator_and_attribute);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
