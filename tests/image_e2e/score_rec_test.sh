#!/bin/sh
# `mxk score` and `mxk predict` on RecordIO data: an MLP trained for one epoch on
# 2000 Fashion-MNIST images packed by `mxk im2rec` (--data-train/--data-val), then
# scored on the validation .rec from its checkpoint: the accuracy equals the
# training run's last validation accuracy exactly, and predict gives one class per
# record of the .rec (500). Skipped (77) without Fashion-MNIST.
#   score_rec_test.sh MXK CONFIG_DIR FMNIST_EXPORT WORK_DIR
set -u
. "$(dirname "$0")/e2e_lib.sh"
"$EXPORT" "$DATA/t10k-images-idx3-ubyte.gz" "$DATA/t10k-labels-idx1-ubyte.gz" img png 2500 ||
    fail "export"
mxk im2rec --list --recursive --train-ratio 0.8 all img >/dev/null || fail "im2rec --list"
mxk im2rec --color 0 --encoding .png all img >/dev/null || fail "im2rec pack"
[ -s all_train.rec ] && [ -s all_val.rec ] || fail "no all_train.rec / all_val.rec"
norm="--rgb-mean 0,0,0 --rgb-std 256,256,256"
# shellcheck disable=SC2086
mxk --json train --num-epochs 1 --no-progress --data-train all_train.rec --data-val all_val.rec \
    $norm --model-prefix ck/mlp >train.json 2>train.log || fail "train: $(tail -n 3 train.log)"
want=$(sed -n 's/.*"validation": {"accuracy": \([0-9.]*\)}.*/\1/p' train.json)
# shellcheck disable=SC2086
mxk --json score --model-prefix ck/mlp --load-epoch 1 --no-progress --data-val all_val.rec \
    --data-val-idx all_val.idx $norm >score.json 2>score.log || fail "score: $(cat score.log)"
got=$(sed -n 's/.*"accuracy": \([0-9.]*\).*/\1/p' score.json)
echo "train's validation accuracy $want, score's $got"
[ -n "$want" ] && [ "$want" = "$got" ] || fail "score's accuracy '$got' is not train's '$want'"
grep -q '"examples": 500' score.json || fail "score did not count 500 examples: $(cat score.json)"
# shellcheck disable=SC2086
mxk --json predict --model-prefix ck/mlp --load-epoch 1 --no-progress --data-val all_val.rec \
    $norm >predict.json 2>predict.log || fail "predict: $(cat predict.log)"
grep -q '"examples": 500, "outputs": 10' predict.json || fail "predict: $(head -c 200 predict.json)"
# usage: --num-examples has no meaning for a .rec
mxk score --model-prefix ck/mlp --load-epoch 1 --data-val all_val.rec --num-examples 5 \
    2>err.txt && fail "--num-examples with --data-val was accepted"
[ "$(head -n 1 err.txt)" = "mxk score: --num-examples does not apply to --data-val" ] ||
    fail "unexpected: $(head -n 1 err.txt)"
