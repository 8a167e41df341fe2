"""simplified_dropconnect: a linear layer whose weights are dropped at random."""

import numpy

from dbr.core import FunctionNode, Variable, backend, ops, type_check
from dbr.core.utils import force_array, force_type
from dbr.functions.noise._random import check_ratio, keep_flags

_ndarray = numpy.ndarray


class SimplifiedDropconnect(FunctionNode):
    """``y_i = x_i (W * mask_i / (1 - ratio))^T + b``; see :func:`simplified_dropconnect`.

    Args:
        ratio (float): the probability of dropping a weight.
        mask (array or None): True where a weight is kept, of shape
            ``(n, M, N)`` (one mask per sample) or ``(M, N)`` (one for the
            batch); None draws one of the shape ``use_batchwise_mask`` asks for
            (also when ``ratio`` is 0, as Chainer does, so that ``numpy.random``
            stays in step with it).
        use_batchwise_mask (bool): draw one mask per sample.
    """

    def __init__(self, ratio, mask=None, use_batchwise_mask=True):
        self.ratio = ratio
        self.mask = mask
        self.use_batchwise_mask = use_batchwise_mask

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "W", "b"))
        n_in = in_types.size()
        type_check.expect(n_in >= 2, n_in <= 3)
        x_type, w_type = in_types[:2]
        type_check.expect(
            x_type.dtype.kind == "f",
            w_type.dtype.kind == "f",
            x_type.ndim >= 2,
            w_type.ndim == 2,
            type_check.prod(x_type.shape[1:]) == w_type.shape[1],
        )
        if type_check.eval(n_in) == 3:
            b_type = in_types[2]
            type_check.expect(
                b_type.dtype == x_type.dtype,
                b_type.ndim == 1,
                b_type.shape[0] == w_type.shape[0],
            )
        mask = self.mask
        if mask is not None:
            mask_shape = type_check.make_variable(mask.shape, "mask.shape")
            if mask.ndim == 3:
                type_check.expect(mask_shape[0] == x_type.shape[0], mask_shape[1:] == w_type.shape)
            else:
                type_check.expect(mask_shape == w_type.shape)

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, W = inputs[:2]
        xp = numpy if type(x) is _ndarray else backend.get_array_module(x)
        n = x.shape[0]
        if self.mask is None:
            shape = (n,) + W.shape if self.use_batchwise_mask else W.shape
            self.mask = keep_flags(xp, shape, self.ratio)
        x2 = x.reshape(n, W.shape[1])
        W_eff = self._effective_weight(W)
        if W_eff.ndim == 3:
            y = xp.matmul(W_eff, x2[:, :, None])[:, :, 0]
        else:
            y = x2 @ W_eff.T
        y = force_array(y, x.dtype)
        if len(inputs) == 3:
            y += inputs[2]
        return (y,)

    def _scale(self, dtype):
        return force_type(dtype, 1.0 / (1.0 - self.ratio))

    def _effective_weight(self, W):
        """``W * mask / (1 - ratio)`` as an array (``W`` itself when nothing is dropped)."""
        if self.mask is None:
            return W
        W_eff = W * self.mask
        W_eff *= self._scale(W.dtype)
        return W_eff

    def _scaled_mask(self, dtype):
        scaled = self.mask.astype(dtype)
        scaled *= self._scale(dtype)
        return Variable.from_array(scaled, False)

    def backward(self, indexes, grad_outputs):
        x_in, W_in = self.get_retained_inputs()
        gy_in = grad_outputs[0]
        # x and W may differ in dtype: the gradients are taken in their common dtype and
        # cast back to each input's (the casts are no-ops when the dtypes agree).
        common = numpy.result_type(x_in.dtype, W_in.dtype)
        x, W, gy = (ops.cast(v, common) for v in (x_in, W_in, gy_in))
        n = x.shape[0]
        n_out, n_in = W.shape
        needs_mask = self.mask is not None and indexes[0] <= 1
        mask = self._scaled_mask(common) if needs_mask else None
        batchwise = mask is not None and mask.ndim == 3
        ret = []
        for i in indexes:
            if i == 0:
                W_eff = W if mask is None else W * mask
                if batchwise:
                    gx = ops.matmul(ops.reshape(gy, (n, 1, n_out)), W_eff)
                else:
                    gx = ops.matmul(gy, W_eff)
                ret.append(ops.cast(ops.reshape(gx, x.shape), x_in.dtype))
            elif i == 1:
                if batchwise:
                    outer = ops.reshape(gy, (n, n_out, 1)) * ops.reshape(x, (n, 1, n_in))
                    gW = ops.sum(outer * mask, axis=0)
                else:
                    gW = ops.matmul(gy, ops.reshape(x, (n, n_in)), transa=True)
                    if mask is not None:
                        gW = gW * mask
                ret.append(ops.cast(gW, W_in.dtype))
            else:
                ret.append(ops.sum(gy_in, axis=0))
        return tuple(ret)


def simplified_dropconnect(
    x, W, b=None, ratio=0.5, train=True, mask=None, use_batchwise_mask=True
):
    """A linear layer regularised by simplified DropConnect.

    Each weight is dropped with probability ``ratio`` and the kept ones are
    scaled by ``1 / (1 - ratio)``; then :math:`y = x W^\\top + b`. With
    ``use_batchwise_mask`` every sample draws its own mask:
    :math:`y_i = x_i (W \\odot m_i)^\\top / (1 - ratio) + b`. With
    ``train=False`` the ratio is 0 and this is a plain linear layer (a
    ``mask`` given is still applied, unscaled). The mask is drawn from
    ``numpy.random`` (``cupy.random`` on the GPU), also when the ratio is 0
    (then it keeps every weight), as Chainer does. This averages before the
    activation, unlike the original paper, which samples a Gaussian after it.

    Args:
        x (Variable or array): input of shape ``(n, ...)``; the axes after the
            first are flattened to ``N`` features. float16, float32 or float64.
        W (Variable or array): weights of shape ``(M, N)``, of any floating
            dtype (the product is taken in the common dtype of ``x`` and
            ``W``; each gradient has its input's dtype).
        b (Variable, array or None): bias of shape ``(M,)`` and ``x``'s dtype.
        ratio (float): the probability of dropping a weight, in ``[0, 1)``.
        train (bool): whether to drop weights (``ratio`` is 0 otherwise).
        mask (array, Variable or None): True (or 1) where a weight is kept,
            of shape ``(n, M, N)`` or ``(M, N)`` on ``x``'s device; when given
            it is used as is and ``use_batchwise_mask`` is ignored. Mainly for
            debugging.
        use_batchwise_mask (bool): draw one mask per sample rather than one
            for the whole batch.

    Returns:
        Variable: of shape ``(n, M)`` and ``x``'s dtype.

    >>> import numpy as np
    >>> x = np.ones((2, 3), np.float32)
    >>> W = np.ones((4, 3), np.float32)
    >>> simplified_dropconnect(x, W, train=False).array
    array([[3., 3., 3., 3.],
           [3., 3., 3., 3.]], dtype=float32)
    >>> mask = np.array([[1, 0, 1]] * 4, bool)
    >>> simplified_dropconnect(x, W, ratio=0.5, mask=mask).array
    array([[4., 4., 4., 4.],
           [4., 4., 4., 4.]], dtype=float32)
    """
    check_ratio(ratio, "simplified_dropconnect")
    if isinstance(mask, Variable):
        mask = mask.array
    if mask is not None and mask.ndim not in (2, 3):
        raise ValueError(
            "simplified_dropconnect: expected mask of shape (n, M, N) or (M, N), "
            f"got shape {mask.shape}"
        )
    if not train:
        ratio = 0
    func = SimplifiedDropconnect(ratio, mask, bool(use_batchwise_mask))
    inputs = (x, W) if b is None else (x, W, b)
    return func.apply(inputs)[0]
