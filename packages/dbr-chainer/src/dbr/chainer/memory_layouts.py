"""``chainer.memory_layouts``: the names of Chainer's cuDNN memory layouts.

dbr keeps every array in the standard (channel-first) layout and has no
``layout`` argument on Variable or links; these constants let Chainer code
that names a layout import. The channel-first layouts are None (the
standard one), as in Chainer.
"""

__all__ = [
    "CUDNN_CHANNEL_FIRST_W", "CUDNN_CHANNEL_FIRST_X", "CUDNN_CHANNEL_LAST_W",
    "CUDNN_CHANNEL_LAST_X",
]  # fmt: skip

CUDNN_CHANNEL_FIRST_X = None
"""Activations as ``(N, C, H, W)``: the standard layout, dbr's only one."""

CUDNN_CHANNEL_LAST_X = "CUDNN_CHANNEL_LAST_X"
"""Activations as ``(N, H, W, C)`` in Chainer with cuDNN; dbr does not use it."""

CUDNN_CHANNEL_FIRST_W = None
"""Filters as ``(out, in, kh, kw)``: the standard layout, dbr's only one."""

CUDNN_CHANNEL_LAST_W = "CUDNN_CHANNEL_LAST_W"
"""Filters as ``(out, kh, kw, in)`` in Chainer with cuDNN; dbr does not use it."""
