"""MXNet 1.9.1's side of the char-LSTM comparisons (tests/text/charlstm_conform.py,
bench/charlstm_peers.py): mxk's character-level data (NumPy only, also for the PyTorch
peer) and a Module on mxk's checkpoint (imports mxnet when called).
"""
import json

import numpy as np


def sequences(ids, T, B):
    """Consecutive sequences of T ids and their next-step labels, whole batches of B
    (mxk's char_iter in tools/mxk/train_text.c)."""
    n = (len(ids) - 1) // T // B * B
    x = np.array(ids[:n * T], dtype=np.float32).reshape(n, T)
    y = np.array(ids[1:n * T + 1], dtype=np.float32).reshape(n, T)
    return x, y


def parts(text_path, prefix, T, B):
    """The text encoded with PREFIX-lm.json's vocabulary, cut at 90% as mxk cuts it:
    ((x, y) of training, (x, y) of validation)."""
    vocab = json.load(open(prefix + "-lm.json"))["vocab"]
    ids = [vocab[c] for c in open(text_path, encoding="utf-8", newline="").read()]
    cut = int(len(ids) * 0.9 + 0.5)  # mxk: (int64_t)(n * 0.9 + 0.5), MXNet.jl round()
    return sequences(ids[:cut], T, B), sequences(ids[cut:], T, B)


def module(prefix, epoch, B, T):
    """A Module on PREFIX-symbol.json with PREFIX-EPOCH.params, bound for (B, T) batches,
    with mxk char-lstm's optimizer: Adam(lr 0.01, wd 1e-5, clip 1, rescale 1/B)."""
    import mxnet as mx
    sym = mx.sym.load(prefix + "-symbol.json")
    saved = mx.nd.load("%s-%04d.params" % (prefix, epoch))
    mod = mx.mod.Module(sym, data_names=("data",), label_names=("softmax_label",),
                        context=mx.cpu())
    mod.bind(data_shapes=[("data", (B, T))], label_shapes=[("softmax_label", (B, T))])
    mod.set_params({k[4:]: v for k, v in saved.items() if k.startswith("arg:")},
                   {k[4:]: v for k, v in saved.items() if k.startswith("aux:")})
    mod.init_optimizer(optimizer="adam", optimizer_params={
        "learning_rate": 0.01, "wd": 1e-5, "clip_gradient": 1.0, "rescale_grad": 1.0 / B})
    return mod


def batches(x, y, B):
    """NDArrayIter over (x, y) in order."""
    import mxnet as mx
    return mx.io.NDArrayIter(x, y, B, shuffle=False, label_name="softmax_label")
