"""Whether CuPy and a CUDA GPU are usable, found once when dbr.gpu is imported.

Nothing here raises at import: without CuPy, or with CuPy but no driver or
no GPU, ``available`` is False and :func:`require` explains which of the
two is missing and how to get it.
"""

INSTALL_HINT = (
    "install CuPy through dbr-gpu's extra for your CUDA version: "
    "pip install 'dbr-gpu[cuda12]' (CUDA 12.x) or pip install 'dbr-gpu[cuda13]' (CUDA 13.x)"
)


def _probe():
    try:
        import cupy
    except ImportError as e:
        return None, f"CuPy is not installed ({e}); {INSTALL_HINT}"
    if getattr(cupy, "cuda", None) is None:
        # A folder named cupy on sys.path (say, a checkout of CuPy's sources in the
        # working directory) imports as an empty namespace package.
        where = ", ".join(getattr(cupy, "__path__", [])) or "?"
        return None, (
            f"'import cupy' found no CuPy but a folder named cupy ({where}); {INSTALL_HINT}"
        )
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # CUDARuntimeError for a missing driver or device, and others
        return cupy, (
            f"CuPy {cupy.__version__} is installed but no CUDA GPU can be used "
            f"({type(e).__name__}: {e}); a machine with an NVIDIA GPU and its driver is needed"
        )
    if count == 0:
        return cupy, (
            f"CuPy {cupy.__version__} is installed but the CUDA driver sees no GPU; "
            "a machine with an NVIDIA GPU is needed"
        )
    return cupy, None


cupy, unavailable_reason = _probe()
available = unavailable_reason is None


def require(who):
    """Return the ``cupy`` module, or raise naming ``who`` and what is missing.

    Args:
        who (str): what needs the GPU, for the message (e.g. ``"GpuDevice(0)"``).

    Raises:
        RuntimeError: CuPy is not installed (the message says how to install
            the extra), or it is installed but no GPU can be used.
    """
    if unavailable_reason is not None:
        raise RuntimeError(f"{who} needs a CUDA GPU through CuPy: {unavailable_reason}")
    return cupy
