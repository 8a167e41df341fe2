"""gumbel_softmax: a differentiable sample of a categorical distribution."""

import numbers

from dbr.core import Variable, as_variable, backend
from dbr.functions._invalid_type import invalid_type
from dbr.functions.activation.softmax import softmax


def gumbel_softmax(log_pi, tau=0.1, axis=1):
    """Draw a Gumbel-Softmax sample along ``axis``.

    .. math::
        y_i = \\frac{\\exp((g_i + \\log \\pi_i) / \\tau)}
                    {\\sum_j \\exp((g_j + \\log \\pi_j) / \\tau)},

    where the :math:`g_i` are independent draws from the standard Gumbel
    distribution (from ``numpy.random``, or ``cupy.random`` on the GPU) and
    :math:`\\tau` is the temperature: as it goes to 0 the samples approach
    one-hot vectors drawn with probabilities proportional to :math:`\\pi`.
    Gradients reach ``log_pi`` (and ``tau`` when it is a Variable). See
    Jang et al., *Categorical Reparameterization with Gumbel-Softmax* (2017).

    Args:
        log_pi (Variable or array): unnormalised log-probabilities, float16,
            float32 or float64. A 0-d input gives a 0-d Variable of ones, as
            in Chainer.
        tau (float or Variable): the temperature, > 0 (a Variable: 0-d, or
            broadcastable to ``log_pi``, of its dtype).
        axis (int): the axis holding the categories.

    Returns:
        Variable: the sample, of ``log_pi``'s shape and dtype; it sums to 1
        along ``axis``.

    >>> import numpy as np
    >>> y = gumbel_softmax(np.log(np.array([[0.2, 0.3, 0.5]], np.float32)), tau=0.5)
    >>> y.shape, bool(abs(y.array.sum() - 1) < 1e-6)
    ((1, 3), True)
    """
    if isinstance(tau, numbers.Real) and not tau > 0:
        raise ValueError(f"gumbel_softmax: expected tau > 0, got {tau!r}")
    data = log_pi.array if isinstance(log_pi, Variable) else log_pi
    dtype = data.dtype
    if dtype.kind != "f":
        expect, actual = "log_pi.dtype.kind == 'f'", f"{dtype.kind!r} != 'f'"
        raise invalid_type("gumbel_softmax", expect, actual)
    xp = backend.get_array_module(data)
    if data.ndim < 1:
        return Variable(xp.ones((), dtype))
    # Drawn in float64 and cast, as Chainer does, on either device: cupy.random's float32
    # and float64 streams differ, so a dtype-dependent draw would give a float64 copy of
    # log_pi (as the numerical gradient evaluates) other noise than log_pi itself.
    g = xp.random.gumbel(size=data.shape).astype(dtype, copy=False)
    return softmax((as_variable(log_pi) + g) / tau, axis=axis)
