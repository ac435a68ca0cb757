#!/usr/bin/env python3
"""ResNet-20 on Fashion-MNIST with Apache MXNet 1.9.1 exactly as `mxk train` trains it,
for the accuracy comparison of bench/bench_resnet20.sh: the same symbol (MXNet's
resnet.py, num_layers 20, image 1,28,28: tests/zoo/fixtures/resnet20_28.json, written
by MXNet itself), the same data in the same order (MXNet's MNISTIter, shuffled once
with the seed, [0,1] pixels; each epoch the first NUM examples, as mxk's MNISTIter
with num_examples), batch 128, SGD lr 0.1 momentum 0.9 wd 1e-4 with rescale 1/128,
Xavier(gaussian, in, 2), constant rate. Prints one line per epoch with the
validation accuracy on the test set (MXNet's MNISTIter drops the last partial
batch: 9,984 images).

  /tmp/V/bin/python bench/resnet20_mxnet.py DATA_DIR [epochs] [num_examples] [seed] [step]

`step` (an epoch, 0 for none): the rate is multiplied by 0.1 after that many epochs, as
`mxk train --lr-factor 0.1 --lr-step-epochs STEP` (fit.py's MultiFactorScheduler over
updates).

Seeds only fix each framework's own random draws (initial weights differ), and
one epoch varies by several points from seed to seed: one epoch of 59,904
examples gave MXNet 0.8455 / 0.7885 (seeds 0 / 1; MXNET_MKLDNN_ENABLED=0: 0.8764 /
0.8553) and mxk 0.8753 / 0.8061, so compare means over many seeds.

DATA_DIR holds the four Fashion-MNIST IDX files uncompressed (MXNet's MNISTIter
does not read .gz).
"""
import os
import sys

import mxnet as mx

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    data = sys.argv[1]
    epochs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    num = int(sys.argv[3]) if len(sys.argv) > 3 else 12800
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    step = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    batch = 128
    mx.random.seed(seed)
    train = mx.io.MNISTIter(image=os.path.join(data, "train-images-idx3-ubyte"),
                            label=os.path.join(data, "train-labels-idx1-ubyte"),
                            batch_size=batch, shuffle=True, flat=False, seed=seed, silent=True)
    train = mx.io.ResizeIter(train, num // batch)  # the first num examples, every epoch
    val = mx.io.MNISTIter(image=os.path.join(data, "t10k-images-idx3-ubyte"),
                          label=os.path.join(data, "t10k-labels-idx1-ubyte"),
                          batch_size=batch, shuffle=False, flat=False, silent=True)
    sym = mx.sym.load(os.path.join(ROOT, "tests/zoo/fixtures/resnet20_28.json"))
    mod = mx.mod.Module(sym, context=mx.cpu())
    mod.fit(train, eval_data=val, num_epoch=epochs,
            initializer=mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2),
            optimizer="sgd", kvstore=None,
            optimizer_params=dict(learning_rate=0.1, momentum=0.9, wd=1e-4,
                                  lr_scheduler=mx.lr_scheduler.MultiFactorScheduler(
                                      step=[step * (num // batch)], factor=0.1)
                                  if step else None),
            eval_end_callback=lambda p: print("Epoch[%d] Validation-accuracy=%f" % (
                p.epoch, p.eval_metric.get()[1]), flush=True))


if __name__ == "__main__":
    main()
