"""export_testcase's files, and user functions exported as one custom node (replace_func)."""

import os

import numpy
import onnx
import pytest
from onnx import numpy_helper

import dbr.functions as F
import dbr.onnx
from dbr.core import Variable
from dbr.onnx.replace_func import as_funcnode, fake_as_funcnode


def x32(*shape):
    return numpy.random.default_rng(3).uniform(-1, 1, shape).astype(numpy.float32)


def _read(path):
    tensor = onnx.TensorProto()
    tensor.ParseFromString(path.read_bytes())
    return tensor.name, numpy_helper.to_array(tensor)


def test_export_testcase_writes_model_and_io(tmp_path, tools):
    model = tools.FunctionModel(lambda m, x, y: (F.linear(x, m.W), y * 2), W=x32(4, 3))
    x, y = x32(2, 3), x32(5)
    proto = dbr.onnx.export_testcase(model, [x, y], str(tmp_path / "case"))
    assert onnx.load(str(tmp_path / "case" / "model.onnx")) == proto
    data = tmp_path / "case" / "test_data_set_0"
    assert sorted(p.name for p in data.iterdir()) == [
        "input_0.pb", "input_1.pb", "output_0.pb", "output_1.pb",
    ]  # fmt: skip
    name, array = _read(data / "input_1.pb")
    assert name == "Input_1"
    numpy.testing.assert_array_equal(array, y)
    name, array = _read(data / "output_0.pb")
    assert name == "LinearFunction_0"
    numpy.testing.assert_allclose(array, x @ model.W.array.T, rtol=1e-6)
    outputs = tools.run_onnx(proto, {"Input_0": x, "Input_1": y})
    numpy.testing.assert_allclose(outputs[1], _read(data / "output_1.pb")[1])
    assert _read(data / "output_1.pb")[0] == "_ * 2_0"


def test_export_testcase_output_grad(tmp_path, tools):
    model = tools.FunctionModel(lambda m, x: F.linear(x, m.W), W=x32(4, 3))
    x = x32(2, 3)
    dbr.onnx.export_testcase(model, [x], str(tmp_path), output_grad=True)
    name, grad = _read(tmp_path / "test_data_set_0" / "gradient_0.pb")
    assert name == "param_W"
    numpy.testing.assert_allclose(grad, numpy.ones((2, 4), numpy.float32).T @ x, rtol=1e-6)


def test_export_testcase_rejects_filename(tmp_path, tools):
    with pytest.raises(TypeError, match="filename is set by export_testcase"):
        dbr.onnx.export_testcase(
            tools.FunctionModel(lambda m, x: F.relu(x)), [x32(2)], str(tmp_path), filename="x"
        )


def test_as_funcnode_exports_one_custom_node(tools):
    @as_funcnode("ScaledTanh", rename_attributes=[(1, "scale")])
    def scaled_tanh(x, scale, offset=0.5):
        return F.tanh(x) * scale + offset

    seen = {}

    def convert(params):
        seen.update(scale=params.func.scale, offset=params.func.offset)
        return onnx.helper.make_node(
            "ScaledTanh", params.input_names, params.output_names, domain="custom",
            scale=float(params.func.scale), offset=float(params.func.offset),
        )  # fmt: skip

    model = tools.FunctionModel(lambda m, x: F.relu(scaled_tanh(x, 3.0)))
    x = x32(2, 3)
    y = model(Variable(x))
    numpy.testing.assert_allclose(y.array, numpy.maximum(numpy.tanh(x) * 3 + 0.5, 0), rtol=1e-6)
    proto = dbr.onnx.export(
        model, x, external_converters={"ScaledTanh": convert},
        external_opset_imports={"custom": 1},
    )  # fmt: skip
    assert [n.op_type for n in proto.graph.node] == ["ScaledTanh", "Relu"]
    assert seen == {"scale": 3.0, "offset": 0.5}


def test_fake_as_funcnode_is_differentiable_and_keeps_structure():
    def pair(a, b):
        return {"sum": a + b, "prod": a * b}

    wrapped = fake_as_funcnode(pair, "Pair")
    a, b = Variable(x32(3)), Variable(x32(3))
    out = wrapped(a, b)
    assert set(out) == {"sum", "prod"}
    F.sum(out["prod"]).backward()
    numpy.testing.assert_allclose(a.grad, b.array)


def test_funcnode_without_converter_names_it():
    wrapped = fake_as_funcnode(lambda x: x * 2, "Twice")
    with pytest.raises(dbr.onnx.UnsupportedFunctionError, match="no ONNX converter for Twice"):
        dbr.onnx.export(lambda x: wrapped(x), x32(2))


def test_funcnode_needs_a_variable():
    wrapped = fake_as_funcnode(lambda x: x * 2, "Twice")
    with pytest.raises(
        ValueError, match="Twice: the wrapped function was called with no Variable"
    ):
        wrapped(x32(2))


def test_a_failed_export_testcase_leaves_no_directory(tmp_path, tools):
    model = tools.FunctionModel(lambda m, x: x + Variable(numpy.exp(x.array)))
    with pytest.raises(dbr.onnx.DataDependentConstantError):
        dbr.onnx.export_testcase(model, x32(2, 3), str(tmp_path / "case" / "inner"))
    assert not os.listdir(tmp_path)


def test_a_failed_export_testcase_keeps_a_directory_that_was_there(tmp_path, tools):
    (tmp_path / "case").mkdir()
    (tmp_path / "case" / "notes.txt").write_text("mine")
    model = tools.FunctionModel(lambda m, x: x + Variable(numpy.exp(x.array)))
    with pytest.raises(dbr.onnx.DataDependentConstantError):
        dbr.onnx.export_testcase(model, x32(2, 3), str(tmp_path / "case"))
    assert os.listdir(tmp_path / "case") == ["notes.txt"]


def test_export_testcase_files_follow_the_umask(tmp_path, tools):
    model = tools.FunctionModel(lambda m, x: F.linear(x, m.W), W=x32(4, 3))
    old = os.umask(0o022)
    try:
        dbr.onnx.export_testcase(model, x32(2, 3), str(tmp_path / "case"), output_grad=True)
    finally:
        os.umask(old)
    files = [p for p in (tmp_path / "case").rglob("*") if p.is_file()]
    assert len(files) == 4  # model, input, output, gradient
    assert {oct(p.stat().st_mode & 0o777) for p in files} == {oct(0o644)}


def test_export_testcase_failing_to_write_removes_its_folders(tmp_path, tools, monkeypatch):
    import errno
    import sys

    module = sys.modules["dbr.onnx.export_testcase"]  # the package's name is the function
    written = []

    def full_disk(path, name, array):
        if written:
            raise OSError(errno.ENOSPC, "No space left on device", path)
        written.append(path)

    monkeypatch.setattr(module, "_write_tensor", full_disk)
    model = tools.FunctionModel(lambda m, x: F.relu(x))
    with pytest.raises(OSError, match="No space left"):
        dbr.onnx.export_testcase(model, x32(2, 3), str(tmp_path / "case"))
    assert written and not os.listdir(tmp_path)
