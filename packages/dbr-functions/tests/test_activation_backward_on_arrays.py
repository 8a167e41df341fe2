"""Activations whose backward computes on arrays when nothing records it."""

from contextlib import nullcontext

import numpy
import pytest

import dbr.functions as functions
from dbr.core import FunctionHook, Variable


@pytest.mark.parametrize("name", ["tanh", "sigmoid", "relu"])
@pytest.mark.parametrize("shape", [(3, 4), (2048, 600)])
def test_backward_on_arrays_matches_the_recorded_backward(name, shape):
    # Without double backprop or hooks these backwards compute on arrays; the
    # recorded path (enable_double_backprop) must give the same bits, for small
    # arrays and for ones that blockwise splits.
    function = getattr(functions, name)
    rng = numpy.random.default_rng(7)
    x_data = rng.standard_normal(shape).astype(numpy.float32)
    gy = rng.standard_normal(shape).astype(numpy.float32)
    # A function hook makes the backward apply its gradient node without recording it.
    grads = []
    for context, double in ((nullcontext, False), (FunctionHook, False), (nullcontext, True)):
        x = Variable(x_data)
        y = function(x)
        y.grad = gy
        with context():
            y.backward(enable_double_backprop=double)
        assert (x.grad_var.creator is not None) == double
        grads.append(x.grad)
    numpy.testing.assert_array_equal(grads[0], grads[1])
    numpy.testing.assert_array_equal(grads[0], grads[2])
