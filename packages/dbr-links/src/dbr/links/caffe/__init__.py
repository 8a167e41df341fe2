"""Caffe models: read a ``.caffemodel`` as a chain (``CaffeFunction``), write one (``export``).

The files are read and written by dbr itself (Protocol Buffers' wire and
text formats against the fields of Caffe's ``caffe.proto`` that are used):
neither Caffe nor the ``protobuf`` package is needed.
"""

from dbr.links.caffe._wire import CaffeFormatError
from dbr.links.caffe.caffe_function import CaffeFunction
from dbr.links.caffe.exporter import export

__all__ = ["CaffeFormatError", "CaffeFunction", "export"]
