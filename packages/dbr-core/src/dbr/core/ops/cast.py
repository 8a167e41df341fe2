"""cast, copy and identity: functions that move or relabel data."""

import numpy

from dbr.core import backend, type_check
from dbr.core.configuration import config
from dbr.core.function_node import FunctionNode
from dbr.core.variable import as_variable


class Cast(FunctionNode):
    """Convert an array to another dtype."""

    def __init__(self, typ):
        self.type = _as_dtype(typ)

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))

    def forward(self, inputs):
        x = inputs[0]
        self._in_type = x.dtype
        return (x.astype(self.type, copy=False),)

    def backward(self, indexes, grad_outputs):
        return (cast(grad_outputs[0], self._in_type),)


def _as_dtype(typ):
    try:
        return numpy.dtype(typ)
    except TypeError:
        raise TypeError(f"cast: expected typ to be a dtype, got {typ!r}") from None


def cast(x, typ):
    """Return ``x`` converted to dtype ``typ``.

    When ``x`` already has dtype ``typ``, the result holds ``x``'s array; it is
    still a new node of the graph while backprop is enabled (so that
    ``cast(x, t) + cast(x, t)`` gives ``x`` a gradient of 2, as in Chainer),
    and ``x`` itself as a Variable when it is not.

    Args:
        x (Variable or array): input.
        typ (dtype or str): the target dtype.

    Raises:
        TypeError: If ``typ`` names no dtype.

    Returns:
        Variable: of dtype ``typ``; its gradient is cast back to ``x``'s dtype.

    >>> import numpy as np
    >>> cast(np.ones(2, np.float32), np.float64).dtype
    dtype('float64')
    """
    if x.dtype == _as_dtype(typ) and not config.enable_backprop:
        return as_variable(x)
    return Cast(typ).apply((x,))[0]


class Copy(FunctionNode):
    """Copy an array to a device."""

    def __init__(self, in_device, out_device):
        self._in_device = in_device
        self._out_device = out_device

    def forward(self, inputs):
        x = inputs[0]
        y = self._out_device.send(x)
        return (y.copy() if y is x else y,)

    def backward(self, indexes, grad_outputs):
        return (Copy(self._out_device, self._in_device).apply(grad_outputs)[0],)


def copy(x, dst):
    """Copy ``x`` to device ``dst``; the gradient is copied back.

    Args:
        x (Variable or array): input.
        dst: a device specifier ('@numpy', '@cupy:0', a Device, or a Chainer
            integer id, -1 for the CPU).

    Returns:
        Variable: a copy on ``dst`` (always a new array).

    >>> import numpy as np
    >>> copy(np.ones(2, np.float32), '@numpy').array
    array([1., 1.], dtype=float32)
    """
    in_device = backend.get_device_from_array(x._data if hasattr(x, "_data") else x)
    return Copy(in_device, backend.get_device(dst)).apply((x,))[0]


class Identity(FunctionNode):
    """Return the inputs unchanged (a node in the graph that passes gradients through)."""

    def forward(self, inputs):
        return inputs

    def backward(self, indexes, grad_outputs):
        return grad_outputs


def identity(*inputs):
    """Return the inputs as new Variables linked to them by an identity node.

    Returns:
        Variable or tuple of Variables: one per input (a single Variable for one input).

    >>> import numpy as np
    >>> identity(np.ones(2, np.float32)).shape
    (2,)
    """
    ret = Identity().apply(inputs)
    return ret[0] if len(ret) == 1 else ret
