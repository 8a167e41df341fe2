import numpy
import pytest

from dbr.core import InvalidType, using_config
from dbr.core.gradient_check import check_backward
from dbr.core.testing import FLOAT_DTYPES, assert_allclose, bad_input_test, make_link, tolerances
from dbr.core.testing.link_checks import check_round_trip, param_names, persistent_names
from dbr.links.activation.swish import Swish


def _reference(x, beta):
    b = beta.reshape((1,) + beta.shape + (1,) * (x.ndim - 1 - beta.ndim)).astype(numpy.float64)
    x64 = x.astype(numpy.float64)
    return x64 / (1 + numpy.exp(-b * x64))


def test_positional_and_keyword_forms():
    link = Swish((3,))
    numpy.testing.assert_array_equal(link.beta.array, numpy.ones(3, numpy.float32))
    link = Swish(beta_shape=(2, 3), beta_init=0.5)
    numpy.testing.assert_array_equal(link.beta.array, numpy.full((2, 3), 0.5, numpy.float32))
    link = Swish((), 2.0)
    assert link.beta.shape == () and float(link.beta.array) == 2.0


def test_names():
    assert param_names(Swish(None)) == ["/beta"]
    assert persistent_names(Swish(None)) == []


def test_lazy_beta_shape():
    link = Swish(None, 1.5)
    assert link.beta.array is None and link.beta.dtype == numpy.float32
    x = numpy.random.randn(2, 3, 4).astype(numpy.float32)
    y = link(x)
    numpy.testing.assert_array_equal(link.beta.array, numpy.full((3, 4), 1.5, numpy.float32))
    assert_allclose(y.array, _reference(x, link.beta.array), **tolerances("float32"))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("shape, x_shape", [((), (4, 3)), ((3,), (4, 3, 2)), (None, (4, 3))])
def test_values(dtype, shape, x_shape):
    link = make_link(Swish, dtype, shape, 0.7)
    x = numpy.random.uniform(-2, 2, x_shape).astype(dtype)
    with using_config("dtype", numpy.dtype(dtype)):  # a lazy beta takes it at the first call
        y = link(x)
    assert y.dtype == dtype and link.beta.dtype == dtype
    assert_allclose(y.array, _reference(x, link.beta.array), **tolerances(dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_gradients(dtype):
    link = make_link(Swish, dtype, (3,), 0.8)
    link.beta.array[...] = numpy.array([0.5, 1.0, -0.7], dtype)
    x = numpy.random.uniform(-1, 1, (4, 3, 2)).astype(dtype)
    gy = numpy.random.randn(4, 3, 2).astype(dtype)
    tol = {"atol": 5e-2, "rtol": 5e-2} if dtype == numpy.float16 else tolerances(dtype, "backward")
    check_backward(link, x, gy, params=(link.beta,), dtype=numpy.float64, **tol)


def test_round_trip_and_copy():
    link = Swish((3,))
    link.beta.array[...] = [0.1, 0.2, 0.3]
    check_round_trip(link, Swish(None))
    shared = link.copy("share")
    assert shared.beta is not link.beta and shared.beta.array is link.beta.array
    copied = link.copy("copy")
    assert copied.beta.array is not link.beta.array
    numpy.testing.assert_array_equal(copied.beta.array, link.beta.array)
    numpy.testing.assert_array_equal(link.copy("init").beta.array, numpy.ones(3, numpy.float32))


test_bad_input = bad_input_test(
    [((numpy.zeros((2, 4), numpy.float32),), InvalidType, ("Swish", "Actual: (4,) != (3,)"))],
    function=Swish((3,)),
)
