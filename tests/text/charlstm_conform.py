"""`mxk train --network char-lstm` against MXNet 1.9.1 training the same network.

Both start from the same parameters (mxk trains one epoch; its checkpoint is the
common start), with the same symbol JSON (mxk's P-symbol.json, loaded by MXNet), the
same data (the vocabulary of mxk's P-lm.json; the text cut at 90% and read as
consecutive sequences whose labels are the next characters, whole batches only, in
order) and the same optimizer (Adam lr 0.01, wd 1e-5 on *_weight, gradient clip 1,
rescale 1/batch, fresh states). After each further epoch the training and
validation NLL and perplexity must agree within --tol (relative).

Usage: charlstm_conform.py MXK CONFIG_DIR WORK_DIR TEXT [--epochs N] [--tol X]
       [--num-hidden N] [--num-embed N] [--seq-len N] [--batch-size N] [--fused]
(run through tests/conformance/run.sh; also by bench/charlstm.sh on a real corpus).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import charlstm_mxnet
import mxnet as mx


def run_mxk(a, prefix, epochs, extra):
    cmd = [a.mxk, "--config-dir", a.confdir, "train", "--network", "char-lstm",
           "--data-text", a.text, "--model-prefix", prefix, "--num-epochs", str(epochs),
           "--num-hidden", str(a.num_hidden), "--num-embed", str(a.num_embed),
           "--seq-len", str(a.seq_len), "--batch-size", str(a.batch_size), "--no-progress",
           "--disp-batches", "0"] + (["--fused"] if a.fused else []) + extra
    t = time.time()
    subprocess.run(cmd, check=True, stderr=subprocess.DEVNULL if a.quiet else None)
    return time.time() - t


def metrics():
    """mxk's default metrics of char-lstm: NLL and perplexity (no ignored label)."""
    m = mx.metric.CompositeEvalMetric()
    m.add(mx.metric.NegativeLogLikelihood())
    m.add(mx.metric.Perplexity(None))
    return m


def main():
    p = argparse.ArgumentParser()
    for k in ("mxk", "confdir", "work", "text"):
        p.add_argument(k)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--tol", type=float, default=0.02)
    p.add_argument("--num-hidden", type=int, default=32)
    p.add_argument("--num-embed", type=int, default=16)
    p.add_argument("--seq-len", type=int, default=16)
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--fused", action="store_true")
    p.add_argument("--quiet", action="store_true")
    a = p.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    start = os.path.join(a.work, "start")
    run_mxk(a, start, 1, [])
    # the common start: epoch 1 of the first run, without its optimizer states
    prefix = os.path.join(a.work, "m")
    for suffix in ("-symbol.json", "-lm.json", "-0001.params"):
        shutil.copy(start + suffix, prefix + suffix)
    log = os.path.join(a.work, "m.jsonl")
    mxk_s = run_mxk(a, prefix, 1 + a.epochs, ["--load-epoch", "1", "--metrics-log", log])
    mxk_epochs = [json.loads(line) for line in open(log)]

    T, B = a.seq_len, a.batch_size
    (xt, yt), (xv, yv) = charlstm_mxnet.parts(a.text, prefix, T, B)
    mod = charlstm_mxnet.module(prefix, 1, B, T)
    train = charlstm_mxnet.batches(xt, yt, B)
    val = charlstm_mxnet.batches(xv, yv, B)
    failed = 0
    mx_s = 0.0
    for e in range(a.epochs):
        metric = metrics()
        train.reset()
        t = time.time()
        for batch in train:
            mod.forward_backward(batch)
            mod.update()
            mod.update_metric(metric, batch.label)
        mx.nd.waitall()
        mx_s += time.time() - t
        vmetric = metrics()
        mod.score(val, vmetric)
        ours = mxk_epochs[e]
        for part, m in (("train", metric), ("validation", vmetric)):
            for name, value in m.get_name_value():
                mine = ours[part][name]
                rel = abs(mine - value) / abs(value)
                ok = rel <= a.tol
                failed += not ok
                print("epoch %d %s-%s: mxk %.6f MXNet %.6f (rel %.2e)%s" % (
                    1 + e, part, name, mine, value, rel, "" if ok else "  FAIL"))
    print("train time: mxk %.1f s (whole runs), MXNet %.1f s (training passes), %d epochs" % (
        mxk_s, mx_s, a.epochs))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
