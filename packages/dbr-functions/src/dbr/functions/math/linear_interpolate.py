"""linear_interpolate: ``p * x + (1 - p) * y``, elementwise."""

from dbr.core import FunctionNode, type_check
from dbr.core.utils import force_array, force_type


class LinearInterpolate(FunctionNode):
    """Elementwise ``p * x + (1 - p) * y`` for three inputs of one shape and dtype."""

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("p", "x", "y"))
        p, x, y = in_types
        type_check.expect(
            p.dtype.kind == "f",
            x.dtype == p.dtype,
            y.dtype == p.dtype,
            x.shape == p.shape,
            y.shape == p.shape,
        )

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        p, x, y = inputs
        z = force_array(x - y)
        z *= p
        z += y
        return (z,)

    def backward(self, indexes, grad_outputs):
        p, x, y = self.get_retained_inputs()
        return LinearInterpolateGrad(indexes).apply((p, x, y, grad_outputs[0]))


class LinearInterpolateGrad(FunctionNode):
    """The gradients of linear_interpolate for the inputs at ``indexes`` (0: p, 1: x, 2: y).

    ``(x - y) * gz`` for ``p``, ``p * gz`` for ``x`` and ``(1 - p) * gz`` for
    ``y``, in the order of ``indexes``; its inputs are ``(p, x, y, gz)``.
    """

    def __init__(self, indexes):
        self.indexes = tuple(indexes)

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2, 3))
        p, x, y, gz = inputs
        ret = []
        for i in self.indexes:
            if i == 0:
                g = force_array(x - y)
                g *= gz
            elif i == 1:
                g = force_array(p * gz)
            else:
                g = force_array(force_type(p.dtype, 1) - p)
                g *= gz
            ret.append(g)
        return tuple(ret)

    def backward(self, indexes, grad_outputs):
        p, x, y, gz = self.get_retained_inputs()
        gg = dict.fromkeys((0, 1, 2))
        for i, g in zip(self.indexes, grad_outputs):
            gg[i] = g
        ggp, ggx, ggy = gg[0], gg[1], gg[2]
        ret = []
        for i in indexes:
            if i == 0:
                terms = [None if ggx is None else ggx * gz, None if ggy is None else -ggy * gz]
            elif i == 1:
                terms = [None if ggp is None else ggp * gz]
            elif i == 2:
                terms = [None if ggp is None else -ggp * gz]
            else:
                terms = [
                    None if ggp is None else ggp * (x - y),
                    None if ggx is None else ggx * p,
                    None if ggy is None else ggy * (1.0 - p),
                ]
            ret.append(_total(terms))
        return tuple(ret)


def _total(terms):
    terms = [t for t in terms if t is not None]
    if not terms:
        return None
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


def linear_interpolate(p, x, y):
    """Elementwise linear interpolation between ``y`` and ``x`` with weight ``p``.

    .. math::
        f(p, x, y) = p x + (1 - p) y.

    Args:
        p (Variable or array): the weight of ``x``, of a floating dtype.
        x (Variable or array): input of ``p``'s shape and dtype.
        y (Variable or array): input of ``p``'s shape and dtype.

    Returns:
        Variable: of ``p``'s shape and dtype.

    >>> import numpy as np
    >>> p = np.array([0.0, 0.25, 1.0], np.float32)
    >>> x = np.full(3, 4.0, np.float32)
    >>> y = np.zeros(3, np.float32)
    >>> linear_interpolate(p, x, y).array
    array([0., 1., 4.], dtype=float32)
    """
    return LinearInterpolate().apply((p, x, y))[0]
