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
import time

import numpy as np


def data(text_path, vocab, T, B):
    text = open(text_path, encoding="utf-8", newline="").read()
    ids = [vocab[c] for c in text]
    ids = ids[:int(len(ids) * 0.9 + 0.5)]
    n = (len(ids) - 1) // T // B * B
    x = np.array(ids[:n * T], dtype=np.float32).reshape(n, T)
    y = np.array(ids[1:n * T + 1], dtype=np.float32).reshape(n, T)
    return x, y


def run_mxnet(a, x, y):
    import mxnet as mx
    sym = mx.sym.load(a.prefix + "-symbol.json")
    saved = mx.nd.load(a.prefix + "-0001.params")
    B, T = a.batch_size, a.seq_len
    mod = mx.mod.Module(sym, context=mx.cpu())
    mod.bind(data_shapes=[("data", (B, T))], label_shapes=[("softmax_label", (B, T))])
    mod.set_params({k[4:]: v for k, v in saved.items() if k.startswith("arg:")},
                   {k[4:]: v for k, v in saved.items() if k.startswith("aux:")})
    mod.init_optimizer(optimizer="adam", optimizer_params={
        "learning_rate": 0.01, "wd": 1e-5, "clip_gradient": 1.0, "rescale_grad": 1.0 / B})
    it = mx.io.NDArrayIter(x, y, B, shuffle=False, label_name="softmax_label")
    metric = mx.metric.NegativeLogLikelihood()
    t = time.time()
    for batch in it:
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
    vocab = json.load(open(a.prefix + "-lm.json"))["vocab"]
    x, y = data(a.text, vocab, a.seq_len, a.batch_size)
    if a.framework == "torch":
        secs, nll = run_torch(a, x, y, len(vocab))
    else:
        secs, nll = run_mxnet(a, x, y)
    print(json.dumps({"framework": a.framework, "samples_per_sec": len(x) / secs,
                      "seconds": secs, "nll": nll}))


if __name__ == "__main__":
    main()
