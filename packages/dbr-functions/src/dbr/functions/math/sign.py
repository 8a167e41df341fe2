"""sign: the elementwise sign, which is not differentiable."""

from dbr.functions._docs import fill
from dbr.functions.math.rounding import DOCS, _apply_without_gradient


@fill(**DOCS)
def sign(x):
    """Elementwise sign: -1 where ``x < 0``, 0 where ``x == 0`` and 1 where ``x > 0``.

    As in Chainer, its gradient is None everywhere: the result is a new
    Variable that requires no gradient and has no creator, so it unchains
    the computational graph.

    {args_numeric_no_grad}

    >>> import numpy as np
    >>> sign(np.array([-2.5, 0.0, 3.0], np.float32)).array
    array([-1.,  0.,  1.], dtype=float32)
    """
    return _apply_without_gradient(x, "sign")
