/*
 * cuda plugin: the GPU kernel of the fused recurrent operator RNN, on cuDNN 9's
 * RNN API (cudnnSetRNNDescriptor_v8, RNN data descriptors, cudnnRNNForward,
 * cudnnRNNBackwardData_v8, cudnnRNNBackwardWeights_v8).
 *
 * Semantics are the operator's (cpu-blas op_rnn.c: arguments, outputs, the flat
 * parameter layout, gate orders, sequence lengths, state clipping, projection);
 * the mapping onto cuDNN follows MXNet 1.9.1 src/operator/rnn-inl.h (its cuDNN
 * path) and src/operator/cudnn_rnn-inl.h (MXNet 1.4, merged into rnn-inl.h since):
 *   - modes rnn_relu, rnn_tanh, lstm, gru are CUDNN_RNN_RELU, CUDNN_RNN_TANH,
 *     CUDNN_LSTM, CUDNN_GRU with two biases (CUDNN_RNN_DOUBLE_BIAS); cuDNN's gate
 *     order (lstm i, f, g, o; gru r, z, n) and its GRU formula are the operator's.
 *   - parameters: upstream hands the flat vector to cuDNN as its weight space.
 *     Here the location of every matrix and bias in cuDNN's weight space comes
 *     from cudnnGetRNNWeightParams (pseudo-layer l*D + d; linLayerID: gates of
 *     Wx, then of Wh, then lstm's projection 8) and is compared with the
 *     operator's layout once per state: when every block is at the same offset
 *     and the sizes agree, the parameters (and their gradient) are cuDNN's weight
 *     space directly; otherwise each forward copies the blocks into a weight space
 *     kept in the state and backward scatters the gradient back.
 *   - projection_size is cuDNN's projSize; lstm_state_clip_min / max / nan are
 *     cudnnRNNSetClip_v8 (CUDNN_RNN_CLIP_MINMAX; NaN becomes the bound with
 *     lstm_state_clip_nan, CUDNN_NOT_PROPAGATE_NAN).
 *   - use_sequence_length: the lengths are read back to the host (cuDNN's data
 *     descriptors take them there; upstream copies them synchronously too: this
 *     kernel synchronises the call's stream for it), checked as cpu-blas checks
 *     them, and passed as CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED descriptors
 *     with padded I/O (outputs past a sequence are zero, as cpu-blas's).
 *   - math: CUDNN_FMA_MATH (no TF32), so results agree with cpu-blas's float32.
 *
 * Saved state: cuDNN's backward reads the reserve space of a training forward
 * and the forward's output y, which the operator's backward does not receive
 * (its hidden `reserve` output is sized for cpu-blas's kernel: this kernel writes
 * zeros there when requested). The node's state (shared by the node's forward
 * and backward; the host never runs two calls of one state at once) keeps the
 * reserve space and y of the last training forward, keyed by the (pointer, write
 * version) of every argument, as onednn's dn_rnn.c does. A backward whose
 * arguments do not match the key first recomputes the training forward, so
 * gradients never depend on the call order. Buffers are allocated with the host's
 * storage_alloc and replaced only at the start of a call (the engine has
 * synchronised every earlier call's stream), freed in destroy_state; cuDNN's
 * workspace is the operator's temp space.
 *
 * Requests: WRITE / INPLACE / NULL (the host emulates ADD: no
 * MXK_KERNEL_SUPPORTS_ADDTO); a data gradient or output not requested goes to
 * temp space. Declined (`supports`): dtypes other than float32, empty data, sizes
 * beyond cuDNN's int, dropout p = 1 between layers (cpu-blas's NaN output) and a
 * projection_size equal to state_size.
 *
 * Dropout p > 0 between layers (num_layers > 1) is cuDNN's, in training forwards
 * only (as the operator; inference runs a second RNN descriptor without
 * dropout). cuDNN's dropout states live in the node's state, seeded at the
 * first call from the operator's random stream (the key of one random_reserve
 * block). cuDNN draws its own masks, so with p > 0 a training forward
 * (and its gradients) differs from cpu-blas's for the same seed, as upstream's
 * GPU and CPU masks differ; inference, and p = 0, agree. A backward that has to
 * recompute its forward (see above) draws new masks.
 */
#include <stdlib.h>
#include <string.h>

#include "cuda_plugin.h"

/** Modes, in the order of the operator's enum attribute. */
enum { CU_RNN_RELU, CU_RNN_TANH, CU_RNN_LSTM, CU_RNN_GRU };

/** Arguments the key covers: data, parameters, state, state_cell, sequence_length. */
#define CU_RNN_MAX_ARGS 5

/** Parsed attributes (MXNet 1.9.1 RNNParam; validated by the operator). */
typedef struct cu_rnn_param {
    int32_t mode;
    int64_t H, L, P; /**< state_size, num_layers, projection_size (0: none) */
    int32_t bidirectional, state_outputs, seq_len;
    double p;
    int32_t clip, clip_nan;
    double clip_min, clip_max;
} cu_rnn_param;

/** One block of the flat parameters and its place in cuDNN's weight space (floats). */
typedef struct cu_rnn_block {
    uint64_t mx_off, cu_off, count;
} cu_rnn_block;

/** A device buffer of the state and its capacity. */
typedef struct cu_rnn_buf {
    void *ptr;
    size_t bytes;
} cu_rnn_buf;

/**
 * Per-node state: sizes, cuDNN descriptors (set up at the first call, which has a
 * handle), the block table, the sequence lengths, the saved training forward.
 */
typedef struct cu_rnn_state {
    int32_t dev_id;
    int T, N, C, H, R, L, D, G;
    int proj;                         /**< 1 with a projection (lstm: Whr (R, H) after Wh) */
    uint64_t np;                      /**< parameter count */
    int ready;                        /**< descriptors and block table set up */
    cudnnDropoutDescriptor_t drop[2]; /**< [0]: none (inference), [1]: rate p (training) */
    cudnnRNNDescriptor_t rnn[2];      /**< [0]: inference, [1]: training (with drop[1]) */
    cudnnRNNDataDescriptor_t xd, yd;
    cudnnTensorDescriptor_t hd, cd, md, bd; /**< md, bd: scratch for cudnnGetRNNWeightParams */
    size_t wbytes;                          /**< cuDNN's weight space */
    int identity;                           /**< 1: the flat parameters are cuDNN's weight space */
    cu_rnn_block *blocks;
    uint32_t num_blocks;
    int *lens;     /**< (N) host lengths of the data descriptors */
    float *lens_f; /**< (N) host copy of sequence_length */
    int lens_set;  /**< 1: the descriptors hold all-T lengths (no sequence_length) */
    cu_rnn_buf dev_lens, wspace, dwspace, reserve, y;
    cu_rnn_buf drop_states; /**< cuDNN's dropout states (p > 0, num_layers > 1) */
    size_t reserve_used;    /**< bytes of the saved forward's reserve space */
    const void *key[CU_RNN_MAX_ARGS];
    uint64_t key_version[CU_RNN_MAX_ARGS];
    int key_valid;
} cu_rnn_state;

/** Directions D. */
static int64_t cu_rnn_dirs(const cu_rnn_param *p) {
    return p->bidirectional ? 2 : 1;
}

/** Gates G: 1, 4 (lstm), 3 (gru). */
static int64_t cu_rnn_gates(const cu_rnn_param *p) {
    return p->mode == CU_RNN_LSTM ? 4 : p->mode == CU_RNN_GRU ? 3 : 1;
}

/** Arguments before sequence_length: 4 for lstm (state_cell), else 3. */
static uint32_t cu_rnn_num_state_args(const cu_rnn_param *p) {
    return p->mode == CU_RNN_LSTM ? 4u : 3u;
}

/** All arguments (with sequence_length when used). */
static uint32_t cu_rnn_num_args(const cu_rnn_param *p) {
    return cu_rnn_num_state_args(p) + (p->seq_len ? 1u : 0u);
}

/** Visible outputs: 1, or with state_outputs 2 (3 for lstm); the hidden reserve follows. */
static uint32_t cu_rnn_num_visible(const cu_rnn_param *p) {
    return p->state_outputs ? cu_rnn_num_state_args(p) - 1 : 1u;
}

/**
 * Parses the attributes this kernel needs (the operator has validated them:
 * op_rnn.c's rnn_parse). Errors: the mxk_sdk_attr_* readers',
 * MXK_ERR_OUT_OF_MEMORY.
 */
static mxk_status cu_rnn_parse(const mxk_attrs *attrs, void **out, mxk_error_sink *err) {
    cu_rnn_param p;
    memset(&p, 0, sizeof p);
    MXK_SDK_CHECK(mxk_sdk_attr_enum(attrs, "mode", "rnn_relu|rnn_tanh|lstm|gru", &p.mode, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "state_size", 1, INT32_MAX, &p.H, err));
    MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "num_layers", 1, INT32_MAX, &p.L, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "bidirectional", &p.bidirectional, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "state_outputs", &p.state_outputs, err));
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "use_sequence_length", &p.seq_len, err));
    MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "p", &p.p, err));
    if (mxk_sdk_attr_is_set(attrs, "projection_size"))
        MXK_SDK_CHECK(mxk_sdk_attr_int_range(attrs, "projection_size", 1, p.H, &p.P, err));
    p.clip = mxk_sdk_attr_is_set(attrs, "lstm_state_clip_min") &&
             mxk_sdk_attr_is_set(attrs, "lstm_state_clip_max");
    MXK_SDK_CHECK(mxk_sdk_attr_bool(attrs, "lstm_state_clip_nan", &p.clip_nan, err));
    if (p.clip) {
        MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "lstm_state_clip_min", &p.clip_min, err));
        MXK_SDK_CHECK(mxk_sdk_attr_float(attrs, "lstm_state_clip_max", &p.clip_max, err));
    }
    return cu_param_dup(&p, sizeof p, out, err);
}

/**
 * Accepts float32 arguments, data (T, N, C) with every size in 1..INT32_MAX
 * and T*N*max(C, D*R) within int, no dropout p = 1 between layers and no
 * projection_size equal to state_size (cuDNN disables its projection then, while
 * the operator keeps an (H, H) projection matrix).
 */
static int32_t cu_rnn_supports(const void *param, const mxk_shape *in_shapes,
                               const int32_t *in_types, uint32_t num_in) {
    const cu_rnn_param *p = param;
    if ((p->p >= 1.0 && p->L > 1) || p->P == p->H || num_in < 1 || in_shapes[0].ndim != 3 ||
        !cu_all_f32(in_types, num_in))
        return 0;
    const mxk_shape *d = &in_shapes[0];
    int64_t R = p->P ? p->P : p->H, wide = cu_rnn_dirs(p) * R;
    wide = d->dims[2] > wide ? d->dims[2] : wide;
    for (int i = 0; i < 3; i++)
        if (d->dims[i] < 1 || d->dims[i] > INT32_MAX)
            return 0;
    return (double)d->dims[0] * (double)d->dims[1] * (double)wide <= (double)INT32_MAX &&
           (double)cu_rnn_gates(p) * (double)p->H * (double)(wide + R) <= (double)INT32_MAX;
}

/** Frees buffer b of state s (storage_free on the state's device). */
static void cu_rnn_buf_free(const cu_rnn_state *s, cu_rnn_buf *b) {
    if (b->ptr != NULL)
        mxk_sdk_host()->storage_free(MXK_DEV_GPU, s->dev_id, b->ptr);
    b->ptr = NULL;
    b->bytes = 0;
}

/**
 * Makes b hold at least `bytes`, replacing a smaller buffer (its contents are
 * lost). Only called before the call enqueues work that reads b: earlier calls'
 * work is complete. Errors: storage_alloc's.
 */
static mxk_status cu_rnn_buf_reserve(const cu_rnn_state *s, cu_rnn_buf *b, size_t bytes,
                                     mxk_error_sink *err) {
    if (b->bytes >= bytes)
        return MXK_OK;
    cu_rnn_buf_free(s, b);
    MXK_SDK_CHECK(mxk_sdk_host()->storage_alloc(MXK_DEV_GPU, s->dev_id, bytes, &b->ptr, err));
    b->bytes = bytes;
    return MXK_OK;
}

/** destroy_state: descriptors, buffers, host arrays (NULL allowed). */
static void cu_rnn_destroy_state(void *state) {
    cu_rnn_state *s = state;
    if (s == NULL)
        return;
    for (int i = 0; i < 2; i++) {
        cudnnDestroyRNNDescriptor(s->rnn[i]);
        cudnnDestroyDropoutDescriptor(s->drop[i]);
    }
    cudnnDestroyRNNDataDescriptor(s->xd);
    cudnnDestroyRNNDataDescriptor(s->yd);
    cudnnDestroyTensorDescriptor(s->hd);
    cudnnDestroyTensorDescriptor(s->cd);
    cudnnDestroyTensorDescriptor(s->md);
    cudnnDestroyTensorDescriptor(s->bd);
    cu_rnn_buf *bufs[] = {&s->dev_lens, &s->wspace, &s->dwspace,
                          &s->reserve,  &s->y,      &s->drop_states};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        cu_rnn_buf_free(s, bufs[i]);
    free(s->blocks);
    free(s->lens);
    free(s->lens_f);
    free(s);
}

/**
 * Parameter count (op_rnn.c's rnn_param_count, upstream GetRnnParamSize): per
 * layer direction Wx (G*H, In), Wh (G*H, R), Whr (R, H) with a projection, then
 * all biases 2*G*H per layer direction.
 */
static uint64_t cu_rnn_param_count(const cu_rnn_state *s) {
    uint64_t GH = (uint64_t)s->G * (uint64_t)s->H, D = (uint64_t)s->D;
    uint64_t proj = s->proj ? (uint64_t)s->R * (uint64_t)s->H : 0;
    uint64_t b0 = GH * (uint64_t)(s->C + s->R) + proj,
             b1 = GH * (uint64_t)(s->D * s->R + s->R) + proj;
    return D * b0 + (uint64_t)(s->L - 1) * D * b1 + (uint64_t)s->L * D * 2 * GH;
}

/**
 * create_state: the sizes from data's shape and the descriptors that need no
 * handle (created empty). Errors: MXK_ERR_SHAPE for data not (T, N, C),
 * MXK_ERR_OUT_OF_MEMORY, cu_check_dnn's.
 */
static mxk_status cu_rnn_create_state(const void *param, int32_t dev_type, int32_t dev_id,
                                      const mxk_shape *in_shapes, const int32_t *in_types,
                                      uint32_t num_in, void **state, mxk_error_sink *err) {
    const cu_rnn_param *p = param;
    if (num_in < 1 || in_shapes[0].ndim != 3)
        return mxk_sdk_error(err, MXK_ERR_SHAPE, "RNN: argument 'data' must be (T, N, C)");
    cu_rnn_state *s = calloc(1, sizeof *s);
    if (s == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "cuda RNN: out of memory");
    s->dev_id = dev_id;
    s->T = (int)in_shapes[0].dims[0];
    s->N = (int)in_shapes[0].dims[1];
    s->C = (int)in_shapes[0].dims[2];
    s->H = (int)p->H;
    s->R = (int)(p->P ? p->P : p->H);
    s->proj = p->P > 0;
    s->L = (int)p->L;
    s->D = (int)cu_rnn_dirs(p);
    s->G = (int)cu_rnn_gates(p);
    s->np = cu_rnn_param_count(s);
    s->lens = malloc((size_t)s->N * sizeof(int));
    s->lens_f = malloc((size_t)s->N * sizeof(float));
    mxk_status rc = s->lens && s->lens_f
                        ? MXK_OK
                        : mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "cuda RNN: out of memory");
    for (int i = 0; i < 2 && rc == MXK_OK; i++) {
        rc = cu_check_dnn(cudnnCreateRNNDescriptor(&s->rnn[i]), "cudnnCreateRNNDescriptor", err);
        if (rc == MXK_OK)
            rc = cu_check_dnn(cudnnCreateDropoutDescriptor(&s->drop[i]),
                              "cudnnCreateDropoutDescriptor", err);
    }
    if (rc == MXK_OK)
        rc =
            cu_check_dnn(cudnnCreateRNNDataDescriptor(&s->xd), "cudnnCreateRNNDataDescriptor", err);
    if (rc == MXK_OK)
        rc =
            cu_check_dnn(cudnnCreateRNNDataDescriptor(&s->yd), "cudnnCreateRNNDataDescriptor", err);
    cudnnTensorDescriptor_t *tds[] = {&s->hd, &s->cd, &s->md, &s->bd};
    for (size_t i = 0; i < 4 && rc == MXK_OK; i++)
        rc = cu_check_dnn(cudnnCreateTensorDescriptor(tds[i]), "cudnnCreateTensorDescriptor", err);
    if (rc != MXK_OK) {
        cu_rnn_destroy_state(s);
        return rc;
    }
    *state = s;
    return MXK_OK;
}

/** Sets a packed 3-d float tensor descriptor (a, b, c). */
static mxk_status cu_rnn_tensor3(cudnnTensorDescriptor_t t, int a, int b, int c,
                                 mxk_error_sink *err) {
    int dims[3] = {a, b, c}, strides[3] = {b * c, c, 1};
    CU_CHECK_DNN(cudnnSetTensorNdDescriptor(t, CUDNN_DATA_FLOAT, 3, dims, strides),
                 "cudnnSetTensorNdDescriptor", err);
    return MXK_OK;
}

/**
 * Appends the block of `count` floats at mx_off in the flat parameters whose
 * cuDNN address is `addr`, described by `desc` (both from
 * cudnnGetRNNWeightParams). Errors: MXK_ERR_INTERNAL when cuDNN has no such
 * block, its element count differs or it lies outside the weight space.
 */
static mxk_status cu_rnn_add_block(cu_rnn_state *s, const char *base, const void *addr,
                                   cudnnTensorDescriptor_t desc, uint64_t mx_off, uint64_t count,
                                   mxk_error_sink *err) {
    cudnnDataType_t dt;
    int nd = 0, dims[8], strides[8];
    uint64_t n = 0, cu_off = addr ? (uint64_t)((const char *)addr - base) / sizeof(float) : 0;
    if (addr != NULL &&
        cudnnGetTensorNdDescriptor(desc, 8, &dt, &nd, dims, strides) == CUDNN_STATUS_SUCCESS) {
        n = 1;
        for (int i = 0; i < nd; i++)
            n *= (uint64_t)dims[i];
    }
    if (addr == NULL || n != count || (cu_off + count) * sizeof(float) > s->wbytes)
        return mxk_sdk_error(err, MXK_ERR_INTERNAL,
                             "cuda RNN: cuDNN's weight space has no block of %llu floats for the "
                             "parameters at %llu (cuDNN's: %llu floats)",
                             (unsigned long long)count, (unsigned long long)mx_off,
                             (unsigned long long)n);
    s->blocks[s->num_blocks++] = (cu_rnn_block){mx_off, cu_off, count};
    return MXK_OK;
}

/**
 * The block table: for every layer direction (pseudo-layer l*D + d) the gates of
 * Wx (linLayerID g), of Wh (G + g), the projection (lstm: 8) and the biases bx
 * (g), bh (G + g), at the operator's offsets (op_rnn.c rnn_w_off / rnn_b_off).
 * cuDNN's addresses are taken relative to a placeholder weight-space pointer
 * (cudnnGetRNNWeightParams only computes addresses). Sets s->identity.
 */
static mxk_status cu_rnn_map_weights(cudnnHandle_t h, cu_rnn_state *s, mxk_error_sink *err) {
    const uint64_t H = (uint64_t)s->H, R = (uint64_t)s->R, GH = (uint64_t)s->G * H;
    const uint64_t proj = s->proj ? R * H : 0, LD = (uint64_t)s->L * (uint64_t)s->D;
    s->blocks = calloc(LD * (uint64_t)(4 * s->G + 1), sizeof *s->blocks);
    if (s->blocks == NULL)
        return mxk_sdk_error(err, MXK_ERR_OUT_OF_MEMORY, "cuda RNN: out of memory");
    const char *base = (const char *)(uintptr_t)4096; /* never dereferenced */
    uint64_t w_off = 0, b_off = s->np - LD * 2 * GH;
    for (int l = 0; l < s->L; l++)
        for (int d = 0; d < s->D; d++) {
            const uint64_t in = l == 0 ? (uint64_t)s->C : (uint64_t)(s->D * s->R);
            const int32_t pseudo = l * s->D + d;
            for (int id = 0; id < 2 * s->G; id++) {
                void *m = NULL, *b = NULL;
                CU_CHECK_DNN(cudnnGetRNNWeightParams(h, s->rnn[1], pseudo, s->wbytes, base, id,
                                                     s->md, &m, s->bd, &b),
                             "cudnnGetRNNWeightParams", err);
                int rec = id >= s->G;
                uint64_t g = (uint64_t)(rec ? id - s->G : id);
                uint64_t mo = w_off + (rec ? GH * in + g * H * R : g * H * in);
                MXK_SDK_CHECK(cu_rnn_add_block(s, base, m, s->md, mo, H * (rec ? R : in), err));
                MXK_SDK_CHECK(
                    cu_rnn_add_block(s, base, b, s->bd, b_off + (uint64_t)id * H, H, err));
            }
            if (proj) {
                void *m = NULL, *b = NULL;
                CU_CHECK_DNN(cudnnGetRNNWeightParams(h, s->rnn[1], pseudo, s->wbytes, base, 8,
                                                     s->md, &m, s->bd, &b),
                             "cudnnGetRNNWeightParams", err);
                MXK_SDK_CHECK(
                    cu_rnn_add_block(s, base, m, s->md, w_off + GH * (in + R), proj, err));
            }
            w_off += GH * (in + R) + proj;
            b_off += 2 * GH;
        }
    uint64_t total = 0;
    s->identity = s->wbytes == s->np * sizeof(float);
    for (uint32_t i = 0; i < s->num_blocks; i++) {
        total += s->blocks[i].count;
        s->identity &= s->blocks[i].mx_off == s->blocks[i].cu_off;
    }
    if (total != s->np)
        return mxk_sdk_error(
            err, MXK_ERR_INTERNAL,
            "cuda RNN: cuDNN's weight blocks hold %llu floats, the parameters %llu",
            (unsigned long long)total, (unsigned long long)s->np);
    return MXK_OK;
}

/**
 * The seed of cuDNN's dropout states: the key of one Philox block reserved from
 * the call's random stream (the operator requests one for its forward when it
 * drops out), or 0 when the call has none (a backward that runs first).
 */
static unsigned long long cu_rnn_seed(const mxk_op_ctx *ctx) {
    for (uint32_t i = 0; i < ctx->num_resources; i++)
        if (ctx->resources[i]->type == MXK_RESOURCE_RANDOM) {
            uint64_t key = 0, lo = 0, hi = 0;
            mxk_sdk_host()->random_reserve(ctx->resources[i]->random, 1, &key, &lo, &hi);
            return key ^ lo;
        }
    return 0;
}

/**
 * Sets RNN descriptor `rnn` over dropout descriptor `drop`: the mode with two
 * biases, padded I/O, FMA math, and the LSTM state clip when set.
 */
static mxk_status cu_rnn_set_desc(const cu_rnn_param *p, const cu_rnn_state *s,
                                  cudnnRNNDescriptor_t rnn, cudnnDropoutDescriptor_t drop,
                                  mxk_error_sink *err) {
    static const cudnnRNNMode_t modes[] = {CUDNN_RNN_RELU, CUDNN_RNN_TANH, CUDNN_LSTM, CUDNN_GRU};
    CU_CHECK_DNN(cudnnSetRNNDescriptor_v8(
                     rnn, CUDNN_RNN_ALGO_STANDARD, modes[p->mode], CUDNN_RNN_DOUBLE_BIAS,
                     s->D == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT,
                     CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH, s->C, s->H, s->R, s->L,
                     drop, CUDNN_RNN_PADDED_IO_ENABLED),
                 "cudnnSetRNNDescriptor_v8", err);
    if (p->clip)
        CU_CHECK_DNN(cudnnRNNSetClip_v8(rnn, CUDNN_RNN_CLIP_MINMAX,
                                        p->clip_nan ? CUDNN_NOT_PROPAGATE_NAN : CUDNN_PROPAGATE_NAN,
                                        p->clip_min, p->clip_max),
                     "cudnnRNNSetClip_v8", err);
    return MXK_OK;
}

/**
 * Sets up the descriptors at the first call: the inference RNN descriptor
 * without dropout, the training one with rate p and cuDNN's dropout states
 * (dropout between layers only), the state descriptors (L*D, N, R) and
 * (L*D, N, H), the weight space size and the block table.
 */
static mxk_status cu_rnn_prepare(const mxk_op_ctx *ctx, cudnnHandle_t h, const cu_rnn_param *p,
                                 cu_rnn_state *s, mxk_error_sink *err) {
    if (s->ready)
        return MXK_OK;
    size_t sbytes = 0;
    if (p->p > 0.0 && s->L > 1) {
        CU_CHECK_DNN(cudnnDropoutGetStatesSize(h, &sbytes), "cudnnDropoutGetStatesSize", err);
        MXK_SDK_CHECK(cu_rnn_buf_reserve(s, &s->drop_states, sbytes, err));
    }
    CU_CHECK_DNN(cudnnSetDropoutDescriptor(s->drop[0], h, 0.0f, NULL, 0, 0),
                 "cudnnSetDropoutDescriptor", err);
    CU_CHECK_DNN(cudnnSetDropoutDescriptor(s->drop[1], h, sbytes ? (float)p->p : 0.0f,
                                           s->drop_states.ptr, sbytes,
                                           sbytes ? cu_rnn_seed(ctx) : 0),
                 "cudnnSetDropoutDescriptor", err);
    for (int i = 0; i < 2; i++)
        MXK_SDK_CHECK(cu_rnn_set_desc(p, s, s->rnn[i], s->drop[i], err));
    MXK_SDK_CHECK(cu_rnn_tensor3(s->hd, s->L * s->D, s->N, s->R, err));
    MXK_SDK_CHECK(cu_rnn_tensor3(s->cd, s->L * s->D, s->N, s->H, err));
    CU_CHECK_DNN(cudnnGetRNNWeightSpaceSize(h, s->rnn[1], &s->wbytes), "cudnnGetRNNWeightSpaceSize",
                 err);
    MXK_SDK_CHECK(cu_rnn_map_weights(h, s, err));
    s->ready = 1;
    return MXK_OK;
}

/** Sets the data descriptors x (T, N, C) and y (T, N, D*R) to the lengths in s->lens. */
static mxk_status cu_rnn_set_data(cu_rnn_state *s, mxk_error_sink *err) {
    float fill = 0.0f;
    CU_CHECK_DNN(cudnnSetRNNDataDescriptor(s->xd, CUDNN_DATA_FLOAT,
                                           CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, s->T, s->N,
                                           s->C, s->lens, &fill),
                 "cudnnSetRNNDataDescriptor (data)", err);
    CU_CHECK_DNN(cudnnSetRNNDataDescriptor(s->yd, CUDNN_DATA_FLOAT,
                                           CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, s->T, s->N,
                                           s->D * s->R, s->lens, &fill),
                 "cudnnSetRNNDataDescriptor (output)", err);
    return MXK_OK;
}

/**
 * The sequence lengths of this call into the data descriptors and the device
 * copy cuDNN reads: all T without use_sequence_length (set once), else
 * sequence_length read back to the host (a stream synchronisation) and checked
 * as cpu-blas checks it: MXK_ERR_INVALID_ARGUMENT "argument 'sequence_length':
 * element 1 is 7, expected an integer in [1, 5]".
 */
static mxk_status cu_rnn_lengths(const mxk_op_ctx *ctx, const cu_rnn_param *p, cu_rnn_state *s,
                                 const mxk_tensor *const *in, mxk_error_sink *err) {
    if (!p->seq_len && s->lens_set)
        return MXK_OK;
    cudaStream_t st = cu_stream(ctx);
    size_t n = (size_t)s->N;
    if (p->seq_len) {
        CU_CHECK(cudaMemcpyAsync(s->lens_f, in[cu_rnn_num_state_args(p)]->data, n * sizeof(float),
                                 cudaMemcpyDeviceToHost, st),
                 "RNN: reading sequence_length", err);
        CU_CHECK(cudaStreamSynchronize(st), "RNN: reading sequence_length", err);
        for (size_t i = 0; i < n; i++) {
            float v = s->lens_f[i];
            if (!(v >= 1.0f && v <= (float)s->T && v == (float)(int)v))
                return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                     "argument 'sequence_length': element %zu is %g, expected an "
                                     "integer in [1, %d]",
                                     i, (double)v, s->T);
            s->lens[i] = (int)v;
        }
    } else {
        for (size_t i = 0; i < n; i++)
            s->lens[i] = s->T;
    }
    MXK_SDK_CHECK(cu_rnn_buf_reserve(s, &s->dev_lens, n * sizeof(int), err));
    CU_CHECK(cudaMemcpyAsync(s->dev_lens.ptr, s->lens, n * sizeof(int), cudaMemcpyHostToDevice, st),
             "RNN: sequence lengths to the device", err);
    MXK_SDK_CHECK(cu_rnn_set_data(s, err));
    s->lens_set = !p->seq_len; /* a copy from pageable memory has read s->lens on return */
    return MXK_OK;
}

/**
 * cuDNN's weight space for the call: the flat parameters themselves, or (when
 * the layouts differ) the state's weight space with every block copied in.
 */
static mxk_status cu_rnn_weights(const mxk_op_ctx *ctx, cu_rnn_state *s, const float *params,
                                 const void **w, mxk_error_sink *err) {
    if (s->identity) {
        *w = params;
        return MXK_OK;
    }
    MXK_SDK_CHECK(cu_rnn_buf_reserve(s, &s->wspace, s->wbytes, err));
    float *ws = s->wspace.ptr;
    for (uint32_t i = 0; i < s->num_blocks; i++) {
        const cu_rnn_block *b = &s->blocks[i];
        CU_CHECK(cudaMemcpyAsync(ws + b->cu_off, params + b->mx_off, b->count * sizeof(float),
                                 cudaMemcpyDeviceToDevice, cu_stream(ctx)),
                 "RNN: parameters into cuDNN's weight space", err);
    }
    *w = ws;
    return MXK_OK;
}

/** The temp space of `bytes` bytes (at least one byte). */
static mxk_status cu_rnn_temp(const mxk_op_ctx *ctx, size_t bytes, void **ptr,
                              mxk_error_sink *err) {
    return mxk_sdk_host()->temp_space(ctx, bytes ? bytes : 1, ptr, err);
}

/** Rounds n up to a multiple of 256 (temp space carve-outs stay aligned). */
static size_t cu_rnn_align(size_t n) {
    return (n + 255) & ~(size_t)255;
}

/** The write version of t, 0 when unknown (a host before ABI 1.2). */
static uint64_t cu_rnn_version(const mxk_tensor *t) {
    return MXK_SDK_HAS_FIELD(t, mxk_tensor, version) ? t->version : 0;
}

/** Records the arguments of the training forward now saved in the state. */
static void cu_rnn_mark(cu_rnn_state *s, const mxk_tensor *const *in, uint32_t n) {
    s->key_valid = 1;
    for (uint32_t i = 0; i < n; i++) {
        s->key[i] = in[i]->data;
        s->key_version[i] = cu_rnn_version(in[i]);
        s->key_valid &= s->key_version[i] != 0;
    }
}

/** 1 when the state holds the training forward of these arguments. */
static int cu_rnn_matches(const cu_rnn_state *s, const mxk_tensor *const *in, uint32_t n) {
    if (!s->key_valid)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        if (s->key[i] != in[i]->data || s->key_version[i] != cu_rnn_version(in[i]))
            return 0;
    return 1;
}

/** The pointers of one cudnnRNNForward call. */
typedef struct cu_rnn_io {
    const void *x, *hx, *cx, *w;
    void *y, *hy, *cy;
} cu_rnn_io;

/**
 * Runs cudnnRNNForward with the workspace `temp` of ws_bytes. Training keeps the
 * reserve space in the state (grown as needed) and forgets the saved key until
 * the caller records the new one.
 */
static mxk_status cu_rnn_run_forward(const mxk_op_ctx *ctx, cudnnHandle_t h, cu_rnn_state *s,
                                     int training, const cu_rnn_io *io, void *temp, size_t ws_bytes,
                                     mxk_error_sink *err) {
    size_t rs_bytes = 0, wsb = 0;
    cudnnForwardMode_t mode = training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE;
    CU_CHECK_DNN(cudnnGetRNNTempSpaceSizes(h, s->rnn[training], mode, s->xd, &wsb, &rs_bytes),
                 "cudnnGetRNNTempSpaceSizes", err);
    if (wsb > ws_bytes)
        return mxk_sdk_error(err, MXK_ERR_INTERNAL, "cuda RNN: workspace of %zu bytes, %zu needed",
                             ws_bytes, wsb);
    if (training) {
        MXK_SDK_CHECK(cu_rnn_buf_reserve(s, &s->reserve, rs_bytes, err));
        s->key_valid = 0;
        s->reserve_used = rs_bytes;
    }
    CU_CHECK_DNN(cudnnRNNForward(h, s->rnn[training], mode, s->dev_lens.ptr, s->xd, io->x, s->yd,
                                 io->y, s->hd, io->hx, io->hy, s->cd, io->cx, io->cy, s->wbytes,
                                 io->w, wsb, temp, training ? rs_bytes : 0,
                                 training ? s->reserve.ptr : NULL),
                 "cudnnRNNForward", err);
    return MXK_OK;
}

/** Bytes of cuDNN's workspace in training (forward and backward) or inference mode. */
static mxk_status cu_rnn_ws_bytes(cudnnHandle_t h, cu_rnn_state *s, int training, size_t *bytes,
                                  mxk_error_sink *err) {
    size_t rs = 0;
    CU_CHECK_DNN(
        cudnnGetRNNTempSpaceSizes(h, s->rnn[training],
                                  training ? CUDNN_FWD_MODE_TRAINING : CUDNN_FWD_MODE_INFERENCE,
                                  s->xd, bytes, &rs),
        "cudnnGetRNNTempSpaceSizes", err);
    return MXK_OK;
}

/**
 * Checks the arguments against the state's sizes: float32 on the device, data
 * (T, N, C), parameters (K,), the states, sequence_length (N). MXK_ERR_SHAPE or
 * MXK_ERR_INVALID_ARGUMENT naming the argument.
 */
static mxk_status cu_rnn_check_args(const cu_rnn_param *p, const cu_rnn_state *s,
                                    const mxk_tensor *const *in, uint32_t num_in,
                                    mxk_error_sink *err) {
    static const char *const names[] = {"data", "parameters", "state", "state_cell"};
    if (num_in != cu_rnn_num_args(p))
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "RNN expects %u arguments, got %u",
                             (unsigned)cu_rnn_num_args(p), (unsigned)num_in);
    const uint64_t TN = (uint64_t)s->T * (uint64_t)s->N, LDN = (uint64_t)s->L * s->D * s->N;
    const uint64_t want[5] = {TN * (uint64_t)s->C, s->np, LDN * (uint64_t)s->R,
                              LDN * (uint64_t)s->H, (uint64_t)s->N};
    for (uint32_t i = 0; i < num_in; i++) {
        const char *name = i < cu_rnn_num_state_args(p) ? names[i] : "sequence_length";
        uint64_t k = i < cu_rnn_num_state_args(p) ? want[i] : want[4];
        const mxk_tensor *t = in[i];
        if (t == NULL || t->data == NULL || t->dtype != MXK_FLOAT32)
            return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                                 "RNN: argument '%s': expected a float32 array", name);
        if (mxk_sdk_shape_count(&t->shape) != k || (i == 0 && t->shape.dims[0] != s->T))
            return mxk_sdk_error(
                err, MXK_ERR_SHAPE, "RNN: argument '%s': expected %llu elements, got %llu", name,
                (unsigned long long)k, (unsigned long long)mxk_sdk_shape_count(&t->shape));
    }
    return MXK_OK;
}

/** The handle, descriptors and sequence lengths of a call. */
static mxk_status cu_rnn_begin(const mxk_op_ctx *ctx, const cu_rnn_param *p, cu_rnn_state *s,
                               const mxk_tensor *const *in, uint32_t num_in, cudnnHandle_t *h,
                               mxk_error_sink *err) {
    MXK_SDK_CHECK(cu_rnn_check_args(p, s, in, num_in, err));
    *h = cu_dnn(ctx, err);
    if (*h == NULL)
        return MXK_ERR_BACKEND;
    MXK_SDK_CHECK(cu_rnn_prepare(ctx, *h, p, s, err));
    return cu_rnn_lengths(ctx, p, s, in, err);
}

/** The training forward of the arguments into the state's y and reserve (no final states). */
static mxk_status cu_rnn_forward_saved(const mxk_op_ctx *ctx, cudnnHandle_t h,
                                       const cu_rnn_param *p, cu_rnn_state *s,
                                       const mxk_tensor *const *in, const void *w, void *temp,
                                       size_t ws_bytes, cu_rnn_io *io, mxk_error_sink *err) {
    size_t ybytes = (size_t)s->T * s->N * s->D * s->R * sizeof(float);
    MXK_SDK_CHECK(cu_rnn_buf_reserve(s, &s->y, ybytes, err));
    io->x = in[0]->data;
    io->w = w;
    io->hx = in[2]->data;
    io->cx = p->mode == CU_RNN_LSTM ? in[3]->data : NULL;
    io->y = s->y.ptr;
    MXK_SDK_CHECK(cu_rnn_run_forward(ctx, h, s, 1, io, temp, ws_bytes, err));
    cu_rnn_mark(s, in, cu_rnn_num_args(p));
    return MXK_OK;
}

/**
 * Forward: training (ctx->is_train) saves y and the reserve space in the state
 * and copies y to the output; inference writes the output directly (temp space
 * when it is not requested). The state outputs by their requests; the hidden
 * reserve output, when requested, is zeroed.
 */
static mxk_status cu_rnn_forward(const mxk_op_ctx *ctx, const void *param, void *state,
                                 const mxk_forward_args *args, mxk_error_sink *err) {
    const cu_rnn_param *p = param;
    cu_rnn_state *s = state;
    const uint32_t nv = cu_rnn_num_visible(p), last = nv;
    if (args->num_out != nv + 1)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT, "RNN expects %u outputs, got %u",
                             (unsigned)(nv + 1), (unsigned)args->num_out);
    cudnnHandle_t h;
    MXK_SDK_CHECK(cu_rnn_begin(ctx, p, s, args->in_data, args->num_in, &h, err));
    const mxk_op_req *req = args->req;
    const int training = ctx->is_train != 0;
    const size_t ybytes = (size_t)s->T * s->N * s->D * s->R * sizeof(float);
    size_t ws_bytes;
    MXK_SDK_CHECK(cu_rnn_ws_bytes(h, s, training, &ws_bytes, err));
    const int y_scratch = !training && req[0] == MXK_REQ_NULL;
    void *temp;
    MXK_SDK_CHECK(cu_rnn_temp(ctx, cu_rnn_align(ws_bytes) + (y_scratch ? ybytes : 0), &temp, err));
    const void *w;
    MXK_SDK_CHECK(cu_rnn_weights(ctx, s, args->in_data[1]->data, &w, err));
    cu_rnn_io io = {0};
    io.hy = nv > 1 && req[1] != MXK_REQ_NULL ? args->out_data[1]->data : NULL;
    io.cy = nv > 2 && req[2] != MXK_REQ_NULL ? args->out_data[2]->data : NULL;
    cudaStream_t st = cu_stream(ctx);
    if (training) {
        MXK_SDK_CHECK(
            cu_rnn_forward_saved(ctx, h, p, s, args->in_data, w, temp, ws_bytes, &io, err));
        if (req[0] != MXK_REQ_NULL)
            CU_CHECK(cudaMemcpyAsync(args->out_data[0]->data, s->y.ptr, ybytes,
                                     cudaMemcpyDeviceToDevice, st),
                     "RNN: output", err);
    } else {
        io.x = args->in_data[0]->data;
        io.w = w;
        io.hx = args->in_data[2]->data;
        io.cx = p->mode == CU_RNN_LSTM ? args->in_data[3]->data : NULL;
        io.y = y_scratch ? (char *)temp + cu_rnn_align(ws_bytes) : args->out_data[0]->data;
        MXK_SDK_CHECK(cu_rnn_run_forward(ctx, h, s, 0, &io, temp, ws_bytes, err));
    }
    const mxk_tensor *rt = args->out_data[last];
    if (req[last] != MXK_REQ_NULL && rt != NULL && rt->data != NULL)
        CU_CHECK(cudaMemsetAsync(rt->data, 0, mxk_sdk_shape_count(&rt->shape) * sizeof(float), st),
                 "RNN: reserve output", err);
    return MXK_OK;
}

/**
 * The parameter gradient: cudnnRNNBackwardWeights_v8 adds into a zeroed weight
 * space (the gradient array itself when the layouts agree, else the state's,
 * scattered back block by block).
 */
static mxk_status cu_rnn_backward_weights(const mxk_op_ctx *ctx, cudnnHandle_t h, cu_rnn_state *s,
                                          const cu_rnn_io *io, float *dparams, void *temp,
                                          size_t ws_bytes, mxk_error_sink *err) {
    cudaStream_t st = cu_stream(ctx);
    float *dw = dparams;
    if (!s->identity) {
        MXK_SDK_CHECK(cu_rnn_buf_reserve(s, &s->dwspace, s->wbytes, err));
        dw = s->dwspace.ptr;
    }
    CU_CHECK(cudaMemsetAsync(dw, 0, s->wbytes, st), "RNN: parameter gradient", err);
    CU_CHECK_DNN(cudnnRNNBackwardWeights_v8(h, s->rnn[1], CUDNN_WGRAD_MODE_ADD, s->dev_lens.ptr,
                                            s->xd, io->x, s->hd, io->hx, s->yd, io->y, s->wbytes,
                                            dw, ws_bytes, temp, s->reserve_used, s->reserve.ptr),
                 "cudnnRNNBackwardWeights_v8", err);
    for (uint32_t i = 0; !s->identity && i < s->num_blocks; i++) {
        const cu_rnn_block *b = &s->blocks[i];
        CU_CHECK(cudaMemcpyAsync(dparams + b->mx_off, dw + b->cu_off, b->count * sizeof(float),
                                 cudaMemcpyDeviceToDevice, st),
                 "RNN: parameter gradient", err);
    }
    return MXK_OK;
}

/** The tensor's data when requested (req not NULL), else NULL. */
static void *cu_rnn_grad(const mxk_backward_args *args, uint32_t i) {
    return i < args->num_in && args->req[i] != MXK_REQ_NULL ? args->in_grad[i]->data : NULL;
}

/**
 * Backward: cudnnRNNBackwardData_v8 (data and initial state gradients), then
 * cudnnRNNBackwardWeights_v8 when the parameter gradient is requested, from the
 * state's saved forward (recomputed first when it is not this call's: file
 * comment). sequence_length gets a zero gradient.
 */
static mxk_status cu_rnn_backward(const mxk_op_ctx *ctx, const void *param, void *state,
                                  const mxk_backward_args *args, mxk_error_sink *err) {
    const cu_rnn_param *p = param;
    cu_rnn_state *s = state;
    int needed = 0;
    for (uint32_t i = 0; i < args->num_in; i++)
        needed |= args->req[i] != MXK_REQ_NULL;
    if (!needed)
        return MXK_OK;
    const uint32_t nv = cu_rnn_num_visible(p);
    if (args->num_out_grad != nv || args->out_grad[0] == NULL || args->out_grad[0]->data == NULL)
        return mxk_sdk_error(err, MXK_ERR_INVALID_ARGUMENT,
                             "RNN: expected %u output gradients, got %u", (unsigned)nv,
                             (unsigned)args->num_out_grad);
    cudnnHandle_t h;
    MXK_SDK_CHECK(cu_rnn_begin(ctx, p, s, args->in_data, args->num_in, &h, err));
    const size_t xbytes = (size_t)s->T * s->N * s->C * sizeof(float);
    size_t ws_bytes;
    MXK_SDK_CHECK(cu_rnn_ws_bytes(h, s, 1, &ws_bytes, err));
    void *dx = cu_rnn_grad(args, 0), *temp;
    MXK_SDK_CHECK(cu_rnn_temp(ctx, cu_rnn_align(ws_bytes) + (dx ? 0 : xbytes), &temp, err));
    if (dx == NULL)
        dx = (char *)temp + cu_rnn_align(ws_bytes);
    const void *w;
    MXK_SDK_CHECK(cu_rnn_weights(ctx, s, args->in_data[1]->data, &w, err));
    cu_rnn_io io = {0};
    if (!cu_rnn_matches(s, args->in_data, args->num_in))
        MXK_SDK_CHECK(
            cu_rnn_forward_saved(ctx, h, p, s, args->in_data, w, temp, ws_bytes, &io, err));
    io.x = args->in_data[0]->data;
    io.w = w;
    io.hx = args->in_data[2]->data;
    io.cx = p->mode == CU_RNN_LSTM ? args->in_data[3]->data : NULL;
    io.y = s->y.ptr;
    const void *dhy = nv > 1 ? args->out_grad[1]->data : NULL;
    const void *dcy = nv > 2 ? args->out_grad[2]->data : NULL;
    void *dcx = p->mode == CU_RNN_LSTM ? cu_rnn_grad(args, 3) : NULL;
    if (p->seq_len) /* steps past a sequence get a zero gradient (cuDNN may leave them) */
        CU_CHECK(cudaMemsetAsync(dx, 0, xbytes, cu_stream(ctx)), "RNN: gradient of data", err);
    CU_CHECK_DNN(cudnnRNNBackwardData_v8(h, s->rnn[1], s->dev_lens.ptr, s->yd, io.y,
                                         args->out_grad[0]->data, s->xd, dx, s->hd, io.hx, dhy,
                                         cu_rnn_grad(args, 2), s->cd, io.cx, dcy, dcx, s->wbytes, w,
                                         ws_bytes, temp, s->reserve_used, s->reserve.ptr),
                 "cudnnRNNBackwardData_v8", err);
    float *dparams = cu_rnn_grad(args, 1);
    if (dparams != NULL)
        MXK_SDK_CHECK(cu_rnn_backward_weights(ctx, h, s, &io, dparams, temp, ws_bytes, err));
    void *dlen = p->seq_len ? cu_rnn_grad(args, cu_rnn_num_state_args(p)) : NULL;
    if (dlen != NULL)
        CU_CHECK(cudaMemsetAsync(dlen, 0, (size_t)s->N * sizeof(float), cu_stream(ctx)),
                 "RNN: gradient of sequence_length", err);
    return MXK_OK;
}

/** Registers the RNN kernel. */
mxk_status cu_register_rnn(mxk_registrar *reg, mxk_error_sink *err) {
    mxk_op_kernel_def k;
    mxk_sdk_kernel_def_init(&k);
    k.op_name = "RNN";
    k.parse_param = cu_rnn_parse;
    k.free_param = cu_param_free;
    k.supports = cu_rnn_supports;
    k.create_state = cu_rnn_create_state;
    k.destroy_state = cu_rnn_destroy_state;
    k.forward = cu_rnn_forward;
    k.backward = cu_rnn_backward;
    k.crosscheck_rtol = 1e-4;
    k.crosscheck_atol = 1e-5;
    return cu_register_kernel(reg, &k, err);
}
