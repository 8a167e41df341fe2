"""``onnx_chainer``: ``dbr.onnx``'s names, the same objects (onnx_chainer 7.8's API).

Imported only when used: ``import dbr.chainer`` loads neither this module nor
onnx. Its submodules are dbr.onnx's own modules (``onnx_chainer.replace_func``
is ``dbr.onnx.replace_func``, ``onnx_chainer.testing`` is ``dbr.onnx.testing``,
see :func:`dbr.chainer._forward.mirror_submodules`). As in onnx_chainer,
``onnx_chainer.export`` is the function and ``import onnx_chainer.export`` the
module that defines it.
"""

import importlib

import dbr.onnx as _target
from dbr.chainer._forward import forward, mirror_submodules

mirror_submodules(globals(), "dbr.onnx")
__getattr__, __dir__ = forward(globals(), _target)
# Importing a submodule binds its name in the package: import it now, then bind the function.
importlib.import_module(f"{__name__}.export")
export = _target.export
