#!/bin/sh
# Tests of `mxk op describe` with a bound node (--attr, --shape) and of `mxk ops`,
# one case per ctest test (registered in tests/cli/CMakeLists.txt).
#
#   op_test.sh CASE MXK JSON_CHECK BUILD_CONFIG_DIR HAVE_CPU_BLAS WORK_DIR
#
# The operators come from the cpu-blas plugin: without it every case is skipped.
# POSIX sh only.
set -u

if [ $# -ne 6 ]; then
    echo "usage: op_test.sh CASE MXK JSON_CHECK BUILD_CONFIG_DIR HAVE_CPU_BLAS WORK_DIR" >&2
    exit 2
fi
CASE=$1 MXK=$2 JSON_CHECK=$3 CONF=$4 HAVE_CPU_BLAS=$5 WORK=$6

. "$(dirname "$0")/cli_lib.sh"
cli_begin "$WORK"

need_cpu_blas "the cpu-blas plugin (operators)"

case "$CASE" in
op_describe_node)
    # FullyConnected y = x W^T + b: backward reads out_grad, data and weight
    # (src/operator/nn/fully_connected.cc: DeclareBackwardDependency).
    run op describe FullyConnected --attr num_hidden=4 --shape 2,3
    expect_rc 0
    out_line "^a node with the given attributes:$"
    out_line "^  arguments   data, weight, bias$"
    out_line "^  inputs          data \(2,3\) float32, weight \(4,3\) float32, bias \(4\) float32$"
    out_line "^  outputs         output \(2,4\) float32$"
    out_line "^  aux_states      -$"
    out_line "^  backend         cpu-blas$"
    out_line "^  backward reads  out_grad: output; in_data: data, weight; out_data: -$"
    out_line "^  resources fwd   none$"
    # BatchNorm's backward reads its saved mean and var (hidden outputs).
    run op BatchNorm --shape 2,3,4,4
    expect_rc 0
    out_line "^  aux_states      moving_mean \(3\) float32, moving_var \(3\) float32$"
    out_line "^  backward reads  out_grad: output; in_data: data, gamma; out_data: mean, var$"
    # Dropout draws random numbers in forward; Convolution asks for temp space.
    run op Dropout --shape 2,3
    expect_rc 0
    out_line "^  resources fwd   random$"
    out_line "^  resources bwd   none$"
    run op Convolution --attr kernel=3,3 --attr num_filter=2 --shape 1,1,5,5
    expect_rc 0
    out_line "^  inputs          data \(1,1,5,5\) float32, weight \(2,1,3,3\) float32, bias \(2\) float32$"
    out_line "^  resources fwd   temp_space \([1-9][0-9]* bytes\)$"
    # without --shape: no node, a hint
    run op tanh
    expect_rc 0
    out_line "^\(--shape binds a node: its shapes, backend, backward reads and resources\)$"
    out_lacks "node on cpu"
    ;;
op_describe_json)
    run --json op describe FullyConnected --attr num_hidden=4 --shape 2,3
    expect_rc 0
    json name=FullyConnected "arguments#=3" arguments.1=weight kernels.*.backend=cpu-blas \
        kernels.0.device=cpu node.backend=cpu-blas "node.inputs#=3" node.inputs.1.name=weight \
        "node.inputs.1.shape#=2" node.inputs.1.shape.0=4 node.inputs.1.shape.1=3 \
        node.outputs.0.dtype=float32 "node.backward_reads.out_grad#=1" \
        "node.backward_reads.in_data#=2" node.backward_reads.in_data.1=weight \
        "node.backward_reads.out_data#=0" "node.resources.forward#=0"
    run --json op Dropout --shape 2,3
    expect_rc 0
    json "node.resources.forward#=1" node.resources.forward.0.type=random \
        node.resources.forward.0.bytes=0 "node.resources.backward#=0"
    run --json op tanh
    expect_rc 0
    json node=null arguments.0=data outputs.0=output
    ;;
op_describe_errors)
    run op describe FullyConnected --shape 2,3
    expect_rc 1
    err_is "mxk: error: FullyConnected: required attribute 'num_hidden' is missing (Number of hidden nodes of the output.)"
    run op describe Dropout --attr q=1
    expect_rc 1
    err_is "mxk: error: Dropout: unknown attribute 'q'; valid attributes: p, mode, axes, cudnn_off; did you mean 'p'?"
    run op tanh --shape 2 --shape 3
    expect_rc 1
    err_is "mxk: error: tanh: 2 shapes given, the operator takes 1 argument (data)"
    run op FullyConnected --attr num_hidden=2 --shape 2,3 --shape 3,3
    expect_rc 1
    err_is "mxk: error: FullyConnected: argument 'weight': expected (2,3), got (3,3)"
    run op Dropout --shape 2,x
    expect_rc 2
    err_has "mxk op: bad --shape '2,x': expected positive integers d1,d2,... (at most 8), or 0 for a shape left to inference"
    run op tanh --bogus
    expect_rc 2
    err_has "unknown option '--bogus'"
    ;;
op_rnn)
    # RNN (src/operator/rnn.cc): GetRnnParamSize's count, lstm's state_cell, the
    # state outputs, the hidden reserve (layer outputs 48 + gates 192 + cells 48 floats)
    # that backward reads; projection, sequence_length, the attribute checks.
    run op RNN --attr mode=lstm --attr state_size=2 --attr num_layers=2 \
        --attr bidirectional=True --attr state_outputs=True --shape 3,2,4
    expect_rc 0
    out_line "^  inputs          data \(3,2,4\) float32, parameters \(256\) float32, state \(4,2,2\) float32, state_cell \(4,2,2\) float32$"
    out_line "^  outputs         output \(3,2,4\) float32, state_output \(4,2,2\) float32, statecell_output \(4,2,2\) float32, reserve \(288\) float32$"
    out_line "^  backward reads  out_grad: output, state_output, statecell_output; in_data: data, parameters, state, state_cell; out_data: reserve$"
    out_line "^  resources bwd   temp_space \([1-9][0-9]* bytes\)$"
    G="--attr mode=gru --attr state_size=2 --attr num_layers=2"
    run op RNN $G --shape 3,2,4
    expect_rc 0
    out_line "^  inputs          data \(3,2,4\) float32, parameters \(84\) float32, state \(2,2,2\) float32$"
    out_line "^  outputs         output \(3,2,2\) float32, reserve \(120\) float32$"
    # LSTMP (rnn_impl.h): per layer direction Wx, Wh (12,2) and Whr (2,3); GetRnnParamSize
    # 384 + P*H*L*D = 408; the extra argument sequence_length (N); dropout's random stream
    run op RNN --attr mode=lstm --attr state_size=3 --attr num_layers=2 --attr projection_size=2 \
        --attr bidirectional=True --attr state_outputs=True --attr use_sequence_length=True \
        --attr p=0.5 --shape 3,2,4
    expect_rc 0
    out_line "^  inputs          data \(3,2,4\) float32, parameters \(408\) float32, state \(4,2,2\) float32, state_cell \(4,2,3\) float32, sequence_length \(2\) float32$"
    out_line "^  outputs         output \(3,2,4\) float32, state_output \(4,2,2\) float32, statecell_output \(4,2,3\) float32, reserve \(456\) float32$"
    out_line "^  resources fwd   random, temp_space \([1-9][0-9]* bytes\)$"
    # upstream's checks (rnn-inl.h)
    run op RNN $G --attr projection_size=1 --shape 3,2,4
    expect_rc 1
    err_is "mxk: error: RNN: Projection is only supported for LSTM."
    run op RNN --attr mode=lstm --attr state_size=2 --attr num_layers=1 --attr projection_size=3 --shape 3,2,4
    expect_rc 1
    err_is "mxk: error: RNN: State size must be larger than projection size."
    run op RNN $G --attr lstm_state_clip_min=-1 --attr lstm_state_clip_max=1 --shape 3,2,4
    expect_rc 1
    err_is "mxk: error: RNN: State clipping is only supported for LSTM."
    L="--attr mode=lstm --attr state_size=2 --attr num_layers=1"
    run op RNN $L --attr lstm_state_clip_max=1 --shape 3,2,4
    expect_rc 1
    err_is "mxk: error: RNN: lstm_state_clip_min and lstm_state_clip_max must be specified together."
    run op RNN $L --attr lstm_state_clip_min=2 --attr lstm_state_clip_max=1 --shape 3,2,4
    expect_rc 1
    err_is "mxk: error: RNN: lstm_state_clip_max must be greater or equal to lstm_state_clip_min"
    run op RNN $G --attr p=1.5 --shape 3,2,4
    expect_rc 1
    err_is "mxk: error: RNN: attribute 'p': expected a value in [0, 1], got 1.5"
    run op RNN $G --shape 3,4
    expect_rc 1
    err_is "mxk: error: RNN: argument 'data': expected a rank-3 tensor (sequence length, batch size, input size), got (3,4)"
    run op RNN $G --shape 3,2,4 --shape 10
    expect_rc 1
    err_is "mxk: error: RNN: argument 'parameters': expected (84,), got (10,)"
    ;;
ops_list)
    COLUMNS=200
    export COLUMNS
    run ops
    unset COLUMNS
    expect_rc 0
    out_line "^FullyConnected +cpu-blas +Applies a linear transformation: y = x W\^T \+ b\.$"
    # the first sentence only: "w.r.t. the input" is not a sentence end
    out_line "^SoftmaxOutput +cpu-blas +Softmax forward; backward is the cross-entropy gradient w\.r\.t\. the input\.$"
    lines=$(wc -l <"$OUT")
    # 80 columns without COLUMNS: the summary is cut with "..."
    run ops
    expect_rc 0
    out_line "^Activation +cpu-blas +Applies an activation function [a-z -]*\.\.\.$"
    awk 'length($0) > 80 { exit 1 }' "$OUT" || fail "a line is wider than 80 columns"
    run --json ops
    expect_rc 0
    json "operators#=$lines" operators.0.name=FullyConnected operators.0.plugin=cpu-blas \
        "operators.0.summary=Applies a linear transformation: y = x W^T + b." \
        operators.0.aliases.0=_npx_fully_connected
    run ops extra
    expect_rc 2
    err_has "mxk ops: unexpected argument 'extra'"
    ;;
*)
    echo "op_test.sh: unknown case '$CASE'" >&2
    exit 2
    ;;
esac
exit 0
