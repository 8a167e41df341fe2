"""Exporting a model whose parameters and inputs live on a GPU (CuPy arrays)."""

import numpy
import onnx
import pytest

import dbr.functions as F
import dbr.onnx
from dbr.core import Variable, using_config
from dbr.core.testing import get_test_device

pytestmark = pytest.mark.gpu


def conv_bn_linear(model, x):
    h = F.convolution_2d(x, model.W1, model.b1, stride=1, pad=1)
    h = F.fixed_batch_normalization(h, model.gamma, model.beta, model.mean, model.var)
    h = F.max_pooling_2d(F.relu(h), 2)
    return F.softmax(F.linear(h, model.W2, model.b2))


def test_a_model_on_cupy_exports_the_same_graph_and_values_as_on_numpy(function_model):
    ort = pytest.importorskip("onnxruntime", reason="needs the dbr-onnx[runtime] extra")
    device = get_test_device("@cupy:0")
    rng = numpy.random.default_rng(0)
    params = {
        "W1": rng.normal(size=(4, 3, 3, 3)).astype("f"),
        "b1": rng.normal(size=4).astype("f"),
        "gamma": rng.uniform(0.5, 1.5, size=4).astype("f"),
        "beta": rng.normal(size=4).astype("f"),
        "mean": rng.normal(size=4).astype("f"),
        "var": rng.uniform(0.5, 2, size=4).astype("f"),
        "W2": rng.normal(size=(5, 4 * 4 * 4)).astype("f"),
        "b2": rng.normal(size=5).astype("f"),
    }
    x = rng.normal(size=(2, 3, 8, 8)).astype("f")

    on_cpu = function_model(conv_bn_linear, **params)
    on_gpu = function_model(conv_bn_linear, **params)
    on_gpu.to_device(device)
    x_gpu = device.send(x)
    assert type(on_gpu.W1.array) is type(x_gpu) is not numpy.ndarray

    cpu_proto = dbr.onnx.export(on_cpu, x)
    gpu_proto = dbr.onnx.export(on_gpu, x_gpu)
    onnx.checker.check_model(gpu_proto, full_check=True)
    assert [n.op_type for n in gpu_proto.graph.node] == [n.op_type for n in cpu_proto.graph.node]
    for a, b in zip(gpu_proto.graph.initializer, cpu_proto.graph.initializer):
        assert a.name == b.name
        numpy.testing.assert_array_equal(
            onnx.numpy_helper.to_array(a), onnx.numpy_helper.to_array(b)
        )

    with using_config("train", False):
        expected = on_gpu(Variable(x_gpu, requires_grad=False)).array.get()
    session = ort.InferenceSession(
        gpu_proto.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (actual,) = session.run(None, {gpu_proto.graph.input[0].name: x})
    numpy.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-6)
