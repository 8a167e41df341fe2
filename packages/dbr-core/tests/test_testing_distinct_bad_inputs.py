"""dbr.core.testing.distinct_bad_inputs: one bad-input test per distinct table."""

import textwrap

import numpy
import pytest

from dbr.core.testing.distinct_bad_inputs import _canonical, _Incomparable

_CONFTEST = """
from dbr.core.testing.distinct_bad_inputs import pytest_collection_modifyitems  # noqa: F401
"""

_TESTS = """
import numpy

from dbr.core.testing import FunctionTestCase, parameterize, product


def double(x, factor=2):
    if not isinstance(x, numpy.ndarray) or x.dtype.kind != "f":
        raise TypeError(f"double: expected a float array, got {x!r}")
    if factor <= 0:
        raise ValueError(f"double: expected factor > 0, got {factor}")
    return x * factor


class Base(FunctionTestCase):
    function = staticmethod(double)
    skip_forward_test = skip_backward_test = skip_double_backward_test = True


@parameterize(*product({"dtype": [numpy.float16, numpy.float32], "shape": [(2,), (3,)]}))
class TestSameTable(Base):
    def bad_inputs(self):
        return [((numpy.zeros(2, numpy.int32),), TypeError, "expected a float array")]


@parameterize(*product({"dtype": [numpy.float16, numpy.float32], "shape": [(2,), (3,)]}))
class TestTableOfTheDtype(Base):
    def bad_inputs(self):
        return [((numpy.zeros(2, self.dtype), -1), ValueError, "factor > 0")]


@parameterize(*product({"dtype": [numpy.float16, numpy.float32]}))
class TestIncomparableTable(Base):
    def bad_inputs(self):
        # An object(): nothing tells whether two of them call alike.
        return [((numpy.zeros(2, numpy.int32), object()), TypeError, "float array")]


@parameterize(*product({"dtype": [numpy.float16, numpy.float32]}))
class TestRandomTable(Base):
    def bad_inputs(self):
        x = numpy.random.uniform(-1, 1, 2).astype(self.dtype)
        return [((x, 0), ValueError, "factor > 0")]
"""


class _Collected:
    """Records the test ids a pytest session keeps and the ones it deselects."""

    def __init__(self):
        self.kept = []
        self.deselected = []

    def pytest_deselected(self, items):
        self.deselected += [item.nodeid.split("::", 1)[1] for item in items]

    def pytest_collection_finish(self, session):
        self.kept = [item.nodeid.split("::", 1)[1] for item in session.items]


def _run(tmp_path, *args):
    (tmp_path / "conftest.py").write_text(textwrap.dedent(_CONFTEST))
    (tmp_path / "test_distinct_tables_sample.py").write_text(textwrap.dedent(_TESTS))
    collected = _Collected()
    code = pytest.main(
        [str(tmp_path), "-q", "-p", "no:cacheprovider", "--import-mode=importlib", *args],
        plugins=[collected],
    )
    return code, collected


def test_each_distinct_table_runs_once(tmp_path):
    code, collected = _run(tmp_path)
    assert code == 0
    assert collected.kept == [
        "TestSameTable::test_bad_input[dtype=float16,shape=(2,)]",
        "TestTableOfTheDtype::test_bad_input[dtype=float16,shape=(2,)]",
        "TestTableOfTheDtype::test_bad_input[dtype=float32,shape=(2,)]",
        "TestIncomparableTable::test_bad_input[dtype=float16]",
        "TestIncomparableTable::test_bad_input[dtype=float32]",
        "TestRandomTable::test_bad_input[dtype=float16]",
        "TestRandomTable::test_bad_input[dtype=float32]",
    ]
    assert collected.deselected == [
        "TestSameTable::test_bad_input[dtype=float16,shape=(3,)]",
        "TestSameTable::test_bad_input[dtype=float32,shape=(2,)]",
        "TestSameTable::test_bad_input[dtype=float32,shape=(3,)]",
        "TestTableOfTheDtype::test_bad_input[dtype=float16,shape=(3,)]",
        "TestTableOfTheDtype::test_bad_input[dtype=float32,shape=(3,)]",
    ]


def test_the_tests_kept_are_among_those_selected(tmp_path):
    code, collected = _run(tmp_path, "-k", "TestSameTable and not float16")
    assert code == 0
    assert collected.kept == ["TestSameTable::test_bad_input[dtype=float32,shape=(2,)]"]


def test_canonical_tells_apart_what_calls_differently():
    x = numpy.arange(4.0)
    assert _canonical((x, {"axis": 1})) == _canonical((numpy.arange(4.0), {"axis": 1}))
    for a, b in [
        (x, x.astype(numpy.float32)),
        (x[::2], x[::2].copy()),
        (x.reshape(2, 2), x),
        (0.0, -0.0),
        (1, True),
        (1, 1.0),
        ((1,), [1]),
        (int, float),
        (slice(1, 2), slice(1, 3)),
        ({"a": 1}, {"a": 2}),
    ]:
        assert _canonical(a) != _canonical(b), (a, b)
    with pytest.raises(_Incomparable):
        _canonical([object()])
    with pytest.raises(_Incomparable):
        _canonical(numpy.array([None], object))
