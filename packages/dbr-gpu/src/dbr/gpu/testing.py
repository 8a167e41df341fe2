"""Helpers for the test suites of the packages that define dbr.gpu kernels.

A package keeps each kernel as a module-level dict constant whose name ends
in ``_ELEMENTWISE``, ``_REDUCTION`` or ``_RAW``, holding the keyword
arguments of :func:`dbr.gpu.elementwise`, :func:`dbr.gpu.reduce` or
:func:`dbr.gpu.raw`. :func:`kernel_definitions` finds them all, so that a
test can compile each with :func:`dbr.gpu.kernels.check_compiles` where
:func:`nvrtc_available`, GPU or not.
"""

import contextlib
import functools
import importlib
import os
import pkgutil
import tempfile

__all__ = ["count_nvrtc_compilations", "kernel_definitions", "nvrtc_available"]

_KINDS = (("_ELEMENTWISE", "elementwise"), ("_REDUCTION", "reduce"), ("_RAW", "raw"))


def _kind(constant_name):
    for suffix, kind in _KINDS:
        if constant_name.endswith(suffix):
            return kind
    return None


def _raise(name):
    raise ImportError(f"kernel_definitions: cannot import {name}")


def kernel_definitions(package_name):
    """Every kernel definition in the modules of ``package_name``.

    Imports the package and, through ``pkgutil.walk_packages``, each of its
    modules and subpackages, and collects their module-level dicts named
    ``*_ELEMENTWISE``, ``*_REDUCTION`` or ``*_RAW``. A dict imported into
    another module is reported once, under the module that defines it.

    Args:
        package_name (str): e.g. ``"dbr.functions"``.

    Returns:
        list of tuple: ``(module_name, constant_name, kind, spec)`` sorted by
        module and constant, ``kind`` being ``"elementwise"``, ``"reduce"`` or
        ``"raw"`` (the :func:`~dbr.gpu.kernels.check_compiles` kinds).
    """
    package = importlib.import_module(package_name)
    modules = [package]
    if hasattr(package, "__path__"):
        for info in pkgutil.walk_packages(package.__path__, package_name + ".", onerror=_raise):
            modules.append(importlib.import_module(info.name))
    found = {}
    for module in modules:
        for constant_name, value in vars(module).items():
            kind = _kind(constant_name)
            if kind is None or not isinstance(value, dict):
                continue
            entry = (module.__name__, constant_name, kind, value)
            previous = found.get(id(value))
            if previous is None or len(module.__name__) > len(previous[0]):
                found[id(value)] = entry
    return sorted(found.values(), key=lambda entry: entry[:2])


@functools.cache
def nvrtc_available():
    """True when CuPy is importable and its NVRTC library loads (no GPU needed)."""
    try:
        from cupy_backends.cuda.libs import nvrtc

        nvrtc.getVersion()
    except Exception:  # ImportError, or the library failing to load
        return False
    return True


@contextlib.contextmanager
def count_nvrtc_compilations():
    """Count the NVRTC compilations CuPy runs inside the ``with`` block.

    CuPy compiles a kernel source through
    ``cupy.cuda.compiler._compile_using_nvrtc_no_warning`` (CuPy 14;
    ``compile_using_nvrtc`` before) only when its on-disk cache under
    ``CUPY_CACHE_DIR`` has no binary for that source; this points
    ``CUPY_CACHE_DIR`` at a fresh empty folder for the block and wraps that
    function, so each real compilation is counted and none is hidden by a
    binary left by an earlier run. Binaries CuPy already holds in memory
    (kernels launched before the block) are not recompiled and not counted:
    give the kernel under test a name no other test uses.

    Yields:
        list: one entry (the compiled source) per compilation, filled as they happen.
    """
    from cupy.cuda import compiler

    name = "_compile_using_nvrtc_no_warning"
    if not hasattr(compiler, name):
        name = "compile_using_nvrtc"
    original = getattr(compiler, name)
    sources = []

    def counting(source, *args, **kwargs):
        sources.append(source)
        return original(source, *args, **kwargs)

    saved = os.environ.get("CUPY_CACHE_DIR")
    with tempfile.TemporaryDirectory() as cache_dir:
        os.environ["CUPY_CACHE_DIR"] = cache_dir
        setattr(compiler, name, counting)
        try:
            yield sources
        finally:
            setattr(compiler, name, original)
            if saved is None:
                del os.environ["CUPY_CACHE_DIR"]
            else:
                os.environ["CUPY_CACHE_DIR"] = saved
