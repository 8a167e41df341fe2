import sys

import numpy
import pytest

from dbr.datasets.digits import get_digits


@pytest.fixture(scope="module")
def sklearn_digits():
    datasets = pytest.importorskip(
        "sklearn.datasets", reason="get_digits reads scikit-learn's digits (extra 'sklearn')"
    )
    return datasets.load_digits()


def test_split_sizes_values_and_order(sklearn_digits):
    train, test = get_digits()
    assert (len(train), len(test)) == (1437, 360)
    x = numpy.stack([example[0] for example in train[:] + test[:]])
    t = numpy.array([example[1] for example in train[:] + test[:]])
    assert x.shape == (1797, 64) and x.dtype == numpy.float32 and t.dtype == numpy.int32
    assert x.min() == 0.0 and x.max() == 1.0
    numpy.testing.assert_allclose(x, sklearn_digits.data / 16.0, rtol=1e-6)
    numpy.testing.assert_array_equal(t, sklearn_digits.target)


def test_deterministic():
    pytest.importorskip("sklearn", reason="get_digits needs scikit-learn (extra 'sklearn')")
    first, second = get_digits(withlabel=False), get_digits(withlabel=False)
    for a, b in zip(first, second):
        numpy.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    ("ndim", "rgb_format", "shape"),
    [(1, False, (64,)), (2, False, (8, 8)), (3, False, (1, 8, 8)), (3, True, (3, 8, 8))],
)
def test_shapes(sklearn_digits, ndim, rgb_format, shape):
    train, _ = get_digits(ndim=ndim, rgb_format=rgb_format, scale=16.0, dtype=numpy.float64)
    x, _ = train[0]
    assert x.shape == shape and x.dtype == numpy.float64
    numpy.testing.assert_array_equal(x.reshape(-1, 64)[0], sklearn_digits.data[0])


def test_bad_ndim():
    with pytest.raises(ValueError, match="get_digits: ndim must be 1, 2 or 3, got 0"):
        get_digits(ndim=0)


def test_without_sklearn_the_error_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(ImportError, match=r'pip install "dbr-datasets\[sklearn\]"'):
        get_digits()
