"""Converters: functions that turn a list of examples into arrays on a device.

A converter is called as ``converter(batch, device)``. New-style converters
are :class:`Converter` instances (the :func:`converter` decorator makes one
from a function) and receive ``device`` as a :class:`dbr.core.backend.Device`
or None; plain functions are old-style and receive Chainer's integer device
id (-1 for the CPU). :func:`concat_examples` is the default converter.
"""

import functools
import sys

import numpy

from dbr.core import backend


class Converter:
    """Base class of new-style converters.

    Subclasses implement ``__call__(batch, device)``, where ``device`` is a
    :class:`dbr.core.backend.Device` or None (leave the arrays where they
    are). Users of converters (updaters, evaluators) call them through
    :func:`call_converter`, which also supports old-style functions.
    """

    def __call__(self, batch, device):
        """Convert ``batch`` (a list of examples) to arrays on ``device``."""
        raise NotImplementedError(f"{type(self).__name__} must implement __call__(batch, device)")


class _FunctionConverter(Converter):
    """A function wrapped as a new-style converter by :func:`converter`."""

    def __init__(self, function):
        if not callable(function):
            raise TypeError(f"converter: expected a callable, got {type(function).__name__}")
        self.function = function
        self.__wrapped__ = function
        self.__doc__ = function.__doc__
        self.__name__ = getattr(function, "__name__", type(function).__name__)
        self.__qualname__ = getattr(function, "__qualname__", self.__name__)
        self.__module__ = getattr(function, "__module__", None)

    def __call__(self, *args, **kwargs):
        return self.function(*args, **kwargs)

    def __reduce__(self):
        # A decorated module-level function is the converter its module holds under
        # the function's name: pickle it by that name, as pickle does functions.
        module = sys.modules.get(self.__module__)
        try:
            found = functools.reduce(getattr, self.__qualname__.split("."), module)
        except AttributeError:
            found = None
        if found is self:
            return self.__qualname__
        return (_FunctionConverter, (self.function,))

    def __repr__(self):
        return f"<converter {self.__name__}>"


def converter():
    """Decorator that makes a function a new-style converter.

    The decorated function receives ``device`` as a
    :class:`dbr.core.backend.Device` (or None) instead of an integer id::

        @converter()
        def my_converter(batch, device=None):
            return concat_examples(batch, device)
    """

    def wrap(function):
        return _FunctionConverter(function)

    return wrap


def _get_device(device_spec):
    return None if device_spec is None else backend.get_device(device_spec)


def call_converter(converter, batch, device):
    """Call ``converter`` on ``batch`` for ``device`` (a Device, a specifier or None).

    New-style converters (:class:`Converter`) get the Device; old-style
    functions get Chainer's integer id: -1 for the CPU, N for ``'@cupy:N'``,
    and None when ``device`` is None (as in Chainer, the device argument is
    always passed).
    """
    device = _get_device(device)
    if isinstance(converter, Converter):
        return converter(batch, device)
    if device is None:
        return converter(batch, None)
    if device.xp is numpy:
        return converter(batch, -1)
    prefix, _, index = device.name.partition(":")
    if prefix != "@cupy":
        raise ValueError(
            f"call_converter: an old-style converter takes an integer device id, which "
            f"device {device.name} has none of; make it new-style with @converter()"
        )
    return converter(batch, int(index or 0))


def to_device(device, x):
    """Send ``x`` to ``device``.

    Args:
        device: None (return ``x`` as it is), a device specifier such as
            ``'@numpy'`` or ``'@cupy:0'``, a :class:`dbr.core.backend.Device`,
            or a Chainer-style integer id (negative for the CPU).
        x: an array, or a (nested) tuple, list or dict of arrays.

    Returns:
        ``x`` on ``device``.
    """
    device = _get_device(device)
    if device is None:
        return x
    return device.send(x)


@converter()
def concat_examples(batch, device=None, padding=None):
    """Stack a list of examples into batch arrays and send them to ``device``.

    Examples may be arrays (or numbers, or nested lists of numbers), tuples
    of arrays, or dicts of arrays; the result is respectively one array whose
    first axis runs over the examples, a tuple of such arrays, or a dict of
    them with the same keys.

    Without ``padding`` the arrays of one field must share a shape. With
    ``padding``, arrays of the same ndim and different shapes are allowed:
    each is placed at the start of every axis of a result as large as the
    largest shape in each axis, and the rest is filled with ``padding``.

    Args:
        batch (list): the examples; must not be empty.
        device: where to send the result: None (leave it where the examples
            are), a device specifier (``'@numpy'``, ``'@cupy:0'``), a
            :class:`dbr.core.backend.Device`, or an integer id (negative for
            the CPU).
        padding: the fill value, or for tuple examples a tuple of fill values
            (one per field) and for dict examples a dict (one per key).

    Returns:
        An array, a tuple of arrays or a dict of arrays.

    >>> import numpy
    >>> concat_examples([(numpy.zeros(2), 0), (numpy.ones(2), 1)])
    (array([[0., 0.],
           [1., 1.]]), array([0, 1]))
    >>> concat_examples([numpy.ones(1), numpy.ones(3)], padding=-1)
    array([[ 1., -1., -1.],
           [ 1.,  1.,  1.]])
    """
    device = _get_device(device)
    return _map_fields(
        batch,
        padding,
        "concat_examples",
        lambda arrays, pad, name: to_device(device, _concat_arrays(arrays, pad, name)),
    )


def _map_fields(batch, padding, who, concat):
    """Split ``batch`` into fields by the first example's structure; ``concat`` each field."""
    if len(batch) == 0:
        raise ValueError(f"{who}: batch is empty")
    first = batch[0]
    if isinstance(first, tuple):
        width = len(first)
        for i, example in enumerate(batch):
            if not isinstance(example, tuple) or len(example) != width:
                raise ValueError(
                    f"{who}: example 0 is a tuple of {width} elements, but example {i} is "
                    f"{_describe_example(example)}"
                )
        if not isinstance(padding, tuple):
            padding = (padding,) * width
        elif len(padding) != width:
            raise ValueError(
                f"{who}: padding has {len(padding)} values, but the examples have {width} elements"
            )
        return tuple(
            concat([example[i] for example in batch], padding[i], f"element {i} of ")
            for i in range(width)
        )
    if isinstance(first, dict):
        keys = first.keys()
        for i, example in enumerate(batch):
            if not isinstance(example, dict) or example.keys() != keys:
                raise ValueError(
                    f"{who}: example 0 is a dict with keys {sorted(keys, key=str)}, but example "
                    f"{i} is {_describe_example(example)}"
                )
        if not isinstance(padding, dict):
            padding = dict.fromkeys(keys, padding)
        elif not keys <= padding.keys():
            missing = sorted(keys - padding.keys(), key=str)
            raise ValueError(f"{who}: padding has no value for the keys {missing}")
        return {
            key: concat([example[key] for example in batch], padding[key], f"key {key!r} of ")
            for key in keys
        }
    return concat(batch, padding, "")


def _describe_example(example):
    if isinstance(example, tuple):
        return f"a tuple of {len(example)} elements"
    if isinstance(example, dict):
        return f"a dict with keys {sorted(example, key=str)}"
    return f"a {type(example).__name__}"


def _concat_arrays(arrays, padding, field):
    if not isinstance(arrays[0], backend.get_array_types()):
        arrays = numpy.asarray(arrays)
        if padding is None:
            return arrays
    device = backend.get_device_from_array(arrays[0])
    xp = device.xp
    with device:
        if padding is None:
            shape = arrays[0].shape
            for i, array in enumerate(arrays):
                if array.shape != shape:
                    raise ValueError(
                        f"concat_examples: {field}example {i} has shape {array.shape}, but "
                        f"{field}example 0 has shape {shape}; pass padding= to pad them to "
                        f"a common shape"
                    )
            return xp.stack(arrays)
        return _concat_with_padding(arrays, padding, field, xp)


def _concat_with_padding(arrays, padding, field, xp):
    ndim = arrays[0].ndim
    shape = list(arrays[0].shape)
    for i, array in enumerate(arrays):
        if array.ndim != ndim:
            raise ValueError(
                f"concat_examples: {field}example {i} has {array.ndim} dimensions, but "
                f"{field}example 0 has {ndim}; padding needs arrays of equal ndim"
            )
        shape = [max(a, b) for a, b in zip(shape, array.shape)]
    result = xp.full([len(arrays), *shape], padding, dtype=arrays[0].dtype)
    for i, array in enumerate(arrays):
        result[(i, *(slice(n) for n in array.shape))] = array
    return result


class ConcatWithAsyncTransfer:
    """Converter like :func:`concat_examples` that overlaps the GPU transfer with compute.

    On the first call it fixes the target device; later calls must use the
    same one. For a CPU target (or None) it behaves as
    :func:`concat_examples`. For a GPU it stacks each field on the host,
    copies it into page-locked memory (a :class:`dbr.gpu.memory.PinnedBuffer`)
    and starts an asynchronous copy to the GPU on ``stream`` (a new
    non-blocking stream if None). The copies of a call start only after the
    work already queued on the stream that uses the batches (``compute_stream``,
    else the device's current stream) is done. Without ``compute_stream``,
    each call waits for its own copies before returning. With
    ``compute_stream``, it returns at once: the copies are ordered before
    later work on ``compute_stream`` through a CUDA event. Host and device
    buffers are kept and reused in turn (two per field), so an array it
    returned is overwritten two calls later: copy it to keep it.

    The GPU path needs the ``dbr.gpu`` package (``pip install
    "dbr-datasets[gpu]"``); the CPU path needs nothing.

    Args:
        stream (cupy.cuda.Stream): the stream for the host-to-device copies.
        compute_stream (cupy.cuda.Stream): the stream on which the batches
            will be used, or None.

    Call it as ``converter(batch, device=None, padding=None)`` with the
    arguments of :func:`concat_examples`.
    """

    def __init__(self, stream=None, compute_stream=None):
        self._stream = stream
        self.compute_stream = compute_stream
        self._device_fixed = False
        self._device = None
        self._conveyors = {}

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_conveyors"] = {}  # page-locked and device buffers belong to this process
        return state

    def __call__(self, batch, device=None, padding=None):
        """Stack ``batch`` as :func:`concat_examples` does and send it to ``device``."""
        if len(batch) == 0:
            raise ValueError("ConcatWithAsyncTransfer: batch is empty")
        try:
            device = _get_device(device)
        except RuntimeError as e:
            raise RuntimeError(f"ConcatWithAsyncTransfer: {e}") from e
        if not self._device_fixed:
            self._device, self._device_fixed = device, True
        elif device != self._device:
            raise ValueError(
                f"ConcatWithAsyncTransfer: this converter sends to {self._device}, fixed at its "
                f"first call; got device {device}"
            )
        if device is None or device.xp is numpy:
            return concat_examples(batch, device, padding)
        return self._transfer(batch, device, padding)

    def _transfer(self, batch, device, padding):
        import dbr.gpu
        from dbr.gpu.memory import PinnedBuffer

        cuda = dbr.gpu.require("ConcatWithAsyncTransfer").cuda
        with device:
            if self._stream is None:
                self._stream = cuda.Stream(non_blocking=True)
            consumer = self.compute_stream
            if consumer is None:
                consumer = cuda.get_current_stream()
            # The device buffers about to be refilled may still be read by queued work.
            consumed = cuda.Event(block=False, disable_timing=True)
            consumed.record(consumer)
            self._stream.wait_event(consumed)
            turn = []

            def put(arrays, pad, field):
                key = len(turn)
                conveyor = self._conveyors.get(key)
                if conveyor is None:
                    conveyor = self._conveyors[key] = _Conveyor(PinnedBuffer)
                turn.append(conveyor)
                return conveyor.put(_concat_arrays(arrays, pad, field), device.xp, self._stream)

            result = _map_fields(batch, padding, "ConcatWithAsyncTransfer", put)
            if self.compute_stream is None:
                self._stream.synchronize()
            else:
                copied = cuda.Event(block=False, disable_timing=True)
                copied.record(self._stream)
                self.compute_stream.wait_event(copied)
            return result


class _Conveyor:
    """Sends the host arrays of one field to the GPU through page-locked memory, two deep.

    Each turn has a :class:`~dbr.gpu.memory.PinnedBuffer` (which waits, when
    reused, until its previous copy has read it) and a device array.
    """

    def __init__(self, pinned_buffer):
        self._turns = [(pinned_buffer(), None), (pinned_buffer(), None)]
        self._turn = 0

    def put(self, array, cupy, stream):
        """Queue the copy of ``array`` (host or device) to the current GPU on ``stream``.

        Returns:
            cupy.ndarray: the device array, valid once ``stream`` has passed the copy.
        """
        if isinstance(array, cupy.ndarray):
            return array
        array = numpy.ascontiguousarray(array)
        pinned_buffer, device_array = self._turns[self._turn]
        if (
            device_array is None
            or device_array.shape != array.shape
            or device_array.dtype != array.dtype
        ):
            device_array = cupy.empty(array.shape, array.dtype)
        self._turns[self._turn] = (pinned_buffer, device_array)
        self._turn ^= 1
        pinned = pinned_buffer.array(array.shape, array.dtype)
        pinned[...] = array
        device_array.set(pinned, stream)
        pinned_buffer.record(stream)
        return device_array
