"""Links pickle after use, and the unpickled link computes what the original does."""

import pickle

import numpy
import pytest

import dbr.functions as F
import dbr.links as L
from dbr.core.testing import assert_allclose

_RNG = numpy.random.default_rng(0)


def _x(*shape):
    return _RNG.uniform(-1, 1, shape).astype(numpy.float32)


CASES = {
    "Convolution2D": (lambda: L.Convolution2D(3, 2, 3, stride=2, pad=1), (_x(2, 3, 5, 5),)),
    "Convolution2D lazy": (lambda: L.Convolution2D(None, 2, 3), (_x(2, 3, 5, 5),)),
    "ConvolutionND": (lambda: L.ConvolutionND(3, 2, 4, 2, groups=2), (_x(1, 2, 4, 4, 4),)),
    "DilatedConvolution2D": (lambda: L.DilatedConvolution2D(3, 2, 3, dilate=2), (_x(1, 3, 6, 6),)),
    "Linear": (lambda: L.Linear(4, 3), (_x(2, 4),)),
    "LSTM": (lambda: L.LSTM(4, 3), (_x(2, 4),)),
}


def _copy(array):
    return None if array is None else array.copy()


def _loss(link, inputs):
    return F.sum(link(*inputs))


@pytest.mark.parametrize("name", sorted(CASES))
def test_pickle_after_forward_and_backward(name):
    make, inputs = CASES[name]
    link = make()
    link.cleargrads()
    _loss(link, inputs).backward()
    grads = {path: _copy(param.grad) for path, param in link.namedparams()}
    restored = pickle.loads(pickle.dumps(link, pickle.HIGHEST_PROTOCOL))
    assert type(restored) is type(link)
    for (path, param), (_, other) in zip(link.namedparams(), restored.namedparams()):
        numpy.testing.assert_array_equal(other.array, param.array, path)
        if grads[path] is None:
            assert other.grad is None, path
        else:
            numpy.testing.assert_array_equal(other.grad, grads[path], path)
        assert other.creator is None
    # Both go on from the same state (LSTM: the same c and h) to the same results;
    # the pickle carries no graph, so the original's state is cut from its graph too.
    for state in (getattr(link, "c", None), getattr(link, "h", None)):
        if state is not None:
            state.unchain_backward()
    link.cleargrads()
    restored.cleargrads()
    expected = _loss(link, inputs)
    actual = _loss(restored, inputs)
    assert_allclose(actual.array, expected.array, atol=0, rtol=0)
    expected.backward()
    actual.backward()
    for (path, param), (_, other) in zip(link.namedparams(), restored.namedparams()):
        assert (other.grad is None) == (param.grad is None), path
        if param.grad is not None:
            assert_allclose(other.grad, param.grad, atol=0, rtol=0)
