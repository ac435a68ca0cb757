"""mxkt_rnn_lm_symbol against MXNet 1.9.1's example/rnn/bucketing/lstm_bucketing.py.

For each case MXNet builds sym_gen(seq_len) under a fresh NameManager with the
same cells (a SequentialRNNCell of LSTMCell / GRUCell / RNNCell prefixed
"<mode>_l<i>_" with a DropoutCell between layers, as FusedRNNCell.unfuse stacks
them, or one FusedRNNCell prefixed "<mode>_") and mxk builds it with lm_tool:
the JSON node lists must be equal (op, name, attributes, inputs: so the argument
names and their order), the inferred argument shapes equal, and the forward
outputs (is_train False) on the same random parameters and ids agree.

usage: lm_conformance.py TOOL WORKDIR
"""
import os
import subprocess
import sys

import mxnet as mx
import numpy as np
from json_nodes import node_errors

TOOL, WORK = sys.argv[1], sys.argv[2]
rnn = mx.rnn

# (mode, fused, layers, hidden, embed, vocab, dropout, seq_len, batch)
CASES = [
    ("lstm", 0, 2, 6, 5, 7, 0.0, 4, 3),
    ("lstm", 0, 2, 4, 3, 5, 0.5, 3, 2),
    ("gru", 0, 2, 5, 4, 6, 0.0, 3, 2),
    ("rnn_tanh", 0, 1, 4, 3, 5, 0.0, 3, 2),
    ("rnn_relu", 0, 3, 3, 4, 6, 0.25, 2, 3),
    ("lstm", 1, 2, 6, 5, 7, 0.0, 4, 3),
    ("lstm", 1, 2, 4, 3, 5, 0.2, 3, 2),
    ("gru", 1, 2, 5, 4, 6, 0.0, 3, 2),
    ("rnn_tanh", 1, 1, 4, 3, 5, 0.0, 3, 2),
    ("rnn_relu", 1, 3, 3, 4, 6, 0.0, 2, 3),
]


def cell(mode, hidden, prefix):
    if mode == "lstm":
        return rnn.LSTMCell(num_hidden=hidden, prefix=prefix)
    if mode == "gru":
        return rnn.GRUCell(num_hidden=hidden, prefix=prefix)
    return rnn.RNNCell(num_hidden=hidden, activation=mode[4:], prefix=prefix)


def sym_gen(mode, fused, layers, hidden, embed, vocab, dropout, seq_len):
    """lstm_bucketing.py's sym_gen with the model's cells."""
    with mx.name.NameManager():
        if fused:
            stack = rnn.FusedRNNCell(hidden, num_layers=layers, mode=mode, dropout=dropout,
                                     prefix="%s_" % mode)
        else:
            stack = rnn.SequentialRNNCell()
            for i in range(layers):
                stack.add(cell(mode, hidden, "%s_l%d_" % (mode, i)))
                if dropout > 0 and i != layers - 1:
                    stack.add(rnn.DropoutCell(dropout, prefix="%s__dropout%d_" % (mode, i)))
        data = mx.sym.Variable("data")
        label = mx.sym.Variable("softmax_label")
        emb = mx.sym.Embedding(data=data, input_dim=vocab, output_dim=embed, name="embed")
        stack.reset()
        outputs = stack.unroll(seq_len, inputs=emb, merge_outputs=True)[0]
        pred = mx.sym.Reshape(outputs, shape=(-1, hidden))
        pred = mx.sym.FullyConnected(data=pred, num_hidden=vocab, name="pred")
        label = mx.sym.Reshape(label, shape=(-1,))
        return mx.sym.SoftmaxOutput(data=pred, label=label, name="softmax")


def check(case):
    mode, fused, layers, hidden, embed, vocab, dropout, seq_len, batch = case
    tag = "%s_f%d_l%d_p%g" % (mode, fused, layers, dropout)
    d = os.path.join(WORK, tag)
    os.makedirs(d, exist_ok=True)
    sym = sym_gen(mode, fused, layers, hidden, embed, vocab, dropout, seq_len)
    arg_shapes, _, _ = sym.infer_shape(data=(batch, seq_len), softmax_label=(batch, seq_len))
    rng = np.random.RandomState(len(tag) * 31 + layers)
    args = {}
    for name, shape in zip(sym.list_arguments(), arg_shapes):
        if name in ("data", "softmax_label"):
            args[name] = mx.nd.array(rng.randint(0, vocab, shape))
        else:
            args[name] = mx.nd.array(rng.uniform(-0.5, 0.5, shape))
    mx.nd.save(os.path.join(d, "inputs.params"), args)
    subprocess.run([TOOL, "symbol", mode, str(fused), str(layers), str(hidden), str(embed),
                    str(vocab), str(dropout), str(seq_len), str(batch), d], check=True)
    with open(os.path.join(d, "mxk.json")) as f:
        errors = node_errors(sym.tojson(), f.read())
    with open(os.path.join(d, "mxk_shapes.txt")) as f:
        ours = [(l.split()[0], tuple(int(x) for x in l.split()[1].split(","))) for l in f]
    theirs = list(zip(sym.list_arguments(), [tuple(s) for s in arg_shapes]))
    if ours != theirs:
        errors.append("arguments and shapes: MXNet %s, mxk %s" % (theirs, ours))
    exe = sym.bind(mx.cpu(), args)
    exe.forward(is_train=False)
    w = exe.outputs[0].asnumpy()
    g = mx.nd.load(os.path.join(d, "mxk_out.params"))["out0"].asnumpy()
    if g.shape != w.shape or not np.allclose(g, w, rtol=1e-4, atol=1e-5):
        errors.append("output differs: %s" % (np.abs(g - w).max() if g.shape == w.shape else
                                              "shapes %s, %s" % (g.shape, w.shape)))
    return tag, errors


def main():
    os.makedirs(WORK, exist_ok=True)
    failed = 0
    for case in CASES:
        tag, errors = check(case)
        print("%-24s %s" % (tag, "ok" if not errors else "FAIL\n  " + "\n  ".join(errors)))
        failed += bool(errors)
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
