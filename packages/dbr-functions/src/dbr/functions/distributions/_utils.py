"""What the distributions share: parameter checks, a base for the simple families, raw draws."""

import operator
import warnings

import numpy

import dbr.functions as F
from dbr.core import FunctionNode, Variable, as_variable, type_check
from dbr.core.backend import get_array_module
from dbr.core.utils import force_array
from dbr.functions.distributions.distribution import Distribution


def _describe(value):
    if isinstance(value, Variable):
        return f"a Variable of dtype {value.dtype} and shape {value.shape}"
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return f"an array of dtype {value.dtype} and shape {value.shape}"
    return f"{type(value).__name__} {value!r}"


def as_parameter(owner, name, value):
    """``value`` as a Variable, checked to be a floating-point Variable or array.

    Args:
        owner (str): the distribution class, named in the error.
        name (str): the argument, named in the error.
        value: a Variable, a NumPy/CuPy array or a NumPy scalar.

    Raises:
        TypeError: when ``value`` is none of those, or not of a floating dtype.
    """
    if isinstance(value, numpy.generic):
        value = numpy.asarray(value)
    array = value.array if isinstance(value, Variable) else value
    if not (hasattr(array, "dtype") and hasattr(array, "shape")) or array.dtype.kind != "f":
        raise TypeError(
            f"{owner}: {name} must be a Variable or an array of a floating-point dtype, "
            f"got {_describe(value)}"
        )
    return as_variable(value)


def check_parameters(owner, **params):
    """Check that named parameters (Variables) share a dtype and broadcast together.

    Returns:
        tuple: the broadcast shape of the parameters.

    Raises:
        TypeError: when the dtypes differ.
        ValueError: when the shapes do not broadcast.
    """
    items = list(params.items())
    first_name, first = items[0]
    for name, p in items[1:]:
        if p.dtype != first.dtype:
            raise TypeError(
                f"{owner}: {name} must have the dtype of {first_name} ({first.dtype}), "
                f"got {p.dtype}"
            )
    try:
        return numpy.broadcast_shapes(*(p.shape for _, p in items))
    except ValueError:
        shapes = ", ".join(f"{n} {p.shape}" for n, p in items)
        raise ValueError(f"{owner}: the parameter shapes do not broadcast: {shapes}") from None


def broadcast_parameter(p, shape):
    """``p`` broadcast to ``shape`` (returned as is when it already has that shape)."""
    return p if p.shape == shape else F.broadcast_to(p, shape)


def check_sample_count(owner, n):
    """Check the ``n`` of ``sample_n`` is a non-negative int."""
    if isinstance(n, bool) or not isinstance(n, (int, numpy.integer)) or n < 0:
        raise ValueError(f"{owner}.sample_n: n must be a non-negative int, got {n!r}")
    return int(n)


def draw(xp, name, shape, dtype, *args):
    """``xp.random.<name>(*args, size=shape)`` cast to ``dtype``.

    NumPy and CuPy draw float64 by default; the cast keeps the parameters'
    dtype (CuPy can draw in float32 directly, NumPy cannot).
    """
    return xp.asarray(getattr(xp.random, name)(*args, size=shape)).astype(dtype, copy=False)


def array_of(x):
    """The array of ``x`` (a Variable, an array, or a NumPy scalar made a 0-d array).

    A NumPy scalar would otherwise promote by NumPy 1's scalar rules (a
    float32 scalar minus a Python float is float64 there); a 0-d array keeps
    its dtype under NumPy 1 and 2 alike.
    """
    if isinstance(x, Variable):
        return x.array
    if isinstance(x, numpy.generic):
        return numpy.asarray(x)
    return x


def as_operand(x):
    """``x`` as a Variable (itself if it is one); a NumPy scalar becomes a 0-d array first."""
    if isinstance(x, numpy.generic):
        x = numpy.asarray(x)
    return as_variable(x)


def xp_of(*xs):
    """The array module of Variables or arrays."""
    return get_array_module(*(array_of(x) for x in xs))


class XLogX(FunctionNode):
    """``y = x log x`` elementwise, with ``0 log 0 = 0`` (and ``y = 0`` for ``x < 0``).

    Its gradient is ``1 + log x`` where ``x > 0`` and is taken as 0 elsewhere;
    at ``x = 0``, where the true derivative is ``-inf``, backward warns.
    """

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        type_check.expect(in_types[0].dtype.kind == "f")

    def forward(self, inputs):
        self.retain_inputs((0,))
        x = inputs[0]
        xp = get_array_module(x)
        positive = x > 0
        return (force_array(x * xp.log(xp.where(positive, x, 1)), x.dtype),)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        xp = x.xp
        if (x.array == 0).any():
            warnings.warn(
                "xlogx: the gradient of x log x at x = 0 is -inf; it is taken as 0 there",
                RuntimeWarning,
                stacklevel=2,
            )
        positive = x.array > 0
        safe = F.where(positive, x, xp.ones_like(x.array))
        return (grad_outputs[0] * (1 + F.log(safe)) * positive.astype(x.dtype),)


def xlogx(x):
    """``x * log(x)`` elementwise, with ``0 log 0 = 0`` (see :class:`XLogX`).

    Args:
        x (Variable or array): non-negative values of a floating dtype.

    Returns:
        Variable: of ``x``'s shape and dtype.
    """
    return XLogX().apply((x,))[0]


def full_like(x, value):
    """An array of ``x``'s shape, dtype and module filled with ``value``."""
    a = array_of(x)
    return get_array_module(a).full(a.shape, value, a.dtype)


class ScalarFamily(Distribution):
    """The base of the families whose parameters are floating arrays that broadcast together.

    A subclass declares its parameters, in their positional order, as
    ``_parameters`` (each name mapped to the docstring of its read-only
    property) and its support as ``_support``; from them it gets one property
    per parameter, :attr:`batch_shape` (the parameters' broadcast shape),
    ``event_shape = ()``, :attr:`params` and :attr:`support`. Its own
    ``__init__`` keeps the public signature and passes the values on to this
    one, which converts them with :func:`as_parameter` and checks them with
    :func:`check_parameters`, naming the family in the errors.
    """

    _parameters = {}
    _support = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_parameters" not in cls.__dict__:
            return
        cls._family = cls.__name__
        names = tuple(cls._parameters)
        generated = {
            name: property(operator.attrgetter("_" + name), doc=f"Variable: {doc}")
            for name, doc in cls._parameters.items()
        }
        quoted = " and ".join(f"``{name}``" for name in names)
        shape = "the shape" if len(names) == 1 else "the broadcast shape"
        generated["batch_shape"] = property(
            ScalarFamily._get_batch_shape, doc=f"tuple: {shape} of {quoted}."
        )
        entries = ", ".join(f"'{name}': {name}" for name in names)
        generated["params"] = property(ScalarFamily._get_params, doc=f"dict: ``{{{entries}}}``.")
        generated["support"] = property(
            operator.attrgetter("_support"), doc=f"str: ``{cls._support!r}``."
        )
        for name, member in generated.items():
            if name not in cls.__dict__:
                setattr(cls, name, member)

    def __init__(self, *values):
        for name, value in zip(self._parameters, values, strict=True):
            setattr(self, "_" + name, as_parameter(self._family, name, value))
        self._batch_shape = check_parameters(
            self._family, **{name: getattr(self, "_" + name) for name in self._parameters}
        )

    def _get_batch_shape(self):
        return self._batch_shape

    def _get_params(self):
        return {name: getattr(self, name) for name in self._parameters}

    @property
    def event_shape(self):
        """tuple: ``()``."""
        return ()
