/* "Did you mean": the nearest names to a mistyped one (see suggest.h). */
#include "suggest.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/** Longest name compared (bytes). */
#define SUGGEST_MAX_LEN 64
/** Most names suggested. */
#define SUGGEST_MAX 3

/** Optimal-string-alignment distance of a and b without case; -1 when either is too long. */
static int distance(const char *a, const char *b) {
    size_t la = strlen(a), lb = strlen(b);
    if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
        return -1;
    int rows[3][SUGGEST_MAX_LEN + 1]; /* rows i-2, i-1, i of the table, by i % 3 */
    for (size_t j = 0; j <= lb; j++)
        rows[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int *cur = rows[i % 3], *prev = rows[(i - 1) % 3], *prev2 = rows[(i + 1) % 3];
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            int d = prev[j - 1] + (ca != cb);
            if (prev[j] + 1 < d)
                d = prev[j] + 1;
            if (cur[j - 1] + 1 < d)
                d = cur[j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < d)
                d = prev2[j - 2] + 1;
            cur[j] = d;
        }
    }
    return rows[la % 3][lb];
}

void mxki_suggest_from(const char *name, const void *table, uint32_t n,
                       const char *(*name_at)(const void *table, uint32_t i), char *buf,
                       size_t size) {
    if (size == 0)
        return;
    buf[0] = '\0';
    if (name == NULL)
        return;
    size_t len = strlen(name + strspn(name, "-"));
    int limit = len >= 6 ? (int)(len / 3) : 1;
    const char *best[SUGGEST_MAX];
    int nbest = 0, best_d = limit;
    for (uint32_t i = 0; i < n; i++) {
        const char *cand = name_at(table, i);
        if (cand == NULL || strcmp(cand, name) == 0)
            continue;
        int d = distance(name, cand);
        if (d < 0 || d > best_d)
            continue;
        if (d < best_d) {
            best_d = d;
            nbest = 0;
        }
        int dup = 0;
        for (int k = 0; k < nbest; k++)
            dup |= strcmp(best[k], cand) == 0;
        if (!dup && nbest < SUGGEST_MAX)
            best[nbest++] = cand;
    }
    size_t pos = 0;
    for (int k = 0; k < nbest && pos < size; k++) {
        const char *sep = k == 0 ? "; did you mean " : k + 1 == nbest ? " or " : ", ";
        pos += (size_t)snprintf(buf + pos, size - pos, "%s'%s'%s", sep, best[k],
                                k + 1 == nbest ? "?" : "");
    }
}

/** Entry i of an array of names (the accessor mxki_suggest passes). */
static const char *array_at(const void *table, uint32_t i) {
    return ((const char *const *)table)[i];
}

void mxki_suggest(const char *name, const char *const *cands, size_t n, char *buf, size_t size) {
    mxki_suggest_from(name, cands, n > UINT32_MAX ? UINT32_MAX : (uint32_t)n, array_at, buf, size);
}
