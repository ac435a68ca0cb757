#!/usr/bin/env python3
"""ResNet-20 on Fashion-MNIST with Apache MXNet 1.9.1 exactly as `mxk train` trains it,
for the accuracy comparison of bench/bench_resnet20.sh: the same symbol (MXNet's
resnet.py, num_layers 20, image 1,28,28: tests/zoo/fixtures/resnet20_28.json, written
by MXNet itself), the same data in the same order (MXNet's MNISTIter, shuffled once
with the seed, [0,1] pixels; each epoch the first NUM examples, as mxk's MNISTIter
with num_examples), batch 128, SGD lr 0.1 momentum 0.9 wd 1e-4 with rescale 1/128,
Xavier(gaussian, in, 2), constant rate unless `step`. Prints one line per epoch with the
validation accuracy on the test set (MXNet's MNISTIter drops the last partial
batch: 9,984 images).

  /tmp/V/bin/python bench/resnet20_mxnet.py DATA_DIR [epochs] [num_examples] [seed] [step]

`step` (an epoch, 0 for none): the rate is multiplied by 0.1 after that many epochs, as
`mxk train --lr-factor 0.1 --lr-step-epochs STEP` (fit.py's MultiFactorScheduler over
updates).

Seeds only fix each framework's own random draws (initial weights differ), and
one epoch at a constant rate varies by several points from seed to seed (59,904
examples: MXNet 0.8455 / 0.7885 for seeds 0 / 1, mxk 0.8753 / 0.8061). The
comparison therefore uses 3 epochs of 19,968 examples with the rate cut to 0.01
after 2 (`3 19968 SEED 2` here; `mxk train ... --num-epochs 3 --num-examples 19968
--lr-factor 0.1 --lr-step-epochs 2`), where runs agree within about a point.
Measured (final validation accuracy, seeds 0-6):
  MXNet 1.9.1, MKLDNN:  0.8920 0.8792 0.8882 0.8787            mean 0.8845
  MXNet, MKLDNN off:    0.8941 0.8776 0.8880                   mean 0.8866
  mxk, onednn:          0.8919 0.8906 0.8889 0.8939 0.8999 0.8888 0.8914  mean 0.8922
  mxk, cpu-blas:        0.8922 0.8848                          mean 0.8885
mxk's 9 runs average 0.8914 and MXNet's 7 average 0.8854.

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
