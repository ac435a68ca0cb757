/*
 * "Did you mean": the nearest valid names to a mistyped one. Shared by the kernel
 * (unknown operator, attribute, iterator) and the `mxk` tool (commands, options,
 * backends), which compiles suggest.c into itself. Depends on the C library only.
 */
#ifndef MXK_SUGGEST_H
#define MXK_SUGGEST_H

#include <stddef.h>
#include <stdint.h>

/**
 * Writes "; did you mean 'A'?" into buf ("'A' or 'B'", "'A', 'B' or 'C'" for ties)
 * naming the candidates nearest to `name`, or "" when none is close. Distance:
 * Damerau-Levenshtein (optimal string alignment: insertion, deletion, substitution
 * and transposition of neighbours cost 1), letters compared without case; a
 * candidate is close when its distance is at most a third of the length of
 * `name` (leading '-' not counted), and at least 1, as git's "did you mean" and
 * Python's difflib.get_close_matches keep only near names. At most 3 names, those
 * of the smallest distance, in the order of `cands`; duplicates and NULL entries
 * of cands are skipped; names longer than 64 bytes are never close. buf is always
 * terminated (size > 0). Pure; thread-safe.
 */
void mxki_suggest(const char *name, const char *const *cands, size_t n, char *buf, size_t size);

/**
 * mxki_suggest over a table read through an accessor: the candidates are
 * name_at(table, 0 .. n-1) (a NULL name is skipped), so that a caller with its own
 * records (an attribute schema, the registry) needs no array of names.
 */
void mxki_suggest_from(const char *name, const void *table, uint32_t n,
                       const char *(*name_at)(const void *table, uint32_t i), char *buf,
                       size_t size);

#endif /* MXK_SUGGEST_H */
