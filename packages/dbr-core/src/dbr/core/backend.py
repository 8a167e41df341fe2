"""Devices and array modules.

dbr.core knows only the CPU (``'@numpy'``). Other backends register
themselves here: a device specifier whose prefix is unknown (``'@cupy:0'``)
makes core import the plugin that serves it (``dbr.gpu``) by name, and an
array type that is not NumPy's makes core import the plugin owning that
type's top-level module. Core never imports a sibling package statically.
"""

import contextlib
import importlib

import numpy

_PLUGIN_FOR_PREFIX = {"@cupy": "dbr.gpu"}
_PLUGIN_FOR_ARRAY_MODULE = {"cupy": "dbr.gpu"}
_EXTRA_FOR_PLUGIN = {"dbr.gpu": "pip install 'dbr-gpu[cuda12]' (or 'dbr-gpu[cuda13]' for CUDA 13)"}

_device_resolvers = {}
_array_types = {}


class Device:
    """A place where arrays live, with the array module (``xp``) that works on them."""

    xp = None
    name = None

    def send(self, arrays):
        """Transfer an array, or a (nested) tuple/list/dict of arrays, to this device."""
        if isinstance(arrays, (list, tuple)):
            return type(arrays)(self.send(a) for a in arrays)
        if isinstance(arrays, dict):
            return {k: self.send(v) for k, v in arrays.items()}
        if arrays is None:
            return None
        return self.send_array(arrays)

    def send_array(self, array):
        """Transfer one array to this device."""
        raise NotImplementedError

    @property
    def supported_array_types(self):
        """The tuple of array types that live on this device (``(xp.ndarray,)``)."""
        if self.xp is None:
            raise NotImplementedError(
                f"{type(self).__name__}.supported_array_types: the device has no array module (xp)"
            )
        return (self.xp.ndarray,)

    def is_array_supported(self, array):
        """Whether ``array`` lives on this device."""
        raise NotImplementedError

    def use(self):
        """Make this device current in this thread (a no-op for the CPU)."""

    def __enter__(self):
        self.use()
        return self

    def __exit__(self, *args):
        return None

    def __eq__(self, other):
        return isinstance(other, Device) and self.name == other.name

    def __hash__(self):
        return hash(self.name)

    def __str__(self):
        return self.name

    def __repr__(self):
        return f"<{type(self).__name__} {self.name}>"


class CpuDevice(Device):
    """The host CPU, with NumPy arrays (``'@numpy'``)."""

    xp = numpy
    name = "@numpy"

    def send_array(self, array):
        """Return ``array`` as a NumPy array, copying it off a GPU if needed.

        A NumPy scalar becomes a 0-d array, as in Chainer.
        """
        if isinstance(array, numpy.ndarray):
            return array
        if isinstance(array, numpy.generic):
            return numpy.asarray(array)
        getter = getattr(array, "get", None)
        if getter is not None and _array_module_name(array) in _PLUGIN_FOR_ARRAY_MODULE:
            return getter()
        return numpy.asarray(array)

    def is_array_supported(self, array):
        """Whether ``array`` is a NumPy array or scalar."""
        return isinstance(array, (numpy.ndarray, numpy.generic))


cpu = CpuDevice()


def register_device_resolver(prefix, resolver):
    """Serve device specifiers ``'<prefix>'`` or ``'<prefix>:<n>'`` with ``resolver(spec)``.

    Called by backend plugins (``dbr.gpu`` registers ``'@cupy'``).
    """
    _device_resolvers[prefix] = resolver


def register_array_type(array_type, xp, device_of):
    """Tell core that ``array_type`` arrays use module ``xp``; ``device_of(a)`` gives a Device."""
    _array_types[array_type] = (xp, device_of)


def _array_module_name(obj):
    return type(obj).__module__.partition(".")[0]


def _import_plugin(plugin, why):
    try:
        importlib.import_module(plugin)
    except ImportError as e:
        hint = _EXTRA_FOR_PLUGIN.get(plugin, f"install {plugin}")
        raise RuntimeError(
            f"{why} needs the {plugin} package, which is not importable ({e}); "
            f"install it with: {hint}"
        ) from e


def _lookup_array_type(array):
    entry = _array_types.get(type(array))
    if entry is None:
        plugin = _PLUGIN_FOR_ARRAY_MODULE.get(_array_module_name(array))
        if plugin is None:
            return None
        _import_plugin(plugin, f"an array of type {type(array).__name__}")
        for array_type, found in _array_types.items():
            if isinstance(array, array_type):
                return found
        return None
    return entry


def get_array_module(*args):
    """Return the array module (``numpy`` or ``cupy``) for ``args``.

    Arguments may be arrays, Variables (their arrays are used), scalars or
    None; the first non-NumPy array decides, otherwise NumPy is returned.
    """
    for x in args:
        if type(x) is numpy.ndarray or x is None:
            continue
        x = getattr(x, "_data", x) if hasattr(x, "_node") else x
        if isinstance(x, (numpy.ndarray, numpy.generic, int, float, complex, bool)):
            continue
        entry = _lookup_array_type(x)
        if entry is not None:
            return entry[0]
    return numpy


def get_device_from_array(*arrays):
    """Return the Device on which the arrays live (``'@numpy'`` for NumPy arrays).

    Given several arrays, as in Chainer, the device of the first one that is
    not on the CPU is returned, and ``'@numpy'`` if there is none.
    """
    for array in arrays:
        if hasattr(array, "_node"):
            array = array._data
        if array is None or isinstance(array, (numpy.ndarray, numpy.generic)):
            continue
        entry = _lookup_array_type(array)
        if entry is not None:
            return entry[1](array)
    return cpu


def get_device(device_spec):
    """Return the Device for a specifier.

    Accepts a Device, ``'@numpy'`` (also ``'numpy'``, ``'cpu'``), ``'@cupy:N'``,
    the modules ``numpy``/``cupy``, or a Chainer-style integer id (negative
    for the CPU, ``N >= 0`` for GPU ``N``), also as a string that ``int()``
    parses (``'-1'``, ``'0'``: what a ``--device`` command-line option gives).
    """
    if isinstance(device_spec, Device):
        return device_spec
    if device_spec is numpy or device_spec in ("@numpy", "numpy", "cpu", "native"):
        return cpu
    if isinstance(device_spec, str):
        with contextlib.suppress(ValueError):
            device_spec = int(device_spec)
    if isinstance(device_spec, (int, numpy.integer)) and not isinstance(device_spec, bool):
        if device_spec < 0:
            return cpu
        device_spec = f"@cupy:{int(device_spec)}"
    elif getattr(device_spec, "__name__", None) == "cupy":
        device_spec = "@cupy"
    if not isinstance(device_spec, str):
        raise ValueError(
            f"get_device: expected a device specifier such as '@numpy' or "
            f"'@cupy:0', got {device_spec!r}"
        )
    prefix = device_spec.partition(":")[0]
    resolver = _device_resolvers.get(prefix)
    if resolver is None and prefix in _PLUGIN_FOR_PREFIX:
        _import_plugin(_PLUGIN_FOR_PREFIX[prefix], f"device {device_spec!r}")
        resolver = _device_resolvers.get(prefix)
    if resolver is None:
        raise ValueError(
            f"get_device: unknown device specifier {device_spec!r}; "
            f"expected '@numpy' or one of {sorted(_PLUGIN_FOR_PREFIX)}"
        )
    return resolver(device_spec)


def using_device(device_spec):
    """Context manager making a device current inside a ``with`` block."""
    return get_device(device_spec)


def to_device(device, x):
    """Send ``x`` (array, or nested tuple/list/dict of arrays) to ``device``; None keeps it."""
    if device is None:
        return x
    return get_device(device).send(x)


def to_cpu(x):
    """Send ``x`` (array or nested containers of arrays) to the CPU as NumPy arrays."""
    return cpu.send(x)


def copyto(dst, src):
    """Copy the elements of ``src`` into ``dst`` in place, across devices if needed."""
    dst_device = get_device_from_array(dst)
    dst[...] = dst_device.send(src)


def get_array_types():
    """Return the tuple of array types known to core (NumPy's plus registered ones)."""
    return (numpy.ndarray, *_array_types)


def get_cpu_array_types():
    """Return the tuple of array types that live on the CPU: ``(numpy.ndarray,)`` in dbr."""
    return (numpy.ndarray,)


def is_arrays_compatible(arrays):
    """Whether the arrays (None entries ignored) can be used together in one computation.

    They can when all are CPU arrays, or all are of the first one's registered
    non-CPU array type (all CuPy arrays); an empty sequence is compatible.

    Args:
        arrays: an iterable of arrays and Nones.
    """
    arrays = [a for a in arrays if a is not None]
    if not arrays:
        return True
    first = arrays[0]
    types = get_cpu_array_types()
    if not isinstance(first, types) and _lookup_array_type(first) is not None:
        types = tuple(t for t in _array_types if isinstance(first, t))
    return all(isinstance(a, types) for a in arrays)
