"""The inputs that Bias and Scale refuse: their checks are the same, one table serves both."""

import numpy
import pytest

from dbr.core import InvalidType, using_config
from dbr.links.connection.bias import Bias
from dbr.links.connection.scale import Scale

# name, and the link holding a parameter of the given shape (none without one)
_LINKS = [
    pytest.param("Bias", lambda shape=None: Bias(shape=shape), id="Bias"),
    pytest.param("Scale", lambda shape=None: Scale(W_shape=shape), id="Scale"),
]


@pytest.mark.parametrize("name, make", _LINKS)
def test_wrong_shape(name, make):
    match = rf"{name}(?s:.*)x.shape\[1:2\] == y.shape(?s:.*)\(4,\) != \(3,\)"
    with pytest.raises(InvalidType, match=match):
        make(3)(numpy.ones((2, 4), numpy.float32))


@pytest.mark.parametrize("name, make", _LINKS)
def test_wrong_dtype(name, make):
    with pytest.raises(
        InvalidType, match=rf"{name}(?s:.*)y.dtype == x.dtype(?s:.*)float32 != float64"
    ):
        make(3)(numpy.ones((2, 3), numpy.float64))


@pytest.mark.parametrize("name, make", _LINKS)
@pytest.mark.parametrize(
    "shape, inputs",
    [
        (None, (numpy.ones((2, 3), numpy.float32),)),
        (3, (numpy.ones((2, 3), numpy.float32),) * 2),
        (3, ()),
    ],
)
@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("error", [ValueError, AssertionError])
def test_wrong_number_of_inputs(name, make, shape, inputs, debug, error):
    link = make(shape)
    with (
        using_config("debug", debug),
        pytest.raises(error, match=rf"{name}.forward: expected [12] input\(s\) \(.*\), got [012]"),
    ):
        link(*inputs)
