"""dbr.links.caffe.export, both ways against Chainer 7.8.1 (fixtures/make_caffe_chainer.py).

A network of every function Chainer's exporter writes: exported by Chainer,
it loads in dbr's CaffeFunction with Chainer's outputs; exported by dbr (the
same bytes as the fixture), Chainer's CaffeFunction computed Chainer's outputs.
"""

import os

import caffe_nets
import numpy
import pytest

import dbr.functions as F
import dbr.links as L
from dbr.core import Chain, using_config
from dbr.links.caffe import CaffeFunction, export

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures")
EXPORT = numpy.load(os.path.join(FIXTURES, "caffe_export.npz"))


def _net():
    net = caffe_nets.export_net(L, F, Chain)
    for name, param in net.namedparams():
        param.array[...] = EXPORT[f"param{name}"]
    net.bn.avg_mean[...] = EXPORT["param/bn/avg_mean"]
    net.bn.avg_var[...] = EXPORT["param/bn/avg_var"]
    return net


def test_the_network_computes_what_chainers_does():
    with using_config("train", False):
        y = _net()(EXPORT["x"])
    numpy.testing.assert_allclose(y.array, EXPORT["chainer/y"], rtol=1e-6, atol=1e-7)


def test_chainers_export_loads_with_chainers_outputs():
    func = CaffeFunction(os.path.join(FIXTURES, "caffe_chainer_export.caffemodel"))
    with using_config("train", False):
        (y,) = func(inputs={"data": EXPORT["x"]}, outputs=[str(EXPORT["chainer/blob"])])
    numpy.testing.assert_allclose(y.array, EXPORT["chainer/y"], rtol=1e-6, atol=1e-7)
    numpy.testing.assert_allclose(y.array, EXPORT["chainer/caffe_y"], rtol=1e-6, atol=1e-7)


def test_dbrs_export_is_the_file_chainer_read_with_the_networks_outputs(tmp_path):
    export(_net(), [EXPORT["x"]], tmp_path, graph_name="export")
    written = (tmp_path / "chainer_model.caffemodel").read_bytes()
    with open(os.path.join(FIXTURES, "caffe_dbr_export.caffemodel"), "rb") as f:
        assert written == f.read()
    numpy.testing.assert_allclose(EXPORT["dbr/caffe_y"], EXPORT["chainer/y"], rtol=1e-6, atol=1e-7)
    func = CaffeFunction(tmp_path / "chainer_model.caffemodel")
    assert func.layers[-1][2][0] == str(EXPORT["dbr/blob"])
    with using_config("train", False):
        (y,) = func(inputs={"data": EXPORT["x"]}, outputs=[str(EXPORT["dbr/blob"])])
    numpy.testing.assert_allclose(y.array, EXPORT["chainer/y"], rtol=1e-6, atol=1e-7)


def test_prototxt_defines_the_same_layers(tmp_path):
    export(_net(), [EXPORT["x"]], tmp_path, export_params=False, graph_name="net")
    assert not (tmp_path / "chainer_model.caffemodel").exists()
    text = (tmp_path / "chainer_model.prototxt").read_text()
    assert text.startswith(
        'name: "net"\nlayer {\n  name: "data"\n  type: "Input"\n  top: "data"\n'
    )
    assert (
        "input_param {\n    shape {\n      dim: 2\n      dim: 3\n      dim: 6\n      dim: 6\n"
        in text
    )
    func = CaffeFunction(os.path.join(FIXTURES, "caffe_dbr_export.caffemodel"))
    for name, _, _ in func.layers:
        assert f'  name: "{name}"\n' in text
    assert text.count("layer {") == len(func.layers) + 1
    assert '  type: "BatchNorm"\n' in text and "    pool: MAX\n" in text
    assert "    negative_slope: 0.2\n" in text


def test_groups_dilation_and_tanh_round_trip(tmp_path):
    class Grouped(Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.conv = L.Convolution2D(4, 6, 3, pad=2, dilate=2, groups=2)
                self.deconv = L.Deconvolution2D(6, 4, 2, stride=2, groups=2)

        def forward(self, x):
            return F.tanh(self.deconv(self.conv(x)))

    model = Grouped()
    x = numpy.random.default_rng(1).standard_normal((2, 4, 5, 5)).astype(numpy.float32)
    export(model, [x], tmp_path)
    func = CaffeFunction(tmp_path / "chainer_model.caffemodel")
    (y,) = func(inputs={"data": x}, outputs=[func.layers[-1][2][0]])
    numpy.testing.assert_allclose(y.array, model(x).array, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "forward, message",
    [
        (lambda x: F.exp(x), r"cannot write exp \(exp-0-1, inputs \['data'\]\) as a Caffe "
                             r"layer: no Caffe layer is written for it"),
        (lambda x: F.max_pooling_2d(x, 2, 2, cover_all=False),
         r"cover_all=False gives \(2, 2\) windows where Caffe's pooling gives more"),
        (lambda x: x + numpy.ones_like(x.array),
         r"its input 1 is neither the model's input nor a layer's output"),
        (lambda x: F.convolution_2d(x, numpy.ones((1, 3, 2, 2), numpy.float32), cover_all=True),
         r"cover_all=True, which Caffe's convolution does not have"),
    ],
)  # fmt: skip
def test_what_caffe_cannot_express_is_refused_by_name(tmp_path, forward, message):
    x = numpy.ones((1, 3, 5, 5), numpy.float32)
    with pytest.raises(ValueError, match=message):
        export(forward, [x], tmp_path)
    assert os.listdir(tmp_path) == []


def test_bad_arguments_are_refused(tmp_path):
    x = numpy.ones((1, 3), numpy.float32)
    with pytest.raises(
        ValueError,
        match=r"expected args to be a list holding one input .* "
        r"got list of length 2",
    ):
        export(L.Linear(3, 2), [x, x], tmp_path)
    with pytest.raises(FileNotFoundError, match="expected directory to be an existing folder"):
        export(L.Linear(3, 2), [x], tmp_path / "missing")
    with pytest.raises(TypeError, match="expected the model to return a Variable"):
        export(lambda v: {"y": v}, [x], tmp_path)
