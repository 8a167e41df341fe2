"""``onnx_chainer``: ``dbr.onnx``'s names, the same objects (onnx_chainer 7.8's API).

Imported only when used: ``import dbr.chainer`` loads neither this module nor
onnx. ``onnx_chainer.replace_func`` forwards to ``dbr.onnx.replace_func``.
"""

import dbr.onnx as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
