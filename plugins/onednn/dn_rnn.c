/*
 * onednn plugin: the fused recurrent operator RNN on oneDNN's RNN primitives
 * (oneDNN 2.x: dnnl_vanilla_rnn_*, dnnl_lstm_*, dnnl_lbr_gru_* forward and
 * backward descriptors).
 *
 * Semantics are the operator's (cpu-blas op_rnn.c: arguments, outputs, the flat
 * cuDNN parameter layout, the gate order; upstream MXNet src/operator/rnn.cc,
 * rnn-inl.h, rnn_impl.h); the mapping onto oneDNN follows MXNet 1.9.1's
 * src/operator/nn/mkldnn/mkldnn_rnn.cc and mkldnn_rnn-inl.h:
 *   - one primitive per layer (oneDNN's stacked bidirectional layers do not
 *     concatenate the directions between layers, and its stacked layers need
 *     input size = state size); all layers above the first share one primitive.
 *     Directions: unidirectional_left2right, or bidirectional_concat (output
 *     (T, N, 2H), the backward direction in [H, 2H), as cuDNN's).
 *   - modes: rnn_relu / rnn_tanh on the vanilla RNN (relu with slope 0), lstm
 *     (gates i, f, g, o: the same order as cuDNN's), gru on the linear-before-
 *     reset GRU, which is cuDNN's formula n = tanh(Wx_n x + bx_n + r (Wh_n h +
 *     bh_n)); its gates are u (= z), r, o (= n), so cuDNN's r and z swap.
 *   - weights: each layer's Wx (G*H, I) and Wh (G*H, H) blocks of the flat
 *     parameters are copied, gate by gate, into oneDNN's plain ldgoi layout
 *     (dims (1, D, I, G, H)) and reordered into the layout the primitive chose
 *     (format_tag_any; the reorder primitives are kept in the node's state);
 *     gradients come back the same way.
 *   - bias: oneDNN has one bias per gate, (1, D, G, H) ldgo: bx + bh; the
 *     linear-before-reset GRU has a fourth, bh_n, while its gate o takes bx_n.
 *     The gradients of bx and bh of a summed gate are both oneDNN's diff bias.
 *   - states: hx, cx, state_output, statecell_output (L*D, N, H) are L slices
 *     (1, D, N, H) ldnc, one per layer.
 *
 * Workspace: oneDNN's backward reads a workspace only the training forward writes
 * (gates, states; its size exceeds the operator's hidden `reserve` output, which
 * cpu-blas sizes for its own kernel: this kernel writes zeros there when it is
 * requested, so a WRITE leaves defined contents). The node's state keeps,
 * from the last training forward, every layer's workspace, output and final
 * states, keyed by the (pointer, write version) of all the arguments
 * (mxk_tensor.version, as dn_util.h's dn_ws). A backward whose arguments do not
 * match the key (no training forward on this state yet, an argument written
 * since, another executor's forward in between, an untracked version) first
 * recomputes the training forward into the state, so the gradients never depend
 * on the call order.
 *
 * Requests: WRITE / INPLACE / NULL (the host emulates ADD); a gradient not
 * requested goes to scratch. Accepted: float32 arguments, data (T, N, C) with
 * T, N, C >= 1. Declined (cpu-blas runs them): other dtypes; projection_size,
 * lstm_state_clip_min / lstm_state_clip_max, use_sequence_length=True (oneDNN
 * 2.6 has no sequence lengths nor LSTM state clipping); dropout p > 0 with more
 * than one layer (in inference too: `supports` cannot see the training flag).
 *
 * Thread safety: a state is used by one call at a time (the host's rule).
 */
#include "dn_util.h"

#include <stdlib.h>

/** Modes, in the order of the operator's enum attribute. */
enum { RNN_RELU, RNN_TANH, RNN_LSTM, RNN_GRU };

/** Parsed attributes (MXNet 1.9.1 RNNParam). */
typedef struct dn_rnn_param {
    int32_t mode;
    int64_t H, L;
    int32_t bidirectional, state_outputs;
    double p;
    int32_t unsupported; /**< projection_size, state clipping or use_sequence_length set */
} dn_rnn_param;

/**
 * The weight conversions of a layer kind: plain into each primitive's layout
 * (layer weights, then iteration weights: WI = WL + 1) and the gradients back.
 */
enum rnn_conv {
    RNN_TRAIN_WL,
    RNN_TRAIN_WI,
    RNN_INFER_WL,
    RNN_INFER_WI,
    RNN_BWD_WL,
    RNN_BWD_WI,
    RNN_DIFF_WL,
    RNN_DIFF_WI,
    RNN_CONVS
};

/**
 * A layer kind: layer 0 (input size C) or the layers above (input size D*H). The
 * plain descriptors, the primitives (made at first use), the weight layouts they
 * chose and the workspace size of the training forward.
 */
typedef struct rnn_kind {
    int64_t I;
    dnnl_memory_desc_t src_md;       /**< (T, N, I) tnc */
    dnnl_memory_desc_t wl_md, wi_md; /**< plain (1, D, I, G, H), (1, D, H, G, H) ldgoi */
    dnnl_primitive_desc_t train_pd;  /**< the backward's hint; owns ws_md */
    dnnl_primitive_t train, infer, bwd;
    dnnl_memory_desc_t train_wl, train_wi, infer_wl, infer_wi, bwd_wl, bwd_wi, dwl, dwi;
    const dnnl_memory_desc_t *ws_md;
    size_t ws_bytes;                     /**< rounded up to 64 */
    dnnl_primitive_t reorder[RNN_CONVS]; /**< NULL where the layouts are equal */
    int8_t reorder_made[RNN_CONVS];      /**< 1 once reorder[i] is decided */
} rnn_kind;

/**
 * Per-node state: sizes, shared descriptors, the kinds and the training forward's
 * saved values (one owned block: layer outputs ys L x (T, N, D*H), final states
 * hy, cy (L*D, N, H), the workspaces), valid for the arguments of `key`.
 */
typedef struct dn_rnn_state {
    int mode, state_outputs;
    int64_t T, N, C, H, L, D, G, Gb; /**< Gb: bias gates (G, or 4 for gru) */
    dnnl_memory_desc_t iter_md;      /**< a layer's states (1, D, N, H) ldnc */
    dnnl_memory_desc_t b_md;         /**< a layer's bias (1, D, Gb, H) ldgo */
    dnnl_memory_desc_t dst_md;       /**< a layer's output (T, N, D*H) tnc */
    rnn_kind kind[2];
    void *saved;
    float *ys, *hy, *cy;
    char *ws;
    const void *key[4];
    uint64_t key_version[4];
    int key_valid;
} dn_rnn_state;

/** Parses the attributes as cpu-blas's RNN does. Errors: the mxk_sdk_attr_* getters'. */
static mxk_status rnn_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    dn_rnn_param p;
    int32_t seq_len;
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "mode", "rnn_relu|rnn_tanh|lstm|gru", &p.mode, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "state_size", 1, INT32_MAX, &p.H, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_layers", 1, INT32_MAX, &p.L, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "bidirectional", &p.bidirectional, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "state_outputs", &p.state_outputs, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "p", &p.p, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "use_sequence_length", &seq_len, err));
    p.unsupported = seq_len || mxk_sdk_attr_is_set(attrs, "projection_size") ||
                    mxk_sdk_attr_is_set(attrs, "lstm_state_clip_min") ||
                    mxk_sdk_attr_is_set(attrs, "lstm_state_clip_max");
    return dn_param_dup(&p, sizeof p, out, err);
}

/** Accepts float32 arguments, data (T, N, C) non-empty; declines the rest (file comment). */
static int32_t rnn_supports(const void *param, const mxk_shape *in_shapes, const int32_t *in_types,
                            uint32_t num_in) {
    const dn_rnn_param *p = param;
    if (p->unsupported || (p->p > 0.0 && p->L > 1) || num_in != (p->mode == RNN_LSTM ? 4u : 3u) ||
        in_shapes[0].ndim != 3 || dn_shape_size(&in_shapes[0]) <= 0)
        return 0;
    for (uint32_t i = 0; i < num_in; i++)
        if (in_types[i] != MXK_FLOAT32)
            return 0;
    return 1;
}

/** Frees a state of rnn_create_state (NULL allowed). */
static void rnn_destroy_state(void *state) {
    dn_rnn_state *s = state;
    if (s == NULL)
        return;
    for (int i = 0; i < 2; i++) {
        rnn_kind *k = &s->kind[i];
        dnnl_primitive_destroy(k->train);
        dnnl_primitive_destroy(k->infer);
        dnnl_primitive_destroy(k->bwd);
        for (int c = 0; c < RNN_CONVS; c++)
            dnnl_primitive_destroy(k->reorder[c]);
        dnnl_primitive_desc_destroy(k->train_pd);
    }
    free(s->saved);
    free(s);
}

/** Number of layer kinds: 1, or 2 with layers above the first. */
static int rnn_num_kinds(const dn_rnn_state *s) {
    return s->L > 1 ? 2 : 1;
}

/** A plain float32 descriptor of `ndims` dims in format `tag`. */
static mxk_status rnn_md(dnnl_memory_desc_t *md, int ndims, const dnnl_dims_t dims,
                         dnnl_format_tag_t tag, mxk_error_sink *err) {
    DN_CHECK(dnnl_memory_desc_init_by_tag(md, ndims, dims, dnnl_f32, tag), "RNN memory descriptor",
             err);
    return MXK_OK;
}

/** The plain descriptors of the state and its kinds. Errors: dn_check's. */
static mxk_status rnn_init_mds(dn_rnn_state *s, mxk_error_sink *err) {
    dnnl_dims_t it = {1, s->D, s->N, s->H}, b = {1, s->D, s->Gb, s->H};
    dnnl_dims_t y = {s->T, s->N, s->D * s->H};
    MXK_SDK_CHECK(rnn_md(&s->iter_md, 4, it, dnnl_ldnc, err));
    MXK_SDK_CHECK(rnn_md(&s->b_md, 4, b, dnnl_ldgo, err));
    MXK_SDK_CHECK(rnn_md(&s->dst_md, 3, y, dnnl_tnc, err));
    for (int i = 0; i < rnn_num_kinds(s); i++) {
        rnn_kind *k = &s->kind[i];
        k->I = i == 0 ? s->C : s->D * s->H;
        dnnl_dims_t x = {s->T, s->N, k->I}, wl = {1, s->D, k->I, s->G, s->H};
        dnnl_dims_t wi = {1, s->D, s->H, s->G, s->H};
        MXK_SDK_CHECK(rnn_md(&k->src_md, 3, x, dnnl_tnc, err));
        MXK_SDK_CHECK(rnn_md(&k->wl_md, 5, wl, dnnl_ldgoi, err));
        MXK_SDK_CHECK(rnn_md(&k->wi_md, 5, wi, dnnl_ldgoi, err));
    }
    return MXK_OK;
}

/**
 * Creates the state from the data shape (T, N, C): sizes and plain descriptors
 * (primitives come at first use). Errors: MXK_ERR_OUT_OF_MEMORY, dn_check's.
 */
static mxk_status rnn_create_state(const void *param, int32_t dev_type, int32_t dev_id,
                                   const mxk_shape *in_shapes, const int32_t *in_types,
                                   uint32_t num_in, void **state, mxk_error_sink *err) {
    const dn_rnn_param *p = param;
    dn_rnn_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "oneDNN RNN: out of memory");
    s->mode = p->mode;
    s->state_outputs = p->state_outputs;
    s->T = in_shapes[0].dims[0];
    s->N = in_shapes[0].dims[1];
    s->C = in_shapes[0].dims[2];
    s->H = p->H;
    s->L = p->L;
    s->D = p->bidirectional ? 2 : 1;
    s->G = p->mode == RNN_LSTM ? 4 : p->mode == RNN_GRU ? 3 : 1;
    s->Gb = p->mode == RNN_GRU ? 4 : s->G;
    mxk_status rc = rnn_init_mds(s, err);
    if (rc != MXK_OK) {
        rnn_destroy_state(s);
        return rc;
    }
    *state = s;
    return MXK_OK;
}

/**
 * Initialises the operator descriptor of kind k for `prop` (forward training or
 * inference, or backward), weights (and their gradients) in format_tag_any.
 */
static dnnl_status_t rnn_desc_init(const dn_rnn_state *s, const rnn_kind *k, dnnl_prop_kind_t prop,
                                   dnnl_rnn_desc_t *d) {
    dnnl_memory_desc_t wl, wi;
    dnnl_dims_t dl = {1, s->D, k->I, s->G, s->H}, di = {1, s->D, s->H, s->G, s->H};
    dnnl_status_t st = dnnl_memory_desc_init_by_tag(&wl, 5, dl, dnnl_f32, dnnl_format_tag_any);
    if (st == dnnl_success)
        st = dnnl_memory_desc_init_by_tag(&wi, 5, di, dnnl_f32, dnnl_format_tag_any);
    if (st != dnnl_success)
        return st;
    dnnl_rnn_direction_t dir =
        s->D == 2 ? dnnl_bidirectional_concat : dnnl_unidirectional_left2right;
    dnnl_alg_kind_t act = s->mode == RNN_RELU ? dnnl_eltwise_relu : dnnl_eltwise_tanh;
    const dnnl_memory_desc_t *x = &k->src_md, *h = &s->iter_md, *b = &s->b_md, *y = &s->dst_md;
    if (prop != dnnl_backward) {
        if (s->mode == RNN_LSTM)
            return dnnl_lstm_forward_desc_init(d, prop, dir, x, h, h, &wl, &wi, b, y, h, h, 0);
        if (s->mode == RNN_GRU)
            return dnnl_lbr_gru_forward_desc_init(d, prop, dir, x, h, &wl, &wi, b, y, h, 0);
        return dnnl_vanilla_rnn_forward_desc_init(d, prop, act, dir, x, h, &wl, &wi, b, y, h, 0,
                                                  0.0f, 0.0f);
    }
    if (s->mode == RNN_LSTM)
        return dnnl_lstm_backward_desc_init(d, prop, dir, x, h, h, &wl, &wi, b, y, h, h, x, h, h,
                                            &wl, &wi, b, y, h, h, 0);
    if (s->mode == RNN_GRU)
        return dnnl_lbr_gru_backward_desc_init(d, prop, dir, x, h, &wl, &wi, b, y, h, x, h, &wl,
                                               &wi, b, y, h, 0);
    return dnnl_vanilla_rnn_backward_desc_init(d, prop, act, dir, x, h, &wl, &wi, b, y, h, x, h,
                                               &wl, &wi, b, y, h, 0, 0.0f, 0.0f);
}

/**
 * Makes the primitive of kind k for `prop` (with `hint`), writes the weight
 * layouts it chose into wl / wi (and, for backward, the gradients' into k->dwl /
 * k->dwi) and keeps its descriptor in *keep (else destroys it). Errors: dn_check's.
 */
static mxk_status rnn_make(const dn_rnn_state *s, rnn_kind *k, dnnl_prop_kind_t prop,
                           const_dnnl_primitive_desc_t hint, dnnl_primitive_t *prim,
                           dnnl_memory_desc_t *wl, dnnl_memory_desc_t *wi,
                           dnnl_primitive_desc_t *keep, mxk_error_sink *err) {
    dnnl_rnn_desc_t d;
    dnnl_primitive_desc_t pd;
    DN_CHECK(rnn_desc_init(s, k, prop, &d), "RNN descriptor", err);
    DN_CHECK(dn_pd_create(&pd, &d, hint), "RNN primitive descriptor", err);
    *wl = *dn_pd_md(pd, dnnl_query_weights_md, 0);
    *wi = *dn_pd_md(pd, dnnl_query_weights_md, 1);
    if (prop == dnnl_backward) {
        k->dwl = *dn_pd_md(pd, dnnl_query_diff_weights_md, 0);
        k->dwi = *dn_pd_md(pd, dnnl_query_diff_weights_md, 1);
    }
    mxk_status rc = dn_primitive(prim, pd, "RNN primitive", err);
    if (rc == MXK_OK && keep != NULL)
        *keep = pd;
    else
        dnnl_primitive_desc_destroy(pd);
    return rc;
}

/** Makes the inference primitives unless made. Errors: dn_check's. */
static mxk_status rnn_make_inference(dn_rnn_state *s, mxk_error_sink *err) {
    for (int i = 0; i < rnn_num_kinds(s); i++) {
        rnn_kind *k = &s->kind[i];
        if (k->infer == NULL)
            MXK_SDK_CHECK(rnn_make(s, k, dnnl_forward_inference, NULL, &k->infer, &k->infer_wl,
                                   &k->infer_wi, NULL, err));
    }
    return MXK_OK;
}

/** 64-byte multiple of `bytes`. */
static size_t rnn_round(size_t bytes) {
    return (bytes + 63) & ~(size_t)63;
}

/** Floats of one layer's output (T, N, D*H). */
static size_t rnn_y_floats(const dn_rnn_state *s) {
    return (size_t)(s->T * s->N * s->D * s->H);
}

/** Floats of all layers' states (L*D, N, H). */
static size_t rnn_states_floats(const dn_rnn_state *s) {
    return (size_t)(s->L * s->D * s->N * s->H);
}

/**
 * Makes the training forward and backward primitives and the saved-values block
 * unless made. Errors: dn_check's, MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status rnn_make_training(dn_rnn_state *s, mxk_error_sink *err) {
    if (s->saved != NULL)
        return MXK_OK;
    size_t ws = 0;
    for (int i = 0; i < rnn_num_kinds(s); i++) {
        rnn_kind *k = &s->kind[i];
        if (k->train == NULL)
            MXK_SDK_CHECK(rnn_make(s, k, dnnl_forward_training, NULL, &k->train, &k->train_wl,
                                   &k->train_wi, &k->train_pd, err));
        if (k->bwd == NULL)
            MXK_SDK_CHECK(rnn_make(s, k, dnnl_backward, k->train_pd, &k->bwd, &k->bwd_wl,
                                   &k->bwd_wi, NULL, err));
        k->ws_md = dn_pd_md(k->train_pd, dnnl_query_workspace_md, 0);
        k->ws_bytes = rnn_round(k->ws_md != NULL ? dnnl_memory_desc_get_size(k->ws_md) : 0);
        ws += k->ws_bytes * (size_t)(i == 0 ? 1 : s->L - 1);
    }
    size_t ys = rnn_round(sizeof(float) * rnn_y_floats(s) * (size_t)s->L);
    size_t st = rnn_round(sizeof(float) * rnn_states_floats(s));
    size_t bytes = ys + 2 * st + ws;
    if (posix_memalign(&s->saved, 64, bytes) != 0) {
        s->saved = NULL;
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY,
                             "oneDNN RNN: out of memory (workspace of %zu bytes)", bytes);
    }
    s->ys = s->saved;
    s->hy = (float *)((char *)s->saved + ys);
    s->cy = (float *)((char *)s->saved + ys + st);
    s->ws = (char *)s->saved + ys + 2 * st;
    return MXK_OK;
}

/** The workspace of layer l in the saved block. */
static void *rnn_ws_of(const dn_rnn_state *s, int64_t l) {
    return l == 0 ? s->ws : s->ws + s->kind[0].ws_bytes + (size_t)(l - 1) * s->kind[1].ws_bytes;
}

/** Records the arguments the saved values belong to (forgotten when a version is unknown). */
static void rnn_key_set(dn_rnn_state *s, const mxk_tensor *const *in, uint32_t n) {
    s->key_valid = 1;
    for (uint32_t i = 0; i < n; i++) {
        s->key[i] = in[i]->data;
        s->key_version[i] = dn_ws_version(in[i]);
        s->key_valid &= s->key_version[i] != 0;
    }
}

/** 1 when the saved values belong to these arguments (same pointers and write versions). */
static int rnn_key_matches(const dn_rnn_state *s, const mxk_tensor *const *in, uint32_t n) {
    if (!s->key_valid)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        if (s->key[i] != in[i]->data || s->key_version[i] != dn_ws_version(in[i]))
            return 0;
    return 1;
}

/* --- parameters: the flat cuDNN vector against oneDNN's layouts ---------------- */

/** Input size of layer l. */
static int64_t rnn_in_size(const dn_rnn_state *s, int64_t l) {
    return l == 0 ? s->C : s->D * s->H;
}

/** Length of the flat parameter vector (upstream GetRnnParamSize, cpu-blas op_rnn.c). */
static int64_t rnn_param_count(const dn_rnn_state *s) {
    int64_t GH = s->G * s->H;
    return s->D * GH * (s->C + s->H + 2) + (s->L - 1) * s->D * GH * (s->D * s->H + s->H + 2);
}

/** Offset of Wx of layer l, direction d (Wh follows at G*H*I_l), as op_rnn.c's rnn_w_off. */
static int64_t rnn_w_off(const dn_rnn_state *s, int64_t l, int64_t d) {
    int64_t GH = s->G * s->H, b0 = GH * (s->C + s->H), b1 = GH * (s->D * s->H + s->H);
    return l == 0 ? d * b0 : s->D * b0 + ((l - 1) * s->D + d) * b1;
}

/** Offset of bx of layer l, direction d (bh follows at G*H): after all weights. */
static int64_t rnn_b_off(const dn_rnn_state *s, int64_t l, int64_t d) {
    int64_t wsz = rnn_param_count(s) - s->L * s->D * 2 * s->G * s->H;
    return wsz + (l * s->D + d) * 2 * s->G * s->H;
}

/** oneDNN's gate index of cuDNN's gate c: gru's r, z, n are oneDNN's 1, 0, 2. */
static int64_t rnn_gate(const dn_rnn_state *s, int64_t c) {
    return s->mode == RNN_GRU && c < 2 ? 1 - c : c;
}

/**
 * Copies layer l's weights from the flat parameters w into plain ldgoi wl, wi
 * (oneDNN's gate order) and its bias into b (1, D, Gb, H) (file comment).
 */
static void rnn_pack(const dn_rnn_state *s, int64_t l, const float *w, float *wl, float *wi,
                     float *b) {
    int64_t I = rnn_in_size(s, l), H = s->H, GH = s->G * H;
    for (int64_t d = 0; d < s->D; d++) {
        const float *wx = w + rnn_w_off(s, l, d), *wh = wx + GH * I;
        const float *bx = w + rnn_b_off(s, l, d), *bh = bx + GH;
        float *bd = b + d * s->Gb * H;
        for (int64_t c = 0; c < s->G; c++) {
            int64_t g = rnn_gate(s, c), dg = d * s->G + g;
            memcpy(wl + dg * H * I, wx + c * H * I, sizeof(float) * (size_t)(H * I));
            memcpy(wi + dg * H * H, wh + c * H * H, sizeof(float) * (size_t)(H * H));
            int lbr = s->mode == RNN_GRU && c == 2;
            for (int64_t j = 0; j < H; j++) {
                bd[g * H + j] = bx[c * H + j] + (lbr ? 0.0f : bh[c * H + j]);
                if (lbr)
                    bd[3 * H + j] = bh[c * H + j];
            }
        }
    }
}

/** The inverse of rnn_pack for gradients: plain dwl, dwi and db into layer l's part of dw. */
static void rnn_unpack(const dn_rnn_state *s, int64_t l, const float *dwl, const float *dwi,
                       const float *db, float *dw) {
    int64_t I = rnn_in_size(s, l), H = s->H, GH = s->G * H;
    for (int64_t d = 0; d < s->D; d++) {
        float *wx = dw + rnn_w_off(s, l, d), *wh = wx + GH * I;
        float *bx = dw + rnn_b_off(s, l, d), *bh = bx + GH;
        const float *bd = db + d * s->Gb * H;
        for (int64_t c = 0; c < s->G; c++) {
            int64_t g = rnn_gate(s, c), dg = d * s->G + g;
            memcpy(wx + c * H * I, dwl + dg * H * I, sizeof(float) * (size_t)(H * I));
            memcpy(wh + c * H * H, dwi + dg * H * H, sizeof(float) * (size_t)(H * H));
            int lbr = s->mode == RNN_GRU && c == 2;
            for (int64_t j = 0; j < H; j++) {
                bx[c * H + j] = bd[g * H + j];
                bh[c * H + j] = bd[(lbr ? 3 : g) * H + j];
            }
        }
    }
}

/**
 * The `from` data (layout from_md) in layout to_md, by conversion `conv` of
 * kind k: `from` itself when the layouts are equal, else reordered into `buf`
 * (the reorder primitive made at first use and kept in k). Errors: dn_check's,
 * dn_execute's.
 */
static mxk_status rnn_as(const mxk_op_ctx *ctx, rnn_kind *k, enum rnn_conv conv,
                         const dnnl_memory_desc_t *from_md, void *from,
                         const dnnl_memory_desc_t *to_md, void *buf, void **out,
                         mxk_error_sink *err) {
    if (!k->reorder_made[conv] && !dnnl_memory_desc_equal(from_md, to_md)) {
        dnnl_primitive_desc_t pd;
        DN_CHECK(dn_reorder_pd_create(&pd, from_md, to_md), "RNN weight reorder descriptor", err);
        mxk_status rc = dn_primitive(&k->reorder[conv], pd, "RNN weight reorder primitive", err);
        dnnl_primitive_desc_destroy(pd);
        MXK_SDK_CHECK(rc);
    }
    k->reorder_made[conv] = 1;
    *out = from;
    if (k->reorder[conv] == NULL)
        return MXK_OK;
    dn_arg a[] = {{DNNL_ARG_FROM, from_md, from}, {DNNL_ARG_TO, to_md, buf}};
    *out = buf;
    return dn_execute(ctx, k->reorder[conv], 2, a, err);
}

/* --- per-call buffers ------------------------------------------------------------ */

/** The buffers of one call, carved from scratch slot 0. */
typedef struct rnn_bufs {
    float *wl, *wi, *b; /**< plain packed weights and bias of a layer */
    void *rwl, *rwi;    /**< the weights in a primitive's layout */
    void *dwl, *dwi;    /**< backward: weight gradients in the primitive's layout */
    float *db;          /**< backward: bias gradient (1, D, Gb, H) */
    float *y[2];        /**< layer outputs (inference) or input gradients (backward) */
    float *hy, *cy;     /**< inference: final states; backward: unrequested dhx, dcx */
    float *zero;        /**< backward: zero final-state gradients (1, D, N, H) */
} rnn_bufs;

/** The largest size of the weight layouts a kind's primitives use (plain included). */
static size_t rnn_w_bytes(const rnn_kind *k) {
    const dnnl_memory_desc_t *mds[] = {&k->wl_md,    &k->wi_md,    &k->train_wl, &k->train_wi,
                                       &k->infer_wl, &k->infer_wi, &k->bwd_wl,   &k->bwd_wi,
                                       &k->dwl,      &k->dwi};
    size_t most = 0;
    for (size_t i = 0; i < sizeof mds / sizeof mds[0]; i++) {
        size_t b = mds[i]->ndims > 0 ? dnnl_memory_desc_get_size(mds[i]) : 0;
        most = b > most ? b : most;
    }
    return rnn_round(most);
}

/** Carves the call's buffers from scratch slot 0. MXK_ERR_OUT_OF_MEMORY from dn_scratch. */
static mxk_status rnn_bufs_get(const dn_rnn_state *s, rnn_bufs *bf, mxk_error_sink *err) {
    size_t w = 0;
    for (int i = 0; i < rnn_num_kinds(s); i++) {
        size_t b = rnn_w_bytes(&s->kind[i]);
        w = b > w ? b : w;
    }
    int64_t wide = s->C > s->D * s->H ? s->C : s->D * s->H;
    size_t b = rnn_round(sizeof(float) * (size_t)(s->D * s->Gb * s->H));
    size_t y = rnn_round(sizeof(float) * (size_t)(s->T * s->N * wide));
    size_t st = rnn_round(sizeof(float) * rnn_states_floats(s));
    size_t sizes[] = {w, w, b, w, w, w, w, b, y, y, st, st, st};
    void **slots[] = {(void **)&bf->wl,   (void **)&bf->wi,   (void **)&bf->b,  &bf->rwl,
                      &bf->rwi,           &bf->dwl,           &bf->dwi,         (void **)&bf->db,
                      (void **)&bf->y[0], (void **)&bf->y[1], (void **)&bf->hy, (void **)&bf->cy,
                      (void **)&bf->zero};
    size_t total = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        total += sizes[i];
    char *p = dn_scratch(0, total, err);
    if (p == NULL)
        return MXK_ERR_OUT_OF_MEMORY;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        *slots[i] = p;
        p += sizes[i];
    }
    return MXK_OK;
}

/* --- forward and backward -------------------------------------------------------- */

/**
 * Runs every layer forward: training (the training primitives; outputs, final
 * states and workspaces into the saved block, then the key set) or inference
 * (outputs through bf->y, the last layer's into `top` when not NULL; final states
 * into bf->hy, bf->cy). Errors: dn_execute's, dn_check's.
 */
static mxk_status rnn_run_forward(const mxk_op_ctx *ctx, dn_rnn_state *s, int train,
                                  const mxk_tensor *const *in, float *top, const rnn_bufs *bf,
                                  mxk_error_sink *err) {
    size_t NH = (size_t)(s->D * s->N * s->H), TY = rnn_y_floats(s);
    const float *w = in[1]->data, *hx = in[2]->data;
    const float *cx = s->mode == RNN_LSTM ? in[3]->data : NULL;
    float *hy = train ? s->hy : bf->hy, *cy = train ? s->cy : bf->cy;
    const float *src = in[0]->data;
    if (train)
        s->key_valid = 0; /* set again only when every layer ran */
    for (int64_t l = 0; l < s->L; l++) {
        rnn_kind *k = &s->kind[l > 0];
        float *y = train ? s->ys + (size_t)l * TY : l == s->L - 1 && top ? top : bf->y[l & 1];
        const dnnl_memory_desc_t *wl_md = train ? &k->train_wl : &k->infer_wl;
        const dnnl_memory_desc_t *wi_md = train ? &k->train_wi : &k->infer_wi;
        enum rnn_conv cv = train ? RNN_TRAIN_WL : RNN_INFER_WL;
        void *wl, *wi;
        rnn_pack(s, l, w, bf->wl, bf->wi, bf->b);
        MXK_SDK_CHECK(rnn_as(ctx, k, cv, &k->wl_md, bf->wl, wl_md, bf->rwl, &wl, err));
        MXK_SDK_CHECK(rnn_as(ctx, k, cv + 1, &k->wi_md, bf->wi, wi_md, bf->rwi, &wi, err));
        dn_arg a[12] = {{DNNL_ARG_SRC_LAYER, &k->src_md, (void *)src},
                        {DNNL_ARG_SRC_ITER, &s->iter_md, (void *)(hx + l * NH)},
                        {DNNL_ARG_WEIGHTS_LAYER, wl_md, wl},
                        {DNNL_ARG_WEIGHTS_ITER, wi_md, wi},
                        {DNNL_ARG_BIAS, &s->b_md, bf->b},
                        {DNNL_ARG_DST_LAYER, &s->dst_md, y},
                        {DNNL_ARG_DST_ITER, &s->iter_md, hy + l * NH}};
        int n = 7;
        if (cx != NULL) {
            a[n++] = (dn_arg){DNNL_ARG_SRC_ITER_C, &s->iter_md, (void *)(cx + l * NH)};
            a[n++] = (dn_arg){DNNL_ARG_DST_ITER_C, &s->iter_md, cy + l * NH};
        }
        if (train && k->ws_md != NULL)
            a[n++] = (dn_arg){DNNL_ARG_WORKSPACE, k->ws_md, rnn_ws_of(s, l)};
        MXK_SDK_CHECK(dn_execute(ctx, train ? k->train : k->infer, n, a, err));
        src = y;
    }
    if (train)
        rnn_key_set(s, in, s->mode == RNN_LSTM ? 4u : 3u);
    return MXK_OK;
}

/** Checks that tensors ts[0..n) are present with sizes[i] elements (names[i] in errors). */
static mxk_status rnn_check_all(const mxk_tensor *const *ts, const int64_t *sizes,
                                const char *const *names, uint32_t n, mxk_error_sink *err) {
    for (uint32_t i = 0; i < n; i++)
        MXK_SDK_CHECK(dn_check_tensor(ts[i], sizes[i], "RNN", names[i], err));
    return MXK_OK;
}

/** Argument names and sizes: data, parameters, state, state_cell. */
static void rnn_arg_sizes(const dn_rnn_state *s, int64_t *sizes) {
    sizes[0] = s->T * s->N * s->C;
    sizes[1] = rnn_param_count(s);
    sizes[2] = sizes[3] = (int64_t)rnn_states_floats(s);
}

/** Names of the arguments (as their gradients' with "gradient of ..."). */
static const char *const rnn_arg_names[] = {"argument 'data'", "argument 'parameters'",
                                            "argument 'state'", "argument 'state_cell'"};

/**
 * Forward: inference or training (file comment), then the visible outputs by
 * their requests and zeros into the reserve. Errors: dn_check_tensor's,
 * dn_check's, dn_execute's, MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status rnn_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    dn_rnn_state *s = state;
    uint32_t ni = s->mode == RNN_LSTM ? 4u : 3u, nv = s->state_outputs ? ni - 1 : 1u;
    int64_t sizes[4], osz[3] = {(int64_t)rnn_y_floats(s), (int64_t)rnn_states_floats(s),
                                (int64_t)rnn_states_floats(s)};
    static const char *const onames[] = {"output 'output'", "output 'state_output'",
                                         "output 'statecell_output'"};
    rnn_arg_sizes(s, sizes);
    MXK_SDK_CHECK(rnn_check_all(args->in_data, sizes, rnn_arg_names, ni, err));
    for (uint32_t i = 0; i < nv; i++)
        if (args->req[i] != MXK_REQ_NULL)
            MXK_SDK_CHECK(dn_check_tensor(args->out_data[i], osz[i], "RNN", onames[i], err));
    if (ctx->is_train)
        MXK_SDK_CHECK(rnn_make_training(s, err));
    else
        MXK_SDK_CHECK(rnn_make_inference(s, err));
    rnn_bufs bf;
    MXK_SDK_CHECK(rnn_bufs_get(s, &bf, err));
    float *top = !ctx->is_train && args->req[0] != MXK_REQ_NULL ? args->out_data[0]->data : NULL;
    MXK_SDK_CHECK(rnn_run_forward(ctx, s, ctx->is_train, args->in_data, top, &bf, err));
    const float *y = ctx->is_train ? s->ys + (size_t)(s->L - 1) * rnn_y_floats(s) : NULL;
    const float *src[3] = {y, ctx->is_train ? s->hy : bf.hy, ctx->is_train ? s->cy : bf.cy};
    for (uint32_t i = 0; i < nv; i++)
        if (args->req[i] != MXK_REQ_NULL && src[i] != NULL)
            mxk_sdk_copy_f32(args->out_data[i]->data, src[i], (size_t)osz[i], args->req[i]);
    const mxk_tensor *reserve = args->out_data[nv];
    if (args->req[nv] != MXK_REQ_NULL && reserve != NULL && reserve->data != NULL)
        memset(reserve->data, 0, sizeof(float) * (size_t)dn_shape_size(&reserve->shape));
    return MXK_OK;
}

/**
 * Backward through time of layer l: diff_dst `dy`, diff_src into `dx`; the
 * parameter gradients into bf->dwl / dwi / db (zeroed first: oneDNN accumulates
 * into them), then unpacked into dw (NULL: not requested).
 */
static mxk_status rnn_layer_backward(const mxk_op_ctx *ctx, dn_rnn_state *s, int64_t l,
                                     const mxk_backward_args *args, const float *dy, float *dx,
                                     float *dw, const rnn_bufs *bf, mxk_error_sink *err) {
    rnn_kind *k = &s->kind[l > 0];
    size_t NH = (size_t)(s->D * s->N * s->H), TY = rnn_y_floats(s);
    const mxk_tensor *const *in = args->in_data;
    const float *hx = in[2]->data, *src = l == 0 ? in[0]->data : s->ys + (size_t)(l - 1) * TY;
    int lstm = s->mode == RNN_LSTM;
    const float *dhy =
        s->state_outputs ? (const float *)args->out_grad[1]->data + l * NH : bf->zero;
    float *dhx = args->req[2] != MXK_REQ_NULL ? (float *)args->in_grad[2]->data : bf->hy;
    void *wl, *wi;
    rnn_pack(s, l, in[1]->data, bf->wl, bf->wi, bf->b);
    MXK_SDK_CHECK(rnn_as(ctx, k, RNN_BWD_WL, &k->wl_md, bf->wl, &k->bwd_wl, bf->rwl, &wl, err));
    MXK_SDK_CHECK(rnn_as(ctx, k, RNN_BWD_WI, &k->wi_md, bf->wi, &k->bwd_wi, bf->rwi, &wi, err));
    memset(bf->dwl, 0, dnnl_memory_desc_get_size(&k->dwl));
    memset(bf->dwi, 0, dnnl_memory_desc_get_size(&k->dwi));
    memset(bf->db, 0, dnnl_memory_desc_get_size(&s->b_md));
    dn_arg a[20] = {{DNNL_ARG_SRC_LAYER, &k->src_md, (void *)src},
                    {DNNL_ARG_SRC_ITER, &s->iter_md, (void *)(hx + l * NH)},
                    {DNNL_ARG_WEIGHTS_LAYER, &k->bwd_wl, wl},
                    {DNNL_ARG_WEIGHTS_ITER, &k->bwd_wi, wi},
                    {DNNL_ARG_BIAS, &s->b_md, bf->b},
                    {DNNL_ARG_DST_LAYER, &s->dst_md, s->ys + (size_t)l * TY},
                    {DNNL_ARG_DST_ITER, &s->iter_md, s->hy + l * NH},
                    {DNNL_ARG_WORKSPACE, k->ws_md, rnn_ws_of(s, l)},
                    {DNNL_ARG_DIFF_SRC_LAYER, &k->src_md, dx},
                    {DNNL_ARG_DIFF_SRC_ITER, &s->iter_md, dhx + l * NH},
                    {DNNL_ARG_DIFF_WEIGHTS_LAYER, &k->dwl, bf->dwl},
                    {DNNL_ARG_DIFF_WEIGHTS_ITER, &k->dwi, bf->dwi},
                    {DNNL_ARG_DIFF_BIAS, &s->b_md, bf->db},
                    {DNNL_ARG_DIFF_DST_LAYER, &s->dst_md, (void *)dy},
                    {DNNL_ARG_DIFF_DST_ITER, &s->iter_md, (void *)dhy}};
    int n = 15;
    if (lstm) {
        const float *cx = in[3]->data;
        const float *dcy =
            s->state_outputs ? (const float *)args->out_grad[2]->data + l * NH : bf->zero;
        float *dcx = args->req[3] != MXK_REQ_NULL ? (float *)args->in_grad[3]->data : bf->cy;
        a[n++] = (dn_arg){DNNL_ARG_SRC_ITER_C, &s->iter_md, (void *)(cx + l * NH)};
        a[n++] = (dn_arg){DNNL_ARG_DST_ITER_C, &s->iter_md, s->cy + l * NH};
        a[n++] = (dn_arg){DNNL_ARG_DIFF_SRC_ITER_C, &s->iter_md, dcx + l * NH};
        a[n++] = (dn_arg){DNNL_ARG_DIFF_DST_ITER_C, &s->iter_md, (void *)dcy};
    }
    MXK_SDK_CHECK(dn_execute(ctx, k->bwd, n, a, err));
    if (dw == NULL)
        return MXK_OK;
    void *pl, *pi;
    MXK_SDK_CHECK(rnn_as(ctx, k, RNN_DIFF_WL, &k->dwl, bf->dwl, &k->wl_md, bf->wl, &pl, err));
    MXK_SDK_CHECK(rnn_as(ctx, k, RNN_DIFF_WI, &k->dwi, bf->dwi, &k->wi_md, bf->wi, &pi, err));
    rnn_unpack(s, l, pl, pi, bf->db, dw);
    return MXK_OK;
}

/**
 * Backward: the saved values of the training forward of these arguments
 * (recomputed when the key does not match), then the layers from the top down.
 * Errors: dn_check_tensor's, dn_check's, dn_execute's, MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status rnn_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    dn_rnn_state *s = state;
    uint32_t ni = s->mode == RNN_LSTM ? 4u : 3u, nv = s->state_outputs ? ni - 1 : 1u;
    int needed = 0;
    for (uint32_t i = 0; i < ni; i++)
        needed |= args->req[i] != MXK_REQ_NULL;
    if (!needed)
        return MXK_OK;
    int64_t sizes[4], osz[3] = {(int64_t)rnn_y_floats(s), (int64_t)rnn_states_floats(s),
                                (int64_t)rnn_states_floats(s)};
    static const char *const gnames[] = {"gradient of output 'output'",
                                         "gradient of output 'state_output'",
                                         "gradient of output 'statecell_output'"};
    static const char *const inames[] = {"gradient of 'data'", "gradient of 'parameters'",
                                         "gradient of 'state'", "gradient of 'state_cell'"};
    rnn_arg_sizes(s, sizes);
    MXK_SDK_CHECK(rnn_check_all(args->in_data, sizes, rnn_arg_names, ni, err));
    MXK_SDK_CHECK(rnn_check_all(args->out_grad, osz, gnames, nv, err));
    for (uint32_t i = 0; i < ni; i++)
        if (args->req[i] != MXK_REQ_NULL)
            MXK_SDK_CHECK(dn_check_tensor(args->in_grad[i], sizes[i], "RNN", inames[i], err));
    MXK_SDK_CHECK(rnn_make_training(s, err));
    rnn_bufs bf;
    MXK_SDK_CHECK(rnn_bufs_get(s, &bf, err));
    if (!rnn_key_matches(s, args->in_data, ni))
        MXK_SDK_CHECK(rnn_run_forward(ctx, s, 1, args->in_data, NULL, &bf, err));
    memset(bf.zero, 0, sizeof(float) * (size_t)(s->D * s->N * s->H));
    float *dw = args->req[1] != MXK_REQ_NULL ? args->in_grad[1]->data : NULL;
    const float *dy = args->out_grad[0]->data;
    for (int64_t l = s->L - 1; l >= 0; l--) {
        float *dx =
            l == 0 && args->req[0] != MXK_REQ_NULL ? args->in_grad[0]->data : bf.y[(l + 1) & 1];
        MXK_SDK_CHECK(rnn_layer_backward(ctx, s, l, args, dy, dx, dw, &bf, err));
        dy = dx;
    }
    return MXK_OK;
}

/**
 * Registers the RNN kernel. Tolerance against cpu-blas: both accumulate float32
 * GEMMs through time in different orders.
 */
mxk_status dn_register_rnn(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "RNN";
    k.parse_param = rnn_parse;
    k.free_param = dn_param_free;
    k.supports = rnn_supports;
    k.create_state = rnn_create_state;
    k.destroy_state = rnn_destroy_state;
    k.forward = rnn_forward;
    k.backward = rnn_backward;
    k.crosscheck_rtol = 1e-3;
    k.crosscheck_atol = 1e-4;
    return dn_register_kernel(reg, &k, err);
}
