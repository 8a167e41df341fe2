"""local_convolution_2d: a 2-d convolution whose filters differ at every output location."""

import numpy

from dbr.core import FunctionNode, ops, type_check
from dbr.functions.connection._im2col import Col2Im, Im2Col, as_tuple, im2col_nd
from dbr.functions.connection.linear import matmul_as


class LocalConvolution2DFunction(FunctionNode):
    """Every output location's own filters applied to its window (see the wrapper).

    Args:
        stride (int or pair of ints): the strides ``(s_Y, s_X)``.
    """

    def __init__(self, stride=1):
        self.stride = as_tuple(stride, 2, "stride", "local_convolution_2d", 1)

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "W", "b"))
        n_in = in_types.size()
        type_check.expect(n_in >= 2, n_in <= 3)
        x_type, w_type = in_types[:2]
        sy, sx = self.stride
        type_check.expect(
            x_type.dtype.kind == "f",
            w_type.dtype.kind == "f",
            x_type.ndim == 4,
            w_type.ndim == 6,
            x_type.shape[1] == w_type.shape[3],
            x_type.shape[2] >= w_type.shape[4],
            x_type.shape[3] >= w_type.shape[5],
            w_type.shape[1] == (x_type.shape[2] - w_type.shape[4]) // sy + 1,
            w_type.shape[2] == (x_type.shape[3] - w_type.shape[5]) // sx + 1,
        )
        if type_check.eval(n_in) == 3:
            b_type = in_types[2]
            type_check.expect(
                b_type.dtype == x_type.dtype,
                b_type.ndim == 3,
                b_type.shape == w_type.shape[:3],
            )

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, W = inputs[:2]
        n = x.shape[0]
        c_out, out_h, out_w, c_in, kh, kw = W.shape
        n_loc, n_feat = out_h * out_w, c_in * kh * kw
        col = im2col_nd(x, (kh, kw), self.stride, 0)
        # One (n, K) x (K, c_O) product per output location, batched over locations.
        col = col.transpose(4, 5, 0, 1, 2, 3).reshape(n_loc, n, n_feat)
        w_loc = W.transpose(1, 2, 0, 3, 4, 5).reshape(n_loc, c_out, n_feat)
        y = matmul_as(col, w_loc.swapaxes(1, 2), x.dtype)
        y = y.reshape(out_h, out_w, n, c_out).transpose(2, 3, 0, 1).copy()
        if len(inputs) == 3:
            y += inputs[2]
        return (y,)

    def backward(self, indexes, grad_outputs):
        x_in, W_in = self.get_retained_inputs()
        # x and W may differ in dtype: the gradients are taken in their common dtype and
        # cast back to each input's (the casts are no-ops when the dtypes agree).
        common = numpy.result_type(x_in.dtype, W_in.dtype)
        x, W, gy = (ops.cast(v, common) for v in (x_in, W_in, grad_outputs[0]))
        n = x.shape[0]
        c_out, out_h, out_w, c_in, kh, kw = W.shape
        n_loc, n_feat = out_h * out_w, c_in * kh * kw
        gy_loc = ops.reshape(ops.transpose(gy, (2, 3, 0, 1)), (n_loc, n, c_out))
        ret = []
        for i in indexes:
            if i == 0:
                w_loc = ops.reshape(ops.transpose(W, (1, 2, 0, 3, 4, 5)), (n_loc, c_out, n_feat))
                gcol = ops.matmul(gy_loc, w_loc)
                gcol = ops.transpose(ops.reshape(gcol, (out_h, out_w, n, n_feat)), (2, 3, 0, 1))
                params = ((kh, kw), self.stride, (0, 0), False, (1, 1))
                ret.append(ops.cast(Col2Im(params, x.shape[2:]).apply((gcol,))[0], x_in.dtype))
            elif i == 1:
                col = Im2Col((kh, kw), self.stride, (0, 0), False, (1, 1)).apply((x,))[0]
                col = ops.reshape(ops.transpose(col, (2, 3, 0, 1)), (n_loc, n, n_feat))
                gW = ops.matmul(gy_loc, col, transa=True)
                gW = ops.reshape(gW, (out_h, out_w, c_out, c_in, kh, kw))
                ret.append(ops.cast(ops.transpose(gW, (2, 0, 1, 3, 4, 5)), W_in.dtype))
            else:
                ret.append(ops.sum(grad_outputs[0], axis=0))
        return tuple(ret)


def local_convolution_2d(x, W, b=None, stride=1):
    """Two-dimensional local convolution: a convolution with unshared weights.

    Like :func:`~dbr.functions.convolution_2d` without padding, except that
    each output location :math:`(i, j)` has its own filters:

    .. math::

        y_{n, o, i, j} = \\sum_{c, p, q} W_{o, i, j, c, p, q}\\,
            x_{n, c, i s_Y + p, j s_X + q} + b_{o, i, j}.

    The output size is :math:`h_O = \\lfloor (h - k_H) / s_Y \\rfloor + 1`,
    :math:`w_O = \\lfloor (w - k_W) / s_X \\rfloor + 1`, which ``W``'s shape
    must match.

    Args:
        x (Variable or array): input of shape :math:`(n, c_I, h, w)`; float16,
            float32 or float64.
        W (Variable or array): filters of shape
            :math:`(c_O, h_O, w_O, c_I, k_H, k_W)`, of any floating dtype
            (the product is taken in the common dtype of ``x`` and ``W``;
            each gradient has its input's dtype).
        b (Variable, array or None): bias of shape :math:`(c_O, h_O, w_O)`
            and ``x``'s dtype.
        stride (int or pair of ints): the strides :math:`(s_Y, s_X)`;
            ``stride=s`` is ``stride=(s, s)``.

    Returns:
        Variable: of shape :math:`(n, c_O, h_O, w_O)` and ``x``'s dtype.

    Raises:
        InvalidType: the shapes or dtypes do not fit.
        TypeError, ValueError: ``stride`` is not one or two positive ints.

    >>> import numpy as np
    >>> x = np.ones((2, 3, 7, 7), np.float32)
    >>> W = np.ones((4, 5, 5, 3, 3, 3), np.float32)
    >>> y = local_convolution_2d(x, W, np.zeros((4, 5, 5), np.float32))
    >>> y.shape, float(y.array[0, 0, 0, 0])
    ((2, 4, 5, 5), 27.0)
    """
    func = LocalConvolution2DFunction(stride)
    return func.apply((x, W) if b is None else (x, W, b))[0]
