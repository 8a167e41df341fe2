"""dbr.functions re-exports dbr.core's primitives rather than rewriting them."""

import numpy

import dbr.core.ops as core_ops
import dbr.functions as F
from dbr.core import Variable


def test_core_primitives_are_the_same_objects():
    for name in ("absolute", "add", "identity", "log", "matmul", "sum", "sum_to"):
        assert getattr(F, name) is getattr(core_ops, name)


def test_a_function_accepts_arrays_and_variables():
    x = numpy.array([[1.0, -2.0]], numpy.float32)
    numpy.testing.assert_array_equal(F.absolute(x).array, [[1.0, 2.0]])
    v = Variable(x)
    y = F.sum(F.absolute(v))
    y.backward()
    numpy.testing.assert_array_equal(v.grad, [[1.0, -1.0]])
