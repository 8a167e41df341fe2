"""export's machinery: naming, initializers, folding, pruning, opsets, errors, files."""

import io
import os

import numpy
import onnx
import pytest

import dbr.functions as F
import dbr.onnx
from dbr.core import Chain, FunctionNode, Parameter


class Dense(Chain):
    def __init__(self, n_in, n_out):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(numpy.random.default_rng(1).normal(size=(n_out, n_in)).astype("f"))
            self.b = Parameter(numpy.zeros(n_out, "f"))

    def forward(self, x):
        return F.linear(x, self.W, self.b)


class MLP(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = Dense(3, 4)
            self.l2 = Dense(4, 2)
            self.unused = Dense(2, 2)

    def forward(self, x):
        return self.l2(F.relu(self.l1(x)))


class Wrapper(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.predictor = MLP()

    def forward(self, x):
        return self.predictor(x)


def x32(*shape):
    return numpy.random.default_rng(2).uniform(-1, 1, shape).astype(numpy.float32)


def test_parameters_are_initializers_named_by_link_path(tools):
    proto = tools.check_export(Wrapper(), [x32(2, 3)], opsets=[13])
    names = sorted(i.name for i in proto.graph.initializer)
    assert names == [
        "param_predictor_l1_W", "param_predictor_l1_b", "param_predictor_l2_W",
        "param_predictor_l2_b",
    ]  # fmt: skip
    assert [i.name for i in proto.graph.input] == ["Input_0"]
    # An output is named after the function that computed it (LinearFunction_1: the second).
    assert [o.name for o in proto.graph.output] == ["LinearFunction_1"]


def test_before_ir_4_initializers_are_also_graph_inputs():
    proto = dbr.onnx.export(MLP(), x32(2, 3), opset_version=7)
    assert proto.ir_version == 3
    inputs = [i.name for i in proto.graph.input]
    assert inputs[0] == "Input_0"
    assert {i.name for i in proto.graph.initializer} <= set(inputs)


def test_an_input_returned_as_is_is_named_output(tools):
    model = tools.FunctionModel(lambda m, x: (x, F.relu(x)))
    proto = dbr.onnx.export(model, x32(2))
    assert [o.name for o in proto.graph.output] == ["Output_0", "ReLU_0"]
    assert proto.graph.node[-1].op_type == "Identity"


class FixedNorm(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.gamma = Parameter(numpy.ones(3, "f"))
            self.beta = Parameter(numpy.zeros(3, "f"))
        self.add_persistent("avg_mean", numpy.array([0.5, -1.0, 2.0], "f"))
        self.add_persistent("avg_var", numpy.array([1.0, 2.0, 0.5], "f"))

    def forward(self, x):
        return F.fixed_batch_normalization(x, self.gamma, self.beta, self.avg_mean, self.avg_var)


class WithNorm(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.bn = FixedNorm()

    def forward(self, x):
        return self.bn(x)


def test_link_persistents_read_by_a_function_are_named_initializers(tools):
    model = WithNorm()
    proto = tools.check_export(model, [x32(4, 3)])
    names = {i.name for i in proto.graph.initializer}
    assert names == {"param_bn_gamma", "param_bn_beta", "param_bn_avg_mean", "param_bn_avg_var"}


def test_export_params_false_makes_parameters_graph_inputs():
    proto = dbr.onnx.export(MLP(), x32(2, 3), export_params=False)
    assert not proto.graph.initializer
    assert [i.name for i in proto.graph.input] == [
        "Input_0", "param_l1_W", "param_l1_b", "param_l2_W", "param_l2_b",
    ]  # fmt: skip


def test_input_and_output_names(tools):
    model = tools.FunctionModel(lambda m, a, b: (a + b, a * b))
    proto = tools.check_export(
        model, [x32(2), x32(2)], input_names=["a", "b"], output_names=["s", "p"]
    )
    assert [i.name for i in proto.graph.input] == ["a", "b"]
    assert [o.name for o in proto.graph.output] == ["s", "p"]


def test_dict_args_and_outputs_with_named_inout(tools):
    model = tools.FunctionModel(lambda m, a, b: {"sum": a + b})
    proto, inputs, outputs = dbr.onnx.export(
        model, {"a": x32(2), "b": x32(2)}, input_names={"a": "A", "b": "B"},
        output_names={"sum": "S"}, return_named_inout=True,
    )  # fmt: skip
    assert list(inputs) == ["A", "B"]
    assert list(outputs) == ["S"]
    assert [o.name for o in proto.graph.output] == ["S"]


def test_wrong_number_of_names_is_rejected():
    with pytest.raises(ValueError, match="input_names must hold 1 name"):
        dbr.onnx.export(MLP(), x32(2, 3), input_names=["a", "b"])


def test_constants_are_folded(tools):
    const = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)

    def forward(m, x):
        folded = F.exp(F.reshape(F.relu(const), (2, 3))) * 2  # depends on no input
        return x + folded

    proto = tools.check_export(tools.FunctionModel(forward), [x32(2, 3)])
    assert [n.op_type for n in proto.graph.node] == ["Add"]
    (init,) = proto.graph.initializer
    numpy.testing.assert_allclose(onnx.numpy_helper.to_array(init), numpy.exp(const) * 2)


def test_unused_outputs_and_branches_are_pruned(tools):
    def forward(m, x):
        F.tanh(x)  # computed, never used
        return F.relu(x)

    proto = tools.check_export(tools.FunctionModel(forward), [x32(2, 3)])
    assert [n.op_type for n in proto.graph.node] == ["Relu"]


def test_a_forward_branch_exports_the_branch_taken(tools):
    def forward(m, x):
        return F.relu(x) if float(x.array.sum()) > 0 else F.tanh(x)

    proto = dbr.onnx.export(tools.FunctionModel(forward), numpy.ones((2,), numpy.float32))
    assert [n.op_type for n in proto.graph.node] == ["Relu"]


def test_dynamic_batch_from_input_shapes(tools):
    model = Wrapper()
    proto = dbr.onnx.export(model, x32(2, 3), input_shapes=[("batch", 3)])
    dim = proto.graph.input[0].type.tensor_type.shape.dim[0]
    assert dim.dim_param == "batch"
    x = x32(5, 3)
    (y,) = tools.run_onnx(proto, {"Input_0": x})
    numpy.testing.assert_allclose(y, model(x).array, rtol=1e-5)


def test_input_shapes_of_wrong_rank_is_rejected():
    with pytest.raises(ValueError, match="must have 2 dimensions"):
        dbr.onnx.export(MLP(), x32(2, 3), input_shapes=[(None,)])


@pytest.mark.parametrize("opset", [6, 10_000])
def test_opset_out_of_range_is_rejected(opset):
    with pytest.raises(ValueError, match="opset_version must be between 7"):
        dbr.onnx.export(MLP(), x32(2, 3), opset_version=opset)


def test_default_opset_is_newest_supported():
    proto = dbr.onnx.export(MLP(), x32(2, 3))
    assert proto.opset_import[0].version == dbr.onnx.maximum_opset_version()
    assert dbr.onnx.maximum_opset_version() <= onnx.defs.onnx_opset_version()


@pytest.mark.parametrize(
    "opset",
    range(dbr.onnx.MINIMUM_OPSET_VERSION, dbr.onnx.maximum_opset_version() + 1),
)
def test_every_opset_from_7_works(tools, opset):
    def forward(m, x):
        h = F.max_pooling_2d(F.relu(F.convolution_2d(x, m.W, pad=1)), 2)
        h = F.squeeze(F.reshape(h, (2, 1, 8)), 1)
        h = h - F.sum(h, axis=1, keepdims=True) + F.mean(h)
        return F.log_softmax(F.concat(F.split_axis(h, 2, axis=1)[::-1], axis=1))

    model = tools.FunctionModel(forward, W=x32(2, 1, 3, 3))
    tools.check_export(model, [x32(2, 1, 4, 4)], opsets=[opset])


class NoConverter(FunctionNode):
    def forward(self, inputs):
        return (inputs[0] * 2,)


def test_unknown_function_raises_before_writing(tools, tmp_path):
    model = tools.FunctionModel(lambda m, x: F.relu(NoConverter().apply((x,))[0]))
    path = tmp_path / "model.onnx"
    with pytest.raises(dbr.onnx.UnsupportedFunctionError) as info:
        dbr.onnx.export(model, x32(2), filename=str(path))
    message = str(info.value)
    assert "NoConverter" in message
    assert "test_export.NoConverter" in message
    assert "external_converters={'NoConverter': converter}" in message
    assert not path.exists()
    assert not os.listdir(tmp_path)


def test_external_converter_replaces_a_function(tools):
    def double(params):
        two = params.context.add_const(numpy.float32(2), "two")
        return onnx.helper.make_node("Mul", [params.input_names[0], two], params.output_names)

    model = tools.FunctionModel(lambda m, x: F.relu(NoConverter().apply((x,))[0]))
    proto = tools.check_export(model, [x32(3)], external_converters={"NoConverter": double})
    # The converter's constant is a Constant node named after the function, before its nodes.
    assert [n.op_type for n in proto.graph.node] == ["Constant", "Mul", "Relu"]
    assert proto.graph.node[0].output[0] == "NoConverter_0_const_two"
    assert not proto.graph.initializer


def test_external_converter_overrides_a_builtin_one_with_a_custom_domain(tools):
    def custom(params):
        return onnx.helper.make_node(
            "CustomRelu", params.input_names, params.output_names, domain="dbr.custom"
        )

    proto = dbr.onnx.export(
        tools.FunctionModel(lambda m, x: F.relu(x)), x32(3),
        external_converters={"ReLU": custom}, external_opset_imports={"dbr.custom": 1},
    )  # fmt: skip
    assert [(n.op_type, n.domain) for n in proto.graph.node] == [("CustomRelu", "dbr.custom")]
    assert {(o.domain, o.version) for o in proto.opset_import} >= {("dbr.custom", 1)}


def test_filename_and_save_text(tmp_path):
    path = tmp_path / "m.onnx"
    proto = dbr.onnx.export(MLP(), x32(2, 3), filename=str(path), save_text=True)
    assert onnx.load(str(path)) == proto
    assert "Gemm" in (tmp_path / "m.onnx.txt").read_text()
    buffer = io.BytesIO()
    dbr.onnx.export(MLP(), x32(2, 3), filename=buffer)
    assert onnx.load_from_string(buffer.getvalue()) == proto


def test_files_are_written_with_the_mode_the_umask_leaves(tmp_path):
    old = os.umask(0o022)
    try:
        dbr.onnx.export(MLP(), x32(2, 3), filename=str(tmp_path / "m.onnx"), save_text=True)
        os.umask(0o077)
        dbr.onnx.export(MLP(), x32(2, 3), filename=str(tmp_path / "private.onnx"))
    finally:
        os.umask(old)
    assert oct(os.stat(tmp_path / "m.onnx").st_mode & 0o777) == oct(0o644)
    assert oct(os.stat(tmp_path / "m.onnx.txt").st_mode & 0o777) == oct(0o644)
    assert oct(os.stat(tmp_path / "private.onnx").st_mode & 0o777) == oct(0o600)


@pytest.mark.parametrize("where", ["missing", "a_file"])
def test_an_unusable_directory_is_named_as_asked(tmp_path, where):
    (tmp_path / "a_file").write_text("not a directory")
    path = tmp_path / where / "model.onnx"
    with pytest.raises(OSError) as info:
        dbr.onnx.export(MLP(), x32(2, 3), filename=str(path))
    message = str(info.value)
    assert info.value.filename == str(path)
    assert str(path) in message and ".tmp" not in message
    assert str(tmp_path / where) in message
    assert "export" in message
    assert sorted(os.listdir(tmp_path)) == ["a_file"]


def test_train_mode_keeps_dropout(tools):
    proto = dbr.onnx.export(tools.FunctionModel(lambda m, x: F.dropout(x)), x32(2, 3), train=True)
    assert [n.op_type for n in proto.graph.node if n.op_type != "Constant"] == ["Dropout"]
    proto = dbr.onnx.export(
        tools.FunctionModel(lambda m, x: F.dropout(x, 0.25)), x32(2, 3), train=True,
        opset_version=11,
    )  # fmt: skip
    (node,) = proto.graph.node
    assert node.op_type == "Dropout"
    assert [(a.name, a.f) for a in node.attribute] == [("ratio", 0.25)]
    proto = dbr.onnx.export(tools.FunctionModel(lambda m, x: F.relu(F.dropout(x))), x32(2, 3))
    assert [n.op_type for n in proto.graph.node] == ["Relu"]


def test_bad_args_are_rejected():
    with pytest.raises(TypeError, match=r"args\[0\] must be an array or a Variable"):
        dbr.onnx.export(MLP(), ["x"])


def test_an_array_output_is_a_type_and_runtime_error(tools):
    model = tools.FunctionModel(lambda m, x: x.array)
    with pytest.raises(TypeError, match=r"output 0 must be a Variable, got ndarray") as info:
        dbr.onnx.export(model, numpy.ones((2, 3), numpy.float32))
    assert isinstance(info.value, RuntimeError)


@pytest.mark.parametrize(
    ("forward", "bad"),
    [
        (lambda m, x: (x, x.array), "output 1 must be a Variable, got ndarray"),
        (lambda m, x: ([x],), "output 0 must be a Variable, got list"),
        (lambda m, x: {"y": x, "z": 2}, "output 'z' must be a Variable, got int"),
    ],
)
def test_a_non_variable_in_the_output_collection_is_a_type_and_value_error(tools, forward, bad):
    model = tools.FunctionModel(forward)
    with pytest.raises(TypeError, match=bad) as info:
        dbr.onnx.export(model, numpy.ones((2, 3), numpy.float32))
    assert isinstance(info.value, ValueError)


class WithUninitialized(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = Dense(3, 2)
            self.lazy = Parameter()  # never initialized: no shape to export

    def forward(self, x):
        return self.l1(x)


def test_an_uninitialized_parameter_warns_and_is_left_out():
    with pytest.warns(UserWarning, match=r"parameter '/lazy' of the model is not initialized"):
        proto = dbr.onnx.export(WithUninitialized(), x32(2, 3))
    assert sorted(t.name for t in proto.graph.initializer) == ["param_l1_W", "param_l1_b"]


def _custom_op_without_domain(params):
    return onnx.helper.make_node("NotAnOnnxOp", params.input_names, params.output_names)


def test_a_custom_op_without_a_domain_fails_the_checker_with_a_warning(tools):
    model = tools.FunctionModel(lambda m, x: NoConverter().apply((x,))[0])
    with pytest.warns(UserWarning, match="fails onnx's checker, ignored because external_conv"):
        proto = dbr.onnx.export(
            model, x32(3), external_converters={"NoConverter": _custom_op_without_domain}
        )
    assert [n.op_type for n in proto.graph.node] == ["NotAnOnnxOp"]


def test_a_checker_failure_raises_when_external_opset_imports_are_given(tools):
    model = tools.FunctionModel(lambda m, x: NoConverter().apply((x,))[0])
    with pytest.raises(onnx.checker.ValidationError):
        dbr.onnx.export(
            model, x32(3), external_converters={"NoConverter": _custom_op_without_domain},
            external_opset_imports={"dbr.custom": 1},
        )  # fmt: skip
