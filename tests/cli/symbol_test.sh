#!/bin/sh
# Tests of `mxk symbol` (summary, dot), one case per ctest test (registered at the
# end of tests/cli/CMakeLists.txt).
#
#   symbol_test.sh CASE MXK JSON_CHECK BUILD_CONFIG_DIR HAVE_CPU_BLAS WORK_DIR
#
# The symbol files are written here (MXNet's JSON of the MNIST MLP 784-128-64-10:
# 109,386 parameters, as mx.viz.print_summary counts them). Loading them
# needs the operators of the cpu-blas plugin: without it every case is skipped.
# POSIX sh only.
set -u

if [ $# -ne 6 ]; then
    echo "usage: symbol_test.sh CASE MXK JSON_CHECK BUILD_CONFIG_DIR HAVE_CPU_BLAS WORK_DIR" >&2
    exit 2
fi
CASE=$1 MXK=$2 JSON_CHECK=$3 CONF=$4 HAVE_CPU_BLAS=$5 WORK=$6

. "$(dirname "$0")/cli_lib.sh"
cli_begin "$WORK"

need_cpu_blas "the cpu-blas plugin (operators)"

# The MNIST MLP as MXNet writes it.
MLP=$WORK/mlp-symbol.json
cat >"$MLP" <<'JSON'
{
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "null", "name": "fc1_weight", "attrs": {"num_hidden": "128"}, "inputs": []},
    {"op": "null", "name": "fc1_bias", "attrs": {"num_hidden": "128"}, "inputs": []},
    {"op": "FullyConnected", "name": "fc1", "attrs": {"num_hidden": "128"},
     "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
    {"op": "Activation", "name": "relu1", "attrs": {"act_type": "relu"}, "inputs": [[3, 0, 0]]},
    {"op": "null", "name": "fc2_weight", "attrs": {"num_hidden": "64"}, "inputs": []},
    {"op": "null", "name": "fc2_bias", "attrs": {"num_hidden": "64"}, "inputs": []},
    {"op": "FullyConnected", "name": "fc2", "attrs": {"num_hidden": "64"},
     "inputs": [[4, 0, 0], [5, 0, 0], [6, 0, 0]]},
    {"op": "Activation", "name": "relu2", "attrs": {"act_type": "relu"}, "inputs": [[7, 0, 0]]},
    {"op": "null", "name": "fc3_weight", "attrs": {"num_hidden": "10"}, "inputs": []},
    {"op": "null", "name": "fc3_bias", "attrs": {"num_hidden": "10"}, "inputs": []},
    {"op": "FullyConnected", "name": "fc3", "attrs": {"num_hidden": "10"},
     "inputs": [[8, 0, 0], [9, 0, 0], [10, 0, 0]]},
    {"op": "null", "name": "softmax_label", "inputs": []},
    {"op": "SoftmaxOutput", "name": "softmax", "inputs": [[11, 0, 0], [12, 0, 0]]}
  ],
  "arg_nodes": [0, 1, 2, 5, 6, 9, 10, 12],
  "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14],
  "heads": [[13, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10901]}
}
JSON

case "$CASE" in
symbol_summary)
    run symbol summary "$MLP" --shape data=100,784
    expect_rc 0
    out_has "Layer (type)"
    out_line "^fc1\(FullyConnected\) +128 +100480 +data$"
    out_line "^fc2\(FullyConnected\) +64 +8256 +relu1$"
    out_line "^fc3\(FullyConnected\) +10 +650 +relu2$"
    out_line "^softmax\(SoftmaxOutput\) +10 +0 +fc3$"
    out_line "^data\(null\) +784 +0$"
    out_has "Total params: 109386"
    # the label's shape given too: same numbers; --shape=NAME=(dims) form
    run symbol summary "$MLP" --shape=data=32,784 --shape "softmax_label=(32)"
    expect_rc 0
    out_has "Total params: 109386"
    ;;
symbol_summary_json)
    run symbol summary "$MLP" --shape data=100,784 --json
    expect_rc 0
    json "total_params=109386" "layers#=7" "layers.0.name=data" "layers.0.op=null" \
        "layers.1.name=fc1" "layers.1.op=FullyConnected" "layers.1.params=100480" \
        "layers.1.output_shape#=2" "layers.1.output_shape.0=100" "layers.1.output_shape.1=128" \
        "layers.6.output_shape.1=10" "arguments#=8" "arguments.fc1_weight.0=128" \
        "arguments.fc1_weight.1=784" "arguments.softmax_label.0=100" "aux_states#=0"
    run --json symbol summary "$MLP" --shape data=1,784
    expect_rc 0
    json "total_params=109386" "layers.3.params=8256"
    ;;
symbol_dot)
    run symbol dot "$MLP"
    expect_rc 0
    out_has 'digraph "Network Visualization" {'
    out_has '"fc1" [label="FullyConnected\nnum-hidden=128",'
    out_has '"data" -> "fc1" [dir=back,arrowtail=open];'
    out_has '"fc3" -> "softmax" [dir=back,arrowtail=open];'
    grep -F -e '"fc1_weight"' "$OUT" >/dev/null && fail "weights are drawn"
    out_line "^}$"
    run symbol dot "$MLP" --shape data=100,784
    expect_rc 0
    out_has '"relu1" -> "fc2" [label="(128)",dir=back,arrowtail=open];'
    # --json: the same text as {"dot": TEXT}
    cp "$OUT" "$WORK/plain.dot"
    run --json symbol dot "$MLP" --shape data=100,784
    expect_rc 0
    json "dot=$(cat "$WORK/plain.dot")
"
    ;;
symbol_errors)
    run symbol summary "$WORK/missing.json" --shape data=1,784
    expect_rc 1
    err_has "cannot open symbol file"
    printf '{"nodes": [' >"$WORK/bad.json"
    run symbol summary "$WORK/bad.json" --shape data=1,784
    expect_rc 1
    err_has "symbol JSON: invalid JSON at line 1"
    sed 's/"FullyConnected", "name": "fc2"/"FullyConnectedX", "name": "fc2"/' "$MLP" >"$WORK/op.json"
    run symbol dot "$WORK/op.json"
    expect_rc 1
    err_has "node 7 ('fc2'): unknown operator 'FullyConnectedX'"
    run symbol summary "$MLP" --shape softmax_label=100
    expect_rc 1
    err_is "mxk: error: the input shapes are incomplete: cannot infer the shape of data, fc1_weight, fc1_bias, fc2_weight, fc2_bias, fc3_weight, fc3_bias" \
        "mxk: note: give the shape of input 'data' with --shape data=d1,d2,..."
    # An input not named data: the note names it (summary, --backends, crosscheck).
    sed 's/"name": "data"/"name": "image"/' "$MLP" >"$WORK/image.json"
    run symbol summary "$WORK/image.json" --shape data=100,784
    expect_rc 1
    err_has "mxk: error: InferShape: Keyword argument name data not found."
    run symbol summary "$WORK/image.json" --shape softmax_label=100 --backends
    expect_rc 1
    err_is "mxk: error: the input shapes are incomplete: cannot infer the shape of image, fc1_weight, fc1_bias, fc2_weight, fc2_bias, fc3_weight, fc3_bias" \
        "mxk: note: give the shape of input 'image' with --shape image=d1,d2,..."
    run crosscheck --symbol "$WORK/image.json" --shape softmax_label=8 --backends cpu-blas,cpu-blas
    expect_rc 1
    err_is "mxk: error: InferShape pass cannot decide shapes for the following arguments (-1 means unknown dimensions). Please consider providing them as inputs:" \
        "image: (), fc1_weight: (), fc1_bias: (), fc2_weight: (), fc2_bias: (), fc3_weight: (), fc3_bias: (), " \
        "mxk: note: give the shape of input 'image' with --shape image=d1,d2,..."
    run symbol summary "$MLP" --shape nothere=1,2
    expect_rc 1
    run symbol summary "$MLP" --shape data=100,785 --shape fc1_weight=128,784
    expect_rc 1
    err_has "fc1"
    # A checkpoint whose data input is not named 'data' (upstream Module's message,
    # python/mxnet/module/base_module.py _check_input_names), before any work.
    sed 's/"name": "data"/"name": "image"/' "$MLP" >"$WORK/ck-symbol.json"
    : >"$WORK/ck-0001.params"
    run score --model-prefix "$WORK/ck" --load-epoch 1
    expect_rc 1
    err_is "mxk: error: You created Module with Module(..., data_names=['data']) but input with name 'data' is not found in symbol.list_arguments(). Did you mean one of:" \
        "	image" "	softmax_label"
    # usage errors
    run symbol
    expect_rc 2
    err_has "missing ACTION"
    run symbol draw "$MLP"
    expect_rc 2
    err_has "unknown action 'draw'"
    run symbol summary
    expect_rc 2
    err_has "missing FILE"
    run symbol summary "$MLP"
    expect_rc 2
    err_has "--shape"
    run symbol summary "$MLP" --shape data
    expect_rc 2
    run symbol summary "$MLP" --shape data=0,784
    expect_rc 2
    run symbol summary "$MLP" --shape data=1,784 --shape data=2,784
    expect_rc 2
    err_has "duplicate shapes are provided for argument 'data'"
    run symbol summary "$MLP" --shape
    expect_rc 2
    run symbol dot "$MLP" other.json
    expect_rc 2
    run symbol dot "$MLP" --bogus
    expect_rc 2
    err_has "unknown option '--bogus'"
    ;;
symbol_help)
    run symbol --help
    expect_rc 0
    out_has "usage: mxk symbol summary FILE --shape"
    out_has "print_summary"
    run --help
    expect_rc 0
    out_has "symbol"
    ;;
*)
    echo "unknown case '$CASE'" >&2
    exit 2
    ;;
esac
exit 0
