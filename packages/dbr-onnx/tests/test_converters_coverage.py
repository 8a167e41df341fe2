"""Converters added for issue 35: each exported at opset 13 and the newest, run in ONNX Runtime.

Every case is checked as :func:`conftest.check_export` checks: onnx's full check,
then ONNX Runtime's outputs against dbr's forward; a converter whose operator is
newer than opset 13 (``_export_from`` moves up to it) is checked from that opset.
"""

import numpy
import pytest

import dbr.functions as F

rng = numpy.random.default_rng(35)


def rand(*shape, dtype=numpy.float32, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype(dtype)


def positive(*shape, dtype=numpy.float32):
    return rand(*shape, dtype=dtype, low=0.5, high=2.0)


def labels(*values):
    return numpy.array(values, numpy.int32)


OPSETS = (13, None)  # None: the newest opset

# (id, forward(model, *inputs), inputs, parameters)
CASES = [
    (
        "mean_squared_error",
        lambda m, x, y: F.mean_squared_error(x, y),
        [rand(3, 4), rand(3, 4)],
        {},
    ),
    ("squared_error", lambda m, x, y: F.squared_error(x, y), [rand(3, 4), rand(3, 4)], {}),
    (
        "squared_difference",
        lambda m, x, y: F.squared_difference(x, y),
        [rand(3, 4), rand(3, 4)],
        {},
    ),
    ("absolute_error", lambda m, x, y: F.absolute_error(x, y), [rand(3, 4), rand(3, 4)], {}),
    (
        "mean_absolute_error",
        lambda m, x, y: F.mean_absolute_error(x, y),
        [rand(3, 4), rand(3, 4)],
        {},
    ),
    (
        "sigmoid_cross_entropy",
        lambda m, x: F.sigmoid_cross_entropy(
            x * 30, numpy.array([[0, 1, -1], [1, -1, -1]], numpy.int32)
        ),
        [rand(2, 3)],
        {},
    ),
    (
        "sigmoid_cross_entropy_no_normalize",
        lambda m, x: F.sigmoid_cross_entropy(
            x, numpy.array([[0, 1, -1], [1, 0, 0]], numpy.int32), normalize=False
        ),
        [rand(2, 3)],
        {},
    ),
    (
        "sigmoid_cross_entropy_no_reduce",
        lambda m, x: F.sigmoid_cross_entropy(
            x, numpy.array([[0, 1, -1], [1, 0, 0]], numpy.int32), reduce="no"
        ),
        [rand(2, 3)],
        {},
    ),
    ("huber_loss", lambda m, x, t: F.huber_loss(x, t, delta=0.5), [rand(3, 4), rand(3, 4)], {}),
    (
        "huber_loss_no_reduce",
        lambda m, x, t: F.huber_loss(x, t, 0.5, reduce="no"),
        [rand(3, 4), rand(3, 4)],
        {},
    ),
    ("hinge", lambda m, x: F.hinge(x, labels(0, 2, 1)), [rand(3, 4) * 2], {}),
    (
        "hinge_l2_no_reduce",
        lambda m, x: F.hinge(x, labels(0, 2, 1), "L2", "no"),
        [rand(3, 4) * 2],
        {},
    ),
    (
        "bernoulli_nll",
        lambda m, x, y: F.bernoulli_nll(x, y * 40),
        [rand(3, 4, low=0, high=1), rand(3, 4)],
        {},
    ),
    (
        "bernoulli_nll_mean",
        lambda m, x, y: F.bernoulli_nll(x, y, reduce="mean"),
        [rand(3, 4, low=0, high=1), rand(4)],
        {},
    ),
    (
        "gaussian_nll",
        lambda m, x, u, v: F.gaussian_nll(x, u, v),
        [rand(3, 4), rand(3, 4), rand(3, 4)],
        {},
    ),
    (
        "gaussian_nll_no_reduce",
        lambda m, x, u, v: F.gaussian_nll(x, u, v, reduce="no"),
        [rand(3, 4), rand(3, 4), rand(3, 4)],
        {},
    ),
    (
        "gaussian_kl_divergence",
        lambda m, u, v: F.gaussian_kl_divergence(u, v, reduce="mean"),
        [rand(3, 4), rand(3, 4)],
        {},
    ),
    (
        "contrastive",
        lambda m, x0, x1: F.contrastive(x0, x1, labels(1, 0, 0), margin=1.5),
        [rand(3, 4), rand(3, 4)],
        {},
    ),
    (
        "contrastive_no_reduce",
        lambda m, x0, x1: F.contrastive(x0, x1, labels(1, 0, 1), reduce="no"),
        [rand(3, 4), rand(3, 4)],
        {},
    ),
    (
        "triplet",
        lambda m, a, p, n: F.triplet(a, p, n, margin=0.5),
        [rand(3, 4), rand(3, 4), rand(3, 4)],
        {},
    ),
    (
        "triplet_no_reduce",
        lambda m, a, p, n: F.triplet(a, p, n, reduce="no"),
        [rand(3, 4), rand(3, 4), rand(3, 4)],
        {},
    ),
    ("cross_covariance", lambda m, y, z: F.cross_covariance(y, z), [rand(5, 3), rand(5, 2)], {}),
    (
        "cross_covariance_no_reduce",
        lambda m, y, z: F.cross_covariance(y, z, reduce="no"),
        [rand(5, 3), rand(5, 2)],
        {},
    ),
    ("decov", lambda m, h: F.decov(h), [rand(5, 3)], {}),
    ("decov_no_reduce", lambda m, h: F.decov(h, reduce="no"), [rand(5, 3)], {}),
    ("tensordot", lambda m, a, b: F.tensordot(a, b, axes=2), [rand(2, 3, 4), rand(3, 4, 5)], {}),
    (
        "tensordot_axes",
        lambda m, a, b: F.tensordot(a, b, axes=((0, 2), (2, 1))),
        [rand(2, 3, 4), rand(5, 4, 2)],
        {},
    ),
    ("einsum", lambda m, a, b: F.einsum("ij,jk->ki", a, b), [rand(2, 3), rand(3, 4)], {}),
    ("einsum_trace_batch", lambda m, a: F.einsum("bii->b", a), [rand(2, 3, 3)], {}),
    (
        "einsum_ellipsis",
        lambda m, a, b: F.einsum("...ij,...jk", a, b),
        [rand(2, 2, 3), rand(2, 3, 4)],
        {},
    ),
    ("cumsum", lambda m, x: F.cumsum(x, axis=1), [rand(2, 5, 3)], {}),
    ("cumsum_flat", lambda m, x: F.cumsum(x), [rand(2, 3)], {}),
    ("cumprod", lambda m, x: F.cumprod(x, axis=1), [rand(2, 5, 3)], {}),
    ("cumprod_last", lambda m, x: F.cumprod(x, axis=-1), [rand(2, 4)], {}),
    ("erfc", lambda m, x: F.erfc(x * 2), [rand(3, 4)], {}),
    ("erfinv", lambda m, x: F.erfinv(x), [rand(3, 4) * 0.999], {}),
    (
        "erfinv_tails",
        lambda m, x: F.erfinv(x),
        [numpy.array([-1, -0.99999, -0.999, 0, 0.9999, 1], numpy.float32)],
        {},
    ),
    ("erfcinv", lambda m, x: F.erfcinv(x), [rand(3, 4, low=0.001, high=1.999)], {}),
    ("ndtr", lambda m, x: F.ndtr(x * 3), [rand(3, 4)], {}),
    ("det", lambda m, a: F.det(a), [rand(3, 3)], {}),
    ("batch_det", lambda m, a: F.batch_det(a), [rand(2, 4, 4)], {}),
    ("inv", lambda m, a: F.inv(a), [rand(3, 3) + 2 * numpy.eye(3, dtype=numpy.float32)], {}),
    ("inv_1x1", lambda m, a: F.inv(a), [positive(1, 1)], {}),
    (
        "batch_inv",
        lambda m, a: F.batch_inv(a),
        [rand(2, 4, 4) + 2 * numpy.eye(4, dtype=numpy.float32)],
        {},
    ),
    (
        "arctan2",
        lambda m, x1, x2: F.arctan2(x1, x2),
        [
            numpy.array([1, -1, 1, -1, 0, 2, -2, 0.5], numpy.float32),
            numpy.array([1, 1, -1, -1, 1, 0, 0, -3], numpy.float32),
        ],
        {},
    ),
    ("arctan2_broadcast", lambda m, x1, x2: F.arctan2(x1, x2), [rand(3, 4), rand(4)], {}),
    (
        "average_weights",
        lambda m, x, w: F.average(x, axis=1, weights=w),
        [rand(2, 3, 4), positive(3)],
        {},
    ),
    (
        "average_weights_all",
        lambda m, x, w: F.average(x, weights=w, keepdims=True),
        [rand(2, 3), positive(2, 3)],
        {},
    ),
    ("batch_l2_norm_squared", lambda m, x: F.batch_l2_norm_squared(x), [rand(2, 3, 4)], {}),
    ("fliplr_flipud", lambda m, x: (F.fliplr(x), F.flipud(x)), [rand(2, 3, 4)], {}),
    ("diagonal", lambda m, x: F.diagonal(x), [rand(3, 4)], {}),
    ("diagonal_offset_axes", lambda m, x: F.diagonal(x, -1, 2, 0), [rand(3, 2, 4)], {}),
    ("as_strided", lambda m, x: F.as_strided(x, (3, 2), (1, 2)), [rand(2, 3)], {}),
    (
        "pad_sequence",
        lambda m, a, b: F.pad_sequence([a, b], padding=-2.0),
        [rand(3, 2), rand(1, 2)],
        {},
    ),
    (
        "pad_sequence_length",
        lambda m, a, b: F.pad_sequence([a, b], length=4),
        [rand(3), rand(2)],
        {},
    ),
    (
        "scatter_add",
        lambda m, a, b: F.scatter_add(a, (slice(None), 1), b),
        [rand(2, 3), rand(2)],
        {},
    ),
    (
        "scatter_add_repeated",
        lambda m, a, b: F.scatter_add(a, ([0, 1, 0],), b),
        [rand(3, 2), rand(3, 2)],
        {},
    ),
    ("shift", lambda m, x: F.shift(x, ksize=3, dilate=2), [rand(2, 10, 4, 5)], {}),
    ("exclusive_cumprod", lambda m, x: _exclusive_cumprod(x), [rand(2, 4)], {}),
    (
        "spatial_transformer_grid",
        lambda m, t: F.spatial_transformer_grid(t, (3, 4)),
        [rand(2, 2, 3)],
        {},
    ),
    (
        "spatial_transformer_sampler",
        lambda m, x, g: F.spatial_transformer_sampler(x, g),
        [rand(2, 3, 4, 5), rand(2, 2, 3, 4, low=-1.3, high=1.3)],
        {},
    ),
    (
        "layer_normalization",
        lambda m, x: F.layer_normalization(x, m.g, m.b),
        [rand(3, 5)],
        {"g": rand(5), "b": rand(5)},
    ),
    ("rrelu_test_mode", lambda m, x: F.rrelu(x), [rand(3, 4)], {}),
    (
        "simplified_dropconnect",
        lambda m, x: F.simplified_dropconnect(x, m.W, m.b, train=False),
        [rand(2, 3, 2)],
        {"W": rand(4, 6), "b": rand(4)},
    ),
    (
        "simplified_dropconnect_mask",
        lambda m, x: F.simplified_dropconnect(x, m.W, train=False, mask=MASK),
        [rand(2, 6)],
        {"W": rand(4, 6)},
    ),
    (
        "simplified_dropconnect_batch_mask",
        lambda m, x: F.simplified_dropconnect(x, m.W, train=False, mask=BATCH_MASK),
        [rand(2, 6)],
        {"W": rand(4, 6)},
    ),
    (
        "local_convolution_2d",
        lambda m, x: F.local_convolution_2d(x, m.W, m.b, stride=(2, 1)),
        [rand(2, 3, 7, 5)],
        {"W": rand(4, 3, 4, 3, 3, 2), "b": rand(4, 3, 4)},
    ),
    (
        "local_convolution_2d_nobias",
        lambda m, x: F.local_convolution_2d(x, m.W),
        [rand(1, 2, 3, 3)],
        {"W": rand(2, 2, 2, 2, 2, 2)},
    ),
    (
        "bilinear",
        lambda m, a, b: F.bilinear(a, b, m.W, m.V1, m.V2, m.b),
        [rand(2, 3), rand(2, 2, 2)],
        {"W": rand(3, 4, 5), "V1": rand(3, 5), "V2": rand(4, 5), "b": rand(5)},
    ),
    (
        "ndtri",
        lambda m, x: F.ndtri(x),
        [numpy.array([1e-6, 0.01, 0.3, 0.5, 0.9, 0.999], numpy.float32)],
        {},
    ),
    ("xlogx", lambda m, x: _xlogx(x), [numpy.array([0, 0.5, 1, 2, -1], numpy.float32)], {}),
    ("accuracy", lambda m, y: F.accuracy(y, labels(0, 2, 1, 1)), [rand(4, 3)], {}),
    (
        "accuracy_ignore",
        lambda m, y: F.accuracy(y, labels(0, -1, 1, 2), ignore_label=-1),
        [rand(4, 3)],
        {},
    ),
    ("binary_accuracy", lambda m, y: F.binary_accuracy(y, labels(0, 1, -1, 1)), [rand(4)], {}),
    ("concat_rows", lambda m, a, b: _concat_rows(a, b), [rand(2, 3), rand(1, 3)], {}),
    (
        "bilinear_nolinear",
        lambda m, a, b: F.bilinear(a, b, m.W),
        [rand(2, 3), rand(2, 4)],
        {"W": rand(3, 4, 5)},
    ),
    ("upsampling_2d", lambda m, x: _pool_and_upsample(x, 2, None), [rand(2, 3, 6, 7)], {}),
    (
        "upsampling_2d_overlapping",
        lambda m, x: _pool_and_upsample(x, 3, 2, pad=1),
        [rand(2, 3, 7, 7)],
        {},
    ),
]

# The remaining functions with an exact ONNX expression (issue 35, second pass).
SUMMARY_LABELS = numpy.array([0, 2, 1, 1, -1, 2], numpy.int32)
ROIS_WIDE = numpy.array(
    [[0, 0, 10, 12], [2.5, 3, 14, 9.5], [4, 1, 7, 17], [20, 20, 30, 40], [-5, -3, 1, 2]],
    numpy.float32,
)  # the fourth lies outside the image: empty bins
ROI_INDICES_WIDE = numpy.array([0, 1, 1, 0, 1], numpy.int32)
# On the corner pixels' centres, past them and just inside them.
EDGE_POINTS = numpy.array([-1, 1, -1.5, 2, 0, 0.5, 1.0001, -0.9999], numpy.float32).reshape(
    1, 2, 2, 2
)
ROIS_FAR = numpy.array(
    [[-20, -20, 20, 20], [-30, 3, 14, 90.5], [4, -101, 7, 17], [-3.3, 2.2, 30, 4],
     [-5, -3, 1, 2]],
    numpy.float32,
)  # fmt: skip
CASES += [
    ("r2_score", lambda m, a, b: F.r2_score(a, b), [rand(5, 3), rand(5, 3)], {}),
    (
        "r2_score_raw_values",
        lambda m, a, b: F.r2_score(
            a, b * numpy.array([1, 0, 1], numpy.float32) + 1, multioutput="raw_values"
        ),
        [rand(5, 3), rand(5, 3)],
        {},
    ),  # fmt: skip
    (
        "classification_summary",
        lambda m, y: F.classification_summary(y, SUMMARY_LABELS),
        [rand(6, 3)],
        {},
    ),
    (
        "classification_summary_label_num",
        lambda m, y: F.classification_summary(
            y, SUMMARY_LABELS.reshape(2, 3), label_num=4, beta=2.0
        ),
        [rand(2, 3, 3)],
        {},
    ),
    (
        "slstm",
        lambda m, c1, c2, x1, x2: F.slstm(c1, c2, x1, x2),
        [rand(2, 3, 2), rand(2, 3, 2), rand(2, 12, 2), rand(2, 12, 2)],
        {},
    ),
    ("slstm_gates", lambda m, x1, x2: _slstm_gates(x1, x2), [rand(2, 8), rand(2, 8)], {}),
    ("tree_lstm", lambda m, c, x: F.tree_lstm(c, x), [rand(2, 3), rand(2, 12)], {}),
    (
        "tree_lstm_3",
        lambda m, c1, c2, c3, x: F.tree_lstm(c1, c2, c3, x),
        [rand(2, 3, 2), rand(2, 3, 2), rand(2, 3, 2), rand(2, 18, 2)],
        {},
    ),
    (
        "fixed_decorrelated_batch_normalization",
        lambda m, x: F.fixed_decorrelated_batch_normalization(x, m.mean, m.projection, groups=2),
        [rand(3, 4, 2, 3)],
        {"mean": rand(2, 2), "projection": rand(2, 2, 2)},
    ),
    ("im2col", lambda m, x: F.im2col(x, (2, 3)), [rand(1, 2, 4, 5)], {}),
    (
        "im2col_cover_all",
        lambda m, x: F.im2col(x, 3, stride=2, pad=1, cover_all=True, dilate=(1, 2)),
        [rand(2, 3, 7, 8)],
        {},
    ),
    ("fft", lambda m, re, im: F.fft((re, im)), [rand(2, 3, 8), rand(2, 3, 8)], {}),
    ("ifft", lambda m, re, im: F.ifft((re, im)), [rand(3, 5), rand(3, 5)], {}),
    ("fft_1d", lambda m, re, im: F.fft((re, im)), [rand(7), rand(7)], {}),
    (
        "spatial_transformer_sampler_edges",
        lambda m, x, g: F.spatial_transformer_sampler(x, g),
        [rand(1, 2, 3, 4), EDGE_POINTS],
        {},
    ),
    (
        "deformable_convolution_2d_sampler",
        lambda m, x, offset: F.deformable_convolution_2d_sampler(
            x, offset, m.W, m.b, stride=(2, 1), pad=1
        ),
        [rand(2, 3, 5, 6), rand(2, 12, 3, 6, low=-3, high=3)],
        {"W": rand(4, 3, 2, 3), "b": rand(4)},
    ),
    (
        "deformable_convolution_2d_sampler_whole_pixels",
        lambda m, x, offset: F.deformable_convolution_2d_sampler(x, offset, m.W),
        [rand(1, 2, 4, 4), numpy.round(rand(1, 8, 3, 3, low=-3, high=3))],
        {"W": rand(3, 2, 2, 2)},
    ),
    (
        "roi_max_pooling_2d",
        lambda m, x, rois: F.roi_max_pooling_2d(x, rois, ROI_INDICES_WIDE, (3, 2), 0.7),
        [rand(2, 3, 8, 9), ROIS_WIDE],
        {},
    ),
    (
        "roi_average_pooling_2d",
        lambda m, x, rois: F.roi_average_pooling_2d(x, rois, ROI_INDICES_WIDE, (3, 2), 0.7),
        [rand(2, 3, 8, 9), ROIS_WIDE],
        {},
    ),
    (
        "roi_max_align_2d",
        lambda m, x, rois: F.roi_max_align_2d(x, rois, ROI_INDICES_WIDE, (3, 2), 0.7, (1, 3)),
        [rand(2, 3, 8, 9), ROIS_WIDE],
        {},
    ),
    (
        "roi_max_align_2d_adaptive",
        lambda m, x, rois: F.roi_max_align_2d(x, rois, ROI_INDICES_WIDE, (2, 3), 1.0),
        [rand(2, 3, 5, 6), ROIS_FAR],
        {},
    ),
]

MASK = numpy.array([[1, 0, 1, 1, 0, 1]] * 4, bool)
BATCH_MASK = numpy.stack([MASK, ~MASK])
ROIS = numpy.array([[0, 0, 10, 12], [2.5, 3, 14, 9.5], [4, 1, 7, 17]], numpy.float32)
ROI_INDICES = numpy.array([0, 1, 1], numpy.int32)


def _xlogx(x):
    from dbr.functions.distributions._utils import XLogX

    return XLogX().apply((x,))[0]


def _slstm_gates(x1, x2):
    from dbr.functions.rnn.slstm import SLSTMGates

    return SLSTMGates().apply((x1, x2))[0]


def _concat_rows(a, b):
    from dbr.functions.loss.crf1d import _ConcatRows

    return _ConcatRows().apply((a, b))[0]


def _pool_and_upsample(x, ksize, stride, pad=0):
    y, indexes = F.max_pooling_2d(x, ksize, stride, pad=pad, return_indices=True)
    return F.upsampling_2d(y * 2, indexes, ksize, stride, pad=pad, outsize=x.shape[2:])


def _exclusive_cumprod(x):
    from dbr.functions.math.cumprod import exclusive_cumprod

    return exclusive_cumprod(x, 1), exclusive_cumprod(x, 0, reverse=True)


@pytest.mark.parametrize(
    ("forward", "inputs", "params"),
    [pytest.param(f, i, p, id=name) for name, f, i, p in CASES],
)
def test_converter(check, function_model, forward, inputs, params):
    import dbr.onnx

    model = function_model(forward, **params)
    opsets = tuple(dbr.onnx.maximum_opset_version() if o is None else o for o in OPSETS)
    check(model, inputs, opsets=opsets, atol=1e-5, rtol=1e-4)


# ONNX Runtime implements RoiAlign up to opset 21; newer opsets are checked by onnx only.
@pytest.mark.parametrize(
    "sampling_ratio", [pytest.param(2, id="ratio_2"), pytest.param(None, id="adaptive")]
)
def test_roi_average_align_2d(tools, sampling_ratio):
    import onnx

    import dbr.onnx

    model = tools.FunctionModel(
        lambda m, x: F.roi_average_align_2d(x, ROIS, ROI_INDICES, (2, 3), 0.5, sampling_ratio)
    )
    x = rand(2, 3, 8, 9)
    tools.check_export(model, [x], opsets=(13, 16, 21), atol=1e-5, rtol=1e-4)
    newest = dbr.onnx.export(model, [x])
    onnx.checker.check_model(newest, full_check=True)
    assert "RoiAlign" in [n.op_type for n in newest.graph.node]


def test_roi_average_align_2d_refuses_two_sampling_ratios(tools):
    import dbr.onnx

    model = tools.FunctionModel(
        lambda m, x: F.roi_average_align_2d(x, ROIS, ROI_INDICES, 2, 0.5, sampling_ratio=(1, 2))
    )
    with pytest.raises(ValueError, match=r"one sampling_ratio for both axes.*\(1, 2\)"):
        dbr.onnx.export(model, rand(2, 3, 8, 9), opset_version=13)


@pytest.mark.parametrize(("opset", "direct"), [(16, False), (17, True)])
def test_layer_normalization_is_one_operator_from_opset_17(tools, opset, direct):
    model = tools.FunctionModel(
        lambda m, x: F.layer_normalization(x, m.g, m.b), g=rand(5), b=rand(5)
    )
    proto = tools.check_export(model, [rand(3, 5)], opsets=(opset,), atol=1e-5, rtol=1e-4)
    ops = [n.op_type for n in proto.graph.node]
    assert ("LayerNormalization" in ops) == direct, ops


@pytest.mark.parametrize(("opset", "scatter"), [(11, "plain"), (13, "one_hot"), (16, "add")])
def test_upsampling_2d_before_and_after_scatter_with_reduction(tools, opset, scatter):
    disjoint = scatter == "plain"
    ksize, stride, pad = (2, None, 0) if disjoint else (3, 2, 1)
    model = tools.FunctionModel(lambda m, x: _pool_and_upsample(x, ksize, stride, pad=pad))
    proto = tools.check_export(model, [rand(2, 3, 7, 7)], opsets=(opset,), atol=1e-6, rtol=1e-5)
    ops = [n.op_type for n in proto.graph.node]
    assert ("OneHot" in ops) == (scatter == "one_hot"), ops
    reductions = [a.s for n in proto.graph.node for a in n.attribute if a.name == "reduction"]
    assert (reductions == [b"add"]) == (scatter == "add"), reductions


SECOND_PASS = (
    "r2_score", "r2_score_raw_values", "classification_summary", "slstm", "slstm_gates",
    "tree_lstm_3", "fixed_decorrelated_batch_normalization", "im2col_cover_all", "fft", "ifft",
    "fft_1d", "spatial_transformer_sampler", "spatial_transformer_sampler_edges",
    "deformable_convolution_2d_sampler", "roi_max_pooling_2d", "roi_average_pooling_2d",
    "roi_max_align_2d", "roi_max_align_2d_adaptive",
)  # fmt: skip


# float64 and float16 where ONNX Runtime's CPU provider has every kernel the export uses (it
# has no float64 Atan, so arctan2 is checked in float32 only).
@pytest.mark.parametrize(
    ("name", "dtype"),
    [
        *[
            (n, numpy.float64)
            for n in (
                "mean_squared_error", "huber_loss", "sigmoid_cross_entropy", "gaussian_nll",
                "tensordot", "einsum", "cumsum", "cumprod", "layer_normalization",
                "local_convolution_2d", "diagonal", "fliplr_flipud", "spatial_transformer_grid",
                *SECOND_PASS,
            )
        ],
        *[
            (n, numpy.float16)
            for n in (
                "mean_squared_error", "squared_error", "absolute_error", "layer_normalization",
                *SECOND_PASS,
            )
        ],
    ],
)  # fmt: skip
def test_converter_dtypes(check, function_model, name, dtype):
    import dbr.onnx

    _, forward, inputs, params = next(case for case in CASES if case[0] == name)
    model = function_model(forward, **{k: v.astype(dtype) for k, v in params.items()})
    inputs = [x.astype(dtype) if x.dtype.kind == "f" else x for x in inputs]
    tol = 2e-2 if dtype == numpy.float16 else 1e-7
    check(model, inputs, opsets=(13, dbr.onnx.maximum_opset_version()), atol=tol, rtol=tol)


@pytest.mark.parametrize(
    ("name", "opset", "operator"),
    [("spatial_transformer_sampler", 12, "Gather"), ("spatial_transformer_sampler", 15, "Gather"),
     ("spatial_transformer_sampler", 16, "GridSample"), ("fft", 16, "MatMul"),
     ("fft", 17, "DFT"), ("ifft", 20, "DFT")],
)  # fmt: skip
def test_direct_operator_from_its_opset_and_a_decomposition_before(tools, name, opset, operator):
    _, forward, inputs, params = next(case for case in CASES if case[0] == name)
    model = tools.FunctionModel(forward, **params)
    proto = tools.check_export(model, inputs, opsets=(opset,), atol=1e-5, rtol=1e-4)
    ops = {n.op_type for n in proto.graph.node}
    assert operator in ops and not ops & ({"GridSample", "DFT"} - {operator}), ops


@pytest.mark.parametrize(
    ("name", "opset", "first"),
    [("spatial_transformer_sampler", 11, 12), ("r2_score", 10, 11), ("roi_max_align_2d", 10, 11),
     ("roi_max_pooling_2d", 10, 11), ("classification_summary", 8, 9)],
)  # fmt: skip
def test_too_old_an_opset_is_refused_naming_the_first(tools, name, opset, first):
    import dbr.onnx
    from dbr.onnx.converters._legacy import OpsetError

    _, forward, inputs, params = next(case for case in CASES if case[0] == name)
    model = tools.FunctionModel(forward, **params)
    with pytest.raises(OpsetError, match=rf"from opset {first} on.*\(got opset {opset}\)"):
        dbr.onnx.export(model, inputs, opset_version=opset)


def test_classification_summary_of_computed_labels_needs_label_num(tools):
    import dbr.onnx

    model = tools.FunctionModel(lambda m, y, t: F.classification_summary(y, t))
    with pytest.raises(ValueError, match=r"ClassificationSummary.*label_num given.*got "
                                         r"label_num=None for t of shape \(6,\)"):  # fmt: skip
        dbr.onnx.export(model, [rand(6, 3), SUMMARY_LABELS], opset_version=13)
    model = tools.FunctionModel(lambda m, y, t: F.classification_summary(y, t, label_num=3))
    tools.check_export(model, [rand(6, 3), SUMMARY_LABELS], opsets=(13,))


def test_rrelu_in_train_mode_is_refused(tools):
    import dbr.onnx

    model = tools.FunctionModel(lambda m, x: F.rrelu(x))
    with pytest.raises(ValueError, match=r"RReLU exports in test mode .* export with train=False"):
        dbr.onnx.export(model, rand(3, 4), train=True)


def test_simplified_dropconnect_with_a_ratio_is_refused(tools):
    import dbr.onnx

    model = tools.FunctionModel(
        lambda m, x: F.simplified_dropconnect(x, m.W, ratio=0.5), W=rand(4, 6)
    )
    with pytest.raises(ValueError, match=r"SimplifiedDropconnect exports in test mode.*ratio=0.5"):
        dbr.onnx.export(model, rand(2, 6))


def test_upsampling_2d_without_its_max_pooling_is_refused(tools):
    import dbr.onnx

    indexes = numpy.zeros((1, 2, 3, 3), numpy.int32)
    model = tools.FunctionModel(lambda m, x: F.upsampling_2d(x, indexes, 2, outsize=(6, 6)))
    with pytest.raises(ValueError, match=r"Upsampling2D exports with the indexes of a max_pool"):
        dbr.onnx.export(model, rand(1, 2, 3, 3))


def test_as_strided_reading_around_its_input_is_refused(tools):
    import dbr.onnx

    # x[:, :2] is a view: as_strided reads the columns of x that the view leaves out.
    model = tools.FunctionModel(lambda m, x: F.as_strided(x[:, :2], (2, 3), (3, 1)))
    with pytest.raises(ValueError, match=r"AsStrided converts views of x's own elements only"):
        dbr.onnx.export(model, rand(2, 3))
