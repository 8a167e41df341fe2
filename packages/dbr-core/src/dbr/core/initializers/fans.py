"""Fan-in and fan-out of a weight shape."""

import math


def get_fans(shape):
    """Return the ``(fan_in, fan_out)`` of a weight of shape ``shape``.

    The first axis counts output units and the second input units; any
    further axes form the receptive field (a convolution kernel of shape
    ``(out_channels, in_channels, kh, kw)``), whose size multiplies both::

        fan_in  = shape[1] * prod(shape[2:])
        fan_out = shape[0] * prod(shape[2:])

    Args:
        shape (tuple of ints): The weight's shape, of length 2 or more.

    Returns:
        tuple of two ints: ``(fan_in, fan_out)``.

    Raises:
        ValueError: ``shape`` has fewer than two axes.

    >>> get_fans((64, 3, 5, 5))
    (75, 1600)
    """
    shape = tuple(int(n) for n in shape)
    if len(shape) < 2:
        raise ValueError(f"get_fans: the shape must have 2 or more axes, got {shape}")
    receptive_field = math.prod(shape[2:])
    return shape[1] * receptive_field, shape[0] * receptive_field


_FAN_OPTIONS = ("fan_in", "fan_out")


def _check_fan_option(fan_option):
    if fan_option not in _FAN_OPTIONS:
        raise ValueError(f"fan_option must be 'fan_in' or 'fan_out', got {fan_option!r}")
    return fan_option


def _get_fan(shape, fan_option):
    fan_in, fan_out = get_fans(shape)
    return fan_in if fan_option == "fan_in" else fan_out
