#!/bin/sh
# ResNet-20 training throughput (MXNet's example/image-classification/symbols/
# resnet.py, num_layers 20, image 1,28,28, batch 128, SGD lr 0.1 momentum 0.9 wd
# 1e-4, Xavier(gaussian, in, 2)) on Fashion-MNIST: `mxk train --network resnet`
# beside MXNet 1.9.1 (PEER/mxnet_train.py) and PyTorch (PEER/train.py) with the same
# symbol and settings, alternating, one epoch of NUM examples each, N rounds.
# Prints every run's samples/s, the medians and the ratios mxk / peer. A peer whose
# Python is missing is left out.
# usage: bench/bench_resnet20.sh BUILD_DIR PEER_DIR [rounds] [num_examples]
#   MXNET_PYTHON (default /tmp/V/bin/python): a venv with mxnet 1.9.1
#   TORCH_PYTHON (default /tmp/tv/bin/python, else /usr/bin/python3): one with torch
# mxk's samples/s: NUM / the epoch's "Time cost" (the training loop; the validation
# after it is not timed), as the peers time their training loop only. mxk validates
# on the first 1,000 test images (a copy of the data dir with the test set cut,
# DATA_DIR, default /usr/share/datasets/fashion-mnist), to spend the time on training.
set -eu
build=${1:?usage: bench_resnet20.sh BUILD_DIR PEER_DIR [rounds] [num_examples]}
peer=${2:?usage: bench_resnet20.sh BUILD_DIR PEER_DIR [rounds] [num_examples]}
rounds=${3:-3}
num=${4:-6400}
mxpy=${MXNET_PYTHON:-/tmp/V/bin/python}
tpy=${TORCH_PYTHON:-/tmp/tv/bin/python}
[ -x "$tpy" ] || tpy=/usr/bin/python3
"$mxpy" -c 'import mxnet' 2>/dev/null || mxpy=
"$tpy" -c 'import torch' 2>/dev/null || tpy=
data=${DATA_DIR:-/usr/share/datasets/fashion-mnist}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/data"
ln -s "$data/train-images-idx3-ubyte.gz" "$data/train-labels-idx1-ubyte.gz" "$tmp/data/"
/usr/bin/python3 - "$data" "$tmp/data" <<'PY'
import gzip, struct, sys
for name, header in (("t10k-images-idx3-ubyte", 16), ("t10k-labels-idx1-ubyte", 8)):
    raw = gzip.open("%s/%s.gz" % (sys.argv[1], name)).read()
    item = 784 if header == 16 else 1
    out = raw[:4] + struct.pack(">I", 1000) + raw[8:header] + raw[header:header + 1000 * item]
    with gzip.open("%s/%s.gz" % (sys.argv[2], name), "wb") as f:
        f.write(out)
PY
peer_sps() { grep -o '"train_sps": [0-9.]*' | head -1 | sed 's/.*: //'; }
i=0
while [ "$i" -lt "$rounds" ]; do
    OPENBLAS_NUM_THREADS=1 "$build/bin/mxk" train --network resnet --num-layers 20 \
        --image-shape 1,28,28 --batch-size 128 --lr 0.1 --mom 0.9 --wd 1e-4 --lr-factor 1 \
        --initializer "xavier(gaussian, in, 2)" --num-epochs 1 --num-examples "$num" \
        --disp-batches 0 --data-dir "$tmp/data" 2>"$tmp/log"
    t=$(sed -n 's/^Epoch\[0\] Time cost=//p' "$tmp/log")
    awk -v n="$num" -v t="$t" 'BEGIN { printf "%.1f\n", n / t }' | tee -a "$tmp/mxk" |
        sed 's/^/mxk samples\/s: /'
    grep 'Validation-accuracy' "$tmp/log"
    if [ -n "$mxpy" ]; then
        OMP_NUM_THREADS=2 "$mxpy" "$peer/mxnet_train.py" --model resnet20 --epochs 1 \
            --skip-infer --num-examples "$num" 2>/dev/null | peer_sps | tee -a "$tmp/mxnet" |
            sed 's/^/MXNet 1.9.1 samples\/s: /'
    fi
    if [ -n "$tpy" ]; then
        OPENBLAS_NUM_THREADS=1 "$tpy" "$peer/train.py" --model resnet20 --epochs 1 \
            --skip-infer --num-examples "$num" 2>/dev/null | peer_sps | tee -a "$tmp/torch" |
            sed 's/^/PyTorch samples\/s: /'
    fi
    i=$((i + 1))
done
median() { sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
m=$(median "$tmp/mxk")
echo "mxk ResNet-20 train samples/s (median of $rounds): $m"
for p in mxnet torch; do
    [ -s "$tmp/$p" ] || continue
    v=$(median "$tmp/$p")
    echo "$p ResNet-20 train samples/s (median of $rounds): $v"
    awk -v a="$m" -v b="$v" -v p="$p" 'BEGIN { printf "ratio mxk/%s: %.2f\n", p, a / b }'
done
