#!/bin/sh
# Promises of `mxk train`, `mxk score` and `mxk predict` (tools/mxk/cmd_train.c),
# one case per ctest test (registered in tests/cli/CMakeLists.txt):
#   train_checks      every option is refused before any work, with its exact message
#                     (no data set and no plugin needed: tiny fake IDX label files)
#   train_json        the header, the summary line, --json per epoch (the metrics-log
#                     line, shortest exact numbers), score --json, predict --json
#   train_mismatch    resuming another network's checkpoint names the difference
#
#   train_cli_test.sh CASE MXK JSON_CHECK BUILD_CONFIG_DIR HAVE_CPU_BLAS WORK_DIR
# The last two cases need Fashion-MNIST ($MXK_TEST_FMNIST, else
# /usr/share/datasets/fashion-mnist) and the cpu-blas plugin: skipped (77) without.
# POSIX sh only.
set -u
if [ $# -ne 6 ]; then
    echo "usage: train_cli_test.sh CASE MXK JSON_CHECK BUILD_CONFIG_DIR HAVE_CPU_BLAS WORK_DIR" >&2
    exit 2
fi
CASE=$1 MXK=$2 JSON_CHECK=$3 CONF=$4 HAVE_CPU_BLAS=$5 WORK=$6
DATA=${MXK_TEST_FMNIST:-/usr/share/datasets/fashion-mnist}
export OPENBLAS_NUM_THREADS=1
. "$(dirname "$0")/cli_lib.sh"
cli_begin "$WORK"
cd "$WORK" || exit 1

# usage_is STATUS FIRST_LINE ARGS...: mxk ARGS exits STATUS, stderr's first line FIRST_LINE.
first_line_is() {
    want_rc=$1 want=$2
    shift 2
    run "$@"
    expect_rc "$want_rc"
    [ "$(head -n 1 "$ERR")" = "$want" ] || fail "first stderr line is not: $want"
}

need_data() {
    if [ "$HAVE_CPU_BLAS" != 1 ] || [ ! -r "$DATA/train-labels-idx1-ubyte.gz" ]; then
        echo "skipped: needs the cpu-blas plugin and $DATA"
        exit 77
    fi
}

# idx_labels FILE N: an IDX label file of N labels (magic 2049, count, N zero bytes)
idx_labels() {
    { printf '\000\000\010\001\000\000\000'; printf "\\$(printf '%03o' "$2")"; head -c "$2" /dev/zero; } >"$1"
}

case $CASE in
train_checks)
    first_line_is 2 "mxk train: --num-epochs must be at least 1" train --num-epochs 0
    first_line_is 2 "mxk train: --mom must be in [0, 1), not 2" train --mom 2
    first_line_is 2 "mxk train: --mom must be in [0, 1), not 1" train --mom 1
    first_line_is 2 "mxk train: --mom must be in [0, 1), not -0.5" train --mom -0.5
    first_line_is 2 "mxk train: --wd must be at least 0, not -1" train --wd -1
    first_line_is 2 "mxk train: option '--seed' needs an integer from 0 to 18446744073709551615" \
        train --seed -1
    first_line_is 2 "mxk train: --load-epoch needs --model-prefix" train --load-epoch 9
    # refused before the data is looked for (the data dir does not exist)
    first_line_is 2 "mxk train: bad --ctx 'tpu:0' (e.g. cpu:0,cpu:1)" train --data-dir none --ctx tpu:0
    # a device that does not exist, refused before any work (the message depends on
    # whether the cuda plugin is built and how many GPUs it sees)
    for cmd in train score; do
        run $cmd --data-dir none --model-prefix none --load-epoch 1 --ctx gpu:1000
        expect_rc 1
        head -n 1 "$ERR" | grep -qx \
            -e "mxk: error: --ctx gpu:1000: no GPU is visible (the cuda plugin reports 0 devices)" \
            -e "mxk: error: --ctx gpu:1000: no gpu device backend is loaded (the cuda plugin is not installed or was rejected: see mxk plugins)" \
            -e "mxk: error: --ctx gpu:1000: gpu(1000) does not exist ([0-9]* gpu device(s) visible)" ||
            fail "$cmd --ctx gpu:1000: $(head -n 1 "$ERR")"
    done
    first_line_is 2 "mxk train: unknown optimizer 'rmsprop' (sgd, adam)" \
        train --data-dir none --optimizer rmsprop
    first_line_is 2 "mxk train: initializer 'xavier(mag=2)': unknown argument 'mag'" \
        train --data-dir none --initializer "xavier(mag=2)"
    first_line_is 2 "mxk score: --load-epoch needs --model-prefix" score --load-epoch 1
    # RecordIO data (tools/mxk/train_rec.c): flags need --data-train, values checked
    first_line_is 2 "mxk train: --data-val needs --data-train" train --data-val v.rec
    first_line_is 2 "mxk train: --random-mirror needs --data-train" train --random-mirror 1
    first_line_is 2 "mxk train: option '--random-crop' needs an integer from 0 to 1" \
        train --random-crop 2
    first_line_is 2 "mxk train: --rgb-mean needs 3 numbers R,G,B, not '1,2'" \
        train --data-train t.rec --rgb-mean 1,2
    first_line_is 2 "mxk train: --rgb-std values must be positive, not 0" \
        train --data-train t.rec --rgb-std 1,0,1
    first_line_is 2 "mxk train: --min-random-area and --max-random-area need 0 < min <= max <= 1, not 0.5 and 0.25" \
        train --data-train t.rec --min-random-area 0.5 --max-random-area 0.25
    first_line_is 2 "mxk train: --data-val-idx needs --data-val" \
        train --data-train t.rec --data-val-idx v.idx
    # runtime checks come before anything is loaded or printed: one line each
    run train --load-epoch 9 --model-prefix x/m
    expect_rc 1
    err_is "mxk: error: --load-epoch 9: cannot read 'x/m-0009.params': No such file or directory"
    run score --load-epoch 3 --model-prefix x/m
    expect_rc 1
    err_is "mxk: error: --load-epoch 3: cannot read 'x/m-0003.params': No such file or directory"
    run train --data-train none.rec
    expect_rc 1
    err_is "mxk: error: --data-train: cannot open 'none.rec': No such file or directory"
    run train --metrics-log /proc/nope/m.jsonl
    expect_rc 1
    err_is "mxk: error: --metrics-log: cannot write '/proc/nope/m.jsonl': No such file or directory"
    mkdir logdir
    run train --metrics-log logdir
    expect_rc 1
    err_is "mxk: error: --metrics-log: cannot write 'logdir': it is a directory, not a regular file"
    if [ "$(id -u)" != 0 ]; then
        mkdir ro && chmod 555 ro
        run train --metrics-log ro/m.jsonl
        expect_rc 1
        err_is "mxk: error: --metrics-log: cannot write 'ro/m.jsonl': Permission denied"
    fi
    # --num-examples beyond the set: counted from the label file (plain and gzip)
    mkdir d && idx_labels d/train-labels-idx1-ubyte 5 && idx_labels d/t10k-labels-idx1-ubyte 3
    run train --data-dir d --num-examples 6
    expect_rc 1
    err_is "mxk: error: --num-examples 6 is more than the 5 examples of the training set in d"
    gzip d/train-labels-idx1-ubyte
    run train --data-dir d --num-examples 7
    expect_rc 1
    err_is "mxk: error: --num-examples 7 is more than the 5 examples of the training set in d"
    mkdir c && : >c/m-0002.params
    run score --data-dir d --model-prefix c/m --load-epoch 2 --num-examples 4
    expect_rc 1
    err_is "mxk: error: --num-examples 4 is more than the 3 examples of the test set in d"
    # a resumed run with nothing left to do trains nothing (fit.py) and says so
    run train --data-dir d --model-prefix c/m --load-epoch 2 --num-epochs 2
    expect_rc 0
    err_is "Nothing to train: the checkpoint of --load-epoch 2 has epochs 0 to 1 done, and --num-epochs 2 stops after epoch 1; pass --num-epochs 3 or more to train on"
    [ ! -s "$OUT" ] || fail "stdout not empty"
    ;;
train_json)
    need_data
    run train --num-examples 200 --num-epochs 2 --disp-batches 0 --json --metrics-log m.jsonl \
        --model-prefix c/m
    expect_rc 0
    cmp -s "$OUT" m.jsonl || fail "stdout is not the metrics log's lines"
    [ "$(wc -l <"$OUT")" -eq 2 ] || fail "not one line per epoch"
    for e in 0 1; do
        lr=0.1
        [ $e = 1 ] && lr=0.01 # the default step at epoch 1 of 2
        sed -n "$((e + 1))p" m.jsonl | "$JSON_CHECK" epoch=$e train.accuracy? validation.accuracy? \
            lr=$lr samples_per_sec? seconds? || fail "epoch $e's line"
    done
    # the numbers are the shortest exact ones: the validation accuracy (k / 10000) is
    # the log's %f value without its trailing zeros, and lr is 0.01, not 0.010000000000000002
    v=$(grep '^Epoch\[1\] Validation-accuracy=' "$ERR" | sed 's/.*=//')
    short=$(echo "$v" | sed 's/0*$//')
    grep -qF "\"validation\": {\"accuracy\": $short}, \"lr\": 0.01," m.jsonl ||
        fail "validation $short / lr 0.01 not in their shortest form: $(cat m.jsonl)"
    # the header and the summary
    err_line() { grep -qx -e "$1" "$ERR" || fail "no stderr line /$1/"; }
    err_line "Config dir: $CONF"
    err_line "Plugins: .*cpu-blas [0-9.]*.*io-recordio [0-9.]*.*"
    err_line "Backend cpu: [a-z-]* (.*FullyConnected.*)"
    err_line "Network: mlp, data (100,784), 109386 parameters"
    err_line "Data: Fashion-MNIST in $DATA: 200 training examples (of 60000), 10000 validation examples"
    err_line "Summary: 2 epochs (0 to 1) in [0-9.]* s, [0-9.]* samples/s; Train-accuracy=0\.[0-9]\{6\} Validation-accuracy=$v"
    [ "$(head -n 1 "$ERR")" = "Config dir: $CONF" ] || fail "the header does not come first"
    [ "$(tail -n 1 "$ERR" | cut -c1-8)" = "Summary:" ] || fail "the summary does not come last"
    # score --json: one object; the accuracy is the last validation's
    run score --model-prefix c/m --load-epoch 2 --json
    expect_rc 0
    json examples=10000 metrics.accuracy="$v" "metrics#=1"
    # predict --json: the classes of the plain output's rows
    run predict --model-prefix c/m --load-epoch 2 --num-examples 3
    expect_rc 0
    cut -f2 "$OUT" >classes.txt
    run predict --model-prefix c/m --load-epoch 2 --num-examples 3 --json
    expect_rc 0
    json examples=3 outputs=10 "classes#=3" "probabilities#=3" \
        classes.0="$(sed -n 1p classes.txt)" classes.2="$(sed -n 3p classes.txt)"
    run predict --model-prefix c/m --load-epoch 2 --json --output p.params
    expect_rc 0
    json examples=10000 outputs=10 file=p.params key=softmax_output
    [ -s p.params ] || fail "no p.params"
    ;;
train_mismatch)
    need_data
    run train --num-examples 100 --num-epochs 1 --disp-batches 0 --model-prefix c/m
    expect_rc 0
    run train --network lenet --num-examples 100 --num-epochs 2 --disp-batches 0 \
        --model-prefix c/m --load-epoch 1
    expect_rc 1
    grep -qx "mxk: error: c/m-0001.params does not match the network: it has 6 parameters the network lacks: arg:fc1_weight, arg:fc1_bias, arg:fc2_weight and 3 more; it lacks 8 of the network's: convolution0_weight, convolution0_bias, convolution1_weight and 5 more" "$ERR" ||
        fail "no mismatch message"
    grep -qx "mxk: note: the checkpoint holds the parameters of --network mlp: resume with --network mlp" "$ERR" ||
        fail "no note on the checkpoint's network"
    ! grep -q "Loaded model" "$ERR" || fail "'Loaded model' printed for a checkpoint that did not load"
    run train --symbol c/m-symbol.json --num-examples 100 --num-epochs 2 --disp-batches 0 \
        --model-prefix c/m --load-epoch 1
    expect_rc 0
    err_has "Loaded model c/m-0001.params"
    # a checkpoint of no built-in network (one FullyConnected layer "out"): the note
    # points at its symbol file
    cat >one.json <<'JSON'
{"nodes": [{"op": "null", "name": "data", "inputs": []},
 {"op": "null", "name": "out_weight", "inputs": []},
 {"op": "null", "name": "out_bias", "inputs": []},
 {"op": "FullyConnected", "name": "out", "attrs": {"num_hidden": "10"},
  "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
 {"op": "null", "name": "softmax_label", "inputs": []},
 {"op": "SoftmaxOutput", "name": "softmax", "inputs": [[3, 0, 0], [4, 0, 0]]}],
 "arg_nodes": [0, 1, 2, 4], "heads": [[5, 0, 0]]}
JSON
    run train --symbol one.json --num-examples 100 --num-epochs 1 --disp-batches 0 \
        --model-prefix o/m
    expect_rc 0
    run train --num-examples 100 --num-epochs 2 --model-prefix o/m --load-epoch 1
    expect_rc 1
    err_is "mxk: error: o/m-0001.params does not match the network: it has 2 parameters the network lacks: arg:out_weight, arg:out_bias; it lacks 6 of the network's: fc1_weight, fc1_bias, fc2_weight and 3 more
mxk: note: the checkpoint was saved with the network of 'o/m-symbol.json': resume with --symbol o/m-symbol.json or with the --network it was trained with"
    # a damaged checkpoint: the loader's message, which names the file once
    printf 'garbage' >o/m-0001.params
    run score --model-prefix o/m --load-epoch 1
    expect_rc 1
    err_is "mxk: error: Invalid NDArray file format: header: truncated: the list magic needs 8 bytes at offset 0 but only 7 remain (file 'o/m-0001.params')"
    ;;
*)
    echo "unknown case $CASE" >&2
    exit 2
    ;;
esac
echo "ok $CASE"
