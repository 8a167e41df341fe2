"""One bad-input test per distinct table of a parameterized FunctionTestCase.

A :class:`~dbr.core.testing.FunctionTestCase` under
:func:`~dbr.core.testing.parameterize` gets ``test_bad_input`` once per
parameter set, though most ``bad_inputs()`` tables do not depend on the
parameters. :func:`pytest_collection_modifyitems` builds each table at
collection and keeps, per class, the first test of every distinct table; the
others are reported as deselected. A table that depends on the parameters
still runs once per parameter set, and one that cannot be compared (holding
objects other than arrays, numbers, strings, containers, types and
functions, or one that raises) always runs. Register the hook by importing it
into a ``conftest.py``::

    from dbr.core.testing.distinct_bad_inputs import pytest_collection_modifyitems  # noqa: F401
"""

import types
import zlib

import numpy

from dbr.core.testing._pytest import require_pytest
from dbr.core.testing.function_test import FunctionTestCase
from dbr.core.testing.parameterized import FIXTURE_PREFIX

pytest = require_pytest()

__all__ = ["pytest_collection_modifyitems", "split_repeated_tables"]

_BY_VALUE = (type(None), bool, int, str, bytes, type(Ellipsis))
_BY_IDENTITY = (type, types.FunctionType, types.BuiltinFunctionType)


class _Incomparable(Exception):
    """A table holds something whose equality cannot be told from its value."""


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Deselect the bad-input tests that repeat a table their class already checks.

    It runs after the other hooks (``-k``, ``-m``), so the tests kept are
    among those selected.
    """
    kept, repeated = split_repeated_tables(items)
    if repeated:
        config.hook.pytest_deselected(items=repeated)
        items[:] = kept


def split_repeated_tables(items):
    """Split collected ``items`` into those to run and the bad-input tests repeating a table.

    Returns:
        tuple of list: ``(kept, repeated)``, each in collection order.
    """
    seen = set()
    kept, repeated = [], []
    for item in items:
        key = _table_key(item)
        if key is None or key not in seen:
            seen.add(key)
            kept.append(item)
        else:
            repeated.append(item)
    return kept, repeated


def _table_key(item):
    """``(class, table)`` for a parameterized FunctionTestCase bad-input test, else None."""
    if getattr(item, "function", None) is not FunctionTestCase._test_bad_input:
        return None
    params = getattr(getattr(item, "callspec", None), "params", {})
    attributes = {}
    for name, values in params.items():
        if not name.startswith(FIXTURE_PREFIX) or attributes.keys() & values.keys():
            return None
        attributes.update(values)
    state = numpy.random.get_state()
    # Seeded per test, so that a table drawing random numbers is never merged.
    numpy.random.seed(zlib.crc32(item.nodeid.encode()))
    try:
        case = item.cls()
        for name, value in attributes.items():
            setattr(case, name, value)
        return item.cls, _canonical(list(case.bad_inputs()))
    except Exception:  # noqa: BLE001 - the test itself reports it when it runs
        return None
    finally:
        numpy.random.set_state(state)


def _canonical(value):
    """A hashable value equal for two tables exactly when they make the same calls."""
    if isinstance(value, _BY_VALUE):
        return type(value), value
    if isinstance(value, (float, complex)):
        return type(value), repr(value)
    if isinstance(value, (tuple, list)):
        return type(value), tuple(_canonical(v) for v in value)
    if isinstance(value, dict):
        return dict, tuple((_canonical(k), _canonical(v)) for k, v in value.items())
    if isinstance(value, slice):
        return slice, _canonical((value.start, value.stop, value.step))
    if isinstance(value, numpy.dtype):
        return numpy.dtype, value.str
    if (type(value) is numpy.ndarray or isinstance(value, numpy.generic)) and (
        value.dtype.kind != "O"
    ):
        array = numpy.asarray(value)
        return type(value), array.dtype.str, array.shape, array.strides, array.tobytes()
    if isinstance(value, _BY_IDENTITY):
        return "is", value
    raise _Incomparable(type(value).__name__)
