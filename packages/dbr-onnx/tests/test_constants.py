"""Values made outside the graph: sign, floor, ceil, fix exported; data-dependent ones refused."""

import os

import numpy
import onnx
import pytest

import dbr.functions as F
import dbr.onnx
from dbr.core import Chain, Parameter, Variable
from dbr.functions import sign as sign_bound_at_import


def x32(*shape, seed=3):
    return numpy.random.default_rng(seed).uniform(-3, 3, shape).astype(numpy.float32)


def test_sign_floor_ceil_fix_export_as_onnx_ops(tools):
    def forward(m, x):
        return F.sign(x) * x + F.floor(x) + F.ceil(x * 2) + F.fix(x * 3)

    proto = tools.check_export(tools.FunctionModel(forward), [x32(3, 4)])
    ops = {n.op_type for n in proto.graph.node}
    assert {"Sign", "Floor", "Ceil"} <= ops
    folded = [i.name for i in proto.graph.initializer if i.name.startswith("/constant")]
    assert not folded  # nothing of the example input was folded


@pytest.mark.parametrize("dtype", [numpy.float16, numpy.float64, numpy.int32])
def test_sign_floor_ceil_fix_other_dtypes(tools, dtype):
    def forward(m, x):
        return F.sign(x) + F.floor(x) + F.ceil(x) + F.fix(x)

    x = (x32(2, 5) * 2).astype(dtype)
    tools.check_export(tools.FunctionModel(forward), [x])


def test_the_functions_are_restored_after_export(tools):
    originals = (F.sign, F.floor, F.ceil, F.fix)
    dbr.onnx.export(tools.FunctionModel(lambda m, x: F.sign(x) + x), x32(2))
    assert (F.sign, F.floor, F.ceil, F.fix) == originals
    y = F.floor(Variable(x32(2)))
    assert y.creator is None and not y.requires_grad


def test_a_value_computed_on_the_array_is_refused_before_writing(tools, tmp_path):
    def forward(m, x):
        return x + Variable(numpy.exp(x.array))

    path = tmp_path / "model.onnx"
    with pytest.raises(dbr.onnx.DataDependentConstantError) as info:
        dbr.onnx.export(tools.FunctionModel(forward), x32(2, 3), filename=str(path))
    message = str(info.value)
    assert "input 1 of _ + _" in message or "input 1 of Add" in message
    assert "shape (2, 3) and dtype float32" in message
    assert "as_funcnode" in message and "external_converters" in message
    assert not os.listdir(tmp_path)


def test_a_function_bound_before_export_is_refused(tools):
    def forward(m, x):
        return F.reshape(F.relu(x), (6,)) * F.reshape(sign_bound_at_import(x), (6,))

    with pytest.raises(dbr.onnx.DataDependentConstantError) as info:
        dbr.onnx.export(tools.FunctionModel(forward), x32(2, 3))
    assert "Reshape" in str(info.value)  # the function that consumed it


def test_a_value_made_from_integer_inputs_is_refused(tools):
    def forward(m, x, ids):
        return x * Variable(ids.array.astype(numpy.float32))

    ids = numpy.array([0, 3, 1, 2], numpy.int32)
    with pytest.raises(dbr.onnx.DataDependentConstantError):
        dbr.onnx.export(tools.FunctionModel(forward), [x32(4), ids])


def test_constants_made_from_shapes_stay_folded(tools):
    def forward(m, x):
        n = x.shape[1]
        mask = Variable(numpy.tril(numpy.ones((n, n), numpy.float32)))
        return F.matmul(x, mask) + Variable(numpy.arange(n, dtype=numpy.float32))

    proto = tools.check_export(tools.FunctionModel(forward), [x32(2, 4)])
    assert len(proto.graph.initializer) == 2


class Stateful(Chain):
    """Keeps its last output, as a recurrent link keeps its state."""

    def __init__(self):
        super().__init__()
        self.h = None

    def forward(self, x):
        h = self.h if self.h is not None else Variable(numpy.zeros(x.shape, x.dtype))
        self.h = F.tanh(x + h)
        return self.h


def test_a_stateful_model_is_left_as_one_forward_leaves_it(tools):
    model = Stateful()
    x = x32(2, 3)
    proto = dbr.onnx.export(model, x)
    assert len(proto.graph.initializer) == 1  # the zero state, folded
    numpy.testing.assert_allclose(model.h.array, numpy.tanh(x))
    (y,) = tools.run_onnx(proto, {"Input_0": x})
    numpy.testing.assert_allclose(y, numpy.tanh(x), rtol=1e-6)


class Counting(Chain):
    """Updates a persistent array in place on every forward, as batch statistics are."""

    def __init__(self):
        super().__init__()
        self.add_persistent("calls", numpy.zeros((), numpy.float32))

    def forward(self, x):
        self.calls += 1
        return x + Variable(numpy.full(x.shape, 2, x.dtype))


def test_persistent_values_are_updated_by_one_forward_only():
    model = Counting()
    dbr.onnx.export(model, x32(2), train=True)
    assert float(model.calls) == 1


def test_a_model_rejecting_the_perturbed_inputs_warns(tools):
    def forward(m, x):
        if not numpy.all(x.array == 0.5):
            raise ValueError("out of range")
        return x + Variable(numpy.exp(x.array))

    with pytest.warns(UserWarning, match="could not be checked"):
        proto = dbr.onnx.export(tools.FunctionModel(forward), numpy.full(8, 0.5, numpy.float32))
    assert isinstance(proto, onnx.ModelProto)


def test_a_model_rejecting_shifted_inputs_is_checked_on_scaled_ones(tools):
    def forward(m, x):
        if float(abs(x.array).max()) > 1:
            raise ValueError("out of range")
        return x - float(x.array.mean())

    with pytest.raises(dbr.onnx.DataDependentConstantError, match="attribute value of"):
        dbr.onnx.export(tools.FunctionModel(forward), numpy.full(8, 0.5, numpy.float32))


class Scaled(Chain):
    """A linear layer whose output is shifted or scaled by a number read off its array."""

    def __init__(self, after):
        super().__init__()
        self.after = after
        with self.init_scope():
            self.W = Parameter(numpy.random.default_rng(0).normal(size=(4, 3)).astype("f"))

    def forward(self, x):
        return self.after(F.linear(x, self.W))


class BatchNorm(Chain):
    """Batch normalization with running statistics held as persistents, as a link holds them."""

    def __init__(self, size):
        super().__init__()
        with self.init_scope():
            self.gamma = Parameter(numpy.ones(size, "f"))
            self.beta = Parameter(numpy.zeros(size, "f"))
        self.add_persistent("avg_mean", numpy.zeros(size, "f"))
        self.add_persistent("avg_var", numpy.ones(size, "f"))

    def forward(self, x):
        return F.batch_normalization(
            x, self.gamma, self.beta, running_mean=self.avg_mean, running_var=self.avg_var
        )


@pytest.mark.parametrize(
    "after, where",
    [
        (lambda h: h - float(h.array.mean()), "value"),
        (lambda h: h / h.array.std(), "value"),
        (lambda h: float(h.array.max()) - h, "value"),
        (lambda h: h * float(abs(h.array).sum()), "value"),
        (lambda h: F.clip(h, -5.0, float(abs(h.array).max()) + 1), "x_max"),
        (lambda h: F.leaky_relu(h, slope=float(abs(h.array).mean())), "slope"),
    ],
    ids=["sub", "div", "rsub", "mul", "clip", "leaky_relu"],
)
def test_a_number_read_off_the_array_is_refused_before_writing(tmp_path, after, where):
    model = Scaled(after)
    path = tmp_path / "model.onnx"
    with pytest.raises(dbr.onnx.DataDependentConstantError) as info:
        dbr.onnx.export(model, x32(2, 3), filename=str(path))
    message = str(info.value)
    assert f"the attribute {where} of" in message
    assert "a second forward on perturbed inputs changed it from" in message
    assert "Nothing was written" in message
    assert not os.listdir(tmp_path)


def test_a_number_fixed_in_the_model_still_exports(tools):
    def forward(m, x):
        scale = float(x.shape[1])  # from a shape: the same for every input
        return F.clip(x / scale - 0.5, -1.0, 1.0) * 3

    tools.check_export(tools.FunctionModel(forward), [x32(2, 4)])


def test_a_number_from_a_parameter_still_exports(tools):
    def forward(m, x):
        return x * float(m.w.array.sum())  # the same for every input

    model = tools.FunctionModel(forward, w=numpy.array([0.5, 2.0], numpy.float32))
    tools.check_export(model, [x32(2, 2)])


def test_batch_statistics_a_training_forward_updates_are_not_taken_for_inputs():
    model = BatchNorm(3)
    before = model.avg_mean.copy()
    proto = dbr.onnx.export(model, x32(4, 3), train=True)
    assert isinstance(proto, onnx.ModelProto)
    assert not numpy.array_equal(model.avg_mean, before)  # one forward's update, kept


def test_an_index_array_computed_from_the_input_is_refused(tools):
    def forward(m, x):
        return x[:, numpy.argsort(x.array[0])]

    with pytest.raises(dbr.onnx.DataDependentConstantError, match="the attribute slices of"):
        dbr.onnx.export(tools.FunctionModel(forward), x32(2, 5))


def test_an_index_array_from_a_shape_still_exports(tools):
    def forward(m, x):
        return x[:, numpy.arange(x.shape[1])[::-1].copy()]

    tools.check_export(tools.FunctionModel(forward), [x32(2, 5)])
