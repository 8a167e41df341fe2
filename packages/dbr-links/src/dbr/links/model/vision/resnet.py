"""ResNet50Layers, ResNet101Layers, ResNet152Layers: MSRA's ImageNet ResNets, Chainer's names."""

import collections
import warnings

import dbr.functions as F
from dbr.core import Chain, initializers
from dbr.core.utils import docstring_tail
from dbr.links._checks import is_int
from dbr.links.connection.convolution_2d import Convolution2D
from dbr.links.connection.linear import Linear
from dbr.links.model.vision import _caffe, _pretrained
from dbr.links.normalization.batch_normalization import BatchNormalization

_MEAN_BGR = (103.063, 115.903, 123.152)
_BLOCKS = {50: (3, 4, 6, 3), 101: (3, 4, 23, 3), 152: (3, 8, 36, 3)}


@docstring_tail(_pretrained.prepare_doc(_MEAN_BGR))
def prepare(image, size=(224, 224)):
    """Turn an RGB image into a ResNet input: resized, BGR, ImageNet mean subtracted, (3, H, W)."""
    return _pretrained.prepare_image(image, size, _MEAN_BGR)


def _max_pooling_3x3(x):
    return F.max_pooling_2d(x, ksize=3, stride=2)


def _global_average_pooling_2d(x):
    return F.mean(x, axis=(2, 3))


class ResNetLayers(_pretrained.PretrainedLayers):
    """A ResNet (He et al., 2015) with its stages' outputs addressable by name.

    Use :class:`ResNet50Layers`, :class:`ResNet101Layers` or
    :class:`ResNet152Layers`. The children are ``conv1`` (7x7, stride 2,
    pad 3, 3 to 64 channels, with a bias), ``bn1``, ``res2`` ... ``res5``
    (:class:`BuildingBlock` s of 256, 512, 1024 and 2048 output channels,
    the last three halving the resolution) and ``fc6`` (2048 to 1000). The
    input is a batch of shape ``(N, 3, H, W)`` made by :func:`prepare`
    (224x224 for ImageNet; the global average pooling before ``fc6`` takes
    any size of at least 33x33). The batch normalizations use the batch's
    statistics (and update their running averages) when ``config.train`` is
    True, as every
    :class:`~dbr.links.normalization.batch_normalization.BatchNormalization`;
    run inference under ``using_config('train', False)``.

    Args:
        pretrained_model (str, os.PathLike or None): ``'auto'`` loads
            ``ResNet-{n_layers}-model.npz`` from the model directory
            (``$DBR_MODEL_ROOT``, default ``~/.dbr/models``), or, when it is
            not there, converts MSRA's published
            ``ResNet-{n_layers}-model.caffemodel`` found there and saves the
            npz file beside it; dbr downloads nothing, so one of them must be
            placed there. A path loads that npz file (saved by dbr or
            converted by Chainer) or ``.caffemodel`` file. None keeps the
            random initialisation of the paper (convolution weights from
            ``HeNormal(scale=1.0)``). When weights
            are loaded, the convolutions are first filled with zeros rather
            than sampled.
        n_layers (int): 50, 101 or 152.
        downsample_fb (bool): where the stride 2 of each stage's first
            bottleneck sits: False puts it on the first 1x1 convolution
            (MSRA's original ResNet, the pre-trained weights' layout), True
            on the 3x3 convolution (Facebook's ResNet).

    Attributes:
        available_layers (list of str): the layer names ``forward`` and
            ``extract`` accept, in order: ``'conv1'``, ``'pool1'``,
            ``'res2'`` ... ``'res5'``, ``'pool5'``, ``'fc6'``, ``'prob'``.

    Raises:
        ValueError: ``n_layers`` is not 50, 101 or 152.
        FileNotFoundError: ``'auto'`` and the file is not in the model
            directory (the message gives the path).
    """

    _prepare = staticmethod(prepare)
    _extract_layers = ("pool5",)

    def __init__(self, pretrained_model, n_layers, downsample_fb=False):
        super().__init__()
        if n_layers not in _BLOCKS:
            raise ValueError(
                f"{type(self).__name__}: expected n_layers to be 50, 101 or 152, got {n_layers!r}"
            )
        path = None
        if pretrained_model:
            path = _pretrained.resolve_pretrained(
                type(self).__name__, pretrained_model, f"ResNet-{n_layers}-model.npz",
                f"ResNet-{n_layers}-model.caffemodel",
            )  # fmt: skip
            initialW = initializers.Zero()
        else:
            initialW = initializers.HeNormal(scale=1.0)
        blocks = _BLOCKS[n_layers]
        with self.init_scope():
            self.conv1 = Convolution2D(3, 64, 7, 2, 3, initialW=initialW)
            self.bn1 = BatchNormalization(64)
            self.res2 = BuildingBlock(blocks[0], 64, 64, 256, 1, initialW, downsample_fb)
            self.res3 = BuildingBlock(blocks[1], 256, 128, 512, 2, initialW, downsample_fb)
            self.res4 = BuildingBlock(blocks[2], 512, 256, 1024, 2, initialW, downsample_fb)
            self.res5 = BuildingBlock(blocks[3], 1024, 512, 2048, 2, initialW, downsample_fb)
            self.fc6 = Linear(2048, 1000)
        self._n_layers = n_layers
        if path is not None:
            _pretrained.load_pretrained(self, path, f"ResNet-{n_layers}-model.npz")

    def _transfer_caffe(self, caffe):
        _caffe.transfer_resnet(self, caffe, type(self).__name__, self._n_layers)

    @classmethod
    def convert_caffemodel_to_npz(cls, path_caffemodel, path_npz, n_layers=None):
        """Convert MSRA's published Caffe model to an npz file that ``pretrained_model`` loads.

        Args:
            path_caffemodel (str or os.PathLike): ``ResNet-{n_layers}-model.caffemodel``.
            path_npz (str or os.PathLike): the npz file to write (uncompressed,
                with Chainer's key names).
            n_layers (int): 50, 101 or 152; by default the class's depth
                (50 for :class:`ResNetLayers` itself, as Chainer's default).

        Raises:
            ValueError: ``n_layers`` is not 50, 101 or 152 or differs from
                the class's depth, or a layer of the model is missing from the
                file or has another shape (the message names it).
        """
        depth = getattr(cls, "_depth", None)
        if n_layers is None:
            n_layers = depth or 50
        if depth is not None and n_layers != depth:
            raise ValueError(
                f"{cls.__name__}.convert_caffemodel_to_npz: expected n_layers={depth} (the "
                f"class's depth) or None, got {n_layers!r}"
            )
        _pretrained.convert_caffemodel(ResNetLayers(None, n_layers), path_caffemodel, path_npz)

    @property
    def functions(self):
        """The ordered table ``{layer name: [callables applied in turn]}`` that forward runs."""
        return collections.OrderedDict(
            [
                ("conv1", [self.conv1, self.bn1, F.relu]),
                ("pool1", [_max_pooling_3x3]),
                ("res2", [self.res2]),
                ("res3", [self.res3]),
                ("res4", [self.res4]),
                ("res5", [self.res5]),
                ("pool5", [_global_average_pooling_2d]),
                ("fc6", [self.fc6]),
                ("prob", [F.softmax]),
            ]
        )


class ResNet50Layers(ResNetLayers):
    """The 50-layer ResNet (blocks of 3, 4, 6, 3 bottlenecks); see :class:`ResNetLayers`.

    Args:
        pretrained_model (str, os.PathLike or None): ``'auto'`` (default:
            ``ResNet-50-model.npz``, else ``ResNet-50-model.caffemodel``
            converted, in ``$DBR_MODEL_ROOT``, default ``~/.dbr/models``;
            nothing is downloaded), the path of an npz or ``.caffemodel``
            file, or None for random weights.
        downsample_fb (bool): see :class:`ResNetLayers`; default False.
    """

    def __init__(self, pretrained_model="auto", downsample_fb=False):
        super().__init__(pretrained_model, 50, downsample_fb)

    _depth = 50


class ResNet101Layers(ResNetLayers):
    """The 101-layer ResNet (blocks of 3, 4, 23, 3 bottlenecks); see :class:`ResNetLayers`.

    Args:
        pretrained_model (str, os.PathLike or None): ``'auto'`` (default:
            ``ResNet-101-model.npz``, else ``ResNet-101-model.caffemodel``
            converted, in ``$DBR_MODEL_ROOT``, default ``~/.dbr/models``;
            nothing is downloaded), the path of an npz or ``.caffemodel``
            file, or None for random weights.
        downsample_fb (bool): see :class:`ResNetLayers`; default False.
    """

    def __init__(self, pretrained_model="auto", downsample_fb=False):
        super().__init__(pretrained_model, 101, downsample_fb)

    _depth = 101


class ResNet152Layers(ResNetLayers):
    """The 152-layer ResNet (blocks of 3, 8, 36, 3 bottlenecks); see :class:`ResNetLayers`.

    Args:
        pretrained_model (str, os.PathLike or None): ``'auto'`` (default:
            ``ResNet-152-model.npz``, else ``ResNet-152-model.caffemodel``
            converted, in ``$DBR_MODEL_ROOT``, default ``~/.dbr/models``;
            nothing is downloaded), the path of an npz or ``.caffemodel``
            file, or None for random weights.
        downsample_fb (bool): see :class:`ResNetLayers`; default False.
    """

    def __init__(self, pretrained_model="auto", downsample_fb=False):
        super().__init__(pretrained_model, 152, downsample_fb)

    _depth = 152


class BuildingBlock(Chain):
    """A ResNet stage: a :class:`BottleneckA` (``a``) then ``n_layers - 1`` :class:`BottleneckB` s.

    The children are ``a``, ``b1``, ``b2``, ..., applied in that order.

    Args:
        n_layers (int): the number of bottlenecks (at least 1).
        in_channels (int): channels of the input.
        mid_channels (int): channels inside each bottleneck.
        out_channels (int): channels of the output.
        stride (int or pair of int): the stride of ``a`` (2 halves the
            resolution).
        initialW: the convolutions' weight initializer (None: LeCunNormal).
        downsample_fb (bool): where ``a`` puts its stride (see
            :class:`BottleneckA`).

    Input ``(N, in_channels, H, W)``, output
    ``(N, out_channels, ceil(H / stride), ceil(W / stride))``.

    Raises:
        ValueError: ``n_layers`` is not a positive int.
    """

    def __init__(
        self,
        n_layers=None,
        in_channels=None,
        mid_channels=None,
        out_channels=None,
        stride=None,
        initialW=None,
        downsample_fb=None,
        **kwargs,
    ):
        super().__init__()
        if "n_layer" in kwargs:
            warnings.warn(
                "BuildingBlock: the argument n_layer is deprecated; use n_layers",
                DeprecationWarning,
                stacklevel=2,
            )
            n_layers = kwargs.pop("n_layer")
        if kwargs:
            raise TypeError(
                f"BuildingBlock: got unexpected keyword argument(s) {', '.join(kwargs)}"
            )
        if not is_int(n_layers) or n_layers < 1:
            raise ValueError(
                f"BuildingBlock: expected n_layers to be an int >= 1, got {n_layers!r}"
            )
        self._forward = ["a"] + [f"b{i}" for i in range(1, n_layers)]
        with self.init_scope():
            self.a = BottleneckA(
                in_channels, mid_channels, out_channels, stride, initialW, downsample_fb
            )
            for name in self._forward[1:]:
                setattr(self, name, BottleneckB(out_channels, mid_channels, initialW))

    def forward(self, x):
        """Apply the bottlenecks in turn to ``x`` of shape ``(N, in_channels, H, W)``."""
        for name in self._forward:
            x = getattr(self, name)(x)
        return x


class BottleneckA(Chain):
    """A bottleneck with a projection shortcut, which changes channels and may downsample.

    ``relu(bn3(conv3(relu(bn2(conv2(relu(bn1(conv1(x)))))))) + bn4(conv4(x)))``
    where ``conv1`` is 1x1 (in to mid channels), ``conv2`` 3x3 pad 1 (mid to
    mid), ``conv3`` 1x1 (mid to out) and ``conv4`` the 1x1 shortcut (in to
    out, with ``stride``); none has a bias, each is followed by a
    :class:`~dbr.links.normalization.batch_normalization.BatchNormalization`.

    Args:
        in_channels (int): channels of the input.
        mid_channels (int): channels inside the bottleneck.
        out_channels (int): channels of the output.
        stride (int or pair of int): default 2.
        initialW: the convolutions' weight initializer (None: LeCunNormal).
        downsample_fb (bool): False (default) puts ``stride`` on ``conv1``
            (MSRA's ResNet), True on ``conv2`` (Facebook's ResNet).
    """

    def __init__(
        self, in_channels, mid_channels, out_channels, stride=2, initialW=None, downsample_fb=False
    ):
        super().__init__()
        stride_1x1, stride_3x3 = (1, stride) if downsample_fb else (stride, 1)
        with self.init_scope():
            self.conv1 = Convolution2D(
                in_channels, mid_channels, 1, stride_1x1, 0, initialW=initialW, nobias=True
            )
            self.bn1 = BatchNormalization(mid_channels)
            self.conv2 = Convolution2D(
                mid_channels, mid_channels, 3, stride_3x3, 1, initialW=initialW, nobias=True
            )
            self.bn2 = BatchNormalization(mid_channels)
            self.conv3 = Convolution2D(
                mid_channels, out_channels, 1, 1, 0, initialW=initialW, nobias=True
            )
            self.bn3 = BatchNormalization(out_channels)
            self.conv4 = Convolution2D(
                in_channels, out_channels, 1, stride, 0, initialW=initialW, nobias=True
            )
            self.bn4 = BatchNormalization(out_channels)

    def forward(self, x):
        """Apply the bottleneck to ``x`` of shape ``(N, in_channels, H, W)``."""
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.relu(self.bn2(self.conv2(h)))
        h = self.bn3(self.conv3(h))
        return F.relu(h + self.bn4(self.conv4(x)))


class BottleneckB(Chain):
    """A bottleneck with an identity shortcut, which keeps channels and resolution.

    ``relu(bn3(conv3(relu(bn2(conv2(relu(bn1(conv1(x)))))))) + x)`` where
    ``conv1`` is 1x1 (in to mid channels), ``conv2`` 3x3 pad 1 and ``conv3``
    1x1 (mid to in); none has a bias, each is followed by a
    :class:`~dbr.links.normalization.batch_normalization.BatchNormalization`.

    Args:
        in_channels (int): channels of the input and the output.
        mid_channels (int): channels inside the bottleneck.
        initialW: the convolutions' weight initializer (None: LeCunNormal).
    """

    def __init__(self, in_channels, mid_channels, initialW=None):
        super().__init__()
        with self.init_scope():
            self.conv1 = Convolution2D(
                in_channels, mid_channels, 1, 1, 0, initialW=initialW, nobias=True
            )
            self.bn1 = BatchNormalization(mid_channels)
            self.conv2 = Convolution2D(
                mid_channels, mid_channels, 3, 1, 1, initialW=initialW, nobias=True
            )
            self.bn2 = BatchNormalization(mid_channels)
            self.conv3 = Convolution2D(
                mid_channels, in_channels, 1, 1, 0, initialW=initialW, nobias=True
            )
            self.bn3 = BatchNormalization(in_channels)

    def forward(self, x):
        """Apply the bottleneck to ``x`` of shape ``(N, in_channels, H, W)``."""
        h = F.relu(self.bn1(self.conv1(x)))
        h = F.relu(self.bn2(self.conv2(h)))
        return F.relu(self.bn3(self.conv3(h)) + x)
