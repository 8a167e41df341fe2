"""Repeated test methods: ``repeat``, ``retry`` and ``repeat_with_success_at_least``."""

import functools
import sys
import traceback
import unittest

__all__ = ["repeat", "repeat_with_success_at_least", "retry"]


def _skip_exceptions():
    try:
        import pytest
    except ImportError:  # pragma: no cover - pytest is what runs these tests
        return (unittest.SkipTest,)
    return (unittest.SkipTest, pytest.skip.Exception)


def _fresh(instance):
    if isinstance(instance, unittest.TestCase):
        return type(instance)(instance._testMethodName), "setUp", "tearDown"
    return type(instance)(), "setup_method", "teardown_method"


def _trial(f, instance, args, kwargs):
    """Run ``f`` once on a fresh instance: None, ``('skip', reason)`` or ``('fail', text)``."""
    trial, setup, teardown = _fresh(instance)
    skips = _skip_exceptions()
    method = getattr(f, "__name__", None)
    try:
        hook = getattr(trial, setup, None)
        if hook is not None:
            hook(*([f] if setup == "setup_method" and method else []))
        try:
            f(trial, *args, **kwargs)
        finally:
            hook = getattr(trial, teardown, None)
            if hook is not None:
                hook(*([f] if teardown == "teardown_method" and method else []))
    except skips as e:
        return "skip", str(e.args[0]) if e.args else str(e)
    except Exception:
        return "fail", "".join(traceback.format_exception(*sys.exc_info()))
    return None


def repeat_with_success_at_least(times, min_success):
    """Decorator running a test up to ``times`` times; it passes after ``min_success`` successes.

    Each trial runs on a new instance of the test class, with its own
    ``setUp``/``tearDown``. Trials stop as soon as the outcome is decided. A
    skip in any trial skips the test with its reason; a failure reports the
    counts and the first trial's error message.
    """
    assert times >= min_success

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            assert len(args) > 0
            instance = args[0]
            successes = failures = 0
            first_error = None
            for _ in range(times):
                outcome = _trial(f, instance, args[1:], kwargs)
                if outcome is None:
                    successes += 1
                elif outcome[0] == "skip":
                    raise unittest.SkipTest(outcome[1])
                else:
                    failures += 1
                    if first_error is None:
                        first_error = outcome[1]
                if successes >= min_success:
                    return
                if failures > times - min_success:
                    break
            message = f"\nFail: {failures}, Success: {successes}"
            if first_error is not None:
                message += "\n\nThe first error message:\n" + first_error
            raise AssertionError(message)

        return wrapper

    return decorate


def repeat(times):
    """Decorator requiring a test method to pass ``times`` times in a row."""
    return repeat_with_success_at_least(times, times)


def retry(times):
    """Decorator letting a test method pass if one of up to ``times`` trials passes."""
    return repeat_with_success_at_least(times, 1)
