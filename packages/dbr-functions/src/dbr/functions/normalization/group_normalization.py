"""group_normalization: normalization over groups of channels of each sample.

Each sample's channels are split into ``groups`` consecutive groups; each
group (with all its spatial positions) is one row normalized by its own mean
and variance, then every channel is scaled by ``gamma`` and shifted by
``beta``. The rows are batch normalization's channels in the
``(1, N * groups, K)`` view, so the statistics and the gradient of the
normalization are batch normalization's (and differentiable again).
"""

import numpy

from dbr.core import FunctionNode, ops, type_check
from dbr.core.backend import get_array_module
from dbr.functions.normalization._statistics import ChannelLayout, compute_dtype, moments
from dbr.functions.normalization.batch_normalization import (
    BatchNormalization,
    BatchNormalizationGrad,
    check_real,
)

_float64 = numpy.dtype(numpy.float64)


class GroupNormalization(FunctionNode):
    """Normalize each group of channels of each sample, then apply ``gamma`` and ``beta``.

    Args:
        groups (int): the number of channel groups (a divisor of the channels).
        eps (float): added to the variances.
    """

    _who = "group_normalization"

    def __init__(self, groups, eps=1e-5):
        if not isinstance(groups, (int, numpy.integer)) or isinstance(groups, bool):
            raise TypeError(f"{self._who}: expected groups to be an int, got {groups!r}")
        if groups < 1:
            raise ValueError(f"{self._who}: expected groups >= 1, got {groups}")
        self.groups = int(groups)
        self.eps = eps
        self.mean = None
        self.var = None
        self.inv_std = None
        self.centered = False

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "gamma", "beta"))
        x_type, gamma_type, beta_type = in_types
        type_check.expect(
            x_type.dtype.kind == "f",
            x_type.ndim >= 2,
            gamma_type.ndim == 1,
            gamma_type.dtype.kind == "f",
            beta_type.dtype == gamma_type.dtype,
            gamma_type.shape == beta_type.shape,
            x_type.shape[1] == gamma_type.shape[0],
        )
        type_check.expect(x_type.shape[1] % self.groups == 0)
        _check_nonempty_groups(x_type)

    def _sizes(self, shape):
        # (rows, elements per row, spatial size) of the views (N * groups, K) and (N, C, S).
        spatial = 1
        for s in shape[2:]:
            spatial *= s
        return shape[0] * self.groups, shape[1] // self.groups * spatial, spatial

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, gamma, beta = inputs
        xp = get_array_module(x)
        n, channels = x.shape[:2]
        rows, per_row, spatial = self._sizes(x.shape)
        dtype = compute_dtype(x.dtype, gamma.dtype)
        x = xp.ascontiguousarray(x)
        mean, var, centered = moments(x.reshape(1, rows, per_row).astype(dtype, copy=False))
        inv_std = var + self.eps
        xp.sqrt(inv_std, out=inv_std)
        xp.reciprocal(inv_std, out=inv_std)
        # y = x * scale + shift with one (scale, shift) per sample and channel.
        size = channels // self.groups
        g = gamma.astype(_float64).reshape(1, self.groups, size)
        scale = (inv_std.reshape(n, self.groups, 1) * g).reshape(n, channels, 1)
        shift = beta.astype(_float64).reshape(1, channels, 1)
        if centered is None:
            mean_nc = xp.repeat(mean.reshape(n, self.groups), size, axis=1)
            shift = shift - mean_nc[:, :, None] * scale
            y = x.reshape(n, channels, spatial).astype(dtype, copy=False) * scale.astype(dtype)
        else:
            y = centered.reshape(n, channels, spatial)
            y *= scale.astype(dtype)
        y += shift.astype(dtype)
        self.mean, self.var, self.inv_std = mean, var, inv_std
        self.centered = centered is not None
        return (y.reshape(x.shape).astype(x.dtype, copy=False),)

    def backward(self, indexes, grad_outputs):
        x, gamma = self.get_retained_inputs()
        shape = x.shape
        n, channels = shape[:2]
        rows, per_row, spatial = self._sizes(shape)
        # x and gamma may differ in dtype (float16 x, float32 gamma): the gradients are
        # computed in their promotion and returned in the dtype of their input.
        dtype = numpy.promote_types(x.dtype, gamma.dtype)
        gy = ops.cast(ops.reshape(grad_outputs[0], (n, channels, spatial)), dtype)
        x2 = ops.reshape(x, (rows, per_row))
        xp = x.xp
        ones = xp.ones(rows, dtype)
        ret = []
        for i in indexes:
            if i == 0:
                gamma3 = ops.reshape(ops.cast(gamma, dtype), (1, channels, 1))
                g_hat = ops.reshape(gy * gamma3, (rows, per_row))
                grad = BatchNormalizationGrad(
                    ChannelLayout((rows, per_row), (0,)),
                    self.mean,
                    self.inv_std,
                    self.eps,
                    need_params=False,
                    centered=self.centered,
                )
                ret.append(ops.reshape(grad.apply((x2, ones, g_hat))[0], shape))
            elif i == 1:
                # x_hat as a function of x (batch normalization of the rows), for double backward.
                standardize = BatchNormalization(
                    self.eps, axis=(1,), statistics=(self.mean, self.var)
                )
                x_hat = standardize.apply((ops.cast(x2, dtype), ones, xp.zeros(rows, dtype)))[0]
                x_hat = ops.reshape(x_hat, gy.shape)
                ret.append(ops.cast(ops.sum(gy * x_hat, axis=(0, 2)), gamma.dtype))
            else:
                ret.append(ops.cast(ops.sum(gy, axis=(0, 2)), gamma.dtype))
        return tuple(ret)


def _check_nonempty_groups(x_type):
    shape = type_check.eval(x_type.shape)
    if any(s == 0 for s in shape[1:]):
        raise type_check.InvalidType(
            "x.shape[i] > 0 for i >= 1 (each group has at least one element)",
            f"x.shape == {shape}",
        )


def group_normalization(x, groups, gamma, beta, eps=1e-5):
    """Group normalization: normalizes each group of channels of each sample.

    For ``x`` of shape ``(N, C, ...)``, the channels are split into
    ``groups`` consecutive groups of ``C / groups``; for sample ``n`` and
    the group ``g`` of channel ``c``, with the mean :math:`\\mu_{ng}` and
    biased variance :math:`\\sigma_{ng}^2` of the group's elements,

    .. math::

        y_{nc\\ldots} = \\gamma_c \\frac{x_{nc\\ldots} - \\mu_{ng}}
        {\\sqrt{\\sigma_{ng}^2 + \\epsilon}} + \\beta_c.

    float16 is computed in float32. Differentiable any number of times.

    Args:
        x (Variable or array): input of shape ``(N, C, ...)`` (at least two
            axes, every axis after the first non-empty), floating.
        groups (int): the number of groups; a divisor of ``C``.
        gamma (Variable or array): scale of shape ``(C,)``, floating; it
            may differ from ``x``'s dtype (float32 for float16 ``x`` in
            mixed16 mode), and the computation is in their promotion.
        beta (Variable or array): shift, of ``gamma``'s shape and dtype.
        eps (float): added to the variances.

    Returns:
        Variable: of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> x = np.array([[1.0, 3.0, 10.0, 30.0]], np.float32)
    >>> y = group_normalization(x, 2, np.ones(4, np.float32), np.zeros(4, np.float32))
    >>> y.array.round(3)
    array([[-1.,  1., -1.,  1.]], dtype=float32)
    """
    check_real(eps, "eps", "group_normalization", 0)
    return GroupNormalization(groups, eps).apply((x, gamma, beta))[0]
