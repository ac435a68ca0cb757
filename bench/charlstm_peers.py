"""The char-LSTM peers of bench_charlstm.sh: one epoch of training on TEXT (consecutive
sequences of SEQ_LEN characters, the next character as the label, the first 90% of the
text, whole batches, in order: mxk's character level), printing one JSON line
{"framework", "samples_per_sec", "seconds", "nll"}.

  mxnet-unrolled / mxnet-fused: MXNet 1.9.1's Module on the symbol JSON mxk saved
      (mx.rnn's unrolled LSTMCells, or FusedRNNCell's RNN operator), Adam(lr 0.01,
      wd 1e-5, clip 1, rescale 1/batch), from mxk's parameters of epoch 1;
  torch: PyTorch nn.Embedding + nn.LSTM(num_layers=2, batch_first) + nn.Linear, cross
      entropy summed over steps, Adam(lr 0.01) with clip_grad_value_(1).

usage: charlstm_peers.py FRAMEWORK TEXT PREFIX [--batch-size 32] [--seq-len 32]
PREFIX: mxk's checkpoint prefix (PREFIX-symbol.json, PREFIX-0001.params, PREFIX-lm.json).
"""
import argparse
import json
import os
import sys
import time

# the data and MXNet's Module as the conformance test builds them
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "text"))


def charlstm_mxnet_data(a):
    """The training and validation parts of mxk's character level (numpy only)."""
    from charlstm_mxnet import parts
    return parts(a.text, a.prefix, a.seq_len, a.batch_size)


def run_mxnet(a, x, y):
    import charlstm_mxnet
    import mxnet as mx
    B = a.batch_size
    mod = charlstm_mxnet.module(a.prefix, 1, B, a.seq_len)
    metric = mx.metric.NegativeLogLikelihood()
    t = time.time()
    for batch in charlstm_mxnet.batches(x, y, B):
        mod.forward_backward(batch)
        mod.update()
        mod.update_metric(metric, batch.label)
    mx.nd.waitall()
    return time.time() - t, metric.get()[1]


def run_torch(a, x, y, V):
    import torch
    torch.manual_seed(0)
    E = H = 256

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(V, E)
            self.lstm = torch.nn.LSTM(E, H, num_layers=2, batch_first=True)
            self.pred = torch.nn.Linear(H, V)

        def forward(self, d):
            out, _ = self.lstm(self.embed(d))
            return self.pred(out.reshape(-1, H))

    net = Net()
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss(reduction="sum")
    xs, ys = torch.from_numpy(x).long(), torch.from_numpy(y).long()
    B = a.batch_size
    total, count = 0.0, 0
    t = time.time()
    for b in range(0, len(xs), B):
        opt.zero_grad()
        loss = loss_fn(net(xs[b:b + B]), ys[b:b + B].reshape(-1))
        (loss / B).backward()
        torch.nn.utils.clip_grad_value_(net.parameters(), 1.0)
        opt.step()
        total += loss.item()
        count += ys[b:b + B].numel()
    return time.time() - t, total / count


def main():
    p = argparse.ArgumentParser()
    p.add_argument("framework", choices=["mxnet-unrolled", "mxnet-fused", "torch"])
    p.add_argument("text")
    p.add_argument("prefix")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--seq-len", type=int, default=32)
    a = p.parse_args()
    (x, y), _ = charlstm_mxnet_data(a)
    if a.framework == "torch":
        vocab = json.load(open(a.prefix + "-lm.json"))["vocab"]
        secs, nll = run_torch(a, x, y, len(vocab))
    else:
        secs, nll = run_mxnet(a, x, y)
    print(json.dumps({"framework": a.framework, "samples_per_sec": len(x) / secs,
                      "seconds": secs, "nll": nll}))


if __name__ == "__main__":
    main()
