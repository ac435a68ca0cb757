/*
 * Recurrent cells of the trainer library: MXNet 1.9.1's symbolic rnn cells
 * (python/mxnet/rnn/rnn_cell.py) as a C API. A cell owns its parameter
 * variables; unroll builds the graph of `length` steps through the public symbol
 * API (kernel/include/mxk.h) with upstream's node names, operators and
 * attributes, so the JSON of an unrolled cell equals MXNet's node for node.
 * FusedRNNCell is represented by its configuration: unfuse builds the equivalent
 * stack of cells and pack/unpack convert the fused RNN operator's flat parameter
 * vector (src/operator/rnn-inl.h, cuDNN's layout) to and from the stack's arrays.
 * The language model (mxkt_rnn_lm_*) is example/rnn/bucketing/lstm_bucketing.py's
 * network over these cells, its one-step form for sampling and its description
 * file PREFIX-lm.json.
 *
 * Thread safety: a cell is not thread-safe (unroll advances its step counters,
 * as upstream's); distinct cells may be used from distinct threads.
 */
#ifndef MXK_RNN_H
#define MXK_RNN_H

#include "mxk_train.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A recurrent cell (upstream BaseRNNCell and its subclasses). */
typedef struct mxkt_rnn_cell mxkt_rnn_cell;

/**
 * RNNCell: h' = act(FC(x) + FC(h)). `activation` is an Activation act_type
 * ("tanh", "relu", "sigmoid", "softrelu"; NULL: "tanh"); `prefix` NULL: "rnn_".
 * Parameters <prefix>i2h_weight, i2h_bias, h2h_weight, h2h_bias; one state (0, H).
 * Errors: MXK_ERR_INVALID_ARGUMENT "rnn cell: num_hidden must be positive, got N",
 * "rnn cell: unknown activation 'A'"; MXK_ERR_OUT_OF_MEMORY.
 */
MXK_API mxk_status mxkt_rnn_cell_rnn(int32_t num_hidden, const char *activation, const char *prefix,
                                     mxkt_rnn_cell **out);

/**
 * LSTMCell (prefix NULL: "lstm_"): gates i, f, c, o sliced from
 * FC(x) + FC(h) (4H each step), states (h, c). <prefix>i2h_bias carries
 * upstream's initializer attribute __init__ = ["lstmbias", {"forget_bias": F}]
 * (init.LSTMBias). Errors as mxkt_rnn_cell_rnn.
 */
MXK_API mxk_status mxkt_rnn_cell_lstm(int32_t num_hidden, double forget_bias, const char *prefix,
                                      mxkt_rnn_cell **out);

/** GRUCell (prefix NULL: "gru_"), cuDNN's variant: gates r, z, o; one state. Errors as above. */
MXK_API mxk_status mxkt_rnn_cell_gru(int32_t num_hidden, const char *prefix, mxkt_rnn_cell **out);

/** An empty SequentialRNNCell (cells stacked in the order added). Errors: out of memory. */
MXK_API mxk_status mxkt_rnn_cell_sequential(mxkt_rnn_cell **out);

/**
 * Appends `cell` to a SequentialRNNCell, taking ownership of it (also on error).
 * Errors: MXK_ERR_INVALID_ARGUMENT "rnn cell: add needs a SequentialRNNCell";
 * MXK_ERR_OUT_OF_MEMORY.
 */
MXK_API mxk_status mxkt_rnn_cell_add(mxkt_rnn_cell *stack, mxkt_rnn_cell *cell);

/**
 * BidirectionalCell: `l` unrolled forwards, `r` over the reversed sequence, the
 * outputs concatenated on the feature axis (named <output_prefix>t<i>, or
 * <output_prefix>out when merged; output_prefix NULL: "bi_"). Takes ownership of
 * l and r (also on error). States: l's then r's. Errors: MXK_ERR_OUT_OF_MEMORY.
 */
MXK_API mxk_status mxkt_rnn_cell_bidirectional(mxkt_rnn_cell *l, mxkt_rnn_cell *r,
                                               const char *output_prefix, mxkt_rnn_cell **out);

/**
 * DropoutCell (prefix NULL: "dropout_"): Dropout(p) on each step's input (on
 * the whole merged sequence when unrolled with merge_outputs 1); no state;
 * p = 0 adds no node. Errors: MXK_ERR_INVALID_ARGUMENT
 * "rnn cell: dropout must be in [0, 1), got P".
 */
MXK_API mxk_status mxkt_rnn_cell_dropout(float p, const char *prefix, mxkt_rnn_cell **out);

/**
 * ResidualCell: the base cell's output plus its input (elemwise_add named
 * "<output>_plus_residual"); takes ownership of `base` (also on error).
 * Errors: MXK_ERR_OUT_OF_MEMORY.
 */
MXK_API mxk_status mxkt_rnn_cell_residual(mxkt_rnn_cell *base, mxkt_rnn_cell **out);

/**
 * ZoneoutCell: each step, where(Dropout(ones_like(v), p), v, previous v) on the
 * output (p = zoneout_outputs; previous output of the first step: `_zeros`
 * (0, 0)) and on each state (p = zoneout_states); p = 0 adds no node. Takes
 * ownership of `base` (also on error). Unlike upstream, which also accepts a
 * SequentialRNNCell, the base must be a step cell. Errors:
 * MXK_ERR_INVALID_ARGUMENT "rnn cell: ZoneoutCell needs an RNN, LSTM or GRU
 * cell", "rnn cell: zoneout must be in [0, 1), got P and Q".
 */
MXK_API mxk_status mxkt_rnn_cell_zoneout(mxkt_rnn_cell *base, float zoneout_outputs,
                                         float zoneout_states, mxkt_rnn_cell **out);

/** Frees a cell and the cells it owns. NULL: no-op. */
MXK_API void mxkt_rnn_cell_free(mxkt_rnn_cell *cell);

/** len(state_info): the states a cell's unroll takes and returns (LSTM 2, GRU/RNN 1, sums). */
MXK_API uint32_t mxkt_rnn_cell_num_states(const mxkt_rnn_cell *cell);

/** merge_outputs of mxkt_rnn_cell_unroll (upstream's None / False / True). */
typedef enum mxkt_rnn_merge {
    MXKT_RNN_MERGE_NONE = -1, /**< whatever each cell yields (a list for step cells) */
    MXKT_RNN_MERGE_FALSE = 0, /**< one symbol per step */
    MXKT_RNN_MERGE_TRUE = 1   /**< one symbol: the steps concatenated on the T axis */
} mxkt_rnn_merge;

/** The result of an unroll: symbols owned by it, freed by mxkt_rnn_unrolled_free. */
typedef struct mxkt_rnn_unrolled {
    mxk_symbol **outputs; /**< num_outputs: 1 when merged, else one per step */
    uint32_t num_outputs;
    mxk_symbol **states; /**< the last step's states, begin_state order (LSTM: h, c) */
    uint32_t num_states;
} mxkt_rnn_unrolled;

/**
 * Unrolls `cell` over `length` steps (BaseRNNCell.unroll and the overrides of
 * Sequential, Bidirectional, Dropout and Residual cells; ZoneoutCell steps
 * through BaseRNNCell.unroll): resets the step
 * counters, splits `inputs` on the T axis of `layout` ("NTC" or "TNC"; inputs
 * NULL: a variable named "data"; the caller keeps its handle), starts from
 * `begin_state` (mxkt_rnn_cell_num_states symbols, e.g. variables fed by a
 * sampler; the caller keeps them) or, when NULL, from upstream's begin_state()
 * (one `_zeros` node per state, named <prefix>begin_state_<k>, shape (0, H) so
 * the batch comes from shape inference, __layout__ NC), and
 * gathers the outputs as `merge` says. Automatic names (_plus0, split0, ...) are
 * counted per unroll, as MXNet's under a fresh mx.name.NameManager.
 * Errors: MXK_ERR_INVALID_ARGUMENT "rnn cell: length must be positive",
 * "rnn cell: begin_state K is NULL",
 * "rnn cell: layout must be NTC or TNC, got 'L'", "rnn cell: an empty
 * SequentialRNNCell", the kernel's errors of building a node ("network: ..."),
 * MXK_ERR_OUT_OF_MEMORY; *out is zeroed on error.
 */
MXK_API mxk_status mxkt_rnn_cell_unroll(mxkt_rnn_cell *cell, uint32_t length, mxk_symbol *inputs,
                                        mxk_symbol *const *begin_state, const char *layout,
                                        mxkt_rnn_merge merge, mxkt_rnn_unrolled *out);

/** Frees the symbols of an unroll and zeroes it. NULL: no-op. */
MXK_API void mxkt_rnn_unrolled_free(mxkt_rnn_unrolled *u);

/** The configuration of a FusedRNNCell (upstream's constructor arguments). */
typedef struct mxkt_fused_rnn {
    const char *mode;      /**< "rnn_relu", "rnn_tanh", "lstm" or "gru" */
    int32_t num_hidden;    /**< H */
    int32_t num_layers;    /**< L >= 1 */
    int32_t bidirectional; /**< 0 or 1 */
    float dropout;         /**< between layers (a DropoutCell in unfuse) */
    const char *prefix;    /**< NULL: "<mode>_" */
} mxkt_fused_rnn;

/**
 * FusedRNNCell.unfuse: a SequentialRNNCell of L cells of the mode (RNNCell
 * relu/tanh, LSTMCell, GRUCell) prefixed "<prefix>l<i>_", bidirectional layers as
 * BidirectionalCell(<prefix>l<i>_, <prefix>r<i>_, output_prefix <prefix>bi_l<i>_),
 * DropoutCell(prefix "<prefix>_dropout<i>_") between layers when dropout > 0.
 * Errors: MXK_ERR_INVALID_ARGUMENT "fused rnn: unknown mode 'M'", "fused rnn:
 * num_hidden and num_layers must be positive"; those of the cell constructors.
 */
MXK_API mxk_status mxkt_fused_rnn_unfuse(const mxkt_fused_rnn *f, mxkt_rnn_cell **out);

/**
 * The FusedRNN initializer (python/mxnet/initializer.py FusedRNN with init=None)
 * on a flat parameter vector of `size` values (the data's size C found from it):
 * every per-gate array of the unpacked parameters (names "l0_i2h_i_weight", ...,
 * without prefix, as upstream's FusedRNNCell(prefix='')) filled by `init` as the
 * global initializer (mxkt_initializer_fill: weights by init, biases 0), then the
 * LSTM biases ending in "_f_bias" (i2h and h2h) set to forget_bias; the arrays
 * packed back into `values`. Errors: those of the configuration (see
 * mxkt_fused_rnn_param_size), MXK_ERR_INVALID_ARGUMENT "NAME: N values are not
 * the parameters of a fused MODE of H hidden, L layers for any input size", and
 * mxkt_initializer_fill's. Pure, thread-safe.
 */
MXK_API mxk_status mxkt_fused_rnn_init_fill(const mxkt_fused_rnn *f, double forget_bias,
                                            const mxkt_initializer *init, const char *name,
                                            int64_t size, float *values);
/**
 * Number of elements of the fused operator's `parameters` vector for inputs of
 * `num_input` features: (I + H + 2) H G D + (L - 1) G H (H + D H + 2) D with G
 * gates and D directions (FusedRNNCell.pack_weights). Errors as unfuse, and
 * "fused rnn: num_input must be positive".
 */
MXK_API mxk_status mxkt_fused_rnn_param_size(const mxkt_fused_rnn *f, int64_t num_input,
                                             int64_t *size);

/**
 * Splits the float32 vector `parameters` (the fused operator's <prefix>parameters)
 * into named CPU arrays, for d in l[, r] and each layer l:
 *   - per_gate 0 (FusedRNNCell.unpack_weights then the unfused stack's
 *     pack_weights: the names of the cells of mxkt_fused_rnn_unfuse):
 *     <prefix><d><l>_i2h_weight (G H, I or D H), _h2h_weight (G H, H),
 *     _i2h_bias (G H), _h2h_bias (G H), gates stacked in upstream's order;
 *   - per_gate 1 (FusedRNNCell.unpack_weights, the form mx.rnn.save_rnn_checkpoint
 *     saves): <prefix><d><l>_i2h<gate>_weight (H, I or D H), ... with gate
 *     _i _f _c _o (lstm), _r _z _o (gru), none (rnn_relu, rnn_tanh).
 * Layout: FusedRNNCell._slice_weights (all weights layer by layer and direction by
 * direction, i2h then h2h, then all biases in the same order). The input size I is
 * derived from the vector's size. On success *num arrays and names, freed with
 * mxk_ndarray_list_free. Errors: MXK_ERR_INVALID_ARGUMENT "fused rnn: a parameter
 * vector of N elements fits no input size" (also a non-1-D or non-float32 array),
 * those of the config; the kernel's array errors. Outputs zeroed on error.
 */
MXK_API mxk_status mxkt_fused_rnn_unpack_weights(const mxkt_fused_rnn *f, mxk_ndarray *parameters,
                                                 int32_t per_gate, uint32_t *num, char ***names,
                                                 mxk_ndarray ***arrays);

/**
 * The inverse of mxkt_fused_rnn_unpack_weights (FusedRNNCell.pack_weights): a
 * new float32 CPU vector *parameters from arrays named in either form, each block
 * whole or by its gates (any order; other names ignored; the caller keeps the
 * arrays). Errors: MXK_ERR_NOT_FOUND "fused rnn: missing NAME" (a block given
 * neither way: its whole name; a missing gate: the gate's); MXK_ERR_SHAPE
 * "fused rnn: NAME has N elements, expected M", "fused rnn: NAME must be 2-D"
 * (the first i2h weight, whose columns give the input size); those of the
 * config; the kernel's array errors.
 */
MXK_API mxk_status mxkt_fused_rnn_pack_weights(const mxkt_fused_rnn *f, uint32_t num,
                                               const char *const *names, mxk_ndarray *const *arrays,
                                               mxk_ndarray **parameters);

/**
 * A recurrent language model: the network of upstream's
 * example/rnn/bucketing/lstm_bucketing.py (Embedding, a stack of recurrent layers
 * built with python/mxnet/rnn/rnn_cell.py, FullyConnected to the vocabulary) and
 * the char-LSTM sampler's one-step form of it.
 */
typedef struct mxkt_rnn_lm_config {
    char mode[16];      /**< "lstm", "gru", "rnn_tanh" or "rnn_relu" */
    int32_t num_layers; /**< L >= 1 */
    int32_t num_hidden; /**< H >= 1 */
    int32_t num_embed;  /**< E >= 1 */
    int32_t vocab_size; /**< output classes V >= 1 (ids 0..V-1) */
    /**
     * 1: one FusedRNNCell (the RNN operator, parameters "<mode>_parameters");
     * 0: the unrolled cells of FusedRNNCell.unfuse (mxkt_fused_rnn_unfuse: a
     * SequentialRNNCell of LSTMCell / GRUCell / RNNCell prefixed "<mode>_l<i>_")
     */
    int32_t fused;
    float dropout; /**< in [0, 1): between layers (DropoutCell unrolled, the operator's p fused) */
    char level[8]; /**< "char" or "word": how the text is tokenized (recorded in PREFIX-lm.json) */
} mxkt_rnn_lm_config;

/**
 * Checks a configuration. Errors (MXK_ERR_INVALID_ARGUMENT): "rnn lm: unknown mode
 * 'M' (lstm, gru, rnn_tanh or rnn_relu)", "rnn lm: num_layers must be >= 1, got N"
 * (also num_hidden, num_embed, vocab_size), "rnn lm: dropout must be in [0, 1), got
 * P", "rnn lm: level must be char or word, got 'L'". Thread-safe.
 */
MXK_API mxk_status mxkt_rnn_lm_check(const mxkt_rnn_lm_config *c);

/**
 * The training symbol of lstm_bucketing.py's sym_gen(seq_len): "data" (N, T) ids
 * -> Embedding(input_dim V, output_dim E, name "embed") -> the layers unrolled over
 * seq_len steps, layout NTC, merge_outputs (fused: swapaxes, RNN named
 * "<mode>_rnn" with begin states `_zeros` (L, 0, H), swapaxes, as
 * FusedRNNCell.unroll) -> Reshape(-1, H) -> FullyConnected(V, name "pred") ->
 * SoftmaxOutput(label Reshape("softmax_label", -1), name "softmax"): one output
 * (N*T, V), row n*T + t for sample n, step t. Node names, attributes and argument
 * names equal MXNet's for the same construction under a fresh NameManager
 * (embed_weight, lstm_l0_i2h_weight, ..., lstm_parameters, pred_weight,
 * pred_bias; "<mode>_parameters" carries FusedRNNCell's __init__ ["fusedrnn",
 * ...], which mxkt_initializer_fill_desc honours). The caller frees *out. Errors: those of
 * mxkt_rnn_lm_check, MXK_ERR_INVALID_ARGUMENT "rnn lm: seq_len must be >= 1", the cells' and the
 * kernel's errors of building a node, MXK_ERR_OUT_OF_MEMORY. Thread-safe.
 */
MXK_API mxk_status mxkt_rnn_lm_symbol(const mxkt_rnn_lm_config *c, uint32_t seq_len,
                                      mxk_symbol **out);

/**
 * The language model as a BucketingModule's sym_gen (mxkt_sym_gen of mxk_train.h;
 * lstm_bucketing.py's sym_gen): mxkt_rnn_lm_symbol(user, bucket_key, out), `user`
 * being the mxkt_rnn_lm_config (it must outlive the module). Errors: those of
 * mxkt_rnn_lm_symbol, MXK_ERR_INVALID_ARGUMENT "rnn lm: seq_len must be >= 1" also
 * for a key outside [1, 2^32). Thread-safe.
 */
MXK_API mxk_status mxkt_rnn_lm_sym_gen(int64_t bucket_key, void *user, mxk_symbol **out);

/**
 * One step of the model, for sampling (the char-LSTM sampler): "data" (N, 1) ids,
 * the parameters of mxkt_rnn_lm_symbol, and the begin states as input variables;
 * outputs: softmax(pred) (N, V) named "softmax_output" (the training symbol's
 * SoftmaxOutput without its label), then each next state in the order of the
 * state inputs. State inputs are named as begin_state(func=Variable) names them:
 * "<mode>_l<i>_begin_state_<k>" (unrolled; LSTM: k 0 = h, 1 = c per layer) or
 * "<mode>_begin_state_<k>" (fused); their shapes are given by
 * mxkt_rnn_lm_state_shape. On success *out (freed by the caller), *num_states and
 * *state_inputs, a NULL-terminated list of *num_states names freed with
 * mxk_string_list_free. Errors as mxkt_rnn_lm_symbol; outputs zeroed on error.
 * Thread-safe.
 */
MXK_API mxk_status mxkt_rnn_lm_step_symbol(const mxkt_rnn_lm_config *c, mxk_symbol **out,
                                           uint32_t *num_states, char ***state_inputs);

/**
 * The shape of every state of the step symbol for `batch` samples: (batch, H)
 * unrolled, (L, batch, H) fused (the RNN operator's state). No checks.
 */
MXK_API mxk_shape mxkt_rnn_lm_state_shape(const mxkt_rnn_lm_config *c, int64_t batch);

/**
 * Writes PREFIX-lm.json atomically (mxk_file_write): the model's description next to
 * its checkpoint, a JSON object {"format": "mxk-rnn-lm", "version": 1, "mode",
 * "num_layers", "num_hidden", "num_embed", "vocab_size", "fused", "dropout",
 * "level", "vocab": {token: id, ...}} (the vocabulary in its insertion order).
 * Errors: those of mxkt_rnn_lm_check, MXK_ERR_INVALID_ARGUMENT "rnn lm: the
 * vocabulary is empty", "rnn lm: id I of token 'T' is outside 0..V-1", "rnn lm: id I
 * is given to both 'A' and 'B'", the kernel's errors of mxk_file_write prefixed
 * "rnn lm: ", MXK_ERR_OUT_OF_MEMORY. Thread-safe.
 */
MXK_API mxk_status mxkt_rnn_lm_save(const char *prefix, const mxkt_rnn_lm_config *c,
                                    const mxkt_vocab *vocab);

/**
 * Reads PREFIX-lm.json (mxkt_rnn_lm_save) into *c and a new vocabulary *vocab (the
 * caller frees it), checking everything. Errors: mxk_file_read's, prefixed
 * "rnn lm: " (MXK_ERR_IO "rnn lm: cannot open model description 'PATH': No such file
 * or directory", ...); MXK_ERR_FORMAT "rnn lm: PATH: line L column C: <Jansson's
 * message>" (bad JSON, a token given twice), "rnn lm: PATH: not an mxk language
 * model description (\"format\" must be \"mxk-rnn-lm\")", "rnn lm: PATH: version V is
 * not supported (1)", "rnn lm: PATH: \"KEY\" must be an integer" (a string:
 * mode, level; a number: dropout; an object of token -> integer id: vocab), "rnn
 * lm: PATH: \"KEY\" is out of range" (integers beyond int32); then those of
 * mxkt_rnn_lm_check and of the vocabulary's ids as mxkt_rnn_lm_save (prefixed
 * "rnn lm: PATH: "); MXK_ERR_OUT_OF_MEMORY. On error *c and *vocab are zeroed.
 * Thread-safe.
 */
MXK_API mxk_status mxkt_rnn_lm_load(const char *prefix, mxkt_rnn_lm_config *c, mxkt_vocab **vocab);

/**
 * Draws a token id from one row of probabilities `p` (v entries, as the step
 * symbol's softmax gives them), the sampler's step: weights p^(1/temperature)
 * renormalized (computed as exp((log p - log max p) / temperature), so small
 * temperatures do not underflow), the ids where allowed[id] is 0 excluded
 * (allowed NULL: all allowed), and the inverse CDF at u = draw `i` of the Philox
 * stream (seed, stream) (u in [0, 1), 24 bits), so a draw depends only on (seed,
 * stream, i) and the row. *out gets the id. Errors (MXK_ERR_INVALID_ARGUMENT):
 * "rnn lm: temperature must be > 0, got T", "rnn lm: no token can be drawn (every
 * allowed probability is 0 or not finite)". Thread-safe.
 */
MXK_API mxk_status mxkt_rnn_lm_draw(const float *p, int32_t v, const uint8_t *allowed,
                                    double temperature, uint64_t seed, uint64_t stream, uint64_t i,
                                    int32_t *out);

#ifdef __cplusplus
}
#endif

#endif /* MXK_RNN_H */
