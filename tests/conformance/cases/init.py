"""Conformance cases of the init group: creation and shape operators
(plugins/cpu-blas/op_init_*.c, op_reshape.c, op_concat.c, op_add_n.c).

Shapes and attributes follow MXNet 1.9.1's tests/python/unittest/test_operator.py
(test_elementwise_sum, test_concat, test_slice_channel, test_shape_array,
test_size_array, test_reshape_like, test_broadcast, test_expand_dims, test_flip,
test_pad, test_init / test_arange, test_repeat, test_reverse, test_tile,
test_stack, test_squeeze_op) plus every enum value, defaults, edge values and
the refusals.
"""
from case import Case, Net

CASES = [
    # _copy (identity)
    Case("_copy", {}, {"data": (2, 3)}),
    Case("_copy", {}, {"data": (4, 1, 3, 2)}),
    # creation without arguments
    Case("_zeros", {"shape": (2, 3)}, {}, grad_req="null"),
    Case("_zeros", {"shape": (4,), "dtype": "float64"}, {}, grad_req="null"),
    Case("_zeros", {"shape": (2, 2), "dtype": "int32"}, {}, grad_req="null"),
    Case("_ones", {"shape": (3, 1, 2)}, {}, grad_req="null"),
    Case("_ones", {"shape": (5,), "dtype": "int64"}, {}, grad_req="null"),
    Case("_ones", {"shape": (2,), "dtype": "uint8"}, {}, grad_req="null"),
    Case("_full", {"shape": (2, 3), "value": 2.5}, {}, grad_req="null"),
    Case("_full", {"shape": (4,), "value": -7, "dtype": "int8"}, {}, grad_req="null"),
    Case("_full", {"shape": (3,), "value": 0.5, "dtype": "float16"}, {}, grad_req="null"),
    Case("_arange", {"start": 10}, {}, grad_req="null"),
    Case("_arange", {"start": 0, "stop": 10}, {}, grad_req="null"),
    Case("_arange", {"start": 1, "stop": 2, "step": 0.25}, {}, grad_req="null"),
    Case("_arange", {"start": 5, "stop": -3, "step": -2}, {}, grad_req="null"),
    Case("_arange", {"start": 0, "stop": 3, "repeat": 3}, {}, grad_req="null"),
    Case("_arange", {"start": 2, "stop": 9, "step": 3, "dtype": "int32"}, {}, grad_req="null"),
    Case("_arange", {"start": 0, "stop": 5, "dtype": "float64", "repeat": 2}, {},
         grad_req="null"),
    Case("_arange", {"start": 0, "stop": 5, "step": 0}, {}, grad_req="null",
         error="step=0"),
    Case("_arange", {"start": 3, "stop": 1}, {}, grad_req="null", error="Invalid range"),
    # *_like: values not read, zero gradient
    Case("zeros_like", {}, {"data": (2, 3)}),
    Case("ones_like", {}, {"data": (3, 1, 4)}),
    Case("ones_like", {}, {"data": (3,)}, inputs={"data": ("int", 0, 5, "int32")},
         grad_req="null"),
    # expand_dims: every axis of a 3-D input, negative ones
    Case("expand_dims", {"axis": 0}, {"data": (2, 3, 4)}),
    Case("expand_dims", {"axis": 1}, {"data": (2, 3, 4)}),
    Case("expand_dims", {"axis": 3}, {"data": (2, 3, 4)}),
    Case("expand_dims", {"axis": -1}, {"data": (2, 3, 4)}),
    Case("expand_dims", {"axis": -4}, {"data": (2, 3, 4)}),
    Case("expand_dims", {"axis": 4}, {"data": (2, 3, 4)}, error="axis must be in the range"),
    # squeeze (test_squeeze_op)
    Case("squeeze", {"axis": 0}, {"data": (1, 5, 1, 3, 1)}),
    Case("squeeze", {"axis": 2}, {"data": (1, 5, 1, 3, 1)}),
    Case("squeeze", {"axis": 4}, {"data": (1, 5, 1, 3, 1)}),
    Case("squeeze", {"axis": (0, 4)}, {"data": (1, 5, 1, 3, 1)}),
    Case("squeeze", {"axis": (0, 2, 4)}, {"data": (1, 5, 1, 3, 1)}),
    Case("squeeze", {"axis": -1}, {"data": (1, 5, 1, 3, 1)}),
    Case("squeeze", {}, {"data": (1, 5, 1, 3, 1)}),
    Case("squeeze", {}, {"data": (1, 1, 1, 1)}),
    Case("squeeze", {}, {"data": (1, 2, 1, 3, 1)}),
    Case("squeeze", {"axis": 1}, {"data": (1, 5, 1)}, error="cannot select an axis to squeeze"),
    # shape_array / size_array (int64 outputs)
    Case("shape_array", {}, {"data": (2, 3, 4)}),
    Case("shape_array", {}, {"data": (7,)}),
    Case("size_array", {}, {"data": (2, 3, 4)}),
    Case("size_array", {}, {"data": (5, 1)}),
    # reshape_like (test_reshape_like)
    Case("reshape_like", {}, {"lhs": (6,), "rhs": (2, 3)}),
    Case("reshape_like", {"lhs_begin": 0, "rhs_begin": 0, "rhs_end": 2},
         {"lhs": (30,), "rhs": (15, 2, 4)}),
    Case("reshape_like", {"lhs_end": 1, "rhs_end": 2}, {"lhs": (30,), "rhs": (15, 2, 4)}),
    Case("reshape_like", {"lhs_begin": 0, "lhs_end": 1, "rhs_begin": 0, "rhs_end": 2},
         {"lhs": (30, 7), "rhs": (15, 2, 4)}),
    Case("reshape_like", {"lhs_begin": 0, "lhs_end": 2, "rhs_begin": 1, "rhs_end": 2},
         {"lhs": (3, 5), "rhs": (1, 15, 4)}),
    Case("reshape_like", {"lhs_begin": 0, "rhs_begin": 1, "rhs_end": -1},
         {"lhs": (3, 5), "rhs": (1, 15, 4)}),
    Case("reshape_like", {"lhs_begin": -1, "rhs_begin": 1}, {"lhs": (30, 12), "rhs": (4, 2, 2, 3)}),
    Case("reshape_like", {"lhs_begin": 1, "lhs_end": -1, "rhs_begin": 1},
         {"lhs": (1, 1, 7, 3, 1, 1), "rhs": (81, 1, 1, 21)}),
    Case("reshape_like", {}, {"lhs": (6,), "rhs": (2, 4)}, error="different size"),
    # broadcast_to / broadcast_axis / broadcast_like (test_broadcast)
    Case("broadcast_to", {"shape": (2, 3, 4)}, {"data": (2, 1, 4)}),
    Case("broadcast_to", {"shape": (3, 2, 4, 5)}, {"data": (1, 2, 1, 1)}),
    Case("broadcast_to", {"shape": (0, 3, 4)}, {"data": (2, 1, 1)}),
    Case("broadcast_to", {"shape": (2, 3)}, {"data": (2, 2)}, error="cannot be broadcasted"),
    Case("broadcast_to", {"shape": (2, 3, 1)}, {"data": (2, 1)}, error="cannot be broadcasted"),
    Case("broadcast_axis", {"axis": 1, "size": 3}, {"data": (2, 1, 4)}),
    Case("broadcast_axis", {"axis": (0, 2), "size": (3, 5)}, {"data": (1, 2, 1)}),
    Case("broadcast_axes", {"axis": 0, "size": 4}, {"data": (1, 3)}),
    Case("broadcast_axis", {"axis": 0, "size": 3}, {"data": (2, 1)}, error="must have size 1"),
    Case("broadcast_like", {}, {"lhs": (2, 1, 4), "rhs": (2, 3, 4)}),
    Case("broadcast_like", {}, {"lhs": (1, 1), "rhs": (3, 5)}),
    Case("broadcast_like", {"lhs_axes": (0,), "rhs_axes": (2,)}, {"lhs": (1, 3), "rhs": (2, 3, 4)}),
    Case("broadcast_like", {"lhs_axes": (0, -1), "rhs_axes": (-1, 0)},
         {"lhs": (1, 3, 1), "rhs": (2, 3, 4)}),
    Case("broadcast_like", {}, {"lhs": (2, 2), "rhs": (2, 3)}, error="cannot be broadcasted"),
    # stack (test_stack)
    Case("stack", {"num_args": 2}, {"a": (2, 3), "b": (2, 3)}, variadic=True),
    Case("stack", {"num_args": 3, "axis": 1}, {"a": (2, 3), "b": (2, 3), "c": (2, 3)},
         variadic=True),
    Case("stack", {"num_args": 2, "axis": -1}, {"a": (2, 3, 4), "b": (2, 3, 4)}, variadic=True),
    Case("stack", {"num_args": 1, "axis": 2}, {"a": (3, 2)}, variadic=True),
    Case("stack", {"num_args": 2}, {"a": (2, 3), "b": (3, 3)}, variadic=True, error="expected"),
    # tile (test_tile)
    Case("tile", {"reps": (2, 3)}, {"data": (2, 3)}),
    Case("tile", {"reps": (2,)}, {"data": (2, 3, 4)}),
    Case("tile", {"reps": (2, 1, 3)}, {"data": (2, 3)}),
    Case("tile", {"reps": (1, 1)}, {"data": (4, 5)}),
    Case("tile", {"reps": ()}, {"data": (3, 2)}),
    # repeat (test_repeat)
    Case("repeat", {"repeats": 2}, {"data": (2, 3)}),
    Case("repeat", {"repeats": 3, "axis": 0}, {"data": (2, 3)}),
    Case("repeat", {"repeats": 2, "axis": 1}, {"data": (2, 3, 2)}),
    Case("repeat", {"repeats": 2, "axis": -1}, {"data": (2, 3)}),
    Case("repeat", {"repeats": 2, "axis": 2}, {"data": (2, 3)}, error="out of bounds"),
    Case("repeat", {"repeats": -1}, {"data": (2, 3)}, error="negative"),
    # reverse / flip (test_flip, test_reverse)
    Case("reverse", {"axis": 0}, {"data": (3, 4)}),
    Case("reverse", {"axis": (0, 2)}, {"data": (2, 3, 4)}),
    Case("flip", {"axis": 1}, {"data": (2, 5)}),
    Case("reverse", {"axis": (1, 1)}, {"data": (2, 3)}),
    Case("reverse", {"axis": 2}, {"data": (2, 3)}, error="axis"),
    # Pad (test_pad): every mode, 4-D and 5-D
    Case("Pad", {"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 2, 3, 4)}, {"data": (2, 3, 3, 5)}),
    Case("Pad", {"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 2, 3, 4), "constant_value": 1.5},
         {"data": (2, 3, 3, 5)}),
    Case("Pad", {"mode": "edge", "pad_width": (0, 0, 0, 0, 1, 2, 3, 4)}, {"data": (2, 3, 3, 5)}),
    Case("Pad", {"mode": "reflect", "pad_width": (0, 0, 0, 0, 1, 2, 3, 4)}, {"data": (2, 3, 3, 5)}),
    Case("Pad", {"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 2, 3, 4, 3, 1)},
         {"data": (2, 3, 3, 5, 4)}),
    Case("Pad", {"mode": "edge", "pad_width": (0, 0, 0, 0, 1, 2, 3, 4, 3, 1)},
         {"data": (2, 3, 3, 5, 4)}),
    Case("Pad", {"mode": "reflect", "pad_width": (0, 0, 0, 0, 1, 2, 3, 4, 3, 1)},
         {"data": (2, 3, 3, 5, 4)}),
    Case("pad", {"mode": "edge", "pad_width": (0, 0, 0, 0, 2, 0, 0, 1)}, {"data": (1, 2, 3, 3)}),
    Case("Pad", {"mode": "reflect", "pad_width": (0, 0, 0, 0, 3, 0, 0, 0)}, {"data": (1, 1, 3, 3)},
         error="reflection padding"),
    Case("Pad", {"mode": "constant", "pad_width": (0, 0, 1, 0, 0, 0, 0, 0)},
         {"data": (1, 1, 3, 3)}, error="first two axes"),
    Case("Pad", {"mode": "constant", "pad_width": (0, 0, 1, 1)}, {"data": (2, 3)},
         error="4-D or 5-D"),
    # Flatten / Reshape
    Case("Flatten", {}, {"data": (2, 3, 4)}),
    Case("flatten", {}, {"data": (5,)}),
    Case("Reshape", {"shape": (3, -1)}, {"data": (2, 3, 2)}),
    Case("reshape", {"shape": (0, -3)}, {"data": (2, 3, 4)}),
    Case("Reshape", {"shape": (-4, 1, 2, -2)}, {"data": (2, 3, 4)}),
    Case("Reshape", {"shape": (-1, 0), "reverse": True}, {"data": (10, 5, 4)}),
    Case("Reshape", {"shape": (-2, 1, 1)}, {"data": (2, 3, 4)}),
    # Concat (test_concat)
    Case("Concat", {"num_args": 2}, {"a": (2, 3), "b": (2, 2)}, variadic=True),
    Case("Concat", {"num_args": 3, "dim": 0}, {"a": (1, 3), "b": (2, 3), "c": (1, 3)},
         variadic=True),
    Case("concat", {"num_args": 2, "dim": -1}, {"a": (2, 2, 1), "b": (2, 2, 3)}, variadic=True),
    Case("Concat", {"num_args": 2, "dim": 1}, {"a": (2, 3), "b": (3, 3)}, variadic=True,
         error="arg1"),
    # SliceChannel / split (test_slice_channel), squeeze_axis as mx.rnn's unroll uses it
    Case("SliceChannel", {"num_outputs": 2}, {"data": (2, 4, 3)}),
    Case("SliceChannel", {"num_outputs": 3, "axis": 0}, {"data": (3, 2)}),
    Case("split", {"num_outputs": 3, "axis": 1, "squeeze_axis": True}, {"data": (2, 3, 4)}),
    Case("SliceChannel", {"num_outputs": 2, "axis": -1}, {"data": (2, 3, 4)}),
    Case("SliceChannel", {"num_outputs": 4, "axis": 2, "squeeze_axis": 1}, {"data": (2, 3, 4)}),
    Case("SliceChannel", {"num_outputs": 2, "axis": 1}, {"data": (2, 3)},
         error="does not evenly divide"),
    Case("SliceChannel", {"num_outputs": 2, "axis": 1, "squeeze_axis": True}, {"data": (2, 4)},
         error="squeeze axis"),
    # add_n / ElementWiseSum (test_elementwise_sum)
    Case("add_n", {"num_args": 2}, {"a": (2, 3), "b": (2, 3)}, variadic=True),
    Case("ElementWiseSum", {"num_args": 3}, {"a": (4,), "b": (4,), "c": (4,)}, variadic=True),
    Case("add_n", {"num_args": 1}, {"a": (3, 2)}, variadic=True),
    # dtypes other than float32 through the copies and the shape descriptions
    Case("_copy", {}, {"data": (2, 3)}, inputs={"data": ("int", -5, 5, "int32")},
         grad_req="null"),
    Case("expand_dims", {"axis": 1}, {"data": (2, 3)}, inputs={"data": ("int", 0, 9, "int64")},
         grad_req="null"),
    Case("squeeze", {}, {"data": (1, 3)}, inputs={"data": ("int", 0, 9, "uint8")},
         grad_req="null"),
    Case("reshape_like", {}, {"lhs": (6,), "rhs": (3, 2)},
         inputs={"lhs": ("int", 0, 9, "int32"), "rhs": ("int", 0, 9, "int32")},
         grad_req="null"),
    Case("shape_array", {}, {"data": (4, 2)}, inputs={"data": ("int", 0, 9, "int32")},
         grad_req="null"),
    Case("zeros_like", {}, {"data": (2, 2)}, inputs={"data": ("int", 0, 9, "int64")},
         grad_req="null"),
    Case("broadcast_to", {"shape": (2, 3)}, {"data": (1, 3)},
         inputs={"data": ("int", -9, 9, "int32")}, grad_req="null"),
    Case("broadcast_like", {}, {"lhs": (2, 1), "rhs": (2, 4)},
         inputs={"lhs": ("int", 0, 200, "uint8")}, grad_req="null"),
    Case("tile", {"reps": (2, 2)}, {"data": (2, 3)}, inputs={"data": ("int", 0, 9, "int64")},
         grad_req="null"),
    Case("repeat", {"repeats": 2}, {"data": (3,)}, inputs={"data": ("int", -5, 5, "int8")},
         grad_req="null"),
    Case("reverse", {"axis": 0}, {"data": (3, 2)}, inputs={"data": ("int", -9, 9, "float64")},
         grad_req="null"),
    Case("Pad", {"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 1, 2, 0), "constant_value": 7},
         {"data": (1, 2, 2, 2)}, inputs={"data": ("int", 0, 9, "float64")}, grad_req="null"),
    Case("Concat", {"num_args": 2}, {"a": (2, 1), "b": (2, 2)},
         inputs={"a": ("int", 0, 9, "int32"), "b": ("int", 0, 9, "int32")}, variadic=True,
         grad_req="null"),
    Case("stack", {"num_args": 2, "axis": 1}, {"a": (3,), "b": (3,)},
         inputs={"a": ("int", 0, 9, "int64"), "b": ("int", 0, 9, "int64")}, variadic=True,
         grad_req="null"),
    Case("SliceChannel", {"num_outputs": 2, "axis": 0}, {"data": (4, 2)},
         inputs={"data": ("int", 0, 9, "int32")}, grad_req="null"),
    Case("Reshape", {"shape": (-1,)}, {"data": (2, 3)}, inputs={"data": ("int", 0, 9, "int32")},
         grad_req="null"),
    Case("Flatten", {}, {"data": (2, 3, 2)}, inputs={"data": ("int", 0, 9, "float64")},
         grad_req="null"),
    Case("add_n", {"num_args": 3}, {"a": (2, 2), "b": (2, 2), "c": (2, 2)},
         inputs={k: ("int", -50, 50, "int32") for k in "abc"}, variadic=True, grad_req="null"),
    Case("add_n", {"num_args": 2}, {"a": (3,), "b": (3,)},
         inputs={k: ("int", -9, 9, "float64") for k in "ab"}, variadic=True, grad_req="null"),
    # more defaults and refusals
    Case("_arange", {"start": 2, "step": 0.5}, {}, grad_req="null"),
    Case("_arange", {"start": 1, "stop": 4, "infer_range": True}, {}, grad_req="null"),
    Case("squeeze", {"axis": (0, 0)}, {"data": (1, 5)}, error="duplicate"),
    Case("squeeze", {"axis": 3}, {"data": (1, 5)}, error="out of bounds"),
    Case("broadcast_axis", {"axis": -1, "size": 3}, {"data": (2, 1)}, error="must be in range"),
    Case("broadcast_like", {"lhs_axes": (0,)}, {"lhs": (1, 3), "rhs": (2, 3)}),
    Case("broadcast_like", {"lhs_axes": (3,), "rhs_axes": (0,)}, {"lhs": (1, 3), "rhs": (2, 3)},
         error="lhs_axes"),
    Case("stack", {"num_args": 2, "axis": 3}, {"a": (2, 3), "b": (2, 3)}, variadic=True,
         error="axis"),
    Case("Concat", {"num_args": 2, "dim": 2}, {"a": (2, 3), "b": (2, 3)}, variadic=True,
         error="axis"),
    Case("tile", {"reps": (0, 2)}, {"data": (2, 3)}, error="reps"),
    Case("reverse", {"axis": -1}, {"data": (2, 3)}, error="must be in range"),
    Case("SliceChannel", {"num_outputs": 2, "axis": 2}, {"data": (2, 4)}, error="axis"),
]


def _lstm_unroll(given_state):
    """mx.rnn's LSTM unrolled over 3 steps: SliceChannel with squeeze_axis splits the
    time axis and the outputs are merged by expand_dims and Concat. Without
    `given_state`, begin_state is _zeros with shape (0, 8), the batch coming from
    shape inference through FullyConnected."""
    import mxnet as mx
    cell = mx.rnn.LSTMCell(num_hidden=8, prefix="lstm_")
    begin = [mx.sym.var("h0"), mx.sym.var("c0")] if given_state else None
    outputs, _ = cell.unroll(length=3, inputs=mx.sym.var("data"), begin_state=begin,
                             layout="NTC", merge_outputs=True)
    return outputs


def _from_consumer(op):
    """An operator without arguments whose length comes from its consumer: _arange
    with infer_range and no stop, or _zeros with an unknown (0) dim, added to data."""
    import mxnet as mx
    if op == "_arange":
        made = mx.sym.arange(start=1, step=2, infer_range=True)
    else:
        made = mx.sym.zeros(shape=(0, 3)) + 1
    return mx.sym.elemwise_add(made, mx.sym.var("data"))


CASES += [
    Net("arange_infer_range", lambda: _from_consumer("_arange"), {"data": (5,)}),
    Net("zeros_batch_from_consumer", lambda: _from_consumer("_zeros"), {"data": (2, 3)}),
    Net("lstm_unroll_state", lambda: _lstm_unroll(True),
        {"data": (2, 3, 5), "h0": (2, 8), "c0": (2, 8)}),
    Net("lstm_unroll", lambda: _lstm_unroll(False), {"data": (2, 3, 5)}),
]
