"""Conformance cases of the 90 operators cpu-blas registered before the model-zoo work.

Shapes and attributes follow MXNet 1.9.1's tests/python/unittest/test_operator.py
where it has cases for the operator, plus every enum value, the defaults and
edge values.  Known defects owned by other modules' cases (rrelu, SoftmaxActivation
instance mode, argmax_channel 3-D, BatchNorm's aux update, SoftmaxOutput
multi_output with smooth_alpha, Cast wrapping to uint8, norm's gradient at 0,
Dropout p=1) are not repeated here.
"""
import numpy as np

from case import Case

POS = ("uniform", 0.1, 2.0)  # inputs of log, sqrt, rsqrt, power bases, divisors
IMG = {"data": (2, 3, 8, 8)}
_rs = np.random.RandomState(1)  # fixed draws for the sweeps taken from upstream's random tests

CASES = []


def add(*a, **k):
    CASES.append(Case(*a, **k))


# ---------------------------------------------------------------- FullyConnected
add("FullyConnected", {"num_hidden": 3}, {"data": (2, 4)})
add("FullyConnected", {"num_hidden": 5, "no_bias": True}, {"data": (4, 7)})
add("FullyConnected", {"num_hidden": 4}, {"data": (2, 3, 2, 2)})
add("FullyConnected", {"num_hidden": 4, "flatten": False}, {"data": (2, 3, 5)})
add("FullyConnected", {"num_hidden": 2, "flatten": False, "no_bias": True}, {"data": (2, 2, 3, 5)})
add("FullyConnected", {"num_hidden": 1}, {"data": (1, 1)})
add("FullyConnected", {"num_hidden": 3}, {"data": (2, 4), "weight": (3, 5)},
    error="expected (3,4), got (3,5)", name="FullyConnected_bad_weight")

# ---------------------------------------------------------------- Activation
for act in ("relu", "sigmoid", "softrelu", "softsign", "tanh"):
    add("Activation", {"act_type": act}, {"data": (3, 4, 5)})
add("Activation", {"act_type": "relu"}, {"data": (7,)})
add("Activation", {"act_type": "softrelu"}, {"data": (4, 5)}, inputs={"data": ("uniform", -30, 30)})
add("Activation", {"act_type": "swish"}, {"data": (2, 3)}, error="swish")

# ---------------------------------------------------------------- element-wise binary
for op in ("elemwise_add", "elemwise_sub", "elemwise_mul"):
    add(op, {}, {"lhs": (3, 4), "rhs": (3, 4)})
    add(op, {}, {"lhs": (2, 3, 4, 5), "rhs": (2, 3, 4, 5)})
add("elemwise_div", {}, {"lhs": (3, 4), "rhs": (3, 4)}, inputs={"rhs": POS})
add("elemwise_div", {}, {"lhs": (2, 3, 4), "rhs": (2, 3, 4)}, inputs={"rhs": ("uniform", -2, -0.5)})
add("elemwise_add", {}, {"lhs": (3, 4), "rhs": (4, 3)}, error="expected (3,4), got (4,3)",
    name="elemwise_add_shape")
add("add_n", {}, {"a": (3, 4), "b": (3, 4), "c": (3, 4)}, variadic=True)
add("add_n", {}, {"a": (2, 5)}, variadic=True)
add("add_n", {}, {"a": (2, 3, 4), "b": (2, 3, 4)}, variadic=True)

# ---------------------------------------------------------------- scalar
for op in ("_plus_scalar", "_minus_scalar", "_rminus_scalar", "_mul_scalar"):
    add(op, {"scalar": 2.5}, {"data": (3, 4)})
    add(op, {"scalar": -1.0}, {"data": (2, 3, 4)})
add("_mul_scalar", {"scalar": 0.0}, {"data": (3, 4)})
add("_div_scalar", {"scalar": 4.0}, {"data": (3, 4)})
add("_div_scalar", {"scalar": -0.5}, {"data": (2, 5)})
add("_rdiv_scalar", {"scalar": 2.0}, {"data": (3, 4)}, inputs={"data": POS})
add("_rdiv_scalar", {"scalar": -3.0}, {"data": (2, 5)}, inputs={"data": ("uniform", -2, -0.5)})
add("_plus_scalar", {}, {"data": (3,)}, name="_plus_scalar_default")

# ---------------------------------------------------------------- unary
for op in ("abs", "cos", "exp", "sin", "square", "tanh", "sigmoid", "relu", "sign", "floor", "ceil",
           "round"):
    add(op, {}, {"data": (3, 4, 5)}, inputs={"data": ("uniform", -3, 3)})
for op in ("log", "sqrt", "rsqrt"):
    add(op, {}, {"data": (3, 4, 5)}, inputs={"data": POS})
add("exp", {}, {"data": (2, 3)}, inputs={"data": [[-80.0, 0.0, 1.0], [10.0, -1.0, 0.5]]})
add("relu", {}, {"data": (2, 3)}, inputs={"data": [[-1.0, 0.0, 1.0], [2.0, -0.0, 0.5]]},
    grad_req="null")
add("round", {}, {"data": (6,)}, inputs={"data": [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]})
add("sign", {}, {"data": (3,)}, inputs={"data": [-2.0, 0.0, 3.0]})
add("clip", {"a_min": -0.5, "a_max": 0.5}, {"data": (3, 4, 5)})
add("clip", {"a_min": 0.0, "a_max": 1.0}, {"data": (10,)}, inputs={"data": ("uniform", -2, 2)})
add("clip", {"a_min": -1.0, "a_max": -1.0}, {"data": (4,)})
add("BlockGrad", {}, {"data": (3, 4)})
# _copyto has no shape inference in MXNet 1.9.1 (an NDArray-only operator): no graph case.

# ---------------------------------------------------------------- broadcast
BSHAPES = [((2, 3, 4), (2, 3, 4)), ((2, 1, 4), (1, 3, 1)), ((3, 4), (1, 1)), ((1,), (2, 3)),
           ((2, 3, 1, 5), (3, 4, 1))]
for op in ("broadcast_add", "broadcast_sub", "broadcast_mul", "broadcast_maximum",
           "broadcast_minimum"):
    for a, b in BSHAPES:
        add(op, {}, {"lhs": a, "rhs": b})
for a, b in BSHAPES:
    add("broadcast_div", {}, {"lhs": a, "rhs": b}, inputs={"rhs": POS})
    add("broadcast_power", {}, {"lhs": a, "rhs": b}, inputs={"lhs": POS, "rhs": ("uniform", -2, 2)})
add("broadcast_add", {}, {"lhs": (2, 3), "rhs": (4, 3)},
    error="operands could not be broadcast together with shapes",
    name="broadcast_add_mismatch")
add("broadcast_maximum", {}, {"lhs": (4,), "rhs": (4,)},
    inputs={"lhs": [1.0, 2.0, 3.0, 4.0], "rhs": [1.0, 1.0, 5.0, 4.0]},
    name="broadcast_maximum_ties")

# ---------------------------------------------------------------- dot
add("dot", {}, {"lhs": (3, 4), "rhs": (4, 5)})
add("dot", {"transpose_a": True}, {"lhs": (4, 3), "rhs": (4, 5)})
add("dot", {"transpose_b": True}, {"lhs": (3, 4), "rhs": (5, 4)})
add("dot", {"transpose_a": True, "transpose_b": True}, {"lhs": (4, 3), "rhs": (5, 4)})
add("dot", {}, {"lhs": (4,), "rhs": (4,)})
add("dot", {}, {"lhs": (2, 3, 4), "rhs": (4, 5)})
add("dot", {}, {"lhs": (3, 4), "rhs": (4,)})
add("dot", {}, {"lhs": (3, 4), "rhs": (5, 6)}, error="dot shape error", name="dot_mismatch")
# upstream test_dot: every m, k, n in 1..4 (float32), and float64
for m in range(1, 5):
    for k in range(1, 5):
        for n in range(1, 5):
            add("dot", {}, {"lhs": (m, k), "rhs": (k, n)})
add("dot", {}, {"lhs": (3, 4), "rhs": (4, 2)}, name="dot_float64",
    inputs={"lhs": ("uniform", -1, 1, "float64"), "rhs": ("uniform", -1, 1, "float64")},
    xfail="cpu-blas's dot is float32 only (its reference operators are float32)")

# ---------------------------------------------------------------- reductions
for op in ("sum", "mean", "max", "min"):
    add(op, {}, {"data": (3, 4, 5)})
    add(op, {"axis": 1}, {"data": (3, 4, 5)})
    add(op, {"axis": (0, 2), "keepdims": True}, {"data": (3, 4, 5)})
    add(op, {"axis": -1}, {"data": (2, 3, 4, 5)})
    add(op, {"axis": 1, "exclude": True}, {"data": (3, 4, 5)})
    add(op, {"axis": ()}, {"data": (3, 4)})
# upstream test_reduce: random ndim 1-5, dims 1-5, axes, keepdims and exclude (fixed draw)
for op in ("sum", "mean", "max", "min"):
    for _ in range(6):
        ndim = _rs.randint(1, 6)
        shape = tuple(int(d) for d in _rs.randint(1, 6, size=ndim))
        axes = tuple(int(a) for a in np.nonzero(_rs.randint(0, 2, size=ndim))[0]) or (0,)
        add(op, {"axis": axes, "keepdims": bool(_rs.randint(0, 2)),
                 "exclude": bool(_rs.randint(0, 2))}, {"data": shape})
add("sum", {"axis": 3}, {"data": (3, 4, 5)}, error="axis 3", name="sum_bad_axis")
add("max", {"axis": 0}, {"data": (3, 2)}, inputs={"data": [[1.0, 5.0], [3.0, 5.0], [3.0, 0.0]]},
    name="max_ties")
add("norm", {}, {"data": (3, 4, 5)})
add("norm", {"ord": 1}, {"data": (3, 4, 5)})
add("norm", {"ord": 2, "axis": 1}, {"data": (3, 4, 5)})
add("norm", {"ord": 1, "axis": (0, 2), "keepdims": True}, {"data": (3, 4, 5)})
add("norm", {"axis": -1, "keepdims": True}, {"data": (2, 6)})
add("norm", {"ord": 3}, {"data": (3, 4)}, error="ord", name="norm_bad_ord")
add("argmax", {"axis": 1}, {"data": (3, 4, 5)}, grad_req="null")
add("argmax", {}, {"data": (3, 4)}, grad_req="null")
add("argmax", {"axis": 0, "keepdims": True}, {"data": (3, 4)}, grad_req="null")
add("argmax", {"axis": -1}, {"data": (2, 3, 4)}, grad_req="null")
add("argmax", {"axis": 1}, {"data": (2, 3)}, inputs={"data": [[1.0, 3.0, 3.0], [2.0, 2.0, 1.0]]},
    grad_req="null", name="argmax_ties")
add("argmax_channel", {}, {"data": (4, 6)}, grad_req="null")

# ---------------------------------------------------------------- shape manipulation
add("Flatten", {}, {"data": (2, 3, 4, 5)})
add("Flatten", {}, {"data": (4,)})
add("Flatten", {}, {"data": (3, 4)})
for shape in ((4, 30), (0, -1), (2, 0, -1), (-2,), (2, -2), (-3, 4, 5), (2, -3, 5), (-4, 1, 2, -2),
              (2, 3, -4, -1, 2, 5), (0, 0, 0, 0)):
    add("Reshape", {"shape": shape}, {"data": (2, 3, 4, 5)})
# upstream tests/python/unittest/test_operator.py test_reshape: (input, shape, reverse)
for src, shape, rev in (
        ((2, 3, 5, 5), (0, -1), False), ((2, 3, 5, 5), (0, 0, -1), False),
        ((5, 3, 4, 5), (0, -1, 0), False), ((2, 3, 5, 4), (-1, 0, 0), False),
        ((2, 4, 5, 3), (-1, 2, 2, 1), False), ((2, 3, 5, 6), (6, 1, -2), False),
        ((2, 3, 5, 6), (-3, -3), False), ((2, 3, 5, 6), (-3, -1), False),
        ((64,), (-4, 16, 4), False), ((64,), (-4, 16, -1), False),
        ((64, 1, 2, 3), (-4, 16, -1, -2), False), ((2, 3, 5, 5), (0, -1), True),
        ((2, 3, 5, 5), (0, 0, -1), True), ((5, 3, 4, 5), (0, -1, 0), True),
        ((2, 3, 5, 4), (-1, 0, 0), True), ((2, 3, 4, 5), (3, -1, 0), True),
        ((2, 3, 5, 5), (5, 3, 0, -1), True), ((2, 3, 5, 5), (0, 0, 0, 0), True),
        ((2, 3, 5, 6), (-2,), True), ((2, 3, 5, 6), (-2, 1, 30), True),
        ((2, 3, 5, 6), (-3, -3), True), ((64,), (16, 4, -4), True), ((64,), (16, -1, -4), True),
        ((1, 2, 3, 64), (-2, -1, 16, -4), True)):
    add("Reshape", {"shape": shape, "reverse": rev}, {"data": src})
add("Reshape", {"target_shape": (2, 0)}, {"data": (2, 3, 5, 5)}, name="Reshape_target_shape",
    note="the legacy API of test_reshape")
add("Flatten", {}, {"data": (5, 4, 3, 7)}, name="Flatten_test_reshape")
add("Reshape", {"shape": (-1, 0), "reverse": True}, {"data": (2, 3, 4, 5)})
add("Reshape", {"shape": (0, -1), "reverse": True}, {"data": (10, 5, 4)})
add("Reshape", {"shape": (7, -1)}, {"data": (2, 3, 4, 5)}, error="120 elements", name="Reshape_bad")
add("Reshape", {"shape": (-1, -1)}, {"data": (2, 3)}, error="one dim can be",
    name="Reshape_two_minus_one")
add("transpose", {}, {"data": (2, 3, 4)})
add("transpose", {"axes": (1, 0)}, {"data": (3, 4)})
add("transpose", {"axes": (0, 2, 3, 1)}, {"data": (2, 3, 4, 5)})
add("transpose", {"axes": (2, 0, 1)}, {"data": (2, 3, 4)})
# upstream test_transpose: ndim 1..6, shuffled axes (fixed draw)
for ndim in range(1, 7):
    for _ in range(2):
        dims = tuple(int(d) for d in _rs.randint(1, 5, size=ndim))
        add("transpose", {"axes": tuple(int(a) for a in _rs.permutation(ndim))}, {"data": dims})
add("transpose", {"axes": (0, 0, 1)}, {"data": (2, 3, 4)}, error="repeated",
    name="transpose_repeat")
add("SwapAxis", {}, {"data": (2, 3, 4)})
add("SwapAxis", {"dim1": 1, "dim2": 3}, {"data": (2, 3, 4, 5)})
add("SwapAxis", {"dim1": 2, "dim2": 0}, {"data": (2, 3, 4)})
add("SwapAxis", {"dim1": 1, "dim2": 1}, {"data": (2, 3)})
add("Concat", {}, {"a": (2, 3), "b": (2, 4)}, variadic=True)
add("Concat", {"dim": 0}, {"a": (2, 3), "b": (1, 3), "c": (4, 3)}, variadic=True)
add("Concat", {"dim": 2}, {"a": (2, 3, 4, 5), "b": (2, 3, 1, 5)}, variadic=True)
add("Concat", {"dim": -1}, {"a": (2, 3), "b": (2, 2)}, variadic=True)
add("Concat", {"dim": 1}, {"a": (2, 3)}, variadic=True)
add("Concat", {"dim": 1}, {"a": (2, 3), "b": (3, 3)}, variadic=True,
    error="got (3,3)", name="Concat_mismatch")
add("SliceChannel", {"num_outputs": 2}, {"data": (2, 4, 3)})
add("SliceChannel", {"num_outputs": 3, "axis": 0}, {"data": (6, 2)})
add("SliceChannel", {"num_outputs": 3, "axis": 2, "squeeze_axis": True}, {"data": (2, 4, 3)})
add("SliceChannel", {"num_outputs": 4, "axis": -1}, {"data": (2, 3, 8)})
add("SliceChannel", {"num_outputs": 1}, {"data": (2, 3)})
add("SliceChannel", {"num_outputs": 3}, {"data": (2, 4)}, error="evenly sized chunks",
    name="SliceChannel_uneven")
add("Cast", {"dtype": "float32"}, {"data": (3, 4)})
add("Cast", {"dtype": "float64"}, {"data": (3, 4)})
add("Cast", {"dtype": "float16"}, {"data": (3, 4)})
add("Cast", {"dtype": "int32"}, {"data": (3, 4)}, inputs={"data": ("uniform", -100, 100)})
add("Cast", {"dtype": "int64"}, {"data": (3, 4)}, inputs={"data": ("uniform", -100, 100)})
add("Cast", {"dtype": "int8"}, {"data": (3, 4)}, inputs={"data": ("uniform", -100, 100)})
add("Cast", {"dtype": "uint8"}, {"data": (3, 4)}, inputs={"data": ("uniform", 0, 200)})
add("Cast", {"dtype": "float32"}, {"data": (3, 4)}, inputs={"data": ("int", -5, 5, "int32")},
    grad_req="null", name="Cast_from_int32")

# ---------------------------------------------------------------- softmax family
for axis in (-1, 0, 1):
    add("softmax", {"axis": axis}, {"data": (3, 4, 5)})
    add("log_softmax", {"axis": axis}, {"data": (3, 4, 5)})
add("softmax", {"temperature": 2.0}, {"data": (3, 6)})
add("log_softmax", {"temperature": 0.5}, {"data": (3, 6)})
add("softmax", {}, {"data": (2, 3)}, inputs={"data": [[1000.0, 0.0, -1000.0], [1.0, 1.0, 1.0]]},
    name="softmax_large")
add("log_softmax", {}, {"data": (2, 3)},
    inputs={"data": [[1000.0, 0.0, -1000.0], [1.0, 1.0, 1.0]]}, name="log_softmax_large")
add("softmax", {"axis": 3}, {"data": (2, 3)}, error="axis 3", name="softmax_bad_axis")
add("SoftmaxActivation", {"mode": "channel"}, {"data": (2, 3, 4, 5)})
add("SoftmaxActivation", {"mode": "channel"}, {"data": (2, 5)}, error="3 dim",
    note="MXNet: Input need to have a least 3 dimensions when mode=channel (at forward)")
SO_LABEL = {"data": (4, 5), "label": (4,)}
SO_INT = {"label": ("int", 0, 5)}
SO_REQ = {"data": "write", "label": "null"}
add("SoftmaxOutput", {}, SO_LABEL, inputs=SO_INT, grad_req=SO_REQ)
add("SoftmaxOutput", {"grad_scale": 0.5}, SO_LABEL, inputs=SO_INT, grad_req=SO_REQ)
for norm in ("null", "batch", "valid"):
    add("SoftmaxOutput", {"normalization": norm, "use_ignore": True, "ignore_label": 1},
        SO_LABEL, inputs={"label": [0.0, 1.0, 2.0, 1.0]}, grad_req=SO_REQ)
add("SoftmaxOutput", {"multi_output": True}, {"data": (2, 3, 4, 5), "label": (2, 4, 5)},
    inputs={"label": ("int", 0, 3)}, grad_req=SO_REQ)
add("SoftmaxOutput", {"multi_output": True, "use_ignore": True, "ignore_label": 0,
                      "normalization": "valid"}, {"data": (2, 3, 4), "label": (2, 4)},
    inputs={"label": ("int", 0, 3)}, grad_req=SO_REQ)
add("SoftmaxOutput", {"preserve_shape": True}, {"data": (2, 3, 4), "label": (2, 3)},
    inputs={"label": ("int", 0, 4)}, grad_req=SO_REQ)
add("SoftmaxOutput", {"smooth_alpha": 0.1}, SO_LABEL, inputs=SO_INT, grad_req=SO_REQ)
add("SoftmaxOutput", {"out_grad": True}, SO_LABEL, inputs=SO_INT, grad_req=SO_REQ)
add("SoftmaxOutput", {}, {"data": (2, 3, 4)}, grad_req="null", name="SoftmaxOutput_infer_label")
# upstream test_softmax_output_normalization: batch 8, 6 labels, 3x3 for multi_output
for multi in (False, True):
    for ignore in (False, True):
        for norm in ("null", "batch", "valid"):
            attrs = {"grad_scale": 0.37, "normalization": norm, "multi_output": multi}
            if ignore:
                attrs.update(use_ignore=True, ignore_label=2)
            add("SoftmaxOutput", attrs,
                {"data": (8, 6, 3, 3) if multi else (8, 6), "label": (8, 3, 3) if multi else (8,)},
                inputs={"label": ("int", 0, 6)}, grad_req=SO_REQ)
for op in ("LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"):
    add(op, {}, {"data": (4, 3), "label": (4, 3)}, grad_req=SO_REQ)
    add(op, {"grad_scale": 2.0}, {"data": (2, 3, 4), "label": (2, 3, 4)}, grad_req=SO_REQ)
    add(op, {}, {"data": (5, 1), "label": (5,)}, grad_req=SO_REQ)
    add(op, {}, {"data": (50, 30), "label": (50, 30)}, grad_req=SO_REQ,
        inputs={"label": ("uniform", 0, 1)}, name=op + "_test_regression")

# ---------------------------------------------------------------- convolution
add("Convolution", {"kernel": (3, 3), "num_filter": 4}, IMG)
add("Convolution", {"kernel": (3, 3), "num_filter": 4, "pad": (1, 1), "stride": (2, 2)}, IMG)
add("Convolution", {"kernel": (2, 3), "num_filter": 2, "dilate": (2, 1), "no_bias": True}, IMG)
add("Convolution", {"kernel": (3, 3), "num_filter": 6, "num_group": 3, "pad": (1, 1)}, IMG)
add("Convolution", {"kernel": (1, 1), "num_filter": 5}, IMG)
add("Convolution", {"kernel": (3,), "num_filter": 4, "pad": (1,)}, {"data": (2, 3, 10)})
add("Convolution", {"kernel": (3,), "num_filter": 2, "stride": (2,), "dilate": (2,)},
    {"data": (2, 2, 11)})
add("Convolution", {"kernel": (2, 2, 2), "num_filter": 3, "pad": (1, 0, 1)},
    {"data": (1, 2, 4, 5, 6)})
add("Convolution", {"kernel": (8, 8), "num_filter": 2}, IMG)
add("Convolution", {"kernel": (3, 3), "num_filter": 4, "num_group": 2}, IMG, error="num_group",
    name="Convolution_bad_group")
add("Convolution", {"kernel": (9, 9), "num_filter": 4}, IMG, error="kernel size exceed input",
    name="Convolution_too_big")
add("Deconvolution", {"kernel": (3, 3), "num_filter": 4}, IMG)
add("Deconvolution", {"kernel": (3, 3), "num_filter": 2, "stride": (2, 2), "pad": (1, 1),
                      "adj": (1, 1)}, IMG)
add("Deconvolution", {"kernel": (4, 4), "num_filter": 3, "stride": (2, 2), "pad": (1, 1),
                      "no_bias": False}, IMG)
add("Deconvolution", {"kernel": (3, 3), "num_filter": 6, "num_group": 3}, IMG)
add("Deconvolution", {"kernel": (2, 2), "num_filter": 2, "dilate": (2, 2)}, IMG, mkldnn=False,
    note="MXNet's MKLDNN path refuses dilated deconvolution")
add("Deconvolution", {"kernel": (3, 3), "num_filter": 2, "stride": (2, 2),
                      "target_shape": (16, 16)}, IMG, mkldnn=False,
    note="MXNet's MKLDNN path refuses it ('dilated deconvolution' descriptor)")
add("Deconvolution", {"kernel": (3,), "num_filter": 2, "stride": (2,)}, {"data": (2, 3, 7)})
# upstream test_operator.py test_deconvolution (403x403 and batch 32 made smaller):
# target_shape overrides pad and adj.
for k in ((3, 3), (3,)):
    d, tgt = (2, 3) + (4,) * len(k), (8,) * len(k)
    add("Deconvolution", {"kernel": k, "stride": (2,) * len(k), "target_shape": tgt,
                          "pad": (99,) * len(k), "adj": (101,) * len(k), "num_filter": 5},
        {"data": d}, mkldnn=False, note="MXNet's MKLDNN path refuses target_shape")
    add("Deconvolution", {"kernel": k, "stride": (2,) * len(k), "pad": (1,) * len(k),
                          "adj": (1,) * len(k), "num_filter": 5}, {"data": d})
    add("Deconvolution", {"kernel": k, "num_filter": 1, "pad": (1,) * len(k)},
        {"data": (1, 1) + (5,) * len(k)})
    add("Deconvolution", {"kernel": k, "num_filter": 3, "pad": (1,) * len(k)},
        {"data": (4, 3) + (28,) * len(k)})
    add("Deconvolution", {"kernel": (7,) * len(k), "num_filter": 3, "stride": (5,) * len(k),
                          "pad": (2,) * len(k)}, {"data": (1, 3) + (23,) * len(k)})
# upstream test_convolution_grouping: 4 filters in 2 groups, kernel 3, 1-D to 3-D
for dim in (1, 2, 3):
    add("Convolution", {"kernel": (3,) * dim, "num_filter": 4, "num_group": 2},
        {"data": (1, 4) + (9,) * dim})

# ---------------------------------------------------------------- pooling
for pt in ("max", "avg", "sum"):
    add("Pooling", {"kernel": (2, 2), "stride": (2, 2), "pool_type": pt}, IMG)
    add("Pooling", {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": pt}, IMG)
    add("Pooling", {"kernel": (3, 3), "stride": (2, 2), "pool_type": pt,
                    "pooling_convention": "full"}, {"data": (2, 3, 7, 7)})
    add("Pooling", {"pool_type": pt, "global_pool": True}, IMG)
    add("Pooling", {"kernel": (3,), "stride": (2,), "pool_type": pt}, {"data": (2, 3, 9)})
    add("Pooling", {"kernel": (2, 2, 2), "stride": (2, 2, 2), "pool_type": pt},
        {"data": (1, 2, 4, 4, 4)})
add("Pooling", {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "avg",
                "count_include_pad": False}, IMG)
add("Pooling", {"kernel": (3, 3), "stride": (2, 2), "pool_type": "max",
                "pooling_convention": "same"}, {"data": (2, 3, 7, 7)}, error="same",
    name="Pooling_same_2d", note="MXNet: 'same' supports max pooling 1-D only")
add("Pooling", {"kernel": (2, 2), "stride": (2, 2), "pool_type": "lp", "p_value": 2}, IMG)
add("Pooling", {"kernel": (2, 2), "stride": (2, 2), "pool_type": "lp", "p_value": 1}, IMG)
add("Pooling", {"kernel": (2, 2)}, IMG, name="Pooling_defaults")
add("Pooling", {"kernel": (9, 9)}, IMG, error="kernel size (9) exceeds input",
    name="Pooling_too_big")

# ---------------------------------------------------------------- normalisation, regularisation
add("BatchNorm", {}, IMG, is_train=False)
add("BatchNorm", {"fix_gamma": False, "eps": 1e-5}, IMG, is_train=False)
add("BatchNorm", {"use_global_stats": True, "fix_gamma": False}, IMG, is_train=False)
add("BatchNorm", {"fix_gamma": False, "axis": -1}, {"data": (2, 5, 3)}, is_train=False)
add("LRN", {"nsize": 3}, IMG)
add("LRN", {"nsize": 5, "alpha": 0.001, "beta": 0.5, "knorm": 1.0}, {"data": (2, 6, 4, 4)})
add("LRN", {"nsize": 1}, {"data": (1, 2, 3, 3)})
add("Dropout", {"p": 0.5}, {"data": (40, 50)})
add("Dropout", {"p": 0.2, "mode": "always"}, {"data": (40, 50)})
add("Dropout", {"p": 0.0}, {"data": (4, 5)})
add("Dropout", {"p": 0.3, "axes": (1,)}, {"data": (20, 10, 10)})
add("Dropout", {}, {"data": (3, 4)}, is_train=False, name="Dropout_inference")

# ---------------------------------------------------------------- LeakyReLU
# selu and gelu: cases/math.py (with MXNet's selu gradient defect).
for act, extra in (("leaky", {}), ("leaky", {"slope": 0.1}), ("elu", {}), ("elu", {"slope": 0.5})):
    add("LeakyReLU", dict(act_type=act, **extra), {"data": (3, 4, 5)})
add("LeakyReLU", {"act_type": "prelu"}, {"data": (2, 3, 4), "gamma": (3,)})
add("LeakyReLU", {"act_type": "prelu"}, {"data": (2, 3, 4, 4), "gamma": (1,)})

# ---------------------------------------------------------------- up-sampling, crop
add("UpSampling", {"scale": 2, "sample_type": "nearest"}, {"a": (2, 3, 4, 4)}, variadic=True)
add("UpSampling", {"scale": 3, "sample_type": "nearest"}, {"a": (1, 2, 3, 5)}, variadic=True)
add("UpSampling", {"scale": 2, "sample_type": "nearest", "multi_input_mode": "concat"},
    {"a": (2, 3, 4, 4), "b": (2, 2, 2, 2)}, variadic=True)
add("UpSampling", {"scale": 2, "sample_type": "nearest", "multi_input_mode": "sum"},
    {"a": (2, 3, 4, 4), "b": (2, 3, 2, 2)}, variadic=True)
add("UpSampling", {"scale": 2, "sample_type": "bilinear", "num_filter": 3},
    {"data": (2, 3, 4, 4)})
# upstream test_nearest_upsampling (base 1 and 2) and test_bilinear_upsampling (weight given)
for root in (1, 2, 3):
    for scale in (1, 2):
        for n in (1, 2, 3):
            for base in (1, 2):
                side = [base * root * scale ** (n - 1 - i) for i in range(n)]
                add("UpSampling", {"scale": root, "sample_type": "nearest"},
                    {"arg_%d" % i: (1, 3, side[i], side[i]) for i in range(n)}, variadic=True)
for root in (2, 3):
    for nf in (1, 2, 3):
        k = 2 * root - root % 2
        add("UpSampling", {"scale": root, "sample_type": "bilinear", "num_filter": nf},
            {"data": (1, nf, 2 * root, 2 * root), "weight": (nf, 1, k, k)}, variadic=True)
add("Crop", {"h_w": (3, 4)}, {"a": (2, 3, 8, 8)}, variadic=True)
add("Crop", {"h_w": (3, 4), "offset": (2, 1)}, {"a": (2, 3, 8, 8)}, variadic=True)
add("Crop", {"h_w": (3, 4), "center_crop": True}, {"a": (2, 3, 8, 8)}, variadic=True)
add("Crop", {}, {"a": (2, 3, 8, 8), "b": (2, 1, 5, 6)}, variadic=True)
add("Crop", {"center_crop": True}, {"a": (2, 3, 8, 8), "b": (2, 1, 5, 6)}, variadic=True)
add("Crop", {"h_w": (9, 4)}, {"a": (2, 3, 8, 8)}, variadic=True, error="exceeds the input",
    name="Crop_too_big")

# ---------------------------------------------------------------- embedding, one_hot
add("Embedding", {"input_dim": 10, "output_dim": 4}, {"data": (3, 5)},
    inputs={"data": ("int", 0, 10)}, grad_req={"data": "null", "x_weight": "write"})
add("Embedding", {"input_dim": 10, "output_dim": 4}, {"data": (3, 5)},
    inputs={"data": ("int", 0, 10)}, grad_req={"data": "null", "x_weight": "add"},
    name="Embedding_add")
add("Embedding", {"input_dim": 5, "output_dim": 3}, {"data": (6,)},
    inputs={"data": [0.0, 4.0, 4.0, 2.0, 0.0, 4.0]}, grad_req={"data": "null"},
    name="Embedding_repeat")
add("Embedding", {"input_dim": 5, "output_dim": 3}, {"data": (4,)},
    inputs={"data": [-1.0, 7.0, 2.0, 4.0]}, grad_req={"data": "null"}, name="Embedding_clip")
for dt in ("float32", "int32", "float64", "uint8"):
    add("one_hot", {"depth": 5, "dtype": dt}, {"indices": (2, 3)},
        inputs={"indices": ("int", 0, 5)},
        grad_req="null")
add("one_hot", {"depth": 4, "on_value": 2.5, "off_value": -1.0}, {"indices": (5,)},
    inputs={"indices": [0.0, 3.0, -1.0, 4.0, 1.0]}, grad_req="null", name="one_hot_out_of_range")

# ---------------------------------------------------------------- optimizers (forward only)
OPT = {"weight": (3, 4), "grad": (3, 4)}
MOM = dict(OPT, mom=(3, 4))
ADAM = dict(OPT, mean=(3, 4), var=(3, 4))
add("sgd_update", {"lr": 0.1}, OPT, grad_req="null")
add("sgd_update", {"lr": 0.05, "wd": 0.01, "rescale_grad": 0.5, "clip_gradient": 0.3}, OPT,
    grad_req="null")
add("sgd_mom_update", {"lr": 0.1, "momentum": 0.9}, MOM, grad_req="null")
add("sgd_mom_update", {"lr": 0.1, "momentum": 0.5, "wd": 0.1, "clip_gradient": 0.2}, MOM,
    grad_req="null")
add("adam_update", {"lr": 0.01}, ADAM, grad_req="null")
add("adam_update", {"lr": 0.01, "beta1": 0.5, "beta2": 0.9, "epsilon": 1e-3, "wd": 0.1,
                    "rescale_grad": 2.0, "clip_gradient": 0.5}, ADAM, grad_req="null")

# ---------------------------------------------------------------- random
add("_random_uniform", {"shape": (50, 40)}, {}, grad_req="null")
add("_random_uniform", {"low": -2.0, "high": 3.0, "shape": (2000,)}, {}, grad_req="null")
add("_random_uniform", {"shape": (100, 20), "dtype": "float64"}, {}, grad_req="null")
add("_random_normal", {"shape": (50, 40)}, {}, grad_req="null")
add("_random_normal", {"loc": 1.5, "scale": 0.5, "shape": (2000,)}, {}, grad_req="null")

# ---------------------------------------------------------------- aliases (MXNet's add_alias)
# The JSON given to mxk names the alias; MXNet runs the canonical operator.
BIN = {"lhs": (3, 4), "rhs": (3, 4)}
for alias, attrs, shapes in (
        ("_plus", {}, BIN), ("_Plus", {}, BIN), ("_add", {}, BIN), ("_minus", {}, BIN),
        ("_sub", {}, BIN), ("_Minus", {}, BIN), ("_mul", {}, BIN), ("_Mul", {}, BIN),
        ("broadcast_plus", {}, {"lhs": (3, 1), "rhs": (1, 4)}),
        ("broadcast_minus", {}, {"lhs": (3, 1), "rhs": (1, 4)}),
        ("split", {"num_outputs": 2}, {"data": (2, 4)}), ("flatten", {}, {"data": (2, 3, 4)}),
        ("reshape", {"shape": (4, -1)}, {"data": (2, 3, 4)}), ("swapaxes", {}, {"data": (2, 3)}),
        ("stop_gradient", {}, {"data": (2, 3)}), ("cast", {"dtype": "float64"}, {"data": (2, 3)})):
    add(alias, attrs, shapes, name="alias_" + alias)
add("_div", {}, BIN, inputs={"rhs": POS}, name="alias__div")
add("_Div", {}, BIN, inputs={"rhs": POS}, name="alias__Div")
add("ElementWiseSum", {}, {"a": (2, 3), "b": (2, 3)}, variadic=True, name="alias_ElementWiseSum")
add("concat", {"dim": 0}, {"a": (2, 3), "b": (1, 3)}, variadic=True, name="alias_concat")
add("uniform", {"shape": (50, 40)}, {}, grad_req="null", name="alias_uniform")
add("random_normal", {"shape": (50, 40)}, {}, grad_req="null", name="alias_random_normal")
