"""VGG16Layers and VGG19Layers: the VGG team's ImageNet networks, with Chainer's layer names."""

import collections

import dbr.functions as F
from dbr.core import initializers
from dbr.core.utils import docstring_tail
from dbr.links.connection.convolution_2d import Convolution2D
from dbr.links.connection.linear import Linear
from dbr.links.model.vision import _caffe, _pretrained

_MEAN_BGR = (103.939, 116.779, 123.68)

# Output channels of each conv stage's layers, per depth; in_channels follow.
_STAGES = {
    16: ((64, 2), (128, 2), (256, 3), (512, 3), (512, 3)),
    19: ((64, 2), (128, 2), (256, 4), (512, 4), (512, 4)),
}
_DEFAULT_FILES = {16: "VGG_ILSVRC_16_layers.npz", 19: "VGG_ILSVRC_19_layers.npz"}
_CAFFE_FILES = {16: "VGG_ILSVRC_16_layers.caffemodel", 19: "VGG_ILSVRC_19_layers.caffemodel"}


@docstring_tail(_pretrained.prepare_doc(_MEAN_BGR))
def prepare(image, size=(224, 224)):
    """Turn an RGB image into a VGG input: resized, BGR, ImageNet mean subtracted, (3, H, W)."""
    return _pretrained.prepare_image(image, size, _MEAN_BGR)


def _max_pooling_2d(x):
    return F.max_pooling_2d(x, 2)


class VGGLayers(_pretrained.PretrainedLayers):
    """A VGG network (Simonyan and Zisserman, 2014) with its layers' outputs addressable by name.

    Use :class:`VGG16Layers` or :class:`VGG19Layers`. The children are
    ``conv1_1``, ``conv1_2``, ``conv2_1``, ``conv2_2``, ``conv3_1`` ...
    ``conv5_3`` (``conv3_4``, ``conv4_4``, ``conv5_4`` too for 19 layers),
    all 3x3 convolutions with pad 1 and biases, and ``fc6`` (25088 to 4096),
    ``fc7`` (4096 to 4096) and ``fc8`` (4096 to 1000). The input is a batch
    of shape ``(N, 3, 224, 224)`` made by :func:`prepare` (``fc6`` fixes the
    size); the convolution layers alone take any size of at least 32x32.
    In :meth:`forward`, ``fc6`` and ``fc7`` include their ReLU and dropout
    (dropout acts only when ``config.train`` is True).

    Args:
        pretrained_model (str, os.PathLike or None): ``'auto'`` (default)
            loads ``VGG_ILSVRC_16_layers.npz`` (or ``..._19_...``) from the
            model directory (``$DBR_MODEL_ROOT``, default ``~/.dbr/models``),
            or, when it is not there, converts the published
            ``VGG_ILSVRC_16_layers.caffemodel`` found there and saves the npz
            file beside it; dbr downloads nothing, so one of them must be
            placed there. A path loads that npz file (saved by dbr or
            converted by Chainer) or ``.caffemodel`` file. None keeps the
            random initialisation of the paper (weights from
            ``Normal(0.01)``, zero biases). When weights are loaded, the
            parameters are first filled with zeros rather than sampled.
        n_layers (int): 16 or 19.

    Attributes:
        available_layers (list of str): the layer names ``forward`` and
            ``extract`` accept, in order: ``'conv1_1'`` ... ``'pool1'`` ...
            ``'pool5'``, ``'fc6'``, ``'fc7'``, ``'fc8'``, ``'prob'``.

    Raises:
        ValueError: ``n_layers`` is neither 16 nor 19.
        FileNotFoundError: ``'auto'`` and the file is not in the model
            directory (the message gives the path).
    """

    _prepare = staticmethod(prepare)
    _extract_layers = ("fc7",)

    def __init__(self, pretrained_model="auto", n_layers=16):
        super().__init__()
        if n_layers not in _STAGES:
            raise ValueError(
                f"{type(self).__name__}: expected n_layers to be 16 or 19, got {n_layers!r}"
            )
        path = None
        if pretrained_model:
            path = _pretrained.resolve_pretrained(
                type(self).__name__, pretrained_model, _DEFAULT_FILES[n_layers],
                _CAFFE_FILES[n_layers],
            )  # fmt: skip
            zero = initializers.Zero()
            kwargs = {"initialW": zero, "initial_bias": zero}
        else:
            kwargs = {"initialW": initializers.Normal(0.01), "initial_bias": initializers.Zero()}
        self._n_layers = n_layers
        in_channels = 3
        with self.init_scope():
            for stage, (out_channels, count) in enumerate(_STAGES[n_layers], 1):
                for i in range(1, count + 1):
                    conv = Convolution2D(in_channels, out_channels, 3, 1, 1, **kwargs)
                    setattr(self, f"conv{stage}_{i}", conv)
                    in_channels = out_channels
            self.fc6 = Linear(512 * 7 * 7, 4096, **kwargs)
            self.fc7 = Linear(4096, 4096, **kwargs)
            self.fc8 = Linear(4096, 1000, **kwargs)
        if path is not None:
            _pretrained.load_pretrained(self, path, _DEFAULT_FILES[n_layers])

    def _transfer_caffe(self, caffe):
        _caffe.transfer_vgg(self, caffe, type(self).__name__)

    @classmethod
    @docstring_tail(_pretrained.CONVERT_CAFFEMODEL_RAISES)
    def convert_caffemodel_to_npz(cls, path_caffemodel, path_npz):
        """Convert the published Caffe model to an npz file that ``pretrained_model`` loads.

        Args:
            path_caffemodel (str or os.PathLike): ``VGG_ILSVRC_16_layers.caffemodel``
                (``..._19_...`` for :class:`VGG19Layers`).
            path_npz (str or os.PathLike): the npz file to write (uncompressed,
                with Chainer's key names).
        """
        _pretrained.convert_caffemodel(cls(pretrained_model=None), path_caffemodel, path_npz)

    @property
    def functions(self):
        """The ordered table ``{layer name: [callables applied in turn]}`` that forward runs."""
        table = collections.OrderedDict()
        for stage, (_, count) in enumerate(_STAGES[self._n_layers], 1):
            for i in range(1, count + 1):
                table[f"conv{stage}_{i}"] = [getattr(self, f"conv{stage}_{i}"), F.relu]
            table[f"pool{stage}"] = [_max_pooling_2d]
        table["fc6"] = [self.fc6, F.relu, F.dropout]
        table["fc7"] = [self.fc7, F.relu, F.dropout]
        table["fc8"] = [self.fc8]
        table["prob"] = [F.softmax]
        return table


class VGG16Layers(VGGLayers):
    """The 16-layer VGG network (configuration D) with named layers; see :class:`VGGLayers`.

    Args:
        pretrained_model (str, os.PathLike or None): ``'auto'`` (default:
            ``VGG_ILSVRC_16_layers.npz``, else ``VGG_ILSVRC_16_layers.caffemodel``
            converted, in ``$DBR_MODEL_ROOT``, default ``~/.dbr/models``;
            nothing is downloaded), the path of an npz or ``.caffemodel``
            file, or None for random weights.

    >>> model = VGG16Layers(pretrained_model=None)
    >>> len(list(model.params()))
    32
    """

    def __init__(self, pretrained_model="auto"):
        super().__init__(pretrained_model, 16)


class VGG19Layers(VGGLayers):
    """The 19-layer VGG network (configuration E) with named layers; see :class:`VGGLayers`.

    Args:
        pretrained_model (str, os.PathLike or None): ``'auto'`` (default:
            ``VGG_ILSVRC_19_layers.npz``, else ``VGG_ILSVRC_19_layers.caffemodel``
            converted, in ``$DBR_MODEL_ROOT``, default ``~/.dbr/models``;
            nothing is downloaded), the path of an npz or ``.caffemodel``
            file, or None for random weights.
    """

    def __init__(self, pretrained_model="auto"):
        super().__init__(pretrained_model, 19)
