/*
 * The language model of mxk_rnn.h on tiny sizes: the step symbol against the
 * training symbol (T single steps carrying the states give the unrolled
 * network's softmax rows) for every mode, unrolled and fused; argument and
 * state names; PREFIX-lm.json round trip and each load error's message; the
 * sampler's draw (deterministic per seed, frequencies of the tempered
 * distribution, exclusions, errors). (lm_conformance.py compares the training
 * symbol with MXNet 1.9.1's lstm_bucketing.py sym_gen.)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mxk_rnn.h"
#include "testing.h"
#include "train_test_util.h"

static const mxk_context cpu = {MXK_DEV_CPU, 0};

enum { N = 2, T = 3, V = 5 };

static mxkt_rnn_lm_config config(const char *mode, int32_t fused) {
    mxkt_rnn_lm_config c = {.num_layers = 2, .num_hidden = 3, .num_embed = 4, .vocab_size = V};
    snprintf(c.mode, sizeof c.mode, "%s", mode);
    snprintf(c.level, sizeof c.level, "char");
    c.fused = fused;
    c.dropout = 0.25f;
    return c;
}

/** Fills every argument but data and label with uniform(-0.6, 0.6) from a fixed LCG. */
static void fill_params(mxk_executor *ex, const mxk_symbol *sym) {
    uint32_t na = 0;
    char **args = NULL;
    uint64_t state = 12345;
    CHECK_EQ_INT(mxk_symbol_list_names(sym, MXK_SYMBOL_ARGUMENTS, &na, &args), MXK_OK);
    for (uint32_t i = 0; i < na; i++) {
        if (!strcmp(args[i], "data") || !strcmp(args[i], "softmax_label"))
            continue;
        mxk_ndarray *a = mxk_executor_arg(ex, args[i]);
        uint64_t n = mxk_ndarray_size(a);
        float *v = malloc(n * sizeof *v);
        for (uint64_t k = 0; k < n; k++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            v[k] = (float)((double)(state >> 40) / 16777216.0 * 1.2 - 0.6);
        }
        CHECK_EQ_INT(mxk_ndarray_copy_from_host(a, v, n * sizeof *v), MXK_OK);
        free(v);
    }
    mxk_string_list_free(args);
}

/** T steps of the step symbol carrying the states give the training symbol's rows. */
static void check_step_agrees(const char *mode, int32_t fused) {
    mxkt_rnn_lm_config c = config(mode, fused);
    mxk_symbol *train = NULL, *step = NULL;
    CHECK_EQ_INT(mxkt_rnn_lm_symbol(&c, T, &train), MXK_OK);
    uint32_t ns = 0;
    char **states = NULL;
    CHECK_EQ_INT(mxkt_rnn_lm_step_symbol(&c, &step, &ns, &states), MXK_OK);
    CHECK_EQ_INT(ns, (strcmp(mode, "lstm") == 0 ? 2 : 1) * (fused ? 1 : 2));
    CHECK_EQ_INT(mxk_symbol_num_outputs(step), ns + 1);

    mxk_shape tshape[2] = {{.ndim = 2, .dims = {N, T}}, {.ndim = 2, .dims = {N, T}}};
    const char *tnames[2] = {"data", "softmax_label"};
    mxk_executor *tex = NULL, *sex = NULL;
    CHECK_EQ_INT(
        mxk_executor_simple_bind(train, cpu, 2, tnames, tshape, "null", 0, NULL, NULL, NULL, &tex),
        MXK_OK);
    fill_params(tex, train);
    const float ids[N * T] = {1, 4, 0, 3, 3, 2};
    CHECK_EQ_INT(mxk_ndarray_copy_from_host(mxk_executor_arg(tex, "data"), ids, sizeof ids),
                 MXK_OK);
    CHECK_EQ_INT(mxk_executor_forward(tex, 0), MXK_OK);
    float want[N * T * V];
    CHECK_EQ_INT(mxk_ndarray_copy_to_host(mxk_executor_output(tex, 0), want, sizeof want), MXK_OK);

    const char *snames[8] = {"data"};
    mxk_shape sshape[8] = {{.ndim = 2, .dims = {N, 1}}};
    for (uint32_t k = 0; k < ns; k++) {
        snames[1 + k] = states[k];
        sshape[1 + k] = mxkt_rnn_lm_state_shape(&c, N);
    }
    CHECK_EQ_INT(mxk_executor_simple_bind(step, cpu, 1 + ns, snames, sshape, "null", 0, NULL, NULL,
                                          NULL, &sex),
                 MXK_OK);
    uint32_t na = 0;
    char **args = NULL;
    CHECK_EQ_INT(mxk_symbol_list_names(step, MXK_SYMBOL_ARGUMENTS, &na, &args), MXK_OK);
    for (uint32_t i = 0; i < na; i++) {
        mxk_ndarray *from = mxk_executor_arg(tex, args[i]);
        int is_state = 0;
        for (uint32_t k = 0; k < ns; k++)
            is_state |= !strcmp(args[i], states[k]);
        /* the step's arguments: data, the states, and exactly the training parameters */
        CHECK(is_state || from != NULL);
        if (from != NULL && strcmp(args[i], "data") != 0)
            CHECK_EQ_INT(mxk_ndarray_copy_to(from, mxk_executor_arg(sex, args[i])), MXK_OK);
    }
    mxk_string_list_free(args);
    double worst = 0;
    for (int t = 0; t < T; t++) {
        float col[N] = {ids[t], ids[T + t]}, got[N * V];
        CHECK_EQ_INT(mxk_ndarray_copy_from_host(mxk_executor_arg(sex, "data"), col, sizeof col),
                     MXK_OK);
        CHECK_EQ_INT(mxk_executor_forward(sex, 0), MXK_OK);
        CHECK_EQ_INT(mxk_ndarray_copy_to_host(mxk_executor_output(sex, 0), got, sizeof got),
                     MXK_OK);
        for (int n = 0; n < N; n++)
            for (int v = 0; v < V; v++)
                worst = fmax(worst, fabs(got[n * V + v] - want[(n * T + t) * V + v]));
        for (uint32_t k = 0; k < ns; k++)
            CHECK_EQ_INT(mxk_ndarray_copy_to(mxk_executor_output(sex, 1 + k),
                                             mxk_executor_arg(sex, states[k])),
                         MXK_OK);
    }
    if (worst > 1e-5)
        fprintf(stderr, "%s fused=%d: max |step - unrolled| %g\n", mode, fused, worst);
    CHECK(worst <= 1e-5);
    /* the rows are distributions that differ between steps (the states matter) */
    CHECK(fabs(want[0] - want[V]) > 1e-4);
    mxk_executor_free(sex);
    mxk_executor_free(tex);
    mxk_string_list_free(states);
    mxk_symbol_free(step);
    mxk_symbol_free(train);
}

static void test_step_agrees(void) {
    const char *modes[4] = {"lstm", "gru", "rnn_tanh", "rnn_relu"};
    for (int m = 0; m < 4; m++)
        for (int fused = 0; fused < 2; fused++)
            check_step_agrees(modes[m], fused);
}

/** Argument names of a symbol joined with spaces. */
static void arg_names(const mxk_symbol *s, char *buf, size_t size) {
    uint32_t na = 0;
    char **args = NULL;
    CHECK_EQ_INT(mxk_symbol_list_names(s, MXK_SYMBOL_ARGUMENTS, &na, &args), MXK_OK);
    buf[0] = '\0';
    for (uint32_t i = 0; i < na; i++)
        snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", i ? " " : "", args[i]);
    mxk_string_list_free(args);
}

static void test_names(void) {
    mxkt_rnn_lm_config c = config("lstm", 0);
    c.num_layers = 1;
    mxk_symbol *s = NULL;
    char buf[1024];
    CHECK_EQ_INT(mxkt_rnn_lm_symbol(&c, 2, &s), MXK_OK);
    arg_names(s, buf, sizeof buf);
    CHECK(!strcmp(buf, "data embed_weight lstm_l0_i2h_weight lstm_l0_i2h_bias lstm_l0_h2h_weight "
                       "lstm_l0_h2h_bias pred_weight pred_bias softmax_label"));
    mxk_symbol_free(s);
    c = config("gru", 1);
    CHECK_EQ_INT(mxkt_rnn_lm_symbol(&c, 2, &s), MXK_OK);
    arg_names(s, buf, sizeof buf);
    CHECK(!strcmp(buf, "data embed_weight gru_parameters pred_weight pred_bias softmax_label"));
    mxk_symbol_free(s);
    uint32_t ns = 0;
    char **states = NULL;
    c = config("lstm", 0);
    CHECK_EQ_INT(mxkt_rnn_lm_step_symbol(&c, &s, &ns, &states), MXK_OK);
    CHECK_EQ_INT(ns, 4);
    CHECK(!strcmp(states[0], "lstm_l0_begin_state_0") &&
          !strcmp(states[1], "lstm_l0_begin_state_1") &&
          !strcmp(states[3], "lstm_l1_begin_state_1") && states[4] == NULL);
    mxk_string_list_free(states);
    mxk_symbol_free(s);
    c = config("rnn_relu", 1);
    CHECK_EQ_INT(mxkt_rnn_lm_step_symbol(&c, &s, &ns, &states), MXK_OK);
    CHECK(ns == 1 && !strcmp(states[0], "rnn_relu_begin_state_0"));
    mxk_shape sh = mxkt_rnn_lm_state_shape(&c, 7);
    CHECK(sh.ndim == 3 && sh.dims[0] == 2 && sh.dims[1] == 7 && sh.dims[2] == 3);
    mxk_string_list_free(states);
    mxk_symbol_free(s);
}

static void test_config_errors(void) {
    mxkt_rnn_lm_config c = config("lstmx", 0);
    mxk_symbol *s = (mxk_symbol *)&c;
    CHECK_EQ_INT(mxkt_rnn_lm_symbol(&c, 2, &s), MXK_ERR_INVALID_ARGUMENT);
    CHECK(s == NULL);
    CHECK(!strcmp(mxk_get_last_error(),
                  "rnn lm: unknown mode 'lstmx' (lstm, gru, rnn_tanh or rnn_relu)"));
    c = config("gru", 0);
    c.num_embed = 0;
    CHECK_EQ_INT(mxkt_rnn_lm_check(&c), MXK_ERR_INVALID_ARGUMENT);
    CHECK(!strcmp(mxk_get_last_error(), "rnn lm: num_embed must be >= 1, got 0"));
    c = config("gru", 0);
    c.dropout = 1.0f;
    CHECK_EQ_INT(mxkt_rnn_lm_check(&c), MXK_ERR_INVALID_ARGUMENT);
    CHECK(!strcmp(mxk_get_last_error(), "rnn lm: dropout must be in [0, 1), got 1"));
    c = config("gru", 0);
    snprintf(c.level, sizeof c.level, "byte");
    CHECK_EQ_INT(mxkt_rnn_lm_check(&c), MXK_ERR_INVALID_ARGUMENT);
    CHECK(!strcmp(mxk_get_last_error(), "rnn lm: level must be char or word, got 'byte'"));
    c = config("gru", 0);
    CHECK_EQ_INT(mxkt_rnn_lm_symbol(&c, 0, &s), MXK_ERR_INVALID_ARGUMENT);
    CHECK(!strcmp(mxk_get_last_error(), "rnn lm: seq_len must be >= 1"));
    /* as a BucketingModule's sym_gen: the key is the length */
    CHECK_EQ_INT(mxkt_rnn_lm_sym_gen((int64_t)1 << 32, &c, &s), MXK_ERR_INVALID_ARGUMENT);
    CHECK(!strcmp(mxk_get_last_error(), "rnn lm: seq_len must be >= 1"));
}

static char dir[] = "/tmp/mxk_test_rnn_lm_XXXXXX";

/** Writes `text` to DIR/NAME-lm.json and returns the prefix DIR/NAME (static buffer). */
static const char *write_lm(const char *name, const char *text) {
    static char prefix[256];
    char path[300];
    snprintf(prefix, sizeof prefix, "%s/%s", dir, name);
    snprintf(path, sizeof path, "%s-lm.json", prefix);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fputs(text, f);
    fclose(f);
    return prefix;
}

/** Loads `text` as a description; expects `status` and the message after "rnn lm: PATH: ". */
static void check_load_error(const char *text, mxk_status status, const char *msg) {
    const char *prefix = write_lm("bad", text);
    mxkt_rnn_lm_config c;
    mxkt_vocab *v = (mxkt_vocab *)&c;
    CHECK_EQ_INT(mxkt_rnn_lm_load(prefix, &c, &v), status);
    CHECK(v == NULL && c.num_layers == 0);
    char want[1024];
    snprintf(want, sizeof want, "rnn lm: %s-lm.json: %s", prefix, msg);
    if (strcmp(mxk_get_last_error(), want) != 0)
        fprintf(stderr, "got  '%s'\nwant '%s'\n", mxk_get_last_error(), want);
    CHECK(!strcmp(mxk_get_last_error(), want));
}

#define HEAD                                                                                       \
    "{\"format\": \"mxk-rnn-lm\", \"version\": 1, \"mode\": \"gru\", \"num_layers\": 1, "          \
    "\"num_hidden\": 3, \"num_embed\": 2, \"level\": \"word\", \"fused\": false, "                 \
    "\"dropout\": 0.5, "

static void test_save_load(void) {
    CHECK(mkdtemp(dir) != NULL);
    mxkt_rnn_lm_config c = config("lstm", 1), back;
    c.dropout = 0.1f;
    snprintf(c.level, sizeof c.level, "word");
    mxkt_vocab *v = NULL, *w = NULL;
    CHECK_EQ_INT(mxkt_vocab_create(&v), MXK_OK);
    const char *toks[V] = {"\n", "the", "\"quoted\"", "caf\xc3\xa9", "a"};
    for (int i = 0; i < V; i++)
        CHECK_EQ_INT(mxkt_vocab_add(v, toks[i], (i * 2) % V), MXK_OK);
    char prefix[256];
    snprintf(prefix, sizeof prefix, "%s/m", dir);
    CHECK_EQ_INT(mxkt_rnn_lm_save(prefix, &c, v), MXK_OK);
    CHECK_EQ_INT(mxkt_rnn_lm_load(prefix, &back, &w), MXK_OK);
    CHECK(!memcmp(&c, &back, sizeof c));
    CHECK_EQ_INT(mxkt_vocab_size(w), V);
    for (int i = 0; i < V; i++) {
        int32_t id = -1;
        CHECK(!strcmp(mxkt_vocab_entry(w, i, &id), toks[i]) && id == (i * 2) % V);
    }
    mxkt_vocab_free(w);

    /* save refuses what load would refuse, and writes nothing */
    c.vocab_size = 4;
    CHECK_EQ_INT(mxkt_rnn_lm_save(prefix, &c, v), MXK_ERR_INVALID_ARGUMENT);
    CHECK(!strcmp(mxk_get_last_error(), "rnn lm: id 4 of token '\"quoted\"' is outside 0..3"));
    CHECK_EQ_INT(mxkt_rnn_lm_load(prefix, &back, &w), MXK_OK);
    CHECK_EQ_INT(back.vocab_size, V);
    mxkt_vocab_free(w);
    mxkt_vocab_free(v);

    snprintf(prefix, sizeof prefix, "%s/none", dir);
    CHECK_EQ_INT(mxkt_rnn_lm_load(prefix, &back, &w), MXK_ERR_IO);
    char want[512];
    snprintf(want, sizeof want,
             "rnn lm: cannot open model description '%s-lm.json': No such file or directory",
             prefix);
    CHECK(!strcmp(mxk_get_last_error(), want));

    check_load_error("{\"format\": ", MXK_ERR_FORMAT,
                     "line 1 column 11: unexpected token near end of file");
    check_load_error("[1]", MXK_ERR_FORMAT,
                     "not an mxk language model description (\"format\" must be \"mxk-rnn-lm\")");
    check_load_error("{\"format\": \"mxk-rnn-lm\", \"version\": 2}", MXK_ERR_FORMAT,
                     "version 2 is not supported (1)");
    check_load_error(HEAD "\"vocab_size\": \"2\", \"vocab\": {}}", MXK_ERR_FORMAT,
                     "\"vocab_size\" must be an integer");
    check_load_error(HEAD "\"vocab_size\": 4294967296, \"vocab\": {}}", MXK_ERR_FORMAT,
                     "\"vocab_size\" is out of range");
    check_load_error(HEAD "\"vocab_size\": 0, \"vocab\": {}}", MXK_ERR_FORMAT,
                     "vocab_size must be >= 1, got 0");
    check_load_error(HEAD "\"vocab_size\": 2, \"vocab\": []}", MXK_ERR_FORMAT,
                     "\"vocab\" must be an object of token -> id");
    check_load_error(HEAD "\"vocab_size\": 2, \"vocab\": {\"a\": 0.5}}", MXK_ERR_FORMAT,
                     "\"vocab\" must be an object of token -> id");
    check_load_error(HEAD "\"vocab_size\": 2, \"vocab\": {}}", MXK_ERR_FORMAT,
                     "the vocabulary is empty");
    check_load_error(HEAD "\"vocab_size\": 2, \"vocab\": {\"a\": 0, \"b\": 2}}", MXK_ERR_FORMAT,
                     "id 2 of token 'b' is outside 0..1");
    check_load_error(HEAD "\"vocab_size\": 2, \"vocab\": {\"a\": 1, \"b\": 1}}", MXK_ERR_FORMAT,
                     "id 1 is given to both 'a' and 'b'");
    check_load_error(HEAD "\"vocab_size\": 2, \"vocab\": {\"a\": 1, \"a\": 0}}", MXK_ERR_FORMAT,
                     "line 1 column 191: duplicate object key near '\"a\"'");
    check_load_error("{\"format\": \"mxk-rnn-lm\", \"version\": 1, \"mode\": \"lstm\", "
                     "\"num_layers\": 1, \"num_hidden\": 1, \"num_embed\": 1, \"vocab_size\": 1, "
                     "\"fused\": 1}",
                     MXK_ERR_FORMAT, "\"fused\" must be true or false");
    /* a valid one: the tokens' order and ids as written */
    const char *ok = write_lm("ok", HEAD "\"vocab_size\": 2, \"vocab\": {\"b\": 1, \"a\": 0}}");
    CHECK_EQ_INT(mxkt_rnn_lm_load(ok, &back, &w), MXK_OK);
    int32_t id = -1;
    CHECK(!strcmp(back.mode, "gru") && back.num_layers == 1 && back.dropout == 0.5f &&
          !strcmp(back.level, "word") && back.fused == 0);
    CHECK(!strcmp(mxkt_vocab_entry(w, 0, &id), "b") && id == 1);
    mxkt_vocab_free(w);
}

/** Frequency of id 0 in `n` draws from p with temperature t. */
static double freq0(const float *p, int32_t v, double t, uint64_t seed, int n) {
    int hits = 0;
    for (int i = 0; i < n; i++) {
        int32_t id = -1;
        CHECK_EQ_INT(mxkt_rnn_lm_draw(p, v, NULL, t, seed, 0, (uint64_t)i, &id), MXK_OK);
        hits += id == 0;
    }
    return (double)hits / n;
}

static void test_draw(void) {
    const float p[3] = {0.25f, 0.75f, 0.0f};
    /* p^(1/t) renormalized: t 1 -> 0.25; t 2 -> 0.5 / (0.5 + sqrt(0.75)) = 0.3660 */
    CHECK_NEAR(freq0(p, 3, 1.0, 7, 20000), 0.25, 0.01);
    CHECK_NEAR(freq0(p, 3, 2.0, 7, 20000), 0.5 / (0.5 + sqrt(0.75)), 0.01);
    CHECK_EQ_INT((int)(freq0(p, 3, 0.01, 7, 1000) * 1000), 0); /* argmax: 0.75 */
    int32_t a = -1, b = -1, differ = 0;
    for (uint64_t i = 0; i < 64; i++) {
        CHECK_EQ_INT(mxkt_rnn_lm_draw(p, 3, NULL, 1.0, 11, 3, i, &a), MXK_OK);
        CHECK_EQ_INT(mxkt_rnn_lm_draw(p, 3, NULL, 1.0, 11, 3, i, &b), MXK_OK);
        CHECK(a == b && a != 2);
        CHECK_EQ_INT(mxkt_rnn_lm_draw(p, 3, NULL, 1.0, 12, 3, i, &b), MXK_OK);
        differ += a != b;
    }
    CHECK(differ > 0);
    const uint8_t allowed[3] = {1, 0, 1};
    for (uint64_t i = 0; i < 16; i++) {
        CHECK_EQ_INT(mxkt_rnn_lm_draw(p, 3, allowed, 1.0, 1, 0, i, &a), MXK_OK);
        CHECK_EQ_INT(a, 0);
    }
    CHECK_EQ_INT(mxkt_rnn_lm_draw(p, 3, NULL, 0.0, 1, 0, 0, &a), MXK_ERR_INVALID_ARGUMENT);
    CHECK(!strcmp(mxk_get_last_error(), "rnn lm: temperature must be > 0, got 0"));
    const uint8_t none[3] = {0, 1, 0};
    const float q[3] = {0.5f, 0.0f, 0.5f};
    CHECK_EQ_INT(mxkt_rnn_lm_draw(q, 3, none, 1.0, 1, 0, 0, &a), MXK_ERR_INVALID_ARGUMENT);
    CHECK(!strcmp(mxk_get_last_error(), "rnn lm: no token can be drawn (every allowed "
                                        "probability is 0 or not finite)"));
}

int main(void) {
    if (tt_init() != 0)
        return 77;
    MXK_RUN(test_step_agrees);
    MXK_RUN(test_names);
    MXK_RUN(test_config_errors);
    MXK_RUN(test_save_load);
    MXK_RUN(test_draw);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ_INT(system(cmd), 0);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
