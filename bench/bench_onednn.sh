#!/bin/sh
# The oneDNN backend beside cpu-blas and the peers, on Fashion-MNIST: for each network
# (mlp, lenet: batch 100; resnet20: batch 128), N alternating rounds (3) of
#   training, 1 epoch: bench_train with MXK_BACKEND=cpu-blas, then onednn,cpu-blas;
#     PyTorch (PEER/train.py, OPENBLAS_NUM_THREADS=1) and MXNet 1.9.1 with MKLDNN
#     (PEER/mxnet_train.py, OMP_NUM_THREADS=2); resnet20 on the first NUM examples
#     (6400) of the epoch, the others on all 60,000;
#   inference: bench_infer (latency at batch 1 in us, samples/s at batch 100) for both
#     backends and bench/infer_peers.py for both peers.
# Prints every JSON line, then per network the medians and the ratios of onednn to
# each. A peer whose Python is missing is left out.
# usage: bench/bench_onednn.sh BUILD_DIR PEER_DIR [rounds] [nets] [num_examples]
#   MXNET_PYTHON (default /tmp/V/bin/python), TORCH_PYTHON (default /tmp/tv/bin/python)
set -eu
build=${1:?usage: bench_onednn.sh BUILD_DIR PEER_DIR [rounds] [nets] [num_examples]}
peer=${2:?usage: bench_onednn.sh BUILD_DIR PEER_DIR [rounds] [nets] [num_examples]}
rounds=${3:-3}
nets=${4:-mlp lenet resnet20}
num=${5:-6400}
here=$(dirname "$0")
mxpy=${MXNET_PYTHON:-/tmp/V/bin/python}
tpy=${TORCH_PYTHON:-/tmp/tv/bin/python}
"$mxpy" -c 'import mxnet' 2>/dev/null || mxpy=
"$tpy" -c 'import torch' 2>/dev/null || tpy=
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
data=/usr/share/datasets/fashion-mnist
for net in $nets; do
    ne=0
    pne=""
    if [ "$net" = resnet20 ]; then ne=$num; pne="--num-examples $num"; fi
    i=0
    while [ "$i" -lt "$rounds" ]; do
        for be in cpu-blas onednn,cpu-blas; do
            tag=$(echo "$be" | cut -d, -f1)
            MXK_BACKEND=$be "$build/bin/bench_train" "$net" 1 "$data" "$ne" | tee -a "$tmp/$net.train.$tag"
            MXK_BACKEND=$be "$build/bin/bench_infer" "$net" | tee -a "$tmp/$net.infer.$tag"
        done
        if [ -n "$tpy" ]; then
            # shellcheck disable=SC2086
            OPENBLAS_NUM_THREADS=1 "$tpy" "$peer/train.py" --model "$net" --epochs 1 --skip-infer \
                $pne 2>/dev/null | tee -a "$tmp/$net.train.torch"
            OPENBLAS_NUM_THREADS=1 "$tpy" "$here/infer_peers.py" torch "$peer" "$net" |
                tee -a "$tmp/$net.infer.torch"
        fi
        if [ -n "$mxpy" ]; then
            # shellcheck disable=SC2086
            OMP_NUM_THREADS=2 "$mxpy" "$peer/mxnet_train.py" --model "$net" --epochs 1 \
                --skip-infer $pne 2>/dev/null | tee -a "$tmp/$net.train.mxnet"
            OMP_NUM_THREADS=2 "$mxpy" "$here/infer_peers.py" mxnet "$peer" "$net" 2>/dev/null |
                tee -a "$tmp/$net.infer.mxnet"
        fi
        i=$((i + 1))
    done
done
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
field() { [ -s "$1" ] && grep -o "\"$2\": [0-9.]*" "$1" | sed 's/.*: //' | median; }
echo
for net in $nets; do
    for metric in train:train_sps infer:infer_latency_us_bs1 infer:infer_sps_bs100; do
        kind=${metric%%:*}
        key=${metric#*:}
        line="$net $key:"
        d=$(field "$tmp/$net.$kind.onednn" "$key" || true)
        for who in cpu-blas onednn torch mxnet; do
            v=$(field "$tmp/$net.$kind.$who" "$key" || true)
            [ -n "$v" ] || continue
            line="$line $who $v"
            if [ "$who" != onednn ] && [ -n "$d" ]; then
                line="$line (onednn/$who $(awk -v a="$d" -v b="$v" 'BEGIN { printf "%.2f", a / b }'))"
            fi
        done
        echo "$line"
    done
done
