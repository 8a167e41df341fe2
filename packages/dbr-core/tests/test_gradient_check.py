import numpy
import pytest

from dbr.core import FunctionNode, Parameter, Variable, ops, testing
from dbr.core.gradient_check import (
    NondifferentiableError,
    check_backward,
    check_double_backward,
    numerical_grad,
)

# Every test draws from NumPy's global generator seeded with 1 (conftest's seeded).
NUMPY_SEED = 1
pytestmark = pytest.mark.usefixtures("seeded")


def uniform(shape, dtype=numpy.float64, low=-1, high=1):
    return numpy.asarray(numpy.random.uniform(low, high, shape)).astype(dtype)


class ScaledSquare(FunctionNode):
    """``x ** 2`` whose backward multiplies by ``grad_scale`` (1 is correct)."""

    def __init__(self, grad_scale=1.0):
        self.grad_scale = grad_scale

    def forward(self, inputs):
        self.retain_inputs((0,))
        return (inputs[0] * inputs[0],)

    def backward(self, indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        return (grad_outputs[0] * x * (2.0 * self.grad_scale),)


class WrongSecondInputMul(FunctionNode):
    """``x0 * x1`` whose gradient for x1 wrongly uses x1."""

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        return (inputs[0] * inputs[1],)

    def backward(self, indexes, grad_outputs):
        x0, x1 = self.get_retained_inputs()
        gy = grad_outputs[0]
        return tuple(gy * x1 for _ in indexes)


class StepGradRelu(FunctionNode):
    """``max(x, 0)`` with gradient 1 at 0."""

    def forward(self, inputs):
        self.retain_inputs((0,))
        return (numpy.maximum(inputs[0], 0),)

    def backward(self, indexes, grad_outputs):
        (x,) = self.get_retained_inputs()
        return (grad_outputs[0] * Variable((x.array >= 0).astype(x.dtype)),)


# -- numerical_grad ----------------------------------------------------------------------


def test_numerical_grad_of_a_square_is_twice_the_input():
    x = numpy.array([1.0, -2.0, 0.5])
    (gx,) = numerical_grad(lambda: (x * x,), (x,), (numpy.ones(3),))
    testing.assert_allclose(gx, 2 * x, atol=1e-9, rtol=1e-9)


def test_numerical_grad_weights_each_output_by_its_gradient():
    x = numpy.array([1.0, 2.0])
    y = numpy.array([3.0, -1.0])
    gy0 = numpy.array([0.5, 2.0])
    gy1 = numpy.array([-1.0, 3.0])
    gx, gyy = numerical_grad(lambda: (x * y, x + y), (x, y), (gy0, gy1))
    testing.assert_allclose(gx, gy0 * y + gy1, atol=1e-9, rtol=1e-9)
    testing.assert_allclose(gyy, gy0 * x + gy1, atol=1e-9, rtol=1e-9)


def test_numerical_grad_ignores_outputs_whose_gradient_is_none_and_accepts_scalars():
    x = numpy.array([1.0, 3.0])
    (gx,) = numerical_grad(lambda: (x**2, x**3), (x,), (2.0, None))
    testing.assert_allclose(gx, 4 * x, atol=1e-8, rtol=1e-8)


def test_numerical_grad_restores_the_inputs_and_returns_their_dtype():
    x = numpy.array([[0.1, 0.2], [0.3, 0.4]], numpy.float32)
    before = x.copy()
    (gx,) = numerical_grad(lambda: (x * 3,), (x,), (numpy.ones((2, 2), numpy.float32),))
    assert numpy.array_equal(x, before)
    assert gx.dtype == numpy.float32 and gx.shape == (2, 2)
    testing.assert_allclose(gx, numpy.full((2, 2), 3.0), atol=1e-2, rtol=1e-2)


def test_numerical_grad_accepts_a_function_returning_variables_or_one_array():
    x = numpy.array([1.0, 2.0])
    (gx,) = numerical_grad(lambda: Variable(x) * Variable(x), (x,), (numpy.ones(2),))
    testing.assert_allclose(gx, 2 * x, atol=1e-9, rtol=1e-9)
    (gx,) = numerical_grad(lambda: x * 5, (x,), (numpy.ones(2),))
    testing.assert_allclose(gx, numpy.full(2, 5.0), atol=1e-9, rtol=1e-9)


def test_numerical_grad_of_a_function_returning_its_input_copies_the_outputs():
    x = numpy.array([1.0, 2.0])
    (gx,) = numerical_grad(lambda: (x,), (x,), (numpy.array([3.0, 4.0]),))
    testing.assert_allclose(gx, numpy.array([3.0, 4.0]), atol=1e-9, rtol=1e-9)


def test_numerical_grad_five_point_stencil_is_more_accurate():
    x = numpy.array([1.0])
    ones = (numpy.ones(1),)
    (central,) = numerical_grad(lambda: (x**5,), (x,), ones, eps=1e-2)
    (stencil,) = numerical_grad(
        lambda: (x**5,), (x,), ones, eps=1e-2, detect_nondifferentiable=True
    )
    assert abs(central[0] - 5.0) > 1e-4
    assert abs(stencil[0] - 5.0) < 1e-6


def test_numerical_grad_detects_a_kink():
    x = numpy.array([0.5, 0.0])
    with pytest.raises(NondifferentiableError) as info:
        numerical_grad(lambda: (abs(x),), (x,), (numpy.ones(2),), detect_nondifferentiable=True)
    message = str(info.value)
    assert "index on the input: (1,)" in message
    assert "do not fit a quadratic" in message


def test_numerical_grad_detects_a_step():
    x = numpy.array([0.0])
    with pytest.raises(NondifferentiableError):
        numerical_grad(
            lambda: ((x > 0).astype(numpy.float64),),
            (x,),
            (numpy.ones(1),),
            detect_nondifferentiable=True,
        )


def test_numerical_grad_detects_finiteness_changing_across_the_point():
    x = numpy.array([2.0, 4e-4])

    def f():
        with numpy.errstate(invalid="ignore"):
            return (numpy.log(x),)

    with pytest.raises(NondifferentiableError, match="finite on one side only"):
        numerical_grad(f, (x,), (numpy.ones(2),), detect_nondifferentiable=True)


def test_numerical_grad_accepts_smooth_constant_and_consistently_nan_functions():
    x = numpy.array([-1.0, 0.5])

    def f():
        with numpy.errstate(invalid="ignore"):
            return (numpy.log(x), numpy.ones(2), x**2)

    (gx,) = numerical_grad(
        f, (x,), (None, numpy.ones(2), numpy.ones(2)), detect_nondifferentiable=True
    )
    testing.assert_allclose(gx, 2 * x, atol=1e-9, rtol=1e-9)


def test_numerical_grad_uses_the_given_center_outputs():
    x = numpy.array([0.5])
    with pytest.raises(NondifferentiableError):
        numerical_grad(
            lambda: (x**2,),
            (x,),
            (numpy.ones(1),),
            detect_nondifferentiable=True,
            center_outputs=(numpy.array([10.0]),),
        )
    (gx,) = numerical_grad(
        lambda: (x**2,),
        (x,),
        (numpy.ones(1),),
        detect_nondifferentiable=True,
        center_outputs=(x**2,),
    )
    testing.assert_allclose(gx, 2 * x, atol=1e-9, rtol=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"eps": 0}, ValueError, "expected eps > 0"),
        ({"inputs": numpy.ones(2)}, TypeError, "expected inputs to be a tuple or list"),
        ({"inputs": (numpy.ones(2, numpy.int32),)}, TypeError, "inputs\\[0\\] to have a floating"),
        ({"inputs": ([1.0, 2.0],)}, TypeError, "inputs\\[0\\] to be an array"),
        ({"grad_outputs": (numpy.ones(2), numpy.ones(2))}, ValueError, "returned 1 outputs but 2"),
        ({"grad_outputs": (numpy.ones(3),)}, ValueError, "grad_outputs\\[0\\] of shape \\(2,\\)"),
        ({"grad_outputs": ("a",)}, TypeError, "grad_outputs\\[0\\] to be an array"),
    ],
)
def test_numerical_grad_rejects_bad_arguments(kwargs, error, match):
    x = numpy.ones(2)
    arguments = {"f": lambda: (x * 2,), "inputs": (x,), "grad_outputs": (numpy.ones(2),)}
    arguments.update(kwargs)
    with pytest.raises(error, match=match):
        numerical_grad(**arguments)


# -- check_backward ----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_check_backward_passes_for_correct_operators(dtype):
    x0 = uniform((3, 2), dtype)
    x1 = uniform((2,), dtype, 0.5, 1.5)
    gy = uniform((3, 2), dtype)
    check_backward(
        lambda a, b: a * b / b**2 - a, (x0, x1), gy, dtype=numpy.float64, atol=1e-4, rtol=1e-3
    )


def test_check_backward_accepts_a_single_array_and_a_scale_correct_node():
    x = uniform((4,))
    check_backward(lambda x: ScaledSquare().apply((x,))[0], x, uniform((4,)))


def test_check_backward_fails_for_a_wrong_gradient_and_names_the_input():
    x0, x1, gy = uniform((3, 2)), uniform((3, 2)), uniform((3, 2))
    with pytest.raises(AssertionError) as info:
        check_backward(lambda a, b: WrongSecondInputMul().apply((a, b))[0], (x0, x1), gy)
    message = str(info.value)
    assert message.startswith("check_backward failed")
    assert "numerical:" in message and "backprop:" in message
    lines = message.splitlines()
    assert any(line.strip().startswith("input 0 ") and line.endswith("-> ok") for line in lines)
    assert any(line.strip().startswith("input 1 ") and "MISMATCH" in line for line in lines)


def test_check_backward_detects_a_one_percent_error_in_float64():
    x = uniform((5,), low=0.5, high=1.5)
    with pytest.raises(AssertionError, match="MISMATCH"):
        check_backward(lambda x: ScaledSquare(1.01).apply((x,))[0], x, numpy.ones(5))


def test_check_backward_with_no_y_grad_seeds_a_scalar_output_with_one():
    x = uniform((3,))
    check_backward(lambda x: ops.sum(x * x), x, None)
    with pytest.raises(AssertionError):
        check_backward(lambda x: ops.sum(ScaledSquare(2.0).apply((x,))[0]), x, None)


def test_check_backward_with_no_y_grad_rejects_a_non_scalar_output():
    with pytest.raises(
        ValueError, match=r"single output of shape \(\) \(a loss\); got outputs of shapes \(3,\)"
    ):
        check_backward(lambda x: x * x, uniform((3,)), None)


def test_check_backward_rejects_y_grad_of_the_wrong_shape_dtype_or_count():
    x = uniform((3,))
    with pytest.raises(ValueError, match=r"y_grad\[0\] of shape \(3,\) and dtype float64"):
        check_backward(lambda x: x * x, x, uniform((4,)))
    with pytest.raises(ValueError, match=r"y_grad\[0\] of shape \(3,\) and dtype float64"):
        check_backward(lambda x: x * x, x, uniform((3,), numpy.float32))
    with pytest.raises(ValueError, match=r"one y_grad per output of the function \(1\), got 2"):
        check_backward(lambda x: x * x, x, (uniform((3,)), uniform((3,))))


def test_check_backward_checks_parameters_and_restores_them():
    w = Parameter(uniform((3,)), name="w")
    before = w.array
    x = uniform((3,))
    check_backward(lambda x: x * w * w, x, uniform((3,)), params=w)
    assert w.array is before
    assert w.grad is None or numpy.isnan(w.grad).all()


def test_check_backward_names_a_parameter_with_a_wrong_gradient():
    w = Parameter(uniform((3,)), name="w")
    x = uniform((3,))
    with pytest.raises(AssertionError) as info:
        check_backward(
            lambda x: WrongSecondInputMul().apply((x, w))[0], x, uniform((3,)), params=(w,)
        )
    assert any(
        "param 0 ('w')" in line and "MISMATCH" in line for line in str(info.value).splitlines()
    )


def test_check_backward_rejects_params_that_are_not_parameters():
    with pytest.raises(TypeError, match=r"params\[0\] to be a Parameter"):
        check_backward(lambda x: x, uniform((2,)), uniform((2,)), params=(Variable(uniform(2)),))


def test_check_backward_treats_integer_inputs_as_no_grads():
    x = uniform((4, 3))
    index = numpy.array([0, 2, 2])
    check_backward(lambda x, i: ops.get_item(x, i.array), (x, index), uniform((3, 3)))


def test_check_backward_no_grads_flags():
    x, gy = uniform((3,)), uniform((3,))
    with pytest.raises(ValueError, match=r"one flag per input \(2\), got 1"):
        check_backward(lambda a, b: a * b, (x, x), gy, no_grads=[False])
    with pytest.raises(ValueError, match="input 1 is array\\(shape=\\(3,\\), dtype=int64\\)"):
        check_backward(lambda a, i: a, (x, numpy.arange(3)), gy, no_grads=[False, False])
    with pytest.raises(RuntimeError, match="input 1 is marked in no_grads"):
        check_backward(lambda a, b: a * b, (x, x), gy, no_grads=[False, True])
    constant = uniform((3,))
    check_backward(lambda a, b: a * Variable(b.array), (x, constant), gy, no_grads=[False, True])


def test_check_backward_casts_to_dtype_for_the_numerical_gradient():
    x = uniform((3, 2), numpy.float16, 0.5, 1.0)
    gy = uniform((3, 2), numpy.float16)
    with pytest.raises(AssertionError):
        check_backward(lambda x: x * x, x, gy, atol=1e-3, rtol=1e-3)
    check_backward(lambda x: x * x, x, gy, atol=1e-3, rtol=1e-3, dtype=numpy.float64)
    with pytest.raises(ValueError, match="floating dtype or None, got int32"):
        check_backward(lambda x: x * x, x, gy, dtype=numpy.int32)


def test_check_backward_detects_a_non_differentiable_point_when_asked():
    x = numpy.array([0.5, 0.0, -0.5])
    relu = lambda x: StepGradRelu().apply((x,))[0]  # noqa: E731
    with pytest.raises(AssertionError):
        check_backward(relu, x, numpy.ones(3))
    with pytest.raises(NondifferentiableError):
        check_backward(relu, x, numpy.ones(3), detect_nondifferentiable=True)
    check_backward(
        relu, numpy.array([0.5, 0.25, -0.5]), numpy.ones(3), detect_nondifferentiable=True
    )


def test_check_backward_reports_a_gradient_of_the_wrong_shape_or_dtype():
    class WrongDtype(FunctionNode):
        def forward(self, inputs):
            return (inputs[0] * 2,)

        def backward(self, indexes, grad_outputs):
            return (Variable(grad_outputs[0].array.astype(numpy.float64) * 2),)

    x = uniform((3,), numpy.float32)
    with pytest.raises(AssertionError, match="gradient of shape \\(3,\\) and dtype float64"):
        check_backward(lambda x: WrongDtype().apply((x,))[0], x, uniform((3,), numpy.float32))


def test_check_backward_handles_identity_outputs_and_none_outputs():
    x, gy = uniform((3,)), uniform((3,))
    check_backward(lambda x: x, x, gy)
    check_backward(lambda x: (x * 2, None), x, (gy, None))
    check_backward(lambda x: (x * 2, x * x), x, (gy, None))
    check_backward(lambda a, b: (a * b, a + b), (x, uniform((3,))), (gy, uniform((3,))))


def test_check_backward_with_empty_inputs_passes():
    check_backward(lambda x: x * 2, numpy.zeros((0, 3)), numpy.zeros((0, 3)))


def test_check_backward_rejects_a_function_not_returning_variables():
    with pytest.raises(TypeError, match="expected the function to return Variables"):
        check_backward(lambda x: x.array * 2, uniform((2,)), uniform((2,)))


def test_check_backward_rejects_non_array_inputs():
    with pytest.raises(TypeError, match=r"x_data\[0\] to be an array or None, got list"):
        check_backward(lambda x: x, [[1.0, 2.0]], uniform((2,)))


# -- check_double_backward ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", [numpy.float32, numpy.float64])
def test_check_double_backward_passes_for_a_cube(dtype):
    x = uniform((3, 2), dtype)
    check_double_backward(
        lambda x: x**3, x, uniform((3, 2), dtype), uniform((3, 2), dtype), dtype=numpy.float64
    )


def test_check_double_backward_with_no_y_grad():
    x = uniform((3,))
    check_double_backward(lambda x: ops.sum(x**3), x, None, uniform((3,)))


def test_check_double_backward_of_linear_and_two_input_functions():
    x0, x1 = uniform((3,)), uniform((3,))
    check_double_backward(lambda x: x * 2, x0, uniform((3,)), uniform((3,)))
    check_double_backward(
        lambda a, b: a + b, (x0, x1), uniform((3,)), (uniform((3,)), uniform((3,)))
    )
    check_double_backward(
        lambda a, b: a * b, (x0, x1), uniform((3,)), (uniform((3,)), uniform((3,)))
    )


def test_check_double_backward_fails_for_a_backward_outside_the_graph(detached_square):
    x = uniform((3,), low=0.5, high=1.0)
    with pytest.raises(AssertionError) as info:
        check_double_backward(
            lambda x: detached_square().apply((x,))[0], x, uniform((3,)), uniform((3,))
        )
    message = str(info.value)
    assert message.startswith("check_double_backward failed")
    lines = message.splitlines()
    assert any(line.strip().startswith("x_data[0]") and "MISMATCH" in line for line in lines)
    assert any(line.strip().startswith("y_grad[0]") and "MISMATCH" in line for line in lines)
    assert any(line.strip().startswith("x_grad_grad[0] =") for line in lines)


def test_check_double_backward_checks_parameters(detached_square):
    w = Parameter(uniform((3,)))
    x = uniform((3,))
    check_double_backward(
        lambda x: x * x * w * w,
        x,
        uniform((3,)),
        uniform((3,)),
        params=w,
        params_grad_grad=uniform((3,)),
    )
    with pytest.raises(AssertionError, match="param 0"):
        check_double_backward(
            lambda x: x * detached_square().apply((w,))[0],
            x,
            uniform((3,)),
            uniform((3,)),
            params=w,
            params_grad_grad=uniform((3,)),
        )


def test_check_double_backward_with_an_integer_input():
    x = uniform((4, 3))
    index = numpy.array([0, 2, 2])
    check_double_backward(
        lambda x, i: ops.get_item(x, i.array) ** 2,
        (x, index),
        uniform((3, 3)),
        uniform((4, 3)),
        no_grads=[False, True],
    )


def test_check_double_backward_rejects_wrong_counts_of_second_order_gradients():
    x = uniform((3,))
    with pytest.raises(ValueError, match=r"one x_grad_grad per floating input \(1\), got 2"):
        check_double_backward(lambda x: x**3, x, uniform((3,)), (uniform((3,)), uniform((3,))))
    with pytest.raises(ValueError, match=r"one params_grad_grad per parameter \(1\), got 0"):
        check_double_backward(
            lambda x: x**3, x, uniform((3,)), uniform((3,)), params=Parameter(uniform((3,)))
        )


def test_check_double_backward_rejects_y_grad_of_the_wrong_dtype():
    x = uniform((3,))
    with pytest.raises(ValueError, match=r"y_grad\[0\] of shape \(3,\) and dtype float64"):
        check_double_backward(lambda x: x**3, x, uniform((3,), numpy.float32), uniform((3,)))


def test_check_double_backward_reports_a_first_order_gradient_of_the_wrong_dtype():
    class WrongDtype(FunctionNode):
        def forward(self, inputs):
            return (inputs[0] * 2,)

        def backward(self, indexes, grad_outputs):
            return (ops.cast(grad_outputs[0], numpy.float64) * 2,)

    x = uniform((3,), numpy.float32)
    with pytest.raises(
        AssertionError,
        match=r"gave x_data\[0\] \(shape \(3,\), dtype float32\) "
        r"a first-order gradient of shape \(3,\) and "
        r"dtype float64",
    ):
        check_double_backward(
            lambda x: WrongDtype().apply((x,))[0],
            x,
            uniform((3,), numpy.float32),
            uniform((3,), numpy.float32),
        )
