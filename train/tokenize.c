/*
 * Text to integer ids (python/mxnet/rnn/io.py encode_sentences): the character and
 * word tokenizers (the char-LSTM examples' list(text); example/rnn/bucketing/
 * lstm_bucketing.py tokenize_text) and the vocabulary, a string hash map kept in
 * insertion order.
 */
#include <stdlib.h>
#include <string.h>

#include "train_internal.h"

/** A vocabulary: entries in insertion order and an open-addressing index over them. */
struct mxkt_vocab {
    char **tokens;
    int32_t *ids;
    int64_t size, cap;
    int64_t *slots; /**< entry + 1, 0 when free; nslots a power of two > 2 * size */
    int64_t nslots;
};

mxk_status mxkt_vocab_create(mxkt_vocab **out) {
    mxkt_vocab *v = calloc(1, sizeof *v);
    if (v == NULL)
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "vocab: out of memory");
    *out = v;
    return MXK_OK;
}

void mxkt_vocab_free(mxkt_vocab *v) {
    if (v == NULL)
        return;
    for (int64_t i = 0; i < v->size; i++)
        free(v->tokens[i]);
    free(v->tokens);
    free(v->ids);
    free(v->slots);
    free(v);
}

/** The slot of `token`: its entry's, or the free one where it would go. */
static int64_t vocab_slot(const mxkt_vocab *v, const char *token) {
    uint64_t mask = (uint64_t)v->nslots - 1;
    for (uint64_t h = mxkt_hash(token) & mask;; h = (h + 1) & mask) {
        int64_t e = v->slots[h];
        if (e == 0 || strcmp(v->tokens[e - 1], token) == 0)
            return (int64_t)h;
    }
}

int32_t mxkt_vocab_find(const mxkt_vocab *v, const char *token, int32_t *id) {
    if (v->size == 0)
        return 0;
    int64_t e = v->slots[vocab_slot(v, token)];
    if (e == 0)
        return 0;
    *id = v->ids[e - 1];
    return 1;
}

/** Room for one more entry: grows the arrays and rebuilds a doubled index. */
static int vocab_grow(mxkt_vocab *v) {
    if (v->size == v->cap) {
        int64_t cap = v->cap ? 2 * v->cap : 16;
        char **t = realloc(v->tokens, (size_t)cap * sizeof *t);
        if (t == NULL)
            return 0;
        v->tokens = t;
        int32_t *ids = realloc(v->ids, (size_t)cap * sizeof *ids);
        if (ids == NULL)
            return 0;
        v->ids = ids;
        v->cap = cap;
    }
    if (2 * (v->size + 1) < v->nslots)
        return 1;
    int64_t n = v->nslots ? 2 * v->nslots : 32;
    int64_t *slots = calloc((size_t)n, sizeof *slots);
    if (slots == NULL)
        return 0;
    free(v->slots);
    v->slots = slots;
    v->nslots = n;
    for (int64_t i = 0; i < v->size; i++)
        v->slots[vocab_slot(v, v->tokens[i])] = i + 1;
    return 1;
}

mxk_status mxkt_vocab_add(mxkt_vocab *v, const char *token, int32_t id) {
    int32_t old;
    if (mxkt_vocab_find(v, token, &old))
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "vocab: token '%s' already present", token);
    char *copy = strdup(token);
    if (copy == NULL || !vocab_grow(v)) {
        free(copy);
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "vocab: out of memory");
    }
    v->tokens[v->size] = copy;
    v->ids[v->size] = id;
    v->slots[vocab_slot(v, token)] = ++v->size;
    return MXK_OK;
}

int64_t mxkt_vocab_size(const mxkt_vocab *v) {
    return v->size;
}

const char *mxkt_vocab_entry(const mxkt_vocab *v, int64_t i, int32_t *id) {
    *id = v->ids[i];
    return v->tokens[i];
}

void mxkt_tokens_free(mxkt_tokens *t) {
    if (t == NULL)
        return;
    free(t->offsets);
    free(t->tokens);
    free(t->storage);
    memset(t, 0, sizeof *t);
}

/**
 * Fills *out from `storage` (len + ntok bytes: the tokens' bytes, each followed by
 * a NUL) holding ntok tokens, with sentence s starting at token starts[s]
 * (nsent + 1 entries); takes over storage and starts on success and failure.
 */
static mxk_status tokens_finish(char *storage, int64_t ntok, int64_t *starts, int64_t nsent,
                                const char *what, mxkt_tokens *out) {
    memset(out, 0, sizeof *out);
    char **tokens = malloc((size_t)(ntok ? ntok : 1) * sizeof *tokens);
    if (tokens == NULL) {
        free(storage);
        free(starts);
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "%s: out of memory", what);
    }
    char *p = storage;
    for (int64_t i = 0; i < ntok; i++) {
        tokens[i] = p;
        p += strlen(p) + 1;
    }
    out->num_sentences = nsent;
    out->offsets = starts;
    out->tokens = tokens;
    out->storage = storage;
    return MXK_OK;
}

/** Length of the UTF-8 sequence at s (n bytes left), 0 when it is not valid UTF-8. */
static size_t utf8_len(const unsigned char *s, size_t n) {
    size_t k = s[0] < 0x80             ? 1
               : (s[0] & 0xE0) == 0xC0 ? 2
               : (s[0] & 0xF0) == 0xE0 ? 3
               : (s[0] & 0xF8) == 0xF0 ? 4
                                       : 0;
    if (k == 0 || k > n)
        return 0;
    uint32_t cp = k == 1 ? s[0] : (uint32_t)(s[0] & (0x7F >> k));
    for (size_t i = 1; i < k; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    static const uint32_t min[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min[k] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0; /* overlong, out of range or a surrogate: Python rejects them */
    return k;
}

/** MXK_ERR_INVALID_ARGUMENT "WHAT: NUL byte at byte N" when text holds one (tokens are C strings).
 */
static mxk_status check_no_nul(const char *text, size_t len, const char *what) {
    const char *nul = memchr(text, '\0', len);
    if (nul)
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "%s: NUL byte at byte %zu", what,
                          (size_t)(nul - text));
    return MXK_OK;
}

mxk_status mxkt_tokenize_chars(const char *text, size_t len, mxkt_tokens *out) {
    memset(out, 0, sizeof *out);
    MXKT_CHECK(check_no_nul(text, len, "tokenize_chars"));
    char *storage = malloc(2 * len + 1);
    int64_t *starts = calloc(2, sizeof *starts);
    if (storage == NULL || starts == NULL) {
        free(storage);
        free(starts);
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "tokenize_chars: out of memory");
    }
    const unsigned char *s = (const unsigned char *)text;
    char *p = storage;
    int64_t ntok = 0;
    for (size_t i = 0; i < len;) {
        size_t k = utf8_len(s + i, len - i);
        if (k == 0) {
            free(storage);
            free(starts);
            return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "tokenize_chars: invalid UTF-8 at byte %zu",
                              i);
        }
        memcpy(p, s + i, k);
        p[k] = '\0';
        p += k + 1;
        i += k;
        ntok++;
    }
    starts[1] = ntok;
    return tokens_finish(storage, ntok, starts, 1, "tokenize_chars", out);
}

mxk_status mxkt_tokenize_words(const char *raw, size_t raw_len, mxkt_tokens *out) {
    memset(out, 0, sizeof *out);
    MXKT_CHECK(check_no_nul(raw, raw_len, "tokenize_words"));
    /* Python's text mode reads "\r\n" and "\r" as "\n" (universal newlines) */
    char *text = malloc(raw_len + 1);
    if (text == NULL)
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "tokenize_words: out of memory");
    size_t len = 0;
    for (size_t i = 0; i < raw_len; i++) {
        text[len++] = raw[i] == '\r' ? '\n' : raw[i];
        i += raw[i] == '\r' && i + 1 < raw_len && raw[i + 1] == '\n';
    }
    int64_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n' && (i + 1 < len);
    lines += len > 0;
    char *storage = malloc(2 * len + 1);
    int64_t *starts = calloc((size_t)lines + 1, sizeof *starts);
    if (storage == NULL || starts == NULL) {
        free(text);
        free(storage);
        free(starts);
        return mxkt_error(MXK_ERR_OUT_OF_MEMORY, "tokenize_words: out of memory");
    }
    char *p = storage;
    int64_t ntok = 0, line = 0;
    for (size_t i = 0; i < len;) {
        /* one line, its '\n' included (readlines), split on ' ' without empty parts */
        size_t end = i;
        while (end < len && text[end] != '\n')
            end++;
        end += end < len;
        for (size_t j = i; j < end;) {
            size_t k = j;
            while (k < end && text[k] != ' ')
                k++;
            if (k > j) {
                memcpy(p, text + j, k - j);
                p[k - j] = '\0';
                p += k - j + 1;
                ntok++;
            }
            j = k + 1;
        }
        starts[++line] = ntok;
        i = end;
    }
    free(text);
    return tokens_finish(storage, ntok, starts, lines, "tokenize_words", out);
}

void mxkt_encoded_free(mxkt_encoded *e) {
    if (e == NULL)
        return;
    free(e->offsets);
    free(e->ids);
    memset(e, 0, sizeof *e);
}

/** Sentence offsets check (train_internal.h). */
int mxkt_offsets_valid(const int64_t *offsets, int64_t n) {
    if (n < 0 || offsets == NULL || offsets[0] != 0)
        return 0;
    for (int64_t i = 0; i < n; i++)
        if (offsets[i + 1] < offsets[i])
            return 0;
    return 1;
}

mxk_status mxkt_encode_sentences(const mxkt_tokens *sentences, mxkt_vocab **vocab,
                                 int32_t invalid_label, const char *invalid_key,
                                 int32_t start_label, mxkt_encoded *out) {
    memset(out, 0, sizeof *out);
    int64_t n = sentences->num_sentences;
    if (!mxkt_offsets_valid(sentences->offsets, n))
        return mxkt_error(MXK_ERR_INVALID_ARGUMENT, "encode_sentences: bad sentence offsets");
    int64_t ntok = sentences->offsets[n];
    mxkt_vocab *v = *vocab;
    int new_vocab = v == NULL;
    mxk_status st = MXK_OK;
    if (new_vocab && (st = mxkt_vocab_create(&v)) == MXK_OK)
        st = mxkt_vocab_add(v, invalid_key, invalid_label);
    out->offsets = malloc((size_t)(n + 1) * sizeof *out->offsets);
    out->ids = malloc((size_t)(ntok ? ntok : 1) * sizeof *out->ids);
    if (st == MXK_OK && (out->offsets == NULL || out->ids == NULL))
        st = mxkt_error(MXK_ERR_OUT_OF_MEMORY, "encode_sentences: out of memory");
    int32_t idx = start_label;
    for (int64_t i = 0; i < ntok && st == MXK_OK; i++) {
        const char *word = sentences->tokens[i];
        if (mxkt_vocab_find(v, word, &out->ids[i]))
            continue;
        if (!new_vocab) {
            st = mxkt_error(MXK_ERR_INVALID_ARGUMENT, "encode_sentences: unknown token '%s'", word);
            break;
        }
        if (idx == invalid_label)
            idx++;
        st = mxkt_vocab_add(v, word, idx);
        out->ids[i] = idx++;
    }
    if (st != MXK_OK) {
        if (new_vocab)
            mxkt_vocab_free(v);
        mxkt_encoded_free(out);
        return st;
    }
    memcpy(out->offsets, sentences->offsets, (size_t)(n + 1) * sizeof *out->offsets);
    out->num_sentences = n;
    *vocab = v;
    return MXK_OK;
}
