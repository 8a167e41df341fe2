"""gaussian: a sample of N(mean, exp(ln_var)) by the reparameterisation trick."""

import numpy

from dbr.core import FunctionNode, Variable, backend, type_check
from dbr.core.utils import force_array, force_type
from dbr.functions.noise._random import gpu_sample_dtype

_ndarray = numpy.ndarray


def _xp(x):
    return numpy if type(x) is _ndarray else backend.get_array_module(x)


class Gaussian(FunctionNode):
    """``mean + exp(ln_var / 2) * eps`` with ``eps ~ N(0, 1)``; see :func:`gaussian`.

    Args:
        eps (array or None): the standard normal noise (``mean``'s shape and
            dtype); None draws it at the first forward.
    """

    def __init__(self, eps=None):
        self.eps = eps

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("mean", "ln_var"))
        type_check.expect(in_types.size() == 2)
        mean_type, ln_var_type = in_types
        type_check.expect(
            mean_type.dtype.kind == "f",
            mean_type.dtype == ln_var_type.dtype,
            mean_type.shape == ln_var_type.shape,
        )
        eps = self.eps
        if eps is not None:
            type_check.expect(
                ln_var_type.shape == type_check.make_variable(eps.shape, "eps.shape"),
                ln_var_type.dtype == type_check.make_variable(eps.dtype, "eps.dtype"),
            )

    def forward(self, inputs):
        self.retain_inputs((1,))
        mean, ln_var = inputs
        xp = _xp(mean)
        dtype = mean.dtype
        if self.eps is None:
            if xp is numpy:
                eps = numpy.random.standard_normal(ln_var.shape).astype(dtype)
            else:
                draw = gpu_sample_dtype(dtype)
                eps = xp.random.standard_normal(ln_var.shape, dtype=draw).astype(dtype, copy=False)
            self.eps = force_array(eps)
        y = force_array(ln_var * force_type(dtype, 0.5))
        xp.exp(y, out=y)
        y *= self.eps
        y += mean
        return (y,)

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0]
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(gy)
            else:
                (ln_var,) = self.get_retained_inputs()
                ret.append(GaussianLnVarGrad(self.eps).apply((ln_var, gy))[0])
        return tuple(ret)


class GaussianLnVarGrad(FunctionNode):
    """``exp(ln_var / 2) * eps / 2 * gy``: the gradient of :func:`gaussian` in ``ln_var``.

    Its own gradients are half its output (in ``ln_var``) and the same node
    applied to the incoming gradient (in ``gy``).
    """

    def __init__(self, eps):
        self.eps = eps

    def forward(self, inputs):
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        ln_var, gy = inputs
        half = force_type(ln_var.dtype, 0.5)
        g = force_array(ln_var * half)
        _xp(ln_var).exp(g, out=g)
        g *= self.eps
        g *= half
        g *= gy
        return (g,)

    def backward(self, indexes, grad_outputs):
        (ln_var,) = self.get_retained_inputs()
        ggx = grad_outputs[0]
        ret = []
        for i in indexes:
            if i == 0:
                (out,) = self.get_retained_outputs()
                ret.append(ggx * out * 0.5)
            else:
                ret.append(GaussianLnVarGrad(self.eps).apply((ln_var, ggx))[0])
        return tuple(ret)


def gaussian(mean, ln_var, eps=None, return_eps=False):
    """Draw a sample of the Gaussian ``N(mean, exp(ln_var))``, differentiably.

    Computes ``y = mean + exp(ln_var / 2) * eps`` with ``eps`` drawn from the
    standard normal distribution (the reparameterisation trick), so that
    gradients reach ``mean`` and ``ln_var``. ``eps`` comes from
    ``numpy.random`` (``cupy.random`` on the GPU); ``numpy.random.seed``
    reproduces it. As in Chainer, it samples in test mode too.

    Args:
        mean (Variable or array): the mean, float16, float32 or float64.
        ln_var (Variable or array): the logarithm of the variance, of
            ``mean``'s shape and dtype.
        eps (array or None): noise to use instead of drawing it, of
            ``ln_var``'s shape and dtype and on its device.
        return_eps (bool): also return ``eps``, which can be passed back as
            ``eps`` to repeat the sample.

    Returns:
        Variable, or ``(Variable, eps)`` with ``return_eps``.

    >>> import numpy as np
    >>> mean = np.zeros(3, np.float32)
    >>> ln_var = np.log(np.full(3, 4.0, np.float32))
    >>> gaussian(mean, ln_var, eps=np.array([1.0, -0.5, 0.0], np.float32)).array
    array([ 2., -1.,  0.], dtype=float32)
    """
    if isinstance(eps, Variable):
        eps = eps.array
    func = Gaussian(eps)
    y = func.apply((mean, ln_var))[0]
    return (y, func.eps) if return_eps else y
