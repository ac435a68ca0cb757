/*
 * "Did you mean" (kernel/runtime/suggest.c, compiled into this test as into the
 * `mxk` tool): distances against names worked out by hand, the closeness limit,
 * ties, duplicates, case, long names and the wording.
 */
#include <stdint.h>

#include "suggest.h"
#include "testing.h"

/** mxki_suggest of name over the NULL-terminated cands into a static buffer. */
static const char *suggest(const char *name, const char *const *cands) {
    static char buf[256];
    size_t n = 0;
    while (cands[n] != NULL)
        n++;
    mxki_suggest(name, cands, n, buf, sizeof buf);
    return buf;
}

/* One edit of each kind (insertion, deletion, substitution, transposition) is near. */
static void test_one_edit(void) {
    const char *const ops[] = {"FullyConnected", "Convolution", "Activation", NULL};
    CHECK(strcmp(suggest("FullyConected", ops), "; did you mean 'FullyConnected'?") == 0);
    CHECK(strcmp(suggest("FullyConnectedX", ops), "; did you mean 'FullyConnected'?") == 0);
    CHECK(strcmp(suggest("Convolutoin", ops), "; did you mean 'Convolution'?") == 0);
    CHECK(strcmp(suggest("Activatoin", ops), "; did you mean 'Activation'?") == 0);
    CHECK(strcmp(suggest("Activasion", ops), "; did you mean 'Activation'?") == 0);
    /* case alone costs nothing */
    CHECK(strcmp(suggest("fullyconnected", ops), "; did you mean 'FullyConnected'?") == 0);
}

/* Up to a third of the name's length (leading dashes not counted), at least 1. */
static void test_limit(void) {
    const char *const opts[] = {"--config-dir", "--backend", "--json", NULL};
    /* "confg-dir": 9 letters, limit 3; 1 edit */
    CHECK(strcmp(suggest("--confg-dir", opts), "; did you mean '--config-dir'?") == 0);
    /* "cnfg-dr": 7 letters, limit 2; 3 edits from config-dir */
    CHECK(strcmp(suggest("--cnfg-dr", opts), "") == 0);
    /* "jsn": 3 letters, limit 1 */
    CHECK(strcmp(suggest("--jsn", opts), "; did you mean '--json'?") == 0);
    CHECK(strcmp(suggest("--js", opts), "") == 0);
    const char *const ops[] = {"sinh", "norm", "topk", NULL};
    /* "Swish": 5 letters, limit 1; sinh is 2 edits away */
    CHECK(strcmp(suggest("Swish", ops), "") == 0);
    CHECK(strcmp(suggest("Nope", ops), "") == 0);
}

/* The nearest only; ties in the order given, at most 3; duplicates once. */
static void test_ties(void) {
    const char *const c[] = {"abcdef", "abcdeg", "abcdef", "abcdeh", "abcdei", "abcdxy", NULL};
    CHECK(strcmp(suggest("abcdez", c), "; did you mean 'abcdef', 'abcdeg' or 'abcdeh'?") == 0);
    const char *const two[] = {"plugins", "plugin", NULL};
    CHECK(strcmp(suggest("plugis", two), "; did you mean 'plugins' or 'plugin'?") == 0);
    CHECK(strcmp(suggest("plugns", two), "; did you mean 'plugins'?") == 0);
    const char *const nearer[] = {"abcdxx", "abcdex", NULL};
    CHECK(strcmp(suggest("abcdef", nearer), "; did you mean 'abcdex'?") == 0);
}

/* The name itself, NULL entries and names past 64 bytes are never suggested. */
static void test_edges(void) {
    const char *const c[] = {"train", NULL};
    CHECK(strcmp(suggest("train", c), "") == 0);
    char long_name[80];
    memset(long_name, 'a', 70);
    long_name[70] = '\0';
    const char *const longs[] = {long_name, NULL};
    long_name[0] = 'b';
    char probe[80];
    memcpy(probe, long_name, sizeof probe);
    probe[0] = 'a';
    CHECK(strcmp(suggest(probe, longs), "") == 0);
    const char *const with_null[3] = {NULL, "score", NULL};
    char buf[64];
    mxki_suggest("scroe", with_null, 2, buf, sizeof buf);
    CHECK(strcmp(buf, "; did you mean 'score'?") == 0);
    /* a small buffer is cut, and terminated */
    mxki_suggest("scroe", with_null, 2, buf, 10);
    CHECK(strlen(buf) == 9);
}

int main(void) {
    MXK_RUN(test_one_edit);
    MXK_RUN(test_limit);
    MXK_RUN(test_ties);
    MXK_RUN(test_edges);
    return MXK_TEST_EXIT();
}
