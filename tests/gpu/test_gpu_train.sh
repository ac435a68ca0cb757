#!/bin/sh
# `mxk train --ctx gpu:0` against the same runs on cpu:0 (Fashion-MNIST).
# usage: test_gpu_train.sh MXK CONFDIR [WORKDIR]
# Exit 77 (skipped) without the data set (MXK_TEST_FMNIST, else
# /usr/share/datasets/fashion-mnist) or without a visible GPU.
#
# 1. MLP, 2 epochs of 10,000 examples, and LeNet, 1 epoch: the same seed on gpu:0
#    and cpu:0 reaches the same validation accuracy within 0.01 (absolute; the
#    kernels sum in other orders, so the runs drift apart by rounding only).
# 2. CPU -> GPU as a change of context: 1 epoch on cpu:0, saved, resumed on gpu:0
#    for the 2nd epoch, saved, then scored on cpu:0: the same accuracy within
#    0.005 as 2 epochs entirely on cpu:0 (the checkpoint carries parameters and
#    optimizer states across devices; the tolerance is the rounding drift of one
#    epoch on other kernels).
# 3. --ctx gpu:0,gpu:1 (data parallel, kvstore device) when 2 GPUs are visible:
#    within 0.01 of gpu:0 alone.
# Upstream: example/image-classification/train_mnist.py --gpus 0 (and 0,1), whose
# fit.py runs the same Module on mx.gpu(i) contexts.
set -u
mxk=$1 conf=$2 work=${3:-${TMPDIR:-/tmp}/mxk-gpu-train.$$}
data=${MXK_TEST_FMNIST:-/usr/share/datasets/fashion-mnist}
[ -r "$data/train-images-idx3-ubyte.gz" ] || { echo "SKIP: no Fashion-MNIST in $data"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export OPENBLAS_NUM_THREADS=1
fail() { echo "FAIL: $*" >&2; exit 1; }
train() { "$mxk" --config-dir "$conf" train --data-dir "$data" --disp-batches 0 --no-progress "$@"; }
# the last "Epoch[E] Validation-accuracy=V" of a log
val_acc() { grep "Validation-accuracy=" "$1" | tail -1 | sed 's/.*=//'; }
# |a - b| <= tol
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; }

# Is a GPU visible? The CLI's own check answers before any work.
if ! train --ctx gpu:0 --num-examples 100 --num-epochs 1 >probe.out 2>probe.log; then
    if grep -q -e "no GPU is visible" -e "no gpu device backend" probe.log; then
        echo "SKIP: $(grep -e '--ctx gpu:0' probe.log | head -1)"
        exit 77
    fi
    cat probe.log
    fail "mxk train --ctx gpu:0 failed"
fi

# 1. the same seed on both devices
for net in mlp:2 lenet:1; do
    name=${net%:*} epochs=${net#*:}
    for ctx in cpu:0 gpu:0; do
        train --network "$name" --num-examples 10000 --num-epochs "$epochs" --seed 1 \
            --ctx "$ctx" 2>"$name.$ctx.log" || { cat "$name.$ctx.log"; fail "$name on $ctx"; }
    done
    c=$(val_acc "$name.cpu:0.log") g=$(val_acc "$name.gpu:0.log")
    echo "$name: validation accuracy cpu:0 $c, gpu:0 $g"
    near "$c" "$g" 0.01 || fail "$name: gpu:0 accuracy $g is not within 0.01 of cpu:0's $c"
done

# 2. 1 epoch on the CPU, the 2nd on the GPU, scored on the CPU
common="--network mlp --num-examples 6000 --seed 3 --lr-step-epochs 2"
train $common --num-epochs 2 --model-prefix a/m 2>a.log || { cat a.log; fail "2 epochs on cpu"; }
train $common --num-epochs 1 --model-prefix b/m 2>b.log || { cat b.log; fail "epoch 1 on cpu"; }
train $common --num-epochs 2 --model-prefix b/m --load-epoch 1 --ctx gpu:0 2>b2.log ||
    { cat b2.log; fail "epoch 2 resumed on gpu:0"; }
grep -q 'Epoch\[1\] Train-accuracy' b2.log || fail "the resumed run did not train epoch 1"
score() { "$mxk" --config-dir "$conf" score --data-dir "$data" --no-progress --model-prefix "$1" \
    --load-epoch 2 --ctx cpu:0 2>/dev/null | sed -n 's/^accuracy=//p'; }
sa=$(score a/m) sb=$(score b/m)
echo "cpu,cpu: accuracy $sa; cpu,gpu (resumed): $sb"
[ -n "$sa" ] && [ -n "$sb" ] || fail "mxk score printed no accuracy"
near "$sa" "$sb" 0.005 || fail "cpu->gpu resume scores $sb, not within 0.005 of cpu-only $sa"
"$mxk" --config-dir "$conf" score --data-dir "$data" --no-progress --model-prefix b/m \
    --load-epoch 2 --ctx gpu:0 >g.txt 2>/dev/null || fail "mxk score --ctx gpu:0"
sg=$(sed -n 's/^accuracy=//p' g.txt)
near "$sa" "$sg" 0.005 || fail "score on gpu:0 $sg is not within 0.005 of $sa"

# 3. two GPUs, data parallel
if train --ctx gpu:1 --num-examples 100 --num-epochs 1 >/dev/null 2>probe1.log; then
    train --network mlp --num-examples 10000 --num-epochs 2 --seed 1 --ctx gpu:0,gpu:1 \
        --kv-store device 2>dp.log || { cat dp.log; fail "--ctx gpu:0,gpu:1"; }
    d=$(val_acc dp.log) g=$(val_acc mlp.gpu:0.log)
    echo "mlp: validation accuracy gpu:0,gpu:1 $d, gpu:0 $g"
    near "$d" "$g" 0.01 || fail "gpu:0,gpu:1 accuracy $d is not within 0.01 of gpu:0's $g"
else
    echo "skipped: --ctx gpu:0,gpu:1 ($(head -1 probe1.log))"
fi
echo "PASS"
