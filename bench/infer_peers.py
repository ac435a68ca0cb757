#!/usr/bin/env python3
"""Inference speed of the peers' networks, measured as bench/bench_infer.c measures
mxk's: latency at batch 1 in microseconds (median of REPS forwards, each waited
for) and samples/s at batch 100 (median of 3 passes of 100 forwards), eval mode,
random weights and inputs.

  TORCH:  OPENBLAS_NUM_THREADS=1 /tmp/tv/bin/python bench/infer_peers.py torch PEER_DIR MODEL [REPS]
  MXNET:  OMP_NUM_THREADS=2 /tmp/V/bin/python bench/infer_peers.py mxnet PEER_DIR MODEL [REPS]

PEER_DIR holds the peers' train.py (PyTorch) and mxnet_train.py (MXNet 1.9.1);
their network definitions are used as they are. MODEL: mlp, lenet or resnet20.
Prints one JSON line.
"""
import json
import statistics
import sys
import time


def timed(fn, reps):
    fn()  # warm-up (primitive creation)
    lat = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        lat.append(time.perf_counter() - t0)
    return statistics.median(lat)


def torch_runners(peer, model):
    sys.path.insert(0, peer)
    import torch
    import train  # the PyTorch peer
    net = train.CFG[model]["cls"]().eval()
    torch.set_grad_enabled(False)
    one, hundred = torch.rand(1, 1, 28, 28), torch.rand(100, 1, 28, 28)
    return (lambda: net(one)), (lambda: net(hundred)), torch.get_num_threads()


def mxnet_runners(peer, model):
    sys.path.insert(0, peer)
    import mxnet as mx
    import mxnet_train  # the MXNet 1.9.1 peer
    sym = mxnet_train.CFG[model]["net"]()

    def bound(batch):
        mod = mx.mod.Module(sym, context=mx.cpu())
        mod.bind(data_shapes=[("data", (batch, 1, 28, 28))],
                 label_shapes=[("softmax_label", (batch,))], for_training=False)
        mod.init_params(mx.init.Uniform(0.1))
        data = mx.io.DataBatch([mx.nd.random.uniform(shape=(batch, 1, 28, 28))],
                               [mx.nd.zeros((batch,))])

        def run():
            mod.forward(data, is_train=False)
            mod.get_outputs()[0].wait_to_read()
        return run
    return bound(1), bound(100), None


def main():
    kind, peer, model = sys.argv[1], sys.argv[2], sys.argv[3]
    reps = int(sys.argv[4]) if len(sys.argv) > 4 else 300
    one, hundred, threads = (torch_runners if kind == "torch" else mxnet_runners)(peer, model)
    lat = timed(one, reps)
    passes = []
    hundred()
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(100):
            hundred()
        passes.append(time.perf_counter() - t0)
    print(json.dumps({"peer": kind, "model": model, "threads": threads,
                      "infer_latency_us_bs1": round(lat * 1e6, 1),
                      "infer_sps_bs100": round(10000 / statistics.median(passes), 1)}), flush=True)


if __name__ == "__main__":
    main()
