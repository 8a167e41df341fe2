"""Checks of non-array arguments shared by the array functions."""

import operator


def reject_kwargs(who, kwargs):
    """Raise for any keyword in ``kwargs``: ValueError for ``use_cudnn``, TypeError otherwise."""
    if not kwargs:
        return
    if "use_cudnn" in kwargs:
        raise ValueError(
            f"{who}: the argument use_cudnn is not supported anymore; use "
            "dbr.core.using_config('use_cudnn', value) with value 'always', 'never' or 'auto'"
        )
    names = ", ".join(sorted(kwargs))
    raise TypeError(f"{who}: got unexpected keyword arguments: {names}")


def check_output_shape(output_shape, who):
    """Return ``output_shape`` as a pair of positive ints, or raise naming ``who``."""
    try:
        shape = tuple([operator.index(n) for n in output_shape])
    except TypeError:
        shape = None
    if shape is None or len(shape) != 2:
        raise TypeError(f"{who}: expected output_shape to be two ints, got {output_shape!r}")
    if min(shape) < 1:
        raise ValueError(f"{who}: expected a positive output_shape, got {shape}")
    return shape
