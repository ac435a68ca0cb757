/*
 * KVStore tests (kernel/kvstore/kvstore.c, kernel/kvstore/kvstore_local_transport.c),
 * against the golden sequences of MXNet's Clojure KVStore tutorial
 * (docs/static_site/src/pages/api/clojure/docs/tutorials/kvstore.md: 2, 8, 3, 3 and 3,
 * list keys 1 1 1), upstream kvstore.py's docstrings (4, then 6 after "stored += 2 * input") and
 * test_kvstore.py's test_updater ("+=" from zeros with 4 devices: 4, then 16 after 4 list pushes),
 * plus the error messages of src/kvstore/kvstore_local.h, the "device" type, and engine ordering of
 * many pushes and pulls issued without waits. Updaters here push their work through the engine
 * (cpu-blas operators, the plugin loaded by path) or work synchronously on host
 * copies; both are valid per mxk.h. A store of a type served by a plugin transport (the tkv-mem
 * test plugin, test_transport_plugin.c) is checked against the plugin's log of transport callbacks.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "mxk.h"
#include "test_transport.h"
#include "testing.h"

/*
 * The cpu-blas backend has one device, cpu(0) (as MXNet, all cores are one device),
 * so the "devices" of upstream's tests are distinct arrays on cpu(0).
 */
static const mxk_context cpu0 = {MXK_DEV_CPU, 0};
#define cpu1 cpu0
#define cpu2 cpu0
#define cpu3 cpu0
static const mxk_shape shape23 = {.ndim = 2, .dims = {2, 3}};

/** A float32 array of `shape` filled with `v` on `ctx`. */
static mxk_ndarray *full(mxk_context ctx, float v) {
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_full(&shape23, MXK_FLOAT32, ctx, v, &a) != MXK_OK)
        fprintf(stderr, "full: %s\n", mxk_get_last_error());
    return a;
}

/** True when every element of `a` equals `v` (waits for the array). */
static int all_eq(mxk_ndarray *a, float v) {
    float h[6] = {0};
    if (mxk_ndarray_copy_to_host(a, h, sizeof h) != MXK_OK) {
        fprintf(stderr, "copy_to_host: %s\n", mxk_get_last_error());
        return 0;
    }
    for (int i = 0; i < 6; i++)
        if (h[i] != v) {
            fprintf(stderr, "element %d is %g, expected %g\n", i, h[i], v);
            return 0;
        }
    return 1;
}

/** The Clojure KVStore tutorial, steps 1-5, on store type `type`. */
static void seed_sequence(const char *type) {
    mxk_kvstore *kv = NULL;
    CHECK_EQ_INT(mxk_kvstore_create(type, &kv), MXK_OK);
    if (kv == NULL)
        return;
    CHECK(strcmp(mxk_kvstore_type(kv), type) == 0);
    const char *k3[] = {"3"};
    mxk_ndarray *two = full(cpu0, 2), *out = full(cpu0, 0);
    /* 1: init "3" with ones*2; pull -> 2 */
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, k3, &two), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k3, &out, 0), MXK_OK);
    CHECK(all_eq(out, 2));
    /* 2: push ones*8; pull -> 8 */
    mxk_ndarray *eight = full(cpu0, 8);
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, k3, &eight, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k3, &out, 0), MXK_OK);
    CHECK(all_eq(out, 8));
    /* 3: push three ones (cpu 0, 1, 2) to "3" in one call; pull -> 3 (sum replaces) */
    mxk_ndarray *ones[3] = {full(cpu0, 1), full(cpu1, 1), full(cpu2, 1)};
    const char *k333[] = {"3", "3", "3"};
    CHECK_EQ_INT(mxk_kvstore_push(kv, 3, k333, ones, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k3, &out, 0), MXK_OK);
    CHECK(all_eq(out, 3));
    /* 4: pull "3" into two arrays (cpu 0, cpu 1) -> 3 and 3 */
    mxk_ndarray *outs2[2] = {full(cpu0, 0), full(cpu1, 0)};
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 2, (const char *const[]){"3", "3"}, outs2, 0), MXK_OK);
    CHECK(all_eq(outs2[0], 3));
    CHECK(all_eq(outs2[1], 3));
    /* 5: init "5","7","9" with ones; push ones to each; pull into zeros -> 1 1 1 */
    const char *k579[] = {"5", "7", "9"};
    mxk_ndarray *o579[3] = {full(cpu0, 0), full(cpu0, 0), full(cpu0, 0)};
    CHECK_EQ_INT(mxk_kvstore_init(kv, 3, k579, ones), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push(kv, 3, k579, ones, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 3, k579, o579, 0), MXK_OK);
    for (int i = 0; i < 3; i++)
        CHECK(all_eq(o579[i], 1));
    CHECK_EQ_INT(mxk_kvstore_rank(kv), 0);
    CHECK_EQ_INT(mxk_kvstore_num_workers(kv), 1);
    CHECK_EQ_INT(mxk_kvstore_barrier(kv), MXK_OK);
    mxk_kvstore_free(kv);
    mxk_ndarray *all[] = {two,      out,      eight,   ones[0], ones[1], ones[2],
                          outs2[0], outs2[1], o579[0], o579[1], o579[2]};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mxk_ndarray_free(all[i]);
}

/** The tutorial's sequence, "local". */
static void test_seed_sequence_local(void) {
    seed_sequence("local");
}

/** The "device" type behaves the same (here every value is on the CPU). */
static void test_seed_sequence_device(void) {
    seed_sequence("device");
}

/* ---- updaters ----------------------------------------------------------- */

/** Counts updater calls per key. */
typedef struct upd_count {
    int calls;
    int calls_key[16];
} upd_count;

/** Updater "stored += recv" through the engine (cpu-blas _plus, in place). */
static void upd_plus(const char *key, mxk_ndarray *recv, mxk_ndarray *stored, void *user) {
    upd_count *c = user;
    c->calls++;
    int k = atoi(key);
    if (k >= 0 && k < 16)
        c->calls_key[k]++;
    mxk_ndarray *in[2] = {stored, recv}, *out[MXK_MAX_OUTPUTS] = {stored};
    uint32_t nout = 1;
    if (mxk_imperative_invoke("_plus", 2, in, &nout, out, 0, NULL, NULL) != MXK_OK)
        fprintf(stderr, "_plus: %s\n", mxk_get_last_error());
}

/** Updater "stored += recv * 2" done synchronously on host copies (it may block). */
static void upd_plus2_host(const char *key, mxk_ndarray *recv, mxk_ndarray *stored, void *user) {
    (void)key;
    ++*(int *)user;
    float r[6], s[6];
    if (mxk_ndarray_copy_to_host(recv, r, sizeof r) != MXK_OK ||
        mxk_ndarray_copy_to_host(stored, s, sizeof s) != MXK_OK) {
        fprintf(stderr, "updater: %s\n", mxk_get_last_error());
        return;
    }
    for (int i = 0; i < 6; i++)
        s[i] += 2 * r[i];
    mxk_ndarray_copy_from_host(stored, s, sizeof s);
}

/**
 * kvstore.py docstrings: push 4 arrays of ones -> 4; then with the updater
 * "stored += input * 2", pushing ones gives 6.
 */
static void test_docstring_updater_sequence(void) {
    mxk_kvstore *kv = NULL;
    CHECK_EQ_INT(mxk_kvstore_create("local", &kv), MXK_OK);
    if (kv == NULL)
        return;
    const char *k3[] = {"3"}, *k3x4[] = {"3", "3", "3", "3"};
    mxk_ndarray *two = full(cpu0, 2), *out = full(cpu0, 0);
    mxk_ndarray *ones[4] = {full(cpu0, 1), full(cpu1, 1), full(cpu2, 1), full(cpu3, 1)};
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, k3, &two), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push(kv, 4, k3x4, ones, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k3, &out, 0), MXK_OK);
    CHECK(all_eq(out, 4));
    int calls = 0;
    CHECK_EQ_INT(mxk_kvstore_set_updater(kv, upd_plus2_host, &calls), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, k3, ones, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k3, &out, 0), MXK_OK);
    CHECK(all_eq(out, 6));
    CHECK_EQ_INT(calls, 1);
    /* NULL restores the default (assign). */
    CHECK_EQ_INT(mxk_kvstore_set_updater(kv, NULL, NULL), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, k3, ones, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k3, &out, 0), MXK_OK);
    CHECK(all_eq(out, 1));
    CHECK_EQ_INT(calls, 1);
    mxk_kvstore_free(kv);
    mxk_ndarray_free(two);
    mxk_ndarray_free(out);
    for (int i = 0; i < 4; i++)
        mxk_ndarray_free(ones[i]);
}

/**
 * test_kvstore.py test_updater, with integer keys: zeros, updater "+=", 4 devices'
 * ones pushed to 3 -> 4; the key list 5, 7, 9 pushed 4 times -> 16. The updater
 * runs once per key and push (1 call for key 3, 4 for each listed key).
 */
static void updater_from_zeros(const char *type) {
    mxk_kvstore *kv = NULL;
    CHECK_EQ_INT(mxk_kvstore_create(type, &kv), MXK_OK);
    if (kv == NULL)
        return;
    const int32_t k3[] = {3}, keys[] = {5, 7, 9};
    mxk_ndarray *z = full(cpu0, 0);
    mxk_ndarray *zs[3] = {z, z, z};
    CHECK_EQ_INT(mxk_kvstore_init_int(kv, 1, k3, &z), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_init_int(kv, 3, keys, zs), MXK_OK);
    upd_count c = {0};
    CHECK_EQ_INT(mxk_kvstore_set_updater(kv, upd_plus, &c), MXK_OK);
    mxk_ndarray *devs[4] = {full(cpu0, 1), full(cpu1, 1), full(cpu2, 1), full(cpu3, 1)};
    const int32_t k3x4[] = {3, 3, 3, 3};
    CHECK_EQ_INT(mxk_kvstore_push_int(kv, 4, k3x4, devs, 0), MXK_OK);
    CHECK_EQ_INT(c.calls, 1);
    mxk_ndarray *outs[4] = {full(cpu0, 0), full(cpu1, 0), full(cpu2, 0), full(cpu3, 0)};
    CHECK_EQ_INT(mxk_kvstore_pull_int(kv, 4, k3x4, outs, 0), MXK_OK);
    for (int i = 0; i < 4; i++)
        CHECK(all_eq(outs[i], 4));
    /* The key list: every key gets the 4 devices' values in each push. */
    int32_t lk[12];
    mxk_ndarray *lv[12];
    for (int i = 0; i < 12; i++) {
        lk[i] = keys[i / 4];
        lv[i] = devs[i % 4];
    }
    for (int p = 0; p < 4; p++)
        CHECK_EQ_INT(mxk_kvstore_push_int(kv, 12, lk, lv, 0), MXK_OK);
    CHECK_EQ_INT(c.calls, 1 + 3 * 4);
    CHECK_EQ_INT(c.calls_key[3], 1);
    CHECK_EQ_INT(c.calls_key[5], 4);
    CHECK_EQ_INT(c.calls_key[7], 4);
    CHECK_EQ_INT(c.calls_key[9], 4);
    mxk_ndarray *lo[12];
    for (int i = 0; i < 12; i++)
        lo[i] = full(i % 2 ? cpu1 : cpu0, 0);
    CHECK_EQ_INT(mxk_kvstore_pull_int(kv, 12, lk, lo, 0), MXK_OK);
    for (int i = 0; i < 12; i++)
        CHECK(all_eq(lo[i], 16));
    mxk_kvstore_free(kv);
    mxk_ndarray_free(z);
    for (int i = 0; i < 4; i++) {
        mxk_ndarray_free(devs[i]);
        mxk_ndarray_free(outs[i]);
    }
    for (int i = 0; i < 12; i++)
        mxk_ndarray_free(lo[i]);
}

/** "+=" updater from zeros on "local" (test_kvstore.py test_updater). */
static void test_updater_from_zeros_local(void) {
    updater_from_zeros("local");
}

/** The same on "device". */
static void test_updater_from_zeros_device(void) {
    updater_from_zeros("device");
}

/* ---- errors ------------------------------------------------------------- */

/** Unknown keys, mixed key kinds, duplicate init, shape and dtype mismatches. */
static void test_errors(void) {
    mxk_kvstore *kv = NULL, *ki = NULL;
    CHECK_EQ_INT(mxk_kvstore_create("local", &kv), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_create("local", &ki), MXK_OK);
    if (kv == NULL || ki == NULL)
        return;
    mxk_ndarray *a = full(cpu0, 1);
    const char *kw[] = {"w"}, *knone[] = {"nope"};
    /* Unknown string key (push and pull). */
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, knone, &a, 0), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "key nope doesn't exist. Did you init?");
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, knone, &a, 0), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "key nope doesn't exist. Did you init?");
    /* Duplicate init, across calls and within one call (nothing inited then). */
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, kw, &a), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, kw, &a), MXK_ERR_STATE);
    CHECK_CONTAINS(mxk_get_last_error(), "duplicate init of key w");
    mxk_ndarray *aa[2] = {a, a};
    CHECK_EQ_INT(mxk_kvstore_init(kv, 2, (const char *const[]){"x", "x"}, aa), MXK_ERR_STATE);
    CHECK_CONTAINS(mxk_get_last_error(), "duplicate init of key x");
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, (const char *const[]){"x"}, &a, 0), MXK_ERR_NOT_FOUND);
    /* Mixed key kinds. */
    const int32_t k1[] = {1};
    CHECK_EQ_INT(mxk_kvstore_init_int(kv, 1, k1, &a), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "Mixed key types are not allowed");
    /* Unknown integer key. */
    const int32_t k11[] = {11};
    CHECK_EQ_INT(mxk_kvstore_init_int(ki, 1, k1, &a), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull_int(ki, 1, k11, &a, 0), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "key 11 has not been inited");
    CHECK_EQ_INT(mxk_kvstore_push_int(ki, 1, k11, &a, 0), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "key 11 has not been inited");
    CHECK_EQ_INT(mxk_kvstore_init_int(ki, 1, k1, &a), MXK_ERR_STATE);
    CHECK_CONTAINS(mxk_get_last_error(), "duplicate init of key 1");
    CHECK_EQ_INT(mxk_kvstore_push(ki, 1, kw, &a, 0), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(), "Mixed key types are not allowed");
    /* Shape mismatch on push and pull. */
    mxk_shape s32 = {.ndim = 2, .dims = {3, 2}};
    mxk_ndarray *b = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&s32, MXK_FLOAT32, cpu0, 1, &b), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, kw, &b, 0), MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxk_get_last_error(), "shape mismatch");
    CHECK_CONTAINS(mxk_get_last_error(), "(2,3)");
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, kw, &b, 0), MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxk_get_last_error(), "shape mismatch");
    /* A failed push changed nothing. */
    mxk_ndarray *o = full(cpu0, 0);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, kw, &o, 0), MXK_OK);
    CHECK(all_eq(o, 1));
    /* dtype mismatch on push. */
    mxk_ndarray *d = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&shape23, MXK_FLOAT64, cpu0, 1, &d), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, kw, &d, 0), MXK_ERR_TYPE);
    /* Unknown store type; NULL arguments. */
    mxk_kvstore *bad = NULL;
    CHECK_EQ_INT(mxk_kvstore_create("dist_sync", &bad), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(mxk_get_last_error(), "dist_sync");
    CHECK(bad == NULL);
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, kw, NULL, 0), MXK_ERR_INVALID_ARGUMENT);
    mxk_kvstore_free(NULL);
    mxk_kvstore_free(kv);
    mxk_kvstore_free(ki);
    mxk_ndarray_free(a);
    mxk_ndarray_free(b);
    mxk_ndarray_free(o);
    mxk_ndarray_free(d);
}

/** A controller that refuses every command (never called: the store has no servers). */
static mxk_status refuse_command(int32_t head, const char *body, void *user) {
    (void)head;
    (void)body;
    (void)user;
    return mxk_set_error(MXK_ERR_STATE, "no commands here");
}

/**
 * The server side and compression on a store without servers (mxk.h): commands,
 * run_server and gradient compression are refused with their exact messages, and
 * the arguments are checked before the store's kind.
 */
static void test_server_calls_without_servers(void) {
    mxk_kvstore *kv = NULL;
    CHECK_EQ_INT(mxk_kvstore_create("local", &kv), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_is_server(kv), 0);
    CHECK_EQ_INT(mxk_kvstore_is_server(NULL), 0);
    CHECK_EQ_INT(mxk_kvstore_send_command_to_servers(kv, 0, "x"), MXK_ERR_UNSUPPORTED);
    CHECK_STREQ(mxk_get_last_error(), "KVStore local has no servers to send commands to");
    CHECK_EQ_INT(mxk_kvstore_send_command_to_servers(kv, 0, NULL), MXK_ERR_INVALID_ARGUMENT);
    CHECK_STREQ(mxk_get_last_error(), "mxk_kvstore_send_command_to_servers: kv or body is NULL");
    CHECK_EQ_INT(mxk_kvstore_run_server(kv, NULL, NULL), MXK_ERR_INVALID_ARGUMENT);
    CHECK_STREQ(mxk_get_last_error(), "mxk_kvstore_run_server: kv or controller is NULL");
    CHECK_EQ_INT(mxk_kvstore_run_server(kv, refuse_command, NULL), MXK_ERR_STATE);
    CHECK_STREQ(mxk_get_last_error(), "KVStore local: this process is not a server of the store");
    CHECK_EQ_INT(mxk_kvstore_set_gradient_compression(kv, "2bit", 0.0), MXK_ERR_INVALID_ARGUMENT);
    CHECK_STREQ(mxk_get_last_error(),
                "gradient compression 2bit: threshold must be positive, not 0");
    CHECK_EQ_INT(mxk_kvstore_set_gradient_compression(kv, "2bit", 0.5), MXK_ERR_UNSUPPORTED);
    CHECK_STREQ(mxk_get_last_error(),
                "KVStore local: gradient compression needs a dist store (its transport "
                "compresses what it sends)");
    mxk_kvstore_free(kv);
}

/**
 * The key kind is recorded by the init that adds the store's first key, never by a
 * failing call: failed string-key calls on an empty store (pull and push of an
 * unknown key, an init with a duplicate or NULL key) leave it open to integer keys,
 * and the reverse. Once a key is in, the other kind fails with upstream's message
 * (KVStoreLocal::SetKeyType) in init, push and pull.
 */
static void test_key_kind_after_failed_call(void) {
    mxk_kvstore *kv = NULL, *ki = NULL;
    CHECK_EQ_INT(mxk_kvstore_create("local", &kv), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_create("local", &ki), MXK_OK);
    if (kv == NULL || ki == NULL)
        return;
    mxk_ndarray *a = full(cpu0, 1), *o = full(cpu0, 0);
    mxk_ndarray *aa[2] = {a, a};
    /* String keys on the empty store: every call fails before changing anything. */
    const char *knope[] = {"nope"};
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, knope, &o, 0), MXK_ERR_NOT_FOUND);
    CHECK_STREQ(mxk_get_last_error(), "key nope doesn't exist. Did you init?");
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, knope, &a, 0), MXK_ERR_NOT_FOUND);
    CHECK_STREQ(mxk_get_last_error(), "key nope doesn't exist. Did you init?");
    CHECK_EQ_INT(mxk_kvstore_init(kv, 2, (const char *const[]){"x", "x"}, aa), MXK_ERR_STATE);
    CHECK_STREQ(mxk_get_last_error(), "duplicate init of key x");
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, (const char *const[]){NULL}, &a),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK_STREQ(mxk_get_last_error(), "KVStore init: key 0 is NULL");
    /* So integer keys are still allowed. */
    const int32_t k1[] = {1};
    CHECK_EQ_INT(mxk_kvstore_init_int(kv, 1, k1, &a), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull_int(kv, 1, k1, &o, 0), MXK_OK);
    CHECK(all_eq(o, 1));
    /* Now string keys are refused everywhere, even "1" (the integer key's string form). */
    const char *kw[] = {"w"}, *kone[] = {"1"};
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, kw, &a), MXK_ERR_INVALID_ARGUMENT);
    CHECK_STREQ(mxk_get_last_error(), "Mixed key types are not allowed");
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, kone, &a, 0), MXK_ERR_INVALID_ARGUMENT);
    CHECK_STREQ(mxk_get_last_error(), "Mixed key types are not allowed");
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, kone, &o, 0), MXK_ERR_INVALID_ARGUMENT);
    CHECK_STREQ(mxk_get_last_error(), "Mixed key types are not allowed");
    /* The reverse: failed integer-key calls leave an empty store open to string keys. */
    const int32_t k11[] = {11}, k44[] = {4, 4};
    CHECK_EQ_INT(mxk_kvstore_pull_int(ki, 1, k11, &o, 0), MXK_ERR_NOT_FOUND);
    CHECK_STREQ(mxk_get_last_error(), "key 11 has not been inited");
    CHECK_EQ_INT(mxk_kvstore_push_int(ki, 1, k11, &a, 0), MXK_ERR_NOT_FOUND);
    CHECK_STREQ(mxk_get_last_error(), "key 11 has not been inited");
    CHECK_EQ_INT(mxk_kvstore_init_int(ki, 2, k44, aa), MXK_ERR_STATE);
    CHECK_STREQ(mxk_get_last_error(), "duplicate init of key 4");
    CHECK_EQ_INT(mxk_kvstore_init(ki, 1, kw, &a), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_init_int(ki, 1, k1, &a), MXK_ERR_INVALID_ARGUMENT);
    CHECK_STREQ(mxk_get_last_error(), "Mixed key types are not allowed");
    CHECK_EQ_INT(mxk_kvstore_push_int(ki, 1, k1, &a, 0), MXK_ERR_INVALID_ARGUMENT);
    CHECK_STREQ(mxk_get_last_error(), "Mixed key types are not allowed");
    CHECK_EQ_INT(mxk_kvstore_pull_int(ki, 1, k1, &o, 0), MXK_ERR_INVALID_ARGUMENT);
    CHECK_STREQ(mxk_get_last_error(), "Mixed key types are not allowed");
    mxk_kvstore_free(kv);
    mxk_kvstore_free(ki);
    mxk_ndarray_free(a);
    mxk_ndarray_free(o);
}

/* ---- dtypes and ordering ------------------------------------------------ */

/** Sums of float64 and int32 values; pull converts to the output's dtype. */
static void test_other_dtypes(void) {
    mxk_kvstore *kv = NULL;
    CHECK_EQ_INT(mxk_kvstore_create("local", &kv), MXK_OK);
    if (kv == NULL)
        return;
    int32_t types[2] = {MXK_FLOAT64, MXK_INT32};
    const char *names[2] = {"f64", "i32"};
    for (int t = 0; t < 2; t++) {
        mxk_ndarray *v[3] = {NULL, NULL, NULL};
        for (int i = 0; i < 3; i++)
            mxk_ndarray_full(&shape23, types[t], cpu0, i + 1, &v[i]);
        const char *k[3] = {names[t], names[t], names[t]};
        CHECK_EQ_INT(mxk_kvstore_init(kv, 1, k, v), MXK_OK);
        CHECK_EQ_INT(mxk_kvstore_push(kv, 3, k, v, 0), MXK_OK);
        mxk_ndarray *o = full(cpu0, 0); /* float32 output: the copy converts */
        CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k, &o, 0), MXK_OK);
        CHECK(all_eq(o, 6));
        mxk_ndarray_free(o);
        for (int i = 0; i < 3; i++)
            mxk_ndarray_free(v[i]);
    }
    mxk_kvstore_free(kv);
}

/**
 * Many pushes and pulls issued from one thread without waits give the sequential
 * result: pull i sees push i (assign), and with the "+=" updater the running sum.
 */
static void test_interleaved_ordering(void) {
    enum { N = 200 };
    mxk_kvstore *kv = NULL;
    CHECK_EQ_INT(mxk_kvstore_create("local", &kv), MXK_OK);
    if (kv == NULL)
        return;
    const char *k[] = {"a", "b"};
    mxk_ndarray *z = full(cpu0, 0);
    mxk_ndarray *zz[2] = {z, z};
    CHECK_EQ_INT(mxk_kvstore_init(kv, 2, k, zz), MXK_OK);
    mxk_ndarray *vals[N], *outs_a[N], *outs_b[N];
    for (int i = 0; i < N; i++) {
        vals[i] = full(i % 2 ? cpu1 : cpu0, (float)(i + 1));
        outs_a[i] = full(cpu0, -1);
        outs_b[i] = full(cpu1, -1);
    }
    /* Key "a": assign semantics. */
    for (int i = 0; i < N; i++) {
        CHECK_EQ_INT(mxk_kvstore_push(kv, 1, k, &vals[i], i % 3), MXK_OK);
        CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k, &outs_a[i], 0), MXK_OK);
    }
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += !all_eq(outs_a[i], (float)(i + 1));
    CHECK_EQ_INT(bad, 0);
    /* Key "b" with "+=": pull i sees 1 + 2 + ... + (i+1). */
    upd_count c = {0};
    CHECK_EQ_INT(mxk_kvstore_set_updater(kv, upd_plus, &c), MXK_OK);
    for (int i = 0; i < N; i++) {
        CHECK_EQ_INT(mxk_kvstore_push(kv, 1, k + 1, &vals[i], 0), MXK_OK);
        CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, k + 1, &outs_b[i], 0), MXK_OK);
    }
    bad = 0;
    for (int i = 0; i < N; i++)
        bad += !all_eq(outs_b[i], (float)((i + 1) * (i + 2) / 2));
    CHECK_EQ_INT(bad, 0);
    CHECK_EQ_INT(c.calls, N);
    mxk_kvstore_free(kv);
    mxk_ndarray_free(z);
    for (int i = 0; i < N; i++) {
        mxk_ndarray_free(vals[i]);
        mxk_ndarray_free(outs_a[i]);
        mxk_ndarray_free(outs_b[i]);
    }
}

/** Freeing a store right after pushes (no waits) is safe; the values stay readable. */
static void test_free_with_pending_work(void) {
    mxk_kvstore *kv = NULL;
    CHECK_EQ_INT(mxk_kvstore_create("device", &kv), MXK_OK);
    if (kv == NULL)
        return;
    const int32_t k[] = {0};
    mxk_ndarray *v = full(cpu0, 5), *o = full(cpu0, 0);
    CHECK_EQ_INT(mxk_kvstore_init_int(kv, 1, k, &v), MXK_OK);
    for (int i = 0; i < 20; i++)
        CHECK_EQ_INT(mxk_kvstore_push_int(kv, 1, k, &v, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull_int(kv, 1, k, &o, 0), MXK_OK);
    mxk_kvstore_free(kv);
    CHECK(all_eq(o, 5));
    mxk_ndarray_free(v);
    mxk_ndarray_free(o);
}

/* ---- a plugin transport ------------------------------------------------- */

/*
 * The tkv-mem test plugin (test_transport_plugin.c), loaded by main with the
 * options rank 2, workers 3: its transport "test_mem" stores, on push, the pushed
 * value times 3 (as if the two other workers pushed the same value), and logs every
 * callback. Its log is read through the plugin's exported functions.
 */
static tkv_log_count_fn log_count;
static tkv_log_get_fn log_get;
static tkv_log_reset_fn log_reset;

/** Finds the loaded plugin's log functions; false when the plugin is not loaded. */
static int tkv_bind(void) {
    void *dl = dlopen(TKV_PLUGIN, RTLD_NOW | RTLD_NOLOAD);
    if (dl == NULL) {
        fprintf(stderr, "tkv-mem is not loaded: %s\n", dlerror());
        return 0;
    }
    log_count = (tkv_log_count_fn)(uintptr_t)dlsym(dl, "tkv_log_count");
    log_get = (tkv_log_get_fn)(uintptr_t)dlsym(dl, "tkv_log_get");
    log_reset = (tkv_log_reset_fn)(uintptr_t)dlsym(dl, "tkv_log_reset");
    dlclose(dl); /* the loader keeps its own reference */
    return log_count && log_get && log_reset;
}

/** Checks logged call `i`: op, instance (unless negative), key (NULL: none) and priority. */
static tkv_call expect_call(uint32_t i, const char *op, int32_t instance, const char *key,
                            int32_t priority) {
    tkv_call c;
    memset(&c, 0, sizeof c);
    if (!log_get(i, &c)) {
        fprintf(stderr, "no logged call %u (expected %s)\n", i, op);
        CHECK(0);
        return c;
    }
    CHECK_STREQ(c.op, op);
    if (instance >= 0)
        CHECK_EQ_INT(c.instance, instance);
    CHECK_STREQ(c.key, key ? key : "");
    CHECK_EQ_INT(c.priority, priority);
    return c;
}

/** expect_call for a (2,3) CPU tensor whose six values all equal `v`. */
static void expect_tensor_call(uint32_t i, const char *op, int32_t instance, const char *key,
                               int32_t priority, int32_t dtype, float v) {
    tkv_call c = expect_call(i, op, instance, key, priority);
    CHECK_EQ_INT(c.dtype, dtype);
    CHECK_EQ_INT(c.dev_type, MXK_DEV_CPU);
    CHECK_EQ_INT(c.shape.ndim, 2);
    CHECK_EQ_INT(c.shape.dims[0], 2);
    CHECK_EQ_INT(c.shape.dims[1], 3);
    CHECK_EQ_INT(c.bytes, dtype == MXK_FLOAT32 ? 24 : 48);
    CHECK_EQ_INT(c.num_values, dtype == MXK_FLOAT32 ? 6 : 0);
    for (uint32_t k = 0; k < c.num_values; k++)
        CHECK_EQ_INT(c.values[k], v);
}

/**
 * A transport registered by a plugin serves the store type of its name: create,
 * rank, size, init, push (the kernel sums the values, the transport's push gets the
 * sum and its pull is what the store keeps), pull, barrier and destroy go through
 * the plugin's callbacks with the right keys, values, sizes and priorities.
 */
static void test_plugin_transport(void) {
    if (!tkv_bind()) {
        CHECK(0);
        return;
    }
    log_reset();
    /* The unknown-type message lists the registered transports. */
    mxk_kvstore *kv = NULL;
    CHECK_EQ_INT(mxk_kvstore_create("dist_sync", &kv), MXK_ERR_NOT_FOUND);
    CHECK_STREQ(mxk_get_last_error(),
                "unknown KVStore type 'dist_sync': built in are 'local' and 'device'; "
                "transport plugins registered: " TKV_TRANSPORT);
    CHECK_EQ_INT(log_count(), 0);
    CHECK_EQ_INT(mxk_kvstore_create(TKV_TRANSPORT, &kv), MXK_OK);
    if (kv == NULL)
        return;
    CHECK_STREQ(mxk_kvstore_type(kv), TKV_TRANSPORT);
    int32_t inst = expect_call(0, "create", -1, NULL, 0).instance;
    CHECK(inst > 0);
    /* Rank and size are the transport's. */
    CHECK_EQ_INT(mxk_kvstore_rank(kv), 2);
    CHECK_EQ_INT(mxk_kvstore_num_workers(kv), 3);
    expect_call(1, "rank", inst, NULL, 0);
    expect_call(2, "num_workers", inst, NULL, 0);
    /* init: one synchronous transport init per key, with the value. */
    mxk_ndarray *two = full(cpu0, 2), *five = full(cpu0, 5), *out = full(cpu0, 0);
    mxk_ndarray *iv[2] = {two, five};
    const char *kwb[] = {"w", "b"}, *kw[] = {"w"}, *kb[] = {"b"};
    CHECK_EQ_INT(mxk_kvstore_init(kv, 2, kwb, iv), MXK_OK);
    CHECK_EQ_INT(log_count(), 5);
    expect_tensor_call(3, "init", inst, "w", 0, MXK_FLOAT32, 2);
    expect_tensor_call(4, "init", inst, "b", 0, MXK_FLOAT32, 5);
    /* pull reads the worker's copy (the init value here): no transport call. */
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, kw, &out, 0), MXK_OK);
    CHECK(all_eq(out, 2));
    CHECK_EQ_INT(log_count(), 5);
    /* push of three values to "w": the kernel sums them (6), the transport's push
     * gets the sum and its pull returns the aggregate over 3 workers (18), which is
     * what the store keeps. */
    mxk_ndarray *vals[3] = {full(cpu0, 1), full(cpu1, 2), full(cpu2, 3)};
    CHECK_EQ_INT(mxk_kvstore_push(kv, 3, (const char *const[]){"w", "w", "w"}, vals, 5), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, kw, &out, 0), MXK_OK);
    CHECK(all_eq(out, 18));
    CHECK_EQ_INT(log_count(), 7);
    expect_tensor_call(5, "push", inst, "w", 5, MXK_FLOAT32, 6);
    expect_tensor_call(6, "pull", inst, "w", 5, MXK_FLOAT32, 18);
    /* Two pushes to "b" without waits: engine order, each through the transport. */
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, kb, &vals[0], 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push(kv, 2, (const char *const[]){"b", "b"}, vals + 1, 0), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, kb, &out, 0), MXK_OK);
    CHECK(all_eq(out, 15));
    CHECK_EQ_INT(log_count(), 11);
    expect_tensor_call(7, "push", inst, "b", 0, MXK_FLOAT32, 1);
    expect_tensor_call(8, "pull", inst, "b", 0, MXK_FLOAT32, 3);
    expect_tensor_call(9, "push", inst, "b", 0, MXK_FLOAT32, 5);
    expect_tensor_call(10, "pull", inst, "b", 0, MXK_FLOAT32, 15);
    /* "w" kept its value. */
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, kw, &out, 0), MXK_OK);
    CHECK(all_eq(out, 18));
    /* barrier */
    CHECK_EQ_INT(mxk_kvstore_barrier(kv), MXK_OK);
    CHECK_EQ_INT(log_count(), 12);
    expect_call(11, "barrier", inst, NULL, 0);
    /* A transport init error: the kernel's prefix and the transport's message; the
     * key is not in the store afterwards. */
    mxk_ndarray *d = NULL;
    CHECK_EQ_INT(mxk_ndarray_full(&shape23, MXK_FLOAT64, cpu0, 1, &d), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, (const char *const[]){"d"}, &d), MXK_ERR_TYPE);
    CHECK_STREQ(mxk_get_last_error(),
                "KVStore init of key d: test_mem: init of key d: float32 only, got dtype 1");
    CHECK_EQ_INT(log_count(), 13);
    expect_tensor_call(12, "init", inst, "d", 0, MXK_FLOAT64, 0);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, (const char *const[]){"d"}, &out, 0), MXK_ERR_NOT_FOUND);
    CHECK_STREQ(mxk_get_last_error(), "key d doesn't exist. Did you init?");
    /* A push the transport completes with an error: the push call returns OK (the
     * exchange is asynchronous); the error reaches whoever waits on a pulled array. */
    const char *kf[] = {"fail_push"};
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, kf, &two), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push(kv, 1, kf, &vals[0], 0), MXK_OK);
    mxk_ndarray *fo = full(cpu0, 0);
    CHECK_EQ_INT(mxk_kvstore_pull(kv, 1, kf, &fo, 0), MXK_OK);
    float h[6];
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(fo, h, sizeof h), MXK_ERR_BACKEND);
    CHECK_STREQ(mxk_get_last_error(), "test_mem: push of key fail_push refused");
    CHECK_EQ_INT(log_count(), 15);
    expect_tensor_call(13, "init", inst, "fail_push", 0, MXK_FLOAT32, 2);
    expect_tensor_call(14, "push", inst, "fail_push", 0, MXK_FLOAT32, 1);
    mxk_kvstore_free(kv);
    CHECK_EQ_INT(log_count(), 16);
    expect_call(15, "destroy", inst, NULL, 0);

    /* Integer keys cross as decimal strings; names match case-insensitively. A failed
     * init (refused by the transport, after the kernel's checks) does not fix the key
     * kind of the empty store. */
    log_reset();
    CHECK_EQ_INT(mxk_kvstore_create("Test_MEM", &kv), MXK_OK);
    if (kv == NULL)
        return;
    CHECK_STREQ(mxk_kvstore_type(kv), "Test_MEM");
    tkv_call c1 = expect_call(0, "create", inst + 1, NULL, 0); /* a new transport object */
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, (const char *const[]){"d"}, &d), MXK_ERR_TYPE);
    const int32_t k7[] = {7}, k77[] = {7, 7};
    CHECK_EQ_INT(mxk_kvstore_init_int(kv, 1, k7, &two), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_push_int(kv, 2, k77, vals, 1), MXK_OK);
    CHECK_EQ_INT(mxk_kvstore_pull_int(kv, 1, k7, &out, 0), MXK_OK);
    CHECK(all_eq(out, 9));
    CHECK_EQ_INT(log_count(), 5);
    expect_tensor_call(1, "init", c1.instance, "d", 0, MXK_FLOAT64, 0);
    expect_tensor_call(2, "init", c1.instance, "7", 0, MXK_FLOAT32, 2);
    expect_tensor_call(3, "push", c1.instance, "7", 1, MXK_FLOAT32, 3);
    expect_tensor_call(4, "pull", c1.instance, "7", 1, MXK_FLOAT32, 9);
    CHECK_EQ_INT(mxk_kvstore_init(kv, 1, kw, &two), MXK_ERR_INVALID_ARGUMENT);
    CHECK_STREQ(mxk_get_last_error(), "Mixed key types are not allowed");
    CHECK_EQ_INT(log_count(), 5);
    mxk_kvstore_free(kv);
    expect_call(5, "destroy", c1.instance, NULL, 0);

    mxk_ndarray *all[] = {two, five, out, vals[0], vals[1], vals[2], d, fo};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mxk_ndarray_free(all[i]);
}

int main(void) {
    /* Plugins by path: the registered transports are test_mem alone, whatever else is built. */
    mxk_init_options o = {.struct_size = sizeof o, .config_dir = BUILD_CONFDIR, .no_plugins = 1};
    if (mxk_init(&o) != MXK_OK || mxk_load_plugin(CPU_BLAS_PLUGIN, NULL) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    const char *tkv_options[] = {"rank", "2", "workers", "3", NULL};
    if (mxk_load_plugin(TKV_PLUGIN, tkv_options) != MXK_OK)
        fprintf(stderr, "mxk_load_plugin(%s): %s\n", TKV_PLUGIN, mxk_get_last_error());
    MXK_RUN(test_seed_sequence_local);
    MXK_RUN(test_seed_sequence_device);
    MXK_RUN(test_docstring_updater_sequence);
    MXK_RUN(test_updater_from_zeros_local);
    MXK_RUN(test_updater_from_zeros_device);
    MXK_RUN(test_errors);
    MXK_RUN(test_key_kind_after_failed_call);
    MXK_RUN(test_server_calls_without_servers);
    MXK_RUN(test_other_dtypes);
    MXK_RUN(test_interleaved_ordering);
    MXK_RUN(test_free_with_pending_work);
    MXK_RUN(test_plugin_transport);
    int rc = MXK_TEST_EXIT();
    mxk_shutdown();
    return rc;
}
