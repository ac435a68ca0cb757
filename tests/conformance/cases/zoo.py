"""The networks of `mxk train --network` (MXNet's example/image-classification/symbols,
built by train/net_*.c): the fixtures of tests/zoo/fixtures/, written by MXNet 1.9.1
(tests/zoo/gen_fixtures.py), loaded by both sides with random parameters and compared
(forward with is_train True and False, gradients of every argument, aux states;
run.py sets Dropout's p to 0 in nets).

Shapes are the smallest the networks take: the ImageNet variants with a global
pool run at 64x64, those with a fixed 7x7 / 8x8 pool (mobilenet, inception-bn,
inception-v3) at their upstream size with one image.

The deeper BatchNorm networks are compared twice (see Net.smooth in case.py): their
forward as is, and their gradients with ReLU / relu6 replaced by softrelu. With the
kinks, float32 rounding flips some activations' gradients and BatchNorm's backward
spreads the flips: on resnet18_224, against MXNet run in float64 on the same inputs,
mxk's first-layer gradients are within 1e-5 and MXNet's float32 ones 0.06 off
(conv0_weight, scale 2). The forward-only runs use MXNet without MKLDNN: bound
without gradients, its MKLDNN subgraph backend folds BatchNorm into the preceding
convolution with the moving statistics (sg_mkldnn_conv_bn), so MXNet's
forward(is_train=True) then normalises with the moving statistics instead of the
batch's, unlike its own CPU operators and mxk.
"""
from case import Net

FIX = "tests/zoo/fixtures/"


def _net(fixture, data, classes, suffix="", **kw):
    shapes = {"data": data, "softmax_label": (data[0],)}
    return Net("zoo_" + fixture + suffix, FIX + fixture + ".json", shapes,
               inputs={"softmax_label": ("int", 0, classes)}, **kw)


def _deep(fixture, data, classes, smooth=True):
    """A deeper network: its forward as is and (smooth) its gradients smoothed."""
    forward = _net(fixture, data, classes, suffix="_forward", grad_req="null", mkldnn=False)
    return [forward, _net(fixture, data, classes, suffix="_smooth", smooth=True)] if smooth else [
        forward]


CASES = [
    _net("resnet20_28", (2, 1, 28, 28), 10),
    _net("resnext20_28", (2, 1, 28, 28), 10),
    *_deep("resnet18_224", (2, 3, 64, 64), 1000),
    *_deep("resnet50_224", (2, 3, 64, 64), 1000),
    *_deep("resnext50_224", (2, 3, 64, 64), 1000),
    _net("vgg11", (2, 3, 32, 32), 10),
    _net("vgg13_bn", (2, 3, 32, 32), 10),
    _net("alexnet", (2, 3, 67, 67), 10),
    _net("googlenet", (2, 3, 64, 64), 10),
    _net("inception_bn_28", (2, 1, 28, 28), 10),
    # the two largest: forward only (their smoothed gradients agree too, at a minute more)
    *_deep("inception_bn_224", (1, 3, 224, 224), 1000, smooth=False),
    *_deep("inception_v3", (1, 3, 299, 299), 1000, smooth=False),
    *_deep("mobilenet", (1, 3, 224, 224), 1000),
    *_deep("mobilenetv2", (1, 3, 128, 128), 1000),
]
