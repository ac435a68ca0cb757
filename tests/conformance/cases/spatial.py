"""Conformance cases of the spatial group: Convolution, Deconvolution, Pooling,
UpSampling, LRN and Crop (plugins/cpu-blas/op_convolution.c, op_pooling.c,
op_upsampling.c, op_lrn.c, op_crop.c), in 1-D (NCW), 2-D (NCHW) and 3-D (NCDHW).

Shapes and attributes follow MXNet 1.9.1's tests/python/unittest/test_operator.py
(test_convolution_grouping, test_depthwise_convolution,
test_convolution_dilated_impulse_response, test_deconvolution,
test_deconvolution_forward_with_bias, test_pooling_versions, test_lrn,
test_nearest_upsampling, test_bilinear_upsampling, test_crop) plus every
attribute value and the refusals.
"""
from case import Case

CASES = []


def _conv_cases():
    """Convolution: 1-D, 2-D and 3-D, stride / dilate / pad / groups / no_bias."""
    cs = []
    for dim in (1, 2, 3):
        n = (6, 7, 5)[dim - 1]
        sp = (n,) * dim
        k = (3,) * dim
        cs += [
            Case("Convolution", {"kernel": k, "num_filter": 3}, {"data": (2, 2) + sp}),
            Case("Convolution", {"kernel": k, "num_filter": 4, "stride": (2,) * dim,
                                 "pad": (1,) * dim}, {"data": (1, 3) + sp}),
            Case("Convolution", {"kernel": (2,) * dim, "num_filter": 2, "dilate": (2,) * dim,
                                 "no_bias": True}, {"data": (2, 1) + sp}),
            # test_convolution_grouping: (1, 4) + (9,) * dim, kernel 3, num_group 2
            Case("Convolution", {"kernel": k, "num_filter": 4, "num_group": 2},
                 {"data": (1, 4) + (9,) * dim if dim < 3 else (1, 4, 6, 6, 6)}),
            # depthwise (test_depthwise_convolution)
            Case("Convolution", {"kernel": k, "num_filter": 4, "num_group": 4, "stride": (2,) * dim,
                                 "pad": (1,) * dim}, {"data": (2, 4) + sp}),
            Case("Convolution", {"kernel": (1,) * dim, "num_filter": 2, "layout":
                                 ("NCW", "NCHW", "NCDHW")[dim - 1]}, {"data": (1, 3) + sp}),
        ]
    # test_convolution_dilated_impulse_response kernels
    cs += [
        Case("Convolution", {"kernel": (4,), "dilate": (3,), "num_filter": 1}, {"data": (1, 1, 14)}),
        Case("Convolution", {"kernel": (2, 3), "dilate": (3, 3), "num_filter": 1},
             {"data": (1, 1, 9, 10)}),
        Case("Convolution", {"kernel": (2, 3, 4), "dilate": (2, 2, 2), "num_filter": 1},
             {"data": (1, 1, 5, 6, 8)}),
        Case("Convolution", {"kernel": (3, 1), "stride": (1, 2), "pad": (0, 1), "num_filter": 2,
                             "workspace": 1}, {"data": (3, 2, 5, 6)}),
        # cuDNN attributes are accepted and ignored on CPU (every enum value)
        Case("Convolution", {"kernel": (3, 3), "num_filter": 2, "cudnn_tune": "off",
                             "cudnn_off": True}, {"data": (1, 2, 5, 5)}),
        Case("Convolution", {"kernel": (3,), "num_filter": 2, "cudnn_tune": "limited_workspace"},
             {"data": (1, 2, 5)}),
        Case("Convolution", {"kernel": (1, 2, 2), "num_filter": 2, "cudnn_tune": "fastest"},
             {"data": (1, 2, 3, 4, 4)}),
        # refusals
        Case("Convolution", {"kernel": (3, 3), "stride": (2,), "num_filter": 1},
             {"data": (1, 1, 5, 5)}, error="must have the same number of dimensions with kernel_size"),
        Case("Convolution", {"kernel": (3, 3), "num_filter": 1}, {"data": (1, 1, 5)},
             error="Input data should be 4D"),
        Case("Convolution", {"kernel": (3, 0), "num_filter": 1}, {"data": (1, 1, 5, 5)},
             error="values must be in [1, 2147483647], got 0"),
        Case("Pooling", {"kernel": (2, 2), "stride": (0, 1)}, {"data": (1, 1, 5, 5)},
             error="values must be in [1, 2147483647], got 0"),
        Case("Convolution", {"kernel": (6, 6), "num_filter": 1}, {"data": (1, 1, 5, 5)},
             error="kernel size exceed input"),
        Case("Convolution", {"kernel": (3,), "num_filter": 2, "num_group": 2}, {"data": (1, 3, 5)},
             error="input num_filter must divide group size"),
        Case("Convolution", {"kernel": (3,), "num_filter": 3, "num_group": 2}, {"data": (1, 4, 5)},
             error="output num_filter must divide group size"),
        Case("Convolution", {"kernel": (1, 1, 1, 1), "num_filter": 1}, {"data": (1, 1, 2, 2, 2, 2)},
             error="4D convolution not supported"),
    ]
    return cs


def _deconv_cases():
    """Deconvolution: test_deconvolution's shapes (1-D and 2-D), 3-D, adj, target_shape."""
    cs = []
    for dim in (1, 2):
        sp4 = (4,) * dim
        cs += [
            # check_deconvolution_target_shape: pad and adj ignored with target_shape
            Case("Deconvolution", {"kernel": (3,) * dim, "stride": (2,) * dim, "pad": (99,) * dim,
                                   "adj": (101,) * dim, "target_shape": (8,) * dim,
                                   "num_filter": 5}, {"data": (2, 3) + sp4}, mkldnn=False,
                 note="MXNet's MKLDNN deconvolution fails on the derived pads ('could not create a "
                      "descriptor for a dilated deconvolution'); its reference path is right"),
            Case("Deconvolution", {"kernel": (3,) * dim, "stride": (2,) * dim, "pad": (1,) * dim,
                                   "adj": (1,) * dim, "num_filter": 5}, {"data": (2, 3) + sp4}),
            # check_deconvolution_forward_backward / _gradient
            Case("Deconvolution", {"kernel": (3,) * dim, "stride": (1,) * dim, "pad": (1,) * dim,
                                   "num_filter": 1}, {"data": (1, 1) + (5,) * dim}),
            Case("Deconvolution", {"kernel": (7,) * dim, "stride": (5,) * dim, "pad": (2,) * dim,
                                   "num_filter": 3}, {"data": (2, 3) + (6,) * dim}),
            Case("Deconvolution", {"kernel": (3,) * dim, "pad": (1,) * dim, "num_filter": 3,
                                   "no_bias": False}, {"data": (1, 3) + (5,) * dim}),
            # test_deconvolution_forward_with_bias
            Case("Deconvolution", {"kernel": (3,) * dim, "pad": (1,) * dim, "num_filter": 8,
                                   "no_bias": False}, {"data": (2, 4) + (5,) * dim}),
            Case("Deconvolution", {"kernel": (2,) * dim, "dilate": (2,) * dim, "num_filter": 4,
                                   "num_group": 2}, {"data": (1, 2) + (3,) * dim}),
        ]
    cs += [
        Case("Deconvolution", {"kernel": (3, 3, 3), "stride": (2, 2, 2), "pad": (1, 1, 1),
                               "adj": (1, 1, 1), "num_filter": 2, "no_bias": False},
             {"data": (1, 2, 3, 3, 3)}),
        Case("Deconvolution", {"kernel": (2, 3, 2), "num_filter": 2, "num_group": 2,
                               "target_shape": (4, 5, 4)}, {"data": (2, 2, 3, 3, 3)}),
        Case("Deconvolution", {"kernel": (3, 3), "stride": (2, 2), "target_shape": (7, 8),
                               "num_filter": 2}, {"data": (1, 2, 4, 4)}, mkldnn=False,
             note="MXNet's MKLDNN deconvolution fails on the derived pads (see above)"),
        Case("Deconvolution", {"kernel": (3, 3), "stride": (2, 2), "num_filter": 2, "workspace": 1},
             {"data": (3, 2, 4, 5)}),
        Case("Deconvolution", {"kernel": (2, 2), "num_filter": 2, "cudnn_tune": "fastest",
                               "cudnn_off": True}, {"data": (1, 2, 3, 3)}),
        # refusals
        Case("Deconvolution", {"kernel": (3,), "stride": (2,), "adj": (2,), "num_filter": 1},
             {"data": (1, 1, 4)}, error="adj"),
        Case("Deconvolution", {"kernel": (3, 3), "stride": (2, 2), "target_shape": (12, 12),
                               "num_filter": 1}, {"data": (1, 1, 4, 4)}, error="too big target shape"),
        Case("Deconvolution", {"kernel": (2, 2, 2), "dilate": (2, 2, 2), "num_filter": 1},
             {"data": (1, 1, 3, 3, 3)}, error="Dilate is not supported in 3d deconvolution"),
        Case("Deconvolution", {"kernel": (3, 3), "pad": (1,), "num_filter": 1},
             {"data": (1, 1, 4, 4)}, error="must have the same number of dimensions with kernel_size"),
    ]
    return cs


CASES += _conv_cases() + _deconv_cases()


# test_pooling_versions (tests/python/gpu/test_operator_gpu.py): data, then (kernel, pad, stride)
_POOL_GEOMS = {
    1: ((3, 3, 10), [((4,), (0,), (1,)), ((4,), (2,), (2,)), ((5,), (2,), (1,))]),
    2: ((2, 2, 20, 20), [((3, 3), (0, 0), (1, 1)), ((3, 5), (1, 2), (1, 1)),
                         ((4, 5), (0, 0), (2, 1)), ((4, 5), (2, 3), (1, 1))]),
    3: ((2, 3, 8, 9, 10), [((4, 5, 3), (0, 0, 0), (1, 1, 1)), ((4, 5, 3), (2, 3, 2), (2, 3, 1)),
                           ((3, 5, 7), (1, 2, 3), (1, 1, 1))]),
}

# pool_type and its extra attributes; lp runs on positive data (its gradient divides by the output)
_POOL_TYPES = [
    ({"pool_type": "max"}, None),
    ({"pool_type": "avg"}, None),
    ({"pool_type": "avg", "count_include_pad": False}, None),
    ({"pool_type": "sum"}, None),
    ({"pool_type": "lp", "p_value": 1}, ("uniform", 0.5, 1.5)),
    ({"pool_type": "lp", "p_value": 2}, ("uniform", 0.5, 1.5)),
    ({"pool_type": "lp", "p_value": 3}, ("uniform", 0.5, 1.5)),
]


def _pool_cases():
    """Pooling: every pool type x convention x MXNet's geometries in 1-D, 2-D, 3-D; global."""
    cs = []
    for dim, (data, geoms) in _POOL_GEOMS.items():
        for extra, fill in _POOL_TYPES:
            inputs = {"data": fill} if fill else None
            for kernel, pad, stride in geoms:
                for conv in ("valid", "full"):
                    attrs = dict(extra, kernel=kernel, pad=pad, stride=stride,
                                 pooling_convention=conv)
                    xfail = None
                    if (dim, conv, kernel, pad, extra.get("count_include_pad")) == (
                            3, "full", (4, 5, 3), (2, 3, 2), False):
                        xfail = ("MXNet 1.9.1 outputs NaN (0/0) for windows entirely in the "
                                 "padding with count_include_pad=False; mxk outputs 0")
                    cs.append(Case("Pooling", attrs, {"data": data}, inputs=inputs, xfail=xfail))
            # global pooling ignores the kernel (even a too large one) and stride / pad
            cs.append(Case("Pooling", dict(extra, kernel=(300,) * dim, global_pool=True),
                           {"data": data}, inputs=inputs))
    cs += [
        Case("Pooling", {"global_pool": True, "pool_type": "avg"}, {"data": (2, 3, 4, 5)}),
        Case("Pooling", {"global_pool": True}, {"data": (2, 3, 7)}),
        Case("Pooling", {"kernel": (2, 2), "cudnn_off": True, "pool_type": "avg"},
             {"data": (1, 2, 4, 5)}),
        Case("Pooling", {"global_pool": True, "stride": (2, 2), "pad": (1, 1), "pool_type": "sum"},
             {"data": (2, 3, 5, 4)}),
        Case("Pooling", {"kernel": (2, 2), "stride": (2, 2)}, {"data": (2, 3, 8, 6)}),
        Case("Pooling", {"kernel": (2, 2), "stride": (2, 2)}, {"data": (1, 2, 7, 5)}),
        Case("Pooling", {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)},
             {"data": (2, 4, 9, 9)}),
        Case("Pooling", {"kernel": (2, 2, 2), "stride": (2, 2, 2), "layout": "NCDHW"},
             {"data": (1, 2, 4, 4, 4)}),
        Case("Pooling", {"kernel": (3,), "layout": "NCW", "pool_type": "avg"}, {"data": (2, 2, 6)}),
        # test_valid_max_pooling_pad_type_same: 'same' is 1-D, output ceil(x / stride); upstream
        # reads pad[0..2] for it, so pad=(0,0,0) is its only working spelling
        Case("Pooling", {"kernel": (2,), "stride": (2,), "pad": (0, 0, 0),
                         "pooling_convention": "same"}, {"data": (1, 1, 10)}),
        Case("Pooling", {"kernel": (3,), "stride": (2,), "pad": (0, 0, 0),
                         "pooling_convention": "same"}, {"data": (2, 3, 9)}, mkldnn=False,
             note="MXNet's MKLDNN pooling cannot create this primitive; its reference path can"),
        Case("Pooling", {"kernel": (4,), "stride": (3,), "pad": (0, 0, 0),
                         "pooling_convention": "same", "pool_type": "avg"}, {"data": (2, 3, 11)},
             mkldnn=False,
             note="MXNet's MKLDNN pooling cannot create this primitive; its reference path can"),
        Case("Pooling", {"kernel": (2,), "stride": (2,), "pad": (0, 1, 0),
                         "pooling_convention": "same"}, {"data": (1, 1, 10)},
             error="Same pooling convention disables the use of pad parameter"),
        # channel-last layouts (pool.h's nwc / nhwc / ndhwc kernels)
        Case("Pooling", {"kernel": (3,), "stride": (2,), "pad": (1,), "layout": "NWC"},
             {"data": (2, 7, 3)}),
        Case("Pooling", {"kernel": (2, 3), "pad": (1, 1), "layout": "NHWC", "pool_type": "avg",
                         "count_include_pad": False}, {"data": (2, 5, 6, 3)}),
        Case("Pooling", {"kernel": (2, 2), "stride": (2, 2), "layout": "NHWC"},
             {"data": (1, 4, 4, 2)}),
        Case("Pooling", {"kernel": (3, 2), "stride": (2, 1), "layout": "NHWC", "pool_type": "sum",
                         "pooling_convention": "full"}, {"data": (2, 6, 5, 3)}),
        Case("Pooling", {"kernel": (2, 2, 2), "layout": "NDHWC", "pool_type": "lp", "p_value": 2},
             {"data": (1, 3, 4, 3, 2)}, inputs={"data": ("uniform", 0.5, 1.5)}),
        Case("Pooling", {"global_pool": True, "layout": "NHWC", "pool_type": "avg"},
             {"data": (2, 3, 4, 5)}),
        Case("Pooling", {"kernel": (2, 2), "layout": "NCW"}, {"data": (1, 2, 5, 5)},
             error="Need 2D layout"),
        # refusals
        Case("Pooling", {"kernel": (2, 2), "pad": (2, 2)}, {"data": (1, 2, 5, 5)},
             error="not smaller than the kernel"),
        Case("Pooling", {"kernel": (2, 2), "pad": (1, 2), "pool_type": "avg"},
             {"data": (1, 2, 5, 5)}, error="not smaller than the kernel"),
        Case("Pooling", {"kernel": (2, 2), "stride": (2, 2), "pooling_convention": "same"},
             {"data": (1, 1, 4, 4)}, error="Currently 'same' supports Max Pooling 1-D"),
        Case("Pooling", {"kernel": (3, 3)}, {"data": (1, 1, 5)}, error="Input data should be 4D"),
        Case("Pooling", {"kernel": (3, 3)}, {"data": (1, 1, 2, 5)}, error="exceeds input"),
        Case("Pooling", {"kernel": (3, 3), "global_pool": True}, {"data": (2, 3, 7)},
             error="global Pooling with a 2-D kernel needs 4D data"),
        Case("Pooling", {"pool_type": "max"}, {"data": (1, 2, 5, 5)},
             error="required unless global_pool is set"),
        Case("Pooling", {"kernel": (2, 2), "pool_type": "lp"}, {"data": (1, 2, 5, 5)},
             error="'p_value': required for lp pooling"),
        Case("Pooling", {"kernel": (2, 2), "pool_type": "lp", "p_value": 4}, {"data": (1, 2, 5, 5)},
             error="p value of 4 is not supported yet"),
        Case("Pooling", {"kernel": (2, 2, 2, 2)}, {"data": (1, 2, 5, 5, 5, 5)},
             error="4D pooling not supported"),
    ]
    return cs


CASES += _pool_cases()


def _other_cases():
    """UpSampling (test_nearest_upsampling, test_bilinear_upsampling), LRN (test_lrn), Crop."""
    cs = []
    # nearest: root_scale x scale, several inputs concatenated or summed
    for root in (1, 2, 3):
        cs.append(Case("UpSampling", {"scale": root, "sample_type": "nearest", "num_args": 1},
                       {"arg0": (1, 3, 2, 2)}))
    cs += [
        Case("UpSampling", {"scale": 2, "sample_type": "nearest", "num_args": 2},
             {"arg0": (1, 3, 4, 4), "arg1": (1, 2, 2, 2)}, variadic=True),
        Case("UpSampling", {"scale": 2, "sample_type": "nearest", "num_args": 3,
                            "multi_input_mode": "sum"},
             {"arg0": (2, 2, 3, 3), "arg1": (2, 2, 6, 6), "arg2": (2, 2, 2, 2)}, variadic=True),
        Case("UpSampling", {"scale": 2, "sample_type": "nearest", "num_args": 6},
             {"a%d" % i: (1, i + 1, h, h) for i, h in enumerate((4, 1, 2, 8, 4, 2))},
             variadic=True),
    ]
    # bilinear: the front end writes num_args=1 and creates the weight (C, 1, 2s - s%2, 2s - s%2)
    for root, nf, base in ((2, 1, 1), (2, 3, 2), (3, 2, 1), (3, 1, 3), (4, 2, 1)):
        dim = base * root
        cs.append(Case("UpSampling", {"scale": root, "sample_type": "bilinear",
                                      "num_filter": nf}, {"data": (1, nf, dim, dim)}))
    cs += [
        Case("UpSampling", {"scale": 2, "sample_type": "bilinear", "num_filter": 2, "num_args": 2},
             {"data": (2, 2, 3, 4)}),
        Case("UpSampling", {"scale": 2, "sample_type": "bilinear", "num_filter": 3},
             {"data": (1, 2, 3, 3)}, error="num_filter"),
    ]
    # LRN: test_lrn's configuration, nsize 1 (test_operator.py), even sizes (MKLDNN accepts them)
    cs += [
        Case("LRN", {"alpha": 0.0001, "beta": 0.75, "knorm": 2, "nsize": 5}, {"data": (2, 6, 10, 10)}),
        Case("LRN", {"nsize": 1}, {"data": (2, 3, 4, 4)}),
        Case("LRN", {"nsize": 3, "alpha": 0.5, "beta": 0.5, "knorm": 1}, {"data": (1, 4, 3, 5)}),
        Case("LRN", {"nsize": 2, "alpha": 0.5, "beta": 0.75, "knorm": 1}, {"data": (2, 5, 3, 3)}),
        Case("LRN", {"nsize": 4, "alpha": 0.2, "beta": 1.5, "knorm": 2}, {"data": (1, 7, 2, 3)}),
        Case("LRN", {"nsize": 9, "alpha": 0.3}, {"data": (1, 3, 2, 2)}),
    ]
    # Crop: explicit h_w with offset, center_crop, crop_like
    cs += [
        Case("Crop", {"num_args": 1, "h_w": (2, 3), "offset": (1, 1)}, {"data": (2, 3, 5, 6)},
             variadic=True),
        Case("Crop", {"num_args": 1, "h_w": (3, 3), "center_crop": True}, {"data": (1, 2, 6, 7)},
             variadic=True),
        Case("Crop", {"num_args": 2, "offset": (2, 0)}, {"data": (1, 2, 6, 6),
                                                         "crop_like": (1, 1, 3, 4)}, variadic=True),
        Case("Crop", {"num_args": 2, "center_crop": True},
             {"data": (2, 2, 7, 6), "crop_like": (2, 2, 4, 3)}, variadic=True),
        Case("Crop", {"num_args": 1, "h_w": (6, 3)}, {"data": (1, 2, 5, 5)}, variadic=True,
             error="exceeds the input"),
        Case("Crop", {"num_args": 1, "h_w": (3, 3), "offset": (1, 3)}, {"data": (1, 2, 5, 5)},
             variadic=True, error="exceeds the input"),
    ]
    return cs


CASES += _other_cases()
