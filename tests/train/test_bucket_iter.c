/*
 * The text pipeline of the trainer (train/tokenize.c, train/bucket_iter.c) against
 * hand-computed values of upstream's python/mxnet/rnn/io.py and
 * example/rnn/bucketing/lstm_bucketing.py: the tokenizers' tokens, the ids and
 * vocabulary of encode_sentences, and BucketSentenceIter's exact batches on a tiny
 * corpus (bucket choice, padding, shifted labels, discards, NT / TN layouts, the
 * seeded shuffles, reset), and the error of each kind of bad input.
 */
#include <stdlib.h>
#include <string.h>

#include "mxk_train.h"
#include "testing.h"
#include "train_test_util.h"

/** Checks that sentence s of `t` has exactly the `n` tokens of `want`. */
static void check_sentence(const mxkt_tokens *t, int64_t s, const char *const *want, int64_t n) {
    CHECK_EQ_INT(t->offsets[s + 1] - t->offsets[s], n);
    for (int64_t i = 0; i < n && i < t->offsets[s + 1] - t->offsets[s]; i++)
        CHECK(strcmp(t->tokens[t->offsets[s] + i], want[i]) == 0);
}

/** Words as lstm_bucketing.py's tokenize_text: split(' ') per line, '\n' kept. */
static void test_tokenize_words(void) {
    const char *text = "the cat  sat \n\nthe dog\nend";
    mxkt_tokens t;
    CHECK_EQ_INT(mxkt_tokenize_words(text, strlen(text), &t), MXK_OK);
    CHECK_EQ_INT(t.num_sentences, 4);
    const char *s0[] = {"the", "cat", "sat", "\n"}, *s1[] = {"\n"}, *s2[] = {"the", "dog\n"},
               *s3[] = {"end"};
    check_sentence(&t, 0, s0, 4);
    check_sentence(&t, 1, s1, 1);
    check_sentence(&t, 2, s2, 2);
    check_sentence(&t, 3, s3, 1);
    mxkt_tokens_free(&t);
    /* Python's universal newlines: "\r\n" and a lone "\r" read as "\n" */
    const char *crlf = "a b\r\nc \rd";
    CHECK_EQ_INT(mxkt_tokenize_words(crlf, strlen(crlf), &t), MXK_OK);
    CHECK_EQ_INT(t.num_sentences, 3);
    const char *c0[] = {"a", "b\n"}, *c1[] = {"c", "\n"}, *c2[] = {"d"};
    check_sentence(&t, 0, c0, 2);
    check_sentence(&t, 1, c1, 2);
    check_sentence(&t, 2, c2, 1);
    mxkt_tokens_free(&t);
    CHECK_EQ_INT(mxkt_tokenize_words("ab c\0d", 6, &t), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "tokenize_words: NUL byte at byte 4") == 0);
    CHECK(t.tokens == NULL && t.offsets == NULL);
    CHECK_EQ_INT(mxkt_tokenize_words("", 0, &t), MXK_OK);
    CHECK_EQ_INT(t.num_sentences, 0);
    CHECK_EQ_INT(t.offsets[0], 0);
    mxkt_tokens_free(&t);
    mxkt_tokens_free(&t); /* zeroed: a no-op */
}

/** Characters are code points; invalid UTF-8 is an error at its byte. */
static void test_tokenize_chars(void) {
    const char *text = "h\xc3\xa9 \xe2\x82\xac\xf0\x9f\x98\x80\n";
    mxkt_tokens t;
    CHECK_EQ_INT(mxkt_tokenize_chars(text, strlen(text), &t), MXK_OK);
    CHECK_EQ_INT(t.num_sentences, 1);
    const char *want[] = {"h", "\xc3\xa9", " ", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\n"};
    check_sentence(&t, 0, want, 6);
    mxkt_tokens_free(&t);
    CHECK_EQ_INT(mxkt_tokenize_chars("a\0", 2, &t), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "tokenize_chars: NUL byte at byte 1") == 0);
    const char *bad[] = {"ab\xff", "ab\xc3", "ab\xc0\x80", "ab\xed\xa0\x80", "ab\xc3(x"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ_INT(mxkt_tokenize_chars(bad[i], strlen(bad[i]), &t), MXK_ERR_INVALID_ARGUMENT);
        CHECK(strcmp(mxkt_last_error(), "tokenize_chars: invalid UTF-8 at byte 2") == 0);
        CHECK(t.tokens == NULL && t.offsets == NULL);
    }
}

/** encode_sentences: ids in order of appearance from start_label, skipping invalid_label. */
static void test_encode_sentences(void) {
    const char *text = "the cat  sat \n\nthe dog\n";
    mxkt_tokens t;
    CHECK_EQ_INT(mxkt_tokenize_words(text, strlen(text), &t), MXK_OK);
    mxkt_vocab *v = NULL;
    mxkt_encoded e;
    CHECK_EQ_INT(mxkt_encode_sentences(&t, &v, 0, "\n", 1, &e), MXK_OK);
    CHECK_EQ_INT(e.num_sentences, 3);
    const int32_t ids[] = {1, 2, 3, 0, 0, 1, 4};
    const int64_t offs[] = {0, 4, 5, 7};
    for (int i = 0; i < 7; i++)
        CHECK_EQ_INT(e.ids[i], ids[i]);
    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(e.offsets[i], offs[i]);
    const char *tok[] = {"\n", "the", "cat", "sat", "dog\n"};
    const int32_t tid[] = {0, 1, 2, 3, 4};
    CHECK_EQ_INT(mxkt_vocab_size(v), 5);
    for (int64_t i = 0; i < 5; i++) {
        int32_t id = -7;
        CHECK(strcmp(mxkt_vocab_entry(v, i, &id), tok[i]) == 0);
        CHECK_EQ_INT(id, tid[i]);
    }
    mxkt_encoded_free(&e);

    /* a given vocabulary is used unchanged; a token it lacks is upstream's assertion */
    CHECK_EQ_INT(mxkt_encode_sentences(&t, &v, 0, "\n", 1, &e), MXK_OK);
    CHECK_EQ_INT(e.ids[6], 4);
    CHECK_EQ_INT(mxkt_vocab_size(v), 5);
    mxkt_encoded_free(&e);
    mxkt_tokens_free(&t);
    CHECK_EQ_INT(mxkt_tokenize_words("the bird", 8, &t), MXK_OK);
    CHECK_EQ_INT(mxkt_encode_sentences(&t, &v, 0, "\n", 1, &e), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "encode_sentences: unknown token 'bird'") == 0);
    CHECK(e.ids == NULL && e.offsets == NULL);
    CHECK_EQ_INT(mxkt_vocab_add(v, "the", 9), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "vocab: token 'the' already present") == 0);
    mxkt_vocab_free(v);

    /* upstream's defaults (invalid_label -1, start_label 0) and a skipped invalid_label */
    mxkt_vocab *v2 = NULL;
    CHECK_EQ_INT(mxkt_encode_sentences(&t, &v2, 1, "\n", 0, &e), MXK_OK);
    CHECK_EQ_INT(e.ids[0], 0);
    CHECK_EQ_INT(e.ids[1], 2);
    int32_t id = 0;
    CHECK_EQ_INT(mxkt_vocab_find(v2, "\n", &id), 1);
    CHECK_EQ_INT(id, 1);
    CHECK_EQ_INT(mxkt_vocab_find(v2, "dog", &id), 0);
    mxkt_encoded_free(&e);
    mxkt_vocab_free(v2);
    mxkt_tokens_free(&t);

    /* many tokens: the vocabulary's index grows and finds every one */
    mxkt_vocab *v3 = NULL;
    CHECK_EQ_INT(mxkt_vocab_create(&v3), MXK_OK);
    char name[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "w%d", i);
        CHECK_EQ_INT(mxkt_vocab_add(v3, name, 3 * i), MXK_OK);
    }
    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "w%d", i);
        CHECK_EQ_INT(mxkt_vocab_find(v3, name, &id), 1);
        CHECK_EQ_INT(id, 3 * i);
    }
    mxkt_vocab_free(v3);
}

/** The tiny corpus: sentence i of length lens[i] holds 10 * i + t + 1 at step t. */
static void corpus(mxkt_encoded *e, const int64_t *lens, int64_t n) {
    e->num_sentences = n;
    e->offsets = calloc((size_t)n + 1, sizeof *e->offsets);
    for (int64_t i = 0; i < n; i++)
        e->offsets[i + 1] = e->offsets[i] + lens[i];
    e->ids = calloc((size_t)e->offsets[n] + 1, sizeof *e->ids);
    for (int64_t i = 0; i < n; i++)
        for (int64_t t = 0; t < lens[i]; t++)
            e->ids[e->offsets[i] + t] = (int32_t)(10 * i + t + 1);
}

/** Reads the next batch: its key, shapes checked against (rows, cols), data and label. */
static int next_batch(mxkt_iter *it, int64_t rows, int64_t cols, float *data, float *label) {
    int32_t has = 0;
    CHECK_EQ_INT(mxkt_iter_next(it, &has), MXK_OK);
    if (!has)
        return 0;
    mxk_ndarray *d = NULL, *l = NULL;
    uint32_t pad = 9;
    CHECK_EQ_INT(it->batch(it, &d, &l, &pad), MXK_OK);
    CHECK_EQ_INT(pad, 0);
    mxk_shape ds = mxk_ndarray_shape(d), ls = mxk_ndarray_shape(l);
    CHECK(ds.ndim == 2 && ds.dims[0] == rows && ds.dims[1] == cols);
    CHECK(ls.ndim == 2 && ls.dims[0] == rows && ls.dims[1] == cols);
    CHECK(it->batch_data_shape.dims[0] == rows && it->batch_data_shape.dims[1] == cols);
    CHECK(it->batch_label_shape.dims[0] == rows && it->batch_label_shape.dims[1] == cols);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(d, data, (uint64_t)(rows * cols) * 4), MXK_OK);
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(l, label, (uint64_t)(rows * cols) * 4), MXK_OK);
    return 1;
}

/** Checks n floats. */
static void check_floats(const float *got, const float *want, int n) {
    for (int i = 0; i < n; i++)
        CHECK_NEAR(got[i], want[i], 0);
}

/** Creates a BucketSentenceIter with stderr (its warning line) captured into log. */
static mxk_status create_iter(const mxkt_encoded *e, const mxkt_bucket_iter_options *o,
                              int64_t *discarded, mxkt_iter **it, char *log, size_t size) {
    mxk_t_capture cap;
    CHECK(mxk_t_capture_begin(&cap));
    mxk_status st = mxkt_bucket_sentence_iter_create(e, o, discarded, it);
    mxk_t_capture_end(&cap, log, size);
    return st;
}

/** Given buckets (unsorted), NT: padding, shifted labels, the discard and its warning. */
static void test_bucket_iter_given(void) {
    const int64_t lens[] = {1, 2, 2, 3, 3, 3, 5, 7}, buckets[] = {5, 3};
    mxkt_encoded e;
    corpus(&e, lens, 8);
    mxkt_bucket_iter_options o = {
        .batch_size = 2, .buckets = buckets, .num_buckets = 2, .invalid_label = -1};
    mxkt_iter *it = NULL;
    int64_t discarded = -1;
    char log[256];
    CHECK_EQ_INT(create_iter(&e, &o, &discarded, &it, log, sizeof log), MXK_OK);
    CHECK(strcmp(log, "WARNING: discarded 1 sentences longer than the largest bucket.\n") == 0);
    CHECK_EQ_INT(discarded, 1);
    /* bucket 5 holds one sentence, no batch, yet stays the default bucket (upstream) */
    CHECK_EQ_INT(it->default_bucket_key, 5);
    CHECK(it->data_shape.ndim == 2 && it->data_shape.dims[0] == 2 && it->data_shape.dims[1] == 5);
    CHECK(it->label_shape.ndim == 2 && it->label_shape.dims[1] == 5);
    CHECK_EQ_INT(it->num_batches, 3);
    CHECK_EQ_INT(it->batch_size, 2);
    float d[10], l[10];
    const float want_d[3][6] = {
        {1, -1, -1, 11, 12, -1}, {21, 22, -1, 31, 32, 33}, {41, 42, 43, 51, 52, 53}};
    const float want_l[3][6] = {
        {-1, -1, -1, 12, -1, -1}, {22, -1, -1, 32, 33, -1}, {42, 43, -1, 52, 53, -1}};
    for (int epoch = 0; epoch < 2; epoch++) { /* reset replays the same order */
        for (int b = 0; b < 3; b++) {
            CHECK(next_batch(it, 2, 3, d, l));
            CHECK_EQ_INT(it->bucket_key, 3);
            check_floats(d, want_d[b], 6);
            check_floats(l, want_l[b], 6);
        }
        CHECK(!next_batch(it, 2, 3, d, l));
        CHECK_EQ_INT(mxkt_iter_reset(it), MXK_OK);
    }
    mxkt_iter_free(it);

    /* TN: the same batches transposed, (time, batch) */
    o.layout = "TN";
    o.invalid_label = 0;
    CHECK_EQ_INT(create_iter(&e, &o, NULL, &it, log, sizeof log), MXK_OK);
    CHECK(it->data_shape.dims[0] == 5 && it->data_shape.dims[1] == 2);
    CHECK(next_batch(it, 3, 2, d, l));
    const float tn_d[6] = {1, 11, 0, 12, 0, 0}, tn_l[6] = {0, 12, 0, 0, 0, 0};
    check_floats(d, tn_d, 6);
    check_floats(l, tn_l, 6);
    mxkt_iter_free(it);
    mxkt_encoded_free(&e);
}

/** Chosen buckets: every length held by >= batch_size sentences (np.bincount). */
static void test_bucket_iter_chosen(void) {
    const int64_t lens[] = {1, 2, 2, 3, 3, 3, 5, 7};
    mxkt_encoded e;
    corpus(&e, lens, 8);
    mxkt_bucket_iter_options o = {.batch_size = 2, .invalid_label = -1};
    mxkt_iter *it = NULL;
    int64_t discarded = -1;
    char log[256];
    CHECK_EQ_INT(create_iter(&e, &o, &discarded, &it, log, sizeof log), MXK_OK);
    CHECK(strcmp(log, "WARNING: discarded 2 sentences longer than the largest bucket.\n") == 0);
    CHECK_EQ_INT(discarded, 2);
    CHECK_EQ_INT(it->default_bucket_key, 3);
    CHECK_EQ_INT(it->num_batches, 2);
    float d[6], l[6];
    CHECK(next_batch(it, 2, 2, d, l));
    CHECK_EQ_INT(it->bucket_key, 2);
    const float d0[4] = {1, -1, 11, 12}, l0[4] = {-1, -1, 12, -1};
    check_floats(d, d0, 4);
    check_floats(l, l0, 4);
    CHECK(next_batch(it, 2, 3, d, l));
    CHECK_EQ_INT(it->bucket_key, 3);
    const float d1[6] = {31, 32, 33, 41, 42, 43};
    check_floats(d, d1, 6);
    CHECK(!next_batch(it, 2, 3, d, l));
    mxkt_iter_free(it);
    mxkt_encoded_free(&e);
}

/**
 * Runs two epochs of `it`, writes the first token of every served row into out and
 * returns their number; *sorted_keys counts the epochs whose bucket keys came in
 * ascending order (the unshuffled batch order).
 */
static int64_t epoch_rows(mxkt_iter *it, float *out, int *sorted_keys) {
    int64_t n = 0;
    *sorted_keys = 0;
    float d[64], l[64];
    for (int epoch = 0; epoch < 2; epoch++) {
        int32_t has = 1;
        int64_t last_key = 0;
        int sorted = 1;
        while (has) {
            CHECK_EQ_INT(mxkt_iter_next(it, &has), MXK_OK);
            if (!has)
                break;
            mxk_ndarray *dd, *ll;
            uint32_t pad;
            CHECK_EQ_INT(it->batch(it, &dd, &ll, &pad), MXK_OK);
            int64_t T = it->bucket_key;
            sorted &= T >= last_key;
            last_key = T;
            CHECK_EQ_INT(mxk_ndarray_copy_to_host(dd, d, (uint64_t)(4 * T) * 4), MXK_OK);
            CHECK_EQ_INT(mxk_ndarray_copy_to_host(ll, l, (uint64_t)(4 * T) * 4), MXK_OK);
            for (int r = 0; r < 4; r++) {
                out[n++] = d[r * T];
                CHECK(d[r * T + 1] == l[r * T]); /* the label stays the shifted data */
            }
        }
        *sorted_keys += sorted;
        CHECK_EQ_INT(mxkt_iter_reset(it), MXK_OK);
    }
    return n;
}

/** Shuffle: equal seeds give equal epochs, another seed another order, each epoch all rows. */
static void test_bucket_iter_shuffle(void) {
    int64_t lens[48];
    for (int i = 0; i < 48; i++)
        lens[i] = 2 + i % 3 * 2; /* 16 sentences each of lengths 2, 4, 6 */
    mxkt_encoded e;
    corpus(&e, lens, 48);
    const int64_t buckets[] = {3, 6};
    mxkt_bucket_iter_options o = {.batch_size = 4,
                                  .buckets = buckets,
                                  .num_buckets = 2,
                                  .invalid_label = -1,
                                  .shuffle = 1,
                                  .seed = 7};
    mxkt_iter *a = NULL, *b = NULL, *c = NULL;
    char log[256];
    CHECK_EQ_INT(create_iter(&e, &o, NULL, &a, log, sizeof log), MXK_OK);
    CHECK_EQ_INT(create_iter(&e, &o, NULL, &b, log, sizeof log), MXK_OK);
    o.seed = 8;
    CHECK_EQ_INT(create_iter(&e, &o, NULL, &c, log, sizeof log), MXK_OK);
    CHECK_EQ_INT(a->num_batches, 12);
    float ra[96], rb[96], rc[96];
    int sa, sb, sc;
    CHECK_EQ_INT(epoch_rows(a, ra, &sa), 96);
    CHECK_EQ_INT(epoch_rows(b, rb, &sb), 96);
    CHECK_EQ_INT(epoch_rows(c, rc, &sc), 96);
    CHECK_EQ_INT(sa + sb + sc, 0); /* the batches' order is shuffled too (12!/4!8! orders) */
    CHECK(memcmp(ra, rb, sizeof ra) == 0);
    CHECK(memcmp(ra, rc, sizeof ra) != 0);
    CHECK(memcmp(ra, ra + 48, 48 * sizeof *ra) != 0); /* the second epoch reshuffled */
    for (int epoch = 0; epoch < 2; epoch++) {
        int seen[48] = {0}, ordered = 1;
        for (int i = 0; i < 48; i++) {
            int s = (int)(ra[48 * epoch + i] - 1) / 10;
            CHECK(s >= 0 && s < 48);
            if (s >= 0 && s < 48)
                seen[s]++;
            ordered &= s == i;
        }
        for (int s = 0; s < 48; s++)
            CHECK_EQ_INT(seen[s], 1);
        CHECK(!ordered);
    }
    mxkt_iter_free(a);
    mxkt_iter_free(b);
    mxkt_iter_free(c);
    mxkt_encoded_free(&e);
}

/** Bad input: each error's exact message, nothing created. */
static void test_bucket_iter_errors(void) {
    const int64_t lens[] = {1, 2, 2, 3, 3, 3, 5, 7}, zero[] = {3, 0}, small[] = {4};
    mxkt_encoded e;
    corpus(&e, lens, 8);
    mxkt_iter *it = NULL;
    struct {
        mxkt_bucket_iter_options o;
        const char *msg;
    } cases[] = {
        {{.batch_size = 0}, "BucketSentenceIter: batch size must be >= 1"},
        {{.batch_size = 2, .buckets = zero, .num_buckets = 2},
         "BucketSentenceIter: bucket lengths must be >= 1"},
        {{.batch_size = 2, .layout = "NC"},
         "BucketSentenceIter: invalid layout 'NC': must be NT (batch major) or TN (time major)"},
        {{.batch_size = 9}, "BucketSentenceIter: no bucket holds a sentence (8 discarded)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char log[256];
        CHECK_EQ_INT(create_iter(&e, &cases[i].o, NULL, &it, log, sizeof log),
                     MXK_ERR_INVALID_ARGUMENT);
        CHECK(strcmp(mxkt_last_error(), cases[i].msg) == 0);
        if (strcmp(mxkt_last_error(), cases[i].msg) != 0)
            fprintf(stderr, "  got '%s'\n", mxkt_last_error());
    }
    e.offsets[3] = 1; /* decreasing */
    mxkt_bucket_iter_options o = {.batch_size = 1, .buckets = small, .num_buckets = 1};
    CHECK_EQ_INT(mxkt_bucket_sentence_iter_create(&e, &o, NULL, &it), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "BucketSentenceIter: bad sentence offsets") == 0);
    mxkt_tokens t = {.num_sentences = 8, .offsets = e.offsets};
    mxkt_vocab *v = NULL;
    mxkt_encoded out;
    CHECK_EQ_INT(mxkt_encode_sentences(&t, &v, -1, "\n", 0, &out), MXK_ERR_INVALID_ARGUMENT);
    CHECK(strcmp(mxkt_last_error(), "encode_sentences: bad sentence offsets") == 0);
    CHECK(v == NULL);
    mxkt_encoded_free(&e);
}

int main(void) {
    int rc = tt_init(); /* the batch arrays need the CPU backend (cpu-blas) */
    if (rc)
        return rc;
    MXK_RUN(test_tokenize_words);
    MXK_RUN(test_tokenize_chars);
    MXK_RUN(test_encode_sentences);
    MXK_RUN(test_bucket_iter_given);
    MXK_RUN(test_bucket_iter_chosen);
    MXK_RUN(test_bucket_iter_shuffle);
    MXK_RUN(test_bucket_iter_errors);
    return MXK_TEST_EXIT();
}
