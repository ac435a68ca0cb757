/*
 * cpu-blas plugin: the fused recurrent operator RNN (alias _npx_rnn).
 *
 * Semantics: MXNet src/operator/rnn.cc, rnn-inl.h (attributes, shapes, the
 * parameter count K = GetRnnParamSize) and src/operator/rnn_impl.h (the CPU
 * kernels: gate order, the GRU formula, the flat parameter layout).
 *
 * Arguments data (T, N, C) (layout TNC), parameters (K,), state (L*D, N, R), for
 * mode lstm state_cell (L*D, N, H) and, with use_sequence_length, sequence_length
 * (N) (float32); D = 2 when bidirectional, else 1; G = 1 (rnn_relu, rnn_tanh), 4
 * (lstm), 3 (gru); R = projection_size with a projection (lstm only), else H.
 * Outputs output (T, N, D*R) and, with state_outputs, state_output (L*D, N, R) and
 * for lstm statecell_output (L*D, N, H); then the hidden output reserve (not
 * visible, as BatchNorm's mean and var).
 *
 * Parameters (cuDNN's layout, as upstream): all weights, layer by layer and in
 * each layer direction by direction, Wx (G*H, C_l), Wh (G*H, R) and with a
 * projection Whr (R, H), C_0 = C and C_l = D*R above; then all biases in the same
 * order, bx (G*H) then bh (G*H). Gates in the rows of each block: lstm i, f, g, o;
 * gru r, z, n. Per step, with x the layer input and h the previous state of that
 * direction:
 *   rnn:  h' = act(Wx x + bx + Wh h + bh), act relu or tanh
 *   lstm: i, f, o = sigmoid(.), g = tanh(.), c' = f c + i g, h' = o tanh(c')
 *   gru:  r, z = sigmoid(.), n = tanh(Wx_n x + bx_n + r (Wh_n h + bh_n)),
 *         h' = (1 - z) n + z h
 * The backward direction runs from t = T-1 to 0 and writes output[..., R:2R];
 * state index l*D + d. The state outputs are the states after the last step of
 * each direction.
 *
 * projection_size P (LSTMP, rnn_impl.h LstmForwardInferenceSingleLayer): the state
 * and the output are r = Whr h' (P); the cell stays H wide. MXNet 1.9.1 CPU
 * computes it in inference only ("No training support for LSTM with projection
 * on CPU currently"); this kernel also trains it.
 *
 * lstm_state_clip_min / max (cuDNN's CUDNN_RNN_CLIP_MINMAX, which upstream uses on
 * GPU; its CPU kernels refuse or ignore them): c' is clipped to [min, max] after
 * each step, before h' = o tanh(c'); a NaN c' stays NaN, or becomes min with
 * lstm_state_clip_nan. Backward: the gradient of a clipped cell (at or past a
 * bound, or NaN) with respect to its inputs is zero (the derivative of the clip).
 *
 * use_sequence_length (upstream's cuDNN path; MXNet 1.9.1 CPU refuses or
 * ignores it): row n is a sequence of length len_n in [1, T] (an integer, else
 * MXK_ERR_INVALID_ARGUMENT). Steps t >= len_n leave that row's state unchanged:
 * the forward direction runs t = 0..len_n-1, the backward direction starts from
 * the initial state at t = len_n-1; output rows at t >= len_n are zero and their
 * gradients ignored; the state outputs are the states at each row's last valid
 * step (t = len_n-1 forward, t = 0 backward). sequence_length gets a zero gradient.
 *
 * Dropout p > 0 between layers (training only; with one layer, or outside
 * training, p has no effect, as upstream): the input of layer l > 0 is the output
 * of layer l-1 times a mask as the Dropout operator's (op_dropout.c): (u < 1-p) /
 * (1-p), u uniform [0, 1) from the operator's random stream (the same seed, the
 * same masks); p = 1 gives NaN, as Dropout. The masks and the masked inputs are in
 * the reserve; backward multiplies by the same masks.
 *
 * Kernel: the input projection of all T steps of a layer direction is one GEMM
 * (T*N rows), the recurrence one GEMM per step over the batch (and one for the
 * projection). Forward saves every layer's outputs, gates and cells (and the
 * dropout masks) in a hidden output `reserve` (upstream keeps them in its operator
 * state; see rnn_reserve_count). Backward reads it and back-propagates through
 * time: per step one GEMM for the state gradient (one more with a projection);
 * the weight gradients and the input gradient of a layer direction are one GEMM
 * each over all steps. Gradients are accumulated in temp space and written to
 * the gradient arrays by their requests (write, add, null).
 *
 * When the executor does not request the reserve (no gradients bound), forward
 * keeps it in temp space. The kernel keeps no state: calls are thread-safe.
 *
 * Differences from MXNet 1.9.1: grad_req add is honoured for every argument
 * (upstream refuses it for data and the states: "AddTo is not supported for data");
 * projection trains; clipping and sequence lengths are computed on CPU (above);
 * sequence_length is float32 only (upstream also takes integer types); the dropout
 * masks come from mxk's random stream (upstream CPU: std::mt19937, masks differ).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cb_tensor.h"

/** Modes, in the order of the enum attribute. */
enum { RNN_RELU, RNN_TANH, RNN_LSTM, RNN_GRU };

/** Parsed attributes of RNN. */
typedef struct rnn_param {
    int32_t mode;          /**< RNN_RELU ... RNN_GRU */
    int64_t state_size;    /**< H >= 1 */
    int64_t num_layers;    /**< L >= 1 */
    int32_t bidirectional; /**< 1: D = 2 */
    int32_t state_outputs; /**< 1: outputs state_output (and statecell_output) */
    double p;              /**< dropout between layers, in [0, 1] */
    int64_t projection;    /**< projection_size P (lstm, 1..H), 0: none */
    int32_t clip;          /**< 1: the cell state is clipped to [clip_min, clip_max] */
    int32_t clip_nan;      /**< 1: a NaN cell state becomes clip_min */
    double clip_min, clip_max;
    int32_t seq_len; /**< 1: the extra argument sequence_length */
} rnn_param;

static const char *const rnn_args[] = {"data", "parameters", "state", "state_cell", NULL};
static const char *const rnn_outs[] = {"output", "state_output", "statecell_output", NULL};
static const char *const rnn_aliases[] = {"_npx_rnn", NULL};

/** Attribute schema (MXNet 1.9.1 RNNParam). */
static const mxk_attr_def rnn_attrs[] = {
    MXK_SDK_ATTR("state_size", MXK_ATTR_INT, 1, NULL, NULL, "size of the state for each layer"),
    MXK_SDK_ATTR("num_layers", MXK_ATTR_INT, 1, NULL, NULL, "number of stacked layers"),
    MXK_SDK_ATTR("bidirectional", MXK_ATTR_BOOL, 0, "False", NULL,
                 "whether to use bidirectional recurrent layers"),
    MXK_SDK_ATTR("mode", MXK_ATTR_ENUM, 1, NULL, "rnn_relu|rnn_tanh|lstm|gru",
                 "the type of RNN to compute"),
    MXK_SDK_ATTR("p", MXK_ATTR_FLOAT, 0, "0", NULL,
                 "drop rate of the dropout on the outputs of each RNN layer, except the last"),
    MXK_SDK_ATTR("state_outputs", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Whether to have the states as symbol outputs."),
    MXK_SDK_ATTR("projection_size", MXK_ATTR_INT, 0, NULL, NULL, "size of project size"),
    MXK_SDK_ATTR("lstm_state_clip_min", MXK_ATTR_FLOAT, 0, NULL, NULL,
                 "Minimum clip value of LSTM states."),
    MXK_SDK_ATTR("lstm_state_clip_max", MXK_ATTR_FLOAT, 0, NULL, NULL,
                 "Maximum clip value of LSTM states."),
    MXK_SDK_ATTR("lstm_state_clip_nan", MXK_ATTR_BOOL, 0, "False", NULL,
                 "Whether to stop NaN from propagating in state by clipping it to min/max."),
    MXK_SDK_ATTR("use_sequence_length", MXK_ATTR_BOOL, 0, "False", NULL,
                 "If set to true, this layer takes in an extra input parameter sequence_length."),
};

/**
 * Parses projection_size and the clip range with upstream's checks (rnn-inl.h,
 * cuDNN path), MXK_ERR_INVALID_ARGUMENT: "Projection is only supported for LSTM.",
 * "State size must be larger than projection size." (P > H), "State clipping is
 * only supported for LSTM.", "lstm_state_clip_min and lstm_state_clip_max must be
 * specified together.", "lstm_state_clip_max must be greater or equal to
 * lstm_state_clip_min"; projection_size in 1..2^31-1; clip bounds not NaN.
 */
static mxk_status rnn_parse_lstm_extras(const mxk_attrs *attrs, rnn_param *p, mxk_error_sink *err) {
    p->projection = 0;
    if (mxk_sdk_attr_is_set(attrs, "projection_size")) {
        if (p->mode != RNN_LSTM)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "Projection is only supported for LSTM.");
        MXK_SDK_CHECK(
            mxk_sdk_attr_int_range(attrs, "projection_size", 1, INT32_MAX, &p->projection, err));
        if (p->projection > p->state_size)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "State size must be larger than projection size.");
    }
    int lo = mxk_sdk_attr_is_set(attrs, "lstm_state_clip_min");
    int hi = mxk_sdk_attr_is_set(attrs, "lstm_state_clip_max");
    p->clip = lo || hi;
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "lstm_state_clip_nan", &p->clip_nan, err));
    if (!p->clip)
        return MXK_OK;
    if (p->mode != RNN_LSTM)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "State clipping is only supported for LSTM.");
    if (!lo || !hi)
        return mxk_sdk_error(
            err, MXK_ERR_INVALID_ARGUMENT,
            "lstm_state_clip_min and lstm_state_clip_max must be specified together.");
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "lstm_state_clip_min", &p->clip_min, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "lstm_state_clip_max", &p->clip_max, err));
    if (!(p->clip_max >= p->clip_min))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "lstm_state_clip_max must be greater or equal to lstm_state_clip_min");
    return MXK_OK;
}

/**
 * Parses the attributes: state_size and num_layers in 1..2^31-1, p in [0, 1]
 * (MXK_ERR_INVALID_ARGUMENT otherwise), then rnn_parse_lstm_extras.
 */
static mxk_status rnn_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    rnn_param p;
    memset(&p, 0, sizeof p);
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "mode", "rnn_relu|rnn_tanh|lstm|gru", &p.mode, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "state_size", 1, INT32_MAX, &p.state_size, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_layers", 1, INT32_MAX, &p.num_layers, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "bidirectional", &p.bidirectional, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "state_outputs", &p.state_outputs, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "p", &p.p, err));
    if (!(p.p >= 0.0 && p.p <= 1.0))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "attribute 'p': expected a value in [0, 1], got %g", p.p);
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "use_sequence_length", &p.seq_len, err));
    MXK_SDK_CHECK(rnn_parse_lstm_extras(attrs, &p, err));
    return cbt_param_new(&p, sizeof p, out, err);
}

/** Gates per step: 1, 4 (lstm), 3 (gru). */
static int64_t rnn_gates(const rnn_param *p) {
    return p->mode == RNN_LSTM ? 4 : p->mode == RNN_GRU ? 3 : 1;
}

/** Directions D. */
static int64_t rnn_dirs(const rnn_param *p) {
    return p->bidirectional ? 2 : 1;
}

/** Width R of the recurrent state h and of each direction's output: P with projection, else H. */
static int64_t rnn_width(const rnn_param *p) {
    return p->projection ? p->projection : p->state_size;
}

/** 1 when forward draws dropout masks between layers (then the reserve holds them). */
static int rnn_has_dropout(const rnn_param *p) {
    return p->p > 0.0 && p->num_layers > 1;
}

/** Arguments without sequence_length: 4 for lstm (state_cell), else 3. */
static uint32_t rnn_num_states_args(const rnn_param *p) {
    return p->mode == RNN_LSTM ? 4u : 3u;
}

/** Arguments: rnn_num_states_args, plus sequence_length with use_sequence_length. */
static uint32_t rnn_num_args(const rnn_param *p) {
    return rnn_num_states_args(p) + (p->seq_len ? 1u : 0u);
}

/** Name of argument i (upstream order: data, parameters, state[, state_cell][, sequence_length]).
 */
static const char *rnn_arg_name(const rnn_param *p, uint32_t i) {
    return i < rnn_num_states_args(p) ? rnn_args[i] : "sequence_length";
}

/** The argument names, NULL-terminated, into names[CB_MAX_IO + 1]. */
static void rnn_arg_names(const rnn_param *p, const char **names) {
    uint32_t n = rnn_num_args(p);
    for (uint32_t i = 0; i < n; i++)
        names[i] = rnn_arg_name(p, i);
    names[n] = NULL;
}

/** Visible outputs: 1, or with state_outputs 2 (3 for lstm). */
static uint32_t rnn_num_visible(const void *param) {
    const rnn_param *p = param;
    return p->state_outputs ? rnn_num_states_args(p) - 1 : 1u;
}

/** All outputs: the visible ones and the hidden reserve. */
static uint32_t rnn_num_outs(const rnn_param *p) {
    return rnn_num_visible(p) + 1;
}

/** Name of output i: output, state_output, statecell_output (visible), reserve (the last). */
static const char *rnn_out_name(const rnn_param *p, uint32_t i) {
    return i < rnn_num_visible(p) ? rnn_outs[i] : "reserve";
}

/** The output names, NULL-terminated, into names[CB_MAX_IO + 1]. */
static void rnn_out_names(const rnn_param *p, const char **names) {
    uint32_t n = rnn_num_outs(p);
    for (uint32_t i = 0; i < n; i++)
        names[i] = rnn_out_name(p, i);
    names[n] = NULL;
}

/**
 * Floats of the hidden output `reserve`, what forward saves for backward (upstream
 * keeps it in its operator state): the outputs of every layer L x (T, N, D*R), the
 * activated gates L*D x (T, N, G*H), for lstm and gru L*D x (T, N, H) and, with
 * dropout between layers (p > 0, L > 1), the dropped inputs of the layers above
 * the first and their masks, 2 x (L-1) x (T, N, D*R).
 */
static int64_t rnn_reserve_count(const rnn_param *p, int64_t T, int64_t N) {
    int64_t LD = p->num_layers * rnn_dirs(p), H = p->state_size, DR = rnn_dirs(p) * rnn_width(p);
    int64_t aux = p->mode == RNN_LSTM || p->mode == RNN_GRU ? LD * T * N * H : 0;
    int64_t drop = rnn_has_dropout(p) ? 2 * (p->num_layers - 1) * T * N * DR : 0;
    return p->num_layers * T * N * DR + LD * T * N * rnn_gates(p) * H + aux + drop;
}

/**
 * Floats of one layer direction's weights with input size `in` (upstream
 * rnn_impl.h): Wx (G*H, in), Wh (G*H, R) and, with projection, Whr (P, H).
 */
static int64_t rnn_block(const rnn_param *p, int64_t in) {
    int64_t GH = rnn_gates(p) * p->state_size;
    return GH * (in + rnn_width(p)) + p->projection * p->state_size;
}

/** Length of the flat parameter vector for input size C (upstream GetRnnParamSize). */
static int64_t rnn_param_count(const rnn_param *p, int64_t C) {
    int64_t D = rnn_dirs(p), GH = rnn_gates(p) * p->state_size, DR = D * rnn_width(p);
    return D * rnn_block(p, C) + (p->num_layers - 1) * D * rnn_block(p, DR) +
           p->num_layers * D * 2 * GH;
}

/** data, parameters, state[, state_cell][, sequence_length]. */
static mxk_status rnn_list_arguments(const void *param, mxk_name_list *out, mxk_error_sink *err) {
    for (uint32_t i = 0; i < rnn_num_args(param); i++)
        MXK_SDK_CHECK(mxk_sdk_host()->name_list_add(out, rnn_arg_name(param, i), err));
    return MXK_OK;
}

/** output[, state_output[, statecell_output]], reserve (hidden). */
static mxk_status rnn_list_outputs(const void *param, mxk_name_list *out, mxk_error_sink *err) {
    for (uint32_t i = 0; i < rnn_num_outs(param); i++)
        MXK_SDK_CHECK(mxk_sdk_host()->name_list_add(out, rnn_out_name(param, i), err));
    return MXK_OK;
}

/** A 3-d shape. */
static mxk_shape rnn_shape3(int64_t a, int64_t b, int64_t c) {
    int64_t d[3] = {a, b, c};
    return mxk_sdk_shape_from(d, 3);
}

/**
 * Shape inference (upstream RNNShape): from data (T, N, C) the parameters
 * (GetRnnParamSize), state (L*D, N, R), state_cell (L*D, N, H), sequence_length
 * (N) and the outputs (output (T, N, D*R), the states as the state arguments).
 * Incomplete when data is unknown; MXK_ERR_SHAPE for data not 3-d or
 * inconsistent given shapes.
 */
static mxk_status rnn_infer_shape(const void *param, mxk_shape *in, uint32_t num_in, mxk_shape *out,
                                  uint32_t num_out, mxk_shape *aux, uint32_t num_aux,
                                  mxk_error_sink *err) {
    const rnn_param *p = param;
    if (num_in != rnn_num_args(p) || num_out != rnn_num_outs(p))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "RNN expects %u arguments and %u outputs, got %u and %u",
                             (unsigned)rnn_num_args(p), (unsigned)rnn_num_outs(p), (unsigned)num_in,
                             (unsigned)num_out);
    const mxk_shape *d = &in[0];
    if (d->ndim == 0)
        return MXK_OK;
    if (d->ndim != 3) {
        char s[MXK_SDK_SHAPE_STR_MAX];
        return mxk_sdk_error(err, MXK_ERR_SHAPE,
                             "argument 'data': expected a rank-3 tensor (sequence length, batch "
                             "size, input size), got %s",
                             mxk_sdk_shape_format(d, s, sizeof s));
    }
    int64_t T = d->dims[0], N = d->dims[1], C = d->dims[2];
    int64_t H = p->state_size, LD = p->num_layers * rnn_dirs(p), R = rnn_width(p);
    mxk_shape ps = mxk_sdk_shape1(rnn_param_count(p, C));
    mxk_shape ss[3] = {rnn_shape3(LD, N, R), rnn_shape3(LD, N, H), mxk_sdk_shape1(N)};
    mxk_shape ys = rnn_shape3(T, N, rnn_dirs(p) * R);
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&in[1], &ps, "argument", "parameters", err));
    for (uint32_t i = 2; i < num_in; i++) {
        const mxk_shape *want = &ss[i < rnn_num_states_args(p) ? i - 2 : 2];
        MXK_SDK_CHECK(
            mxk_sdk_shape_assign_named(&in[i], want, "argument", rnn_arg_name(p, i), err));
    }
    mxk_shape rs = mxk_sdk_shape1(rnn_reserve_count(p, T, N));
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[0], &ys, "output", rnn_outs[0], err));
    for (uint32_t i = 1; i + 1 < num_out; i++)
        MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[i], &ss[i - 1], "output", rnn_outs[i], err));
    MXK_SDK_CHECK(mxk_sdk_shape_assign_named(&out[num_out - 1], &rs, "output", "reserve", err));
    return MXK_OK;
}

/**
 * All float32, sequence_length included (upstream also takes integer lengths;
 * the cpu-blas kernel reads float32 lengths only).
 */
static mxk_status rnn_infer_type(const void *param, int32_t *in, uint32_t num_in, int32_t *out,
                                 uint32_t num_out, int32_t *aux, uint32_t num_aux,
                                 mxk_error_sink *err) {
    const char *names[CB_MAX_IO + 1], *args[CB_MAX_IO + 1];
    rnn_out_names(param, names);
    rnn_arg_names(param, args);
    return mxk_sdk_infer_type_uniform(MXK_FLOAT32, in, num_in, args, out, num_out, names, aux,
                                      num_aux, err);
}

/** Backward reads every output gradient, every argument and the reserve. */
static void rnn_backward_dependency(const void *param, uint32_t num_visible, uint32_t num_in,
                                    uint32_t num_out, uint8_t *need_out_grad, uint8_t *need_in_data,
                                    uint8_t *need_out_data) {
    memset(need_out_grad, 1, num_visible);
    memset(need_in_data, 1, num_in);
    need_out_data[num_out - 1] = 1;
}

/** Sizes and options of one call (sizes as CBLAS ints). */
typedef struct rnn_dims {
    int T, N, C, H, L, D, G;
    int R;       /**< width of h and of each direction's output: P with projection, else H */
    int proj;    /**< 1 with projection (Whr (R, H) after Wh) */
    int GH, DR;  /**< G*H, D*R */
    int64_t np;  /**< parameter count */
    int64_t wsz; /**< floats of all weights (the biases follow) */
    int mode;
    int clip, clip_nan;     /**< cell state clipping (lstm) */
    float clip_lo, clip_hi; /**< its range */
    const float *len;       /**< (N) valid lengths (use_sequence_length), else NULL */
} rnn_dims;

/** Computes the dims from the data shape; MXK_ERR_UNSUPPORTED beyond CBLAS's int. */
static mxk_status rnn_dims_of(const rnn_param *p, const mxk_shape *d, rnn_dims *m,
                              mxk_error_sink *err) {
    int64_t G = rnn_gates(p), D = rnn_dirs(p), H = p->state_size, R = rnn_width(p);
    int tmp; /* every product a GEMM or an offset sees stays within int */
    uint64_t wide = (uint64_t)(d->dims[2] > D * R ? d->dims[2] : D * R);
    MXK_SDK_CHECK(
        cb_blas_dim((uint64_t)d->dims[0] * (uint64_t)d->dims[1] * wide, "RNN data", &tmp, err));
    MXK_SDK_CHECK(cb_blas_dim((uint64_t)d->dims[0] * (uint64_t)d->dims[1] * (uint64_t)(G * H),
                              "RNN gates", &tmp, err));
    MXK_SDK_CHECK(cb_blas_dim(wide * (uint64_t)(G * H), "RNN weights", &tmp, err));
    memset(m, 0, sizeof *m);
    m->T = (int)d->dims[0];
    m->N = (int)d->dims[1];
    m->C = (int)d->dims[2];
    m->H = (int)H;
    m->L = (int)p->num_layers;
    m->D = (int)D;
    m->G = (int)G;
    m->R = (int)R;
    m->proj = p->projection > 0;
    m->GH = (int)(G * H);
    m->DR = (int)(D * R);
    m->np = rnn_param_count(p, d->dims[2]);
    m->wsz = m->np - (int64_t)m->L * D * 2 * m->GH;
    m->mode = p->mode;
    m->clip = p->clip;
    m->clip_nan = p->clip_nan;
    m->clip_lo = (float)p->clip_min;
    m->clip_hi = (float)p->clip_max;
    return MXK_OK;
}

/**
 * Reads sequence_length into m->len after checking every length is an integer in
 * [1, T]: MXK_ERR_INVALID_ARGUMENT "argument 'sequence_length': element 1 is 7,
 * expected an integer in [1, 5]" (upstream's cuDNN path leaves it to cuDNN).
 */
static mxk_status rnn_lengths(const rnn_param *p, const mxk_tensor *const *in, rnn_dims *m,
                              mxk_error_sink *err) {
    if (!p->seq_len)
        return MXK_OK;
    const float *len = cb_f32(in[rnn_num_states_args(p)]);
    for (int n = 0; n < m->N; n++)
        if (!(len[n] >= 1.0f && len[n] <= (float)m->T && len[n] == floorf(len[n])))
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "argument 'sequence_length': element %d is %g, expected an "
                                 "integer in [1, %d]",
                                 n, (double)len[n], m->T);
    m->len = len;
    return MXK_OK;
}

/** 1 when time t is within batch row n's sequence (always without sequence_length). */
static int rnn_valid(const rnn_dims *m, int t, int n) {
    return m->len == NULL || (float)t < m->len[n];
}

/** Offset of Wx of layer l, direction d in the parameters (Wh follows at G*H*I_l, Whr after). */
static int64_t rnn_w_off(const rnn_dims *m, int l, int d) {
    int64_t ph = m->proj ? (int64_t)m->R * m->H : 0;
    int64_t b0 = (int64_t)m->GH * (m->C + m->R) + ph, b1 = (int64_t)m->GH * (m->DR + m->R) + ph;
    return l == 0 ? d * b0 : m->D * b0 + ((int64_t)(l - 1) * m->D + d) * b1;
}

/** Offset of bx of layer l, direction d (bh follows at G*H). */
static int64_t rnn_b_off(const rnn_dims *m, int l, int d) {
    return m->wsz + ((int64_t)l * m->D + d) * 2 * m->GH;
}

/** Input size of layer l. */
static int rnn_in_size(const rnn_dims *m, int l) {
    return l == 0 ? m->C : m->DR;
}

/** The forward's saved values (the reserve output): layer outputs, activated gates, cells / hn. */
typedef struct rnn_store {
    float *ys;    /**< L x (T, N, D*R): outputs of each layer */
    float *gates; /**< L*D x (T, N, G*H): activated gates (rnn: the new state) */
    float *aux;   /**< L*D x (T, N, H): lstm cell c, gru Wh_n h + bh_n; unused otherwise */
    float *drop;  /**< (L-1) x (T, N, D*R): inputs of layers 1.. after dropout, or NULL */
    float *mask;  /**< (L-1) x (T, N, D*R): their dropout masks (0 or 1/(1-p)), or NULL */
} rnn_store;

/** Lays out a store in the reserve. */
static void rnn_store_at(const rnn_param *p, const rnn_dims *m, float *reserve, rnn_store *s) {
    size_t TN = (size_t)m->T * (size_t)m->N, LD = (size_t)m->L * (size_t)m->D;
    size_t layer = TN * (size_t)m->DR;
    s->ys = reserve;
    s->gates = s->ys + (size_t)m->L * layer;
    s->aux = s->gates + LD * TN * (size_t)m->GH;
    s->drop = s->mask = NULL;
    if (rnn_has_dropout(p)) {
        s->drop = s->aux + (m->mode == RNN_LSTM || m->mode == RNN_GRU ? LD * TN * (size_t)m->H : 0);
        s->mask = s->drop + (size_t)(m->L - 1) * layer;
    }
}

/** Logistic function. */
static float rnn_sigmoid(float x) {
    return 1.0f / (1.0f + expf(-x));
}

/**
 * tanh through one expf (glibc's tanhf, through expm1f, took a third of a char-LSTM
 * step's time); absolute error ~1e-7, exact limits -1 and 1.
 */
static float rnn_tanh(float x) {
    return 1.0f - 2.0f / (1.0f + expf(2.0f * x));
}

/**
 * The cell state clipped to [lo, hi] (lstm_state_clip_min/max, as cuDNN's
 * CUDNN_RNN_CLIP_MINMAX); NaN stays NaN, or becomes lo with lstm_state_clip_nan.
 */
static float rnn_clip(const rnn_dims *m, float c) {
    if (isnan(c))
        return m->clip_nan ? m->clip_lo : c;
    return c < m->clip_lo ? m->clip_lo : c > m->clip_hi ? m->clip_hi : c;
}

/** One layer direction's pointers. */
typedef struct rnn_ld {
    int l, d, In;         /**< layer, direction, input size */
    const float *x;       /**< (T*N, In) layer input */
    const float *wx, *wh; /**< (G*H, In), (G*H, R) */
    const float *whr;     /**< (R, H) projection, or NULL */
    const float *bx, *bh; /**< (G*H) each */
    const float *hx, *cx; /**< (N, R), (N, H) initial states (cx: lstm only) */
    float *y;             /**< (T, N, D*R) layer output, this direction's columns at d*R */
    float *gates, *aux;   /**< this direction's store */
} rnn_ld;

/** Fills the pointers of layer l, direction d. */
static void rnn_ld_at(const rnn_dims *m, const rnn_store *s, const float *x, const float *w,
                      const float *hx, const float *cx, int l, int d, rnn_ld *o) {
    size_t TN = (size_t)m->T * (size_t)m->N, k = (size_t)l * (size_t)m->D + (size_t)d;
    size_t layer = TN * (size_t)m->DR;
    o->l = l;
    o->d = d;
    o->In = rnn_in_size(m, l);
    o->x = l == 0 ? x : (s->drop ? s->drop : s->ys) + (size_t)(l - 1) * layer;
    o->wx = w ? w + rnn_w_off(m, l, d) : NULL;
    o->wh = w ? o->wx + (size_t)m->GH * (size_t)o->In : NULL;
    o->whr = w && m->proj ? o->wh + (size_t)m->GH * (size_t)m->R : NULL;
    o->bx = w ? w + rnn_b_off(m, l, d) : NULL;
    o->bh = w ? o->bx + m->GH : NULL;
    o->hx = hx ? hx + k * (size_t)m->N * (size_t)m->R : NULL;
    o->cx = cx ? cx + k * (size_t)m->N * (size_t)m->H : NULL;
    o->y = s->ys + (size_t)l * layer;
    o->gates = s->gates + k * TN * (size_t)m->GH;
    o->aux = s->aux + k * TN * (size_t)m->H;
}

/** Time index of processing step s of direction d. */
static int rnn_time(const rnn_dims *m, int d, int s) {
    return d ? m->T - 1 - s : s;
}

/** The previous state of the step at time t: hx, or this direction's output one step earlier. */
static const float *rnn_prev_h(const rnn_dims *m, const rnn_ld *o, int t, int *ld) {
    int first = o->d ? t == m->T - 1 : t == 0;
    *ld = first ? m->R : m->DR;
    if (first)
        return o->hx;
    int tp = o->d ? t + 1 : t - 1;
    return o->y + (size_t)tp * (size_t)m->N * (size_t)m->DR + (size_t)o->d * (size_t)m->R;
}

/** The previous cell (lstm) of the step at time t: cx or the stored cell one step earlier. */
static const float *rnn_prev_c(const rnn_dims *m, const rnn_ld *o, int t) {
    int first = o->d ? t == m->T - 1 : t == 0;
    if (first)
        return o->cx;
    int tp = o->d ? t + 1 : t - 1;
    return o->aux + (size_t)tp * (size_t)m->N * (size_t)m->H;
}

/**
 * Element-wise part of one forward step at time t (gates hold x-projection +
 * biases, gh the recurrent product): the new state into h (ld ldh; the layer
 * output, or scratch before the projection). Rows past their sequence are skipped.
 */
static void rnn_step_forward(const rnn_dims *m, const rnn_ld *o, const float *gh, int t, float *h0,
                             int ldh0) {
    int ldh, H = m->H, GH = m->GH;
    const float *hp = rnn_prev_h(m, o, t, &ldh);
    const float *cp = m->mode == RNN_LSTM ? rnn_prev_c(m, o, t) : NULL;
    size_t tn = (size_t)t * (size_t)m->N;
    for (int n = 0; n < m->N; n++) {
        if (!rnn_valid(m, t, n))
            continue;
        float *g = o->gates + (tn + (size_t)n) * (size_t)GH;
        const float *q = gh + (size_t)n * (size_t)GH;
        float *h = h0 + (size_t)n * (size_t)ldh0;
        float *a = o->aux + (tn + (size_t)n) * (size_t)H;
        for (int j = 0; j < H; j++) {
            if (m->mode == RNN_RELU || m->mode == RNN_TANH) {
                float v = g[j] + q[j];
                g[j] = h[j] = m->mode == RNN_TANH ? rnn_tanh(v) : (v > 0.0f ? v : 0.0f);
            } else if (m->mode == RNN_LSTM) {
                float i = rnn_sigmoid(g[j] + q[j]), f = rnn_sigmoid(g[H + j] + q[H + j]);
                float gg = rnn_tanh(g[2 * H + j] + q[2 * H + j]);
                float og = rnn_sigmoid(g[3 * H + j] + q[3 * H + j]);
                float c = f * cp[(size_t)n * (size_t)H + (size_t)j] + i * gg;
                if (m->clip)
                    c = rnn_clip(m, c);
                g[j] = i, g[H + j] = f, g[2 * H + j] = gg, g[3 * H + j] = og;
                a[j] = c;
                h[j] = og * rnn_tanh(c);
            } else {
                float r = rnn_sigmoid(g[j] + q[j]), z = rnn_sigmoid(g[H + j] + q[H + j]);
                float hn = q[2 * H + j] + o->bh[2 * H + j];
                float nn = rnn_tanh(g[2 * H + j] + r * hn);
                g[j] = r, g[H + j] = z, g[2 * H + j] = nn;
                a[j] = hn;
                h[j] = (1.0f - z) * nn + z * hp[(size_t)n * (size_t)ldh + (size_t)j];
            }
        }
    }
}

/**
 * Rows past their sequence at time t carry the previous state (and cell) unchanged,
 * so the next step of that row, and the final state, see the last valid one.
 */
static void rnn_carry(const rnn_dims *m, const rnn_ld *o, int t) {
    int ldh;
    const float *hp = rnn_prev_h(m, o, t, &ldh);
    const float *cp = m->mode == RNN_LSTM ? rnn_prev_c(m, o, t) : NULL;
    size_t tn = (size_t)t * (size_t)m->N;
    for (int n = 0; n < m->N; n++) {
        if (rnn_valid(m, t, n))
            continue;
        memcpy(o->y + (tn + (size_t)n) * (size_t)m->DR + (size_t)o->d * (size_t)m->R,
               hp + (size_t)n * (size_t)ldh, (size_t)m->R * sizeof(float));
        if (cp)
            memcpy(o->aux + (tn + (size_t)n) * (size_t)m->H, cp + (size_t)n * (size_t)m->H,
                   (size_t)m->H * sizeof(float));
    }
}

/**
 * Forward of one layer direction: one GEMM for the input projection, one per step
 * (and with projection one more: r = h Whr^T); ws: (N, G*H) then (N, H).
 */
static void rnn_layer_forward(const mxk_op_ctx *ctx, const rnn_dims *m, const rnn_ld *o,
                              float *ws) {
    int TN = m->T * m->N, GH = m->GH, H = m->H, R = m->R;
    float *gh = ws, *hs = ws + (size_t)m->N * (size_t)GH;
    for (int r = 0; r < TN; r++) {
        float *g = o->gates + (size_t)r * (size_t)GH;
        for (int j = 0; j < GH; j++) /* gru: bh_n enters through r * (Wh_n h + bh_n) */
            g[j] = o->bx[j] + (m->mode == RNN_GRU && j >= 2 * H ? 0.0f : o->bh[j]);
    }
    cb_sgemm(ctx, CblasNoTrans, CblasTrans, TN, GH, o->In, 1.0f, o->x, o->In, o->wx, o->In, 1.0f,
             o->gates, GH);
    if (m->proj) /* the projection reads every row; those past their sequence are skipped */
        memset(hs, 0, (size_t)m->N * (size_t)H * sizeof(float));
    for (int s = 0; s < m->T; s++) {
        int t = rnn_time(m, o->d, s), ldh;
        const float *hp = rnn_prev_h(m, o, t, &ldh);
        float *y = o->y + (size_t)t * (size_t)m->N * (size_t)m->DR + (size_t)o->d * (size_t)R;
        cb_sgemm(ctx, CblasNoTrans, CblasTrans, m->N, GH, R, 1.0f, hp, ldh, o->wh, R, 0.0f, gh, GH);
        rnn_step_forward(m, o, gh, t, m->proj ? hs : y, m->proj ? H : m->DR);
        if (m->proj)
            cb_sgemm(ctx, CblasNoTrans, CblasTrans, m->N, R, H, 1.0f, hs, H, o->whr, H, 0.0f, y,
                     m->DR);
        if (m->len)
            rnn_carry(m, o, t);
    }
}

/**
 * Dropout on layer l's output (l < L-1) into the next layer's input (op_dropout.c's
 * semantics): in training mask = (u < 1-p) / (1-p), u uniform [0, 1) from the
 * random stream, in blocks of the whole layer output; otherwise mask = 1.
 */
static void rnn_dropout(const rnn_param *p, const rnn_dims *m, const rnn_store *s, int l,
                        mxk_random *rng) {
    size_t n = (size_t)m->T * (size_t)m->N * (size_t)m->DR;
    const float *y = s->ys + (size_t)l * n;
    float *mask = s->mask + (size_t)l * n, *x = s->drop + (size_t)l * n;
    if (rng == NULL) {
        mxk_sdk_fill_f32(mask, 1.0f, n, MXK_REQ_WRITE);
        memcpy(x, y, n * sizeof(float));
        return;
    }
    const float keep = (float)(1.0 - p->p);
    const float scale = keep > 0.0f ? 1.0f / keep : INFINITY; /* p = 1: NaN, as Dropout */
    mxk_sdk_host()->random_uniform(rng, mask, n, 0.0f, 1.0f);
    for (size_t i = 0; i < n; i++) {
        mask[i] = (mask[i] < keep ? 1.0f : 0.0f) * scale;
        x[i] = y[i] * mask[i];
    }
}

/** Runs all layers into the store; ws: rnn_ws_floats(m, 0) scratch; rng: NULL outside training. */
static void rnn_forward_all(const mxk_op_ctx *ctx, const rnn_param *p, const rnn_dims *m,
                            const rnn_store *s, const float *x, const float *w, const float *hx,
                            const float *cx, float *ws, mxk_random *rng) {
    for (int l = 0; l < m->L; l++) {
        for (int d = 0; d < m->D; d++) {
            rnn_ld o;
            rnn_ld_at(m, s, x, w, hx, cx, l, d, &o);
            rnn_layer_forward(ctx, m, &o, ws);
        }
        if (s->drop && l + 1 < m->L)
            rnn_dropout(p, m, s, l, rng);
    }
}

/** Temp-space floats of forward (one step's products) and backward (gradient buffers). */
static uint64_t rnn_ws_floats(const rnn_dims *m, int backward) {
    uint64_t TN = (uint64_t)m->T * (uint64_t)m->N;
    uint64_t wide = (uint64_t)(m->C > m->DR ? m->C : m->DR);
    uint64_t NH = (uint64_t)m->N * (uint64_t)m->H, LD = (uint64_t)m->L * (uint64_t)m->D;
    uint64_t NR = (uint64_t)m->N * (uint64_t)m->R;
    if (!backward)
        return (uint64_t)m->N * (uint64_t)m->GH + NH;
    uint64_t proj = m->proj ? TN * (uint64_t)m->R + TN * (uint64_t)m->H + NH : 0;
    return (uint64_t)m->np + 2 * TN * wide + 2 * TN * (uint64_t)m->GH + NR + NH + LD * NR +
           LD * NH + proj;
}

/**
 * Resource callback of both phases: one temp space (none while data is unknown)
 * and, for forward with dropout between layers, a random stream.
 */
static mxk_status rnn_resources(const void *param, const mxk_shape *in_shapes, uint32_t num_in,
                                mxk_resource_request *reqs, uint32_t *num, int backward,
                                mxk_error_sink *err) {
    uint32_t cap = *num, n = 0;
    *num = 0;
    if (!backward && rnn_has_dropout(param))
        mxk_sdk_resource_add(reqs, cap, &n, MXK_RESOURCE_RANDOM, 0);
    if (num_in >= 1 && mxk_sdk_shape_is_known(&in_shapes[0]) && in_shapes[0].ndim == 3) {
        rnn_dims m;
        MXK_SDK_CHECK(rnn_dims_of(param, &in_shapes[0], &m, err));
        mxk_sdk_resource_add(reqs, cap, &n, MXK_RESOURCE_TEMP_SPACE,
                             rnn_ws_floats(&m, backward) * sizeof(float));
    }
    *num = n;
    return MXK_OK;
}

/** forward_resources: the per-step scratch (and the store without a reserve), the random stream. */
static mxk_status rnn_fwd_resources(const void *param, const mxk_shape *in_shapes, uint32_t num_in,
                                    mxk_resource_request *reqs, uint32_t *num,
                                    mxk_error_sink *err) {
    return rnn_resources(param, in_shapes, num_in, reqs, num, 0, err);
}

/** backward_resources: the gradient buffers. */
static mxk_status rnn_bwd_resources(const void *param, const mxk_shape *in_shapes, uint32_t num_in,
                                    mxk_resource_request *reqs, uint32_t *num,
                                    mxk_error_sink *err) {
    return rnn_resources(param, in_shapes, num_in, reqs, num, 1, err);
}

/** Gets the temp space of `floats` floats. */
static mxk_status rnn_temp(const mxk_op_ctx *ctx, uint64_t floats, float **ws,
                           mxk_error_sink *err) {
    void *p = NULL;
    MXK_SDK_CHECK(mxk_sdk_host()->temp_space(ctx, floats * sizeof(float), &p, err));
    *ws = p;
    return MXK_OK;
}

/** Copies the final states of every layer direction: h from the outputs, c from the cells. */
static void rnn_write_states(const rnn_dims *m, const rnn_store *s, const mxk_forward_args *args) {
    size_t NR = (size_t)m->N * (size_t)m->R, NH = (size_t)m->N * (size_t)m->H;
    for (int l = 0; l < m->L; l++)
        for (int d = 0; d < m->D; d++) {
            rnn_ld o;
            rnn_ld_at(m, s, NULL, NULL, NULL, NULL, l, d, &o);
            int t = d ? 0 : m->T - 1;
            size_t k = (size_t)l * (size_t)m->D + (size_t)d, tn = (size_t)t * (size_t)m->N;
            if (args->req[1] != MXK_REQ_NULL)
                for (int n = 0; n < m->N; n++)
                    mxk_sdk_copy_f32(cb_f32(args->out_data[1]) + k * NR + (size_t)n * m->R,
                                     o.y + (tn + (size_t)n) * m->DR + (size_t)d * m->R,
                                     (size_t)m->R, args->req[1]);
            if (m->mode == RNN_LSTM && args->req[2] != MXK_REQ_NULL)
                mxk_sdk_copy_f32(cb_f32(args->out_data[2]) + k * NH, o.aux + tn * m->H, NH,
                                 args->req[2]);
        }
}

/** The visible output by its request: the last layer's, zero past each sequence's length. */
static void rnn_write_output(const rnn_dims *m, const float *y, float *out, mxk_op_req req) {
    size_t TN = (size_t)m->T * (size_t)m->N;
    if (m->len == NULL) {
        mxk_sdk_copy_f32(out, y, TN * (size_t)m->DR, req);
        return;
    }
    for (size_t r = 0; r < TN; r++) {
        size_t off = r * (size_t)m->DR;
        if (rnn_valid(m, (int)(r / (size_t)m->N), (int)(r % (size_t)m->N)))
            mxk_sdk_copy_f32(out + off, y + off, (size_t)m->DR, req);
        else
            mxk_sdk_fill_f32(out + off, 0.0f, (size_t)m->DR, req);
    }
}

/**
 * Forward: all layers into the reserve (into temp space when the executor does not
 * request the reserve), then the visible outputs by their requests. Errors: the
 * checks of cb_check_forward and rnn_lengths; MXK_ERR_STATE "RNN: no random
 * stream was granted" for dropout in training without one.
 */
static mxk_status rnn_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                              const mxk_forward_args *args, mxk_error_sink *err) {
    const rnn_param *p = param;
    const char *names[CB_MAX_IO + 1], *anames[CB_MAX_IO + 1];
    rnn_out_names(p, names);
    rnn_arg_names(p, anames);
    MXK_SDK_CHECK(cb_check_forward(args, rnn_num_args(p), rnn_num_outs(p), anames, names,
                                   rnn_infer_shape, param, err));
    mxk_random *rng = NULL;
    if (ctx->is_train && rnn_has_dropout(p) && (rng = cbt_random(ctx)) == NULL)
        return mxk_sdk_error(err, MXK_ERR_STATE, "RNN: no random stream was granted");
    rnn_dims m;
    MXK_SDK_CHECK(rnn_dims_of(p, &args->in_data[0]->shape, &m, err));
    MXK_SDK_CHECK(rnn_lengths(p, args->in_data, &m, err));
    uint32_t last = rnn_num_outs(p) - 1;
    float *reserve = args->req[last] != MXK_REQ_NULL ? cb_f32(args->out_data[last]) : NULL;
    uint64_t step_floats = rnn_ws_floats(&m, 0);
    float *ws;
    MXK_SDK_CHECK(rnn_temp(
        ctx, step_floats + (reserve ? 0 : (uint64_t)rnn_reserve_count(p, m.T, m.N)), &ws, err));
    rnn_store s;
    rnn_store_at(p, &m, reserve ? reserve : ws + step_floats, &s);
    const float *cx = m.mode == RNN_LSTM ? cb_f32(args->in_data[3]) : NULL;
    rnn_forward_all(ctx, p, &m, &s, cb_f32(args->in_data[0]), cb_f32(args->in_data[1]),
                    cb_f32(args->in_data[2]), cx, ws, rng);
    size_t TN = (size_t)m.T * (size_t)m.N;
    if (args->req[0] != MXK_REQ_NULL)
        rnn_write_output(&m, s.ys + (size_t)(m.L - 1) * TN * m.DR, cb_f32(args->out_data[0]),
                         args->req[0]);
    if (p->state_outputs)
        rnn_write_states(&m, &s, args);
    return MXK_OK;
}

/** Gradient buffers of backward (temp space). */
typedef struct rnn_grads {
    float *dw;        /**< (P): parameter gradient */
    float *dy, *dx;   /**< (T*N, max(C, D*R)): a layer's output gradient, its input gradient */
    float *dgx, *dgh; /**< (T*N, G*H): pre-activation gradients of the x and h products */
    float *dh, *dc;   /**< (N, R), (N, H): state gradients carried between steps */
    float *dhx, *dcx; /**< (L*D, N, R), (L*D, N, H): initial state gradients */
    float *dr, *hs;   /**< projection: (T*N, R) gradients of r, (T*N, H) the h before it */
    float *dhh;       /**< projection: (N, H) one step's gradient of h */
} rnn_grads;

/** Lays out the gradient buffers at ws. */
static void rnn_grads_at(const rnn_dims *m, float *ws, rnn_grads *g) {
    size_t TN = (size_t)m->T * (size_t)m->N, wide = (size_t)(m->C > m->DR ? m->C : m->DR);
    size_t NH = (size_t)m->N * (size_t)m->H, NR = (size_t)m->N * (size_t)m->R;
    size_t LD = (size_t)m->L * (size_t)m->D;
    g->dw = ws;
    g->dy = g->dw + m->np;
    g->dx = g->dy + TN * wide;
    g->dgx = g->dx + TN * wide;
    g->dgh = g->dgx + TN * (size_t)m->GH;
    g->dh = g->dgh + TN * (size_t)m->GH;
    g->dc = g->dh + NR;
    g->dhx = g->dc + NH;
    g->dcx = g->dhx + LD * NR;
    g->dr = g->dcx + LD * NH;
    g->hs = m->proj ? g->dr + TN * (size_t)m->R : NULL;
    g->dhh = m->proj ? g->hs + TN * (size_t)m->H : NULL;
    if (!m->proj)
        g->dr = NULL;
}

/**
 * Element-wise part of one backward step at time t: from the gradient of this
 * step's h (dy's direction columns + dh, or with projection g->dhh) and dc, the
 * pre-activation gradients into dgx / dgh; dh receives the direct part of the
 * previous state's gradient (gru: z dh; otherwise 0), dc the previous cell's
 * (lstm; zero where the clip was active). Rows past their sequence get zero
 * pre-activation gradients and pass dh, dc through.
 */
static void rnn_step_backward(const rnn_dims *m, const rnn_ld *o, const rnn_grads *g, int t) {
    int ldh, H = m->H, GH = m->GH;
    const float *hp = rnn_prev_h(m, o, t, &ldh);
    const float *cp = m->mode == RNN_LSTM ? rnn_prev_c(m, o, t) : NULL;
    size_t tn = (size_t)t * (size_t)m->N;
    for (int n = 0; n < m->N; n++) {
        size_t row = tn + (size_t)n;
        float *dgx = g->dgx + row * (size_t)GH, *dgh = g->dgh + row * (size_t)GH;
        if (!rnn_valid(m, t, n)) {
            memset(dgx, 0, (size_t)GH * sizeof(float));
            memset(dgh, 0, (size_t)GH * sizeof(float));
            continue;
        }
        const float *v = o->gates + row * (size_t)GH, *a = o->aux + row * (size_t)H;
        const float *dtop = m->proj ? g->dhh + (size_t)n * (size_t)H
                                    : g->dy + row * (size_t)m->DR + (size_t)o->d * (size_t)H;
        float *dh = m->proj ? NULL : g->dh + (size_t)n * (size_t)H;
        float *dc = g->dc + (size_t)n * (size_t)H;
        for (int j = 0; j < H; j++) {
            float dht = dtop[j] + (dh ? dh[j] : 0.0f);
            if (m->mode == RNN_RELU || m->mode == RNN_TANH) {
                float h = v[j];
                dgx[j] = dgh[j] = m->mode == RNN_TANH ? dht * (1.0f - h * h) : (h > 0.0f ? dht : 0);
                dh[j] = 0.0f;
            } else if (m->mode == RNN_LSTM) {
                float i = v[j], f = v[H + j], gg = v[2 * H + j], og = v[3 * H + j];
                float tc = rnn_tanh(a[j]);
                float dcv = dc[j] + dht * og * (1.0f - tc * tc);
                if (m->clip && !(a[j] > m->clip_lo && a[j] < m->clip_hi))
                    dcv = 0.0f; /* clipped (or NaN): the cell does not depend on its inputs */
                dgx[j] = dcv * gg * i * (1.0f - i);
                dgx[H + j] = dcv * cp[(size_t)n * (size_t)H + (size_t)j] * f * (1.0f - f);
                dgx[2 * H + j] = dcv * i * (1.0f - gg * gg);
                dgx[3 * H + j] = dht * tc * og * (1.0f - og);
                for (int k = 0; k < 4; k++)
                    dgh[k * H + j] = dgx[k * H + j];
                dc[j] = dcv * f;
                if (dh)
                    dh[j] = 0.0f;
            } else {
                float r = v[j], z = v[H + j], nn = v[2 * H + j];
                float hpv = hp[(size_t)n * (size_t)ldh + (size_t)j];
                float dan = dht * (1.0f - z) * (1.0f - nn * nn);
                dgx[j] = dgh[j] = dan * a[j] * r * (1.0f - r);
                dgx[H + j] = dgh[H + j] = dht * (hpv - nn) * z * (1.0f - z);
                dgx[2 * H + j] = dan;
                dgh[2 * H + j] = dan * r;
                dh[j] = dht * z;
            }
        }
    }
}

/**
 * Projection, before the element-wise step at time t: dr = dy + dh for the rows
 * within their sequence (stored in g->dr, dh reset: lstm has no direct part),
 * zero elsewhere (dh passes through); g->dhh = dr Whr; g->hs the step's h.
 */
static void rnn_proj_backward(const mxk_op_ctx *ctx, const rnn_dims *m, const rnn_ld *o,
                              const rnn_grads *g, int t) {
    int R = m->R, H = m->H, N = m->N;
    size_t tn = (size_t)t * (size_t)N;
    for (int n = 0; n < N; n++) {
        size_t row = tn + (size_t)n;
        float *dr = g->dr + row * (size_t)R, *dh = g->dh + (size_t)n * (size_t)R;
        float *hs = g->hs + row * (size_t)H;
        if (!rnn_valid(m, t, n)) {
            memset(dr, 0, (size_t)R * sizeof(float));
            memset(hs, 0, (size_t)H * sizeof(float));
            continue;
        }
        const float *dy = g->dy + row * (size_t)m->DR + (size_t)o->d * (size_t)R;
        for (int j = 0; j < R; j++) {
            dr[j] = dy[j] + dh[j];
            dh[j] = 0.0f;
        }
        const float *v = o->gates + row * (size_t)m->GH, *a = o->aux + row * (size_t)H;
        for (int j = 0; j < H; j++)
            hs[j] = v[3 * H + j] * rnn_tanh(a[j]);
    }
    cb_sgemm(ctx, CblasNoTrans, CblasNoTrans, N, H, R, 1.0f, g->dr + tn * (size_t)R, R, o->whr, H,
             0.0f, g->dhh, H);
}

/** dW (+)= dG^T h over the steps whose previous state is an output row (one GEMM), and hx. */
static void rnn_dwh(const mxk_op_ctx *ctx, const rnn_dims *m, const rnn_ld *o, const float *dgh,
                    float *dwh) {
    int GH = m->GH, R = m->R, N = m->N;
    size_t step = (size_t)N * (size_t)GH;
    int t0 = o->d ? m->T - 1 : 0; /* the step that starts from hx */
    cb_sgemm(ctx, CblasTrans, CblasNoTrans, GH, R, N, 1.0f, dgh + (size_t)t0 * step, GH, o->hx, R,
             1.0f, dwh, R);
    if (m->T < 2)
        return;
    /* forward: rows t = 1..T-1 pair with outputs 0..T-2; backward: t = 0..T-2 with 1..T-1 */
    const float *dg = dgh + (o->d ? 0 : step);
    const float *hp = o->y + (o->d ? (size_t)N * (size_t)m->DR : 0) + (size_t)o->d * (size_t)R;
    cb_sgemm(ctx, CblasTrans, CblasNoTrans, GH, R, (m->T - 1) * N, 1.0f, dg, GH, hp, m->DR, 1.0f,
             dwh, R);
}

/** Column sums of a (rows, cols) matrix added to out. */
static void rnn_colsum_add(float *out, const float *a, int rows, int cols) {
    for (int r = 0; r < rows; r++)
        mxk_sdk_copy_f32(out, a + (size_t)r * (size_t)cols, (size_t)cols, MXK_REQ_ADD);
}

/**
 * Backward through time of one layer direction: g->dy holds the layer's output
 * gradient; g->dh / g->dc the final states' gradients on entry. Adds the
 * parameter gradients into g->dw, writes (d = 0) or adds (d = 1) the input
 * gradient into g->dx and writes the initial state gradients into dhx / dcx.
 */
static void rnn_layer_backward(const mxk_op_ctx *ctx, const rnn_dims *m, const rnn_ld *o,
                               const rnn_grads *g, const float *w) {
    int TN = m->T * m->N, GH = m->GH, H = m->H, N = m->N, R = m->R;
    for (int s = m->T - 1; s >= 0; s--) {
        int t = rnn_time(m, o->d, s);
        if (m->proj)
            rnn_proj_backward(ctx, m, o, g, t);
        rnn_step_backward(m, o, g, t);
        cb_sgemm(ctx, CblasNoTrans, CblasNoTrans, N, R, GH, 1.0f, g->dgh + (size_t)t * N * GH, GH,
                 o->wh, R, 1.0f, g->dh, R);
    }
    float *dwx = g->dw + (o->wx - w), *dbx = g->dw + (o->bx - w);
    cb_sgemm(ctx, CblasTrans, CblasNoTrans, GH, o->In, TN, 1.0f, g->dgx, GH, o->x, o->In, 1.0f, dwx,
             o->In);
    rnn_dwh(ctx, m, o, g->dgh, dwx + (size_t)GH * (size_t)o->In);
    if (m->proj)
        cb_sgemm(ctx, CblasTrans, CblasNoTrans, R, H, TN, 1.0f, g->dr, R, g->hs, H, 1.0f,
                 g->dw + (o->whr - w), H);
    rnn_colsum_add(dbx, g->dgx, TN, GH);
    rnn_colsum_add(dbx + GH, g->dgh, TN, GH);
    cb_sgemm(ctx, CblasNoTrans, CblasNoTrans, TN, o->In, GH, 1.0f, g->dgx, GH, o->wx, o->In,
             o->d ? 1.0f : 0.0f, g->dx, o->In);
    size_t k = (size_t)o->l * (size_t)m->D + (size_t)o->d;
    size_t NH = (size_t)N * (size_t)H, NR = (size_t)N * (size_t)R;
    memcpy(g->dhx + k * NR, g->dh, NR * sizeof(float));
    memcpy(g->dcx + k * NH, g->dc, NH * sizeof(float));
}

/** Sets dh (and dc) of layer direction k from the state outputs' gradients, or zero. */
static void rnn_init_state_grads(const rnn_dims *m, const mxk_backward_args *args, size_t k,
                                 const rnn_grads *g) {
    size_t NH = (size_t)m->N * (size_t)m->H, NR = (size_t)m->N * (size_t)m->R;
    if (args->num_out_grad > 1)
        memcpy(g->dh, cb_f32(args->out_grad[1]) + k * NR, NR * sizeof(float));
    else
        memset(g->dh, 0, NR * sizeof(float));
    if (args->num_out_grad > 2)
        memcpy(g->dc, cb_f32(args->out_grad[2]) + k * NH, NH * sizeof(float));
    else
        memset(g->dc, 0, NH * sizeof(float));
}

/** Checks the backward's tensors: output gradients, arguments, requested gradients. */
static mxk_status rnn_check_backward(const rnn_param *p, const mxk_backward_args *args,
                                     mxk_error_sink *err) {
    uint32_t ni = rnn_num_args(p), no = rnn_num_outs(p), nv = rnn_num_visible(p);
    mxk_shape in[CB_MAX_IO], out[CB_MAX_IO];
    MXK_SDK_CHECK(cb_check_backward_counts(args, ni, no, nv, err));
    for (uint32_t i = 0; i < ni; i++) {
        char what[64];
        snprintf(what, sizeof what, "argument '%s'", rnn_arg_name(p, i));
        MXK_SDK_CHECK(cb_check_tensor(args->in_data[i], what, err));
        in[i] = args->in_data[i]->shape;
    }
    for (uint32_t i = 0; i < nv; i++) {
        char what[64];
        snprintf(what, sizeof what, "gradient of output '%s'", rnn_outs[i]);
        MXK_SDK_CHECK(cb_check_tensor(args->out_grad[i], what, err));
        out[i] = args->out_grad[i]->shape;
    }
    MXK_SDK_CHECK(cb_check_tensor(args->out_data[no - 1], "output 'reserve'", err));
    out[no - 1] = args->out_data[no - 1]->shape;
    MXK_SDK_CHECK(rnn_infer_shape(p, in, ni, out, no, NULL, 0, err));
    for (uint32_t i = 0; i < ni; i++)
        MXK_SDK_CHECK(
            cb_check_grad(args->in_grad[i], args->req[i], &in[i], rnn_arg_name(p, i), err));
    return MXK_OK;
}

/**
 * Backward: back-propagation through time, layer by layer, from the forward's
 * reserve; through the dropout masks between layers. sequence_length gets a zero
 * gradient.
 */
static mxk_status rnn_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                               const mxk_backward_args *args, mxk_error_sink *err) {
    const rnn_param *p = param;
    int needed = 0;
    for (uint32_t i = 0; i < args->num_in; i++)
        needed |= args->req[i] != MXK_REQ_NULL;
    if (!needed)
        return MXK_OK;
    rnn_dims m;
    MXK_SDK_CHECK(cb_check_tensor(args->num_in ? args->in_data[0] : NULL, "argument 'data'", err));
    MXK_SDK_CHECK(rnn_dims_of(p, &args->in_data[0]->shape, &m, err));
    MXK_SDK_CHECK(rnn_check_backward(p, args, err));
    MXK_SDK_CHECK(rnn_lengths(p, args->in_data, &m, err));
    float *ws;
    MXK_SDK_CHECK(rnn_temp(ctx, rnn_ws_floats(&m, 1), &ws, err));
    rnn_store s; /* read only: the pointers are shared with forward's layout */
    rnn_store_at(p, &m, cb_f32(args->out_data[rnn_num_outs(p) - 1]), &s);
    rnn_grads g;
    rnn_grads_at(&m, ws, &g);
    const float *x = cb_f32(args->in_data[0]), *w = cb_f32(args->in_data[1]);
    const float *hx = cb_f32(args->in_data[2]);
    const float *cx = m.mode == RNN_LSTM ? cb_f32(args->in_data[3]) : NULL;

    size_t TN = (size_t)m.T * (size_t)m.N, layer = TN * (size_t)m.DR;
    memset(g.dw, 0, (size_t)m.np * sizeof(float));
    memcpy(g.dy, cb_f32(args->out_grad[0]), layer * sizeof(float));
    for (int l = m.L - 1; l >= 0; l--) {
        for (int d = 0; d < m.D; d++) {
            rnn_ld o;
            rnn_ld_at(&m, &s, x, w, hx, cx, l, d, &o);
            rnn_init_state_grads(&m, args, (size_t)l * (size_t)m.D + (size_t)d, &g);
            rnn_layer_backward(ctx, &m, &o, &g, w);
        }
        float *t = g.dy; /* the input gradient is the output gradient of the layer below */
        g.dy = g.dx;
        g.dx = t;
        if (l > 0 && s.mask) /* through the dropout between layer l-1 and l */
            for (size_t i = 0; i < layer; i++)
                g.dy[i] *= s.mask[(size_t)(l - 1) * layer + i];
    }
    const size_t NH = (size_t)m.N * (size_t)m.H, NR = (size_t)m.N * (size_t)m.R;
    const size_t LD = (size_t)m.L * (size_t)m.D;
    const float *src[4] = {g.dy, g.dw, g.dhx, g.dcx};
    const size_t len[4] = {TN * (size_t)m.C, (size_t)m.np, LD * NR, LD * NH};
    for (uint32_t i = 0; i < rnn_num_states_args(p); i++)
        if (args->req[i] != MXK_REQ_NULL)
            mxk_sdk_copy_f32(cb_f32(args->in_grad[i]), src[i], len[i], args->req[i]);
    uint32_t sl = rnn_num_states_args(p);
    if (p->seq_len && args->req[sl] != MXK_REQ_NULL)
        mxk_sdk_fill_f32(cb_f32(args->in_grad[sl]), 0.0f, (size_t)m.N, args->req[sl]);
    return MXK_OK;
}

/** Registers RNN and its CPU kernel. */
mxk_status cb_register_rnn(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_def def;
    mxk_sdk_op_def_init(&def);
    def.name = "RNN";
    def.description = "Applies recurrent layers (vanilla RNN, LSTM, GRU) to input data.";
    def.attrs = rnn_attrs;
    def.num_attrs = MXK_SDK_COUNTOF(rnn_attrs);
    def.parse_param = rnn_parse;
    def.free_param = cbt_param_free;
    def.list_arguments = rnn_list_arguments;
    def.list_outputs = rnn_list_outputs;
    def.num_visible_outputs = rnn_num_visible;
    def.infer_shape = rnn_infer_shape;
    def.infer_type = rnn_infer_type;
    def.backward_dependency = rnn_backward_dependency;
    def.forward_resources = rnn_fwd_resources;
    def.backward_resources = rnn_bwd_resources;
    def.aliases = rnn_aliases;
    mxk_op_kernel_def k;
    cb_kernel_init(&k, "RNN", rnn_forward, rnn_backward);
    return cb_register(reg, &def, &k, err);
}
