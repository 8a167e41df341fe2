"""``chainer.distributions.utils``: ``_modified_xlogx``, composed of dbr.functions."""

import dbr.functions as F
from dbr.core import as_variable


def _modified_xlogx(x):
    """``x * log(x)`` elementwise with ``0 log 0 = 0``, differentiable twice.

    Chainer's helper for the entropies of discrete distributions. Where
    ``x`` is 0 the value and the gradient are 0 (Chainer's gradient there is
    ``-inf``, with a RuntimeWarning).

    Args:
        x (Variable or array): non-negative values, of a float dtype.

    Returns:
        Variable: ``x log x``, of ``x``'s shape and dtype.
    """
    x = as_variable(x)
    if x.dtype.kind != "f":
        raise TypeError(f"_modified_xlogx: expected x of a float dtype, got {x.dtype}")
    xp = x.xp
    positive = x.array > 0
    return x * F.log(F.where(positive, x, xp.ones_like(x.array)))
