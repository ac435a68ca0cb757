"""Conformance cases of the fused recurrent operator RNN (plugins/cpu-blas/op_rnn.c; upstream
src/operator/rnn.cc, rnn-inl.h, rnn_impl.h): every mode (rnn_relu, rnn_tanh, lstm, gru), one
and two layers, uni- and bidirectional, with and without the state outputs, training and
inference. The flat parameter vector is drawn by the harness and given to both sides, so equal
numbers mean mxk reads MXNet's (cuDNN's) parameter layout and gate order.

Gradients are compared with grad_req write only: MXNet 1.9.1 refuses grad_req add for data
and the states ("AddTo is not supported for data"); mxk adds as requested (opcheck covers it).
mxk's cpu-blas kernel does not support projection_size, lstm_state_clip_*,
use_sequence_length nor dropout between layers in training yet (tests/cli/op_test.sh op_rnn).

The cases run MXNet's MKLDNN RNN kernel (the wheel's default): with mkldnn=False
(MXNET_MKLDNN_ENABLED=0) this wheel's fallback refuses lstm and state_outputs ("Check failed:
in_data.size() == num_inputs (4 vs. 3)", "out_data.size() == num_outputs (2 vs. 1)") and
returns a zero data gradient for the other modes, so it is no reference.
"""
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


CASES = _cases() + [
    Case("RNN", {"mode": "lstm", "state_size": 2, "num_layers": 1}, {"data": (3, 2)},
         error="argument 'data'", name="RNN_data_not_3d"),
]
