"""``chainer.exporters``: Chainer's exporters package; ``caffe`` is dbr.links.caffe's exporter."""
