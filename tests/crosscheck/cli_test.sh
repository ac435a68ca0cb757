#!/bin/sh
# Tests of `mxk crosscheck` and of MXK_CROSSCHECK in `mxk train`, one case per ctest
# test (registered in tests/crosscheck/CMakeLists.txt).
#
#   cli_test.sh CASE MXK JSON_CHECK BUILD_CONFIG_DIR WRONG_PLUGIN WORK_DIR
#
# WRONG_PLUGIN is libmxk-crosscheck-wrong.so (backend "wrong": Activation relu
# computing 1.01 * relu(x)); the cases build a config dir with it and cpu-blas.
# POSIX sh only.
set -u

if [ $# -ne 6 ]; then
    echo "usage: cli_test.sh CASE MXK JSON_CHECK BUILD_CONFIG_DIR WRONG_PLUGIN WORK_DIR" >&2
    exit 2
fi
CASE=$1 MXK=$2 JSON_CHECK=$3 CONF=$4 WRONG=$5 WORK=$6

. "$(dirname "$0")/../cli/cli_lib.sh"
cli_begin "$WORK" conf/plugins.d
unset MXK_CROSSCHECK MXK_CROSSCHECK_ITERATIONS

# The build's plugins and the wrong kernel in one config dir.
[ -f "$WRONG" ] || fail "test plugin $WRONG missing"
cp "$CONF/mxk.conf" "$WORK/conf/" 2>/dev/null
for conf in "$CONF"/plugins.d/*.conf; do
    lib=$(sed -n 's|^library *= *||p' "$conf")
    sed "s|^library *=.*|library = $(dirname "$CONF")/../lib/mxk/plugins/$lib|" "$conf" \
        >"$WORK/conf/plugins.d/$(basename "$conf")"
done
printf '[plugin]\nlibrary = %s\nenabled = true\n' "$WRONG" >"$WORK/conf/plugins.d/wrong.conf"

# run ARGS...: runs mxk with the config dir; stdout in $OUT, stderr in $ERR.
run() {
    last="$*"
    rc=0
    "$MXK" --config-dir "$WORK/conf" "$@" >"$OUT" 2>"$ERR" || rc=$?
}
# An MLP as MXNet writes it: data -> fc1 (16) -> relu1 -> fc2 (10) -> softmax.
MLP=$WORK/mlp-symbol.json
cat >"$MLP" <<'JSON'
{
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "fc1_weight", "attrs": {"num_hidden": "16"}, "inputs": []},
    {"op": "null", "name": "fc1_bias", "attrs": {"num_hidden": "16"}, "inputs": []},
    {"op": "FullyConnected", "name": "fc1", "attrs": {"num_hidden": "16"},
     "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
    {"op": "Activation", "name": "relu1", "attrs": {"act_type": "relu"}, "inputs": [[3, 0, 0]]},
    {"op": "null", "name": "fc2_weight", "attrs": {"num_hidden": "10"}, "inputs": []},
    {"op": "null", "name": "fc2_bias", "attrs": {"num_hidden": "10"}, "inputs": []},
    {"op": "FullyConnected", "name": "fc2", "attrs": {"num_hidden": "10"},
     "inputs": [[4, 0, 0], [5, 0, 0], [6, 0, 0]]},
    {"op": "null", "name": "softmax_label", "inputs": []},
    {"op": "SoftmaxOutput", "name": "softmax", "inputs": [[7, 0, 0], [8, 0, 0]]}
  ],
  "arg_nodes": [0, 1, 2, 5, 6, 8],
  "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  "heads": [[9, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10901]}
}
JSON
CHECK="crosscheck --symbol $MLP --shape data=4,20"

case $CASE in
crosscheck_agree)
    run $CHECK --backends cpu-blas --is-train --iterations 2
    expect_rc 0
    out_has "iteration 1: checked 4 nodes on cpu-blas against cpu-blas: all agree"
    out_has "iteration 2: checked 4 nodes on cpu-blas against cpu-blas: all agree"
    # tanh: the wrong backend declines it, cpu-blas runs it
    sed 's/"relu"/"tanh"/' "$MLP" >"$WORK/tanh.json"
    run crosscheck --symbol "$WORK/tanh.json" --shape data=4,20 --backends wrong,cpu-blas
    expect_rc 0
    out_has "checked 4 nodes on wrong against cpu-blas: all agree"
    ;;
crosscheck_diverge)
    run $CHECK --backends wrong,cpu-blas --is-train --seed 5
    expect_rc 1
    out_has "node 'relu1' (Activation) differs: output 'output' on wrong against cpu-blas"
    out_line "^  max abs error [0-9.e-]+, max rel error 0\\.01 \\(rtol 0\\.0001, atol 1e-05\\)$"
    out_line "^  worst element \\[[0-9]+\\]: [0-9.e-]+ on wrong, [0-9.e-]+ on cpu-blas$"
    # nothing on stderr: a divergence is a result, not an error
    [ -s "$ERR" ] && fail "stderr not empty"
    # a tolerance above the 1% error: all agree
    run $CHECK --backends wrong,cpu-blas --is-train --seed 5 --rtol 0.02
    expect_rc 0
    out_has "checked 4 nodes on wrong against cpu-blas: all agree"
    ;;
crosscheck_json)
    run $CHECK --backends wrong,cpu-blas --json
    expect_rc 1
    json diverged=true reference=cpu-blas backends=wrong,cpu-blas is_train=false runs#=1 \
        runs.0.node=relu1 runs.0.op=Activation runs.0.backend=wrong \
        runs.0.reference=cpu-blas "runs.0.result=output 'output'" runs.0.max_rel_err=0.01 \
        runs.0.nodes_checked=2 runs.0.nodes_on_reference=1 runs.0.worst_index? runs.0.value?
    run $CHECK --backends cpu-blas --json --iterations 3
    expect_rc 0
    json diverged=false runs#=3 runs.2.iteration=3 runs.2.nodes_checked=4 runs.2.diverged=false
    ;;
crosscheck_errors)
    run $CHECK --backends cpu-blas,nosuch
    expect_rc 1
    err_has "mxk: error: mxk_crosscheck_executor: unknown backend 'nosuch' (registered: "
    run crosscheck --symbol "$WORK/missing.json" --shape data=4,20 --backends cpu-blas
    expect_rc 1
    err_has "missing.json"
    run $CHECK --shape softmax_label=3 --backends cpu-blas
    expect_rc 1
    err_has "mxk: error: Error in operator softmax: SoftmaxOutput: argument 'label': expected (4,) or (4,10), got (3,)"
    ;;
crosscheck_usage)
    run crosscheck --shape data=4,20 --backends cpu-blas
    expect_rc 2
    err_has "no --symbol given"
    run crosscheck --symbol "$MLP" --backends cpu-blas
    expect_rc 2
    err_has "no --shape given"
    run crosscheck --symbol "$MLP" --shape data=4,20
    expect_rc 2
    err_has "no --backends given"
    run $CHECK --backends onednn,
    expect_rc 2
    err_has "option '--backends' needs a list TESTED[,...],REFERENCE of backend names"
    run $CHECK --backends cpu-blas --iterations 0
    expect_rc 2
    err_has "option '--iterations' needs an integer in [1, 1000000]"
    run $CHECK --backends cpu-blas --rtol -1
    expect_rc 2
    err_has "option '--rtol' needs a number >= 0"
    run $CHECK --backends cpu-blas --atol=x
    expect_rc 2
    err_has "option '--atol' needs a number >= 0"
    run $CHECK --backends cpu-blas --frobnicate
    expect_rc 2
    run crosscheck --help
    expect_rc 0
    out_has "usage: mxk crosscheck --symbol FILE"
    run --help
    out_line "^  crosscheck +run a symbol's nodes on two backends"
    ;;
crosscheck_train)
    if [ ! -d /usr/share/datasets/fashion-mnist ]; then
        echo "SKIP [$CASE]: Fashion-MNIST (dataset-fashion-mnist) is not installed"
        exit 77
    fi
    TRAIN="train --num-epochs 1 --num-examples 256 --batch-size 64"
    MXK_CROSSCHECK=cpu-blas MXK_CROSSCHECK_ITERATIONS=2 run $TRAIN
    expect_rc 0
    err_has "crosscheck: batch 1: 6 nodes agree with cpu-blas (6 ran on cpu-blas, 0 skipped)"
    err_has "crosscheck: batch 2: 6 nodes agree with cpu-blas (6 ran on cpu-blas, 0 skipped)"
    grep -F "crosscheck: batch 3" "$ERR" >/dev/null && fail "checked past MXK_CROSSCHECK_ITERATIONS"
    err_has "Trained on 256 examples per epoch"
    # the wrong relu stops training in the first batch, before any update
    MXK_CROSSCHECK=cpu-blas run --backend wrong,cpu-blas $TRAIN
    expect_rc 1
    err_has "mxk: error: crosscheck: node 'relu1' (Activation) on wrong differs from cpu-blas in batch 1: output 'output': max abs error "
    grep -F "Epoch[0] Train-accuracy" "$ERR" >/dev/null && fail "training went on"
    # without MXK_CROSSCHECK nothing is checked
    run --backend wrong,cpu-blas $TRAIN
    expect_rc 0
    grep -F "crosscheck: " "$ERR" >/dev/null && fail "checked without MXK_CROSSCHECK"
    MXK_CROSSCHECK=cpu-blas MXK_CROSSCHECK_ITERATIONS=x run $TRAIN
    expect_rc 1
    err_has "MXK_CROSSCHECK_ITERATIONS: expected a positive integer, got 'x'"
    ;;
*)
    echo "unknown case $CASE" >&2
    exit 2
    ;;
esac
exit 0
