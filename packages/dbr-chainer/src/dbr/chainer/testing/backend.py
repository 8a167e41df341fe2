"""``inject_backend_tests`` and ``BackendConfig``: run test methods once per backend.

dbr has no ChainerX and no iDeep: a configuration asking for ChainerX is
skipped (``dbr.chainer.chainerx.is_available()`` is False), and one asking
for iDeep runs on the CPU device (it carries the ``ideep`` mark, which CPU
runs deselect). CUDA configurations run on ``'@cupy:N'`` through dbr.gpu and
carry the ``gpu`` mark (and ``cudnn``, ``multi_gpu`` as fitting).
"""

import contextlib
import functools

import numpy

from dbr.chainer.testing import _bundle, attr
from dbr.core import backend as _backend
from dbr.core.configuration import using_config

__all__ = ["BackendConfig", "inject_backend_tests"]


class BackendConfig:
    """A backend a test runs on, from a dict of these entries (defaults in brackets).

    ``use_chainerx`` [False], ``chainerx_device`` [None], ``use_cuda`` [False],
    ``cuda_device`` [None; 0 when ``use_cuda``], ``use_cudnn`` ['never'],
    ``cudnn_deterministic`` [False], ``autotune`` [False],
    ``cudnn_fast_batch_normalization`` [False], ``use_ideep`` ['never'].
    Used as a context manager, it applies the configuration entries and makes
    :attr:`device` current.
    """

    _props = [
        ("use_chainerx", False),
        ("chainerx_device", None),
        ("use_cuda", False),
        ("cuda_device", None),
        ("use_cudnn", "never"),
        ("cudnn_deterministic", False),
        ("autotune", False),
        ("cudnn_fast_batch_normalization", False),
        ("use_ideep", "never"),
    ]

    _device = None

    def __init__(self, params):
        if not isinstance(params, dict):
            raise TypeError("params must be a dict.")
        self._contexts = []
        for key, value in self._props:
            setattr(self, key, value)
        for key, value in params.items():
            if not hasattr(self, key):
                raise ValueError(f"Parameter {key} is not defined")
            setattr(self, key, value)
        if self.use_chainerx:
            assert isinstance(self.chainerx_device, str), (
                "'chainerx_device' parameter is expected to be a string "
                "representing a ChainerX device specifier"
            )
        if self.use_cuda and self.cuda_device is None:
            self.cuda_device = 0

    @property
    def xp(self):
        """The array module of :attr:`device` (NumPy, or CuPy when ``use_cuda``)."""
        if self.use_chainerx:
            _raise_no_chainerx()
        if self.use_cuda:
            return self.device.xp
        return numpy

    @property
    def device(self):
        """The dbr device: ``'@cupy:<cuda_device>'`` when ``use_cuda``, else ``'@numpy'``."""
        if self._device is None:
            if self.use_chainerx:
                _raise_no_chainerx()
            spec = f"@cupy:{self.cuda_device}" if self.use_cuda else "@numpy"
            self._device = _backend.get_device(spec)
        return self._device

    def __enter__(self):
        stack = contextlib.ExitStack()
        for key in ("use_cudnn", "cudnn_deterministic", "autotune", "use_ideep"):
            stack.enter_context(using_config(key, getattr(self, key)))
        stack.enter_context(_backend.using_device(self.device))
        self._contexts.append(stack)
        return self

    def __exit__(self, typ, value, traceback):
        return self._contexts.pop().__exit__(typ, value, traceback)

    def __repr__(self):
        items = " ".join(f"{k}={getattr(self, k)!r}" for k, _ in self._props)
        return f"<BackendConfig {items}>"

    def get_func_str(self):
        """The configuration as a name part: ``use_chainerx_false__chainerx_device_None__...``."""
        parts = []
        for key, _ in self._props:
            value = getattr(self, key)
            text = "true" if value is True else "false" if value is False else str(value)
            parts.append(f"{key}_{text}")
        return "__".join(parts)

    def get_pytest_marks(self):
        """The marks of tests on this backend (``chainerx``, ``gpu``, ``cudnn``, ``ideep``...)."""
        marks = []
        if self.use_chainerx:
            marks.append(attr.chainerx)
            backend_name, index = self.chainerx_device.split(":")
            if backend_name == "cuda":
                marks.append(attr.gpu)
                if int(index) >= 1:
                    marks.append(attr.multi_gpu(int(index) + 1))
        elif self.use_cuda:
            marks.append(attr.gpu)
            if self.use_cudnn != "never":
                marks.append(attr.cudnn)
            if self.cuda_device >= 1:
                marks.append(attr.multi_gpu(self.cuda_device + 1))
        elif self.use_ideep != "never":
            marks.append(attr.ideep)
        return marks

    def get_array(self, np_array):
        """Send an array (or a tuple/list of arrays) to :attr:`device`."""
        return self.device.send(np_array)


def _raise_no_chainerx():
    import unittest

    raise unittest.SkipTest("ChainerX is not available (dbr has no ChainerX backend)")


def _chainerx_available():
    from dbr.chainer import chainerx

    return chainerx.is_available()


def _variants(base, method_names, params):
    if method_names is not None:

        def keep_others(method):
            return None if method.__name__ in method_names else method

        yield base.__name__, {}, keep_others

    for param in params:
        config = BackendConfig(param)
        marks = config.get_pytest_marks()
        if config.use_chainerx and not _chainerx_available():
            import pytest

            marks.append(pytest.mark.skip(reason="ChainerX is not available"))

        def wrap(method, config=config, marks=marks):
            if method_names is not None and method.__name__ not in method_names:
                return None

            @functools.wraps(method)
            def run(self, *args, **kwargs):
                return method(self, config, *args, **kwargs)

            for mark in marks:
                run = mark(run)
            return run

        yield f"{base.__name__}_{config.get_func_str()}", {}, wrap


def inject_backend_tests(method_names, params):
    """Class decorator running test methods once per backend configuration.

    Args:
        method_names (list of str or None): the test methods that take a
            :class:`BackendConfig` after ``self`` (None: every ``test_*``).
        params (list of dict): one :class:`BackendConfig` dict per backend.

    One class ``Base_<config.get_func_str()>`` per entry of ``params`` is
    generated (its tests marked per backend); with ``method_names``, a class
    keeping ``Base``'s name holds the other tests. Stacks with
    :func:`~dbr.chainer.testing.parameterize`.
    """
    if not (method_names is None or isinstance(method_names, list)):
        raise TypeError("method_names must be either None or a list.")
    if not isinstance(params, list) or not all(isinstance(d, dict) for d in params):
        raise TypeError("params must be a list of dicts.")
    return _bundle.make_decorator(lambda base: _variants(base, method_names, params))
