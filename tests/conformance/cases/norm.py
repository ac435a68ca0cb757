"""Conformance cases of the norm group: normalisation and loss operators (BatchNorm, LayerNorm,
InstanceNorm, GroupNorm, L2Normalization, Dropout, SoftmaxOutput, the regression outputs,
MakeLoss, make_loss, SVMOutput, softmax_cross_entropy, FullyConnected; plugins/cpu-blas/
op_batchnorm.c, op_norm_*.c, op_dropout.c, op_softmax_output.c, op_regression.c,
op_fully_connected.c). Shapes and attributes follow MXNet's own tests
(tests/python/unittest/test_operator.py at 1.9.1) plus every enum value, defaults and edges.

Loss operators whose gradient ignores out_grad (SoftmaxOutput, SVMOutput, the regression
outputs) are compared with grad_req write only and without a label gradient: MXNet 1.9.1
overwrites their input gradient even for grad_req add (mshadow's `grad = ...` ignores the
request) and leaves the label's gradient unwritten; mxk accumulates as the request says and
writes a zero label gradient.
"""
from case import Case

LABEL_NULL = {"data": "write", "label": "null"}

CASES = [
    # ------------------------------------------------------------------ BatchNorm
    Case("BatchNorm", {}, {"data": (2, 3, 2, 2)},
         note="fix_gamma=True (default): gamma is set to 1 by forward, its gradient is 0"),
    Case("BatchNorm", {"fix_gamma": False}, {"data": (2, 3, 2, 2)}),
    Case("BatchNorm", {"fix_gamma": False, "use_global_stats": True}, {"data": (2, 3, 2, 2)}),
    Case("BatchNorm", {"fix_gamma": False, "momentum": 0.5, "eps": 0.01, "axis": -1},
         {"data": (4, 3)}),
    Case("BatchNorm", {"fix_gamma": False, "axis": 2}, {"data": (2, 3, 4)}),
    Case("BatchNorm", {"fix_gamma": False, "output_mean_var": True}, {"data": (2, 3, 2, 2)}),
    Case("BatchNorm", {"fix_gamma": False, "axis": 1}, {"data": (3, 2, 2, 2, 2)}),
    Case("BatchNorm", {"fix_gamma": True, "momentum": 0.9}, {"data": (2, 2, 1, 1)},
         grad_req="null", is_train=True, name="BatchNorm_forward_only_train",
         note="a forward-only training pass leaves the moving statistics (updated in backward)"),
    Case("BatchNorm", {}, {"data": (2, 2, 1, 1), "gamma": (3,)},
         name="BatchNorm_gamma_shape_overridden",
         note="upstream's BatchNormShape assigns (C,) over a given gamma shape",
         xfail="mxk's inference pass refuses an operator that changes a known argument shape; "
               "BatchNorm's infer_shape assigns (C,) as upstream's"),
    Case("BatchNorm", {"fix_gamma": True}, {"data": (2, 3, 2)}, grad_req="add", mkldnn=False,
         name="BatchNorm_fix_gamma_add",
         note="MKLDNN writes 0 into gamma's gradient even for grad_req add; the CPU kernel adds 0"),
    Case("BatchNorm", {"axis": 4}, {"data": (2, 3, 2, 2)}, error="axis 4 is out of range"),
    Case("BatchNorm", {"fix_gamma": False, "eps": 0}, {"data": (2, 3, 2)}, name="BatchNorm_eps0"),
    Case("BatchNorm", {"fix_gamma": False, "momentum": 1.5}, {"data": (2, 3, 2)},
         name="BatchNorm_momentum_above_1"),
    Case("BatchNorm", {"fix_gamma": False, "momentum": -0.5}, {"data": (2, 3, 2)},
         name="BatchNorm_momentum_negative"),
    # ------------------------------------------------------------------ LayerNorm
    Case("LayerNorm", {}, {"data": (2, 3, 4)}),
    Case("LayerNorm", {"axis": 1}, {"data": (2, 3, 4)}),
    Case("LayerNorm", {"axis": 0, "eps": 0.1}, {"data": (3, 2)}),
    Case("LayerNorm", {"axis": -2, "output_mean_var": True}, {"data": (2, 3, 2, 2)}),
    Case("LayerNorm", {"output_mean_var": True}, {"data": (4, 5)}),
    Case("LayerNorm", {"axis": 3}, {"data": (2, 3, 4)}, error="Channel axis out of range"),
    Case("LayerNorm", {}, {"data": (2, 3), "gamma": (4,)}, error="argument 'gamma'"),
    # ------------------------------------------------------------------ InstanceNorm
    Case("InstanceNorm", {}, {"data": (2, 3, 4)}),
    Case("InstanceNorm", {"eps": 0.1}, {"data": (1, 2, 2, 3)}),
    Case("InstanceNorm", {}, {"data": (3, 1, 5)}),
    Case("InstanceNorm", {}, {"data": (2, 2, 2, 2, 2)}),
    Case("InstanceNorm", {}, {"data": (2, 3)}, error="only supports input tensors of rank >= 3"),
    # ------------------------------------------------------------------ GroupNorm
    Case("GroupNorm", {}, {"data": (2, 3, 4)}),
    Case("GroupNorm", {"num_groups": 2}, {"data": (2, 4, 3)}),
    Case("GroupNorm", {"num_groups": 4, "output_mean_var": True}, {"data": (2, 4, 2, 2)}),
    Case("GroupNorm", {"num_groups": 2, "eps": 0.01}, {"data": (1, 6, 2, 1, 2)}),
    Case("GroupNorm", {"num_groups": 2}, {"data": (2, 3, 4)},
         error="# of channels must be divisible by # of groups"),
    # ------------------------------------------------------------------ L2Normalization
    Case("L2Normalization", {}, {"data": (2, 3, 4)}),
    Case("L2Normalization", {"mode": "instance", "eps": 0.5}, {"data": (3, 5)}),
    Case("L2Normalization", {"mode": "channel"}, {"data": (2, 3, 4)}),
    Case("L2Normalization", {"mode": "channel"}, {"data": (2, 3, 2, 2)}),
    Case("L2Normalization", {"mode": "spatial"}, {"data": (2, 3, 2, 2)}),
    Case("L2Normalization", {"mode": "spatial"}, {"data": (2, 3)},
         error="At least 3 dimensions required in spatial mode"),
    # ------------------------------------------------------------------ Dropout
    Case("Dropout", {"p": 1.0}, {"data": (2, 3)}, name="Dropout_p1",
         note="p=1 in training: upstream's mask is 0 * 1/0, NaN everywhere, and so is mxk's"),
    Case("Dropout", {"p": 1.0, "axes": (1,)}, {"data": (2, 3)}, name="Dropout_p1_axes"),
    Case("Dropout", {"p": 0.0}, {"data": (2, 3)}, name="Dropout_p0"),
    Case("Dropout", {"p": 0.5}, {"data": (3, 4)}, is_train=False, name="Dropout_inference"),
    Case("Dropout", {"p": 1.5}, {"data": (2, 3)}, error="attribute 'p'"),
    # ------------------------------------------------------------------ SoftmaxOutput
    Case("SoftmaxOutput", {}, {"data": (3, 4), "label": (3,)}, inputs={"label": ("int", 0, 4)},
         grad_req=LABEL_NULL),
    Case("Softmax", {}, {"data": (3, 4), "label": (3,)}, inputs={"label": ("int", 0, 4)},
         grad_req=LABEL_NULL, name="Softmax_alias"),
    Case("SoftmaxOutput", {"grad_scale": 0.5, "normalization": "batch"},
         {"data": (4, 3), "label": (4,)}, inputs={"label": ("int", 0, 3)}, grad_req=LABEL_NULL),
    Case("SoftmaxOutput", {"use_ignore": True, "ignore_label": 1, "normalization": "valid"},
         {"data": (4, 3), "label": (4,)}, inputs={"label": [1.0, 0.0, 1.0, 2.0]}, grad_req=LABEL_NULL),
    Case("SoftmaxOutput", {"smooth_alpha": 0.2}, {"data": (3, 4), "label": (3,)},
         inputs={"label": ("int", 0, 4)}, grad_req=LABEL_NULL),
    Case("SoftmaxOutput", {"smooth_alpha": 1.0, "normalization": "valid"},
         {"data": (3, 4), "label": (3,)}, inputs={"label": ("int", 0, 4)}, grad_req=LABEL_NULL),
    Case("SoftmaxOutput", {"smooth_alpha": 1.5}, {"data": (3, 4), "label": (3,)},
         error="smooth_alpha"),
    Case("SoftmaxOutput", {"multi_output": True, "smooth_alpha": 0.3},
         {"data": (1, 3, 2), "label": (1, 2)}, inputs={"label": [[0.0, 2.0]]}, grad_req=LABEL_NULL,
         name="SoftmaxOutput_multi_output_no_smoothing",
         note="upstream does not smooth labels in multi_output mode"),
    Case("SoftmaxOutput", {"multi_output": True, "normalization": "batch", "grad_scale": 2},
         {"data": (2, 3, 2, 2), "label": (2, 2, 2)}, inputs={"label": ("int", 0, 3)},
         grad_req=LABEL_NULL),
    Case("SoftmaxOutput", {"multi_output": True, "normalization": "valid", "use_ignore": True,
                           "ignore_label": 0},
         {"data": (2, 3, 4), "label": (2, 4)}, inputs={"label": ("int", 0, 3)},
         grad_req=LABEL_NULL),
    Case("SoftmaxOutput", {"multi_output": True}, {"data": (2, 3, 4), "label": (2, 1, 4)},
         inputs={"label": ("int", 0, 3)}, grad_req=LABEL_NULL),
    Case("SoftmaxOutput", {"preserve_shape": True, "smooth_alpha": 0.2},
         {"data": (2, 2, 3), "label": (2, 2)}, inputs={"label": ("int", 0, 3)},
         grad_req=LABEL_NULL),
    Case("SoftmaxOutput", {}, {"data": (2, 2, 3), "label": (2, 2)},
         inputs={"label": ("int", 0, 6)}, grad_req=LABEL_NULL, name="SoftmaxOutput_3d_default",
         note="rows (N, size/N); row i uses label element i, as upstream's flat label view"),
    Case("SoftmaxOutput", {"normalization": "batch"}, {"data": (2, 2, 3), "label": (2, 2)},
         inputs={"label": ("int", 0, 6)}, grad_req=LABEL_NULL,
         name="SoftmaxOutput_3d_default_batch"),
    Case("SoftmaxOutput", {}, {"data": (3, 4), "label": (3, 4)},
         inputs={"label": ("uniform", 0, 1)}, grad_req=LABEL_NULL,
         name="SoftmaxOutput_probability_label"),
    Case("SoftmaxOutput", {"out_grad": True}, {"data": (2, 3), "label": (2,)},
         inputs={"label": [0.0, 1.0]}, grad_req=LABEL_NULL, is_train=True,
         note="upstream 1.9.1 multiplies by the output, not out_grad (SoftmaxOutputGradCompute "
              "passes the output as out_grad); mxk does the same"),
    Case("SoftmaxOutput", {}, {"data": (3, 4), "label": (2,)}, error="argument 'label'"),
    # ------------------------------------------------------------------ regression outputs
    Case("LinearRegressionOutput", {}, {"data": (3, 2), "label": (3, 2)}, grad_req=LABEL_NULL),
    Case("LogisticRegressionOutput", {"grad_scale": 0.5}, {"data": (2, 3), "label": (2, 3)},
         inputs={"label": ("uniform", 0, 1)}, grad_req=LABEL_NULL),
    Case("MAERegressionOutput", {"grad_scale": 2}, {"data": (5, 1), "label": (5,)},
         grad_req=LABEL_NULL),
    # ------------------------------------------------------------------ MakeLoss / make_loss
    Case("MakeLoss", {}, {"data": (2, 3)}),
    Case("MakeLoss", {"grad_scale": 2.5, "normalization": "batch"}, {"data": (4, 3)}),
    Case("MakeLoss", {"normalization": "batch"}, {"data": (2, 3, 2)}),
    Case("MakeLoss", {"normalization": "batch"}, {"data": (5,)}),
    Case("MakeLoss", {"normalization": "valid", "valid_thresh": 0.2}, {"data": (3, 4)}),
    Case("MakeLoss", {"normalization": "valid", "valid_thresh": 5}, {"data": (3, 4)}),
    Case("make_loss", {}, {"data": (2, 3)}),
    Case("MakeLoss", {"grad_scale": 1e40}, {"data": (2, 3)}, error="must be a float32 value"),
    Case("LayerNorm", {"eps": 1e40}, {"data": (2, 3)}, error="must be a float32 value"),
    Case("BatchNorm", {"momentum": 1e40}, {"data": (2, 3)}, error="must be a float32 value"),
    # ------------------------------------------------------------------ SVMOutput
    Case("SVMOutput", {}, {"data": (3, 4), "label": (3,)}, inputs={"label": ("int", 0, 4)},
         grad_req=LABEL_NULL),
    Case("SVMOutput", {"use_linear": True}, {"data": (3, 4), "label": (3,)},
         inputs={"label": ("int", 0, 4)}, grad_req=LABEL_NULL),
    Case("SVMOutput", {"margin": 0.5, "regularization_coefficient": 2},
         {"data": (2, 3, 4), "label": (2, 3)}, inputs={"label": ("int", 0, 4)},
         grad_req=LABEL_NULL),
    Case("SVMOutput", {"use_linear": True, "margin": 0.2}, {"data": (4, 3), "label": (4,)},
         inputs={"label": ("int", 0, 3)}, grad_req=LABEL_NULL),
    # ------------------------------------------------------------------ softmax_cross_entropy
    Case("softmax_cross_entropy", {}, {"data": (3, 4), "label": (3,)},
         inputs={"label": ("int", 0, 4)}, grad_req=LABEL_NULL),
    Case("softmax_cross_entropy", {}, {"data": (2, 3), "label": (2,)},
         inputs={"data": [[1.0, 2.0, 3.0], [11.0, 7.0, 5.0]], "label": [2.0, 0.0]}, grad_req=LABEL_NULL),
    Case("softmax_cross_entropy", {}, {"data": (2, 3), "label": (3,)},
         error="data label shape mismatch"),
    # ------------------------------------------------------------------ FullyConnected
    Case("FullyConnected", {"num_hidden": 4}, {"data": (2, 3)}),
    Case("FullyConnected", {"num_hidden": 3, "no_bias": True}, {"data": (2, 2, 3)}),
    Case("FullyConnected", {"num_hidden": 2, "flatten": False}, {"data": (2, 3, 4)}),
]

# ---------------------------------------------------------------------- from MXNet's own tests
# test_batchnorm_training / test_batchnorm (tests/python/unittest/test_operator.py at 1.9.1)
CASES += [Case("BatchNorm", {"fix_gamma": fg, "use_global_stats": gs}, {"data": shape})
          for shape in [(2, 3), (2, 3, 2, 2), (2, 8, 2, 2)]
          for fg in [True, False] for gs in [True, False]]
CASES += [Case("BatchNorm", {"fix_gamma": False, "axis": ax}, {"data": (2, 3, 2, 2)})
          for ax in range(-4, 4)]
CASES += [Case("BatchNorm", {"fix_gamma": False, "output_mean_var": True, "momentum": 0.9,
                             "eps": 1e-5},
               {"data": (4, 2, 3)}, grad_req=req)
          for req in [{"data": "null", "x_gamma": "write", "x_beta": "add"},
                      {"data": "add", "x_gamma": "null", "x_beta": "write"},
                      {"data": "write", "x_gamma": "add", "x_beta": "null"}]]
# test_instance_normalization
CASES += [Case("InstanceNorm", {}, {"data": shape})
          for shape in [(1, 1, 1), (2, 1, 2), (2, 4, 5, 6), (3, 3, 2, 3, 2, 1, 1)]]
# test_l2_normalization
CASES += [Case("L2Normalization", {"mode": mode}, {"data": shape})
          for mode in ["channel", "spatial", "instance"] for shape in [(2, 4, 5), (3, 3, 4, 5)]]
# test_layer_norm
CASES += [Case("LayerNorm", {"axis": ax, "eps": eps}, {"data": shape})
          for shape, eps in [((10, 6, 5), 1e-2), ((10, 10), 1e-3)]
          for ax in range(-len(shape), len(shape))]
# test_groupnorm
CASES += [Case("GroupNorm", {"num_groups": g}, {"data": (2, 6, 3, 3)},
               inputs={"data": ("uniform", 0.2, 1.0)})
          for g in [1, 2, 3, 6]]
# test_support_vector_machine_l1_svm / _l2_svm
CASES += [Case("SVMOutput", {"use_linear": lin}, {"data": (20, 10), "label": (20,)},
               inputs={"data": ("uniform", 0, 1), "label": ("int", 0, 10)}, grad_req=LABEL_NULL)
          for lin in [True, False]]
# test_regression
CASES += [Case(op, {}, {"data": (50, 30), "label": (50, 30)},
               inputs={"label": ("uniform", 0, 1)}, grad_req=LABEL_NULL)
          for op in ["LogisticRegressionOutput", "LinearRegressionOutput", "MAERegressionOutput"]]
# test_softmax_output_normalization
CASES += [Case("SoftmaxOutput",
               dict({"normalization": norm, "multi_output": multi},
                    **({"use_ignore": True, "ignore_label": 2} if ign else {})),
               {"data": (4, 5, 3, 3) if multi else (4, 5),
                "label": (4, 3, 3) if multi else (4,)},
               inputs={"label": ("int", 0, 5)}, grad_req=LABEL_NULL)
          for multi in [False, True] for ign in [False, True]
          for norm in ["null", "batch", "valid"]]
# test_softmax_cross_entropy
CASES += [Case("softmax_cross_entropy", {}, {"data": (120, 150), "label": (120,)},
               inputs={"label": ("int", 0, 150)}, grad_req=LABEL_NULL, rtol=1e-3, atol=1e-5)]
# test_dropout (training draws are judged by compare.py's Dropout checker)
CASES += [Case("Dropout", attrs, {"data": shape})
          for attrs, shape in [({"p": 0.5}, (10, 10)), ({"p": 0.25, "axes": (0,)}, (4, 5, 6)),
                               ({"p": 0.75, "axes": (1, 2)}, (3, 4, 5)),
                               ({"p": 0.3, "mode": "always"}, (6, 7))]]
