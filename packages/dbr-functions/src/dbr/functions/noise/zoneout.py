"""zoneout: keep elements of the previous state at random, in training mode only."""

import numpy

from dbr.core import FunctionNode, Variable, as_variable, backend, config, type_check
from dbr.core.utils import force_array
from dbr.functions.noise._random import check_ratio, keep_flags

_ndarray = numpy.ndarray


class Zoneout(FunctionNode):
    """``where(flag, x, h)``, ``flag`` True with probability ``1 - ratio``; see :func:`zoneout`.

    Args:
        ratio (float): the probability of keeping ``h``.

    Attributes:
        flag_x (bool array or None): where the output took ``x``, drawn by
            ``forward`` (None before it).
    """

    def __init__(self, ratio):
        self.ratio = ratio
        self.flag_x = None

    @property
    def flag_h(self):
        """Where the output kept ``h``: the complement of ``flag_x`` (None before forward)."""
        flag_x = self.flag_x
        return None if flag_x is None else ~flag_x

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("h", "x"))
        type_check.expect(in_types.size() == 2)
        h_type, x_type = in_types
        type_check.expect(
            h_type.dtype.kind == "f",
            h_type.dtype == x_type.dtype,
            h_type.shape == x_type.shape,
        )

    def forward(self, inputs):
        h, x = inputs
        xp = numpy if type(x) is _ndarray else backend.get_array_module(x)
        self.flag_x = keep_flags(xp, x.shape, self.ratio)
        return (force_array(xp.where(self.flag_x, x, h)),)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        ret = []
        for i in indexes:
            flag = ~self.flag_x if i == 0 else self.flag_x
            ret.append(gy * Variable.from_array(flag.astype(gy.dtype), False))
        return tuple(ret)


def zoneout(h, x, ratio=0.5):
    """Zoneout: each element keeps its previous value ``h`` with probability ``ratio``.

    In training mode (``config.train``), ``y = where(flag, x, h)`` with
    ``flag`` True with probability ``1 - ratio`` for each element, drawn
    from ``numpy.random`` (``cupy.random`` on the GPU); gradients go to ``x``
    where ``flag`` holds and to ``h`` elsewhere. Outside training mode ``x``
    is returned (as a Variable). Nothing is rescaled. See Krueger et al.,
    *Zoneout: Regularizing RNNs by Randomly Preserving Hidden Activations*
    (2016).

    Args:
        h (Variable or array): the previous state, float16, float32 or float64.
        x (Variable or array): the new state, of ``h``'s shape and dtype.
        ratio (float): the probability of keeping ``h``, in ``[0, 1]``.

    Returns:
        Variable: of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> h = np.zeros(4, np.float32)
    >>> x = np.ones(4, np.float32)
    >>> zoneout(h, x, ratio=0.0).array
    array([1., 1., 1., 1.], dtype=float32)
    >>> zoneout(h, x, ratio=1.0).array
    array([0., 0., 0., 0.], dtype=float32)
    """
    check_ratio(ratio, "zoneout", upper_inclusive=True)
    if not config.train:
        return as_variable(x)
    return Zoneout(ratio).apply((h, x))[0]
