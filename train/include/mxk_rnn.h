/*
 * Recurrent cells of the trainer library: MXNet 1.9.1's symbolic rnn cells
 * (python/mxnet/rnn/rnn_cell.py) as a C API. A cell owns its parameter
 * variables; unroll builds the graph of `length` steps through the public symbol
 * API (kernel/include/mxk.h) with upstream's node names, operators and
 * attributes, so the JSON of an unrolled cell equals MXNet's node for node.
 * FusedRNNCell is represented by its configuration: unfuse builds the equivalent
 * stack of cells and pack/unpack convert the fused RNN operator's flat parameter
 * vector (src/operator/rnn-inl.h, cuDNN's layout) to and from the stack's arrays.
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

#ifdef __cplusplus
}
#endif

#endif /* MXK_RNN_H */
