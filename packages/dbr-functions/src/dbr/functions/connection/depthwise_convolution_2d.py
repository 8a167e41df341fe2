"""depthwise_convolution_2d: two-dimensional convolution of each channel by its own filters."""

from dbr.core import FunctionNode, ops, type_check
from dbr.functions.connection import convolution_nd, deconvolution_nd
from dbr.functions.connection._convolution_common import bias_grad
from dbr.functions.connection._im2col import as_tuple

_NO_DILATION = (1, 1)
_NO_COVER_ALL = (False, False)


def _grouped_filter(W):
    """The grouped-convolution filter ``(c_I * c_M, 1, h_K, w_K)`` of a depthwise one."""
    multiplier, channels = W.shape[:2]
    return W.transpose(1, 0, 2, 3).reshape((channels * multiplier, 1) + W.shape[2:])


class DepthwiseConvolution2D(FunctionNode):
    """Depthwise convolution: a convolution with one group per input channel.

    Args:
        stride, pad (pairs of ints): the normalized options.
    """

    def __init__(self, stride, pad):
        self.stride = stride
        self.pad = pad

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x", "W", "b"))
        type_check.expect(in_types.size() >= 2, in_types.size() <= 3)
        x_type, w_type = in_types[:2]
        type_check.expect(
            x_type.dtype.kind == "f",
            w_type.dtype.kind == "f",
            x_type.ndim == 4,
            w_type.ndim == 4,
            x_type.shape[1] == w_type.shape[1],
        )
        if len(in_types) == 3:
            b_type = in_types[2]
            type_check.expect(
                b_type.dtype == x_type.dtype,
                b_type.ndim == 1,
                b_type.shape[0] == w_type.shape[0] * w_type.shape[1],
            )
        x_shape = type_check.eval(x_type.shape)
        w_shape = type_check.eval(w_type.shape)
        outs = convolution_nd.conv_outsize(
            x_shape[2:], w_shape[2:], self.stride, self.pad, _NO_DILATION, _NO_COVER_ALL
        )
        if any(o <= 0 for o in outs):
            raise type_check.InvalidType(
                "a positive output size on every spatial axis",
                f"output size {outs} from x.shape == {x_shape}, W.shape == {w_shape}, "
                f"stride={self.stride}, pad={self.pad}",
            )

    def forward(self, inputs):
        self.retain_inputs((0, 1))
        x, W = inputs[:2]
        b = inputs[2] if len(inputs) == 3 else None
        channels = W.shape[1]
        w = _grouped_filter(W)
        y = convolution_nd.convolve(
            x, w, b, self.stride, self.pad, _NO_DILATION, channels, _NO_COVER_ALL
        )
        return (y.astype(x.dtype, copy=False),)

    def backward(self, indexes, grad_outputs):
        x, W = self.get_retained_inputs()
        gy = grad_outputs[0]
        multiplier, channels = W.shape[:2]
        ksize = W.shape[2:]
        ret = []
        for i in indexes:
            if i == 0:
                w = ops.reshape(ops.transpose(W, (1, 0, 2, 3)), (channels * multiplier, 1) + ksize)
                deconv = deconvolution_nd.DeconvolutionND(
                    self.stride, self.pad, _NO_DILATION, channels, x.shape[2:]
                )
                ret.append(deconv.apply((gy, w))[0])
            elif i == 1:
                grad_w = convolution_nd.ConvolutionNDGradW(
                    self.stride, self.pad, _NO_DILATION, channels, _NO_COVER_ALL, ksize, W.dtype
                )
                gw = grad_w.apply((x, gy))[0]
                gw = ops.reshape(gw, (channels, multiplier) + ksize)
                ret.append(ops.transpose(gw, (1, 0, 2, 3)))
            else:
                ret.append(bias_grad(gy))
        return tuple(ret)


def depthwise_convolution_2d(x, W, b=None, stride=1, pad=0):
    """Two-dimensional depthwise convolution.

    Each input channel ``c`` is convolved with its own ``c_M`` filters
    ``W[:, c]`` and gives the output channels ``c * c_M .. c * c_M + c_M - 1``::

        y[i, c * c_M + m, u, v] = b[c * c_M + m] + sum_{j, k} W[m, c, j, k]
                                  * xpad[i, c, u s_Y + j, v s_X + k]

    (a :func:`~dbr.functions.connection.convolution_2d.convolution_2d` with
    ``groups = c_I``, computed by the same machinery).

    Args:
        x (Variable or array): input ``(n, c_I, h_I, w_I)``, floating.
        W (Variable or array): filter ``(c_M, c_I, h_K, w_K)``; ``c_M`` is the
            channel multiplier.
        b (Variable or array or None): bias ``(c_I * c_M,)`` of ``x``'s dtype.
        stride (int or pair of ints): ``(s_Y, s_X)``.
        pad (int or pair of ints): zero padding ``(p_H, p_W)``.

    Returns:
        Variable: output ``(n, c_I * c_M, h_O, w_O)`` with
        ``h_O = (h_I + 2 p_H - h_K) // s_Y + 1`` (likewise ``w_O``).

    >>> import numpy as np
    >>> x = np.random.uniform(0, 1, (2, 3, 4, 7)).astype(np.float32)
    >>> W = np.random.uniform(0, 1, (2, 3, 3, 2)).astype(np.float32)
    >>> depthwise_convolution_2d(x, W, stride=1, pad=1).shape
    (2, 6, 4, 8)
    """
    node = DepthwiseConvolution2D(
        as_tuple(stride, 2, "stride", "depthwise_convolution_2d", 1),
        as_tuple(pad, 2, "pad", "depthwise_convolution_2d"),
    )
    return node.apply((x, W) if b is None else (x, W, b))[0]
