"""Helpers for testing code built on dbr.

- :func:`assert_allclose`: compare arrays or Variables (NumPy or CuPy) with a
  message naming the largest errors and where they are;
  :func:`tolerances`: default tolerances per dtype and order of derivative;
  :data:`FLOAT_DTYPES`: the floating dtypes a test runs over;
  :func:`uniform`: a random input array of a shape and dtype.
- :func:`product`, :func:`product_dict`, :func:`parameterize`: run every
  test of a pytest class once per set of attributes.
- :class:`FunctionTestCase`: declare a function's inputs, forward and
  expected output; forward, backward and double-backward tests follow.
- :class:`LinkTestCase`: declare how to build a link, its inputs and the
  reference forward; forward and backward (inputs and parameters) tests follow.
- :mod:`~dbr.core.testing.link_checks`: a link's parameter and persistent
  names, save-and-load round trip, copy modes, gradients (redrawn clear of
  kinks) and recurrent steps, as plain functions (LinkTestCase uses them);
  :func:`make_link`: a link built with its parameters in a given dtype.
- :func:`bad_input_test`, :func:`check_bad_input`: a table of calls that
  must be refused, each with its error and message fragments.
- ``dbr.core.testing.distinct_bad_inputs``: a ``conftest.py`` hook running
  each distinct ``bad_inputs()`` table of a parameterized FunctionTestCase once.
- :data:`DEVICES`, :func:`get_test_device`: run a test on ``'@numpy'`` and,
  marked ``gpu``, on ``'@cupy:0'`` (skipped with the reason without a GPU).

``parameterize``, ``FunctionTestCase``, ``LinkTestCase``, the bad-input tables and
the device helpers need pytest, which is imported only when they are first used, so
``assert_allclose`` works without it.
"""

from dbr.core.testing.array import FLOAT_DTYPES, assert_allclose, tolerances, uniform
from dbr.core.testing.parameterized import parameterize, product, product_dict

__all__ = [
    "DEVICES",
    "FLOAT_DTYPES",
    "FunctionTestCase",
    "LinkTestCase",
    "assert_allclose",
    "bad_input_test",
    "check_bad_input",
    "get_test_device",
    "make_link",
    "parameterize",
    "product",
    "product_dict",
    "tolerances",
    "uniform",
]


def __getattr__(name):
    if name == "FunctionTestCase":
        from dbr.core.testing.function_test import FunctionTestCase

        return FunctionTestCase
    if name == "LinkTestCase":
        from dbr.core.testing.link_test import LinkTestCase

        return LinkTestCase
    if name == "make_link":
        from dbr.core.testing.link_checks import make_link

        return make_link
    if name in ("bad_input_test", "check_bad_input"):
        from dbr.core.testing import bad_input

        return getattr(bad_input, name)
    if name in ("DEVICES", "get_test_device"):
        from dbr.core.testing import devices

        return getattr(devices, name)
    raise AttributeError(f"module 'dbr.core.testing' has no attribute {name!r}")
