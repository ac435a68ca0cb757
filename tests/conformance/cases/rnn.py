"""Conformance cases of the fused recurrent operator RNN (plugins/cpu-blas/op_rnn.c; upstream
src/operator/rnn.cc, rnn-inl.h, rnn_impl.h): every mode (rnn_relu, rnn_tanh, lstm, gru), one
and two layers, uni- and bidirectional, with and without the state outputs, training and
inference. The flat parameter vector is drawn by the harness and given to both sides, so equal
numbers mean mxk reads MXNet's (cuDNN's) parameter layout and gate order.

Gradients are compared with grad_req write only: MXNet 1.9.1 refuses grad_req add for data
and the states ("AddTo is not supported for data"); mxk adds as requested (opcheck covers it).

projection_size (LSTMP): MXNet 1.9.1 CPU computes it in inference only (rnn_impl.h; training:
"No training support for LSTM with projection on CPU currently"), and only with state_outputs
(without them its kernel writes the projection through a null state pointer and crashes).
lstm_state_clip_* and use_sequence_length: MXNet 1.9.1 CPU ignores them (its MKLDNN kernel) or
refuses them (the native kernel: cuDNN only), so those cases are checked against rnn_ref below,
a float64 NumPy forward with the semantics of op_rnn.c's file comment (cuDNN's), on literal
inputs; the same reference also reproduces a plain case that MXNet checks. Gradients of these
paths and of dropout between layers: finite differences (tests/opcheck, test_opcheck.c) and
tests/cpu_blas_nn/test_rnn_ops.c.

The cases run MXNet's MKLDNN RNN kernel (the wheel's default): with mkldnn=False
(MXNET_MKLDNN_ENABLED=0) this wheel's fallback refuses lstm and state_outputs ("Check failed:
in_data.size() == num_inputs (4 vs. 3)", "out_data.size() == num_outputs (2 vs. 1)") and
returns a zero data gradient for the other modes, so it is no reference.
"""
import numpy as np

from case import Case

MODES = ("rnn_relu", "rnn_tanh", "lstm", "gru")
WRITE = {"data": "write"}  # a dict: every argument write, no add run


def _cases():
    out = []
    for mode in MODES:
        out += [
            Case("RNN", {"mode": mode, "state_size": 4, "num_layers": 1}, {"data": (5, 3, 2)},
                 grad_req=WRITE, name="RNN_%s_1layer" % mode),
            Case("RNN", {"mode": mode, "state_size": 3, "num_layers": 2, "bidirectional": True,
                         "state_outputs": True}, {"data": (4, 2, 3)},
                 grad_req=WRITE, name="RNN_%s_2layer_bidirectional" % mode),
            Case("RNN", {"mode": mode, "state_size": 3, "num_layers": 2, "state_outputs": True},
                 {"data": (3, 2, 5)}, grad_req=WRITE, name="RNN_%s_2layer_states" % mode),
            Case("RNN", {"mode": mode, "state_size": 2, "num_layers": 3, "bidirectional": True,
                         "p": 0.5}, {"data": (2, 3, 2)}, is_train=False,
                 name="RNN_%s_3layer_inference" % mode,
                 note="dropout p has no effect outside training; without gradients the executor "
                      "does not request the hidden reserve output: forward keeps it in temp space"),
        ]
    return out


GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def _layout(a, C):
    """The flat vector's layout: per layer direction [(offset, shape) of wx, wh(, whr)] and the
    offset of its bx (bh follows), then the total count."""
    H, L, D, P = a["state_size"], a["num_layers"], 2 if a.get("bidirectional") else 1, \
        a.get("projection_size")
    R, GH = P or H, GATES[a["mode"]] * H
    mats, off = [], 0
    for l in range(L):
        for _ in range(D):
            shapes = [(GH, C if l == 0 else D * R), (GH, R)] + ([(P, H)] if P else [])
            mats.append([])
            for r, c in shapes:
                mats[-1].append((off, (r, c)))
                off += r * c
    biases = [off + 2 * k * GH for k in range(L * D)]
    return mats, biases, off + 2 * L * D * GH


def _step(mode, H, x, h, c, wx, wh, bx, bh):
    """One step of every row: (h', c')."""
    gx, gh = x @ wx.T + bx, h @ wh.T + bh
    if mode in ("rnn_relu", "rnn_tanh"):
        v = gx + gh
        return (np.maximum(v, 0) if mode == "rnn_relu" else np.tanh(v)), c
    if mode == "gru":
        r, z = _sigmoid(gx[:, :H] + gh[:, :H]), _sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
        n = np.tanh(gx[:, 2 * H:] + r * gh[:, 2 * H:])
        return (1 - z) * n + z * h, c
    i, f = _sigmoid(gx[:, :H] + gh[:, :H]), _sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
    g, o = np.tanh(gx[:, 2 * H:3 * H] + gh[:, 2 * H:3 * H]), _sigmoid(gx[:, 3 * H:] + gh[:, 3 * H:])
    return o, f * c + i * g  # h' = o tanh(c') after the clip, in rnn_ref


def rnn_ref(a, inputs):
    """float64 forward of RNN (op_rnn.c's semantics): the visible outputs, by name."""
    x = np.asarray(inputs["data"], np.float64)
    w = np.asarray(inputs["parameters"], np.float64)
    T, N, C = x.shape
    mode, H, L = a["mode"], a["state_size"], a["num_layers"]
    D, P = 2 if a.get("bidirectional") else 1, a.get("projection_size")
    R = P or H
    hx = np.asarray(inputs["state"], np.float64)
    cx = np.asarray(inputs.get("state_cell", np.zeros((L * D, N, H))), np.float64)
    lens = np.asarray(inputs.get("sequence_length", np.full(N, T)))
    mats_at, biases, _ = _layout(a, C)
    GH = GATES[mode] * H
    hy, cy = np.zeros((L * D, N, R)), np.zeros((L * D, N, H))
    for l in range(L):
        y = np.zeros((T, N, D * R))
        for d in range(D):
            k = l * D + d
            mats = [w[o:o + r * c].reshape(r, c) for o, (r, c) in mats_at[k]]
            bx, bh = w[biases[k]:biases[k] + GH], w[biases[k] + GH:biases[k] + 2 * GH]
            h, c = hx[k], cx[k]
            for t in (range(T - 1, -1, -1) if d else range(T)):
                hn, cn = _step(mode, H, x[t], h, c, mats[0], mats[1], bx, bh)
                if mode == "lstm":
                    if "lstm_state_clip_min" in a:
                        cn = np.clip(cn, a["lstm_state_clip_min"], a["lstm_state_clip_max"])
                    hn = hn * np.tanh(cn)
                    if P:
                        hn = hn @ mats[2].T
                valid = (t < lens)[:, None]
                y[t, :, d * R:(d + 1) * R] = np.where(valid, hn, 0.0)
                h, c = np.where(valid, hn, h), np.where(valid, cn, c)
            hy[k], cy[k] = h, c
        x = y
    out = {"output0": x}
    if a.get("state_outputs"):
        out["output1"] = hy
        if mode == "lstm":
            out["output2"] = cy
    return out


def _ref_case(name, attrs, T, N, C, lens=None, scale=1.0, note=None):
    """An inference case on literal inputs, checked against rnn_ref (float64)."""
    rng = np.random.RandomState(sum(map(ord, name)))
    D = 2 if attrs.get("bidirectional") else 1
    L, H = attrs["num_layers"], attrs["state_size"]
    R = attrs.get("projection_size") or H
    count = _layout(attrs, C)[2]
    inputs = {"data": rng.uniform(-1, 1, (T, N, C)) * scale,
              "parameters": rng.uniform(-1, 1, count) * scale,
              "state": rng.uniform(-1, 1, (L * D, N, R))}
    if attrs["mode"] == "lstm":
        inputs["state_cell"] = rng.uniform(-1, 1, (L * D, N, H)) * scale
    if lens is not None:
        inputs["sequence_length"] = np.asarray(lens, np.float64)
    inputs = {k: v.astype(np.float32) for k, v in inputs.items()}
    shapes = {k: v.shape for k, v in inputs.items()}
    return Case("RNN", attrs, shapes, inputs=inputs, is_train=False, name=name,
                expected=rnn_ref(attrs, inputs), note=note)


def _projection_cases():
    """LSTMP in inference, against MXNet (its native CPU kernel; state_outputs: see above)."""
    return [
        Case("RNN", {"mode": "lstm", "state_size": 4, "num_layers": 1, "projection_size": 2,
                     "state_outputs": True}, {"data": (4, 3, 3)}, is_train=False,
             name="RNN_lstm_projection"),
        Case("RNN", {"mode": "lstm", "state_size": 5, "num_layers": 2, "projection_size": 3,
                     "bidirectional": True, "state_outputs": True}, {"data": (3, 2, 4)},
             is_train=False, name="RNN_lstm_projection_2layer_bidirectional"),
    ]


def _reference_cases():
    """Clipping and sequence lengths, which MXNet 1.9.1 CPU does not compute: rnn_ref."""
    lstm2 = {"mode": "lstm", "state_size": 3, "num_layers": 2, "bidirectional": True,
             "state_outputs": True}
    seq = {"use_sequence_length": True, "state_outputs": True}
    return [
        _ref_case("RNN_ref_lstm_plain", lstm2, 4, 3, 2,
                  note="rnn_ref on a case MXNet computes too (RNN_lstm_2layer_bidirectional)"),
        _ref_case("RNN_ref_lstm_projection", {"mode": "lstm", "state_size": 4, "num_layers": 2,
                                              "projection_size": 2, "state_outputs": True},
                  3, 2, 3, note="rnn_ref on a case MXNet computes too (LSTMP inference)"),
        _ref_case("RNN_ref_lstm_clip", dict(lstm2, lstm_state_clip_min=-0.4,
                                            lstm_state_clip_max=0.5), 5, 3, 2, scale=2.0),
        _ref_case("RNN_ref_lstm_clip_nan_range", dict(lstm2, lstm_state_clip_min=-0.2,
                                                      lstm_state_clip_max=0.2,
                                                      lstm_state_clip_nan=True), 3, 2, 2,
                  scale=2.0, note="lstm_state_clip_nan changes nothing without NaN"),
        _ref_case("RNN_ref_lstm_seqlen", dict(lstm2, use_sequence_length=True), 5, 4, 2,
                  lens=[5, 2, 1, 4]),
        _ref_case("RNN_ref_gru_seqlen", dict({"mode": "gru", "state_size": 3, "num_layers": 2,
                                              "bidirectional": True}, **seq), 4, 3, 3,
                  lens=[1, 4, 3]),
        _ref_case("RNN_ref_rnn_tanh_seqlen", dict({"mode": "rnn_tanh", "state_size": 2,
                                                   "num_layers": 1}, **seq), 4, 3, 2,
                  lens=[2, 4, 3]),
        _ref_case("RNN_ref_rnn_relu_seqlen", dict({"mode": "rnn_relu", "state_size": 3,
                                                   "num_layers": 2, "bidirectional": True},
                                                  **seq), 3, 2, 2, lens=[3, 1]),
    ]


CASES = _cases() + _projection_cases() + _reference_cases() + [
    Case("RNN", {"mode": "lstm", "state_size": 2, "num_layers": 1}, {"data": (3, 2)},
         error="argument 'data'", name="RNN_data_not_3d"),
]
