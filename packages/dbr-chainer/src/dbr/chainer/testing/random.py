"""``fix_random``: fixed seeds for NumPy's and Python's generators during each test."""

import atexit
import functools
import os
import random as _py_random
import sys
import types

import numpy

from dbr.chainer.testing import _bundle

__all__ = ["fix_random", "generate_seed"]

_depth = 0
_saved = None


def _seed_all(deterministic):
    seeds = (99, 100, 101) if deterministic else (None, None, None)
    _py_random.seed(seeds[0])
    numpy.random.seed(seeds[1])
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        cupy.random.seed(seeds[2])


def _setup_random():
    global _depth, _saved
    if _depth == 0:
        _saved = (_py_random.getstate(), numpy.random.get_state())
        nondeterministic = bool(int(os.environ.get("CHAINER_TEST_RANDOM_NONDETERMINISTIC", "0")))
        _seed_all(not nondeterministic)
    _depth += 1


def _teardown_random():
    global _depth, _saved
    assert _depth > 0, "_setup_random has not been called"
    _depth -= 1
    if _depth == 0:
        _py_random.setstate(_saved[0])
        numpy.random.set_state(_saved[1])
        _saved = None


@atexit.register
def _check_balanced():
    assert _depth == 0, "_setup_random() and _teardown_random() must be called in pairs."


def generate_seed():
    """A random 32-bit seed drawn from NumPy's fixed generator (inside a ``fix_random`` test)."""
    assert _depth > 0, "random is not set up"
    return numpy.random.randint(0xFFFFFFFF)


def _wrap_test_function(impl):
    @functools.wraps(impl)
    def test(self, *args, **kwargs):
        _setup_random()
        try:
            impl(self, *args, **kwargs)
        finally:
            _teardown_random()

    return test


def _wrap_setup_teardown(klass, setup_name, teardown_name):
    setup = getattr(klass, setup_name)
    teardown = getattr(klass, teardown_name)

    @functools.wraps(setup)
    def new_setup(self, *args, **kwargs):
        _setup_random()
        setup(self, *args, **kwargs)

    @functools.wraps(teardown)
    def new_teardown(self, *args, **kwargs):
        try:
            teardown(self, *args, **kwargs)
        finally:
            _teardown_random()

    setattr(klass, setup_name, new_setup)
    setattr(klass, teardown_name, new_teardown)


def fix_random(*, setup_method="setUp", teardown_method="tearDown"):
    """Decorator fixing the seeds of NumPy's and Python's generators for each test.

    On a ``test_*`` function, the seeds are set around the call. On a test
    class (or the classes :func:`~dbr.chainer.testing.parameterize` generated),
    they are set before ``setup_method`` and restored after
    ``teardown_method``; the class is then returned as generated classes, so
    it can be stacked with the other generating decorators. Nested uses only
    act at the outermost level. ``CHAINER_TEST_RANDOM_NONDETERMINISTIC=1``
    seeds from the system instead.
    """

    def decorate(impl):
        if isinstance(impl, types.FunctionType) and impl.__name__.startswith("test_"):
            return _wrap_test_function(impl)
        cases = _bundle.as_cases(impl)
        for klass, _, _ in cases:
            _wrap_setup_teardown(klass, setup_method, teardown_method)
        return _bundle.CaseBundle(cases)

    return decorate
