"""Small helpers that the convolution and deconvolution functions share."""

import numpy

from dbr.core import ops

_float16 = numpy.dtype(numpy.float16)


def compute_dtype(dtype):
    """The dtype products are computed in: float32 for float16, ``dtype`` otherwise."""
    return numpy.float32 if dtype == _float16 else dtype


def bias_grad(gy):
    """The gradient of a per-channel bias: ``gy`` summed over all axes but axis 1."""
    return ops.sum(gy, axis=(0,) + tuple(range(2, gy.ndim)))


def check_groups(groups, who):
    """``groups`` as an int >= 1, or raise naming ``who``."""
    if isinstance(groups, bool) or not hasattr(groups, "__index__"):
        raise TypeError(f"{who}: groups must be an int, got {groups!r}")
    if groups < 1:
        raise ValueError(f"{who}: groups must be >= 1, got {groups!r}")
    return int(groups)
