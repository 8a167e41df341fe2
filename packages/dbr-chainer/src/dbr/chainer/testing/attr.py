"""Test marks: ``gpu``, ``multi_gpu(n)``, ``cudnn``, ``ideep``, ``chainerx``, ``slow``.

Each is a pytest mark of that name (``multi_gpu(n)`` also marks ``gpu``), so a
CPU run deselects device tests with
``-m "not gpu and not cudnn and not multi_gpu and not ideep and not slow"``.
``CHAINER_TEST_GPU_LIMIT=k`` skips tests needing more than ``k`` GPUs.
pytest is imported when a mark is first applied.
"""

import os
import unittest

__all__ = ["chainerx", "cudnn", "gpu", "ideep", "multi_gpu", "slow"]


def _mark(name, *args, **kwargs):
    import pytest

    return getattr(pytest.mark, name)(*args, **kwargs)


def _gpu_limit():
    return int(os.getenv("CHAINER_TEST_GPU_LIMIT", "-1"))


def chainerx(*args, **kwargs):
    """Mark a test ``chainerx`` (it uses ChainerX)."""
    return _mark("chainerx", *args, **kwargs)


def cudnn(*args, **kwargs):
    """Mark a test ``cudnn`` (it uses cuDNN)."""
    return _mark("cudnn", *args, **kwargs)


def ideep(*args, **kwargs):
    """Mark a test ``ideep`` (it uses iDeep)."""
    return _mark("ideep", *args, **kwargs)


def slow(*args, **kwargs):
    """Mark a test ``slow``."""
    return _mark("slow", *args, **kwargs)


def multi_gpu(gpu_num):
    """Return a decorator marking a test ``gpu`` and ``multi_gpu`` (it needs ``gpu_num`` GPUs).

    The test is skipped when ``CHAINER_TEST_GPU_LIMIT`` is set below ``gpu_num``.
    """

    def decorate(f):
        limit = _gpu_limit()
        f = unittest.skipIf(0 <= limit < gpu_num, f"{gpu_num} GPUs required")(f)
        f = _mark("gpu")(f)
        return _mark("multi_gpu", gpu_num)(f) if gpu_num > 1 else f

    return decorate


def gpu(f):
    """Mark a test ``gpu`` (it needs one GPU)."""
    return multi_gpu(1)(f)
