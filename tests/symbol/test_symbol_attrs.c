/*
 * Attribute dictionaries (kernel/attrs.c) at scale: insertion order, replacement
 * and lookups with a hash index; schema validation against a wide schema; one
 * node with many attributes through symbol JSON; the message of a missing
 * required attribute. Speed is not asserted here (no timed tests); the figures
 * are measured separately.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attrs.h"
#include "error.h"
#include "symbol_test_util.h"

/** Keys and values of the big cases: "k<i>" = "v<i>". */
#define NATTRS 20000

static void key_of(char *buf, size_t len, const char *prefix, uint32_t i) {
    snprintf(buf, len, "%s%u", prefix, (unsigned)i);
}

/** Many keys: each found, order kept, replacement in place, absent keys absent. */
static void test_dict_order_and_lookup(void) {
    mxk_attrs *a = mxki_attrs_new();
    CHECK(a != NULL);
    if (a == NULL)
        return;
    char k[32], v[32];
    for (uint32_t i = 0; i < NATTRS; i++) {
        key_of(k, sizeof k, "k", i);
        key_of(v, sizeof v, "v", i);
        CHECK_EQ_INT(mxki_attrs_set(a, k, v), MXK_OK);
    }
    /* replacing keeps the position and the count */
    CHECK_EQ_INT(mxki_attrs_set(a, "k7", "seven"), MXK_OK);
    CHECK_EQ_INT(a->count, NATTRS);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < NATTRS; i++) {
        key_of(k, sizeof k, "k", i);
        key_of(v, sizeof v, "v", i);
        const char *want = i == 7 ? "seven" : v;
        const char *got = mxki_attrs_get(a, k);
        bad += got == NULL || strcmp(got, want) != 0 || strcmp(a->keys[i], k) != 0 ||
               strcmp(a->values[i], want) != 0;
    }
    CHECK_EQ_INT(bad, 0);
    CHECK(mxki_attrs_get(a, "k20000") == NULL);
    CHECK(mxki_attrs_get(a, "") == NULL);
    CHECK(mxki_attrs_get(NULL, "k1") == NULL);
    mxki_attrs_free(a);
}

/** A schema of NATTRS entries: given values kept, defaults filled, unknown keys named. */
static void test_validate_wide_schema(void) {
    mxk_attr_def *schema = calloc(NATTRS, sizeof *schema);
    char(*names)[16] = calloc(NATTRS, sizeof *names);
    const char **keys = calloc(NATTRS, sizeof *keys);
    const char **vals = calloc(NATTRS, sizeof *vals);
    CHECK(schema && names && keys && vals);
    if (!schema || !names || !keys || !vals)
        goto out;
    for (uint32_t i = 0; i < NATTRS; i++) {
        key_of(names[i], sizeof names[i], "a", i);
        schema[i] = (mxk_attr_def){.struct_size = sizeof *schema,
                                   .name = names[i],
                                   .type = MXK_ATTR_INT,
                                   .default_value = "-1"};
    }
    /* every other attribute given, in reverse order, with its index as value */
    uint32_t ng = 0;
    char(*vbuf)[16] = calloc(NATTRS, sizeof *vbuf);
    CHECK(vbuf != NULL);
    if (vbuf == NULL)
        goto out;
    for (uint32_t i = NATTRS; i-- > 0;)
        if (i % 2 == 0) {
            key_of(vbuf[ng], sizeof vbuf[ng], "", i);
            keys[ng] = names[i];
            vals[ng] = vbuf[ng];
            ng++;
        }
    mxk_attrs *given = mxki_attrs_from_arrays(ng, keys, vals), *r = NULL;
    CHECK(given != NULL);
    mxk_error_sink err;
    mxki_error_sink_clear(&err);
    CHECK_EQ_INT(mxki_attrs_validate(schema, NATTRS, given, &r, &err), MXK_OK);
    if (r != NULL) {
        CHECK_EQ_INT(r->count, NATTRS);
        uint32_t bad = 0;
        char want[16];
        for (uint32_t i = 0; i < NATTRS; i++) {
            key_of(want, sizeof want, "", i);
            const char *got = mxki_attrs_get(r, names[i]);
            bad += got == NULL || strcmp(got, i % 2 == 0 ? want : "-1") != 0;
        }
        CHECK_EQ_INT(bad, 0);
    }
    mxki_attrs_free(r);
    /* an unknown key among many is named; a bad value names its attribute */
    CHECK_EQ_INT(mxki_attrs_set(given, "a20000", "1"), MXK_OK);
    r = NULL;
    CHECK_EQ_INT(mxki_attrs_validate(schema, NATTRS, given, &r, &err), MXK_ERR_NOT_FOUND);
    CHECK_CONTAINS(err.msg, "unknown attribute 'a20000'; valid attributes: a0, a1, a2");
    CHECK(r == NULL);
    mxki_attrs_free(given);
    const char *k1[] = {"a19999"}, *v1[] = {"x"};
    given = mxki_attrs_from_arrays(1, k1, v1);
    mxki_error_sink_clear(&err);
    CHECK_EQ_INT(mxki_attrs_validate(schema, NATTRS, given, &r, &err), MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(err.msg, "attribute 'a19999': expected an integer, got 'x'");
    mxki_attrs_free(given);
    free(vbuf);
out:
    free(schema);
    free(names);
    free(keys);
    free(vals);
}

/** One variable with NATTRS attributes through symbol JSON: every one read back. */
static void test_json_node_with_many_attrs(void) {
    size_t cap = (size_t)NATTRS * 32 + 512, pos = 0;
    char *js = malloc(cap);
    CHECK(js != NULL);
    if (js == NULL)
        return;
    pos += (size_t)snprintf(js, cap, "{\"nodes\":[{\"op\":\"null\",\"name\":\"x\",\"attrs\":{");
    for (uint32_t i = 0; i < NATTRS; i++)
        pos += (size_t)snprintf(js + pos, cap - pos, "%s\"k%u\":\"v%u\"", i ? "," : "", (unsigned)i,
                                (unsigned)i);
    snprintf(js + pos, cap - pos,
             "},\"inputs\":[]}],\"arg_nodes\":[0],\"node_row_ptr\":[0,1],"
             "\"heads\":[[0,0,0]],\"attrs\":{\"mxnet_version\":[\"int\",10901]}}");
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxk_symbol_from_json(js, &s), MXK_OK);
    free(js);
    if (s == NULL)
        return;
    uint32_t bad = 0;
    char k[32], v[32];
    for (uint32_t i = 0; i < NATTRS; i++) {
        key_of(k, sizeof k, "k", i);
        key_of(v, sizeof v, "v", i);
        const char *got = mxk_symbol_get_attr(s, k);
        bad += got == NULL || strcmp(got, v) != 0;
    }
    CHECK_EQ_INT(bad, 0);
    uint32_t n = 0;
    char **kv = NULL;
    CHECK_EQ_INT(mxk_symbol_list_attrs(s, &n, &kv), MXK_OK);
    CHECK_EQ_INT(n, NATTRS);
    mxk_string_list_free(kv);
    mxk_symbol_free(s);
}

/** The missing required attribute's message quotes its doc in closed parentheses. */
static void test_required_message(void) {
    mxk_symbol *s = NULL;
    CHECK_EQ_INT(mxk_symbol_create("FullyConnected", "fc", 0, NULL, NULL, 0, NULL, NULL, &s),
                 MXK_ERR_INVALID_ARGUMENT);
    CHECK_CONTAINS(mxk_get_last_error(),
                   "FullyConnected: required attribute 'num_hidden' is missing (");
    const char *msg = mxk_get_last_error();
    CHECK(msg[strlen(msg) - 1] == ')');
    CHECK(s == NULL);
}

int main(void) {
    if (st_setup() != 0)
        return 1;
    MXK_RUN(test_dict_order_and_lookup);
    MXK_RUN(test_validate_wide_schema);
    MXK_RUN(test_json_node_with_many_attrs);
    MXK_RUN(test_required_message);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
