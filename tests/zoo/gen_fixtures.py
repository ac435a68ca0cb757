#!/usr/bin/env python3
"""Writes the model-zoo fixtures of tests/zoo/fixtures/ with Apache MXNet 1.9.1.

Each fixture is the symbol JSON that upstream's
example/image-classification/symbols/<family>.py builds for one small
configuration (the table FIXTURES below, also read by tests/zoo/test_zoo.sh and
tests/conformance/cases/zoo.py), and NAME.params.txt "data=N,C,H,W TOTAL": the table's data shape and the "Total
params" of upstream's print_summary (python/mxnet/visualization.py) at it. The symbol files are imported from an MXNet source tree; none of
upstream's code is kept here.

  /tmp/V/bin/python tests/zoo/gen_fixtures.py SYMBOLS_DIR [OUT_DIR]

SYMBOLS_DIR: a checkout's example/image-classification/symbols (tag 1.9.1), e.g.
`git -C MIRROR archive 1.9.1 example/image-classification/symbols | tar -x -C /tmp`.
"""
import contextlib
import importlib.util
import io
import json
import os
import sys

import mxnet as mx

# name: (family, get_symbol keyword arguments, data shape used for the count)
FIXTURES = {
    "resnet20_28": ("resnet", dict(num_classes=10, num_layers=20, image_shape="1,28,28"), (1, 1, 28, 28)),
    "resnet18_224": ("resnet", dict(num_classes=1000, num_layers=18, image_shape="3,224,224"), (1, 3, 224, 224)),
    "resnet50_224": ("resnet", dict(num_classes=1000, num_layers=50, image_shape="3,224,224"), (1, 3, 224, 224)),
    "resnext50_224": ("resnext", dict(num_classes=1000, num_layers=50, image_shape="3,224,224", num_group=32),
                      (1, 3, 224, 224)),
    "resnext20_28": ("resnext", dict(num_classes=10, num_layers=20, image_shape="1,28,28"), (1, 1, 28, 28)),
    "vgg11": ("vgg", dict(num_classes=10, num_layers=11), (1, 3, 32, 32)),
    "vgg13_bn": ("vgg", dict(num_classes=10, num_layers=13, batch_norm=True), (1, 3, 32, 32)),
    "alexnet": ("alexnet", dict(num_classes=10), (1, 3, 224, 224)),
    "googlenet": ("googlenet", dict(num_classes=10), (1, 3, 224, 224)),
    "inception_bn_28": ("inception-bn", dict(num_classes=10, image_shape="1,28,28"), (1, 1, 28, 28)),
    "inception_bn_224": ("inception-bn", dict(num_classes=1000, image_shape="3,224,224"), (1, 3, 224, 224)),
    "inception_v3": ("inception-v3", dict(num_classes=1000), (1, 3, 299, 299)),
    "mobilenet": ("mobilenet", dict(num_classes=1000, alpha=0.25), (1, 3, 224, 224)),
    "mobilenetv2": ("mobilenetv2", dict(num_classes=1000, multiplier=0.5), (1, 3, 224, 224)),
}


def load(symbols_dir, family):
    spec = importlib.util.spec_from_file_location(family.replace("-", "_"),
                                                  os.path.join(symbols_dir, family + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def count_params(sym, data_shape):
    """The "Total params" line of upstream's print_summary (visualization.py)."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        mx.viz.print_summary(sym, shape={"data": data_shape})
    line = [l for l in buf.getvalue().splitlines() if l.startswith("Total params: ")][0]
    return int(line.split(": ")[1])


def main():
    symbols_dir = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures")
    os.makedirs(out, exist_ok=True)
    for name, (family, kwargs, shape) in FIXTURES.items():
        with mx.name.NameManager():  # automatic names count from 0 in each network
            sym = load(symbols_dir, family).get_symbol(**kwargs)
        with open(os.path.join(out, name + ".json"), "w") as f:
            f.write(json.dumps(json.loads(sym.tojson()), separators=(",", ":")) + "\n")
        with open(os.path.join(out, name + ".params.txt"), "w") as f:
            f.write("data=%s %d\n" % (",".join(map(str, shape)), count_params(sym, shape)))
        print(name, count_params(sym, shape), len(json.loads(sym.tojson())["nodes"]))


if __name__ == "__main__":
    main()
