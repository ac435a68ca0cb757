/*
 * The fused RNN operator of cpu-blas (plugins/cpu-blas/op_rnn.c) beyond what the
 * conformance suite can compare with MXNet 1.9.1, checked against the same
 * operator computed another way:
 *   - dropout between layers: a 2-layer RNN in training equals layer 0 alone, the
 *     mask read from the hidden `reserve` output, then layer 1 alone on the masked
 *     output, forward and backward (so backward uses forward's masks); masks are 0
 *     or 1/(1-p), the dropped input is output * mask, the keep ratio is 1-p, the
 *     same seed gives the same masks, another seed others; inference draws nothing;
 *   - use_sequence_length: each row equals the operator run on that row's valid
 *     prefix alone (outputs, state outputs, data / state gradients; the parameter
 *     gradient is the sum over rows); outputs and data gradients past a row's length
 *     are zero;
 *   - lstm_state_clip_nan: a NaN cell state becomes lstm_state_clip_min, or stays NaN.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mxk.h"
#include "testing.h"
#include "testing_attrs.h"

static const mxk_context cpu = {MXK_DEV_CPU, 0};

/** Most arguments (data, parameters, state, state_cell, sequence_length) and outputs. */
enum { MAX_IO = 5 };

/** One RNN instance with host copies of its inputs, outputs and input gradients. */
typedef struct rnn_io {
    mxk_op_instance *inst;
    uint32_t ni, no, nv;
    mxk_shape in_s[MAX_IO], out_s[MAX_IO];
    float *in[MAX_IO];  /**< inputs (random in [-1, 1) after rnn_open) */
    float *out[MAX_IO]; /**< all outputs after rnn_forward, the reserve last */
    float *ig[MAX_IO];  /**< input gradients after rnn_backward */
    mxk_ndarray *a_in[MAX_IO], *a_out[MAX_IO];
} rnn_io;

static size_t count(const mxk_shape *s) {
    size_t n = 1;
    for (int i = 0; i < s->ndim; i++)
        n *= (size_t)s->dims[i];
    return n;
}

/** An array holding n floats of v. */
static mxk_ndarray *arr(const mxk_shape *s, const float *v) {
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_create(s, MXK_FLOAT32, cpu, &a) != MXK_OK)
        return NULL;
    mxk_ndarray_copy_from_host(a, v, count(s) * sizeof(float));
    return a;
}

/** Creates an RNN with attributes "k=v;..." on data (T, N, C); inputs random. 0 on failure. */
static int rnn_open(rnn_io *io, const char *attrs, int64_t T, int64_t N, int64_t C) {
    memset(io, 0, sizeof *io);
    char buf[512];
    const char *k[16], *v[16];
    int na = mxk_t_parse_attrs(attrs, buf, sizeof buf, k, v, 16);
    mxk_shape s[MAX_IO];
    memset(s, 0, sizeof s);
    s[0].ndim = 3, s[0].dims[0] = T, s[0].dims[1] = N, s[0].dims[2] = C;
    uint32_t ni = strstr(attrs, "mode=lstm") ? 4 : 3;
    ni += strstr(attrs, "use_sequence_length=True") ? 1 : 0;
    if (na < 0 ||
        mxk_op_instance_create("RNN", (uint32_t)na, k, v, cpu, ni, s, NULL, &io->inst) != MXK_OK) {
        fprintf(stderr, "RNN [%s]: %s\n", attrs, mxk_get_last_error());
        mxk_t_failed_checks++;
        return 0;
    }
    uint32_t na_aux;
    mxk_op_instance_counts(io->inst, &io->ni, &io->no, &io->nv, &na_aux);
    for (uint32_t i = 0; i < io->ni; i++) {
        mxk_op_instance_shape(io->inst, MXK_SLOT_INPUT, i, &io->in_s[i], NULL);
        io->in[i] = malloc(count(&io->in_s[i]) * sizeof(float));
        io->ig[i] = calloc(count(&io->in_s[i]), sizeof(float));
        for (size_t j = 0; j < count(&io->in_s[i]); j++)
            io->in[i][j] = mxk_t_frand();
    }
    for (uint32_t i = 0; i < io->no; i++) {
        mxk_op_instance_shape(io->inst, MXK_SLOT_OUTPUT, i, &io->out_s[i], NULL);
        io->out[i] = calloc(count(&io->out_s[i]), sizeof(float));
    }
    return 1;
}

/** Forward (is_train `train`) from io->in into io->out; the arrays stay for rnn_backward. */
static void rnn_forward(rnn_io *io, int train) {
    for (uint32_t i = 0; i < io->ni; i++) {
        mxk_ndarray_free(io->a_in[i]);
        io->a_in[i] = arr(&io->in_s[i], io->in[i]);
    }
    for (uint32_t i = 0; i < io->no; i++) {
        mxk_ndarray_free(io->a_out[i]);
        io->a_out[i] = arr(&io->out_s[i], io->out[i]);
    }
    CHECK_EQ_INT(mxk_op_instance_forward(io->inst, train, io->a_in, io->a_out, NULL, NULL), MXK_OK);
    for (uint32_t i = 0; i < io->no; i++)
        mxk_ndarray_copy_to_host(io->a_out[i], io->out[i], count(&io->out_s[i]) * sizeof(float));
}

/** Backward from the visible outputs' gradients og[] into io->ig (every request WRITE). */
static void rnn_backward(rnn_io *io, float *const *og) {
    mxk_ndarray *g[MAX_IO] = {NULL}, *ig[MAX_IO] = {NULL};
    for (uint32_t i = 0; i < io->nv; i++)
        g[i] = arr(&io->out_s[i], og[i]);
    for (uint32_t i = 0; i < io->ni; i++)
        ig[i] = arr(&io->in_s[i], io->ig[i]);
    CHECK_EQ_INT(mxk_op_instance_backward(io->inst, g, io->a_in, io->a_out, ig, NULL, NULL),
                 MXK_OK);
    for (uint32_t i = 0; i < io->ni; i++) {
        mxk_ndarray_copy_to_host(ig[i], io->ig[i], count(&io->in_s[i]) * sizeof(float));
        mxk_ndarray_free(ig[i]);
    }
    for (uint32_t i = 0; i < io->nv; i++)
        mxk_ndarray_free(g[i]);
}

static void rnn_close(rnn_io *io) {
    for (uint32_t i = 0; i < MAX_IO; i++) {
        free(io->in[i]), free(io->out[i]), free(io->ig[i]);
        mxk_ndarray_free(io->a_in[i]), mxk_ndarray_free(io->a_out[i]);
    }
    mxk_op_instance_free(io->inst);
}

/** Random output gradients for the visible outputs (caller frees). */
static void random_grads(const rnn_io *io, float **og) {
    for (uint32_t i = 0; i < io->nv; i++) {
        og[i] = malloc(count(&io->out_s[i]) * sizeof(float));
        for (size_t j = 0; j < count(&io->out_s[i]); j++)
            og[i][j] = mxk_t_frand();
    }
}

/** |got - want| <= 1e-5 (1 + |want|) for n floats; prints the first mismatch. */
static int close_(const char *what, const float *got, const float *want, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!(fabsf(got[i] - want[i]) <= 1e-5f * (1.0f + fabsf(want[i])))) {
            fprintf(stderr, "%s[%zu] = %.8g, expected %.8g\n", what, i, (double)got[i],
                    (double)want[i]);
            return 0;
        }
    return 1;
}

/* ------------------------------------------------------------------------- */
/* dropout between layers                                                    */
/* ------------------------------------------------------------------------- */

/*
 * LSTMP, bidirectional: H = 4, P = R = 3, D*R = 6. Per layer direction the weights
 * are one block (Wx, Wh, Whr), the biases 2*G*H = 32 floats after all weights.
 */
#define DROP_ATTRS "mode=lstm;state_size=4;projection_size=3;bidirectional=True;state_outputs=True"
enum { DT = 5, DN = 3, DC = 2, DD = 2, DR = 3, DH = 4, GH = 16 };

static void test_dropout_composes(void) {
    rnn_io two, a, b;
    if (!rnn_open(&two, DROP_ATTRS ";num_layers=2;p=0.4", DT, DN, DC) ||
        !rnn_open(&a, DROP_ATTRS ";num_layers=1", DT, DN, DC) ||
        !rnn_open(&b, DROP_ATTRS ";num_layers=1", DT, DN, DD * DR))
        return;
    /* split the parameters: two = wA | wB | bA | bB */
    size_t wa = count(&a.in_s[1]) - DD * 2 * GH, wb = count(&b.in_s[1]) - DD * 2 * GH;
    const float *w = two.in[1];
    CHECK_EQ_INT((int)count(&two.in_s[1]), (int)(wa + wb + 2 * DD * 2 * GH));
    memcpy(a.in[1], w, wa * 4), memcpy(a.in[1] + wa, w + wa + wb, DD * 2 * GH * 4);
    memcpy(b.in[1], w + wa, wb * 4),
        memcpy(b.in[1] + wb, w + wa + wb + DD * 2 * GH, DD * 2 * GH * 4);
    memcpy(a.in[0], two.in[0], DT * DN * DC * 4);
    for (int s = 2; s < 4; s++) { /* states: layer 0's D slices, then layer 1's */
        size_t half = count(&two.in_s[s]) / 2;
        memcpy(a.in[s], two.in[s], half * 4), memcpy(b.in[s], two.in[s] + half, half * 4);
    }
    mxk_random_seed(7);
    rnn_forward(&two, 1);
    const size_t layer = DT * DN * DD * DR;
    const float *res = two.out[3];
    const float *mask = res + count(&two.out_s[3]) - layer, *drop = mask - layer;
    const float scale = 1.0f / 0.6f;
    int kept = 0, pattern = 1;
    for (size_t i = 0; i < layer; i++) {
        kept += mask[i] != 0.0f;
        pattern &= mask[i] == 0.0f || mask[i] == scale;
        pattern &= drop[i] == res[i] * mask[i]; /* the reserve starts with layer 0's output */
    }
    CHECK(pattern);
    CHECK(kept > 0 && kept < (int)layer);
    /* layer 0, the mask, layer 1: as the 2-layer operator */
    rnn_forward(&a, 1);
    CHECK(close_("layer 0 output", a.out[0], res, layer));
    for (size_t i = 0; i < layer; i++)
        b.in[0][i] = a.out[0][i] * mask[i];
    rnn_forward(&b, 1);
    CHECK(close_("output", two.out[0], b.out[0], layer));
    size_t hs = count(&a.out_s[1]), cs = count(&a.out_s[2]);
    CHECK(close_("state_output 0", two.out[1], a.out[1], hs));
    CHECK(close_("state_output 1", two.out[1] + hs, b.out[1], hs));
    CHECK(close_("statecell_output 1", two.out[2] + cs, b.out[2], cs));
    /* backward: layer 1, the same mask, layer 0 */
    float *og[3], *ogb[3], *oga[3];
    random_grads(&two, og);
    ogb[0] = og[0], ogb[1] = og[1] + hs, ogb[2] = og[2] + cs;
    rnn_backward(&two, og);
    rnn_backward(&b, ogb);
    float *dy0 = malloc(layer * 4);
    for (size_t i = 0; i < layer; i++)
        dy0[i] = b.ig[0][i] * mask[i];
    oga[0] = dy0, oga[1] = og[1], oga[2] = og[2];
    rnn_backward(&a, oga);
    CHECK(close_("data gradient", two.ig[0], a.ig[0], DT * DN * DC));
    CHECK(close_("wA gradient", two.ig[1], a.ig[1], wa));
    CHECK(close_("wB gradient", two.ig[1] + wa, b.ig[1], wb));
    CHECK(close_("bA gradient", two.ig[1] + wa + wb, a.ig[1] + wa, DD * 2 * GH));
    CHECK(close_("bB gradient", two.ig[1] + wa + wb + DD * 2 * GH, b.ig[1] + wb, DD * 2 * GH));
    CHECK(close_("state gradient 1", two.ig[2] + hs, b.ig[2], hs));
    CHECK(close_("state_cell gradient 0", two.ig[3], a.ig[3], cs));
    free(dy0);
    for (int i = 0; i < 3; i++)
        free(og[i]);
    rnn_close(&two), rnn_close(&a), rnn_close(&b);
}

/** The masks of a 3-layer RNN (p = 0.3) after mxk_random_seed(seed), in training; n floats. */
static float *masks_of(rnn_io *io, uint64_t seed, int train, size_t *n) {
    mxk_random_seed(seed);
    memset(io->out[io->no - 1], 0, count(&io->out_s[io->no - 1]) * sizeof(float));
    rnn_forward(io, train);
    size_t layer = count(&io->out_s[0]);
    *n = 2 * layer;
    float *m = malloc(*n * sizeof(float));
    memcpy(m, io->out[io->no - 1] + count(&io->out_s[io->no - 1]) - *n, *n * sizeof(float));
    return m;
}

static void test_dropout_statistics(void) {
    rnn_io io;
    if (!rnn_open(&io, "mode=gru;state_size=20;num_layers=3;bidirectional=True;p=0.3", 25, 20, 4))
        return;
    size_t n;
    float *m1 = masks_of(&io, 11, 1, &n), *m2 = masks_of(&io, 11, 1, &n);
    float *y1 = malloc(count(&io.out_s[0]) * 4);
    memcpy(y1, io.out[0], count(&io.out_s[0]) * 4);
    float *m3 = masks_of(&io, 12, 1, &n);
    size_t kept = 0, half = n / 2, same_layers = 0;
    for (size_t i = 0; i < n; i++)
        kept += m1[i] != 0.0f;
    for (size_t i = 0; i < half; i++)
        same_layers += m1[i] == m1[half + i];
    /* n = 40000 draws, keep 0.7: sd sqrt(0.21 / n) = 0.0023; within 5 sd */
    CHECK_NEAR((double)kept / (double)n, 0.7, 0.0115);
    CHECK(same_layers < half); /* each layer draws its own mask */
    CHECK(memcmp(m1, m2, n * 4) == 0);
    mxk_random_seed(11);
    rnn_forward(&io, 1);
    CHECK(memcmp(y1, io.out[0], count(&io.out_s[0]) * 4) == 0);
    CHECK(memcmp(m1, m3, n * 4) != 0);
    /* inference: masks 1, the output of p = 0 */
    float *m4 = masks_of(&io, 11, 0, &n);
    int ones = 1;
    for (size_t i = 0; i < n; i++)
        ones &= m4[i] == 1.0f;
    CHECK(ones);
    rnn_io p0;
    if (rnn_open(&p0, "mode=gru;state_size=20;num_layers=3;bidirectional=True", 25, 20, 4)) {
        for (uint32_t i = 0; i < io.ni; i++)
            memcpy(p0.in[i], io.in[i], count(&io.in_s[i]) * 4);
        rnn_forward(&p0, 1);
        CHECK(memcmp(p0.out[0], io.out[0], count(&io.out_s[0]) * 4) == 0);
        rnn_close(&p0);
    }
    free(m1), free(m2), free(m3), free(m4), free(y1);
    rnn_close(&io);
}

/* ------------------------------------------------------------------------- */
/* sequence lengths                                                          */
/* ------------------------------------------------------------------------- */

/** Copies rows [0, len) of column n of a (T, N, X) array into a (len, 1, X) one, or back. */
static void row_copy(float *full, float *one, int N, int X, int n, int len, int to_one) {
    for (int t = 0; t < len; t++) {
        float *f = full + ((size_t)t * N + n) * X, *o = one + (size_t)t * X;
        memcpy(to_one ? o : f, to_one ? f : o, (size_t)X * sizeof(float));
    }
}

/** Runs attrs with sequence lengths lens[N] against each row's prefix run alone. */
static void check_seq_len(const char *attrs, int T, int N, int C, const int *lens) {
    char with[256];
    snprintf(with, sizeof with, "%s;use_sequence_length=True;state_outputs=True", attrs);
    rnn_io full;
    if (!rnn_open(&full, with, T, N, C))
        return;
    uint32_t sl = full.ni - 1, ns = sl - 2; /* sequence_length's index; state arguments */
    for (int n = 0; n < N; n++)
        full.in[sl][n] = (float)lens[n];
    rnn_forward(&full, 1);
    float *og[3];
    random_grads(&full, og);
    rnn_backward(&full, og);
    size_t np = count(&full.in_s[1]);
    float *dw = calloc(np, sizeof(float));
    int X = (int)full.out_s[0].dims[2];
    for (int n = 0; n < N; n++) {
        char one_attrs[256];
        snprintf(one_attrs, sizeof one_attrs, "%s;state_outputs=True", attrs);
        rnn_io one;
        if (!rnn_open(&one, one_attrs, lens[n], 1, C))
            break;
        row_copy(full.in[0], one.in[0], N, C, n, lens[n], 1);
        memcpy(one.in[1], full.in[1], np * 4);
        float *oog[3];
        random_grads(&one, oog);
        row_copy(og[0], oog[0], N, X, n, lens[n], 1);
        for (uint32_t s = 0; s < ns; s++) { /* states (L*D, N, W): row n of each slice */
            int LD = (int)full.in_s[2 + s].dims[0], W = (int)full.in_s[2 + s].dims[2];
            row_copy(full.in[2 + s], one.in[2 + s], N, W, n, LD, 1);
            row_copy(og[1 + s], oog[1 + s], N, W, n, LD, 1);
        }
        rnn_forward(&one, 1);
        rnn_backward(&one, oog);
        float *got = malloc((size_t)T * X * 4), *dx = malloc((size_t)T * C * 4);
        row_copy(full.out[0], got, N, X, n, T, 1);
        row_copy(full.ig[0], dx, N, C, n, T, 1);
        CHECK(close_("output row", got, one.out[0], (size_t)lens[n] * X));
        CHECK(close_("data gradient row", dx, one.ig[0], (size_t)lens[n] * C));
        int zero = 1;
        for (size_t i = (size_t)lens[n] * X; i < (size_t)T * X; i++)
            zero &= got[i] == 0.0f;
        for (size_t i = (size_t)lens[n] * C; i < (size_t)T * C; i++)
            zero &= dx[i] == 0.0f;
        CHECK(zero);
        for (uint32_t s = 0; s < ns; s++) {
            int LD = (int)full.in_s[2 + s].dims[0], W = (int)full.in_s[2 + s].dims[2];
            float *h = malloc((size_t)LD * W * 4), *dh = malloc((size_t)LD * W * 4);
            row_copy(full.out[1 + s], h, N, W, n, LD, 1);
            row_copy(full.ig[2 + s], dh, N, W, n, LD, 1);
            CHECK(close_("state output row", h, one.out[1 + s], (size_t)LD * W));
            CHECK(close_("state gradient row", dh, one.ig[2 + s], (size_t)LD * W));
            free(h), free(dh);
        }
        for (size_t i = 0; i < np; i++)
            dw[i] += one.ig[1][i];
        free(got), free(dx);
        for (uint32_t i = 0; i < one.nv; i++)
            free(oog[i]);
        rnn_close(&one);
    }
    CHECK(close_("parameter gradient (sum of rows)", full.ig[1], dw, np));
    float zeros[8] = {0};
    CHECK(memcmp(full.ig[sl], zeros, (size_t)N * 4) == 0);
    free(dw);
    for (uint32_t i = 0; i < full.nv; i++)
        free(og[i]);
    rnn_close(&full);
}

static void test_sequence_length(void) {
    const int lens[3] = {4, 2, 1};
    check_seq_len("mode=lstm;state_size=4;projection_size=2;num_layers=2;bidirectional=True", 4, 3,
                  3, lens);
    check_seq_len("mode=gru;state_size=3;num_layers=2;bidirectional=True", 4, 3, 2, lens);
    check_seq_len("mode=rnn_relu;state_size=3;num_layers=1", 4, 3, 2, lens);
    /* a length outside [1, T] or not an integer: a clear error */
    rnn_io io;
    if (!rnn_open(&io, "mode=gru;state_size=2;num_layers=1;use_sequence_length=True", 3, 2, 2))
        return;
    const float bad[][2] = {{1, 4}, {0, 2}, {1.5f, 2}};
    const char *msg[] = {"element 1 is 4, expected an integer in [1, 3]",
                         "element 0 is 0, expected an integer in [1, 3]",
                         "element 0 is 1.5, expected an integer in [1, 3]"};
    for (int i = 0; i < 3; i++) {
        memcpy(io.in[3], bad[i], sizeof bad[i]);
        mxk_ndarray *in[4], *out[2];
        for (uint32_t j = 0; j < io.ni; j++)
            in[j] = arr(&io.in_s[j], io.in[j]);
        for (uint32_t j = 0; j < io.no; j++)
            out[j] = arr(&io.out_s[j], io.out[j]);
        CHECK(mxk_op_instance_forward(io.inst, 1, in, out, NULL, NULL) == MXK_OK);
        CHECK(mxk_ndarray_wait_to_read(out[0]) != MXK_OK);
        CHECK_CONTAINS(mxk_get_last_error(), msg[i]);
        for (uint32_t j = 0; j < io.ni; j++)
            mxk_ndarray_free(in[j]);
        for (uint32_t j = 0; j < io.no; j++)
            mxk_ndarray_free(out[j]);
    }
    rnn_close(&io);
}

/* ------------------------------------------------------------------------- */
/* lstm_state_clip_nan                                                       */
/* ------------------------------------------------------------------------- */

/** The cell state output of one lstm step on NaN data, with clip_nan `nan`. */
static float clipped_cell(const char *nan) {
    char attrs[160];
    snprintf(attrs, sizeof attrs,
             "mode=lstm;state_size=1;num_layers=1;state_outputs=True;lstm_state_clip_min=-0.25;"
             "lstm_state_clip_max=0.5;lstm_state_clip_nan=%s",
             nan);
    rnn_io io;
    if (!rnn_open(&io, attrs, 1, 1, 1))
        return 0.0f;
    io.in[0][0] = NAN;
    rnn_forward(&io, 0);
    float c = io.out[2][0];
    rnn_close(&io);
    return c;
}

static void test_clip_nan(void) {
    CHECK(clipped_cell("True") == -0.25f);
    CHECK(isnan(clipped_cell("False")));
}

int main(void) {
    mxk_init_options opt = {.struct_size = sizeof opt, .config_dir = BUILD_CONFDIR};
    if (mxk_init(&opt) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    MXK_RUN(test_dropout_composes);
    MXK_RUN(test_dropout_statistics);
    MXK_RUN(test_sequence_length);
    MXK_RUN(test_clip_nan);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
