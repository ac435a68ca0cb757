#!/bin/sh
# char-LSTM training speed (the issue's network: 2 LSTM layers of 256, embedding 256,
# sequences of 32 characters, batch 32, Adam) on the first CHARS characters of the
# fortunes corpus, one epoch per run, alternating runs, medians of ROUNDS (3):
#   mxk cpu-blas and onednn, unrolled cells and the fused RNN operator (`mxk train
#   --network char-lstm`, the metrics log's samples_per_sec: the training passes);
#   MXNet 1.9.1 on the same symbol JSON and parameters (mx.rnn cells unrolled; its
#   fused RNN operator on CPU) and PyTorch's nn.LSTM (charlstm_peers.py).
# The threads are the machine's (mxk's default; MXNet and PyTorch use OpenMP's).
# Then the memory of bucketing: bench_bucketing on the first 60000 characters (a
# word-level LSTM with 5 buckets beside the largest bucket alone).
# usage: bench/bench_charlstm.sh BUILD_DIR [MXNET_PYTHON (V/bin/python)] [ROUNDS] [CHARS]
set -eu
build=${1:?usage: bench_charlstm.sh BUILD_DIR [MXNET_PYTHON] [ROUNDS] [CHARS]}
py=${2:-V/bin/python}
rounds=${3:-3}
chars=${4:-100000}
here=$(cd "$(dirname "$0")" && pwd)
MXK="$build/bin/mxk --config-dir $build/etc/mxk"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# the corpus as mxk reads it (sorted regular files, no .dat), cut at CHARS code points
python3 - "$chars" "$tmp/text.txt" <<'PY'
import os, sys
d = "/usr/share/games/fortunes"
names = sorted(n for n in os.listdir(d) if not n.startswith(".") and not n.endswith(".dat")
               and os.path.isfile(os.path.join(d, n)) and not os.path.islink(os.path.join(d, n)))
text = "".join(open(os.path.join(d, n), encoding="utf-8", newline="").read() for n in names)
open(sys.argv[2], "w", encoding="utf-8", newline="").write(text[:int(sys.argv[1])])
open(sys.argv[2] + ".words", "w", encoding="utf-8", newline="").write(text[:60000])
PY
# the common start for the peers: mxk's symbols and epoch-1 parameters, unrolled and fused
for v in unrolled fused; do
    $MXK train --network char-lstm --data-text "$tmp/text.txt" --num-epochs 1 --no-progress \
        --disp-batches 0 --model-prefix "$tmp/$v" $([ $v = fused ] && echo --fused) 2>/dev/null
done
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'; }
sps() { grep -o '"samples_per_sec": [0-9.e+]*' "$1" | sed 's/.*: //' | median; }
mxk_run() { # NAME BACKEND FLAGS
    rm -f "$tmp/log.jsonl"
    # shellcheck disable=SC2086
    MXK_BACKEND=$2 $MXK train --network char-lstm --data-text "$tmp/text.txt" --num-epochs 1 \
        --no-progress --disp-batches 0 --metrics-log "$tmp/log.jsonl" $3 2>/dev/null
    sps "$tmp/log.jsonl" >>"$tmp/$1"
}
n=0
while [ "$n" -lt "$rounds" ]; do
    mxk_run cb-unrolled cpu-blas ""
    mxk_run cb-fused cpu-blas --fused
    mxk_run dn-unrolled onednn,cpu-blas ""
    mxk_run dn-fused onednn,cpu-blas --fused
    if "$py" -c 'import mxnet' 2>/dev/null; then
        "$py" "$here/charlstm_peers.py" mxnet-unrolled "$tmp/text.txt" "$tmp/unrolled" \
            2>/dev/null | sps /dev/stdin >>"$tmp/mx-unrolled"
        "$py" "$here/charlstm_peers.py" mxnet-fused "$tmp/text.txt" "$tmp/fused" \
            2>/dev/null | sps /dev/stdin >>"$tmp/mx-fused"
    fi
    if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
        /usr/bin/python3 "$here/charlstm_peers.py" torch "$tmp/text.txt" "$tmp/unrolled" \
            2>/dev/null | sps /dev/stdin >>"$tmp/torch"
    fi
    n=$((n + 1))
done
echo "char-LSTM training, samples/s (medians of $rounds alternating runs, $chars characters):"
for r in cb-unrolled:"mxk cpu-blas, unrolled cells" cb-fused:"mxk cpu-blas, fused RNN" \
    dn-unrolled:"mxk onednn, unrolled cells" dn-fused:"mxk onednn, fused RNN" \
    mx-unrolled:"MXNet 1.9.1, mx.rnn unrolled" mx-fused:"MXNet 1.9.1, fused RNN" \
    torch:"PyTorch nn.LSTM"; do
    f=$tmp/${r%%:*}
    [ -s "$f" ] && printf '  %-32s %8.1f\n' "${r#*:}" "$(median <"$f")"
done
echo "bucketing memory (peak storage bytes; ratio = 5 buckets / the largest alone):"
MXK_CONFIG_DIR=$build/etc/mxk "$build/bin/bench_bucketing" "$tmp/text.txt.words" 2>/dev/null
