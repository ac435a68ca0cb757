#!/bin/sh
# Alternating runs of mxk's bench_train and a PyTorch peer (PEER_DIR/train.py, taking
# --model and --epochs and printing a JSON line with "train_sps"),
# OPENBLAS_NUM_THREADS=1 for both, 1 epoch each, N rounds (3): prints every JSON line
# and the median training samples/s of each with the ratio mxk / peer. Without a
# peer dir (4th argument or $PEER_DIR) only mxk runs.
# usage: bench/bench_train.sh BUILD_DIR [mlp|lenet] [rounds] [peer_dir]
set -eu
build=${1:?usage: bench_train.sh BUILD_DIR [mlp|lenet] [rounds] [peer_dir]}
net=${2:-mlp}
rounds=${3:-3}
peer=${4:-${PEER_DIR:-}}
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d)
i=0
while [ "$i" -lt "$rounds" ]; do
    "$build/bin/bench_train" "$net" 1 | tee -a "$tmp/mxk"
    if [ -r "$peer/train.py" ] && /usr/bin/python3 -c 'import torch' 2>/dev/null; then
        /usr/bin/python3 "$peer/train.py" --model "$net" --epochs 1 2>/dev/null | tee -a "$tmp/peer"
    fi
    i=$((i + 1))
done
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
sps() { grep -o '"train_sps": [0-9.]*' "$1" | sed 's/.*: //' | median; }
m=$(sps "$tmp/mxk")
echo "mxk $net train samples/s (median): $m"
if [ -s "$tmp/peer" ]; then
    p=$(sps "$tmp/peer")
    echo "peer $net train samples/s (median): $p"
    awk -v a="$m" -v b="$p" 'BEGIN { printf "ratio mxk/peer: %.2f\n", a / b }'
fi
rm -rf "$tmp"
