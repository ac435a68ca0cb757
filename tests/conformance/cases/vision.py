"""Conformance cases of the vision group: ROIPooling, _contrib_ROIAlign, BilinearSampler,
GridGenerator, SpatialTransformer, _contrib_MultiBoxPrior / Target / Detection and
_contrib_box_nms (plugins/cpu-blas/op_vision_*.c), and the defects fixed in Cast,
argmax_channel, transpose, Embedding and the optimizer updates (op_cast.c, op_argmax.c,
op_transpose.c, op_embedding.c, op_optimizer.c).

Shapes and attributes follow MXNet 1.9.1's tests/python/unittest/test_operator.py
(test_roipooling, test_roi_align_autograd, test_bilinear_sampler, test_grid_generator,
test_stn) and test_contrib_operator.py (test_multibox_target_op, test_multibox_prior_op,
test_box_nms_op), plus every enum value and the refusals.
"""
import numpy as np

from case import Case

CASES = []

# ------------------------------------------------------------------ ROIPooling / ROIAlign
_ROIS = np.array([[0, 1.1, 1.1, 6.2, 6.2], [2, 6.1, 2.1, 8.2, 11.2], [1, 3.1, 1.1, 5.2, 10.2],
         [0, 3, 3, 3, 3]], dtype=np.float32)
_ROIS_EDGE = np.array([[0, 0, 0, 4, 4], [1, -3, -2, 2, 1], [0, 5, 5, 30, 30], [5, 0, 0, 2, 2],
                       [-1, 0, 0, 2, 2], [1, 4, 4, 1, 1]], dtype=np.float32)
_NOGRAD_ROIS = {"data": "write", "rois": "null"}
_NOGRAD_ROIS_ADD = {"data": "add", "rois": "null"}

for req in (_NOGRAD_ROIS, _NOGRAD_ROIS_ADD):
    CASES += [
        # test_roipooling
        Case("ROIPooling", {"pooled_size": (4, 4), "spatial_scale": 1},
             {"data": (4, 3, 12, 8), "rois": (4, 5)}, inputs={"rois": _ROIS}, grad_req=req),
        Case("ROIPooling", {"pooled_size": (2, 3), "spatial_scale": 0.5},
             {"data": (2, 2, 6, 7), "rois": (6, 5)}, inputs={"rois": _ROIS_EDGE}, grad_req=req,
             note="malformed ROIs (1x1), ROIs outside the map, batch index out of range"),
        # test_roi_align_autograd (sample_ratio 0 and 2)
        Case("_contrib_ROIAlign", {"pooled_size": (4, 4), "spatial_scale": 1},
             {"data": (4, 1, 12, 12), "rois": (3, 5)}, inputs={"rois": _ROIS[:3]}, grad_req=req),
        Case("_contrib_ROIAlign", {"pooled_size": (4, 4), "spatial_scale": 1, "sample_ratio": 2},
             {"data": (4, 1, 12, 12), "rois": (3, 5)}, inputs={"rois": _ROIS[:3]}, grad_req=req),
    ]
CASES += [
    Case("_contrib_ROIAlign", {"pooled_size": (2, 2), "spatial_scale": 0.5, "aligned": True},
         {"data": (3, 3, 8, 8), "rois": (3, 5)}, inputs={"rois": _ROIS[:3]},
         grad_req=_NOGRAD_ROIS),
    Case("_contrib_ROIAlign", {"pooled_size": (2, 2), "spatial_scale": 1,
                               "position_sensitive": True, "sample_ratio": 1},
         {"data": (3, 8, 6, 6), "rois": (3, 5)}, inputs={"rois": _ROIS[:3]},
         grad_req=_NOGRAD_ROIS),
    Case("_contrib_ROIAlign", {"pooled_size": (3, 2), "spatial_scale": 0.25},
         {"data": (3, 2, 5, 7), "rois": (4, 5)},
         inputs={"rois": np.array([[0, -8, -8, 40, 40], [1, 0, 0, 0, 0], [2, 10, 3, 30, 9],
                                   [1, 27, 20, 28, 22]], dtype=np.float32)},
         grad_req=_NOGRAD_ROIS,
         note="ROIs partly or wholly outside the map, an empty ROI (sizes forced to 1)"),
    Case("_npx_roi_pooling", {"pooled_size": (2, 2), "spatial_scale": 0.7},
         {"data": (1, 1, 8, 6), "rois": (1, 5)},
         inputs={"data": np.arange(48, dtype=np.float32).reshape(1, 1, 8, 6),
                 "rois": np.array([[0, 0, 0, 4, 4]], dtype=np.float32)}, grad_req=_NOGRAD_ROIS,
         note="the example of ROIPooling's documentation (roi_pooling.cc)"),
    Case("ROIPooling", {"pooled_size": (2,), "spatial_scale": 1},
         {"data": (1, 1, 4, 4), "rois": (1, 5)}, error="pooled_size"),
    Case("ROIPooling", {"pooled_size": (0, 2), "spatial_scale": 1},
         {"data": (1, 1, 4, 4), "rois": (1, 5)}, error="nonzero"),
    Case("ROIPooling", {"pooled_size": (2, 2), "spatial_scale": 1.5},
         {"data": (1, 1, 4, 4), "rois": (1, 5)}, error="exceed bound [0,1]"),
    Case("ROIPooling", {"pooled_size": (2, 2), "spatial_scale": 1},
         {"data": (1, 1, 4, 4), "rois": (1, 4)}, error="bbox should be a 2D tensor"),
    Case("ROIPooling", {"pooled_size": (2, 2), "spatial_scale": 1},
         {"data": (1, 4, 4), "rois": (1, 5)}, error="data should be a 4D tensor"),
    Case("_contrib_ROIAlign", {"pooled_size": (3, 3), "spatial_scale": 1,
                               "position_sensitive": True},
         {"data": (1, 4, 6, 6), "rois": (1, 5)}, error="Input channels should be divided"),
]

# ------------------------------------------------------------------ samplers
CASES += [
    # test_bilinear_sampler: data (n, c, h, w), grid (n, 2, oh, ow)
    Case("BilinearSampler", {}, {"data": (2, 3, 5, 6), "grid": (2, 2, 4, 3)}),
    Case("BilinearSampler", {}, {"data": (1, 2, 4, 4), "grid": (1, 2, 6, 5)},
         inputs={"grid": ("uniform", -1.5, 1.5)}, note="points outside the map (zero padding)"),
    Case("BilinearSampler", {"cudnn_off": True}, {"data": (1, 1, 3, 7), "grid": (1, 2, 2, 2)}),
    Case("BilinearSampler", {}, {"data": (2, 3, 5, 6), "grid": (1, 2, 4, 3)}, error="grid"),
    # test_bilinear_sampler_with_type / _versions (tests/python/gpu/test_operator_gpu.py)
    Case("BilinearSampler", {}, {"data": (1, 5, 10, 10), "grid": (1, 2, 10, 10)}),
    Case("BilinearSampler", {}, {"data": (1, 6, 7, 16), "grid": (1, 2, 10, 4)}),
    Case("BilinearSampler", {"cudnn_off": True}, {"data": (1, 7, 3, 16), "grid": (1, 2, 8, 11)}),
    # test_grid_generator
    Case("GridGenerator", {"transform_type": "affine", "target_shape": (4, 3)}, {"data": (1, 6)}),
    Case("GridGenerator", {"transform_type": "affine", "target_shape": (6, 12)}, {"data": (2, 6)}),
    Case("GridGenerator", {"transform_type": "affine", "target_shape": (20, 21)},
         {"data": (1, 6)}),
    Case("GridGenerator", {"transform_type": "affine", "target_shape": (15, 17)},
         {"data": (1, 6)}),
    Case("GridGenerator", {"transform_type": "warp"}, {"data": (1, 2, 4, 3)}),
    Case("GridGenerator", {"transform_type": "warp"}, {"data": (1, 2, 12, 21)}),
    Case("GridGenerator", {"transform_type": "warp", "target_shape": (6, 12)},
         {"data": (2, 2, 6, 12)}),
    Case("GridGenerator", {"transform_type": "affine"}, {"data": (1, 6)},
         error="incorrect target_shape"),
    Case("GridGenerator", {"transform_type": "warp"}, {"data": (1, 3, 4, 3)}, error="data"),
    # test_stn: target (h+1)/2, (w+1)/2; SpatialTransformer overwrites gradients upstream, so
    # only write requests are compared (mxk honours add)
    Case("SpatialTransformer", {"target_shape": (3, 3), "transform_type": "affine",
                                "sampler_type": "bilinear"},
         {"data": (1, 2, 5, 5), "loc": (1, 6)}, inputs={"loc": [[0.5, 0, 0, 0, 0.5, 0]]},
         grad_req={"data": "write", "loc": "write"}),
    Case("SpatialTransformer", {"target_shape": (5, 7), "transform_type": "affine",
                                "sampler_type": "bilinear"},
         {"data": (2, 3, 9, 13), "loc": (2, 6)}, grad_req={"data": "write", "loc": "write"}),
    Case("SpatialTransformer", {"target_shape": (4, 4), "transform_type": "affine",
                                "sampler_type": "bilinear"},
         {"data": (1, 1, 6, 6), "loc": (1, 6)}, grad_req={"data": "write", "loc": "null"}),
]

# ------------------------------------------------------------------ MultiBox
_ANCHORS = [[[0.1, 0.2, 0.3, 0.4], [0.5, 0.6, 0.7, 0.8]]]
CASES += [
    # test_multibox_prior_op (smaller map)
    Case("_contrib_MultiBoxPrior", {"sizes": (0.75, 0.5, 0.25), "ratios": (1, 2, 0.5)},
         {"data": (1, 3, 5, 7)}, grad_req={"data": "write"}),
    Case("_contrib_MultiBoxPrior", {"sizes": (0.75, 0.5, 0.25), "ratios": (20, 2, 0.5),
                                    "clip": True}, {"data": (1, 3, 4, 4)}, grad_req="null"),
    Case("_contrib_MultiBoxPrior", {}, {"data": (2, 1, 3, 2)}, grad_req="null"),
    Case("_contrib_MultiBoxPrior", {"sizes": (0.2,), "ratios": (1, 3), "steps": (0.1, 0.2),
                                    "offsets": (0.2, 0.7)}, {"data": (1, 1, 3, 4)},
         grad_req="null"),
    Case("_contrib_MultiBoxPrior", {"steps": (0.1,)}, {"data": (1, 1, 3, 4)},
         error="Step ndim must be 2"),
    # test_multibox_target_op
    Case("_contrib_MultiBoxTarget", {"overlap_threshold": 0.5, "negative_mining_ratio": 3,
                                     "negative_mining_thresh": 0.4},
         {"anchor": (1, 2, 4), "label": (1, 1, 5), "cls_pred": (1, 5, 2)},
         inputs={"anchor": _ANCHORS, "label": [[[1, 0.1, 0.1, 0.5, 0.6]]],
                 "cls_pred": np.arange(10, dtype=np.float32).reshape(1, 5, 2)},
         grad_req={"anchor": "null", "label": "null", "cls_pred": "write"}),
    Case("_contrib_MultiBoxTarget", {},
         {"anchor": (1, 4, 4), "label": (2, 3, 5), "cls_pred": (2, 3, 4)},
         inputs={"anchor": [[[0, 0, 0.5, 0.5], [0.5, 0.5, 1, 1], [0.2, 0.2, 0.7, 0.7],
                             [0.1, 0.6, 0.4, 0.9]]],
                 "label": [[[0, 0.05, 0.05, 0.45, 0.5], [1, 0.55, 0.5, 0.95, 1.0],
                            [-1, -1, -1, -1, -1]],
                           [[2, 0.1, 0.55, 0.45, 0.95], [-1, -1, -1, -1, -1],
                            [-1, -1, -1, -1, -1]]]},
         grad_req="null", note="padded labels; every anchor above the threshold matched"),
    Case("_contrib_MultiBoxTarget", {"overlap_threshold": 0.3, "negative_mining_ratio": 1,
                                     "variances": (0.2, 0.2, 0.1, 0.1), "ignore_label": -2},
         {"anchor": (1, 4, 4), "label": (1, 2, 6), "cls_pred": (1, 3, 4)},
         inputs={"anchor": [[[0, 0, 0.5, 0.5], [0.5, 0.5, 1, 1], [0.2, 0.2, 0.7, 0.7],
                             [0.1, 0.6, 0.4, 0.9]]],
                 "label": [[[0, 0.05, 0.05, 0.45, 0.5, 7], [-1, -1, -1, -1, -1, -1]]]},
         grad_req="null", note="hard negative mining, label width 6, ignore_label"),
    # MultiBoxDetection: cls_prob (b, classes, anchors), loc_pred (b, 4 anchors)
    Case("_contrib_MultiBoxDetection", {},
         {"cls_prob": (2, 3, 5), "loc_pred": (2, 20), "anchor": (1, 5, 4)},
         inputs={"cls_prob": ("uniform", 0, 1), "loc_pred": ("uniform", -0.5, 0.5),
                 "anchor": [[[0.1, 0.1, 0.4, 0.4], [0.15, 0.1, 0.45, 0.4], [0.5, 0.5, 0.9, 0.8],
                             [0.0, 0.0, 1.0, 1.0], [0.12, 0.12, 0.42, 0.38]]]},
         grad_req={"cls_prob": "write", "loc_pred": "write", "anchor": "null"}),
    Case("_contrib_MultiBoxDetection", {"force_suppress": True, "nms_threshold": 0.3,
                                        "clip": False, "threshold": 0.4, "nms_topk": 3},
         {"cls_prob": (1, 4, 5), "loc_pred": (1, 20), "anchor": (1, 5, 4)},
         inputs={"cls_prob": ("uniform", 0, 1), "loc_pred": ("uniform", -0.5, 0.5),
                 "anchor": [[[0.1, 0.1, 0.4, 0.4], [0.15, 0.1, 0.45, 0.4], [0.5, 0.5, 0.9, 0.8],
                             [0.0, 0.0, 1.0, 1.0], [0.12, 0.12, 0.42, 0.38]]]},
         grad_req="null"),
    Case("_contrib_MultiBoxDetection", {"nms_threshold": 0, "variances": (0.2, 0.2, 0.1, 0.1)},
         {"cls_prob": (1, 2, 3), "loc_pred": (1, 12), "anchor": (1, 3, 4)},
         inputs={"cls_prob": ("uniform", 0, 1), "anchor": ("uniform", 0, 1)}, grad_req="null",
         note="NMS off: rows kept in anchor order"),
    Case("_contrib_MultiBoxDetection", {},
         {"cls_prob": (1, 2, 3), "loc_pred": (1, 8), "anchor": (1, 3, 4)},
         error="# anchors mismatch with # loc"),
]

# ------------------------------------------------------------------ box_nms
_NMS = [[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
        [0, 0.3, 0.1, 0.1, 0.14, 0.14], [2, 0.6, 0.5, 0.5, 0.7, 0.8]]
_NMS2 = [[[1, 0.7, 0.1, 0.1, 0.4, 0.5], [1, 0.8, 0.12, 0.1, 0.42, 0.52],
          [0, 0.1, 0.5, 0.5, 0.9, 0.9], [1, 0.75, 0.6, 0.6, 0.9, 0.8],
          [2, 0.9, 0.11, 0.12, 0.41, 0.5]],
         [[0, 0.2, 0.3, 0.3, 0.4, 0.4], [0, 0.2, 0.31, 0.3, 0.41, 0.4],
          [1, -0.5, 0.1, 0.1, 0.2, 0.2], [0, 0.0, 0.1, 0.1, 0.2, 0.2],
          [3, 0.4, 0.0, 0.0, 1.0, 1.0]]]
for attrs in ({"overlap_thresh": 0.1, "id_index": 0, "force_suppress": True},
              {"overlap_thresh": 0.1, "id_index": 0},
              {"overlap_thresh": 0.1, "id_index": 0, "background_id": 0},
              {"overlap_thresh": 0.5, "topk": 2, "id_index": 0},
              {"overlap_thresh": 0.5, "topk": 0},
              {"overlap_thresh": 0.1, "out_format": "center", "id_index": 0},
              {"overlap_thresh": 0.1, "in_format": "center", "out_format": "center"},
              {"overlap_thresh": 0.3, "valid_thresh": 0.45}):
    CASES.append(Case("_contrib_box_nms", attrs, {"data": (4, 6)}, inputs={"data": _NMS}))
    CASES.append(Case("_contrib_box_nms", attrs, {"data": (2, 5, 6)}, inputs={"data": _NMS2}))
CASES += [
    Case("_contrib_box_nms", {"coord_start": 0, "score_index": 5}, {"data": (1, 3, 7)},
         inputs={"data": ("uniform", 0, 1)}),
    Case("_contrib_box_nms", {"overlap_thresh": 0.2, "id_index": 0, "topk": 3},
         {"data": (2, 2, 4, 6)}, inputs={"data": ("uniform", 0, 1)},
         note="leading dims flattened into the batch"),
    Case("_contrib_box_non_maximum_suppression", {"overlap_thresh": 0.1}, {"data": (4, 6)},
         inputs={"data": _NMS}),
    Case("_contrib_box_nms", {"valid_thresh": 2}, {"data": (4, 6)}, inputs={"data": _NMS},
         note="no valid box: everything -1"),
    Case("_contrib_box_nms", {"score_index": 3}, {"data": (4, 6)},
         error="conflict with coordinates"),
    Case("_contrib_box_nms", {"id_index": 1}, {"data": (4, 6)},
         error="conflict with score_index"),
    Case("_contrib_box_nms", {}, {"data": (4, 4)}, error="at least 5 elements"),
]

# ------------------------------------------------------------------ defects and aliases
_CAST_X = [-3.7, 300, 255.9, -0.5, 256, 1000, 3e9, -3e9, 1e20]
for dt in ("uint8", "int8", "int32", "int64"):
    CASES.append(Case("Cast", {"dtype": dt}, {"data": (9,)}, inputs={"data": _CAST_X},
                      grad_req="null", name="Cast#wrap_%s" % dt,
                      note="out-of-range floats wrap as MXNet's static_cast on x86-64"))
CASES += [
    Case("Cast", {"dtype": "uint8"}, {"data": (6,)},
         inputs={"data": np.array([4294967301.0, -4294967301.0, 2 ** 40 + 7, 1e300, 300, -3],
                                  dtype=np.float64)}, grad_req="null", name="Cast#f64_uint8"),
    Case("Cast", {"dtype": "int32"}, {"data": (4,)},
         inputs={"data": ("int", -2 ** 40, 2 ** 40, "int64")}, grad_req="null",
         name="Cast#i64_int32"),
    Case("cast", {"dtype": "float16"}, {"data": (2, 3)}),
    Case("argmax_channel", {}, {"data": (1, 2, 3)}, inputs={"data": [[[0.0, 5, 1], [3, 2, 4]]]},
         grad_req="null"),
    Case("argmax_channel", {}, {"data": (2, 3, 2, 2)}, grad_req="null"),
    Case("argmax_channel", {}, {"data": (2, 4)}, grad_req="null"),
    Case("argmax_channel", {}, {"data": (3,)}, error="exceeds the input dimension"),
    Case("transpose", {"axes": (-1, 0)}, {"data": (2, 3)}, error="must be in range"),
    Case("transpose", {"axes": (0, 2)}, {"data": (2, 3)}, error="axes"),
    Case("transpose", {}, {"data": (1, 1, 1, 1, 1, 1, 2)}, error="at most 6 dimensions"),
    Case("transpose", {"axes": (2, 0, 1)}, {"data": (2, 3, 4)}),
    Case("SwapAxis", {"dim1": -1, "dim2": 0}, {"data": (2, 3, 4)}),
    Case("swapaxes", {"dim1": 1, "dim2": 2}, {"data": (2, 3, 4)}),
    Case("SwapAxis", {"dim1": 0, "dim2": 5}, {"data": (2, 3)}, error="out of range"),
    Case("stop_gradient", {}, {"data": (2, 3)}),
    Case("Embedding", {"input_dim": 4, "output_dim": 3}, {"data": (2, 2)},
         inputs={"data": ("int", 0, 4)}, grad_req={"data": "null", "x_weight": "write"}),
    Case("Embedding", {"input_dim": 4, "output_dim": 3}, {"data": (2,)},
         inputs={"data": ("int", 0, 4)}, grad_req={"data": "write", "x_weight": "write"},
         is_train=True, error="Embedding layer doesn't support calculate data gradient"),
    Case("_npx_one_hot", {"depth": 4}, {"indices": (3,)}, inputs={"indices": ("int", 0, 4)},
         grad_req="null"),
    # MXNet's NNVM refuses to compose an operator without FListInputNames (the optimizer
    # updates) from fewer inputs than it takes (nnvm/src/core/symbolic.cc); so do mxk's
    # mxk_symbol_create and, for the JSON the harness gives mxk, its JSON loader
    Case("adam_update", {"lr": 0.1}, {"weight": (2,), "grad": (2,), "mean": (2,)},
         grad_req="null", error="Not enough argument to call operator adam_update"),
]
