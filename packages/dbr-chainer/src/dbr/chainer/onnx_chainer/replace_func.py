"""``onnx_chainer.replace_func``: ``dbr.onnx.replace_func``'s names, the same objects."""

import dbr.onnx.replace_func as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
