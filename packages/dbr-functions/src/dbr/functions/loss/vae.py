"""Losses of variational autoencoders: bernoulli_nll, gaussian_kl_divergence, gaussian_nll.

Each is one FunctionNode over inputs of one floating dtype whose shapes
broadcast together; ``reduce='sum'`` sums the elementwise loss and
``reduce='mean'`` averages it over the broadcast shape. Backward is
written with dbr functions, so the losses can be differentiated again.
"""

import math

import numpy

from dbr.core import FunctionNode, backend, ops, type_check
from dbr.core.utils import force_array
from dbr.functions._docs import fill
from dbr.functions.activation.sigmoid import sigmoid
from dbr.functions.math.exponential import exp

_LOG_2PI = math.log(2 * math.pi)


def _check_reduce(who, reduce):
    if reduce not in ("sum", "mean", "no"):
        raise ValueError(f"{who}: expected reduce to be 'sum', 'mean' or 'no', got {reduce!r}")


def _check_inputs(in_types, names):
    type_check.argname(in_types, names)
    first = in_types[0]
    type_check.expect(first.dtype.kind == "f")
    for other in in_types[1:]:
        type_check.expect(first.dtype == other.dtype)
    type_check.expect_broadcast_shapes(*[t.shape for t in in_types])


def _acc_dtype(dtype):
    """The dtype of the computation: float32 for float16 inputs, else ``dtype``."""
    return numpy.dtype(numpy.float32) if dtype == numpy.float16 else dtype


def _reduced(loss, reduce, dtype):
    """``loss`` summed (``'sum'``), averaged (``'mean'``) or not, as an array of ``dtype``."""
    if reduce == "sum":
        loss = loss.sum()
    elif reduce == "mean":
        loss = loss.mean()
    return force_array(loss, dtype)


class _VAELoss(FunctionNode):
    """Common plumbing: the type check, the reduction, and the output gradient broadcast back.

    A subclass names its inputs in ``names`` and writes ``loss(xp, dtype,
    *inputs)``, the elementwise loss as an array of the computation dtype
    ``dtype``, and ``grads(indexes, g, *inputs)``, the list of the gradients
    of the inputs (those in ``indexes`` at least) given ``g``, the output
    gradient broadcast to the loss's shape.
    """

    names = ()

    def __init__(self, reduce):
        self.reduce = reduce
        self._shape = None
        self._in_shapes = None

    def check_type_forward(self, in_types):
        _check_inputs(in_types, self.names)

    def forward(self, inputs):
        self.retain_inputs(tuple(range(len(inputs))))
        first = inputs[0]
        loss = self.loss(backend.get_array_module(first), _acc_dtype(first.dtype), *inputs)
        self._in_shapes = tuple([x.shape for x in inputs])
        self._shape = loss.shape
        return (_reduced(loss, self.reduce, first.dtype),)

    def backward(self, indexes, grad_outputs):
        g = grad_outputs[0]
        if self.reduce == "sum":
            g = ops.broadcast_to(g, self._shape)
        elif self.reduce == "mean":
            g = ops.broadcast_to(g * (1.0 / max(math.prod(self._shape), 1)), self._shape)
        grads = self.grads(indexes, g, *self.get_retained_inputs())
        return tuple([ops.sum_to(grads[i], self._in_shapes[i]) for i in indexes])


class BernoulliNLL(_VAELoss):
    """``softplus(y) - x * y``: -log of the Bernoulli(sigmoid(y)) likelihood of ``x``."""

    names = ("x", "y")

    @staticmethod
    def loss(xp, dtype, x, y):
        """The elementwise loss."""
        # softplus(y) == log1p(exp(-|y|)) + max(y, 0), which cannot overflow.
        loss = force_array(xp.abs(y, dtype=dtype))
        xp.negative(loss, out=loss)
        xp.exp(loss, out=loss)
        xp.log1p(loss, out=loss)
        loss += xp.maximum(y, 0, dtype=dtype)
        return loss - xp.multiply(x, y, dtype=dtype)

    @staticmethod
    def grads(indexes, g, x, y):
        """The requested input gradients."""
        grads = [None, None]
        if 0 in indexes:
            grads[0] = -g * y
        if 1 in indexes:
            grads[1] = g * (sigmoid(y) - x)
        return grads


class GaussianKLDivergence(_VAELoss):
    """``(mean**2 + exp(ln_var) - ln_var - 1) / 2``: KL(N(mean, exp(ln_var)) || N(0, 1))."""

    names = ("mean", "ln_var")

    @staticmethod
    def loss(xp, dtype, mean, ln_var):
        """The elementwise divergence."""
        loss = force_array(xp.exp(ln_var, dtype=dtype))
        loss -= ln_var
        loss = loss + xp.square(mean, dtype=dtype)
        loss -= 1
        loss *= dtype.type(0.5)
        return loss

    @staticmethod
    def grads(indexes, g, mean, ln_var):
        """The requested input gradients."""
        grads = [None, None]
        if 0 in indexes:
            grads[0] = g * mean
        if 1 in indexes:
            grads[1] = (g * 0.5) * (exp(ln_var) - 1.0)
        return grads


class GaussianNLL(_VAELoss):
    """``(log(2 pi) + ln_var + (x - mean)**2 exp(-ln_var)) / 2``: -log N(x; mean, exp(ln_var))."""

    names = ("x", "mean", "ln_var")

    @staticmethod
    def loss(xp, dtype, x, mean, ln_var):
        """The elementwise loss."""
        loss = force_array(xp.subtract(x, mean, dtype=dtype))
        loss *= loss
        loss = loss * xp.exp(xp.negative(ln_var, dtype=dtype))
        loss += ln_var
        loss += dtype.type(_LOG_2PI)
        loss *= dtype.type(0.5)
        return loss

    @staticmethod
    def grads(indexes, g, x, mean, ln_var):
        """The requested input gradients."""
        diff = x - mean
        precision = exp(-ln_var)
        grads = [None, None, None]
        if 0 in indexes or 1 in indexes:
            g_x = g * diff * precision
            grads[0] = g_x
            grads[1] = -g_x
        if 2 in indexes:
            grads[2] = (g * 0.5) * (1.0 - diff * diff * precision)
        return grads


# The reduce argument and the result of bernoulli_nll and gaussian_nll (see _docs.fill).
_REDUCE_AND_RETURNS = """\
    reduce (str): ``'sum'`` returns the sum and ``'mean'`` the
        mean over the broadcast shape (a 0-d array); ``'no'`` the
        elementwise loss, of the broadcast shape.

Returns:
    Variable: the loss, of ``x``'s dtype."""


@fill(reduce_and_returns=_REDUCE_AND_RETURNS)
def bernoulli_nll(x, y, reduce="sum"):
    """Negative log-likelihood of ``x`` under a Bernoulli distribution of logits ``y``.

    .. math::
        -\\log B(x; p) = -\\sum_i \\{x_i \\log p_i + (1 - x_i) \\log(1 - p_i)\\},
        \\quad p = \\mathrm{sigmoid}(y),

    computed as ``softplus(y) - x * y``, so ``y`` can be the raw output of a
    linear layer. Both ``x`` and ``y`` are differentiable.

    Args:
        x (Variable or array): the data (values in [0, 1]), float16, float32
            or float64.
        y (Variable or array): the logits, of ``x``'s dtype and a shape that
            broadcasts with ``x``'s.
    {reduce_and_returns}

    >>> import numpy as np
    >>> x = np.array([1.0, 0.0], np.float32)
    >>> y = np.array([0.0, 0.0], np.float32)
    >>> round(float(bernoulli_nll(x, y).array), 5)
    1.38629
    """
    _check_reduce("bernoulli_nll", reduce)
    return BernoulliNLL(reduce).apply((x, y))[0]


def gaussian_kl_divergence(mean, ln_var, reduce="sum"):
    """KL divergence of a diagonal Gaussian from the standard Gaussian.

    .. math::
        D_{KL}(N(\\mu, S) \\| N(0, I)) = \\frac{1}{2} \\sum_i
        (\\mu_i^2 + \\sigma_i^2 - \\log \\sigma_i^2 - 1),

    with :math:`S` diagonal, :math:`S_{ii} = \\sigma_i^2`.

    Args:
        mean (Variable or array): :math:`\\mu`, float16, float32 or float64.
        ln_var (Variable or array): :math:`\\log \\sigma^2`, of ``mean``'s
            dtype and a shape that broadcasts with ``mean``'s.
        reduce (str): ``'sum'`` returns the sum and ``'mean'`` the
            mean over the broadcast shape (a 0-d array); ``'no'`` the
            elementwise terms, of the broadcast shape.

    Returns:
        Variable: the divergence, of ``mean``'s dtype.

    >>> import numpy as np
    >>> mean = np.array([0.0, 1.0], np.float32)
    >>> ln_var = np.array([0.0, 0.0], np.float32)
    >>> gaussian_kl_divergence(mean, ln_var, reduce='no').array
    array([0. , 0.5], dtype=float32)
    """
    _check_reduce("gaussian_kl_divergence", reduce)
    return GaussianKLDivergence(reduce).apply((mean, ln_var))[0]


@fill(reduce_and_returns=_REDUCE_AND_RETURNS)
def gaussian_nll(x, mean, ln_var, reduce="sum"):
    """Negative log-likelihood of ``x`` under a diagonal Gaussian.

    .. math::
        -\\log N(x; \\mu, S) = \\log \\sqrt{(2 \\pi)^D |S|}
        + \\frac{1}{2} (x - \\mu)^\\top S^{-1} (x - \\mu),

    with :math:`S` diagonal, :math:`S_{ii} = \\sigma_i^2 = \\exp(\\mathrm{ln\\_var}_i)`;
    elementwise, ``(log(2 pi) + ln_var + (x - mean)**2 exp(-ln_var)) / 2``.

    Args:
        x (Variable or array): the data, float16, float32 or float64.
        mean (Variable or array): :math:`\\mu`, of ``x``'s dtype.
        ln_var (Variable or array): :math:`\\log \\sigma^2`, of ``x``'s dtype.
            The three shapes must broadcast together.
    {reduce_and_returns}

    >>> import numpy as np
    >>> x = np.array([0.0, 1.0], np.float32)
    >>> zeros = np.zeros(2, np.float32)
    >>> gaussian_nll(x, zeros, zeros, reduce='no').array.round(4)
    array([0.9189, 1.4189], dtype=float32)
    """
    _check_reduce("gaussian_nll", reduce)
    return GaussianNLL(reduce).apply((x, mean, ln_var))[0]
