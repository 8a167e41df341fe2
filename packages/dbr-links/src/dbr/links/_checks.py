"""Checks of arguments shared by the links (private)."""

import numbers

import numpy


def is_int(value):
    """Return whether ``value`` is an integer: a Python or NumPy integer, not a bool."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_size(who, name, value, allow_none=False):
    """Raise ValueError unless ``value`` is a positive integer (or None when ``allow_none``).

    Any integer counts (``int``, ``numpy.int32``, ...; see :func:`is_int`),
    ``bool`` is refused; the message reads ``'{who}: {name} must be a
    positive int, got ...'``.
    """
    if value is None and allow_none:
        return
    if not is_int(value) or value <= 0:
        expected = "a positive int or None" if allow_none else "a positive int"
        raise ValueError(f"{who}: {name} must be {expected}, got {value!r}")


def check_int_at_least(who, name, value, low):
    """Raise TypeError unless ``value`` is an int (Python or NumPy, not a bool), else ValueError
    unless ``value >= low``.

    The messages read ``'{who}: expected {name} ...'``.
    """
    if not isinstance(value, (int, numpy.integer)) or isinstance(value, bool):
        raise TypeError(f"{who}: expected {name} to be an int, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{who}: expected {name} >= {low}, got {value}")


class ArgumentAssertionError(ValueError, AssertionError):
    """A bad argument that Chainer's link rejects with a failed assertion.

    A ValueError, as dbr reports bad arguments, that ``except AssertionError``
    also catches, as code written for Chainer expects.
    """


class UnsupportedArgumentError(ValueError, NotImplementedError):
    """A bad argument that Chainer's link rejects with NotImplementedError.

    A ValueError, as dbr reports bad arguments, that ``except
    NotImplementedError`` also catches, as code written for Chainer expects.
    """


def check_input_count(who, inputs, expected, why):
    """Raise :class:`ArgumentAssertionError` unless ``len(inputs) == expected``.

    Chainer's links assert the count in debug mode and fail to unpack
    (ValueError) otherwise; the error here is both, in either mode.
    """
    if len(inputs) != expected:
        raise ArgumentAssertionError(
            f"{who}: expected {expected} input(s) ({why}), got {len(inputs)}"
        )


def input_and_operand(who, link, name, inputs, operand, option):
    """``(x, y)`` from a forward's inputs: ``y`` is ``link``'s parameter ``name``, or an input.

    A link built with ``option=None`` has no parameter ``name`` and takes its
    ``operand`` (its bias, its scale) as the second input ``y``; one with the
    parameter takes ``x`` alone. Another number of inputs raises as
    :func:`check_input_count`.
    """
    if hasattr(link, name):
        check_input_count(who, inputs, 1, f"x; the link has the parameter {name}")
        return inputs[0], getattr(link, name)
    check_input_count(
        who, inputs, 2, f"x and the {operand} y; the link was built with {option}=None"
    )
    return inputs[0], inputs[1]


# The Returns and Raises of the forward of a link that takes its operand through
# input_and_operand (Bias, Scale).
OPERAND_FORWARD_DOC = """
        Returns:
            Variable: of ``x``'s shape and dtype.

        Raises:
            ValueError: for another number of inputs (also an AssertionError,
                as in Chainer).
"""
