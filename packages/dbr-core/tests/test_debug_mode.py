import threading

import numpy
import pytest

from dbr.core import FunctionNode, Variable, ops
from dbr.core.configuration import (
    DebugMode,
    config,
    is_debug,
    set_debug,
    using_config,
)


# NumPy's own RuntimeWarnings (log(0), 1/0) would be errors under -W error and hide
# the framework's check; the tests silence them to see what dbr does.
def quiet():
    return numpy.errstate(divide="ignore", invalid="ignore")


def f32(*values):
    return numpy.array(values, dtype=numpy.float32)


def call_line(function):
    """The line of the single statement in ``function``'s body (its only call site)."""
    return function.__code__.co_firstlineno + 1


def where(function):
    return f'File "{__file__}", line {call_line(function)}, in {function.__name__}'


def log_of(x):
    return ops.log(x)


def divide(x, y):
    return x / y


def square_root(x):
    return x**0.5


def apply_bad_grad(x):
    return BadGrad().apply((x,))[0]


class BadGrad(FunctionNode):
    """Identity forward whose backward returns an Inf array directly (no other function)."""

    def forward(self, inputs):
        return (inputs[0].copy(),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        return (Variable(gy.xp.full_like(gy.array, numpy.inf)),)


# -- forward ----------------------------------------------------------------------


def test_nan_in_forward_names_the_function_and_the_call_site():
    x = Variable(f32(1.0, -1.0))
    with using_config("debug", True), quiet(), pytest.raises(RuntimeError) as info:
        log_of(x)
    message = str(info.value)
    assert message.startswith("NaN is detected on forward computation of log (Log) (output 0)")
    assert "log was called at:" in message
    assert where(log_of) in message
    assert "return ops.log(x)" in message


def test_inf_in_forward_names_div_and_the_call_site():
    x = Variable(f32(1.0, 2.0))
    zeros = Variable(f32(0.0, 0.0))
    with using_config("debug", True), quiet(), pytest.raises(RuntimeError) as info:
        divide(x, zeros)
    message = str(info.value)
    assert message.startswith("Inf is detected on forward computation of _ / _ (Div) (output 0)")
    assert where(divide) in message


def test_log_of_zero_is_reported_as_inf():
    with using_config("debug", True), quiet(), pytest.raises(RuntimeError, match="^Inf .* log"):
        log_of(Variable(f32(0.0)))


def test_the_call_site_skips_framework_frames():
    with using_config("debug", True), quiet(), pytest.raises(RuntimeError) as info:
        log_of(Variable(f32(-1.0)))
    site = str(info.value).partition("was called at:\n")[2]
    assert "/dbr/core/" not in site.replace("\\", "/")
    assert site.rstrip().endswith("return ops.log(x)")


def test_debug_mode_records_the_stack_of_each_application():
    x = Variable(f32(1.0))
    with using_config("debug", True):
        y = log_of(x)
    frames = y.creator_node.stack
    assert any(
        f.filename == __file__ and f.lineno == call_line(log_of) and f.name == "log_of"
        for f in frames
    )
    assert log_of(x).creator_node.stack is None


def test_finite_results_and_integer_arrays_pass_in_debug_mode():
    with using_config("debug", True):
        y = log_of(Variable(f32(1.0, numpy.e)))
        total = ops.sum(Variable(numpy.array([1, 2, 3], numpy.int32)))
    numpy.testing.assert_allclose(y.array, [0.0, 1.0], rtol=1e-6)
    assert total.array == 6


def test_without_debug_mode_nothing_is_raised():
    assert config.debug is False
    with quiet():
        y = log_of(Variable(f32(-1.0)))
        z = divide(Variable(f32(1.0)), Variable(f32(0.0)))
    assert numpy.isnan(y.array[0])
    assert numpy.isinf(z.array[0])


# -- backward ---------------------------------------------------------------------


def test_inf_in_a_gradient_names_the_backward_function():
    x = Variable(f32(0.0, 4.0))
    y = square_root(x)
    y.grad = f32(1.0, 1.0)
    with using_config("debug", True), quiet(), pytest.raises(RuntimeError) as info:
        y.backward()
    message = str(info.value)
    # The gradient of x ** 0.5 is computed by PowVarConstGrad: 0.5 * 0 ** -0.5 is Inf.
    assert message.startswith("Inf is detected on forward computation of PowVarConstGrad")
    assert f'File "{__file__}"' in message
    assert "y.backward()" in message
    assert x.grad is None


def test_a_non_finite_gradient_returned_by_backward_is_caught_after_it():
    x = Variable(f32(1.0, 2.0))
    with using_config("debug", True):
        y = apply_bad_grad(x)
    y.grad = f32(1.0, 1.0)
    with using_config("debug", True), pytest.raises(RuntimeError) as info:
        y.backward()
    message = str(info.value)
    assert message.startswith("Inf is detected on backward computation of BadGrad (output 0)")
    assert where(apply_bad_grad) in message


def test_backward_outside_debug_mode_propagates_inf_silently():
    x = Variable(f32(0.0, 4.0))
    y = square_root(x)
    y.grad = f32(1.0, 1.0)
    with quiet():
        y.backward()
    assert numpy.isinf(x.grad[0])
    assert x.grad[1] == pytest.approx(0.25)


def test_call_site_is_unknown_when_the_forward_ran_outside_debug_mode():
    x = Variable(f32(1.0))
    y = apply_bad_grad(x)
    y.grad = f32(1.0)
    with using_config("debug", True), pytest.raises(RuntimeError) as info:
        y.backward()
    assert "unknown" in str(info.value)


# -- switches -----------------------------------------------------------------------


def test_set_debug_is_debug_and_debug_mode_context():
    assert is_debug() is False
    with DebugMode(True):
        assert is_debug() is True and config.debug is True
        with DebugMode(False):
            assert is_debug() is False
        assert is_debug() is True
    assert is_debug() is False
    set_debug(True)
    try:
        assert is_debug() is True
        with quiet(), pytest.raises(RuntimeError, match="log"):
            log_of(Variable(f32(-1.0)))
    finally:
        set_debug(False)
    assert is_debug() is False


def test_debug_mode_is_per_thread():
    seen = []

    def work():
        seen.append(is_debug())
        with quiet():
            seen.append(float(log_of(Variable(f32(-1.0))).array[0]))

    with using_config("debug", True):
        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
    assert seen[0] is False
    assert numpy.isnan(seen[1])
