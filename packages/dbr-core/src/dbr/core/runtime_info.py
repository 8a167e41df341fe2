"""What dbr runs on: the platform, dbr's installed distributions, NumPy and CuPy.

``print_runtime_info()`` is what to paste into a bug report::

    Platform: Linux-6.8.0-x86_64-with-glibc2.39
    dbr-core: 0.9.0
    dbr-functions: 0.9.0
    NumPy: 1.26.4
    CuPy: Not Available
"""

import contextlib
import importlib
import importlib.metadata
import importlib.util
import platform
import sys

import numpy

__all__ = ["RuntimeInfo", "get_runtime_info", "print_runtime_info"]

_DISTRIBUTIONS = (
    "dbr-core", "dbr-gpu", "dbr-functions", "dbr-links", "dbr-datasets", "dbr-training",
    "dbr-distributed", "dbr-onnx", "dbr-chainer",
)  # fmt: skip


def _installed_versions():
    versions = {}
    for name in _DISTRIBUTIONS:
        with contextlib.suppress(importlib.metadata.PackageNotFoundError):
            versions[name] = importlib.metadata.version(name)
    return versions


def _cuda_info():
    # dbr.gpu is found by name, only here, as the backend registry finds it.
    if importlib.util.find_spec("dbr.gpu") is None:
        return None
    gpu = importlib.import_module("dbr.gpu")
    if not gpu.available:
        return None
    import cupyx

    return str(cupyx.get_runtime_info())


class RuntimeInfo:
    """A snapshot of the runtime, taken when made; ``str()`` gives one ``Name: value`` a line.

    Attributes:
        platform_version (str): :func:`platform.platform`.
        dbr_versions (dict): ``{distribution: version}`` of dbr's installed distributions.
        numpy_version (str): NumPy's version.
        cuda_info (str or None): CuPy's runtime report (CUDA, cuDNN, NCCL, ...)
            when CuPy and a GPU are usable through dbr-gpu, else None.
    """

    def __init__(self):
        self.platform_version = platform.platform()
        self.dbr_versions = _installed_versions()
        self.numpy_version = numpy.__version__
        self.cuda_info = _cuda_info()

    def cupy_lines(self):
        """The ``CuPy:`` entry's lines: ``Not Available``, or CuPy's report indented under it."""
        if self.cuda_info is None:
            return ["CuPy: Not Available"]
        return ["CuPy:", *(f"  {line}" for line in self.cuda_info.splitlines())]

    def __str__(self):
        lines = [f"Platform: {self.platform_version}"]
        lines += [f"{name}: {version}" for name, version in self.dbr_versions.items()]
        lines.append(f"NumPy: {self.numpy_version}")
        lines += self.cupy_lines()
        return "".join(f"{line}\n" for line in lines)


def get_runtime_info():
    """Return a new :class:`RuntimeInfo`."""
    return RuntimeInfo()


def print_runtime_info(out=None):
    """Write :func:`get_runtime_info`'s text to ``out`` (``sys.stdout`` if None) and flush it.

    Args:
        out: a file-like object with ``write``.
    """
    if out is None:
        out = sys.stdout
    out.write(str(get_runtime_info()))
    if hasattr(out, "flush"):
        out.flush()
