"""batch_renormalization and fixed_batch_renormalization.

Batch renormalization corrects the batch statistics towards the running ones:
``y = gamma * (x_hat * r + d) + beta``, where ``x_hat`` is ``x`` normalized
by the batch statistics and ``r``, ``d`` (treated as constants) are clipped
ratios of the batch and running statistics. It is therefore batch
normalization with the scale ``gamma * r`` and the shift ``beta + gamma * d``,
and shares batch normalization's forward, gradient node and double backward.
"""

import warnings

import numpy

from dbr.core.backend import get_array_module
from dbr.functions.normalization.batch_normalization import (
    BatchNormalization,
    BatchNormalizationGrad,
    check_real,
    fixed_batch_normalization,
)

_float64 = numpy.dtype(numpy.float64)


class BatchRenormalization(BatchNormalization):
    """Batch normalization with the renormalization ``x_hat * r + d``.

    Args:
        rmax (float): ``r`` is clipped to ``[1 / rmax, rmax]``.
        dmax (float): ``d`` is clipped to ``[-dmax, dmax]``.
        eps (float): added to the variances.
        mean, var: the running statistics (arrays).
        decay (float): the decay of the running statistics.
        update_statistics (bool): update the running statistics in place.
    """

    def __init__(self, rmax, dmax, eps, mean, var, decay, update_statistics):
        super().__init__(eps, mean, var, decay)
        self.rmax = rmax
        self.dmax = dmax
        self.update_statistics = update_statistics
        self.r = None
        self.d = None

    def _scale_shift_params(self, gamma, beta, mean, var):
        xp = get_array_module(mean)
        running_std = self.running_var.reshape(-1).astype(_float64) + self.eps
        xp.sqrt(running_std, out=running_std)
        r = var + self.eps
        xp.sqrt(r, out=r)
        r /= running_std
        xp.clip(r, 1.0 / self.rmax, self.rmax, out=r)
        d = mean - self.running_mean.reshape(-1).astype(_float64)
        d /= running_std
        xp.clip(d, -self.dmax, self.dmax, out=d)
        self.r, self.d = r, d
        g = gamma.reshape(-1).astype(_float64)
        return g * r, beta.reshape(-1).astype(_float64) + g * d

    def _update_running(self, mean, var, m):
        if self.update_statistics:
            super()._update_running(mean, var, m)

    def backward(self, indexes, grad_outputs):
        x, gamma = self.get_retained_inputs()
        r = self.r.reshape(gamma.shape).astype(gamma.dtype)
        d = self.d.reshape(gamma.shape).astype(gamma.dtype)
        need_x = 0 in indexes
        need_params = 1 in indexes or 2 in indexes
        # The effective scale gamma * r stays a function of gamma, for double backward.
        grads = list(
            BatchNormalizationGrad(
                self.layout, self.mean, self.inv_std, self.eps, need_x, need_params, self.centered
            ).apply((x, gamma * r, grad_outputs[0]))
        )
        named = {}
        if need_x:
            named[0] = grads.pop(0)
        if need_params:
            g_scale, g_shift = grads
            named[1] = g_scale * r + g_shift * d
            named[2] = g_shift
        return tuple([named[i] for i in indexes])


def batch_renormalization(
    x,
    gamma,
    beta,
    rmax,
    dmax,
    eps=2e-5,
    running_mean=None,
    running_var=None,
    decay=0.9,
    update_statistics=False,
):
    """Batch renormalization: batch normalization corrected towards the running statistics.

    With the batch mean :math:`\\mu_B` and standard deviation
    :math:`\\sigma_B = \\sqrt{\\mathrm{var}_B + \\epsilon}`, and the running
    ones :math:`\\mu`, :math:`\\sigma = \\sqrt{\\mathrm{running\\_var} + \\epsilon}`,

    .. math::

        r = \\mathrm{clip}(\\sigma_B / \\sigma, 1/r_{max}, r_{max}), \\quad
        d = \\mathrm{clip}((\\mu_B - \\mu) / \\sigma, -d_{max}, d_{max}),

        y = \\gamma \\left(\\frac{x - \\mu_B}{\\sigma_B} r + d\\right) + \\beta,

    where ``r`` and ``d`` are constants for the gradient. The channels are
    axes ``1`` to ``gamma.ndim`` of ``x``; the statistics are over the others.

    As in Chainer, the running statistics are updated (in place) only with
    ``update_statistics=True``, like :func:`batch_normalization` does: the
    running variance takes the unbiased batch variance (Bessel's
    correction), and it is the variance, not the standard deviation, whose
    moving average is kept.

    Args:
        x (Variable or array): input of a floating dtype.
        gamma (Variable or array): scale, floating, of the channel shape.
        beta (Variable or array): shift, like ``gamma``.
        rmax (float): bound of ``r`` (positive).
        dmax (float): bound of ``|d|`` (non-negative).
        eps (float): added to the variances.
        running_mean (array): running mean, of ``gamma``'s shape (required).
        running_var (array): running variance, of ``gamma``'s shape (required).
        decay (float): decay rate of the running statistics.
        update_statistics (bool): update ``running_mean`` and ``running_var``.

    Returns:
        Variable: of ``x``'s shape and dtype.

    Raises:
        TypeError: when ``running_mean`` or ``running_var`` is None.

    >>> import numpy as np
    >>> x = np.array([[1.0], [3.0]], np.float32)
    >>> one, zero = np.ones(1, np.float32), np.zeros(1, np.float32)
    >>> y = batch_renormalization(x, one, zero, 1.0, 0.0, running_mean=zero, running_var=one)
    >>> y.array.round(3)
    array([[-1.],
           [ 1.]], dtype=float32)
    """
    who = "batch_renormalization"
    if running_mean is None:
        raise TypeError(f"{who}: running_mean is required, got None")
    if running_var is None:
        raise TypeError(f"{who}: running_var is required, got None")
    check_real(rmax, "rmax", who)
    if not rmax > 0:
        raise ValueError(f"{who}: expected rmax > 0, got {rmax!r}")
    check_real(dmax, "dmax", who, 0)
    check_real(eps, "eps", who, 0)
    check_real(decay, "decay", who)
    node = BatchRenormalization(
        rmax, dmax, eps, running_mean, running_var, decay, bool(update_statistics)
    )
    return node.apply((x, gamma, beta))[0]


def fixed_batch_renormalization(x, gamma, beta, mean, var, eps=2e-5):
    """Batch renormalization with given statistics (deprecated, as in Chainer).

    Equal to :func:`fixed_batch_normalization`, which it calls after emitting
    a DeprecationWarning.

    Args:
        x (Variable or array): input of a floating dtype.
        gamma, beta, mean, var (Variable or array): as in
            :func:`fixed_batch_normalization`.
        eps (float): added to ``var``.

    Returns:
        Variable: of ``x``'s shape and dtype.
    """
    warnings.warn(
        "fixed_batch_renormalization is deprecated; use fixed_batch_normalization instead",
        DeprecationWarning,
        stacklevel=2,
    )
    return fixed_batch_normalization(x, gamma, beta, mean, var, eps)
