"""batch_normalization and fixed_batch_normalization: per-channel normalization.

Both normalize ``x`` per channel (the axes of ``gamma``) and then scale by
``gamma`` and shift by ``beta``; batch normalization uses the mean and
variance of the batch, fixed batch normalization the ones it is given.

The statistics take one pass over ``x`` (see
:mod:`dbr.functions.normalization._statistics`), the output one more, and
the first-order backward is one node, :class:`BatchNormalizationGrad`, whose
forward computes all gradients in three passes and whose backward is written
with dbr functions, so that the function is twice differentiable (indeed
infinitely). float16 inputs are computed in float32.
"""

import numbers
import warnings

import numpy

from dbr.core import FunctionNode, Variable, ops, type_check
from dbr.core.backend import get_array_module
from dbr.functions._gpu import ACC_PREAMBLE, kernel
from dbr.functions.normalization._statistics import (
    ChannelLayout,
    channel_dot,
    channel_sum,
    column,
    compute_dtype,
    moments,
    needs_centering,
)

_float64 = numpy.dtype(numpy.float64)
_KWARGS = ("eps", "running_mean", "running_var", "decay", "axis")

# The GPU paths: per-channel arrays are (1, C, 1) and broadcast over the (A, C, B) view
# of x; A is the dtype of the statistics (float32 for float16 and float32 inputs).
_BN_INV_STD_ELEMENTWISE = {
    "in_params": "A var, float64 eps",
    "out_params": "A inv_std",
    "operation": "inv_std = (A)1 / sqrt(var + (A)eps)",
    "name": "dbr_bn_inv_std",
}
_BN_FORWARD_ELEMENTWISE = {
    "in_params": "T x, A mean, A inv_std, G gamma, G beta",
    "out_params": "T y",
    "operation": "y = (T)(((A)x - mean) * (inv_std * (A)gamma) + (A)beta)",
    "name": "dbr_bn_forward",
}
# The per-channel sums over (A, B) are CuPy's plain sums of an elementwise kernel's
# terms: a reduction kernel that reads broadcast per-channel inputs ran 30-50 times
# slower on an H200 (1-2 ms a layer of ResNet-18 at batch 128) than the extra pass costs.
_BN_SQUARED_DEVIATION_ELEMENTWISE = {
    "in_params": "T x, A mean",
    "out_params": "A d2",
    "operation": "const A d = (A)x - mean; d2 = d * d",
    "name": "dbr_bn_squared_deviation",
}
_BN_UPDATE_RUNNING_ELEMENTWISE = {
    "in_params": "A mean, A var, float64 decay, float64 adjust",
    "out_params": "R running_mean, R running_var",
    "operation": (
        "typedef dbr_acc<R>::type W;"
        "running_mean = (R)((W)running_mean * (W)decay + (W)((1 - decay) * (double)mean));"
        "running_var = (R)((W)running_var * (W)decay"
        " + (W)((1 - decay) * adjust * (double)var))"
    ),
    "name": "dbr_bn_update_running",
    "preamble": ACC_PREAMBLE,
}
_BN_GGAMMA_TERMS_ELEMENTWISE = {
    "in_params": "T gy, T x, A mean, A inv_std",
    "out_params": "A terms",
    "operation": "terms = (A)gy * (((A)x - mean) * inv_std)",
    "name": "dbr_bn_ggamma_terms",
}
_FIXED_BN_ELEMENTWISE = {
    "in_params": "T x, G gamma, G beta, G mean, G var, float64 eps",
    "out_params": "T y",
    "operation": (
        "typedef dbr_acc<T>::type A;"
        "const A inv_std = (A)1 / sqrt((A)var + (A)eps);"
        "y = (T)(((A)x - (A)mean) * (inv_std * (A)gamma) + (A)beta)"
    ),
    "name": "dbr_fixed_bn_forward",
    "preamble": ACC_PREAMBLE,
}
_BN_GRAD_ELEMENTWISE = {
    "in_params": "T x, T gy, A mean, A inv_std, G gamma, A gbeta, A ggamma, float64 inv_m",
    "out_params": "T gx",
    "operation": (
        "const A x_hat = ((A)x - mean) * inv_std;"
        "gx = (T)((A)gamma * inv_std * ((A)gy - (gbeta + x_hat * ggamma) * (A)inv_m))"
    ),
    "name": "dbr_bn_grad",
}


# -- arguments -----------------------------------------------------------------------


def normalize_axis(axis, who):
    """Chainer's ``axis`` argument as None or a tuple of ints in ascending order."""
    if axis is None:
        return None
    if _is_int(axis):
        return (int(axis),)
    if isinstance(axis, tuple) and all(_is_int(a) for a in axis):
        if any(a >= b for a, b in zip(axis, axis[1:])):
            raise ValueError(
                f"{who}: expected the values of axis to be distinct and in ascending order, "
                f"got {axis}"
            )
        return tuple([int(a) for a in axis])
    raise TypeError(f"{who}: expected axis to be None, an int or a tuple of ints, got {axis!r}")


def check_real(value, name, who, minimum=None):
    """Raise unless ``value`` is a real number (at least ``minimum`` if given)."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{who}: expected {name} to be a real number, got {value!r}")
    if minimum is not None and not value >= minimum:
        raise ValueError(f"{who}: expected {name} >= {minimum}, got {value!r}")


def _is_int(value):
    return isinstance(value, (int, numpy.integer)) and not isinstance(value, bool)


def key_axes(x_ndim, gamma_ndim, axis):
    """The channel axes of ``x``: those not in ``axis`` (by default, axes 1 to gamma.ndim)."""
    if axis is None:
        return tuple(range(1, gamma_ndim + 1))
    reduced = {a % x_ndim for a in axis}
    return tuple([i for i in range(x_ndim) if i not in reduced])


def check_channel_types(in_types, names, axis):
    """Type-check ``x`` and per-channel inputs of ``gamma``'s shape; return the channel axes."""
    type_check.argname(in_types, names)
    x_type, gamma_type = in_types[0], in_types[1]
    type_check.expect(x_type.dtype.kind == "f", gamma_type.dtype.kind == "f")
    for t in in_types[2:]:
        type_check.expect(t.dtype == gamma_type.dtype, t.shape == gamma_type.shape)
    x_ndim = type_check.eval(x_type.ndim)
    gamma_ndim = type_check.eval(gamma_type.ndim)
    if axis is None:
        type_check.expect(x_type.ndim >= gamma_type.ndim + 1)
    else:
        for a in axis:
            if not -x_ndim <= a < x_ndim:
                raise type_check.InvalidType(f"-x.ndim <= {a} < x.ndim", f"x.ndim == {x_ndim}")
        normalized = [a % x_ndim for a in axis]
        if any(a >= b for a, b in zip(normalized, normalized[1:])):
            raise type_check.InvalidType(
                f"axis {axis} distinct and in ascending order once negative values count "
                "from the last axis",
                f"x.ndim == {x_ndim}",
            )
    key = key_axes(x_ndim, gamma_ndim, axis)
    type_check.expect(gamma_type.ndim == len(key))
    for i, k in enumerate(key):
        type_check.expect(x_type.shape[k] == gamma_type.shape[i])
    return key


def check_nonempty(x_type, key):
    """Raise InvalidType when a reduced axis of ``x`` has no element (no statistics exist)."""
    shape = type_check.eval(x_type.shape)
    for a in range(len(shape)):
        if a not in key and shape[a] == 0:
            raise type_check.InvalidType(
                f"x.shape[{a}] > 0 (an axis the statistics are computed over)",
                f"x.shape == {shape}",
            )


def check_statistic(name, a, shape, expected, context=""):
    """Raise InvalidType unless ``a`` is a floating array (not a Variable) of ``shape``.

    ``expected`` words the expectation in the message; ``context`` is added to
    its description of what ``a`` is.
    """
    actual = getattr(a, "shape", None)
    dtype = getattr(a, "dtype", None)
    is_array = not isinstance(a, Variable) and dtype is not None
    if not is_array or actual != shape or dtype.kind != "f":
        raise type_check.InvalidType(
            expected, f"{name} is {type(a).__name__} of shape {actual} and dtype {dtype}{context}"
        )


def check_running(gamma_type, arrays):
    """Raise InvalidType unless each ``(name, array)`` is a floating array of gamma's shape."""
    gamma_shape = type_check.eval(gamma_type.shape)
    for name, a in arrays:
        if a is not None:
            check_statistic(
                name,
                a,
                gamma_shape,
                f"{name} is a floating array and {name}.shape == gamma.shape",
                f", gamma.shape == {gamma_shape}",
            )


def update_running(running_mean, running_var, mean, var, decay, m):
    """Move the running statistics (in place) towards ``mean`` and the unbiased ``var``."""
    adjust = m / max(m - 1, 1)
    if (
        type(running_mean) is not numpy.ndarray
        and running_mean.flags.c_contiguous
        and running_var.flags.c_contiguous
    ):
        # One kernel instead of eight small ones: this runs for every layer in every step.
        kernel(_BN_UPDATE_RUNNING_ELEMENTWISE)(
            mean, var, decay, adjust, running_mean.reshape(-1), running_var.reshape(-1)
        )
        return
    running_mean *= decay
    running_mean += ((1 - decay) * mean).reshape(running_mean.shape).astype(running_mean.dtype)
    running_var *= decay
    running_var += (
        ((1 - decay) * adjust * var).reshape(running_var.shape).astype(running_var.dtype)
    )


# -- batch normalization ----------------------------------------------------------------


class BatchNormalization(FunctionNode):
    """Normalization by the batch statistics, then ``gamma * x_hat + beta``.

    Args:
        eps (float): added to the variance.
        mean, var: running statistics updated in place, or None.
        decay (float): the decay of the running statistics.
        axis: the reduced axes (None: all but the channel axes 1 to gamma.ndim).
        statistics: ``(mean, var)`` of the batch as float64 arrays when the
            caller has them already (they are then not computed again).
    """

    def __init__(self, eps=2e-5, mean=None, var=None, decay=0.9, axis=None, *, statistics=None):
        self.eps = eps
        self.running_mean = mean
        self.running_var = var
        self.decay = decay
        self.axis = normalize_axis(axis, "batch_normalization")
        self.statistics = statistics
        self.layout = None
        self.mean = None
        self.inv_std = None
        self.centered = False

    def check_type_forward(self, in_types):
        key = check_channel_types(in_types, ("x", "gamma", "beta"), self.axis)
        check_nonempty(in_types[0], key)
        check_running(
            in_types[1], (("running_mean", self.running_mean), ("running_var", self.running_var))
        )

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, gamma, beta = inputs
        layout = self.layout = ChannelLayout(x.shape, key_axes(x.ndim, gamma.ndim, self.axis))
        dtype = compute_dtype(x.dtype, gamma.dtype)
        if type(x) is not numpy.ndarray:
            return self._forward_gpu(x, gamma, beta, dtype)
        x3 = layout.view(x, dtype)
        if self.statistics is None:
            mean, var, centered = moments(x3)
        else:
            mean, var = self.statistics
            centered = None
            if needs_centering(mean, var, dtype):
                centered = x3 - column(mean, dtype)
        xp = get_array_module(x)
        inv_std = var + self.eps
        xp.sqrt(inv_std, out=inv_std)
        xp.reciprocal(inv_std, out=inv_std)
        g, b = self._scale_shift_params(gamma, beta, mean, var)
        scale = g * inv_std
        if centered is None:
            y3 = x3 * column(scale, dtype)
            y3 += column(b - mean * scale, dtype)
        else:
            y3 = centered
            y3 *= column(scale, dtype)
            y3 += column(b, dtype)
        self.mean = mean
        self.inv_std = inv_std
        self.centered = centered is not None
        if self.running_mean is not None:
            self._update_running(mean, var, layout.m)
        return (layout.restore(y3).astype(x.dtype, copy=False),)

    def _forward_gpu(self, x, gamma, beta, dtype):
        # Statistics by two reductions (the variance is centred, so it needs no
        # check of its conditioning), then y by one elementwise kernel.
        layout = self.layout
        x3 = layout.view(x)
        if self.statistics is None:
            mean = x3.mean(axis=(0, 2), dtype=dtype)
            d2 = kernel(_BN_SQUARED_DEVIATION_ELEMENTWISE)(
                x3, _channels(mean), get_array_module(x3).empty(x3.shape, dtype)
            )
            var = d2.mean(axis=(0, 2))
            del d2
        else:
            mean, var = self.statistics
        inv_std = kernel(_BN_INV_STD_ELEMENTWISE)(var, self.eps)
        g, b = self._scale_shift_params(gamma, beta, mean, var)
        y3 = kernel(_BN_FORWARD_ELEMENTWISE)(
            x3, _channels(mean), _channels(inv_std), _channels(g), _channels(b)
        )
        self.mean = mean
        self.inv_std = inv_std
        self.centered = False
        if self.running_mean is not None:
            self._update_running(mean, var, layout.m)
        return (layout.restore(y3),)

    def _scale_shift_params(self, gamma, beta, mean, var):
        if type(gamma) is not numpy.ndarray:
            return gamma.reshape(-1), beta.reshape(-1)
        return gamma.reshape(-1).astype(_float64), beta.reshape(-1).astype(_float64)

    def _update_running(self, mean, var, m):
        update_running(self.running_mean, self.running_var, mean, var, self.decay, m)

    def backward(self, indexes, grad_outputs):
        x, gamma = self.get_retained_inputs()
        need_x = 0 in indexes
        need_params = 1 in indexes or 2 in indexes
        grads = BatchNormalizationGrad(
            self.layout, self.mean, self.inv_std, self.eps, need_x, need_params, self.centered
        ).apply((x, gamma, grad_outputs[0]))
        return _pick(grads, indexes, need_x)


def _pick(grads, indexes, has_gx):
    """Map the outputs ``(gx?, ggamma, gbeta)`` of BatchNormalizationGrad onto ``indexes``."""
    named = {}
    rest = list(grads)
    if has_gx:
        named[0] = rest.pop(0)
    if rest:
        named[1], named[2] = rest
    return tuple([named[i] for i in indexes])


def _channels(c):
    """A per-channel vector as a ``(1, C, 1)`` array, broadcasting over the ``(A, C, B)`` view."""
    return c.reshape(1, -1, 1)


class BatchNormalizationGrad(FunctionNode):
    """The gradients of batch normalization: ``(x, gamma, gy) -> (gx?, ggamma?, gbeta?)``.

    With ``x_hat = (x - mean) * inv_std`` and ``m`` elements per channel:
    ``gbeta = sum(gy)``, ``ggamma = sum(gy * x_hat)`` and
    ``gx = gamma * inv_std * (gy - (gbeta + x_hat * ggamma) / m)``. Its
    backward recomputes ``x_hat`` with dbr functions, so it is differentiable
    again.

    Args:
        layout (ChannelLayout): the ``(A, C, B)`` view of ``x``.
        mean, inv_std: float64 statistics of ``x`` per channel.
        eps (float): the epsilon of the forward.
        need_x (bool): output ``gx``.
        need_params (bool): output ``ggamma`` and ``gbeta``.
        centered (bool): compute from ``x - mean`` (one more pass), for data
            whose mean is large against its standard deviation.
    """

    def __init__(self, layout, mean, inv_std, eps, need_x=True, need_params=True, centered=False):
        self.layout = layout
        self.mean = mean
        self.inv_std = inv_std
        self.eps = eps
        self.need_x = need_x
        self.need_params = need_params
        self.centered = centered

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x, gamma, gy = inputs
        if type(x) is not numpy.ndarray:
            return self._forward_gpu(x, gamma, gy)
        layout = self.layout
        dtype = compute_dtype(x.dtype, gamma.dtype)
        x3 = layout.view(x, dtype)
        gy3 = layout.view(gy, dtype)
        mean, inv_std = self.mean, self.inv_std
        if self.centered:
            x3 = x3 - column(mean, dtype)
            mean = 0.0
        gbeta = channel_sum(gy3)
        ggamma = channel_dot(gy3, x3)
        ggamma -= mean * gbeta
        ggamma *= inv_std
        outputs = []
        if self.need_x:
            # gx = a * gy + b * x + c per channel, three passes over x and gy.
            m = layout.m
            a = gamma.reshape(-1).astype(_float64) * inv_std
            b = a * inv_std * ggamma / -m
            c = a * gbeta / -m - b * mean
            gx3 = gy3 * column(a, dtype)
            gx3 += x3 * column(b, dtype)
            gx3 += column(c, dtype)
            outputs.append(layout.restore(gx3).astype(x.dtype, copy=False))
        if self.need_params:
            outputs.append(ggamma.reshape(gamma.shape).astype(gamma.dtype))
            outputs.append(gbeta.reshape(gamma.shape).astype(gamma.dtype))
        return tuple(outputs)

    def _forward_gpu(self, x, gamma, gy):
        # gbeta and ggamma by two reductions, gx by one elementwise kernel, all from
        # x - mean (so the centred flag needs no extra pass here).
        layout = self.layout
        x3 = layout.view(x)
        gy3 = layout.view(gy)
        mean = _channels(self.mean)
        inv_std = _channels(self.inv_std)
        gbeta = gy3.sum(axis=(0, 2), dtype=self.mean.dtype)
        terms = kernel(_BN_GGAMMA_TERMS_ELEMENTWISE)(
            gy3, x3, mean, inv_std, get_array_module(x3).empty(x3.shape, self.mean.dtype)
        )
        ggamma = terms.sum(axis=(0, 2))
        del terms
        outputs = []
        if self.need_x:
            gx3 = kernel(_BN_GRAD_ELEMENTWISE)(
                x3,
                gy3,
                mean,
                inv_std,
                _channels(gamma.reshape(-1)),
                _channels(gbeta),
                _channels(ggamma),
                1.0 / layout.m,
            )
            outputs.append(layout.restore(gx3))
        if self.need_params:
            outputs.append(ggamma.reshape(gamma.shape).astype(gamma.dtype))
            outputs.append(gbeta.reshape(gamma.shape).astype(gamma.dtype))
        return tuple(outputs)

    def backward(self, indexes, grad_outputs):
        x, gamma, gy = self.get_retained_inputs()
        grads = list(grad_outputs)
        ggx = grads.pop(0) if self.need_x else None
        gggamma, ggbeta = grads if self.need_params else (None, None)
        layout = self.layout
        m = layout.m
        inv_m = 1.0 / m
        channels = layout.shape3[1]
        dtype = compute_dtype(x.dtype, gamma.dtype)

        def total(v):
            return ops.sum(v, axis=(0, 2), keepdims=True)

        def per_channel(v):
            return ops.cast(ops.reshape(v, (1, channels, 1)), dtype)

        # x_hat and inv_std as functions of x, so that the result is differentiable again.
        xv = layout.view_var(x, dtype)
        d = xv - total(xv) * inv_m
        r = (total(d * d) * inv_m + self.eps) ** -0.5
        x_hat = d * r

        def project(v):
            # The gradient of x_hat with respect to x, applied to v (up to the factor r).
            return v - total(v) * inv_m - x_hat * (total(v * x_hat) * inv_m)

        g = layout.view_var(gy, dtype)
        gam = per_channel(gamma)
        a = None if ggx is None else layout.view_var(ggx, dtype)
        b_gamma = None if gggamma is None else per_channel(gggamma)
        b_beta = None if ggbeta is None else per_channel(ggbeta)

        if a is not None and (0 in indexes or 1 in indexes):
            s_gx = total(g * x_hat)
            s_ax = total(a * x_hat)
            # The gradient of sum(a * gx) with respect to inv_std, divided by gamma.
            k = total(a * g) - total(a) * total(g) * inv_m - s_ax * s_gx * inv_m
        ret = []
        for i in indexes:
            if i == 0:
                terms = []
                if b_gamma is not None:
                    terms.append(b_gamma * g)
                if a is not None:
                    terms.append(-(gam * r * inv_m) * (a * s_gx + g * s_ax))
                gx = None
                if terms:
                    gx = r * project(_add_all(terms))
                if a is not None:
                    term = -(gam * k * r * r * inv_m) * x_hat
                    gx = term if gx is None else gx + term
                ret.append(None if gx is None else layout.restore_var(gx, x.dtype))
            elif i == 1:
                if a is None:
                    ret.append(None)
                else:
                    ret.append(ops.cast(ops.reshape(k * r, gamma.shape), gamma.dtype))
            else:
                terms = []
                if a is not None:
                    terms.append(gam * r * project(a))
                if b_gamma is not None:
                    terms.append(b_gamma * x_hat)
                if b_beta is not None:
                    terms.append(b_beta)
                if not terms:
                    ret.append(None)
                    continue
                ggy = _add_all(terms)
                if ggy.shape != layout.shape3:
                    ggy = ops.broadcast_to(ggy, layout.shape3)
                ret.append(layout.restore_var(ggy, gy.dtype))
        return tuple(ret)


def _add_all(terms):
    total = terms[0]
    for t in terms[1:]:
        total = total + t
    return total


# -- fixed batch normalization --------------------------------------------------------


class FixedBatchNormalization(FunctionNode):
    """Normalization by given statistics: ``gamma * (x - mean) / sqrt(var + eps) + beta``."""

    def __init__(self, eps=2e-5, axis=None):
        self.eps = eps
        self.axis = normalize_axis(axis, "fixed_batch_normalization")
        self.layout = None

    def check_type_forward(self, in_types):
        check_channel_types(in_types, ("x", "gamma", "beta", "mean", "var"), self.axis)

    def forward(self, inputs):
        self.retain_inputs((0, 1, 3, 4))
        x, gamma, beta, mean, var = inputs
        layout = self.layout = ChannelLayout(x.shape, key_axes(x.ndim, gamma.ndim, self.axis))
        dtype = compute_dtype(x.dtype, gamma.dtype)
        xp = get_array_module(x)
        if xp is not numpy:
            y3 = kernel(_FIXED_BN_ELEMENTWISE)(
                layout.view(x),
                _channels(gamma.reshape(-1)),
                _channels(beta.reshape(-1)),
                _channels(mean.reshape(-1)),
                _channels(var.reshape(-1)),
                self.eps,
            )
            return (layout.restore(y3),)
        inv_std = var.reshape(-1).astype(_float64) + self.eps
        xp.sqrt(inv_std, out=inv_std)
        xp.reciprocal(inv_std, out=inv_std)
        scale = gamma.reshape(-1).astype(_float64) * inv_std
        shift = beta.reshape(-1).astype(_float64) - mean.reshape(-1).astype(_float64) * scale
        y3 = layout.view(x, dtype) * column(scale, dtype)
        y3 += column(shift, dtype)
        return (layout.restore(y3).astype(x.dtype, copy=False),)

    def backward(self, indexes, grad_outputs):
        x, gamma, mean, var = self.get_retained_inputs()
        layout = self.layout
        dtype = compute_dtype(x.dtype, gamma.dtype)
        channels = layout.shape3[1]

        def total(v):
            return ops.sum(v, axis=(0, 2), keepdims=True)

        def per_channel(v):
            return ops.reshape(ops.cast(v, dtype), (1, channels, 1))

        def as_param(v):
            return ops.cast(ops.reshape(v, gamma.shape), gamma.dtype)

        g = layout.view_var(grad_outputs[0], dtype)
        r = (per_channel(var) + self.eps) ** -0.5
        gamma_r = per_channel(gamma) * r
        if 1 in indexes or 4 in indexes:
            s_d = total(g * (layout.view_var(x, dtype) - per_channel(mean)))
        if 2 in indexes or 3 in indexes:
            s_g = total(g)
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(layout.restore_var(g * gamma_r, x.dtype))
            elif i == 1:
                ret.append(as_param(s_d * r))
            elif i == 2:
                ret.append(as_param(s_g))
            elif i == 3:
                ret.append(as_param(-gamma_r * s_g))
            else:
                ret.append(as_param(gamma_r * r * r * s_d * -0.5))
        return tuple(ret)


# -- wrappers -------------------------------------------------------------------------


def warn_single_element(who, layout, axis):
    """Warn, as Chainer does, when each channel has one element: the output is all ``beta``."""
    if layout.m != 1:
        return
    if axis is None or 0 in axis:
        warnings.warn(
            f"{who} received a batch with no more than one sample; its output is always "
            "beta for such a batch (is dbr.core.config.train True during evaluation, or is "
            "the last batch of a non-repeating iterator this small?)",
            UserWarning,
            stacklevel=3,
        )
    else:
        warnings.warn(
            f"{who} received an input whose reduced axes all have length one; its output is "
            "always beta for such an input",
            UserWarning,
            stacklevel=3,
        )


def batch_normalization(x, gamma, beta, **kwargs):
    """batch_normalization(x, gamma, beta, eps=2e-5, running_mean=None, running_var=None, \
decay=0.9, axis=None)

    Batch normalization: normalizes ``x`` by the statistics of the batch.

    For each channel ``c`` (an index into ``gamma``), with the mean
    :math:`\\mu_c` and the biased variance :math:`\\sigma_c^2` of ``x`` over
    the reduced axes,

    .. math::

        y = \\gamma_c \\frac{x - \\mu_c}{\\sqrt{\\sigma_c^2 + \\epsilon}} + \\beta_c.

    By default the channels are axes ``1`` to ``gamma.ndim`` of ``x`` and the
    statistics are taken over all other axes: for ``x`` of shape
    ``(N, C, H, W)`` and ``gamma`` of shape ``(C,)``, over ``(0, 2, 3)``.
    The statistics take one pass over ``x`` (sums of ``x`` and ``x ** 2``
    per row, combined in float64), and a second one, over the centred data,
    only when some channel's mean is large against its spread; float16 is
    computed in float32. The function is differentiable any number of times.

    Args:
        x (Variable or array): input of a floating dtype; the axes not in
            ``axis`` must have ``gamma``'s shape, and the reduced axes at
            least one element each.
        gamma (Variable or array): scale, floating (may differ from ``x``'s
            dtype, e.g. float32 parameters for float16 ``x``).
        beta (Variable or array): shift, of ``gamma``'s shape and dtype.
        eps (float): added to the variance.
        running_mean (array or None): running average of the mean, updated
            in place to ``decay * running_mean + (1 - decay) * mean``.
        running_var (array or None): running average of the variance,
            updated in place with the unbiased variance
            ``var * m / (m - 1)`` (``m`` elements per channel). Give both
            running arrays or neither; they have ``gamma``'s shape.
        decay (float): decay rate of the running averages.
        axis (int, tuple of int or None): the axes to normalize over, in
            ascending order; the others are the channel axes.

    Returns:
        Variable: of ``x``'s shape and dtype.

    Raises:
        ValueError: for the removed ``train`` argument (use
            ``dbr.core.using_config('train', ...)``), for only one running
            array, or for an ``axis`` not in ascending order.
        TypeError: for unknown keyword arguments.

    >>> import numpy as np
    >>> x = np.array([[1.0, 10.0], [3.0, 30.0]], np.float32)
    >>> y = batch_normalization(x, np.ones(2, np.float32), np.zeros(2, np.float32))
    >>> y.array.round(3)
    array([[-1., -1.],
           [ 1.,  1.]], dtype=float32)
    """
    who = "batch_normalization"
    if "train" in kwargs:
        raise ValueError(
            f"{who}: the train argument is not supported anymore; "
            "use dbr.core.using_config('train', ...)"
        )
    unexpected = sorted(set(kwargs) - set(_KWARGS))
    if unexpected:
        raise TypeError(f"{who}() got unexpected keyword argument(s): {', '.join(unexpected)}")
    eps = kwargs.get("eps", 2e-5)
    running_mean = kwargs.get("running_mean")
    running_var = kwargs.get("running_var")
    decay = kwargs.get("decay", 0.9)
    check_real(eps, "eps", who, 0)
    check_real(decay, "decay", who)
    if (running_mean is None) != (running_var is None):
        raise ValueError(
            f"{who}: expected running_mean and running_var to be both arrays or both None, "
            f"got {type(running_mean).__name__} and {type(running_var).__name__}"
        )
    node = BatchNormalization(eps, running_mean, running_var, decay, kwargs.get("axis"))
    y = node.apply((x, gamma, beta))[0]
    warn_single_element(who, node.layout, node.axis)
    return y


def fixed_batch_normalization(x, gamma, beta, mean, var, eps=2e-5, axis=None):
    """Batch normalization with given statistics (the inference form of batch normalization).

    .. math::

        y = \\gamma_c \\frac{x - \\mathrm{mean}_c}{\\sqrt{\\mathrm{var}_c + \\epsilon}}
        + \\beta_c,

    with the channels as in :func:`batch_normalization`. Differentiable (any
    number of times) with respect to every input, ``mean`` and ``var``
    included.

    Args:
        x (Variable or array): input of a floating dtype.
        gamma (Variable or array): scale, floating, of the channel shape.
        beta (Variable or array): shift, like ``gamma``.
        mean (Variable or array): the mean to subtract, like ``gamma``.
        var (Variable or array): the variance to divide by (its square root
            plus ``eps``), like ``gamma``.
        eps (float): added to ``var``.
        axis (int, tuple of int or None): the normalized axes, as in
            :func:`batch_normalization`.

    Returns:
        Variable: of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> x = np.array([[1.0], [3.0]], np.float32)
    >>> one, zero = np.ones(1, np.float32), np.zeros(1, np.float32)
    >>> fixed_batch_normalization(x, one, zero, 2 * one, one, eps=0.0).array
    array([[-1.],
           [ 1.]], dtype=float32)
    """
    check_real(eps, "eps", "fixed_batch_normalization", 0)
    return FixedBatchNormalization(eps, axis).apply((x, gamma, beta, mean, var))[0]
