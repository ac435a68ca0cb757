/*
 * The tests' one parser of attribute strings "k=v;k=v" (operator tables, symbol
 * helpers). Header-only, no dependencies beyond libc; usable from tests and benches.
 */
#ifndef MXK_TESTING_ATTRS_H
#define MXK_TESTING_ATTRS_H

#include <string.h>

/**
 * Splits an attribute string "k=v;k=v" (NULL or "": none; empty items skipped),
 * copied into buf (size bytes), into keys[i] / vals[i] pointing into buf. Returns
 * the count, or -1 when the text does not fit buf, an item has no '=' or an empty
 * key, or there are more than `cap` items.
 */
static inline int mxk_t_parse_attrs(const char *text, char *buf, size_t size, const char **keys,
                                    const char **vals, int cap) {
    int n = 0;
    if (text == NULL)
        return 0;
    if (strlen(text) >= size)
        return -1;
    strcpy(buf, text);
    for (char *item = buf; item != NULL && *item != '\0';) {
        char *semi = strchr(item, ';');
        if (semi != NULL)
            *semi = '\0';
        if (*item != '\0') {
            char *eq = strchr(item, '=');
            if (eq == NULL || eq == item || n >= cap)
                return -1;
            *eq = '\0';
            keys[n] = item;
            vals[n++] = eq + 1;
        }
        item = semi != NULL ? semi + 1 : NULL;
    }
    return n;
}

#endif /* MXK_TESTING_ATTRS_H */
