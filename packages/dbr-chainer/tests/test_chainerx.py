import numpy
import pytest

import dbr.chainer as chainer
from dbr.chainer import chainerx


def test_chainerx_ndarray_is_a_placeholder_type():
    assert chainerx.is_available() is False
    assert isinstance(chainerx.ndarray, type)
    assert not isinstance(numpy.zeros(2), chainerx.ndarray)
    assert not isinstance(chainer.Variable(numpy.zeros(2)).array, chainerx.ndarray)
    with pytest.raises(RuntimeError, match="chainerx.ndarray: ChainerX is not available"):
        chainerx.ndarray((2,), "float32")
