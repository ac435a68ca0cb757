#!/bin/sh
# The GPU benchmarks on gpu(0), one JSON line each (also written to OUT_DIR/*.json):
#   lenet, resnet20   training samples/s of `mxk train --ctx gpu:0` on Fashion-MNIST
#                     (median Speedometer figure of one epoch of 30,000 examples;
#                     bench_gpu_train on synthetic 1x28x28 data when the data set is
#                     missing, "data": "synthetic")
#   resnet50          bench_gpu_train: ResNet-50, synthetic 3x224x224, batch 64
#   cudnn_limit       bench_cudnn_limit: ResNet-50's layers on cuDNN/cuBLAS directly,
#                     with mxk's resnet50 figure as a fraction of that limit
#   gpu_overhead      bench_gpu_overhead: microseconds per tiny GPU operation
#   gpu_copy          bench_gpu_copy: host<->device GB/s, pageable / pinned / peak
# Without a GPU every program prints "SKIP: no GPU" and the script exits 0.
# usage: bench/bench_gpu.sh BUILD_DIR [OUT_DIR]
set -u
build=${1:?usage: bench_gpu.sh BUILD_DIR [OUT_DIR]}
out=${2:-$build/gpu-results}
data=${MXK_TEST_FMNIST:-/usr/share/datasets/fashion-mnist}
mkdir -p "$out" || exit 1
bin=$build/bin
mxk() { "$bin/mxk" --config-dir "$build/etc/mxk" "$@"; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print -1 }'; }

# bench NAME COMMAND...: runs it, keeps its last JSON (or SKIP) line as OUT/NAME.json
bench() {
    name=$1
    shift
    "$@" >"$out/$name.log" 2>&1
    line=$(grep -e '^{' -e '^SKIP' "$out/$name.log" | tail -1)
    [ -n "$line" ] || line="{\"bench\": \"$name\", \"error\": \"exit $?, see $out/$name.log\"}"
    echo "$line" | tee "$out/$name.json"
}

# fmnist NAME BATCH NETWORK NUM_LAYERS: mxk train's median samples/s on gpu:0, or
# bench_gpu_train's on synthetic data without the data set
fmnist() {
    name=$1 batch=$2 net=$3 layers=$4
    if [ ! -r "$data/train-images-idx3-ubyte.gz" ]; then
        bench "$name" "$bin/bench_gpu_train" "$net" "$batch" 100 1,28,28 "$layers"
        return
    fi
    depth=""
    [ "$layers" = 0 ] || depth="--num-layers $layers"
    # shellcheck disable=SC2086 # $depth: no option or one with its value
    mxk train --ctx gpu:0 --data-dir "$data" --num-examples 30000 --num-epochs 1 \
        --batch-size "$batch" --disp-batches 20 --no-progress --network "$net" $depth \
        >"$out/$name.log" 2>&1
    rc=$?
    if grep -q -e "no GPU is visible" -e "no gpu device backend" "$out/$name.log"; then
        echo "SKIP: no GPU ($name)" | tee "$out/$name.json"
        return
    fi
    sps=$(sed -n 's/.*Speed: \([0-9.]*\) samples\/sec.*/\1/p' "$out/$name.log" | median)
    echo "{\"bench\": \"$name\", \"data\": \"fashion-mnist\", \"batch\": $batch, \"exit\": $rc, \"samples_per_sec\": $sps}" |
        tee "$out/$name.json"
}

fmnist lenet 100 lenet 0
fmnist resnet20 128 resnet 20
bench resnet50 "$bin/bench_gpu_train" resnet 64 30 3,224,224 50 1000
sps=$(grep -o '"samples_per_sec": [0-9.]*' "$out/resnet50.json" | sed 's/.*: //')
if [ -x "$bin/bench_cudnn_limit" ]; then
    bench cudnn_limit "$bin/bench_cudnn_limit" 64 20 ${sps:-0}
fi
bench gpu_overhead "$bin/bench_gpu_overhead"
if [ -x "$bin/bench_gpu_copy" ]; then
    bench gpu_copy "$bin/bench_gpu_copy"
fi
exit 0
