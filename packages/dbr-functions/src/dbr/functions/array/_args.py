"""Argument checks and gradient helpers shared by the array functions."""

import numbers

from dbr.core import Variable, backend, type_check


def check_int(value, name, who):
    """Return ``value`` as an int, or raise a TypeError naming ``who`` and ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{who}: expected {name} to be an int, got {value!r}")
    return int(value)


def check_int_tuple(value, name, who):
    """Return an int or a sequence of ints as a tuple of ints, or raise a TypeError."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return (int(value),)
    if isinstance(value, (tuple, list)) and all(
        isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in value
    ):
        return tuple([int(v) for v in value])
    raise TypeError(f"{who}: expected {name} to be an int or a tuple of ints, got {value!r}")


def check_axis(x_type, axis):
    """Type-check that ``axis`` is an axis of ``x_type`` (negative counts from the end)."""
    type_check.expect(-x_type.ndim <= axis, x_type.ndim > axis)


def fill_none_grads(grads, shapes, dtype):
    """Replace the None entries of ``grads`` by zero Variables of the given shapes.

    At least one entry must be a Variable; its array module makes the zeros.
    """
    if all(g is not None for g in grads):
        return grads
    xp = backend.get_array_module(*[g for g in grads if g is not None])
    return tuple(
        [
            Variable(xp.zeros(shape, dtype), requires_grad=False) if g is None else g
            for g, shape in zip(grads, shapes)
        ]
    )


def inverse_permutation(perm):
    """The permutation that undoes ``perm`` (a tuple of axes)."""
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return tuple(inverse)
