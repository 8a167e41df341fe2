"""rrelu: the randomized leaky rectified linear unit."""

import numbers

from dbr.core import FunctionNode, as_variable, backend, config, type_check
from dbr.functions.activation.leaky_relu import negative_part_coefficient


def _check_bound(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"rrelu: expected {name} to be a real number, got {value!r}")
    if not 0.0 <= value < 1.0:
        raise ValueError(f"rrelu: expected {name} in [0, 1), got {value!r}")
    return float(value)


class RReLU(FunctionNode):
    """Elementwise ``x`` where ``x >= 0`` and ``r * x`` elsewhere, with a slope array ``r``.

    In train mode ``r`` is the given array, or is drawn from ``U(lower,
    upper)`` when None; in test mode it is ``(lower + upper) / 2``
    everywhere. After ``apply``, :attr:`r` holds the slopes used.
    """

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, r=None):
        lower = _check_bound(lower, "l")
        upper = _check_bound(upper, "u")
        if not lower < upper:
            raise ValueError(f"rrelu: expected l < u, got l={lower!r}, u={upper!r}")
        if r is not None and not isinstance(r, backend.get_array_types()):
            raise TypeError(
                f"rrelu: expected r to be None, numpy.ndarray or cupy.ndarray, "
                f"got {type(r).__name__}"
            )
        self.lower = lower
        self.upper = upper
        self.r = r

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x_type = in_types[0]
        type_check.expect(x_type.dtype.kind == "f")
        if self.r is not None and config.train:
            r = type_check.make_variable(self.r, "r")
            type_check.expect(r.dtype == x_type.dtype, r.shape == x_type.shape)

    def forward(self, inputs):
        x = inputs[0]
        xp = backend.get_array_module(x)
        if not config.train:
            self.r = xp.full(x.shape, (self.lower + self.upper) / 2, x.dtype)
        elif self.r is None:
            self.r = xp.random.uniform(self.lower, self.upper, x.shape).astype(x.dtype)
        coef = negative_part_coefficient(x, self.r, x.dtype)
        coef *= x
        self.retain_inputs((0,))
        return (coef,)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0].array
        coef = negative_part_coefficient(x, self.r, x.dtype)
        return (grad_outputs[0] * as_variable(coef),)


def rrelu(x, l=1.0 / 8, u=1.0 / 3, *, r=None, return_r=False):  # Chainer's name
    """Randomized leaky rectified linear unit.

    .. math:: y_i = \\begin{cases} x_i & (x_i \\ge 0) \\\\ r_i x_i & (x_i < 0) \\end{cases}

    In train mode (``config.train``, the default) each slope :math:`r_i` is
    drawn from the uniform distribution :math:`U(l, u)`, unless ``r`` is
    given; in test mode every slope is :math:`(l + u) / 2` and ``r`` is
    ignored. The gradient is 1 where ``x >= 0`` and :math:`r_i` elsewhere.

    Args:
        x (Variable or array): input of a floating dtype (float16, float32 or
            float64), any shape.
        l (float): the lower bound of the slopes, in ``[0, 1)``.
        u (float): the upper bound of the slopes, in ``[0, 1)``, above ``l``.
        r (array or None): the slopes to use in train mode, of ``x``'s shape
            and dtype on its device (e.g. the ``r`` returned by an earlier
            call); None draws new ones.
        return_r (bool): also return the slopes used.

    Returns:
        Variable, or a tuple ``(y, r)`` of the output and the slope array
        when ``return_r`` is true.

    Raises:
        ValueError: ``l`` or ``u`` is outside ``[0, 1)``, or ``l >= u``.
        TypeError: ``l`` or ``u`` is not a real number, or ``r`` is not an array.
        InvalidType: ``r`` does not have ``x``'s shape and dtype.

    >>> import numpy as np
    >>> from dbr.core import using_config
    >>> with using_config('train', False):
    ...     rrelu(np.array([-1.0, 2.0], np.float32), l=0.1, u=0.3).array
    array([-0.2,  2. ], dtype=float32)
    """
    func = RReLU(l, u, r)
    y = func.apply((x,))[0]
    if return_r:
        return y, func.r
    return y
