"""im2col: every sliding window of a batch of images, laid out as channels."""

from dbr.core import FunctionNode, type_check
from dbr.functions.connection._im2col import as_tuple, col2im_nd, get_conv_outsize, im2col_nd


class Im2Col(FunctionNode):
    """``(n, c, h, w)`` to ``(n, c*kh*kw, out_h, out_w)``: each window's pixels as channels."""

    def __init__(self, ksize, stride, pad, cover_all, dilate):
        self.ksize = ksize
        self.stride = stride
        self.pad = pad
        self.cover_all = cover_all
        self.dilate = dilate

    def check_type_forward(self, in_types):
        type_check.argname(in_types, ("x",))
        x_type = in_types[0]
        type_check.expect(x_type.dtype.kind == "f", x_type.ndim == 4)
        spatial = type_check.eval(x_type.shape)[2:]
        outs = tuple(
            get_conv_outsize(
                spatial[i], self.ksize[i], self.stride[i], self.pad[i], self.cover_all,
                self.dilate[i],
            )
            for i in range(2)
        )  # fmt: skip
        if min(outs) <= 0:
            raise type_check.InvalidType(
                "a window (ksize, dilate) that fits x's padded height and width",
                f"x.shape == {type_check.eval(x_type.shape)}, ksize={self.ksize}, "
                f"pad={self.pad}, dilate={self.dilate}",
            )

    def forward(self, inputs):
        x = inputs[0]
        self._in_size = x.shape[2:]
        col = im2col_nd(x, self.ksize, self.stride, self.pad, self.dilate, self.cover_all)
        n, c, kh, kw, out_h, out_w = col.shape
        return (col.reshape(n, c * kh * kw, out_h, out_w),)

    def backward(self, indexes, grad_outputs):
        params = (self.ksize, self.stride, self.pad, self.cover_all, self.dilate)
        return Col2Im(params, self._in_size).apply(grad_outputs)


class Col2Im(FunctionNode):
    """The gradient of :class:`Im2Col`: every window's channels added back into the image.

    Args:
        params: Im2Col's ``(ksize, stride, pad, cover_all, dilate)``.
        in_size: the image's ``(h, w)``.
    """

    def __init__(self, params, in_size):
        self.params = params
        self.in_size = in_size

    def forward(self, inputs):
        gy = inputs[0]
        (kh, kw), stride, pad, _, dilate = self.params
        n, ckk, out_h, out_w = gy.shape
        col = gy.reshape(n, ckk // (kh * kw), kh, kw, out_h, out_w)
        return (col2im_nd(col, stride, pad, self.in_size, dilate),)

    def backward(self, indexes, grad_outputs):
        return Im2Col(*self.params).apply(grad_outputs)


def im2col(x, ksize, stride=1, pad=0, cover_all=False, dilate=1):
    """Extract every sliding window of ``x`` as channels: the input of a convolution's matmul.

    ``y[n, (c*kh + i)*kw + j, p, q] = x_pad[n, c, p*sy + i*dy, q*sx + j*dx]``,
    where ``x_pad`` is ``x`` with ``ph``/``pw`` zeros on each side (more at
    the end when ``cover_all`` needs them). A convolution is then
    ``W.reshape(c_O, -1)`` times ``y`` over the channel axis. The gradient adds
    every window back into the image (col2im).

    Args:
        x (Variable or array): images of shape ``(n, c, h, w)``, floating.
        ksize (int or pair of ints): window size ``(kh, kw)``; an int ``k``
            means ``(k, k)``.
        stride (int or pair of ints): window stride ``(sy, sx)``.
        pad (int or pair of ints): zero padding ``(ph, pw)`` on each side.
        cover_all (bool): if True, add windows so that every input pixel is
            covered (the output may be one larger on each axis).
        dilate (int or pair of ints): spacing ``(dy, dx)`` between the
            pixels of a window.

    Returns:
        Variable: of shape ``(n, c*kh*kw, out_h, out_w)`` and ``x``'s dtype,
        with ``out_h = (h + 2ph - (kh - 1)*dy - 1) // sy + 1`` (and likewise
        ``out_w``; ``cover_all`` adds ``sy - 1`` to the numerator).

    >>> import numpy as np
    >>> x = np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3)
    >>> im2col(x, 2)[0, :, 0, 0].array
    array([0., 1., 3., 4.], dtype=float32)
    """
    ksize = as_tuple(ksize, 2, "ksize", "im2col", 1)
    stride = as_tuple(stride, 2, "stride", "im2col", 1)
    pad = as_tuple(pad, 2, "pad", "im2col")
    dilate = as_tuple(dilate, 2, "dilate", "im2col", 1)
    return Im2Col(ksize, stride, pad, bool(cover_all), dilate).apply((x,))[0]
