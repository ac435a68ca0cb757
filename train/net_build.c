/*
 * The graph builder of the model-zoo networks (net_build.h).
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "net_build.h"

/** Most attributes of one node (Convolution has at most 7 in the zoo). */
#define NB_MAX_ATTRS 12

/** Keeps `s` in the builder (freed by nb_finish); NULL and a recorded failure when full. */
static mxk_symbol *keep(nb *b, mxk_symbol *s) {
    if (b->num_syms == b->cap_syms) {
        uint32_t cap = b->cap_syms ? 2 * b->cap_syms : 64;
        mxk_symbol **p = realloc(b->syms, cap * sizeof *p);
        if (p == NULL) {
            mxk_symbol_free(s);
            b->st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "out of memory");
            return NULL;
        }
        b->syms = p;
        b->cap_syms = cap;
    }
    return b->syms[b->num_syms++] = s;
}

void nb_fail(nb *b, const char *fmt, ...) {
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (b->st == MXK_OK)
        b->st = mxkt_error(MXK_ERR_INVALID_ARGUMENT, "%s", msg);
}

mxk_symbol *nb_var(nb *b, const char *name) {
    mxk_symbol *s = NULL;
    if (b->st != MXK_OK)
        return NULL;
    mxk_status st = mxk_symbol_variable(name, &s);
    if (st != MXK_OK) {
        b->st = mxkt_kernel_error(st, name);
        return NULL;
    }
    return keep(b, s);
}

void nb_auto_name(nb *b, const char *hint, char *buf, size_t size) {
    uint32_t h = 0;
    while (h < b->num_hints && strcmp(b->hints[h], hint) != 0)
        h++;
    if (h == b->num_hints && h < NB_MAX_HINTS) {
        snprintf(b->hints[h], sizeof b->hints[h], "%s", hint);
        b->counts[h] = 0;
        b->num_hints++;
    }
    snprintf(buf, size, "%s%u", hint, h < NB_MAX_HINTS ? b->counts[h]++ : 0);
}

mxk_symbol *nb_op(nb *b, const char *op, mxk_symbol *const *in, uint32_t n, const char *fmt, ...) {
    if (b->st != MXK_OK)
        return NULL;
    for (uint32_t i = 0; i < n; i++)
        if (in[i] == NULL)
            return NULL;
    char text[1024], name[256] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    const char *keys[NB_MAX_ATTRS], *vals[NB_MAX_ATTRS];
    uint32_t na = 0;
    for (char *p = text[0] ? text : NULL; p != NULL && na < NB_MAX_ATTRS;) {
        char *next = strchr(p, ';');
        if (next)
            *next++ = '\0';
        char *eq = strchr(p, '=');
        if (eq == NULL) {
            nb_fail(b, "%s: attribute '%s' has no value", op, p);
            return NULL;
        }
        *eq = '\0';
        if (strcmp(p, "name") == 0) {
            snprintf(name, sizeof name, "%s", eq + 1);
        } else {
            keys[na] = p;
            vals[na++] = eq + 1;
        }
        p = next;
    }
    if (name[0] == '\0') {
        char hint[24];
        size_t k = 0;
        for (; op[k] && k + 1 < sizeof hint; k++)
            hint[k] = (char)tolower((unsigned char)op[k]);
        hint[k] = '\0';
        nb_auto_name(b, hint, name, sizeof name);
    }
    mxk_symbol *s = NULL;
    mxk_status st = mxk_symbol_create(op, name, na, keys, vals, n, NULL, in, &s);
    if (st != MXK_OK) {
        b->st = mxkt_kernel_error(st, "network"); /* the message names the node */
        return NULL;
    }
    return keep(b, s);
}

mxk_symbol *nb_output(nb *b, mxk_symbol *s, uint32_t i) {
    mxk_symbol *o = NULL;
    if (b->st != MXK_OK || s == NULL)
        return NULL;
    mxk_status st = mxk_symbol_get_output(s, i, &o);
    if (st != MXK_OK) {
        b->st = mxkt_kernel_error(st, "network");
        return NULL;
    }
    return keep(b, o);
}

mxk_symbol *nb_plus(nb *b, mxk_symbol *lhs, mxk_symbol *rhs) {
    char name[64];
    mxk_symbol *in[2] = {lhs, rhs};
    if (b->st != MXK_OK || lhs == NULL || rhs == NULL)
        return NULL;
    nb_auto_name(b, "_plus", name, sizeof name);
    return nb_op(b, "elemwise_add", in, 2, "name=%s", name);
}

mxk_status nb_finish(nb *b, mxk_symbol *result, mxk_symbol **out) {
    mxk_status st = b->st;
    if (st == MXK_OK && result == NULL)
        st = mxkt_error(MXK_ERR_INVALID_ARGUMENT, "the network has no output");
    if (st == MXK_OK) {
        for (uint32_t i = 0; i < b->num_syms; i++)
            if (b->syms[i] == result)
                b->syms[i] = NULL; /* handed to the caller */
        *out = result;
    }
    nb_discard(b);
    return st;
}

void nb_discard(nb *b) {
    for (uint32_t i = 0; i < b->num_syms; i++)
        mxk_symbol_free(b->syms[i]);
    free(b->syms);
    memset(b, 0, sizeof *b);
}
