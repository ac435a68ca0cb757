/*
 * Prints what the trainer's text pipeline makes of a file, for bucket_conform.py:
 *   bucket_tool chars FILE INVALID START
 *   bucket_tool words FILE INVALID START BATCH BUCKETS LAYOUT SHUFFLE SEED EPOCHS
 * chars / words tokenize FILE (mxkt_tokenize_chars / mxkt_tokenize_words) and
 * encode it (mxkt_encode_sentences, invalid_key "\n"), printing "vocab ID HEX" per
 * entry (the token's bytes in hex) and "sent IDS..." per sentence; words then runs a
 * BucketSentenceIter (invalid_label INVALID, BUCKETS comma-separated or "-" to
 * choose them) for EPOCHS epochs, printing "default KEY ROWS COLS", "batches N",
 * "discarded N", and per batch "batch KEY ROWS COLS", "data V..." and "label V...".
 * Exit 1 with the error on stderr on failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mxk_train.h"
#include "train_test_util.h"

/** Prints `n` floats of `arr` after `tag`. */
static int print_array(const char *tag, mxk_ndarray *arr, int64_t n) {
    float *v = malloc((size_t)n * sizeof *v);
    if (v == NULL || mxk_ndarray_copy_to_host(arr, v, (uint64_t)n * sizeof *v) != MXK_OK) {
        free(v);
        return 0;
    }
    printf("%s", tag);
    for (int64_t i = 0; i < n; i++)
        printf(" %g", v[i]);
    printf("\n");
    free(v);
    return 1;
}

/** Runs the iterator over `e` as argv[5..10] say. */
static int run_iter(const mxkt_encoded *e, float invalid, char **argv) {
    int64_t buckets[64];
    uint32_t nb = 0;
    if (strcmp(argv[6], "-") != 0)
        for (char *p = strtok(argv[6], ","); p && nb < 64; p = strtok(NULL, ","))
            buckets[nb++] = atoll(p);
    mxkt_bucket_iter_options o = {.batch_size = atoll(argv[5]),
                                  .buckets = buckets,
                                  .num_buckets = nb,
                                  .invalid_label = invalid,
                                  .layout = argv[7],
                                  .shuffle = atoi(argv[8]),
                                  .seed = strtoull(argv[9], NULL, 10)};
    mxkt_iter *it = NULL;
    int64_t discarded = 0;
    if (mxkt_bucket_sentence_iter_create(e, &o, &discarded, &it) != MXK_OK)
        return 0;
    printf("default %lld %lld %lld\nbatches %lld\ndiscarded %lld\n",
           (long long)it->default_bucket_key, (long long)it->data_shape.dims[0],
           (long long)it->data_shape.dims[1], (long long)it->num_batches, (long long)discarded);
    int ok = 1;
    for (int epoch = 0; ok && epoch < atoi(argv[10]); epoch++) {
        int32_t has = 1;
        ok = mxkt_iter_reset(it) == MXK_OK;
        while (ok && (ok = mxkt_iter_next(it, &has) == MXK_OK) && has) {
            mxk_ndarray *d, *l;
            uint32_t pad;
            ok = it->batch(it, &d, &l, &pad) == MXK_OK;
            int64_t n = it->batch_data_shape.dims[0] * it->batch_data_shape.dims[1];
            printf("batch %lld %lld %lld\n", (long long)it->bucket_key,
                   (long long)it->batch_data_shape.dims[0],
                   (long long)it->batch_data_shape.dims[1]);
            ok = ok && print_array("data", d, n) && print_array("label", l, n);
        }
    }
    mxkt_iter_free(it);
    return ok;
}

int main(int argc, char **argv) {
    int words = argc == 11 && strcmp(argv[1], "words") == 0;
    if (!words && !(argc == 5 && strcmp(argv[1], "chars") == 0)) {
        fprintf(stderr, "usage: bucket_tool chars FILE INVALID START | words FILE INVALID START "
                        "BATCH BUCKETS LAYOUT SHUFFLE SEED EPOCHS\n");
        return 2;
    }
    if (tt_init() != 0)
        return 1;
    char *text = NULL;
    size_t size = 0;
    mxkt_tokens t = {0};
    mxkt_encoded e = {0};
    mxkt_vocab *v = NULL;
    int ok = mxk_file_read(argv[2], "text", 1 << 24, &text, &size) == MXK_OK;
    if (ok)
        ok = (words ? mxkt_tokenize_words(text, size, &t) : mxkt_tokenize_chars(text, size, &t)) ==
             MXK_OK;
    if (ok)
        ok = mxkt_encode_sentences(&t, &v, atoi(argv[3]), "\n", atoi(argv[4]), &e) == MXK_OK;
    for (int64_t i = 0; ok && i < mxkt_vocab_size(v); i++) {
        int32_t id;
        const char *tok = mxkt_vocab_entry(v, i, &id);
        printf("vocab %d ", id);
        for (const char *c = tok; *c; c++)
            printf("%02x", (unsigned char)*c);
        printf("\n");
    }
    for (int64_t s = 0; ok && s < e.num_sentences; s++) {
        printf("sent");
        for (int64_t i = e.offsets[s]; i < e.offsets[s + 1]; i++)
            printf(" %d", e.ids[i]);
        printf("\n");
    }
    if (ok && words)
        ok = run_iter(&e, (float)atoi(argv[3]), argv);
    if (!ok)
        fprintf(stderr, "bucket_tool: %s\n", mxkt_last_error());
    mxkt_encoded_free(&e);
    mxkt_vocab_free(v);
    mxkt_tokens_free(&t);
    mxk_free(text);
    return ok ? 0 : 1;
}
