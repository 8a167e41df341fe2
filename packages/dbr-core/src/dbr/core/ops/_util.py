"""Small helpers shared by the primitive ops."""

import numpy

from dbr.core import backend
from dbr.core.utils import force_array  # noqa: F401  (re-exported for the ops)
from dbr.core.variable import Variable

_SCALARS = (int, float, bool, numpy.generic)


def is_constant(value):
    """Whether ``value`` is a scalar or an array (not a Variable) usable as an operand."""
    return isinstance(value, (*_SCALARS, *backend.get_array_types()))


def check_operand(value, who):
    """Raise a TypeError naming ``who`` unless ``value`` is a Variable, scalar or array."""
    if isinstance(value, Variable) or is_constant(value):
        return
    raise TypeError(
        f"{who}: expected the other operand to be a Variable, a scalar, "
        f"numpy.ndarray or cupy.ndarray, got {type(value).__name__}"
    )


def as_operand_variable(value, like):
    """Wrap an array constant as a non-differentiable Variable of ``like``'s dtype."""
    dtype = like._data.dtype
    if value.dtype != dtype:
        value = value.astype(dtype)
    return Variable.from_array(value, False)


def scalar_of(value, dtype):
    """Return the Python scalar ``value`` cast to ``dtype`` (keeps NEP 50 from promoting)."""
    if isinstance(value, numpy.generic) and value.dtype == dtype:
        return value
    return dtype.type(value)
