"""mxk_rnn.h against MXNet 1.9.1's python/mxnet/rnn/rnn_cell.py.

For each case the same cells are built and unrolled by MXNet (under a fresh
NameManager) and by mxk (rnn_cells_tool): the JSON node lists must be equal
(op, name, attributes, inputs; so also the argument names and their order), and
the forward outputs and last states on the same random inputs must agree
(float32 tolerances). FusedRNNCell.unpack_weights followed by the unfused
stack's pack_weights (and FusedRNNCell.unpack_weights alone: per gate), and
FusedRNNCell.pack_weights of either form, must give mxk's numbers exactly.

usage: rnn_cells_conformance.py TOOL WORKDIR
"""
import os
import subprocess
import sys

import mxnet as mx
import numpy as np
from json_nodes import node_errors

TOOL, WORK = sys.argv[1], sys.argv[2]
rnn = mx.rnn

# name: (builder, length, layout, merge_outputs, data shape) as rnn_cells_tool.c's table
CASES = {
    "lstm": (lambda: rnn.LSTMCell(4), 3, "NTC", True, (2, 3, 3)),
    "lstm_forget_bias": (lambda: rnn.LSTMCell(3, prefix="lfb_", forget_bias=0.5), 2, "TNC",
                         False, (2, 2, 4)),
    "gru": (lambda: rnn.GRUCell(4), 3, "NTC", True, (2, 3, 3)),
    "gru_tnc": (lambda: rnn.GRUCell(3, prefix="g_"), 2, "TNC", False, (2, 3, 2)),
    "rnn_relu": (lambda: rnn.RNNCell(5, activation="relu"), 3, "NTC", False, (2, 3, 4)),
    "rnn_tanh": (lambda: rnn.RNNCell(5, prefix="tanh_"), 2, "TNC", True, (2, 2, 3)),
    "stack": (lambda: _stack(rnn.LSTMCell(6, prefix="lstm_l0_"), rnn.LSTMCell(4, prefix="lstm_l1_")),
              3, "NTC", True, (2, 3, 3)),
    "stack_dropout": (lambda: _stack(rnn.GRUCell(5, prefix="l0_"), rnn.DropoutCell(0.5),
                                     rnn.RNNCell(3, activation="relu", prefix="l1_")),
                      3, "TNC", False, (3, 2, 4)),
    "bi": (lambda: rnn.BidirectionalCell(rnn.LSTMCell(4, prefix="l_"), rnn.LSTMCell(4, prefix="r_")),
           3, "NTC", True, (2, 3, 3)),
    "bi_none": (lambda: rnn.BidirectionalCell(rnn.GRUCell(3, prefix="l_"),
                                              rnn.GRUCell(3, prefix="r_")),
                2, "TNC", None, (2, 2, 3)),
    "bi_false": (lambda: rnn.BidirectionalCell(rnn.LSTMCell(2, prefix="l_"),
                                               rnn.LSTMCell(2, prefix="r_")),
                 2, "NTC", False, (3, 2, 2)),
    "residual": (lambda: rnn.ResidualCell(rnn.RNNCell(4)), 3, "NTC", True, (2, 3, 4)),
    "residual_false": (lambda: rnn.ResidualCell(rnn.GRUCell(4)), 2, "TNC", False, (2, 2, 4)),
    "dropout_first": (lambda: _stack(rnn.DropoutCell(0.3), rnn.LSTMCell(3)), 2, "NTC", True,
                      (2, 2, 3)),
    "fused_lstm_bi": (lambda: rnn.FusedRNNCell(4, num_layers=2, mode="lstm", bidirectional=True,
                                               dropout=0.2).unfuse(), 3, "NTC", True, (2, 3, 3)),
    "fused_gru": (lambda: rnn.FusedRNNCell(4, num_layers=2, mode="gru").unfuse(), 2, "TNC", False,
                  (2, 2, 3)),
    # forward with is_train False: Dropout's mask is ones, so where() keeps the new values
    "zoneout_lstm": (lambda: rnn.ZoneoutCell(rnn.LSTMCell(3), zoneout_states=0.5), 3, "NTC", True,
                     (2, 3, 2)),
    "zoneout_gru_outputs": (lambda: rnn.ZoneoutCell(rnn.GRUCell(3), zoneout_outputs=0.5,
                                                    zoneout_states=0.25), 2, "TNC", False,
                            (2, 2, 3)),
}


def _stack(*cells):
    s = rnn.SequentialRNNCell()
    for c in cells:
        s.add(c)
    return s


def _flat(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def mxnet_group(name):
    build, length, layout, merge, _ = CASES[name]
    with mx.name.NameManager():
        cell = build()
        outputs, states = cell.unroll(length, mx.sym.var("data"), layout=layout,
                                      merge_outputs=merge)
    flat_states = []
    for s in _flat(states):
        flat_states.extend(_flat(s))  # BidirectionalCell nests [l_states, r_states]
    return mx.sym.Group(_flat(outputs) + flat_states)


def check_cell(name):
    d = os.path.join(WORK, name)
    os.makedirs(d, exist_ok=True)
    sym = mxnet_group(name)
    shapes = {"data": CASES[name][4]}
    arg_shapes, _, _ = sym.infer_shape(**shapes)
    rng = np.random.RandomState(sum(map(ord, name)))
    args = {a: mx.nd.array(rng.uniform(-1, 1, s)) for a, s in zip(sym.list_arguments(), arg_shapes)}
    mx.nd.save(os.path.join(d, "inputs.params"), args)
    subprocess.run([TOOL, "cell", name, d], check=True)
    with open(os.path.join(d, "mxk.json")) as f:
        errors = node_errors(sym.tojson(), f.read())
    exe = sym.bind(mx.cpu(), args)
    exe.forward(is_train=False)
    out = mx.nd.load(os.path.join(d, "mxk_out.params"))
    for i, w in enumerate(exe.outputs):
        g = out["out%d" % i].asnumpy()
        if g.shape != w.shape or not np.allclose(g, w.asnumpy(), rtol=1e-4, atol=1e-5):
            errors.append("output %d (%s) differs: max |diff| %s" % (
                i, sym.list_outputs()[i],
                np.abs(g - w.asnumpy()).max() if g.shape == w.shape else "shape"))
    return errors


def check_fused(mode, layers, hidden, bidir, num_input):
    cell = rnn.FusedRNNCell(hidden, num_layers=layers, mode=mode, bidirectional=bool(bidir))
    stack = cell.unfuse()
    pname = "%s_parameters" % mode
    m, b = {"lstm": 4, "gru": 3}.get(mode, 1), bidir + 1
    size = (num_input + hidden + 2) * hidden * m * b + (layers - 1) * m * hidden * (
        hidden + b * hidden + 2) * b  # FusedRNNCell.pack_weights' total
    rng = np.random.RandomState(layers * 100 + hidden)
    vec = mx.nd.array(rng.uniform(-1, 1, (size,)))
    gates = cell.unpack_weights({pname: vec})  # per gate, as save_rnn_checkpoint saves
    cells = stack.pack_weights(gates)  # the unfused cells' arrays
    tag = "%s_%d_%d_%d" % (mode, layers, hidden, bidir)
    src = os.path.join(WORK, tag + "_vec.params")
    mx.nd.save(src, {pname: vec})
    errors = []
    cfg = [mode, str(layers), str(hidden), str(bidir)]
    for how, unpacked in (("unpack", cells), ("unpack_gates", gates)):
        dst = os.path.join(WORK, tag + "_" + how + ".params")
        subprocess.run([TOOL, how] + cfg + [src, dst], check=True)
        got = mx.nd.load(dst)
        if sorted(got) != sorted(unpacked):
            errors.append("%s %s: names %s, MXNet %s" % (tag, how, sorted(got), sorted(unpacked)))
        for k, v in unpacked.items():
            if k in got and not (got[k].shape == v.shape and
                                 (got[k].asnumpy() == v.asnumpy()).all()):
                errors.append("%s %s: %s differs" % (tag, how, k))
        # pack MXNet's arrays back with mxk: MXNet's pack_weights' vector, exactly
        src2 = os.path.join(WORK, tag + "_" + how + "_in.params")
        dst2 = os.path.join(WORK, tag + "_" + how + "_re.params")
        mx.nd.save(src2, unpacked)
        subprocess.run([TOOL, "pack"] + cfg + [src2, dst2], check=True)
        back = mx.nd.load(dst2)["parameters"].asnumpy()
        want = cell.pack_weights(gates)[pname].asnumpy()
        if back.shape != want.shape or not (back == want).all():
            errors.append("%s: pack of the %s form differs from MXNet's" % (tag, how))
    return errors


def main():
    os.makedirs(WORK, exist_ok=True)
    failed = 0
    for name in CASES:
        errors = check_cell(name)
        print("%-18s %s" % (name, "ok" if not errors else "FAIL\n  " + "\n  ".join(errors)))
        failed += bool(errors)
    for cfg in [("lstm", 1, 3, 0, 2), ("lstm", 2, 3, 1, 4), ("gru", 3, 2, 0, 5),
                ("gru", 2, 2, 1, 3), ("rnn_tanh", 2, 4, 1, 3), ("rnn_relu", 1, 2, 0, 1)]:
        errors = check_fused(*cfg)
        print("%-18s %s" % ("fused %s" % (cfg,), "ok" if not errors else "FAIL\n  " +
                                                   "\n  ".join(errors)))
        failed += bool(errors)
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
