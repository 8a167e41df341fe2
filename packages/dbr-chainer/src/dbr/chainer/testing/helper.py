"""``with_requires``, ``without_requires``, ``assert_warns`` and ``patch``."""

import contextlib
import importlib
import unittest
import warnings

__all__ = ["assert_warns", "patch", "with_requires", "without_requires"]


def _satisfied(requirement):
    from importlib.metadata import PackageNotFoundError, version

    from packaging.requirements import Requirement

    req = Requirement(requirement)
    try:
        installed = version(req.name)
    except PackageNotFoundError:
        return False
    return req.specifier.contains(installed, prereleases=True)


def _all_satisfied(requirements):
    return all(_satisfied(r) for r in requirements)


def with_requires(*requirements):
    """Skip a test (or class) unless every requirement (``'numpy>=1.10'``) is installed."""
    message = "requires: {}".format(",".join(requirements))
    return unittest.skipIf(not _all_satisfied(requirements), message)


def without_requires(*requirements):
    """Skip a test (or class) when every requirement (``'scipy'``) is installed."""
    message = "requires: {}".format(",".join(requirements))
    return unittest.skipIf(_all_satisfied(requirements), message)


@contextlib.contextmanager
def assert_warns(expected):
    """Context manager asserting that its body warns with a ``expected`` (a Warning class)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    if any(isinstance(w.message, expected) for w in caught):
        return
    name = getattr(expected, "__name__", str(expected))
    raise AssertionError(f"{name} not triggerred")


def _import_object(name):
    parts = name.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 2):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(".".join(parts[:i]))
    return obj


def patch(target, *args, **kwargs):
    """``unittest.mock.patch`` whose mock wraps the patched object (unless ``wraps`` is given).

    Calls reach the real ``target`` while the mock records them.
    """
    from unittest import mock

    wraps = kwargs.pop("wraps") if "wraps" in kwargs else _import_object(target)
    return mock.patch(target, *args, wraps=wraps, **kwargs)
