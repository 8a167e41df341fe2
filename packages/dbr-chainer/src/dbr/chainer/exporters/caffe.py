"""``chainer.exporters.caffe``: :func:`dbr.links.caffe.export`, the same object.

``export(model, args, directory=None, export_params=True, graph_name='Graph')``
writes ``chainer_model.prototxt`` and ``chainer_model.caffemodel`` as
Chainer's exporter does.
"""

from dbr.links.caffe.exporter import export

__all__ = ["export"]
