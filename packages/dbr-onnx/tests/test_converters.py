"""Each converter: a small model exported at the lowest and highest opset, run in ONNX Runtime."""

import warnings

import numpy
import onnx
import pytest

import dbr.core
import dbr.functions as F
from dbr.core import ops

rng = numpy.random.default_rng(0)


def rand(*shape, dtype=numpy.float32, low=-1.0, high=1.0):
    return rng.uniform(low, high, shape).astype(dtype)


def positive(*shape, dtype=numpy.float32):
    return rand(*shape, dtype=dtype, low=0.5, high=2.0)


def _batch_matmul(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return F.batch_matmul(*args, **kwargs)


T_IGNORE = numpy.array([0, -1, 2, 1], numpy.int32)


# (id, forward(model, *inputs), inputs, parameters)
CASES = [
    ("relu", lambda m, x: F.relu(x), [rand(2, 3)], {}),
    ("sigmoid", lambda m, x: F.sigmoid(x), [rand(2, 3)], {}),
    ("tanh", lambda m, x: F.tanh(x), [rand(2, 3)], {}),
    ("clipped_relu", lambda m, x: F.clipped_relu(x * 10, 3.0), [rand(2, 3)], {}),
    ("relu6", lambda m, x: F.relu6(x * 10), [rand(2, 3)], {}),
    ("leaky_relu", lambda m, x: F.leaky_relu(x, 0.3), [rand(2, 3)], {}),
    ("elu", lambda m, x: F.elu(x, 0.7), [rand(2, 3)], {}),
    ("selu", lambda m, x: F.selu(x), [rand(2, 3)], {}),
    ("softmax", lambda m, x: F.softmax(x, axis=1), [rand(2, 3, 4)], {}),
    ("log_softmax", lambda m, x: F.log_softmax(x), [rand(2, 5)], {}),
    ("softplus", lambda m, x: F.softplus(x), [rand(2, 3)], {}),
    ("softplus_beta", lambda m, x: F.softplus(x, beta=2.0), [rand(2, 3)], {}),
    ("hard_sigmoid", lambda m, x: F.hard_sigmoid(x * 4), [rand(2, 3)], {}),
    ("prelu", lambda m, x: F.prelu(x, m.W), [rand(2, 3, 4)], {"W": rand(3)}),
    ("swish", lambda m, x: F.swish(x, m.beta), [rand(2, 3)], {"beta": rand(3)}),
    ("crelu", lambda m, x: F.crelu(x), [rand(2, 3)], {}),
    ("add", lambda m, x, y: x + y, [rand(2, 3), rand(2, 3)], {}),
    ("sub", lambda m, x, y: x - y, [rand(2, 3), rand(2, 3)], {}),
    ("mul", lambda m, x, y: x * y, [rand(2, 3), rand(2, 3)], {}),
    ("div", lambda m, x, y: x / y, [rand(2, 3), positive(2, 3)], {}),
    ("multi_add", lambda m, x, y: ops.add(x, y, x), [rand(2, 3), rand(2, 3)], {}),
    ("constants", lambda m, x: (2 - x) * 3 + 1 / (x + 4) - x / 2, [rand(2, 3)], {}),
    ("pow", lambda m, x, y: x**y + 2**x + x**2, [positive(2, 3), rand(2, 3)], {}),
    ("neg_abs", lambda m, x: abs(-x), [rand(2, 3)], {}),
    ("exp_log", lambda m, x: F.exp(x) + F.log(x + 2), [rand(2, 3)], {}),
    ("sqrt_rsqrt", lambda m, x: F.sqrt(x) + F.rsqrt(x), [positive(2, 3)], {}),
    ("square", lambda m, x: F.square(x), [rand(2, 3)], {}),
    ("log1p_expm1", lambda m, x: F.log1p(x + 1) + F.expm1(x), [rand(2, 3)], {}),
    ("log2_log10", lambda m, x: F.log2(x) + F.log10(x), [positive(2, 3)], {}),
    ("trig", lambda m, x: F.sin(x) + F.cos(x) + F.tan(x), [rand(2, 3)], {}),
    ("arctrig", lambda m, x: F.arcsin(x) + F.arccos(x) + F.arctan(x), [rand(2, 3) * 0.9], {}),
    ("hyperbolic", lambda m, x: F.sinh(x) + F.cosh(x) + F.arctanh(x * 0.9), [rand(2, 3)], {}),
    (
        "maximum_minimum",
        lambda m, x, y: F.maximum(x, y) + F.minimum(x, y) * 2,
        [rand(2, 3), rand(2, 3)],
        {},
    ),  # fmt: skip
    ("matmul", lambda m, x, y: F.matmul(x, y), [rand(2, 3), rand(3, 4)], {}),
    (
        "matmul_trans",
        lambda m, x, y: F.matmul(x, y, transa=True, transb=True),
        [rand(3, 2), rand(4, 3)],
        {},
    ),  # fmt: skip
    ("matmul_batched", lambda m, x, y: F.matmul(x, y), [rand(5, 2, 3), rand(5, 3, 4)], {}),
    (
        "batch_matmul",
        lambda m, x, y: _batch_matmul(x, y, transb=True),
        [rand(5, 2, 3), rand(5, 4, 3)],
        {},
    ),  # fmt: skip
    ("sum", lambda m, x: F.sum(x, axis=1), [rand(2, 3, 4)], {}),
    ("sum_all", lambda m, x: F.sum(x), [rand(2, 3)], {}),
    ("sum_keepdims", lambda m, x: F.sum(x, axis=(0, 2), keepdims=True), [rand(2, 3, 4)], {}),
    ("mean", lambda m, x: F.mean(x, axis=1), [rand(2, 3, 4)], {}),
    (
        "max_min",
        lambda m, x: (F.max(x, axis=1), F.min(x, axis=(0, 2), keepdims=True)),
        [rand(2, 3, 4)],
        {},
    ),  # fmt: skip
    ("prod", lambda m, x: F.prod(x, axis=1), [rand(2, 3)], {}),
    ("logsumexp", lambda m, x: F.logsumexp(x, axis=1), [rand(2, 3)], {}),
    ("argmax_argmin", lambda m, x: (F.argmax(x, axis=1), F.argmin(x)), [rand(2, 3)], {}),
    ("clip", lambda m, x: F.clip(x, -0.5, 0.5), [rand(2, 3)], {}),
    (
        "linear_interpolate",
        lambda m, p, x, y: F.linear_interpolate(p, x, y),
        [rand(2, 3), rand(2, 3), rand(2, 3)],
        {},
    ),  # fmt: skip
    ("broadcast_to", lambda m, x: F.broadcast_to(x, (2, 3, 4)), [rand(3, 1)], {}),
    ("broadcast", lambda m, x, y: F.broadcast(x, y), [rand(3, 1), rand(1, 4)], {}),
    ("sum_to", lambda m, x: F.sum_to(x, (3, 1)), [rand(2, 3, 4)], {}),
    ("cast", lambda m, x: F.cast(x, numpy.float64), [rand(2, 3)], {}),
    ("identity", lambda m, x, y: F.identity(x, y), [rand(2, 3), rand(2)], {}),
    (
        "bias_scale",
        lambda m, x: F.scale(F.bias(x, m.b, axis=1), m.w, axis=1),
        [rand(2, 3, 4)],
        {"b": rand(3), "w": rand(3)},
    ),  # fmt: skip
    ("fmod", lambda m, x, y: F.fmod(x, y), [rand(2, 3) * 5, positive(2, 3)], {}),
    ("linear", lambda m, x: F.linear(x, m.W, m.b), [rand(2, 3)], {"W": rand(4, 3), "b": rand(4)}),
    ("linear_nobias_4d", lambda m, x: F.linear(x, m.W), [rand(2, 3, 2, 2)], {"W": rand(4, 12)}),
    (
        "linear_batch_axes",
        lambda m, x: F.linear(x, m.W, m.b, n_batch_axes=2),
        [rand(2, 5, 3)],
        {"W": rand(4, 3), "b": rand(4)},
    ),  # fmt: skip
    (
        "convolution_2d",
        lambda m, x: F.convolution_2d(x, m.W, m.b, stride=2, pad=1),
        [rand(2, 3, 7, 7)],
        {"W": rand(4, 3, 3, 3), "b": rand(4)},
    ),  # fmt: skip
    (
        "convolution_2d_cover_all",
        lambda m, x: F.convolution_2d(x, m.W, stride=2, pad=1, cover_all=True),
        [rand(2, 3, 8, 8)],
        {"W": rand(4, 3, 3, 3)},
    ),  # fmt: skip
    (
        "convolution_2d_groups_dilate",
        lambda m, x: F.convolution_2d(x, m.W, dilate=2, groups=2, pad=(1, 2)),
        [rand(2, 4, 9, 9)],
        {"W": rand(6, 2, 3, 3)},
    ),  # fmt: skip
    (
        "convolution_nd",
        lambda m, x: F.convolution_nd(x, m.W, m.b, stride=(1, 2, 1)),
        [rand(2, 2, 5, 6, 4)],
        {"W": rand(3, 2, 2, 3, 2), "b": rand(3)},
    ),  # fmt: skip
    (
        "convolution_1d",
        lambda m, x: F.convolution_1d(x, m.W, pad=1),
        [rand(2, 2, 9)],
        {"W": rand(3, 2, 3)},
    ),  # fmt: skip
    (
        "deconvolution_2d",
        lambda m, x: F.deconvolution_2d(x, m.W, m.b, stride=2, pad=1),
        [rand(2, 3, 4, 4)],
        {"W": rand(3, 4, 3, 3), "b": rand(4)},
    ),  # fmt: skip
    (
        "deconvolution_2d_outsize",
        lambda m, x: F.deconvolution_2d(x, m.W, stride=2, pad=1, outsize=(8, 8)),
        [rand(2, 3, 4, 4)],
        {"W": rand(3, 4, 3, 3)},
    ),  # fmt: skip
    (
        "deconvolution_2d_groups",
        lambda m, x: F.deconvolution_2d(x, m.W, groups=2, dilate=2),
        [rand(2, 4, 4, 4)],
        {"W": rand(4, 3, 3, 3)},
    ),  # fmt: skip
    (
        "deconvolution_nd",
        lambda m, x: F.deconvolution_nd(x, m.W, stride=2),
        [rand(1, 2, 3, 3, 3)],
        {"W": rand(2, 3, 2, 2, 2)},
    ),  # fmt: skip
    (
        "depthwise_convolution_2d",
        lambda m, x: F.depthwise_convolution_2d(x, m.W, m.b, stride=2, pad=1),
        [rand(2, 3, 6, 6)],
        {"W": rand(2, 3, 3, 3), "b": rand(6)},
    ),  # fmt: skip
    (
        "embed_id",
        lambda m, x: F.embed_id(x, m.W),
        [numpy.array([[0, 3], [2, 1]], numpy.int32)],
        {"W": rand(4, 5)},
    ),  # fmt: skip
    (
        "embed_id_ignore",
        lambda m, x: F.embed_id(x, m.W, ignore_label=-1),
        [numpy.array([0, -1, 3], numpy.int32)],
        {"W": rand(4, 5)},
    ),  # fmt: skip
    ("max_pooling_2d", lambda m, x: F.max_pooling_2d(x, 3, stride=2), [rand(2, 3, 8, 8)], {}),
    (
        "max_pooling_2d_no_cover",
        lambda m, x: F.max_pooling_2d(x, 2, cover_all=False, pad=1),
        [rand(2, 3, 7, 7)],
        {},
    ),  # fmt: skip
    ("max_pooling_nd", lambda m, x: F.max_pooling_nd(x, 2), [rand(1, 2, 4, 5, 6)], {}),
    (
        "average_pooling_2d",
        lambda m, x: F.average_pooling_2d(x, 3, stride=2, pad=1),
        [rand(2, 3, 8, 8)],
        {},
    ),  # fmt: skip
    (
        "average_pooling_nd_pad_none",
        lambda m, x: F.average_pooling_nd(x, 3, stride=2, pad=1, pad_value=None),
        [rand(2, 3, 7, 7)],
        {},
    ),  # fmt: skip
    (
        "fixed_batch_normalization",
        lambda m, x: F.fixed_batch_normalization(x, m.g, m.b, m.mean, m.var),
        [rand(2, 3, 4, 4)],
        {"g": rand(3), "b": rand(3), "mean": rand(3), "var": positive(3)},
    ),
    (
        "fixed_batch_normalization_2d",
        lambda m, x: F.fixed_batch_normalization(x, m.g, m.b, m.mean, m.var, axis=0),
        [rand(5, 3)],
        {"g": rand(3), "b": rand(3), "mean": rand(3), "var": positive(3)},
    ),
    (
        "fixed_batch_normalization_axis",
        lambda m, x: F.fixed_batch_normalization(x, m.g, m.b, m.mean, m.var, axis=(0, 1)),
        [rand(2, 3, 4)],
        {"g": rand(4), "b": rand(4), "mean": rand(4), "var": positive(4)},
    ),
    (
        "local_response_normalization",
        lambda m, x: F.local_response_normalization(x),
        [rand(2, 7, 3, 3) * 3],
        {},
    ),  # fmt: skip
    ("normalize", lambda m, x: F.normalize(x), [rand(2, 5)], {}),
    (
        "group_normalization",
        lambda m, x: F.group_normalization(x, 2, m.g, m.b),
        [rand(2, 4, 3, 3)],
        {"g": rand(4), "b": rand(4)},
    ),  # fmt: skip
    ("reshape", lambda m, x: F.reshape(x, (2, 12)), [rand(2, 3, 4)], {}),
    ("reshape_batch", lambda m, x: F.reshape(x, (6, 4)), [rand(2, 3, 4)], {}),
    ("transpose", lambda m, x: F.transpose(x, (2, 0, 1)) + 0, [rand(2, 3, 4)], {}),
    ("transpose_default", lambda m, x: F.transpose(x), [rand(2, 3, 4)], {}),
    ("swapaxes", lambda m, x: F.swapaxes(x, 0, 2), [rand(2, 3, 4)], {}),
    ("moveaxis", lambda m, x: F.moveaxis(x, 0, -1), [rand(2, 3, 4)], {}),
    ("rollaxis", lambda m, x: F.rollaxis(x, 2), [rand(2, 3, 4)], {}),
    ("concat", lambda m, x, y: F.concat((x, y), axis=1), [rand(2, 3), rand(2, 4)], {}),
    ("split_axis", lambda m, x: F.split_axis(x, [1, 3], axis=1), [rand(2, 5)], {}),
    ("split_axis_sections", lambda m, x: F.split_axis(x, 2, axis=0), [rand(4, 3)], {}),
    ("separate", lambda m, x: F.separate(x, axis=1), [rand(2, 3)], {}),
    ("separate_one", lambda m, x: F.separate(x, axis=0), [rand(1, 3)], {}),
    ("stack", lambda m, x, y: F.stack((x, y), axis=1), [rand(2, 3), rand(2, 3)], {}),
    (
        "hstack_vstack_dstack",
        lambda m, x, y: (F.hstack((x, y)), F.vstack((x, y)), F.dstack((x, y))),
        [rand(2, 3), rand(2, 3)],
        {},
    ),  # fmt: skip
    (
        "hstack_vstack_dstack_0d",
        lambda m, x, y: (F.hstack((x, y)), F.vstack((x, y)), F.dstack((x, y))),
        [rand(), rand()],
        {},
    ),  # fmt: skip
    (
        "hstack_vstack_dstack_1d",
        lambda m, x, y: (F.hstack((x, y)), F.vstack((x, y)), F.dstack((x, y))),
        [rand(3), rand(3)],
        {},
    ),  # fmt: skip
    ("squeeze", lambda m, x: F.squeeze(x), [rand(1, 3, 1)], {}),
    ("squeeze_axis", lambda m, x: F.squeeze(x, axis=2), [rand(1, 3, 1)], {}),
    ("expand_dims", lambda m, x: F.expand_dims(x, 1), [rand(2, 3)], {}),
    ("flatten", lambda m, x: F.flatten(x), [rand(2, 3)], {}),
    ("tile", lambda m, x: F.tile(x, (2, 1, 3)), [rand(2, 3)], {}),
    ("repeat", lambda m, x: F.repeat(x, 2, axis=1), [rand(2, 3)], {}),
    ("repeat_list", lambda m, x: F.repeat(x, [1, 0, 2], axis=1), [rand(2, 3)], {}),
    (
        "pad",
        lambda m, x: F.pad(x, ((0, 0), (1, 2)), "constant", constant_values=0.5),
        [rand(2, 3)],
        {},
    ),  # fmt: skip
    ("pad_edge", lambda m, x: F.pad(x, 1, "edge"), [rand(2, 3)], {}),
    (
        "where",
        lambda m, x, y: F.where(numpy.array([[True, False, True]] * 2), x, y),
        [rand(2, 3), rand(2, 3)],
        {},
    ),  # fmt: skip
    (
        "select_item",
        lambda m, x: F.select_item(x, numpy.array([2, 0], numpy.int32)),
        [rand(2, 3)],
        {},
    ),  # fmt: skip
    ("depth2space", lambda m, x: F.depth2space(x, 2), [rand(1, 8, 2, 3)], {}),
    ("space2depth", lambda m, x: F.space2depth(x, 2), [rand(1, 2, 4, 6)], {}),
    ("resize_images", lambda m, x: F.resize_images(x, (5, 7)), [rand(1, 2, 3, 4)], {}),
    ("get_item_basic", lambda m, x: x[1:, ::2, 1], [rand(3, 5, 4)], {}),
    ("get_item_none_ellipsis", lambda m, x: x[None, ..., -1], [rand(3, 5, 4)], {}),
    ("get_item_reverse", lambda m, x: x[::-1, 3:0:-2], [rand(3, 5)], {}),
    ("get_item_array", lambda m, x: x[:, [2, 0, 2]], [rand(3, 5)], {}),
    ("flip", lambda m, x: F.flip(x, 1), [rand(2, 3)], {}),
    (
        "transpose_sequence",
        lambda m, x, y: F.transpose_sequence([x, y]),
        [rand(3, 2), rand(2, 2)],
        {},
    ),  # fmt: skip
    (
        "permutate",
        lambda m, x, i: F.permutate(x, i, axis=1),
        [rand(2, 3), numpy.array([2, 0, 1], numpy.int32)],
        {},
    ),  # fmt: skip
    (
        "permutate_inv",
        lambda m, x, i: F.permutate(x, i, axis=1, inv=True),
        [rand(2, 3), numpy.array([2, 0, 1], numpy.int32)],
        {},
    ),  # fmt: skip
    (
        "softmax_cross_entropy",
        lambda m, x: F.softmax_cross_entropy(x, T_IGNORE),
        [rand(4, 3)],
        {},
    ),  # fmt: skip
    (
        "softmax_cross_entropy_no_normalize",
        lambda m, x: F.softmax_cross_entropy(x, T_IGNORE, normalize=False),
        [rand(4, 3)],
        {},
    ),
    (
        "softmax_cross_entropy_no_reduce",
        lambda m, x: F.softmax_cross_entropy(x, T_IGNORE, reduce="no"),
        [rand(4, 3)],
        {},
    ),
    (
        "resize_images_nearest",
        lambda m, x: F.resize_images(x, (5, 7), mode="nearest"),
        [rand(1, 2, 3, 4)],
        {},
    ),  # fmt: skip
    (
        "resize_images_no_align",
        lambda m, x: F.resize_images(x, (5, 7), align_corners=False),
        [rand(1, 2, 3, 4)],
        {},
    ),  # fmt: skip
    ("lstm", lambda m, c, x: F.lstm(c, x), [rand(2, 3), rand(2, 12)], {}),
    ("lstm_shorter", lambda m, c, x: F.lstm(c, x), [rand(3, 2), rand(2, 8)], {}),
]


@pytest.mark.parametrize(
    ("forward", "inputs", "params"),
    [pytest.param(f, i, p, id=name) for name, f, i, p in CASES],
)
def test_converter(check, function_model, forward, inputs, params):
    model = function_model(forward, **params)
    check(model, inputs, atol=1e-5, rtol=1e-4)


# Several integer arrays become GatherND (opset 11 on); lists holding slices index per axis.
GET_ITEM_ND_CASES = [
    ("two_arrays", [[0, 1], [1, 2]]),
    ("two_arrays_then_slice", [[0, 1], [0, 1], slice(None)]),
    ("three_arrays", [[0, 1], [0, -1], [2, 3]]),
    ("integer_before", [0, [0, 1], [2, 3]]),
    ("integer_after", [[0, 1], [0, 2], 0]),
    ("new_axis_after", [[0, 1], [0, 2], None]),
    ("broadcast", (numpy.array([[0], [1]]), [0, 2, 1], slice(1, None, 2))),
    ("list_of_slices", [slice(None), slice(4, None, -2)]),
]


@pytest.mark.parametrize("index", [pytest.param(i, id=name) for name, i in GET_ITEM_ND_CASES])
def test_get_item_with_several_arrays_or_a_list_of_slices(check, function_model, index):
    model = function_model(lambda m, x: F.get_item(x, index))
    check(model, [rand(2, 3, 4)], opsets=(11, 13), atol=0, rtol=0)


@pytest.mark.parametrize(
    "index",
    [
        pytest.param((0, slice(None), [2, 0]), id="integer_then_slice_then_array"),
        pytest.param((0, None, [2, 0]), id="integer_then_new_axis_then_array"),
        pytest.param((slice(1, None), [0, 2], 1), id="adjacent_integer_after"),
    ],
)
def test_get_item_puts_the_array_axes_where_numpy_does(check, function_model, index):
    model = function_model(lambda m, x: F.get_item(x, index))
    check(model, [rand(2, 3, 4)], atol=0, rtol=0)


@pytest.mark.parametrize(
    "index",
    [
        pytest.param([[0, 1], 0, [0, 1]], id="integer_between_arrays"),
        pytest.param([slice(None), [0, 1], [0, 1]], id="slice_before_arrays"),
        pytest.param([None, [0, 1], [0, 1]], id="new_axis_before_arrays"),
    ],
)
def test_get_item_rejects_several_arrays_it_cannot_gather(tools, index):
    import dbr.onnx

    model = tools.FunctionModel(lambda m, x: F.get_item(x, index))
    with pytest.raises(ValueError, match="several integer array indexes only when"):
        dbr.onnx.export(model, rand(2, 3, 4), opset_version=13)


def test_get_item_with_several_arrays_needs_opset_11(tools):
    import dbr.onnx

    model = tools.FunctionModel(lambda m, x: F.get_item(x, [[0, 1], [1, 2]]))
    with pytest.raises(ValueError, match="GatherND from opset 11 on"):
        dbr.onnx.export(model, rand(2, 3, 4), opset_version=10)


# ONNX Runtime's CPU provider has no float64 Conv/MaxPool kernels: those run in float16.
@pytest.mark.parametrize(
    ("name", "dtype"),
    [
        *[(n, numpy.float64) for n in ("relu", "add", "linear", "softmax", "tanh", "matmul")],
        *[(n, numpy.float16) for n in ("relu", "add", "convolution_2d", "max_pooling_2d")],
    ],
)
def test_converter_dtypes(check, function_model, name, dtype):
    _, forward, inputs, params = next(case for case in CASES if case[0] == name)
    model = function_model(forward, **{k: v.astype(dtype) for k, v in params.items()})
    tol = 2e-2 if dtype == numpy.float16 else 1e-7
    check(model, [x.astype(dtype) for x in inputs], atol=tol, rtol=tol)


# Before opset 11 (no GatherElements, no ScatterElements) these are written another way.
BEFORE_OPSET_11 = ["select_item", "permutate_inv", "softmax_cross_entropy"]


@pytest.mark.parametrize("opset", [9, 10])
@pytest.mark.parametrize("name", BEFORE_OPSET_11)
def test_converter_before_opset_11(check, function_model, name, opset):
    forward, inputs, params = next((f, i, p) for n, f, i, p in CASES if n == name)
    proto = check(function_model(forward, **params), inputs, opsets=(opset,), atol=1e-5)
    assert proto.opset_import[0].version == opset
    ops = {node.op_type for node in proto.graph.node}
    assert not ops & {"GatherElements", "ScatterElements"}, ops


@pytest.mark.parametrize("opset", [7, 8])
def test_integer_constants_before_opset_9_are_cast_doubles_not_initializers(check, opset):
    class Reshape(dbr.core.Chain):
        def forward(self, x):
            return F.reshape(x, (3, 2))

    proto = check(Reshape(), [rand(2, 3)], opsets=(opset,))
    assert len(proto.graph.initializer) == 0
    ops = [node.op_type for node in proto.graph.node]
    assert ops == ["Constant", "Cast", "Reshape"], ops
    (constant,) = [n for n in proto.graph.node if n.op_type == "Constant"]
    value = onnx.numpy_helper.to_array(constant.attribute[0].t)
    assert value.dtype == numpy.float64 and value.tolist() == [3.0, 2.0]


def test_integer_constants_too_large_for_a_double_stay_initializers_before_opset_9():
    from dbr.onnx._graph import Context

    context = Context(opset_version=8)
    context.node_name = "Op_0"
    name = context.add_const(numpy.array([2**62], numpy.int64))
    assert [t.name for t in context.initializers] == [name]
    assert context.constants == []
