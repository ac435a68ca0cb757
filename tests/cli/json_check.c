/*
 * Checks JSON read from stdin: it must parse (Jansson), and every assertion given
 * on the command line must hold. Used by the `mxk` CLI tests on `--json` output.
 *
 *   json_check [ASSERTION...] < doc.json
 *
 * ASSERTION is PATH=VALUE (equal), PATH#=N (array/object size) or PATH? (exists).
 * PATH is dot-separated: an object key, an array index, or * (any element or
 * member); "." alone is the root. A path with * holds when any match satisfies it.
 * VALUE compares with strings exactly, with numbers within a relative 1e-5, and
 * with null / true / false by name.
 * Exit status: 0 when the document parses and all assertions hold, 1 otherwise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/** What an assertion checks. */
typedef enum check_kind { CHECK_EQUAL, CHECK_SIZE, CHECK_EXISTS } check_kind;

/** True when the JSON value equals the text `want` (see the file comment). */
static int value_matches(const json_t *v, const char *want) {
    if (json_is_string(v))
        return strcmp(json_string_value(v), want) == 0;
    if (json_is_number(v)) {
        char *end = NULL;
        double w = strtod(want, &end);
        if (end == want || *end != '\0')
            return 0;
        double got = json_number_value(v);
        return fabs(got - w) <= 1e-5 * (1.0 + fabs(w));
    }
    if (json_is_null(v))
        return strcmp(want, "null") == 0;
    if (json_is_boolean(v))
        return strcmp(want, json_is_true(v) ? "true" : "false") == 0;
    return 0;
}

/** True when the value's array length / object size is `want`. */
static int size_matches(const json_t *v, const char *want) {
    long n = strtol(want, NULL, 10);
    if (json_is_array(v))
        return (long)json_array_size(v) == n;
    if (json_is_object(v))
        return (long)json_object_size(v) == n;
    return 0;
}

/** True when the final value satisfies the check. */
static int leaf_ok(const json_t *v, check_kind kind, const char *want) {
    switch (kind) {
    case CHECK_EQUAL:
        return value_matches(v, want);
    case CHECK_SIZE:
        return size_matches(v, want);
    case CHECK_EXISTS:
        return 1;
    }
    return 0;
}

/** True when some value at `path` (dot-separated, from v) satisfies the check. */
static int holds(const json_t *v, const char *path, check_kind kind, const char *want) {
    if (v == NULL)
        return 0;
    if (*path == '\0')
        return leaf_ok(v, kind, want);
    const char *dot = strchr(path, '.');
    size_t len = dot ? (size_t)(dot - path) : strlen(path);
    const char *rest = dot ? dot + 1 : path + len;
    char seg[256];
    if (len >= sizeof seg)
        return 0;
    memcpy(seg, path, len);
    seg[len] = '\0';

    if (strcmp(seg, "*") == 0) {
        if (json_is_array(v)) {
            for (size_t i = 0; i < json_array_size(v); i++)
                if (holds(json_array_get(v, i), rest, kind, want))
                    return 1;
        } else if (json_is_object(v)) {
            const char *key;
            json_t *member;
            json_object_foreach((json_t *)v, key, member) {
                if (holds(member, rest, kind, want))
                    return 1;
            }
        }
        return 0;
    }
    if (json_is_array(v)) {
        char *end = NULL;
        unsigned long i = strtoul(seg, &end, 10);
        if (end == seg || *end != '\0')
            return 0;
        return holds(json_array_get(v, i), rest, kind, want);
    }
    if (json_is_object(v))
        return holds(json_object_get(v, seg), rest, kind, want);
    return 0;
}

/** Splits an assertion and evaluates it on the document. */
static int check(const json_t *doc, const char *assertion) {
    char path[1024];
    check_kind kind;
    const char *want = "";
    size_t len = strlen(assertion);
    const char *eq = strchr(assertion, '=');
    if (eq != NULL && eq > assertion && eq[-1] == '#') {
        kind = CHECK_SIZE;
        len = (size_t)(eq - 1 - assertion);
        want = eq + 1;
    } else if (eq != NULL) {
        kind = CHECK_EQUAL;
        len = (size_t)(eq - assertion);
        want = eq + 1;
    } else if (len > 0 && assertion[len - 1] == '?') {
        kind = CHECK_EXISTS;
        len -= 1;
    } else {
        fprintf(stderr, "json_check: bad assertion '%s'\n", assertion);
        return 0;
    }
    if (len >= sizeof path)
        return 0;
    memcpy(path, assertion, len);
    path[len] = '\0';
    return holds(doc, strcmp(path, ".") == 0 ? "" : path, kind, want);
}

/** Entry point: parses stdin and evaluates the assertions. */
int main(int argc, char **argv) {
    json_error_t err;
    json_t *doc = json_loadf(stdin, JSON_REJECT_DUPLICATES, &err);
    if (doc == NULL) {
        fprintf(stderr, "json_check: invalid JSON at line %d column %d: %s\n", err.line, err.column,
                err.text);
        return 1;
    }
    int failed = 0;
    for (int i = 1; i < argc; i++) {
        if (!check(doc, argv[i])) {
            fprintf(stderr, "json_check: assertion failed: %s\n", argv[i]);
            failed = 1;
        }
    }
    if (failed) {
        fputs("json_check: the document was:\n", stderr);
        json_dumpf(doc, stderr, JSON_INDENT(2));
        fputc('\n', stderr);
    }
    json_decref(doc);
    return failed;
}
