"""``chainer.utils.conv_nd``: N-d im2col and col2im, ``dbr.functions.conv``'s."""

from dbr.functions.conv import (
    as_tuple,
    col2im_nd,
    col2im_nd_cpu,
    col2im_nd_gpu,
    get_conv_outsize,
    im2col_nd,
    im2col_nd_cpu,
    im2col_nd_gpu,
)

__all__ = [
    "as_tuple", "col2im_nd", "col2im_nd_cpu", "col2im_nd_gpu", "get_conv_outsize", "im2col_nd",
    "im2col_nd_cpu", "im2col_nd_gpu",
]  # fmt: skip
