"""The devices a test runs on: ``'@numpy'`` always, ``'@cupy:0'`` where a GPU is usable.

``DEVICES`` is meant for ``pytest.mark.parametrize``; the GPU entry carries
the ``gpu`` mark, so ``pytest -m gpu`` selects exactly the GPU runs.
:func:`get_test_device` turns an entry into a Device, skipping the test with
the reason when dbr.gpu is not installed or no GPU can be used.
"""

import importlib.util

from dbr.core import backend
from dbr.core.testing._pytest import require_pytest

pytest = require_pytest()

__all__ = ["DEVICES", "get_test_device"]

DEVICES = ("@numpy", pytest.param("@cupy:0", marks=pytest.mark.gpu, id="@cupy:0"))


def get_test_device(spec):
    """The Device for ``spec`` (an entry of :data:`DEVICES`), or skip the calling test.

    Skips when ``spec`` names a GPU and dbr.gpu is not installed, or when
    the device cannot be used (no CuPy, no driver, no GPU: the reason is
    dbr.gpu's message).
    """
    if spec == "@numpy":
        return backend.cpu
    try:
        installed = importlib.util.find_spec("dbr.gpu") is not None
    except ImportError:
        installed = False
    if not installed:
        pytest.skip("dbr.gpu is not installed")
    try:
        return backend.get_device(spec)
    except Exception as e:  # a missing driver or GPU surfaces as various CUDA errors
        pytest.skip(f"{spec} is not available: {e}")
