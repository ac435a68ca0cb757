/*
 * Neural-network operators of the cpu-blas plugin, run through the kernel
 * (mxk_op_instance: engine push, resources, write requests) with the plugin
 * loaded from the build tree's config dir:
 *   Convolution (dilation, groups, padding, stride; workspace small enough for
 *   several batch chunks) and Deconvolution against direct float64 loops,
 *   forward and all three gradients, plus central differences; Pooling output
 *   sizes under both conventions and the first-max rule; BatchNorm training / inference / aux
 * updates in backward; Dropout keep ratio, seed reproducibility, inference identity, dy*mask; LRN;
 *   UpSampling; Crop; write requests (outputs pre-filled with 5: WRITE r,
 *   ADD 5 + r, NULL 5); backward with only the declared dependencies (the rest
 *   passed as NULL).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mxk.h"
#include "testing.h"

static const mxk_context cpu = {MXK_DEV_CPU, 0};

/* ------------------------------------------------------------------------- */
/* helpers                                                                    */
/* ------------------------------------------------------------------------- */

/** A shape of up to 4 dims. */
static mxk_shape shp4(int nd, int64_t a, int64_t b, int64_t c, int64_t d) {
    mxk_shape s;
    memset(&s, 0, sizeof s);
    s.ndim = nd;
    s.dims[0] = a, s.dims[1] = b, s.dims[2] = c, s.dims[3] = d;
    return s;
}

static size_t count(const mxk_shape *s) {
    size_t n = 1;
    for (int i = 0; i < s->ndim; i++)
        n *= (size_t)s->dims[i];
    return n;
}

/** An array of shape s holding v (or `fill` everywhere when v is NULL). */
static mxk_ndarray *arr(const mxk_shape *s, const float *v, float fill) {
    mxk_ndarray *a = NULL;
    if (mxk_ndarray_create(s, MXK_FLOAT32, cpu, &a) != MXK_OK) {
        fprintf(stderr, "create: %s\n", mxk_get_last_error());
        return NULL;
    }
    size_t n = count(s);
    float *tmp = malloc(n * sizeof(float) + 4);
    for (size_t i = 0; i < n; i++)
        tmp[i] = v ? v[i] : fill;
    mxk_ndarray_copy_from_host(a, tmp, n * sizeof(float));
    free(tmp);
    return a;
}

/** Copies an array to host memory (waits for pending writes). */
static void get(mxk_ndarray *a, float *out) {
    if (mxk_ndarray_copy_to_host(a, out, mxk_ndarray_size(a) * sizeof(float)) != MXK_OK)
        fprintf(stderr, "copy_to_host: %s\n", mxk_get_last_error());
}

/** An operator instance with its counts and shapes. */
typedef struct op_t {
    mxk_op_instance *inst;
    uint32_t ni, no, nv, na;
    mxk_shape in[8], out[8], aux[4];
} op_t;

/** Creates an instance; 0 on failure (message printed). */
static int op_make(op_t *o, const char *name, int nattr, const char *const *k, const char *const *v,
                   uint32_t ni, const mxk_shape *shapes) {
    memset(o, 0, sizeof *o);
    if (mxk_op_instance_create(name, (uint32_t)nattr, k, v, cpu, ni, shapes, NULL, &o->inst) !=
        MXK_OK) {
        fprintf(stderr, "%s: %s\n", name, mxk_get_last_error());
        mxk_t_failed_checks++;
        return 0;
    }
    mxk_op_instance_counts(o->inst, &o->ni, &o->no, &o->nv, &o->na);
    for (uint32_t i = 0; i < o->ni; i++)
        mxk_op_instance_shape(o->inst, 0, i, &o->in[i], NULL);
    for (uint32_t i = 0; i < o->no; i++)
        mxk_op_instance_shape(o->inst, 1, i, &o->out[i], NULL);
    for (uint32_t i = 0; i < o->na; i++)
        mxk_op_instance_shape(o->inst, 2, i, &o->aux[i], NULL);
    return 1;
}

/** Compares n floats with doubles: |got - want| <= tol (1 + |want|). */
static int close_(const char *file, int line, const char *what, const float *got,
                  const double *want, size_t n, double tol) {
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        if (!(fabs((double)got[i] - want[i]) <= tol * (1.0 + fabs(want[i])))) {
            if (bad < 4)
                fprintf(stderr, "%s:%d: %s[%zu] = %.8g, expected %.8g\n", file, line, what, i,
                        (double)got[i], want[i]);
            bad++;
        }
    if (bad)
        mxk_t_failed_checks++;
    return bad == 0;
}
#define CLOSE(what, got, want, n, tol) close_(__FILE__, __LINE__, what, got, want, n, tol)

/* ------------------------------------------------------------------------- */
/* Convolution / Deconvolution references (float64)                          */
/* ------------------------------------------------------------------------- */

/** Convolution geometry for the references. */
typedef struct cg {
    int N, C, H, W, F, G, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW;
} cg;

/** Visits every (n, f, oh, ow, c, i, j) term of a convolution with a valid input. */
#define CONV_LOOP(g, BODY)                                                                         \
    for (int n = 0; n < (g).N; n++)                                                                \
        for (int f = 0; f < (g).F; f++) {                                                          \
            int grp = f / ((g).F / (g).G), Cg = (g).C / (g).G;                                     \
            for (int oh = 0; oh < (g).OH; oh++)                                                    \
                for (int ow = 0; ow < (g).OW; ow++)                                                \
                    for (int cc = 0; cc < Cg; cc++)                                                \
                        for (int i = 0; i < (g).kh; i++)                                           \
                            for (int j = 0; j < (g).kw; j++) {                                     \
                                int c = grp * Cg + cc;                                             \
                                int ih = oh * (g).sh - (g).ph + i * (g).dh;                        \
                                int iw = ow * (g).sw - (g).pw + j * (g).dw;                        \
                                if (ih < 0 || ih >= (g).H || iw < 0 || iw >= (g).W)                \
                                    continue;                                                      \
                                size_t xi = (((size_t)n * (g).C + c) * (g).H + ih) * (g).W + iw;   \
                                size_t wi = (((size_t)f * Cg + cc) * (g).kh + i) * (g).kw + j;     \
                                size_t yi = (((size_t)n * (g).F + f) * (g).OH + oh) * (g).OW + ow; \
                                BODY                                                               \
                            }                                                                      \
        }

/** y = conv(x, w) + b; dx, dw, db from dy (float64). */
static void conv_ref(const cg *g, const float *x, const float *w, const float *b, const float *dy,
                     double *y, double *dx, double *dw, double *db) {
    size_t ny = (size_t)g->N * g->F * g->OH * g->OW;
    for (size_t q = 0; q < ny; q++)
        y[q] = b ? b[(q / ((size_t)g->OH * g->OW)) % g->F] : 0.0;
    memset(dx, 0, sizeof(double) * (size_t)g->N * g->C * g->H * g->W);
    memset(dw, 0, sizeof(double) * (size_t)g->F * (g->C / g->G) * g->kh * g->kw);
    CONV_LOOP(*g, {
        y[yi] += (double)x[xi] * w[wi];
        dx[xi] += (double)dy[yi] * w[wi];
        dw[wi] += (double)dy[yi] * x[xi];
    })
    for (int f = 0; f < g->F; f++) {
        db[f] = 0;
        for (int n = 0; n < g->N; n++)
            for (int p = 0; p < g->OH * g->OW; p++)
                db[f] += dy[((size_t)n * g->F + f) * g->OH * g->OW + p];
    }
}

/** Runs Convolution with geometry g and workspace `ws` MB; checks against conv_ref. */
static void check_conv(cg g, const char *ws) {
    g.OH = (g.H + 2 * g.ph - g.dh * (g.kh - 1) - 1) / g.sh + 1;
    g.OW = (g.W + 2 * g.pw - g.dw * (g.kw - 1) - 1) / g.sw + 1;
    char kern[32], str[32], pad[32], dil[32], nf[16], ng[16];
    snprintf(kern, sizeof kern, "(%d,%d)", g.kh, g.kw);
    snprintf(str, sizeof str, "(%d,%d)", g.sh, g.sw);
    snprintf(pad, sizeof pad, "(%d,%d)", g.ph, g.pw);
    snprintf(dil, sizeof dil, "(%d,%d)", g.dh, g.dw);
    snprintf(nf, sizeof nf, "%d", g.F);
    snprintf(ng, sizeof ng, "%d", g.G);
    const char *k[] = {"kernel", "stride", "pad", "dilate", "num_filter", "num_group", "workspace"};
    const char *v[] = {kern, str, pad, dil, nf, ng, ws};
    mxk_shape shapes[3] = {shp4(4, g.N, g.C, g.H, g.W), shp4(0, 0, 0, 0, 0), shp4(0, 0, 0, 0, 0)};
    op_t o;
    if (!op_make(&o, "Convolution", 7, k, v, 3, shapes))
        return;
    CHECK_EQ_INT(o.out[0].dims[2], g.OH);
    CHECK_EQ_INT(o.out[0].dims[3], g.OW);
    size_t nx = count(&o.in[0]), nw = count(&o.in[1]), nb = (size_t)g.F, ny = count(&o.out[0]);
    float *x = malloc(nx * 4), *w = malloc(nw * 4), *b = malloc(nb * 4), *dy = malloc(ny * 4);
    for (size_t i = 0; i < nx; i++)
        x[i] = mxk_t_frand();
    for (size_t i = 0; i < nw; i++)
        w[i] = mxk_t_frand();
    for (size_t i = 0; i < nb; i++)
        b[i] = mxk_t_frand();
    for (size_t i = 0; i < ny; i++)
        dy[i] = mxk_t_frand();
    double *ry = malloc(ny * 8), *rdx = malloc(nx * 8), *rdw = malloc(nw * 8),
           *rdb = malloc(nb * 8);
    conv_ref(&g, x, w, b, dy, ry, rdx, rdw, rdb);
    mxk_ndarray *X = arr(&o.in[0], x, 0), *Wt = arr(&o.in[1], w, 0), *B = arr(&o.in[2], b, 0);
    mxk_ndarray *Y = arr(&o.out[0], NULL, 5), *DY = arr(&o.out[0], dy, 0);
    mxk_ndarray *in[3] = {X, Wt, B};
    mxk_op_req add = MXK_REQ_ADD;
    /* forward ADD into 5s, then WRITE */
    CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 1, in, &Y, &add, NULL), MXK_OK);
    float *got = malloc((nx > ny ? (nx > nw ? nx : nw) : (ny > nw ? ny : nw)) * 4);
    double *want = malloc((nx > ny ? (nx > nw ? nx : nw) : (ny > nw ? ny : nw)) * 8);
    get(Y, got);
    for (size_t i = 0; i < ny; i++)
        want[i] = 5.0 + ry[i];
    CLOSE("conv y (add)", got, want, ny, 1e-4);
    CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 1, in, &Y, NULL, NULL), MXK_OK);
    get(Y, got);
    CLOSE("conv y", got, ry, ny, 1e-4);
    /* backward: dx WRITE, dW ADD, db WRITE, out_data not passed (undeclared) */
    mxk_ndarray *DX = arr(&o.in[0], NULL, 5), *DW = arr(&o.in[1], NULL, 5),
                *DB = arr(&o.in[2], NULL, 5);
    mxk_ndarray *gr[3] = {DX, DW, DB};
    mxk_op_req req[3] = {MXK_REQ_WRITE, MXK_REQ_ADD, MXK_REQ_WRITE};
    uint8_t nog[1] = {0}, nid[3] = {0}, nod[1] = {0};
    mxk_op_instance_backward_dependency(o.inst, nog, nid, nod);
    CHECK(nog[0] && nid[0] && nid[1] && !nid[2] && !nod[0]);
    mxk_ndarray *in_dep[3] = {X, Wt, NULL};
    CHECK_EQ_INT(mxk_op_instance_backward(o.inst, &DY, in_dep, NULL, gr, req, NULL), MXK_OK);
    get(DX, got);
    CLOSE("conv dx", got, rdx, nx, 1e-4);
    get(DW, got);
    for (size_t i = 0; i < nw; i++)
        want[i] = 5.0 + rdw[i];
    CLOSE("conv dw (add)", got, want, nw, 1e-4);
    get(DB, got);
    CLOSE("conv db", got, rdb, nb, 1e-4);
    /* NULL requests leave the gradients alone */
    mxk_op_req nreq[3] = {MXK_REQ_NULL, MXK_REQ_WRITE, MXK_REQ_NULL};
    mxk_ndarray *DX5 = arr(&o.in[0], NULL, 5);
    gr[0] = DX5;
    CHECK_EQ_INT(mxk_op_instance_backward(o.inst, &DY, in_dep, NULL, gr, nreq, NULL), MXK_OK);
    get(DX5, got);
    CHECK(got[0] == 5.0f && got[nx - 1] == 5.0f);
    get(DW, got);
    CLOSE("conv dw (write)", got, rdw, nw, 1e-4);
    mxk_ndarray *all[] = {X, Wt, B, Y, DY, DX, DW, DB, DX5};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        mxk_ndarray_free(all[i]);
    mxk_op_instance_free(o.inst);
    free(x), free(w), free(b), free(dy), free(ry), free(rdx), free(rdw), free(rdb), free(got),
        free(want);
}

static void test_conv_output_sizes_row8(void) {
    const char *k[] = {"kernel", "num_filter", "pad", "dilate"};
    const char *v1[] = {"(5,5)", "2", "(0,0)", "(1,1)"}, *v2[] = {"(5,5)", "2", "(2,2)", "(1,1)"},
               *v3[] = {"(3,3)", "2", "(0,0)", "(2,2)"};
    const char *const *vs[3] = {v1, v2, v3};
    int want[3] = {24, 28, 24};
    for (int t = 0; t < 3; t++) {
        mxk_shape s[3] = {shp4(4, 1, 1, 28, 28)};
        op_t o;
        if (op_make(&o, "Convolution", 4, k, vs[t], 3, s)) {
            CHECK_EQ_INT(o.out[0].dims[2], want[t]);
            CHECK_EQ_INT(o.out[0].dims[3], want[t]);
            mxk_op_instance_free(o.inst);
        }
    }
    /* errors: groups, kernel too large, layout */
    const char *kg[] = {"kernel", "num_filter", "num_group"}, *vg[] = {"(3,3)", "4", "3"};
    mxk_shape s[3] = {shp4(4, 1, 6, 8, 8)};
    mxk_op_instance *bad = NULL;
    CHECK_EQ_INT(mxk_op_instance_create("Convolution", 3, kg, vg, cpu, 3, s, NULL, &bad),
                 MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxk_get_last_error(), "num_filter must divide group size");
    const char *vk[] = {"(9,9)", "4", "1"};
    CHECK_EQ_INT(mxk_op_instance_create("Convolution", 3, kg, vk, cpu, 3, s, NULL, &bad),
                 MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxk_get_last_error(), "kernel size exceed input");
    const char *kl[] = {"kernel", "num_filter", "layout"}, *vl[] = {"(3,3)", "4", "NHWC"};
    CHECK(mxk_op_instance_create("Convolution", 3, kl, vl, cpu, 3, s, NULL, &bad) != MXK_OK);
    CHECK_CONTAINS(mxk_get_last_error(), "NCHW only");
}

static void test_conv_against_float64(void) {
    /* dilation, groups, padding, stride; workspace 0: one image per chunk */
    cg g1 = {.N = 3,
             .C = 4,
             .H = 9,
             .W = 8,
             .F = 6,
             .G = 2,
             .kh = 3,
             .kw = 2,
             .sh = 2,
             .sw = 1,
             .ph = 1,
             .pw = 2,
             .dh = 2,
             .dw = 1};
    check_conv(g1, "0");
    /* default workspace: the whole batch in one GEMM */
    check_conv(g1, "1024");
    /* 1 MB with (C*k*k + F) * P * 4 = (4*9+8)*2704*4 = 475,904 bytes per image: chunks of
     * 2 images over a batch of 5 (2, 2, 1) */
    cg g2 = {.N = 5,
             .C = 4,
             .H = 52,
             .W = 52,
             .F = 8,
             .G = 1,
             .kh = 3,
             .kw = 3,
             .sh = 1,
             .sw = 1,
             .ph = 1,
             .pw = 1,
             .dh = 1,
             .dw = 1};
    check_conv(g2, "1");
    /* 1x1 convolution, 4 groups */
    cg g3 = {.N = 2,
             .C = 8,
             .H = 5,
             .W = 5,
             .F = 4,
             .G = 4,
             .kh = 1,
             .kw = 1,
             .sh = 1,
             .sw = 1,
             .ph = 0,
             .pw = 0,
             .dh = 1,
             .dw = 1};
    check_conv(g3, "1024");
}

/** Convolution is linear in x and W: central differences of sum(y * r) are exact. */
static void test_conv_finite_differences(void) {
    const char *k[] = {"kernel", "num_filter", "pad", "dilate", "no_bias"};
    const char *v[] = {"(2,3)", "2", "(1,0)", "(1,2)", "True"};
    mxk_shape s[2] = {shp4(4, 2, 2, 4, 6)};
    op_t o;
    if (!op_make(&o, "Convolution", 5, k, v, 2, s))
        return;
    size_t nx = count(&o.in[0]), nw = count(&o.in[1]), ny = count(&o.out[0]);
    float x[96], w[24], r[256], y[256], dx[96], dw[24];
    for (size_t i = 0; i < nx; i++)
        x[i] = mxk_t_frand();
    for (size_t i = 0; i < nw; i++)
        w[i] = mxk_t_frand();
    for (size_t i = 0; i < ny; i++)
        r[i] = mxk_t_frand();
    mxk_ndarray *X = arr(&o.in[0], x, 0), *Wt = arr(&o.in[1], w, 0), *Y = arr(&o.out[0], NULL, 0);
    mxk_ndarray *R = arr(&o.out[0], r, 0), *DX = arr(&o.in[0], NULL, 0),
                *DW = arr(&o.in[1], NULL, 0);
    mxk_ndarray *in[2] = {X, Wt}, *gr[2] = {DX, DW};
    CHECK_EQ_INT(mxk_op_instance_backward(o.inst, &R, in, NULL, gr, NULL, NULL), MXK_OK);
    get(DX, dx);
    get(DW, dw);
    const float h = 0.5f;
    for (int which = 0; which < 2; which++) {
        float *p = which ? w : x;
        mxk_ndarray *P = which ? Wt : X;
        size_t n = which ? nw : nx;
        double fd[96];
        for (size_t i = 0; i < n; i++) {
            double lp = 0, lm = 0;
            float keep = p[i];
            p[i] = keep + h;
            mxk_ndarray_copy_from_host(P, p, n * 4);
            mxk_op_instance_forward(o.inst, 1, in, &Y, NULL, NULL);
            get(Y, y);
            for (size_t q = 0; q < ny; q++)
                lp += (double)y[q] * r[q];
            p[i] = keep - h;
            mxk_ndarray_copy_from_host(P, p, n * 4);
            mxk_op_instance_forward(o.inst, 1, in, &Y, NULL, NULL);
            get(Y, y);
            for (size_t q = 0; q < ny; q++)
                lm += (double)y[q] * r[q];
            p[i] = keep;
            mxk_ndarray_copy_from_host(P, p, n * 4);
            fd[i] = (lp - lm) / (2.0 * h);
        }
        CLOSE(which ? "fd dw" : "fd dx", which ? dw : dx, fd, n, 1e-4);
    }
    mxk_ndarray *all[] = {X, Wt, Y, R, DX, DW};
    for (size_t i = 0; i < 6; i++)
        mxk_ndarray_free(all[i]);
    mxk_op_instance_free(o.inst);
}

/** Deconvolution against its definition: y[n, f, h*s-p+i*d, w*s-p+j*d] += x W. */
static void test_deconv_against_float64(void) {
    const int N = 2, C = 4, H = 3, W = 4, F = 6, G = 2, kh = 3, kw = 2, s = 2, p = 1, d = 1,
              adj = 1;
    const int OH = s * (H - 1) + d * (kh - 1) + 1 - 2 * p + adj,
              OW = s * (W - 1) + d * (kw - 1) + 1 - 2 * p + adj;
    const char *k[] = {"kernel",     "stride",    "pad",     "adj",
                       "num_filter", "num_group", "no_bias", "workspace"};
    const char *v[] = {"(3,2)", "(2,2)", "(1,1)", "(1,1)", "6", "2", "False", "0"};
    mxk_shape sh[3] = {shp4(4, N, C, H, W)};
    op_t o;
    if (!op_make(&o, "Deconvolution", 8, k, v, 3, sh))
        return;
    CHECK_EQ_INT(o.out[0].dims[1], F);
    CHECK_EQ_INT(o.out[0].dims[2], OH);
    CHECK_EQ_INT(o.out[0].dims[3], OW);
    CHECK_EQ_INT(o.in[1].dims[0], C);
    CHECK_EQ_INT(o.in[1].dims[1], F / G);
    size_t nx = count(&o.in[0]), nw = count(&o.in[1]), ny = count(&o.out[0]);
    float x[96], w[72], b[6], dy[1024], got[1024];
    double ry[1024], rdx[96], rdw[72], rdb[6];
    for (size_t i = 0; i < nx; i++)
        x[i] = mxk_t_frand();
    for (size_t i = 0; i < nw; i++)
        w[i] = mxk_t_frand();
    for (int i = 0; i < F; i++)
        b[i] = mxk_t_frand();
    for (size_t i = 0; i < ny; i++)
        dy[i] = mxk_t_frand();
    for (size_t q = 0; q < ny; q++)
        ry[q] = b[(q / (size_t)(OH * OW)) % F];
    memset(rdx, 0, sizeof rdx);
    memset(rdw, 0, sizeof rdw);
    const int Cg = C / G, Fg = F / G;
    for (int n = 0; n < N; n++)
        for (int c = 0; c < C; c++)
            for (int h = 0; h < H; h++)
                for (int ww = 0; ww < W; ww++)
                    for (int f = 0; f < Fg; f++)
                        for (int i = 0; i < kh; i++)
                            for (int j = 0; j < kw; j++) {
                                int oh = h * s - p + i * d, ow = ww * s - p + j * d;
                                if (oh < 0 || oh >= OH || ow < 0 || ow >= OW)
                                    continue;
                                int fo = (c / Cg) * Fg + f;
                                size_t xi = ((size_t)(n * C + c) * H + h) * W + ww;
                                size_t wi = ((size_t)(c * Fg + f) * kh + i) * kw + j;
                                size_t yi = ((size_t)(n * F + fo) * OH + oh) * OW + ow;
                                ry[yi] += (double)x[xi] * w[wi];
                                rdx[xi] += (double)dy[yi] * w[wi];
                                rdw[wi] += (double)dy[yi] * x[xi];
                            }
    for (int f = 0; f < F; f++) {
        rdb[f] = 0;
        for (int n = 0; n < N; n++)
            for (int q = 0; q < OH * OW; q++)
                rdb[f] += dy[(size_t)(n * F + f) * OH * OW + q];
    }
    mxk_ndarray *X = arr(&o.in[0], x, 0), *Wt = arr(&o.in[1], w, 0), *B = arr(&o.in[2], b, 0);
    mxk_ndarray *Y = arr(&o.out[0], NULL, 5), *DY = arr(&o.out[0], dy, 0);
    mxk_ndarray *in[3] = {X, Wt, B};
    mxk_op_req add = MXK_REQ_ADD;
    CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 1, in, &Y, &add, NULL), MXK_OK);
    get(Y, got);
    double want[1024];
    for (size_t i = 0; i < ny; i++)
        want[i] = 5 + ry[i];
    CLOSE("deconv y (add)", got, want, ny, 1e-4);
    CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 1, in, &Y, NULL, NULL), MXK_OK);
    get(Y, got);
    CLOSE("deconv y", got, ry, ny, 1e-4);
    mxk_ndarray *DX = arr(&o.in[0], NULL, 5), *DW = arr(&o.in[1], NULL, 5),
                *DB = arr(&o.in[2], NULL, 5);
    mxk_ndarray *gr[3] = {DX, DW, DB}, *in_dep[3] = {X, Wt, NULL};
    mxk_op_req req[3] = {MXK_REQ_ADD, MXK_REQ_WRITE, MXK_REQ_WRITE};
    CHECK_EQ_INT(mxk_op_instance_backward(o.inst, &DY, in_dep, NULL, gr, req, NULL), MXK_OK);
    get(DX, got);
    for (size_t i = 0; i < nx; i++)
        want[i] = 5 + rdx[i];
    CLOSE("deconv dx (add)", got, want, nx, 1e-4);
    get(DW, got);
    CLOSE("deconv dw", got, rdw, nw, 1e-4);
    get(DB, got);
    CLOSE("deconv db", got, rdb, (size_t)F, 1e-4);
    /* target_shape derives pads: data 3x4, stride 2, kernel 3x2 -> 6x7 */
    const char *kt[] = {"kernel", "stride", "num_filter", "target_shape"};
    const char *vt[] = {"(3,2)", "(2,2)", "3", "(6,7)"};
    op_t t;
    if (op_make(&t, "Deconvolution", 4, kt, vt, 2, sh)) {
        CHECK_EQ_INT(t.out[0].dims[2], 6);
        CHECK_EQ_INT(t.out[0].dims[3], 7);
        mxk_op_instance_free(t.inst);
    }
    mxk_ndarray *all[] = {X, Wt, B, Y, DY, DX, DW, DB};
    for (size_t i = 0; i < 8; i++)
        mxk_ndarray_free(all[i]);
    mxk_op_instance_free(o.inst);
}

/* ------------------------------------------------------------------------- */
/* Pooling                                                                    */
/* ------------------------------------------------------------------------- */

/** Output size of Pooling on a square input. */
static int64_t pool_out(int64_t x, const char *kern, const char *stride, const char *conv) {
    const char *k[] = {"kernel", "stride", "pooling_convention"}, *v[] = {kern, stride, conv};
    mxk_shape s = shp4(4, 1, 1, x, x);
    op_t o;
    if (!op_make(&o, "Pooling", 3, k, v, 1, &s))
        return -1;
    int64_t r = o.out[0].dims[2];
    mxk_op_instance_free(o.inst);
    return r;
}

static void test_pooling_output_sizes(void) {
    CHECK_EQ_INT(pool_out(75, "(2,2)", "(2,2)", "valid"), 37);
    CHECK_EQ_INT(pool_out(75, "(2,2)", "(2,2)", "full"), 38);
    CHECK_EQ_INT(pool_out(7, "(3,3)", "(2,2)", "valid"), 3); /* row 9 */
    CHECK_EQ_INT(pool_out(7, "(3,3)", "(2,2)", "full"), 3);
    CHECK_EQ_INT(pool_out(6, "(3,3)", "(2,2)", "valid"), 2);
    CHECK_EQ_INT(pool_out(6, "(3,3)", "(2,2)", "full"), 3);
    CHECK_EQ_INT(pool_out(28, "(2,2)", "(2,2)", "valid"), 14);
    const char *k[] = {"global_pool", "pool_type"}, *v[] = {"True", "avg"};
    mxk_shape s = shp4(4, 2, 3, 5, 7);
    op_t o;
    if (op_make(&o, "Pooling", 2, k, v, 1, &s)) {
        CHECK(o.out[0].dims[2] == 1 && o.out[0].dims[3] == 1);
        float x[210], y[6];
        for (int i = 0; i < 210; i++)
            x[i] = (float)i;
        mxk_ndarray *X = arr(&s, x, 0), *Y = arr(&o.out[0], NULL, 0);
        CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 0, &X, &Y, NULL, NULL), MXK_OK);
        get(Y, y);
        CHECK_NEAR(y[0], 17.0, 1e-5); /* mean of 0..34 */
        CHECK_NEAR(y[5], 5 * 35 + 17.0, 1e-4);
        mxk_ndarray_free(X), mxk_ndarray_free(Y);
        mxk_op_instance_free(o.inst);
    }
    const char *kb[] = {"kernel", "pool_type"}, *vb[] = {"(2,2)", "lp"};
    mxk_op_instance *bad = NULL;
    CHECK(mxk_op_instance_create("Pooling", 2, kb, vb, cpu, 1, &s, NULL, &bad) != MXK_OK);
    CHECK_CONTAINS(mxk_get_last_error(), "lp");
}

/** Row 10: max pooling 2x2 over [[1,3],[3,2]] gives 3; the gradient goes to the first 3. */
static void test_max_pool_first_max(void) {
    const char *k[] = {"kernel", "stride", "pool_type"}, *v[] = {"(2,2)", "(2,2)", "max"};
    mxk_shape s = shp4(4, 1, 1, 2, 2);
    op_t o;
    if (!op_make(&o, "Pooling", 3, k, v, 1, &s))
        return;
    uint8_t og[1] = {0}, id[1] = {0}, od[1] = {0};
    mxk_op_instance_backward_dependency(o.inst, og, id, od);
    CHECK(og[0] && id[0] && od[0]);
    const float xv[] = {1, 3, 3, 2}, one = 1;
    mxk_ndarray *X = arr(&s, xv, 0), *Y = arr(&o.out[0], NULL, 5), *DY = arr(&o.out[0], &one, 0);
    mxk_ndarray *DX = arr(&s, NULL, 5);
    CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 1, &X, &Y, NULL, NULL), MXK_OK);
    float y, dx[4];
    get(Y, &y);
    CHECK(y == 3.0f);
    CHECK_EQ_INT(mxk_op_instance_backward(o.inst, &DY, &X, &Y, &DX, NULL, NULL), MXK_OK);
    get(DX, dx);
    CHECK(dx[0] == 0 && dx[1] == 1 && dx[2] == 0 && dx[3] == 0);
    mxk_op_req add = MXK_REQ_ADD;
    CHECK_EQ_INT(mxk_op_instance_backward(o.inst, &DY, &X, &Y, &DX, &add, NULL), MXK_OK);
    get(DX, dx);
    CHECK(dx[0] == 0 && dx[1] == 2 && dx[2] == 0 && dx[3] == 0);
    mxk_ndarray *all[] = {X, Y, DY, DX};
    for (int i = 0; i < 4; i++)
        mxk_ndarray_free(all[i]);
    mxk_op_instance_free(o.inst);
}

/** avg with padding (count_include_pad both ways) and sum, forward and backward. */
static void test_avg_sum_pool(void) {
    mxk_shape s = shp4(4, 1, 1, 3, 3);
    const float xv[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    const char *k[] = {"kernel", "stride", "pad", "pool_type", "count_include_pad"};
    const char *v1[] = {"(2,2)", "(2,2)", "(1,1)", "avg", "True"};
    const char *v2[] = {"(2,2)", "(2,2)", "(1,1)", "avg", "False"};
    const char *v3[] = {"(2,2)", "(2,2)", "(1,1)", "sum", "True"};
    /* windows: rows {-1,0},{1,2}; cols the same -> out 2x2:
     * [1], [2,3], [4,7], [5,6,8,9] */
    const double w1[] = {0.25, 1.25, 2.75, 7}, w2[] = {1, 2.5, 5.5, 7}, w3[] = {1, 5, 11, 28};
    const char *const *vs[3] = {v1, v2, v3};
    const double *ws[3] = {w1, w2, w3};
    for (int t = 0; t < 3; t++) {
        op_t o;
        if (!op_make(&o, "Pooling", 5, k, vs[t], 1, &s))
            continue;
        uint8_t og[1] = {0}, id[1] = {0}, od[1] = {0};
        mxk_op_instance_backward_dependency(o.inst, og, id, od);
        CHECK(og[0] && !id[0] && !od[0]);
        mxk_ndarray *X = arr(&s, xv, 0), *Y = arr(&o.out[0], NULL, 5);
        float y[4], dx[9];
        CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 0, &X, &Y, NULL, NULL), MXK_OK);
        get(Y, y);
        CLOSE("pool", y, ws[t], 4, 1e-6);
        const float ones[] = {1, 1, 1, 1};
        mxk_ndarray *DY = arr(&o.out[0], ones, 0), *DX = arr(&s, NULL, 5), *nul = NULL;
        CHECK_EQ_INT(mxk_op_instance_backward(o.inst, &DY, &nul, NULL, &DX, NULL, NULL), MXK_OK);
        get(DX, dx);
        double want[9];
        if (t == 0)
            for (int i = 0; i < 9; i++)
                want[i] = 0.25;
        else if (t == 1) {
            const double ww[] = {1, 0.5, 0.5, 0.5, 0.25, 0.25, 0.5, 0.25, 0.25};
            memcpy(want, ww, sizeof ww);
        } else
            for (int i = 0; i < 9; i++)
                want[i] = 1;
        CLOSE("pool dx", dx, want, 9, 1e-6);
        mxk_ndarray_free(X), mxk_ndarray_free(Y), mxk_ndarray_free(DY), mxk_ndarray_free(DX);
        mxk_op_instance_free(o.inst);
    }
}

/* ------------------------------------------------------------------------- */
/* BatchNorm                                                                  */
/* ------------------------------------------------------------------------- */

/** Training forward and backward of one channel, then inference with the updated moving statistics.
 */
static void test_batchnorm_row13(void) {
    mxk_shape s = shp4(4, 4, 1, 1, 1); /* one channel, 4 elements */
    mxk_shape shapes[3] = {s};
    op_t o;
    if (!op_make(&o, "BatchNorm", 0, NULL, NULL, 3, shapes))
        return;
    CHECK_EQ_INT(o.no, 3);
    CHECK_EQ_INT(o.nv, 1);
    CHECK_EQ_INT(o.na, 2);
    CHECK_EQ_INT(o.aux[0].dims[0], 1);
    const float xv[] = {1, 2, 3, 4}, g = 0.5f /* ignored: fix_gamma */, bt = 0;
    mxk_ndarray *X = arr(&s, xv, 0), *G = arr(&o.in[1], &g, 0), *B = arr(&o.in[2], &bt, 0);
    mxk_ndarray *Y = arr(&s, NULL, 0), *M = arr(&o.out[1], NULL, 0), *V = arr(&o.out[2], NULL, 0);
    mxk_ndarray *MM = arr(&o.aux[0], NULL, 0), *MV = arr(&o.aux[1], NULL, 1);
    mxk_ndarray *in[3] = {X, G, B}, *out[3] = {Y, M, V}, *aux[2] = {MM, MV};
    CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 1, in, out, NULL, aux), MXK_OK);
    float y[4], m, var, mm, mv;
    get(Y, y);
    get(M, &m);
    get(V, &var);
    get(MM, &mm);
    get(MV, &mv);
    float gam;
    get(G, &gam);
    const double wy[] = {-1.341104, -0.447035, 0.447035, 1.341104};
    CLOSE("bn y", y, wy, 4, 2e-6);
    CHECK_NEAR(m, 2.5, 1e-6);
    CHECK_NEAR(var, 0.894070, 1e-6); /* the var output holds inv-std, as upstream */
    /* upstream's CPU kernel (batch_norm.cc): forward leaves the moving statistics
     * (backward updates them) and writes 1 into gamma with fix_gamma */
    CHECK_NEAR(mm, 0.0, 0);
    CHECK_NEAR(mv, 1.0, 0);
    CHECK_NEAR(gam, 1.0, 0);
    /* backward dy = 1: dx = 0, dbeta = 4, dgamma = 0 (fix_gamma); only declared deps */
    uint8_t og[1] = {0}, id[3] = {0}, od[3] = {0};
    mxk_op_instance_backward_dependency(o.inst, og, id, od);
    CHECK(og[0] && id[0] && id[1] && !id[2] && !od[0] && od[1] && od[2]);
    const float ones[] = {1, 1, 1, 1};
    mxk_ndarray *DY = arr(&s, ones, 0), *DX = arr(&s, NULL, 5), *DG = arr(&o.in[1], NULL, 5),
                *DB = arr(&o.in[2], NULL, 5);
    mxk_ndarray *ind[3] = {X, G, NULL}, *outd[3] = {NULL, M, V}, *gr[3] = {DX, DG, DB};
    mxk_op_req req[3] = {MXK_REQ_WRITE, MXK_REQ_WRITE, MXK_REQ_ADD};
    CHECK_EQ_INT(mxk_op_instance_backward(o.inst, &DY, ind, outd, gr, req, aux), MXK_OK);
    float dx[4], dg, db;
    get(DX, dx);
    get(DG, &dg);
    get(DB, &db);
    for (int i = 0; i < 4; i++)
        CHECK_NEAR(dx[i], 0.0, 1e-6);
    CHECK_NEAR(dg, 0.0, 0);
    CHECK_NEAR(db, 9.0, 1e-6); /* ADD: 5 + 4 */
    get(MM, &mm);
    get(MV, &mv);
    CHECK_NEAR(mm, 0.25, 1e-6);  /* 0.9 * 0 + 0.1 * 2.5 */
    CHECK_NEAR(mv, 1.025, 1e-6); /* 0.9 * 1 + 0.1 * 1.25 (biased variance) */
    /* inference: uses the moving statistics, leaves them alone */
    CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 0, in, out, NULL, aux), MXK_OK);
    get(Y, y);
    get(MV, &mv);
    double wi[4];
    for (int i = 0; i < 4; i++)
        wi[i] = (xv[i] - 0.25) / sqrt(1.025 + 1e-3);
    CLOSE("bn inference", y, wi, 4, 1e-6);
    CHECK_NEAR(mv, 1.025, 1e-6);
    mxk_ndarray *all[] = {X, G, B, Y, M, V, MM, MV, DY, DX, DG, DB};
    for (size_t i = 0; i < 12; i++)
        mxk_ndarray_free(all[i]);
    mxk_op_instance_free(o.inst);
}

/** Training gradient with gamma learned (fix_gamma False), against central differences. */
static void test_batchnorm_gradient(void) {
    mxk_shape s = shp4(4, 3, 2, 2, 2);
    mxk_shape shapes[3] = {s};
    const char *k[] = {"fix_gamma", "eps"}, *v[] = {"False", "0.01"};
    op_t o;
    if (!op_make(&o, "BatchNorm", 2, k, v, 3, shapes))
        return;
    float x[24], g[2] = {0.7f, -1.3f}, b[2] = {0.1f, 0.2f}, r[24];
    for (int i = 0; i < 24; i++)
        x[i] = mxk_t_frand(), r[i] = mxk_t_frand();
    mxk_ndarray *X = arr(&s, x, 0), *G = arr(&o.in[1], g, 0), *B = arr(&o.in[2], b, 0);
    mxk_ndarray *Y = arr(&s, NULL, 0), *M = arr(&o.out[1], NULL, 0), *V = arr(&o.out[2], NULL, 0);
    mxk_ndarray *MM = arr(&o.aux[0], NULL, 0), *MV = arr(&o.aux[1], NULL, 1);
    mxk_ndarray *in[3] = {X, G, B}, *out[3] = {Y, M, V}, *aux[2] = {MM, MV};
    CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 1, in, out, NULL, aux), MXK_OK);
    mxk_ndarray *R = arr(&s, r, 0), *DX = arr(&s, NULL, 0), *DG = arr(&o.in[1], NULL, 0),
                *DB = arr(&o.in[2], NULL, 0);
    mxk_ndarray *gr[3] = {DX, DG, DB};
    CHECK_EQ_INT(mxk_op_instance_backward(o.inst, &R, in, out, gr, NULL, aux), MXK_OK);
    float dx[24], dg[2], y[24];
    get(DX, dx);
    get(DG, dg);
    /* float64 reference of the loss sum(y r) */
    double fdx[24], fdg[2];
    const double h = 1e-3;
    for (int t = 0; t < 26; t++) {
        double l[2];
        for (int sgn = 0; sgn < 2; sgn++) {
            double xx[24], gg[2] = {g[0], g[1]};
            for (int i = 0; i < 24; i++)
                xx[i] = x[i];
            double d = sgn ? -h : h;
            if (t < 24)
                xx[t] += d;
            else
                gg[t - 24] += d;
            double loss = 0;
            for (int c = 0; c < 2; c++) {
                double mu = 0, var = 0;
                for (int n = 0; n < 3; n++)
                    for (int q = 0; q < 4; q++)
                        mu += xx[(n * 2 + c) * 4 + q];
                mu /= 12;
                for (int n = 0; n < 3; n++)
                    for (int q = 0; q < 4; q++)
                        var += (xx[(n * 2 + c) * 4 + q] - mu) * (xx[(n * 2 + c) * 4 + q] - mu);
                var /= 12;
                for (int n = 0; n < 3; n++)
                    for (int q = 0; q < 4; q++) {
                        int i = (n * 2 + c) * 4 + q;
                        loss += ((xx[i] - mu) / sqrt(var + 0.01) * gg[c] + b[c]) * r[i];
                    }
            }
            l[sgn] = loss;
        }
        if (t < 24)
            fdx[t] = (l[0] - l[1]) / (2 * h);
        else
            fdg[t - 24] = (l[0] - l[1]) / (2 * h);
    }
    CLOSE("bn fd dx", dx, fdx, 24, 1e-3);
    CLOSE("bn fd dgamma", dg, fdg, 2, 1e-3);
    get(Y, y);
    mxk_ndarray *all[] = {X, G, B, Y, M, V, MM, MV, R, DX, DG, DB};
    for (size_t i = 0; i < 12; i++)
        mxk_ndarray_free(all[i]);
    mxk_op_instance_free(o.inst);
}

/* ------------------------------------------------------------------------- */
/* Dropout                                                                    */
/* ------------------------------------------------------------------------- */

/** Runs Dropout p on x (n values) in the given mode; y and mask out. */
static void dropout_run(const char *p, const char *mode, int train, const float *x, size_t n,
                        float *y, float *mask) {
    const char *k[] = {"p", "mode"}, *v[] = {p, mode};
    mxk_shape s = shp4(1, (int64_t)n, 0, 0, 0);
    op_t o;
    if (!op_make(&o, "Dropout", 2, k, v, 1, &s))
        return;
    mxk_ndarray *X = arr(&s, x, 0), *Y = arr(&s, NULL, 0), *M = arr(&s, NULL, 0);
    mxk_ndarray *out[2] = {Y, M};
    CHECK_EQ_INT(mxk_op_instance_forward(o.inst, train, &X, out, NULL, NULL), MXK_OK);
    get(Y, y);
    get(M, mask);
    mxk_ndarray_free(X), mxk_ndarray_free(Y), mxk_ndarray_free(M);
    mxk_op_instance_free(o.inst);
}

static void test_dropout(void) {
    enum { n = 100000 };
    float *x = malloc(n * 4), *y = malloc(n * 4), *m = malloc(n * 4), *y2 = malloc(n * 4),
          *m2 = malloc(n * 4);
    for (int i = 0; i < n; i++)
        x[i] = 1.0f + (float)(i % 7);
    mxk_random_seed(42);
    dropout_run("0.3", "training", 1, x, n, y, m);
    size_t kept = 0;
    int ok = 1;
    for (int i = 0; i < n; i++) {
        if (m[i] != 0.0f) {
            kept++;
            ok &= fabsf(m[i] - 1.0f / 0.7f) < 1e-6f && fabsf(y[i] - x[i] / 0.7f) < 1e-5f;
        } else {
            ok &= y[i] == 0.0f;
        }
    }
    CHECK(ok);
    /* keep ratio 0.7, sd sqrt(0.21/n) = 0.00145: within 5 sd */
    CHECK_NEAR((double)kept / n, 0.7, 0.0073);
    /* same seed, same mask; another seed, another mask */
    mxk_random_seed(42);
    dropout_run("0.3", "training", 1, x, n, y2, m2);
    CHECK(memcmp(m, m2, n * 4) == 0 && memcmp(y, y2, n * 4) == 0);
    mxk_random_seed(43);
    dropout_run("0.3", "training", 1, x, n, y2, m2);
    CHECK(memcmp(m, m2, n * 4) != 0);
    /* inference: identity (mask 1); mode always: active at inference too */
    dropout_run("0.3", "training", 0, x, n, y2, m2);
    CHECK(memcmp(x, y2, n * 4) == 0 && m2[0] == 1.0f && m2[n - 1] == 1.0f);
    dropout_run("0.3", "always", 0, x, n, y2, m2);
    kept = 0;
    for (int i = 0; i < n; i++)
        kept += m2[i] != 0.0f;
    CHECK_NEAR((double)kept / n, 0.7, 0.0073);
    /* row 33: p = 0.2 scales survivors by 1.25 */
    const float xv[] = {3, 0.5f, -0.5f, 2, 7};
    float yv[5], mv[5];
    dropout_run("0.2", "training", 1, xv, 5, yv, mv);
    for (int i = 0; i < 5; i++)
        CHECK(yv[i] == 0.0f || fabsf(yv[i] - xv[i] * 1.25f) < 1e-6f);
    /* backward dx = dy * mask, declared deps only (out_grad, mask), in place on dy */
    const char *k[] = {"p"}, *v[] = {"0.5"};
    mxk_shape s = shp4(2, 4, 8, 0, 0);
    op_t o;
    if (op_make(&o, "Dropout", 1, k, v, 1, &s)) {
        uint8_t og[1] = {0}, id[1] = {0}, od[2] = {0};
        mxk_op_instance_backward_dependency(o.inst, og, id, od);
        CHECK(og[0] && !id[0] && !od[0] && od[1]);
        float xs[32], dys[32], ms[32], dx[32];
        for (int i = 0; i < 32; i++)
            xs[i] = mxk_t_frand(), dys[i] = mxk_t_frand();
        mxk_ndarray *X = arr(&s, xs, 0), *Y = arr(&s, NULL, 0), *M = arr(&s, NULL, 0);
        mxk_ndarray *out[2] = {Y, M}, *DY = arr(&s, dys, 0), *DX = arr(&s, NULL, 5), *nul = NULL;
        CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 1, &X, out, NULL, NULL), MXK_OK);
        get(M, ms);
        mxk_ndarray *outd[2] = {NULL, M};
        mxk_op_req add = MXK_REQ_ADD;
        CHECK_EQ_INT(mxk_op_instance_backward(o.inst, &DY, &nul, outd, &DX, &add, NULL), MXK_OK);
        get(DX, dx);
        int good = 1;
        for (int i = 0; i < 32; i++)
            good &= fabsf(dx[i] - (5.0f + dys[i] * ms[i])) < 1e-6f;
        CHECK(good);
        CHECK_EQ_INT(mxk_op_instance_backward(o.inst, &DY, &nul, outd, &DY, NULL, NULL), MXK_OK);
        get(DY, dx);
        good = 1;
        for (int i = 0; i < 32; i++)
            good &= dx[i] == dys[i] * ms[i];
        CHECK(good);
        mxk_ndarray *all[] = {X, Y, M, DY, DX};
        for (int i = 0; i < 5; i++)
            mxk_ndarray_free(all[i]);
        mxk_op_instance_free(o.inst);
    }
    free(x), free(y), free(m), free(y2), free(m2);
}

/* ------------------------------------------------------------------------- */
/* LRN, UpSampling, Crop                                                      */
/* ------------------------------------------------------------------------- */

static void test_lrn(void) {
    const char *k[] = {"nsize"}, *v[] = {"1"};
    mxk_shape s = shp4(4, 1, 1, 1, 1);
    op_t o;
    if (op_make(&o, "LRN", 1, k, v, 1, &s)) {
        const float one = 1;
        mxk_ndarray *X = arr(&s, &one, 0), *Y = arr(&s, NULL, 0), *T = arr(&s, NULL, 0);
        mxk_ndarray *out[2] = {Y, T};
        CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 1, &X, out, NULL, NULL), MXK_OK);
        float y;
        get(Y, &y);
        CHECK_NEAR(y, 0.594581, 1e-6); /* row 15 */
        mxk_ndarray_free(X), mxk_ndarray_free(Y), mxk_ndarray_free(T);
        mxk_op_instance_free(o.inst);
    }
    /* nsize 3 over 5 channels: forward against the formula, backward against differences */
    const char *v3[] = {"3"};
    const char *k3[] = {"nsize", "alpha", "beta", "knorm"}, *v3b[] = {"3", "0.5", "0.75", "1"};
    (void)v3;
    mxk_shape s5 = shp4(4, 2, 5, 1, 2);
    if (!op_make(&o, "LRN", 4, k3, v3b, 1, &s5))
        return;
    float x[20], r[20], y[20], dx[20];
    for (int i = 0; i < 20; i++)
        x[i] = mxk_t_frand(), r[i] = mxk_t_frand();
    mxk_ndarray *X = arr(&s5, x, 0), *Y = arr(&s5, NULL, 0), *T = arr(&s5, NULL, 0);
    mxk_ndarray *out[2] = {Y, T}, *R = arr(&s5, r, 0), *DX = arr(&s5, NULL, 0);
    CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 1, &X, out, NULL, NULL), MXK_OK);
    get(Y, y);
    mxk_ndarray *outd[2] = {NULL, T};
    CHECK_EQ_INT(mxk_op_instance_backward(o.inst, &R, &X, outd, &DX, NULL, NULL), MXK_OK);
    get(DX, dx);
    double wy[20], fd[20];
    for (int t = -1; t < 20; t++) {
        double l[2];
        for (int sg = 0; sg < 2; sg++) {
            double xx[20], loss = 0;
            for (int i = 0; i < 20; i++)
                xx[i] = x[i];
            if (t >= 0)
                xx[t] += sg ? -1e-3 : 1e-3;
            for (int n = 0; n < 2; n++)
                for (int c = 0; c < 5; c++)
                    for (int q = 0; q < 2; q++) {
                        double s2 = 0;
                        for (int cc = c - 1; cc <= c + 1; cc++)
                            if (cc >= 0 && cc < 5)
                                s2 += xx[(n * 5 + cc) * 2 + q] * xx[(n * 5 + cc) * 2 + q];
                        int i = (n * 5 + c) * 2 + q;
                        double yy = xx[i] * pow(1 + 0.5 / 3 * s2, -0.75);
                        if (t < 0)
                            wy[i] = yy;
                        loss += yy * r[i];
                    }
            l[sg] = loss;
        }
        if (t >= 0)
            fd[t] = (l[0] - l[1]) / 2e-3;
    }
    CLOSE("lrn y", y, wy, 20, 1e-5);
    CLOSE("lrn fd dx", dx, fd, 20, 1e-3);
    mxk_ndarray *all[] = {X, Y, T, R, DX};
    for (int i = 0; i < 5; i++)
        mxk_ndarray_free(all[i]);
    mxk_op_instance_free(o.inst);
}

static void test_upsampling(void) {
    const char *k[] = {"scale", "sample_type", "num_args"}, *v[] = {"2", "nearest", "1"};
    mxk_shape s = shp4(4, 1, 1, 2, 2);
    op_t o;
    if (op_make(&o, "UpSampling", 3, k, v, 1, &s)) {
        CHECK(o.out[0].dims[2] == 4 && o.out[0].dims[3] == 4);
        const float xv[] = {1, 2, 3, 4};
        float y[16], dx[4], dy[16];
        for (int i = 0; i < 16; i++)
            dy[i] = (float)i;
        mxk_ndarray *X = arr(&s, xv, 0), *Y = arr(&o.out[0], NULL, 0), *DY = arr(&o.out[0], dy, 0),
                    *DX = arr(&s, NULL, 5), *nul = NULL;
        CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 0, &X, &Y, NULL, NULL), MXK_OK);
        get(Y, y);
        const double wy[] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
        CLOSE("upsampling nearest", y, wy, 16, 0);
        CHECK_EQ_INT(mxk_op_instance_backward(o.inst, &DY, &nul, NULL, &DX, NULL, NULL), MXK_OK);
        get(DX, dx);
        const double wdx[] = {0 + 1 + 4 + 5, 2 + 3 + 6 + 7, 8 + 9 + 12 + 13, 10 + 11 + 14 + 15};
        CLOSE("upsampling nearest dx", dx, wdx, 4, 0);
        mxk_ndarray_free(X), mxk_ndarray_free(Y), mxk_ndarray_free(DY), mxk_ndarray_free(DX);
        mxk_op_instance_free(o.inst);
    }
    /* bilinear: weight (C,1,4,4) for scale 2; a constant input with the bilinear kernel
     * gives a constant interior */
    const char *kb[] = {"scale", "sample_type", "num_args", "num_filter"},
               *vb[] = {"2", "bilinear", "2", "2"};
    mxk_shape sb[2] = {shp4(4, 1, 2, 3, 3)};
    if (op_make(&o, "UpSampling", 4, kb, vb, 2, sb)) {
        CHECK(o.in[1].dims[0] == 2 && o.in[1].dims[1] == 1 && o.in[1].dims[2] == 4);
        CHECK(o.out[0].dims[2] == 6 && o.out[0].dims[3] == 6);
        float w[32], x[18], y[72];
        for (int c = 0; c < 2; c++)
            for (int i = 0; i < 16; i++) {
                double f = 2.0, cen = (2 * 2 - 1 - 2 % 2) / (2.0 * f);
                int a = i / 4, b = i % 4;
                w[c * 16 + i] = (float)((1 - fabs(a / f - cen)) * (1 - fabs(b / f - cen)));
            }
        for (int i = 0; i < 18; i++)
            x[i] = 2.0f;
        mxk_ndarray *X = arr(&o.in[0], x, 0), *Wt = arr(&o.in[1], w, 0),
                    *Y = arr(&o.out[0], NULL, 0);
        mxk_ndarray *in[2] = {X, Wt};
        CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 0, in, &Y, NULL, NULL), MXK_OK);
        get(Y, y);
        CHECK_NEAR(y[2 * 6 + 2], 2.0, 1e-6);
        CHECK_NEAR(y[36 + 3 * 6 + 3], 2.0, 1e-6);
        mxk_ndarray_free(X), mxk_ndarray_free(Wt), mxk_ndarray_free(Y);
        mxk_op_instance_free(o.inst);
    }
}

static void test_crop(void) {
    const char *k[] = {"num_args", "h_w", "offset"}, *v[] = {"1", "(2,2)", "(1,0)"};
    mxk_shape s = shp4(4, 1, 1, 3, 4);
    float x[12];
    for (int i = 0; i < 12; i++)
        x[i] = (float)i;
    op_t o;
    if (op_make(&o, "Crop", 3, k, v, 1, &s)) {
        mxk_ndarray *X = arr(&s, x, 0), *Y = arr(&o.out[0], NULL, 0);
        const float dyv[] = {1, 2, 3, 4};
        mxk_ndarray *DY = arr(&o.out[0], dyv, 0), *DX = arr(&s, NULL, 5), *nul = NULL;
        CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 0, &X, &Y, NULL, NULL), MXK_OK);
        float y[4], dx[12];
        get(Y, y);
        CHECK(y[0] == 4 && y[1] == 5 && y[2] == 8 && y[3] == 9);
        CHECK_EQ_INT(mxk_op_instance_backward(o.inst, &DY, &nul, NULL, &DX, NULL, NULL), MXK_OK);
        get(DX, dx);
        const double wdx[] = {0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0};
        CLOSE("crop dx", dx, wdx, 12, 0);
        mxk_ndarray_free(X), mxk_ndarray_free(Y), mxk_ndarray_free(DY), mxk_ndarray_free(DX);
        mxk_op_instance_free(o.inst);
    }
    /* num_args 2, center_crop: crop to the second input's size */
    const char *k2[] = {"num_args", "center_crop"}, *v2[] = {"2", "True"};
    mxk_shape s2[2] = {shp4(4, 1, 1, 3, 4), shp4(4, 1, 1, 1, 2)};
    if (op_make(&o, "Crop", 2, k2, v2, 2, s2)) {
        mxk_ndarray *X = arr(&s, x, 0), *R = arr(&s2[1], NULL, 0), *Y = arr(&o.out[0], NULL, 0);
        mxk_ndarray *in[2] = {X, R};
        CHECK_EQ_INT(mxk_op_instance_forward(o.inst, 0, in, &Y, NULL, NULL), MXK_OK);
        float y[2];
        get(Y, y);
        CHECK(y[0] == 5 && y[1] == 6);
        mxk_ndarray_free(X), mxk_ndarray_free(R), mxk_ndarray_free(Y);
        mxk_op_instance_free(o.inst);
    }
    const char *kb[] = {"num_args", "h_w"}, *vb[] = {"1", "(5,5)"};
    mxk_op_instance *bad = NULL;
    CHECK_EQ_INT(mxk_op_instance_create("Crop", 2, kb, vb, cpu, 1, &s, NULL, &bad), MXK_ERR_SHAPE);
    CHECK_CONTAINS(mxk_get_last_error(), "exceeds the input");
}

int main(void) {
    *mxk_t_rng() = 0x2545F4914F6CDD1Dull; /* this file's data */
    mxk_init_options opt = {.struct_size = sizeof opt, .config_dir = BUILD_CONFDIR};
    if (mxk_init(&opt) != MXK_OK) {
        fprintf(stderr, "mxk_init: %s\n", mxk_get_last_error());
        return 1;
    }
    MXK_RUN(test_conv_output_sizes_row8);
    MXK_RUN(test_conv_against_float64);
    MXK_RUN(test_conv_finite_differences);
    MXK_RUN(test_deconv_against_float64);
    MXK_RUN(test_pooling_output_sizes);
    MXK_RUN(test_max_pool_first_max);
    MXK_RUN(test_avg_sum_pool);
    MXK_RUN(test_batchnorm_row13);
    MXK_RUN(test_batchnorm_gradient);
    MXK_RUN(test_dropout);
    MXK_RUN(test_lrn);
    MXK_RUN(test_upsampling);
    MXK_RUN(test_crop);
    mxk_shutdown();
    return MXK_TEST_EXIT();
}
