"""L.Parameter: a link holding one given array as W, returned (through identity) when called."""

import numpy
import pytest

import dbr.links as L


def test_parameter_link_returns_w_and_trains_it():
    array = numpy.arange(6, dtype=numpy.float32).reshape(2, 3)
    link = L.Parameter(array)
    assert link.W.array is array
    assert [name for name, _ in link.namedparams()] == ["/W"]
    y = link()
    assert y is not link.W and y.creator is not None
    numpy.testing.assert_array_equal(y.array, array)
    y.grad = numpy.full_like(array, 2.0)
    y.backward()
    numpy.testing.assert_array_equal(link.W.grad, numpy.full_like(array, 2.0))


def test_parameter_link_rejects_non_arrays():
    with pytest.raises(TypeError, match="Parameter: expected array to be a NumPy or CuPy array"):
        L.Parameter([1.0, 2.0])
