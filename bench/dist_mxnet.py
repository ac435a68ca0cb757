#!/usr/bin/env python3
"""MXNet 1.9.1 peer of bench_dist_train.sh: one worker of a ps-lite job (upstream
python/mxnet/kvstore/kvstore.py, src/kvstore/kvstore_dist.h; the launcher sets
DMLC_ROLE=worker and the DMLC_PS_* variables), training mxk's MLP or LeNet on its
part of Fashion-MNIST with Module and kvstore dist_sync or dist_async, batch B per
worker. Prints one JSON line: this worker's training samples/s over the timed
batches (after 5 warm-up batches; data already in memory, batches pre-sliced).

usage: dist_mxnet.py mlp|lenet dist_sync|dist_async BATCH NUM_EXAMPLES
"""
import gzip
import json
import os
import sys
import time

import mxnet as mx
import numpy as np

DATA = os.environ.get("MXK_TEST_FMNIST", "/usr/share/datasets/fashion-mnist")


def load(kind):
    with gzip.open(os.path.join(DATA, "%s-images-idx3-ubyte.gz" % kind)) as f:
        x = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28)
    with gzip.open(os.path.join(DATA, "%s-labels-idx1-ubyte.gz" % kind)) as f:
        y = np.frombuffer(f.read(), np.uint8, offset=8)
    return (x.astype(np.float32) / 255.0 - 0.2860) / 0.3530, y.astype(np.float32)


def network(name):
    x = mx.sym.Variable("data")
    if name == "mlp":
        x = mx.sym.Flatten(x)
        for i, n in enumerate((128, 64)):
            x = mx.sym.Activation(mx.sym.FullyConnected(x, num_hidden=n, name="fc%d" % (i + 1)),
                                  act_type="relu")
        x = mx.sym.FullyConnected(x, num_hidden=10, name="fc3")
    else:
        for i, n in enumerate((20, 50)):
            x = mx.sym.Convolution(x, kernel=(5, 5), num_filter=n, name="conv%d" % (i + 1))
            x = mx.sym.Pooling(mx.sym.Activation(x, act_type="tanh"), pool_type="max",
                               kernel=(2, 2), stride=(2, 2))
        x = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.Flatten(x), num_hidden=500, name="fc1"),
                              act_type="tanh")
        x = mx.sym.FullyConnected(x, num_hidden=10, name="fc2")
    return mx.sym.SoftmaxOutput(x, name="softmax")


def main():
    net, kvtype, batch, examples = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    kv = mx.kv.create(kvtype)
    x, y = load("train")
    part = examples // kv.num_workers
    x, y = x[kv.rank * part:(kv.rank + 1) * part], y[kv.rank * part:(kv.rank + 1) * part]
    mod = mx.mod.Module(network(net), context=mx.cpu())
    mod.bind(data_shapes=[("data", (batch, 1, 28, 28))], label_shapes=[("softmax_label", (batch,))])
    mx.random.seed(0)
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(kvstore=kv, optimizer="sgd",
                       optimizer_params={"learning_rate": 0.1, "momentum": 0.0, "wd": 1e-4})
    batches = [mx.io.DataBatch([mx.nd.array(x[i:i + batch])], [mx.nd.array(y[i:i + batch])])
               for i in range(0, part - batch + 1, batch)]
    warm = 5
    for i, b in enumerate(batches):
        if i == warm:
            mx.nd.waitall()
            t0 = time.time()
        mod.forward_backward(b)
        mod.update()
    mx.nd.waitall()
    sps = (len(batches) - warm) * batch / (time.time() - t0)
    print(json.dumps({"net": net, "kvstore": kvtype, "rank": kv.rank, "batch": batch,
                      "train_sps": round(sps, 1)}))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
