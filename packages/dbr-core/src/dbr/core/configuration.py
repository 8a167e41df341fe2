"""Run-time configuration: a global default and a thread-local override.

``config.x`` reads the calling thread's value of ``x``, falling back to
``global_config.x``. The thread-local object is a :class:`threading.local`
subclass whose class attributes hold the global values, so reading a flag on
the hot path is a plain attribute lookup.
"""

import contextlib
import threading

import numpy

_DEFAULTS = {
    "train": True,
    "enable_backprop": True,
    "type_check": True,
    "debug": False,
    "dtype": numpy.dtype(numpy.float32),
    "use_cudnn": "auto",
    # Chainer's flags for cuDNN's Tensor Cores ('always', 'auto', 'never') and for the
    # compute mode that backends may read (None: each backend's default).
    "use_cudnn_tensor_core": "auto",
    "compute_mode": None,
    "keep_graph_on_report": False,
    "cudnn_deterministic": False,
    # Chainer's switch for utils.nondeterministic's warning.
    "warn_nondeterministic": False,
    "autotune": False,
    "lazy_grad_sum": False,
    "use_static_graph": True,
    "in_recomputing": False,
    # Set while F.forget runs a function whose backward will recompute it, so that
    # links updating running statistics keep the values the recomputation needs.
    "_will_recompute": False,
    # Threads for elementwise CPU work in dbr.functions (None: OMP_NUM_THREADS, else
    # the CPU count; 1 turns the thread pool off).
    "cpu_threads": None,
    "_function_hooks": {},
    "_link_hooks": {},
}


class _LocalConfig(threading.local):
    """The per-thread configuration; unset names fall through to class attributes."""

    def __repr__(self):
        return f"<dbr.core.config {self.show(return_text=True)}>"

    def show(self, file=None, return_text=False):
        """Print (or return) every entry, sorted by name."""
        names = sorted(set(vars(type(self))) | set(vars(self)))
        lines = [
            f"{name:<22}{getattr(self, name)!r}"
            for name in names
            if not name.startswith("_") and not callable(getattr(self, name))
        ]
        text = "\n".join(lines)
        if return_text:
            return text
        print(text, file=file)


class GlobalConfig:
    """The process-wide defaults that every thread's ``config`` inherits."""

    __slots__ = ()

    def __getattr__(self, name):
        try:
            return vars(_LocalConfig)[name]
        except KeyError:
            raise AttributeError(f"dbr.core.global_config has no entry {name!r}") from None

    def __setattr__(self, name, value):
        setattr(_LocalConfig, name, _normalize(name, value))

    def __delattr__(self, name):
        delattr(_LocalConfig, name)

    def __repr__(self):
        return "<dbr.core.global_config>"


class _Mixed16:
    """The type of :data:`mixed16`; its one instance is the mode's marker."""

    __slots__ = ()
    dtype = numpy.dtype(numpy.float16)

    def __repr__(self):
        return "dtype('mixed16')"

    def __reduce__(self):
        return "mixed16"


mixed16 = _Mixed16()
"""Dtype-like marker of the mixed 16/32-bit mode, a value of ``config.dtype``.

While ``config.dtype`` is ``mixed16``, arrays (inputs, activations, most
parameters) are float16, as ``numpy.dtype(mixed16)`` says, while the links
that need the range keep their parameters and statistics in float32
(``BatchNormalization``'s ``gamma``, ``beta``, ``avg_mean`` and ``avg_var``,
``GroupNormalization``'s ``gamma`` and ``beta``): they ask
``get_dtype(map_mixed16=numpy.float32)``.
"""


def _normalize(name, value):
    if name == "dtype" and value is not None and value is not mixed16:
        value = numpy.dtype(value)
        if value.kind != "f":
            raise ValueError(f"config.dtype: expected a floating dtype or mixed16, got {value}")
    return value


for _name, _value in _DEFAULTS.items():
    setattr(_LocalConfig, _name, _value)

global_config = GlobalConfig()
config = _LocalConfig()

_MISSING = object()


def _as_dtype(value, name):
    try:
        return numpy.dtype(value)
    except TypeError:
        raise TypeError(
            f"get_dtype: expected {name} to be a NumPy dtype specifier or None, got {value!r}"
        ) from None


def get_dtype(dtype=None, map_mixed16=None):
    """Return the dtype to use: ``dtype`` if given, else ``config.dtype``.

    Args:
        dtype: a NumPy dtype specifier (``numpy.float16``, ``'f8'``, ...),
            :data:`mixed16`, or None for the configured default
            ``config.dtype`` (float32 unless set).
        map_mixed16: a dtype specifier to return in place of :data:`mixed16`
            (the one given, or ``config.dtype``); None: mixed16 resolves to
            float16, its array dtype. Links ask ``map_mixed16=numpy.float32``
            for what they keep in high precision.

    Returns:
        numpy.dtype: the resolved dtype, normalized by ``numpy.dtype()``.

    Raises:
        TypeError: ``dtype`` or ``map_mixed16`` is not a dtype specifier.

    >>> import numpy
    >>> get_dtype()
    dtype('float32')
    >>> with using_config("dtype", mixed16):
    ...     get_dtype(), get_dtype(map_mixed16=numpy.float32)
    (dtype('float16'), dtype('float32'))
    """
    if dtype is None:
        dtype = config.dtype
    if map_mixed16 is not None:
        map_mixed16 = _as_dtype(map_mixed16, "map_mixed16")
        if dtype is mixed16:
            return map_mixed16
    return _as_dtype(dtype, "dtype")


def get_compute_mode():
    """Return ``config.compute_mode`` (None unless set), as Chainer's ``get_compute_mode``."""
    return config.compute_mode


@contextlib.contextmanager
def using_config(name, value, config=config):
    """Set ``config.<name>`` to ``value`` in this thread inside a ``with`` block."""
    old = vars(config).get(name, _MISSING)
    setattr(config, name, _normalize(name, value))
    try:
        yield
    finally:
        if old is _MISSING:
            delattr(config, name)
        else:
            setattr(config, name, old)


def no_backprop_mode():
    """Context in which functions record no graph (``enable_backprop=False``)."""
    return using_config("enable_backprop", False)


def force_backprop_mode():
    """Context in which functions record the graph even inside ``no_backprop_mode``."""
    return using_config("enable_backprop", True)


def is_debug():
    """Whether debug mode (NaN/Inf checks naming the function) is on in this thread."""
    return bool(config.debug)


def set_debug(debug):
    """Turn debug mode on or off in this thread."""
    config.debug = debug


class DebugMode:
    """Context manager turning debug mode on or off inside a ``with`` block."""

    def __init__(self, debug):
        self._using = using_config("debug", debug)

    def __enter__(self):
        self._using.__enter__()

    def __exit__(self, *args):
        self._using.__exit__(*args)
