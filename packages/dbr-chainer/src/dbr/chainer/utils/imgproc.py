"""``chainer.utils.imgproc``: ``oversample`` (Caffe's ten crops), dbr.links.model.vision's."""

from dbr.links.model.vision._pretrained import oversample

__all__ = ["oversample"]
