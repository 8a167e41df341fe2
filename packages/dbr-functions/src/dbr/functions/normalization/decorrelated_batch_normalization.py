"""decorrelated_batch_normalization and fixed_decorrelated_batch_normalization.

Decorrelated batch normalization whitens groups of channels: for each group
of ``C = channels / groups`` channels, with the ``m`` samples of the group
(every batch element and spatial position) centred as ``x_c``, the output is
``P @ x_c`` where ``P = Sigma ** -1/2`` (ZCA whitening) and
``Sigma = x_c @ x_c.T / m + eps * I``.

The gradient goes through the matrix square root: ``P = S ** -1`` with
``S = Sigma ** 1/2``, and the derivative of a square root solves a Sylvester
equation ``S X + X S = G``. Both the square root and the Sylvester solve are
FunctionNodes whose backward is written with themselves, so the whole
function is differentiable any number of times.
"""

import numpy

from dbr.core import FunctionNode, ops, type_check
from dbr.core.backend import get_array_module
from dbr.functions.math.inv import batch_inv
from dbr.functions.normalization._statistics import compute_dtype
from dbr.functions.normalization.batch_normalization import check_real, check_statistic

# -- matrix square root and Sylvester equations of symmetric positive definite matrices --


class SymmetricSqrt(FunctionNode):
    """The square root ``S`` of a batch of symmetric positive definite matrices (``S @ S = A``)."""

    def forward(self, inputs):
        a = inputs[0]
        xp = get_array_module(a)
        w, v = xp.linalg.eigh(a)
        xp.maximum(w, 0, out=w)
        xp.sqrt(w, out=w)
        self.retain_outputs((0,))
        return ((v * w[..., None, :]) @ v.swapaxes(-1, -2),)

    def backward(self, indexes, grad_outputs):
        # S dS + dS S = dA: the gradient of A solves the same equation for gS.
        s = self.get_retained_outputs()[0]
        return SylvesterSolve().apply((s, grad_outputs[0]))[:1]


class SylvesterSolve(FunctionNode):
    """``X`` with ``S @ X + X @ S = C`` for symmetric positive definite ``S`` (batched)."""

    def forward(self, inputs):
        s, c = inputs
        xp = get_array_module(s)
        w, v = xp.linalg.eigh(s)
        vt = v.swapaxes(-1, -2)
        x = vt @ c @ v
        x /= w[..., :, None] + w[..., None, :]
        self.retain_inputs((0,))
        self.retain_outputs((0,))
        return (v @ x @ vt,)

    def backward(self, indexes, grad_outputs):
        s = self.get_retained_inputs()[0]
        x = self.get_retained_outputs()[0]
        y = SylvesterSolve().apply((s, grad_outputs[0]))[0]
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(-(ops.matmul(y, x, transb=True) + ops.matmul(x, y, transa=True)))
            else:
                ret.append(y)
        return tuple(ret)


# -- the grouped view (groups, C, m) of x (N, groups * C, ...) ----------------------------


def _group_axes(ndim):
    return (1, 0) + tuple(range(2, ndim))


def _grouped_shape(shape, groups):
    m = shape[0]
    for s in shape[2:]:
        m *= s
    return (groups, shape[1] // groups, m)


def _to_groups(x, groups):
    return x.transpose(_group_axes(x.ndim)).reshape(_grouped_shape(x.shape, groups))


def _from_groups(y, shape):
    swapped = (shape[1], shape[0]) + tuple(shape[2:])
    return y.reshape(swapped).transpose(_group_axes(len(shape)))


def _to_groups_var(x, groups, dtype):
    g = ops.reshape(ops.transpose(x, _group_axes(x.ndim)), _grouped_shape(x.shape, groups))
    return ops.cast(g, dtype)


def _from_groups_var(y, shape, dtype):
    swapped = (shape[1], shape[0]) + tuple(shape[2:])
    return ops.cast(ops.transpose(ops.reshape(y, swapped), _group_axes(len(shape))), dtype)


def _check_groups(groups, who):
    if not isinstance(groups, (int, numpy.integer)) or isinstance(groups, bool):
        raise TypeError(f"{who}: expected groups to be an int, got {groups!r}")
    if groups < 1:
        raise ValueError(f"{who}: expected groups >= 1, got {groups}")
    return int(groups)


def _check_x(x_type, groups):
    type_check.expect(x_type.dtype.kind == "f", x_type.ndim >= 2)
    type_check.expect(x_type.shape[1] % groups == 0)


def _check_array(name, a, shape):
    check_statistic(
        name, a, shape, f"{name} is a floating array of shape {shape} (groups, C[, C])"
    )


# -- decorrelated batch normalization -------------------------------------------------------


class DecorrelatedBatchNormalization(FunctionNode):
    """ZCA whitening of each channel group by the batch statistics.

    Args:
        groups (int): the number of channel groups.
        eps (float): added to the diagonal of the covariances.
        mean: running mean of shape ``(groups, C)``, updated in place, or None.
        projection: running projection of shape ``(groups, C, C)``, updated in
            place, or None.
        decay (float): the decay of the running statistics.
    """

    def __init__(self, groups=16, eps=2e-5, mean=None, projection=None, decay=0.9):
        self.groups = _check_groups(groups, "decorrelated_batch_normalization")
        self.eps = eps
        self.running_mean = mean
        self.running_projection = projection
        self.decay = decay

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x_type = in_types[0]
        _check_x(x_type, self.groups)
        groups, size, m = _grouped_shape(type_check.eval(x_type.shape), self.groups)
        if m == 0:
            raise type_check.InvalidType(
                "x.shape[0] > 0 and x.shape[i] > 0 for i >= 2 (samples to compute "
                "statistics from)",
                f"x.shape == {type_check.eval(x_type.shape)}",
            )
        if self.running_mean is not None:
            _check_array("running_mean", self.running_mean, (groups, size))
        if self.running_projection is not None:
            _check_array("running_projection", self.running_projection, (groups, size, size))

    def forward(self, inputs):
        self.retain_inputs((0,))
        x = inputs[0]
        xp = get_array_module(x)
        dtype = compute_dtype(x.dtype)
        xg = _to_groups(x, self.groups).astype(dtype, copy=False)
        groups, size, m = xg.shape
        mean = xg.mean(axis=2, keepdims=True)
        xc = xg - mean
        cov = xc @ xc.swapaxes(1, 2)
        cov /= m
        diagonal = xp.arange(size)
        cov[:, diagonal, diagonal] += dtype.type(self.eps)
        w, v = xp.linalg.eigh(cov)
        projection = (v * (w**-0.5)[:, None, :]) @ v.swapaxes(1, 2)
        y = _from_groups(projection @ xc, x.shape)
        if self.running_mean is not None:
            self.running_mean *= self.decay
            self.running_mean += ((1 - self.decay) * mean[:, :, 0]).astype(self.running_mean.dtype)
        if self.running_projection is not None:
            # Chainer's rule: the projection is scaled by Bessel's correction m / (m - 1).
            adjust = m / max(m - 1, 1)
            self.running_projection *= self.decay
            self.running_projection += ((1 - self.decay) * adjust * projection).astype(
                self.running_projection.dtype
            )
        return (xp.ascontiguousarray(y).astype(x.dtype, copy=False),)

    def backward(self, indexes, grad_outputs):
        x = self.get_retained_inputs()[0]
        dtype = compute_dtype(x.dtype)
        xg = _to_groups_var(x, self.groups, dtype)
        groups, size, m = xg.shape
        inv_m = 1.0 / m
        xc = xg - ops.sum(xg, axis=2, keepdims=True) * inv_m
        eps_eye = x.xp.eye(size, dtype=dtype) * dtype.type(self.eps)
        cov = ops.matmul(xc, xc, transb=True) * inv_m + eps_eye
        s = SymmetricSqrt().apply((cov,))[0]
        p = batch_inv(s)
        gy = _to_groups_var(grad_outputs[0], self.groups, dtype)
        # y = P xc with P = S^-1 and S^2 = cov: gP = gy xc^T, gS = -P^T gP P^T, and gcov solves
        # S gcov + gcov S = gS.
        g_p = ops.matmul(gy, xc, transb=True)
        g_s = ops.matmul(ops.matmul(p, g_p, transa=True), p, transb=True)
        g_cov = SylvesterSolve().apply((s, -g_s))[0]
        g_cov = g_cov + ops.transpose(g_cov, (0, 2, 1))
        gxc = ops.matmul(p, gy, transa=True) + ops.matmul(g_cov, xc) * inv_m
        gxg = gxc - ops.sum(gxc, axis=2, keepdims=True) * inv_m
        return (_from_groups_var(gxg, x.shape, x.dtype),)


class FixedDecorrelatedBatchNormalization(FunctionNode):
    """``projection @ (x - mean)`` for each channel group, with given statistics."""

    def __init__(self, groups=16):
        self.groups = _check_groups(groups, "fixed_decorrelated_batch_normalization")

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "mean", "projection"))
        x_type, mean_type, projection_type = in_types
        _check_x(x_type, self.groups)
        type_check.expect(
            mean_type.dtype == x_type.dtype,
            projection_type.dtype == x_type.dtype,
            mean_type.ndim == 2,
            projection_type.ndim == 3,
        )
        groups, size, _ = _grouped_shape(type_check.eval(x_type.shape), self.groups)
        type_check.expect(
            mean_type.shape[0] == groups,
            mean_type.shape[1] == size,
            projection_type.shape[0] == groups,
            projection_type.shape[1] == size,
            projection_type.shape[2] == size,
        )

    def forward(self, inputs):
        self.retain_inputs((0, 1, 2))
        x, mean, projection = inputs
        xp = get_array_module(x)
        dtype = compute_dtype(x.dtype)
        xc = _to_groups(x, self.groups).astype(dtype) - mean.astype(dtype)[:, :, None]
        y = projection.astype(dtype, copy=False) @ xc
        return (xp.ascontiguousarray(_from_groups(y, x.shape)).astype(x.dtype, copy=False),)

    def backward(self, indexes, grad_outputs):
        x, mean, projection = self.get_retained_inputs()
        dtype = compute_dtype(x.dtype)
        gy = _to_groups_var(grad_outputs[0], self.groups, dtype)
        p = ops.cast(projection, dtype)
        if 0 in indexes or 1 in indexes:
            gxc = ops.matmul(p, gy, transa=True)
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(_from_groups_var(gxc, x.shape, x.dtype))
            elif i == 1:
                ret.append(ops.cast(-ops.sum(gxc, axis=2), mean.dtype))
            else:
                xc = _to_groups_var(x, self.groups, dtype) - ops.reshape(
                    ops.cast(mean, dtype), mean.shape + (1,)
                )
                ret.append(ops.cast(ops.matmul(gy, xc, transb=True), projection.dtype))
        return tuple(ret)


def decorrelated_batch_normalization(x, **kwargs):
    """decorrelated_batch_normalization(x, *, groups=16, eps=2e-5, running_mean=None, \
running_projection=None, decay=0.9)

    Decorrelated batch normalization: zero-mean, decorrelated (ZCA-whitened)
    channel groups by the batch statistics.

    For ``x`` of shape ``(N, groups * C, ...)``, each group of ``C``
    consecutive channels is a ``(C, m)`` matrix of ``m = N * (spatial
    size)`` samples; centred by its mean as :math:`X_c`, with
    :math:`\\Sigma = X_c X_c^\\top / m + \\epsilon I`,

    .. math::

        Y = \\Sigma^{-1/2} X_c.

    float16 is computed in float32. Differentiable any number of times.

    Args:
        x (Variable or array): input of shape ``(N, channels, ...)``, floating,
            with ``channels`` divisible by ``groups`` and ``m > 0``.
        groups (int): the number of channel groups.
        eps (float): added to the diagonal of the covariances.
        running_mean (array or None): running mean of shape ``(groups, C)``,
            updated in place to ``decay * running_mean + (1 - decay) * mean``.
        running_projection (array or None): running projection of shape
            ``(groups, C, C)``, updated in place to ``decay *
            running_projection + (1 - decay) * m / (m - 1) * projection`` (as
            in Chainer, Bessel's correction scales the projection).
        decay (float): decay rate of the running statistics.

    Returns:
        Variable: of ``x``'s shape and dtype.

    Raises:
        TypeError: for unknown keyword arguments.

    See: Huang et al., `Decorrelated Batch Normalization
    <https://arxiv.org/abs/1804.08450>`_.

    >>> import numpy as np
    >>> x = np.array([[1.0, 2.0], [3.0, 0.0], [5.0, 7.0]], np.float32)
    >>> y = decorrelated_batch_normalization(x, groups=1)
    >>> (y.array.T @ y.array / 3).round(3)
    array([[1., 0.],
           [0., 1.]], dtype=float32)
    """
    who = "decorrelated_batch_normalization"
    allowed = ("groups", "eps", "running_mean", "running_projection", "decay")
    unexpected = sorted(set(kwargs) - set(allowed))
    if unexpected:
        raise TypeError(f"{who}() got unexpected keyword argument(s): {', '.join(unexpected)}")
    eps = kwargs.get("eps", 2e-5)
    decay = kwargs.get("decay", 0.9)
    check_real(eps, "eps", who, 0)
    check_real(decay, "decay", who)
    node = DecorrelatedBatchNormalization(
        kwargs.get("groups", 16),
        eps,
        kwargs.get("running_mean"),
        kwargs.get("running_projection"),
        decay,
    )
    return node.apply((x,))[0]


def fixed_decorrelated_batch_normalization(x, mean, projection, groups=16):
    """Decorrelated batch normalization with given statistics.

    For each group of ``C`` consecutive channels of ``x`` (as in
    :func:`decorrelated_batch_normalization`), ``Y = projection[g] @ (X -
    mean[g])``. Differentiable any number of times with respect to ``x``,
    ``mean`` and ``projection``.

    Args:
        x (Variable or array): input of shape ``(N, groups * C, ...)``, floating.
        mean (Variable or array): means of shape ``(groups, C)``, ``x``'s dtype.
        projection (Variable or array): matrices of shape ``(groups, C, C)``,
            ``x``'s dtype.
        groups (int): the number of channel groups.

    Returns:
        Variable: of ``x``'s shape and dtype.

    >>> import numpy as np
    >>> x = np.array([[1.0, 2.0]], np.float32)
    >>> mean = np.array([[1.0, 1.0]], np.float32)
    >>> projection = 2 * np.eye(2, dtype=np.float32)[None]
    >>> fixed_decorrelated_batch_normalization(x, mean, projection, groups=1).array
    array([[0., 2.]], dtype=float32)
    """
    return FixedDecorrelatedBatchNormalization(groups).apply((x, mean, projection))[0]
