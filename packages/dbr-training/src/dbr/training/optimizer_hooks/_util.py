"""Argument checks shared by the optimizer hooks."""

import math
import numbers


def check_real(who, name, value, *, minimum=None, positive=False):
    """Return ``value`` as a float after checking that it is a finite real number.

    Raises:
        TypeError: ``value`` is not a real number (bool is refused).
        ValueError: ``value`` is not finite, is below ``minimum``, or is not
            positive when ``positive`` is set.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{who}: {name} must be a real number, got {value!r} ({type(value).__name__})"
        )
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{who}: {name} must be finite, got {value!r}")
    if positive and value <= 0:
        raise ValueError(f"{who}: {name} must be positive, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{who}: {name} must be >= {minimum}, got {value!r}")
    return value
