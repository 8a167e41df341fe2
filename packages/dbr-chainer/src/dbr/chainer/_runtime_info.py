"""Chainer's runtime report over dbr's (:mod:`dbr.core.runtime_info`), in Chainer's lines.

``Chainer:`` is dbr.chainer's version; ChainerX and iDeep, which dbr does
not have, are ``Not Available``.
"""

import sys

from dbr.core import runtime_info as _core_info


class _RuntimeInfo:
    def __init__(self):
        import dbr.chainer

        self.core = _core_info.get_runtime_info()
        self.chainer_version = dbr.chainer.__version__

    def __str__(self):
        lines = [
            f"Platform: {self.core.platform_version}",
            f"Chainer: {self.chainer_version}",
            "ChainerX: Not Available",
            f"NumPy: {self.core.numpy_version}",
            *self.core.cupy_lines(),
            "iDeep: Not Available",
        ]
        return "".join(f"{line}\n" for line in lines)


def _get_runtime_info():
    return _RuntimeInfo()


def print_runtime_info(out=None):
    """Write Chainer's runtime report (platform, versions, CuPy) to ``out`` (stdout if None).

    The lines are Chainer v7's: ``Platform``, ``Chainer`` (dbr.chainer's
    version), ``ChainerX`` and ``iDeep`` (``Not Available``: dbr has neither),
    ``NumPy`` and ``CuPy`` (its CUDA/cuDNN report, or ``Not Available``).

    Args:
        out: a file-like object with ``write``; it is flushed after.
    """
    if out is None:
        out = sys.stdout
    out.write(str(_get_runtime_info()))
    if hasattr(out, "flush"):
        out.flush()
