"""dbr.links.caffe.CaffeFunction against Chainer 7.8.1's results, and its refusals of bad files.

The fixtures (written by Chainer, see fixtures/make_caffe_chainer.py) hold
networks of every layer type Chainer's CaffeFunction reads, in the current
``layer`` field and the V1 ``layers`` field, serialized by protobuf, with
the blobs Chainer computes from them.
"""

import os

import numpy
import pytest

import dbr.functions as F
from dbr.core import using_config
from dbr.links import BatchNormalization, Convolution2D, Deconvolution2D, Linear, Scale
from dbr.links.caffe import CaffeFormatError, CaffeFunction, _proto
from dbr.links.caffe._wire import encode

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
LAYERS = numpy.load(os.path.join(FIXTURES, "caffe_layers.npz"))


def _blobs(key):
    prefix = f"{key}/"
    return [name[len(prefix) :] for name in LAYERS.files if name.startswith(prefix)]


@pytest.mark.parametrize("key, name", [("layer", "caffe_layers"), ("v1", "caffe_layers_v1")])
def test_every_layer_type_computes_what_chainer_computes(key, name):
    func = CaffeFunction(os.path.join(FIXTURES, f"{name}.caffemodel"))
    outputs = _blobs(key)
    assert len(outputs) == (19 if key == "layer" else 16)
    with using_config("train", False):
        values = func(inputs={"x": LAYERS["x"], "label": LAYERS["label"]}, outputs=outputs)
    for blob, value in zip(outputs, values):
        expected = LAYERS[f"{key}/{blob}"]
        assert value.shape == expected.shape, blob
        numpy.testing.assert_allclose(value.array, expected, rtol=1e-5, atol=1e-5, err_msg=blob)


def test_layers_become_chainer_links():
    func = CaffeFunction(os.path.join(FIXTURES, "caffe_layers.caffemodel"))
    assert isinstance(func.conv1, Convolution2D)
    assert isinstance(func.deconv1, Deconvolution2D)
    assert isinstance(func.fc1, Linear)
    assert isinstance(func.bn1, BatchNormalization)
    assert isinstance(func.scale1, Scale)
    # Grouped filters are stored block-diagonally in a full array, as Chainer does.
    assert func.conv1.W.shape == (6, 4, 3, 2)
    assert not func.conv1.W.array[:3, 2:].any() and not func.conv1.W.array[3:, :2].any()
    assert func.split_map == {"sig1a": "sig1", "sig1b": "sig1"}
    assert [name for name, _, _ in func.layers][:3] == ["conv1", "bn1", "scale1"]
    assert func.skipped == []


def test_forward_runs_what_its_inputs_allow_and_disables_layers():
    func = CaffeFunction(os.path.join(FIXTURES, "caffe_layers.caffemodel"))
    x = LAYERS["x"]
    with using_config("train", False):
        (conv,) = func(inputs={"x": x}, outputs=["conv1"], disable=["relu1"])
        assert "loss" not in func.variables  # no label: the loss layer did not run
        relu_skipped = func.bn1(func.conv1(x))
    with using_config("train", False):
        expected = func.scale1(relu_skipped)
    numpy.testing.assert_allclose(conv.array, expected.array, rtol=1e-6)
    with pytest.raises(KeyError, match=r"the blobs \['loss'\] were not computed"):
        func(inputs={"x": x}, outputs=["loss"])
    with pytest.raises(ValueError, match="the train argument is not supported anymore"):
        func(inputs={"x": x}, outputs=["conv1"], train=False)
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        func(inputs={"x": x}, outputs=["conv1"], volatile=True)


def test_backward_reaches_the_parameters():
    func = CaffeFunction(os.path.join(FIXTURES, "caffe_layers.caffemodel"))
    func.cleargrads()
    (loss,) = func(inputs={"x": LAYERS["x"], "label": LAYERS["label"]}, outputs=["loss"])
    loss.backward()
    grads = {name: param.grad for name, param in func.namedparams()}
    on_the_loss_path = ["/conv1/W", "/scale1/W", "/scale1/bias/b", "/deconv1/W", "/fc1/W"]
    for name in on_the_loss_path:
        assert numpy.isfinite(grads[name]).all() and numpy.abs(grads[name]).sum() > 0, name
    assert grads["/fc2/W"] is None  # fc2 feeds scale2, which the loss does not use


def _write_net(path, layers, field="layer"):
    with open(path, "wb") as f:
        f.write(encode(_proto.NET, {field: layers}))
    return str(path)


def _blob(array):
    array = numpy.asarray(array, numpy.float32)
    return {"shape": {"dim": list(array.shape)}, "data": array.ravel()}


def test_tanh_and_in_place_unsupported_layers_warn_with_what_they_break(tmp_path):
    path = _write_net(tmp_path / "net.caffemodel", [
        {"name": "tanh", "type": "TanH", "bottom": ["x"], "top": ["t"]},
        {"name": "odd", "type": "BNLL", "bottom": ["t"], "top": ["u"]},
        {"name": "after", "type": "ReLU", "bottom": ["u"], "top": ["v"]},
        {"name": "inplace", "type": "AbsVal", "bottom": ["t"], "top": ["t"]},
        {"name": "data", "type": "Input", "top": ["x"]},
    ])  # fmt: skip
    with pytest.warns(UserWarning) as record:
        func = CaffeFunction(path)
    messages = [str(w.message) for w in record]
    assert len(messages) == 2
    assert f"{path}: skipped layer 'odd' of type 'BNLL'" in messages[0]
    assert "the blobs ['u', 'v'] cannot be computed" in messages[0]
    assert "skipped layer 'inplace' of type 'AbsVal'" in messages[1]
    assert "the in-place blobs ['t'] keep the values before it" in messages[1]
    assert func.skipped == [("odd", "BNLL"), ("inplace", "AbsVal")]
    x = numpy.linspace(-2, 2, 6, dtype=numpy.float32).reshape(2, 3)
    (t,) = func(inputs={"x": x}, outputs=["t"])
    numpy.testing.assert_allclose(t.array, F.tanh(x).array)


def test_reshape_zero_copies_the_input_dimension(tmp_path):
    path = _write_net(tmp_path / "net.caffemodel", [
        {"name": "r", "type": "Reshape", "bottom": ["x"], "top": ["y"],
         "reshape_param": {"shape": {"dim": [0, -1]}}},
    ])  # fmt: skip
    (y,) = CaffeFunction(path)(inputs={"x": numpy.zeros((3, 2, 2), numpy.float32)}, outputs=["y"])
    assert y.shape == (3, 4)


def test_dilation_and_double_data_are_read(tmp_path):
    weight = numpy.arange(2 * 1 * 3 * 3, dtype=numpy.float64).reshape(2, 1, 3, 3) / 10
    path = _write_net(tmp_path / "net.caffemodel", [
        {"name": "c", "type": "Convolution", "bottom": ["x"], "top": ["y"],
         "convolution_param": {"num_output": 2, "kernel_size": [3], "dilation": [2],
                               "bias_term": False},
         "blobs": [{"shape": {"dim": [2, 1, 3, 3]}, "double_data": weight.ravel()}]},
    ])  # fmt: skip
    x = numpy.random.default_rng(0).standard_normal((1, 1, 7, 7)).astype(numpy.float32)
    (y,) = CaffeFunction(path)(inputs={"x": x}, outputs=["y"])
    expected = F.convolution_2d(x, weight.astype(numpy.float32), dilate=2)
    numpy.testing.assert_allclose(y.array, expected.array, rtol=1e-6)


def _conv_layer(**changes):
    layer = {"name": "conv", "type": "Convolution", "bottom": ["x"], "top": ["y"],
             "convolution_param": {"num_output": 2, "kernel_size": [3]},
             "blobs": [_blob(numpy.zeros((2, 1, 3, 3))), _blob(numpy.zeros(2))]}  # fmt: skip
    layer.update(changes)
    return layer


@pytest.mark.parametrize(
    "layer, message",
    [
        (_conv_layer(blobs=[_blob(numpy.zeros((2, 1, 3, 3)))]),
         r"layer\[0\] 'conv' \(Convolution\): blobs: expected 2 blobs \(weights, bias\), got 1"),
        (_conv_layer(blobs=[{"shape": {"dim": [2, 1, 3, 3]}, "data": numpy.zeros(17)},
                            _blob(numpy.zeros(2))]),
         r"blobs\[0\]: expected 18 values for its shape \[2, 1, 3, 3\], got 17"),
        (_conv_layer(blobs=[_blob(numpy.zeros((2, 1, 3, 3))), _blob(numpy.zeros(3))]),
         r"blobs\[1\]: expected 2 values, got 3"),
        (_conv_layer(convolution_param={"num_output": 2, "kernel_size": [5]}),
         r"convolution_param.kernel_size: expected the filter's \(3, 3\), got \(5, 5\)"),
        ({"name": "e", "type": "Eltwise", "bottom": ["a", "b"], "top": ["c"],
          "eltwise_param": {"coeff": [1.0, 2.0, 3.0]}},
         r"eltwise_param.coeff: expected 2 coefficients \(one per bottom\), got 3"),
        ({"name": "fc", "type": "InnerProduct", "bottom": ["x"], "top": ["y"],
          "inner_product_param": {"num_output": 4, "bias_term": False},
          "blobs": [_blob(numpy.zeros((3, 2)))]},
         r"inner_product_param.num_output: expected the weight's 3 rows, got 4"),
    ],
)  # fmt: skip
def test_blobs_that_do_not_match_their_layer_are_refused_by_name(tmp_path, layer, message):
    path = _write_net(tmp_path / "bad.caffemodel", [layer])
    with pytest.raises(CaffeFormatError, match=message) as info:
        CaffeFunction(path)
    assert str(info.value).startswith(f"CaffeFunction: {path}: ")


@pytest.mark.parametrize(
    "layer, message",
    [
        ({"name": "fc", "type": "InnerProduct", "inner_product_param": {"axis": 2}},
         r"inner_product_param.axis=2 asks for flattening from another axis"),
        ({"name": "lrn", "type": "LRN", "lrn_param": {"norm_region": 1}},
         r"lrn_param.norm_region=1 asks for within-channel LRN"),
        ({"name": "p", "type": "Pooling", "pooling_param": {"pool": 2}},
         r"pooling_param.pool=2 asks for stochastic pooling"),
        ({"name": "r", "type": "Reshape", "reshape_param": {"axis": 1}},
         r"reshape_param.axis/num_axes=\(1, -1\) asks for reshaping part of the axes"),
    ],
)  # fmt: skip
def test_configurations_dbr_does_not_compute_are_refused(tmp_path, layer, message):
    path = _write_net(tmp_path / "net.caffemodel", [dict(layer, bottom=["x"], top=["y"])])
    with pytest.raises(ValueError, match=message):
        CaffeFunction(path)


def test_a_declared_size_past_the_end_is_refused_by_name(tmp_path):
    with open(os.path.join(FIXTURES, "caffe_layers.caffemodel"), "rb") as f:
        data = f.read()
    path = tmp_path / "cut.caffemodel"
    path.write_bytes(data[: len(data) - 100])
    with pytest.raises(CaffeFormatError) as info:
        CaffeFunction(path)
    message = str(info.value)
    assert message.startswith(f"{path}: NetParameter > layer")
    assert "declares" in message and "only" in message and "remain" in message

    # A layer whose blob's packed data claims 2**40 bytes, in a file of a few bytes.
    blob = _varint(5 << 3 | 2) + _varint(1 << 40) + bytes(13)
    layer = _varint(7 << 3 | 2) + _varint(len(blob)) + blob
    path.write_bytes(_varint(100 << 3 | 2) + _varint(len(layer)) + layer)
    with pytest.raises(
        CaffeFormatError,
        match=r"layer\[0\] > blobs\[0\] > data: declares "
        r"1099511627776 bytes at byte \d+, but only 13 remain in BlobProto",
    ):
        CaffeFunction(path)


def _varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out + bytes([value]))


def test_a_wrong_wire_type_is_refused_by_name(tmp_path):
    path = tmp_path / "bad.caffemodel"
    path.write_bytes(bytes([0x0D, 0, 0, 0, 0]))  # NetParameter.name (1) as a 32-bit value
    with pytest.raises(
        CaffeFormatError,
        match=r"NetParameter > name: expected a string "
        r"\(length-delimited\), got a 32-bit value",
    ):
        CaffeFunction(path)


def test_batch_norm_scale_factor_zero_gives_zero_statistics_as_caffe(tmp_path):
    path = _write_net(tmp_path / "bn.caffemodel", [
        {"name": "bn", "type": "BatchNorm", "bottom": ["x"], "top": ["y"],
         "blobs": [_blob([1.0, 2.0]), _blob([3.0, 4.0]), _blob([0.0])]},
    ])  # fmt: skip
    func = CaffeFunction(path)
    assert not func.bn.avg_mean.any() and not func.bn.avg_var.any()
