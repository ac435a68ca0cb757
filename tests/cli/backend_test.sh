#!/bin/sh
# Tests of the backend views of the `mxk` command line, one case per ctest test
# (tests/cli/CMakeLists.txt): `mxk plugins` marking operators with kernels of
# several backends, `mxk op describe` (backends, preference and its source,
# [op_backend] override, the winner), `mxk symbol summary --backends` and
# `--profile`.
#
#   backend_test.sh CASE MXK JSON_CHECK BUILD_CONFIG_DIR HAVE_CPU_BLAS SECOND_PLUGIN WORK_DIR
#
# SECOND_PLUGIN is the cross-check's test plugin (tests/crosscheck/wrong_plugin.c):
# backend "wrong" with a CPU kernel of Activation that declines act_type tanh,
# a second backend whose choices do not depend on which oneDNN kernels are built.
# The cases that need it build their own config dir (cpu-blas and that plugin) and
# are skipped when it is not built; every case is skipped without cpu-blas.
# POSIX sh only.
set -u

if [ $# -ne 7 ]; then
    echo "usage: backend_test.sh CASE MXK JSON_CHECK BUILD_CONFIG_DIR HAVE_CPU_BLAS SECOND_PLUGIN WORK_DIR" >&2
    exit 2
fi
CASE=$1 MXK=$2 JSON_CHECK=$3 CONF=$4 HAVE_CPU_BLAS=$5 SECOND=$6 WORK=$7

. "$(dirname "$0")/cli_lib.sh"
cli_begin "$WORK"

# run ARGS...: runs mxk; stdout in $OUT, stderr in $ERR, status in $rc.
run() {
    last="$*"
    rc=0
    "$MXK" "$@" >"$OUT" 2>"$ERR" || rc=$?
}

need_cpu_blas "the cpu-blas plugin"

# two_backends [MXK_CONF_BODY]: a config dir ($DIR) with cpu-blas and the second
# backend's plugin, and mxk.conf holding MXK_CONF_BODY (default: backend = cpu-blas).
DIR=$WORK/conf
two_backends() {
    if [ ! -f "$SECOND" ]; then
        echo "SKIP [$CASE]: the second backend's test plugin ($SECOND) is not built"
        exit 77
    fi
    mkdir -p "$DIR/plugins.d" || exit 1
    cp "$CONF/plugins.d/cpu-blas.conf" "$DIR/plugins.d/" || exit 1
    printf '[plugin]\nlibrary = %s\nenabled = true\n' "$SECOND" >"$DIR/plugins.d/wrong.conf"
    printf '%b\n' "${1:-[mxk]\nbackend = cpu-blas}" >"$DIR/mxk.conf"
}

# data -> fc1 -> relu1 (Activation relu) -> tanh1 (Activation tanh) -> fc2 -> softmax
NET=$WORK/net-symbol.json
cat >"$NET" <<'JSON'
{
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "fc1_weight", "inputs": []},
    {"op": "null", "name": "fc1_bias", "inputs": []},
    {"op": "FullyConnected", "name": "fc1", "attrs": {"num_hidden": "6"},
     "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
    {"op": "Activation", "name": "relu1", "attrs": {"act_type": "relu"}, "inputs": [[3, 0, 0]]},
    {"op": "Activation", "name": "tanh1", "attrs": {"act_type": "tanh"}, "inputs": [[4, 0, 0]]},
    {"op": "null", "name": "fc2_weight", "inputs": []},
    {"op": "null", "name": "fc2_bias", "inputs": []},
    {"op": "FullyConnected", "name": "fc2", "attrs": {"num_hidden": "3"},
     "inputs": [[5, 0, 0], [6, 0, 0], [7, 0, 0]]},
    {"op": "null", "name": "softmax_label", "inputs": []},
    {"op": "SoftmaxOutput", "name": "softmax", "inputs": [[8, 0, 0], [9, 0, 0]]}
  ],
  "arg_nodes": [0, 1, 2, 6, 7, 9],
  "heads": [[10, 0, 0]]
}
JSON

case "$CASE" in
backend_plugins)
    two_backends
    run plugins --config-dir "$DIR"
    expect_rc 0
    # the operator list marks the operator with two backends, only that one
    out_has "Activation [cpu-blas, wrong]"
    out_lacks "FullyConnected ["
    # a kernels-only plugin: no operators of its own, its kernel named
    out_line "^crosscheck-wrong 0\.1\.0"
    out_line "^  operators +- \(kernels only, for operators of other plugins\)$"
    out_line "^  kernels +cpu, backend wrong \(1\): Activation$"
    run --json plugins --config-dir "$DIR"
    expect_rc 0
    json "operator_backends.Activation#=2" "operator_backends.Activation.0=cpu-blas" \
        "operator_backends.Activation.1=wrong" "operator_backends.FullyConnected#=1" \
        "operator_backends.FullyConnected.0=cpu-blas"
    ;;
backend_op_describe)
    two_backends
    # mxk.conf's preference
    run op describe --config-dir "$DIR" Activation
    expect_rc 0
    out_line "^Activation  \(plugin cpu-blas\)$"
    out_line "^backends on cpu: cpu-blas, wrong$"
    out_has "preference:      cpu-blas (from $DIR/mxk.conf)"
    out_line "^override: +none$"
    out_line "^runs now on cpu: cpu-blas$"
    # `mxk op NAME` prints the same
    run op --config-dir "$DIR" Activation
    expect_rc 0
    out_line "^runs now on cpu: cpu-blas$"
    # --backend wins over MXK_BACKEND, which wins over mxk.conf
    MXK_BACKEND=cpu-blas run op describe --config-dir "$DIR" --backend wrong,cpu-blas Activation
    expect_rc 0
    out_line "^preference: +wrong,cpu-blas \(from --backend\)$"
    out_line "^runs now on cpu: wrong$"
    MXK_BACKEND=wrong run op describe --config-dir "$DIR" Activation
    expect_rc 0
    out_line "^preference: +wrong \(from MXK_BACKEND\)$"
    out_line "^runs now on cpu: wrong$"
    MXK_BACKEND=wrong run --json op describe --config-dir "$DIR" Activation
    expect_rc 0
    json "backend.cpu_backends#=2" "backend.cpu_backends.1=wrong" "backend.preference=wrong" \
        "backend.preference_source=MXK_BACKEND" "backend.override=null" "backend.resolved=wrong"
    # an operator with one backend
    MXK_BACKEND=wrong run op describe --config-dir "$DIR" FullyConnected
    expect_rc 0
    out_line "^backends on cpu: cpu-blas$"
    out_line "^runs now on cpu: cpu-blas$"
    # the [op_backend] override, named by an alias of the operator
    two_backends "[mxk]\nbackend = cpu-blas\n[op_backend]\n_npx_activation = wrong"
    run op describe --config-dir "$DIR" Activation
    expect_rc 0
    out_has "override:        wrong (from $DIR/mxk.conf [op_backend])"
    out_line "^runs now on cpu: wrong$"
    # no preference anywhere
    two_backends "[mxk]"
    run --json op describe --config-dir "$DIR" Activation
    expect_rc 0
    json "backend.preference=" "backend.preference_source=null"
    run op describe --config-dir "$DIR" Activation
    out_line "^preference: +none \(kernel priorities decide\)$"
    # `describe` alone is taken as the operator's name
    run op --config-dir "$DIR" describe
    expect_rc 1
    err_has "mxk: error: unknown operator 'describe'"
    ;;
backend_summary)
    two_backends
    run symbol summary "$NET" --config-dir "$DIR" --shape data=2,5 --backends
    expect_rc 0
    out_line "^Layer \(type\) +Output Shape +Param # +Backend +Previous Layer$"
    out_line "^fc1\(FullyConnected\) +6 +36 +cpu-blas +data$"
    out_line "^relu1\(Activation\) +6 +0 +cpu-blas +fc1$"
    # preferring the second backend: relu runs on it, tanh (declined) on cpu-blas
    run symbol summary "$NET" --config-dir "$DIR" --backend wrong,cpu-blas --shape data=2,5 \
        --backends
    expect_rc 0
    out_line "^relu1\(Activation\) +6 +0 +wrong +fc1$"
    out_line "^tanh1\(Activation\) +6 +0 +cpu-blas +relu1$"
    out_line "^data\(null\) +5 +0$"
    out_line "^Total params: 57$"
    run --json symbol summary "$NET" --config-dir "$DIR" --backend wrong,cpu-blas \
        --shape data=2,5 --backends
    expect_rc 0
    json "layers.0.name=data" "layers.0.backend=null" "layers.2.name=relu1" \
        "layers.2.backend=wrong" "layers.3.backend=cpu-blas" "total_params=57"
    # without --backends no column
    run symbol summary "$NET" --config-dir "$DIR" --shape data=2,5
    expect_rc 0
    out_line "^Layer \(type\) +Output Shape +Param # +Previous Layer$"
    ;;
backend_profile)
    run symbol summary "$NET" --config-dir "$CONF" --backend cpu-blas --shape data=4,5 \
        --profile --iterations 3 --is-train
    expect_rc 0
    out_line "^Profile: 3 iterations \(forward and backward\) after 1 warm-up, backend preference: cpu-blas$"
    out_line "^Node \(operator\) +Backend +Forward ms +Backward ms +Share$"
    out_line "^fc1 \(FullyConnected\) +cpu-blas +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]%$"
    out_line "^softmax \(SoftmaxOutput\) +cpu-blas +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]%$"
    out_line "^Total \(kernels\) +[0-9]+\.[0-9]{3} +[0-9]+\.[0-9]{3} +100\.0%$"
    out_line "^Kernels: [0-9]+\.[0-9]{3} ms per iteration; wall time: [0-9]+\.[0-9]{3} ms per iteration$"
    run --json symbol summary "$NET" --config-dir "$CONF" --backend cpu-blas --shape data=4,5 \
        --profile --iterations 3 --is-train
    expect_rc 0
    json "iterations=3" "is_train=true" "warmup=1" "nodes#=5" \
        "nodes.0.name=fc1" "nodes.0.op=FullyConnected" "nodes.0.backend=cpu-blas" \
        "nodes.0.forward_runs=3" "nodes.0.backward_runs=3" "nodes.4.name=softmax" \
        "nodes.4.forward_runs=3" "nodes.4.backward_runs=3" "nodes.2.name=tanh1" \
        "nodes.0.share?" "forward_ms?" "backward_ms?" "kernels_ms?" "wall_ms?"
    # inference: forward runs only, no backward column
    run --json symbol summary "$NET" --config-dir "$CONF" --shape data=4,5 --profile
    expect_rc 0
    json "iterations=10" "is_train=false" "nodes.0.forward_runs=10" "nodes.0.backward_runs=0" \
        "nodes.3.backward_ms=0" "backward_ms=0"
    run symbol summary "$NET" --config-dir "$CONF" --shape data=4,5 --profile --iterations 2
    expect_rc 0
    out_line "^Profile: 2 iterations \(forward, inference\) after 1 warm-up"
    out_line "^relu1 \(Activation\) +cpu-blas +[0-9]+\.[0-9]{3} +- +[0-9]+\.[0-9]%$"
    # usage errors
    run symbol summary "$NET" --config-dir "$CONF" --shape data=4,5 --profile --iterations 0
    expect_rc 2
    err_has "--iterations needs a number from 1 to 1000000"
    run symbol summary "$NET" --config-dir "$CONF" --shape data=4,5 --is-train
    expect_rc 2
    err_has "--iterations and --is-train belong to --profile"
    run symbol dot "$NET" --config-dir "$CONF" --backends
    expect_rc 2
    err_has "--backends and --profile belong to summary"
    # an inconsistent shape is refused before anything is bound
    run symbol summary "$NET" --config-dir "$CONF" --shape data=4,5 --shape fc1_weight=7,5 \
        --profile
    expect_rc 1
    err_has "mxk: error: Error in operator fc1: FullyConnected: argument 'weight': expected (6,5), got (7,5)"
    ;;
*)
    echo "unknown case '$CASE'" >&2
    exit 2
    ;;
esac
exit 0
