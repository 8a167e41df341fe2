"""onnx_helper, the testing helpers, RetainInputHook and the forms of opsets before 13."""

import numpy
import onnx
import pytest

import dbr.functions as F
import dbr.onnx
from dbr.core import Chain, Variable
from dbr.onnx import onnx_helper
from dbr.onnx.export import RetainInputHook
from dbr.onnx.testing import input_generator
from dbr.onnx.testing.get_test_data_set import gen_test_data_set


def test_input_generator_ramps():
    numpy.testing.assert_array_equal(
        input_generator.increasing(2, 3), [[-1.5, -1.0, -0.5], [0.0, 0.5, 1.0]]
    )
    assert input_generator.increasing(2, 2, dtype=numpy.int32).tolist() == [[-2, -1], [0, 1]]
    assert not (input_generator.nonzero_increasing(3, 4) == 0).any()
    assert (input_generator.positive_increasing(3, 4) > 0).all()
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        input_generator.nonzero_increasing(2, dtype=numpy.int32)


def test_gen_test_data_set_and_check_model_expect(tools, tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    from dbr.onnx.testing.test_onnxruntime import check_model_expect

    monkeypatch.chdir(tmp_path)
    model = tools.FunctionModel(lambda m, x: F.tanh(x) * 2)
    path = gen_test_data_set(model, [input_generator.increasing(2, 3)], "case", 9)
    assert path == "out/opset9/case"
    check_model_expect(path, input_names=["Input_0"])
    with pytest.raises(AssertionError, match="graph's inputs"):
        check_model_expect(path, input_names=["x"])
    onnx_helper.write_tensor_pb(
        str(tmp_path / path / "test_data_set_0" / "output_0.pb"), "", numpy.zeros((2, 3), "f")
    )
    with pytest.raises(AssertionError):
        check_model_expect(path)


def test_onnx_helper_names_nodes_after_the_function(tools):
    def converter(params):
        gb = onnx_helper.GraphBuilder()
        shape = gb.op("Shape", params.input_names)
        value = onnx.helper.make_tensor("value", onnx.TensorProto.FLOAT, [1], [3.0])
        gb.op_output_named("ConstantOfShape", [shape], params.output_names, value=value)
        return gb.nodes()

    model = tools.FunctionModel(lambda m, x: F.relu(x))
    x = numpy.ones((2, 3), "f")
    proto = dbr.onnx.export(model, x, external_converters={"ReLU": converter})
    assert [(n.op_type, n.name) for n in proto.graph.node] == [
        ("Shape", "ReLU_0_tmp_0"), ("ConstantOfShape", "ReLU_0_tmp_1"),
    ]  # fmt: skip
    assert proto.graph.node[0].output[0] == "ReLU_0_tmp_0"
    with pytest.raises(RuntimeError, match="no function is being converted"):
        onnx_helper.make_node("Relu", ["x"], ["y"])
    with pytest.raises(TypeError, match="list of names"), onnx_helper.converting("F_0"):
        onnx_helper.GraphBuilder().op("Relu", "x")
    assert onnx_helper.cleanse_param_name("/l1/W") == "param_l1_W"
    assert onnx_helper.is_support_non_standard_domain()


class _Stack(Chain):
    def forward(self, x):
        return F.stack([Variable(x) if not isinstance(x, Variable) else x,
                        Variable(numpy.array(7, "f"))])  # fmt: skip


def test_retain_input_hook_keeps_what_the_link_was_not_given():
    x = Variable(numpy.array(3, "f"))
    with RetainInputHook() as hook:
        _Stack()(x)
    (kept,) = hook.retain_inputs  # the Variable(7) made inside; x was given to the link
    assert float(kept.array) == 7
    with RetainInputHook() as hook:
        _Stack()(numpy.array(3, "f"))
    assert len(hook.retain_inputs) == 2


def test_retain_input_hook_revives_a_node_whose_variable_is_gone():
    x = Variable(numpy.ones(2, "f"))
    with RetainInputHook() as hook:
        y = F.relu(x * 2)  # the product is only referenced by relu's node
    (product,) = [v for v in hook.retain_inputs if v is not x]
    assert y.creator.inputs[0].get_variable_or_none() is product
    numpy.testing.assert_array_equal(product.array, [2, 2])


@pytest.mark.parametrize(
    ("op_type", "attribute", "forward"),
    [
        ("Squeeze", "axes", lambda m, x: F.squeeze(x, 1)),
        ("Unsqueeze", "axes", lambda m, x: F.expand_dims(x, 0)),
        ("Split", "split", lambda m, x: F.split_axis(x, [1], 2)),
        ("ReduceSum", "axes", lambda m, x: F.sum(x, axis=2)),
        ("Slice", "starts", lambda m, x: x[:, :, 1:]),
        ("Clip", "min", lambda m, x: F.clip(x, -0.5, 0.5)),
    ],
)
def test_older_opsets_take_attributes(tools, op_type, attribute, forward):
    model = tools.FunctionModel(forward)
    x = input_generator.increasing(2, 1, 3)
    proto = tools.check_export(model, [x], opsets=[9])
    (node,) = [n for n in proto.graph.node if n.op_type == op_type]
    assert attribute in [a.name for a in node.attribute]
    assert len(node.input) == 1
    assert [n.op_type for n in proto.graph.node if n.op_type == "Constant"] == (
        ["Constant"] if op_type == "Slice" else []  # the Reshape after the Slice
    )


def test_softmax_on_an_inner_axis_before_opset_13(tools):
    model = tools.FunctionModel(lambda m, x: F.softmax(x, axis=1))
    proto = tools.check_export(model, [input_generator.increasing(2, 3, 4)], opsets=[7, 12])
    assert [n.op_type for n in proto.graph.node] == ["Transpose", "Softmax", "Transpose"]


def test_an_operator_newer_than_the_opset_is_refused():
    model_fn = Chain()
    model_fn.forward = lambda x: F.sinh(x)
    with pytest.raises(ValueError, match="ONNX has Sinh from opset 9 on"):
        dbr.onnx.export(model_fn, numpy.ones(2, "f"), opset_version=8)
