"""linear: the affine map ``y = x W^T + b`` of a minibatch."""

import numpy

from dbr.core import FunctionNode, ops, type_check
from dbr.core.utils import accumulation_dtype

_float16 = numpy.dtype(numpy.float16)


def matmul_as(a, b, dtype):
    """``a @ b`` as an array of ``dtype``.

    Operands of different dtypes meet in their common dtype, and float16 is
    multiplied in float32: BLAS has no half-precision GEMM, and the sums keep
    float32's precision before the one rounding to ``dtype``.
    """
    if a.dtype != b.dtype or a.dtype == _float16:
        common = accumulation_dtype(a.dtype, b.dtype)
        a = a.astype(common, copy=False)
        b = b.astype(common, copy=False)
    y = a @ b
    return y if y.dtype == dtype else y.astype(dtype)


class LinearFunction(FunctionNode):
    """``y = x W^T + b`` with the first ``n_batch_axes`` axes of ``x`` as the batch."""

    def __init__(self, n_batch_axes=1):
        self.n_batch_axes = n_batch_axes

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "W", "b"))
        n_in = in_types.size()
        type_check.expect(n_in >= 2, n_in <= 3)
        x_type, w_type = in_types[:2]
        nb = self.n_batch_axes
        type_check.expect(
            x_type.dtype.kind == "f",
            w_type.dtype.kind == "f",
            x_type.ndim > nb,
            w_type.ndim == 2,
            type_check.prod(x_type.shape[nb:]) == w_type.shape[1],
        )
        if type_check.eval(n_in) == 3:
            b_type = in_types[2]
            type_check.expect(
                b_type.dtype == x_type.dtype,
                b_type.ndim == 1,
                b_type.shape[0] == w_type.shape[0],
            )

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, W = inputs[:2]
        if x.ndim == 2:
            y = matmul_as(x, W.T, x.dtype)
        else:
            batch_shape = x.shape[: self.n_batch_axes]
            x2 = x.reshape(_size(batch_shape), W.shape[1])
            y = matmul_as(x2, W.T, x.dtype)
        if len(inputs) == 3:
            y += inputs[2]
        if self.n_batch_axes > 1:
            y = y.reshape(batch_shape + (W.shape[0],))
        return (y,)

    def backward(self, indexes, grad_outputs):
        x, W = self.get_retained_inputs()
        gy = grad_outputs[0]
        n_out, n_in = W.shape
        if gy.ndim != 2:
            gy = ops.reshape(gy, (_size(gy.shape[:-1]), n_out))
        ret = []
        for i in indexes:
            if i == 0:
                gx = LinearGradData().apply((W, gy))[0]
                ret.append(gx if x.ndim == 2 else ops.reshape(gx, x.shape))
            elif i == 1:
                x2 = x if x.ndim == 2 else ops.reshape(x, (gy.shape[0], n_in))
                ret.append(LinearGradWeight(W.dtype).apply((x2, gy))[0])
            else:
                ret.append(ops.sum(gy, axis=0))
        return tuple(ret)


class LinearGradData(FunctionNode):
    """``gx = gy W``: the gradient of :class:`LinearFunction` with respect to ``x``."""

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        W, gy = inputs
        return (matmul_as(gy, W, gy.dtype),)

    def backward(self, indexes, grad_outputs):
        W, gy = self.get_retained_inputs()
        ggx = grad_outputs[0]
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(LinearGradWeight(W.dtype).apply((ggx, gy))[0])
            else:
                ret.append(LinearFunction().apply((ggx, W))[0])
        return tuple(ret)


class LinearGradWeight(FunctionNode):
    """``gW = gy^T x`` in ``W``'s dtype: the gradient of :class:`LinearFunction` in ``W``."""

    _new_outputs = True

    def __init__(self, w_dtype):
        self.w_dtype = w_dtype

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, gy = inputs
        return (matmul_as(gy.T, x, self.w_dtype),)

    def backward(self, indexes, grad_outputs):
        x, gy = self.get_retained_inputs()
        ggW = grad_outputs[0]
        ret = []
        for i in indexes:
            if i == 0:
                ret.append(LinearGradData().apply((ggW, gy))[0])
            else:
                ret.append(LinearFunction().apply((x, ggW))[0])
        return tuple(ret)


def _size(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def linear(x, W, b=None, n_batch_axes=1):
    """Linear function, or affine transformation: :math:`y = x W^\\top + b`.

    The first ``n_batch_axes`` axes of ``x`` are the minibatch; the others
    are flattened into one axis of :math:`N` features. ``x`` and ``W`` may
    have different floating dtypes (the product is taken in their common
    dtype); the output has ``x``'s dtype and each gradient its input's.

    Args:
        x (Variable or array): input of shape :math:`(s_1, ..., s_n)` with
            :math:`n >` ``n_batch_axes`` and
            :math:`s_{n\\_batch\\_axes + 1} \\cdots s_n = N`; float16, float32
            or float64.
        W (Variable or array): weights of shape :math:`(M, N)`, floating.
        b (Variable, array or None): bias of shape :math:`(M,)` and ``x``'s
            dtype.
        n_batch_axes (int): the number of leading batch axes of ``x``, at
            least 1.

    Returns:
        Variable: of shape :math:`(s_1, ..., s_{n\\_batch\\_axes}, M)` and
        ``x``'s dtype.

    Raises:
        ValueError: ``n_batch_axes`` is not a positive int.
        InvalidType: the shapes or dtypes do not fit.

    >>> import numpy as np
    >>> x = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    >>> W = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]], np.float32)
    >>> linear(x, W, np.ones(3, np.float32)).array
    array([[2., 4., 5.],
           [4., 8., 9.]], dtype=float32)
    """
    if isinstance(n_batch_axes, bool) or not isinstance(n_batch_axes, (int, numpy.integer)):
        raise TypeError(
            f"linear: expected n_batch_axes to be an int, got {type(n_batch_axes).__name__}"
        )
    if n_batch_axes < 1:
        raise ValueError(f"linear: expected n_batch_axes >= 1, got {n_batch_axes}")
    func = LinearFunction(int(n_batch_axes))
    return func.apply((x, W) if b is None else (x, W, b))[0]
