"""GoogLeNet: BVLC's Inception-v1 ImageNet network, with Chainer's layer names."""

import collections

import dbr.functions as F
from dbr.core import initializers
from dbr.core.utils import docstring_tail
from dbr.links.connection.convolution_2d import Convolution2D
from dbr.links.connection.inception import Inception
from dbr.links.connection.linear import Linear
from dbr.links.model.vision import _caffe, _pretrained

_MEAN_BGR = (104.0, 117.0, 123.0)
_DEFAULT_FILE = "bvlc_googlenet.npz"
_CAFFE_FILE = "bvlc_googlenet.caffemodel"
# The auxiliary classifiers read an inner layer's output, not the layer before them.
_AUX_INPUTS = {"loss1_fc2": "inception_4a", "loss2_fc2": "inception_4d"}


@docstring_tail(_pretrained.prepare_doc(_MEAN_BGR))
def prepare(image, size=(224, 224)):
    """Turn an RGB image into a GoogLeNet input: resized, BGR, mean subtracted, (3, H, W)."""
    return _pretrained.prepare_image(image, size, _MEAN_BGR)


def _max_pooling_2d(x):
    return F.max_pooling_2d(x, ksize=3, stride=2)


def _local_response_normalization(x):
    return F.local_response_normalization(x, n=5, k=1, alpha=1e-4 / 5)


def _average_pooling_2d_k5(x):
    return F.average_pooling_2d(x, ksize=5, stride=3)


def _average_pooling_2d_k7(x):
    return F.average_pooling_2d(x, ksize=7, stride=1)


def _dropout(x):
    return F.dropout(x, ratio=0.4)


class GoogLeNet(_pretrained.PretrainedLayers):
    """GoogLeNet (Szegedy et al., 2014), BVLC's Caffe model, with its layers' outputs addressable.

    The children are ``conv1`` (7x7, stride 2, pad 3, 3 to 64 channels),
    ``conv2_reduce`` (1x1, 64 to 64), ``conv2`` (3x3, pad 1, 64 to 192), the
    :class:`~dbr.links.connection.inception.Inception` modules ``inc3a``,
    ``inc3b``, ``inc4a`` ... ``inc4e``, ``inc5a``, ``inc5b``, the classifier
    ``loss3_fc`` (1024 to 1000) and the two auxiliary classifiers
    ``loss1_conv`` (1x1, 512 to 128), ``loss1_fc1`` (2048 to 1024),
    ``loss1_fc2`` (1024 to 1000) on ``inception_4a`` and ``loss2_conv``
    (1x1, 528 to 128), ``loss2_fc1``, ``loss2_fc2`` on ``inception_4d``.
    The input is a batch of shape ``(N, 3, 224, 224)`` made by
    :func:`prepare`.

    Args:
        pretrained_model (str, os.PathLike or None): ``'auto'`` (default)
            loads ``bvlc_googlenet.npz`` from the model directory
            (``$DBR_MODEL_ROOT``, default ``~/.dbr/models``), or, when it is
            not there, converts BVLC's published ``bvlc_googlenet.caffemodel``
            found there and saves the npz file beside it; dbr downloads
            nothing, so one of them must be placed there. A path loads that
            npz file (saved by dbr or converted by Chainer) or ``.caffemodel``
            file. None keeps
            BVLC's random initialisation: the weights of the convolutions and
            fully-connected layers outside the Inception modules from
            ``LeCunUniform(scale=1.0)`` (Caffe's "xavier" filler), the
            Inception modules' from their default, zero biases. When weights
            are loaded, those weights are first filled with zeros rather than
            sampled.

    Attributes:
        available_layers (list of str): the layer names ``forward`` and
            ``extract`` accept, in order: ``'conv1'``, ``'pool1'``,
            ``'conv2_reduce'``, ``'conv2'``, ``'pool2'``, ``'inception_3a'``,
            ``'inception_3b'``, ``'pool3'``, ``'inception_4a'`` ...
            ``'inception_4e'``, ``'pool4'``, ``'inception_5a'``,
            ``'inception_5b'``, ``'pool5'``, ``'loss3_fc'``, ``'prob'``,
            ``'loss1_fc2'``, ``'loss2_fc2'``.

    Raises:
        FileNotFoundError: ``'auto'`` and the file is not in the model
            directory (the message gives the path).
    """

    _prepare = staticmethod(prepare)
    _extract_layers = ("pool5",)
    _rejects_train = True

    def __init__(self, pretrained_model="auto"):
        super().__init__()
        path = None
        if pretrained_model:
            path = _pretrained.resolve_pretrained(
                type(self).__name__, pretrained_model, _DEFAULT_FILE, _CAFFE_FILE
            )
            kwargs = {"initialW": initializers.Zero()}
        else:
            kwargs = {"initialW": initializers.LeCunUniform(scale=1.0)}
        with self.init_scope():
            self.conv1 = Convolution2D(3, 64, 7, stride=2, pad=3, **kwargs)
            self.conv2_reduce = Convolution2D(64, 64, 1, **kwargs)
            self.conv2 = Convolution2D(64, 192, 3, stride=1, pad=1, **kwargs)
            self.inc3a = Inception(192, 64, 96, 128, 16, 32, 32)
            self.inc3b = Inception(256, 128, 128, 192, 32, 96, 64)
            self.inc4a = Inception(480, 192, 96, 208, 16, 48, 64)
            self.inc4b = Inception(512, 160, 112, 224, 24, 64, 64)
            self.inc4c = Inception(512, 128, 128, 256, 24, 64, 64)
            self.inc4d = Inception(512, 112, 144, 288, 32, 64, 64)
            self.inc4e = Inception(528, 256, 160, 320, 32, 128, 128)
            self.inc5a = Inception(832, 256, 160, 320, 32, 128, 128)
            self.inc5b = Inception(832, 384, 192, 384, 48, 128, 128)
            self.loss3_fc = Linear(1024, 1000, **kwargs)

            self.loss1_conv = Convolution2D(512, 128, 1, **kwargs)
            self.loss1_fc1 = Linear(2048, 1024, **kwargs)
            self.loss1_fc2 = Linear(1024, 1000, **kwargs)

            self.loss2_conv = Convolution2D(528, 128, 1, **kwargs)
            self.loss2_fc1 = Linear(2048, 1024, **kwargs)
            self.loss2_fc2 = Linear(1024, 1000, **kwargs)
        if path is not None:
            _pretrained.load_pretrained(self, path, _DEFAULT_FILE)

    def _transfer_caffe(self, caffe):
        _caffe.transfer_googlenet(self, caffe, type(self).__name__)

    @classmethod
    @docstring_tail(_pretrained.CONVERT_CAFFEMODEL_RAISES)
    def convert_caffemodel_to_npz(cls, path_caffemodel, path_npz):
        """Convert BVLC's published ``bvlc_googlenet.caffemodel`` to an npz file.

        Args:
            path_caffemodel (str or os.PathLike): the Caffe model.
            path_npz (str or os.PathLike): the npz file to write (uncompressed,
                with Chainer's key names), which ``pretrained_model`` loads.
        """
        _pretrained.convert_caffemodel(cls(pretrained_model=None), path_caffemodel, path_npz)

    @property
    def functions(self):
        """The ordered table ``{layer name: [callables applied in turn]}`` that forward runs.

        Each entry reads the output of the entry before it, except
        ``'loss1_fc2'`` and ``'loss2_fc2'`` (the auxiliary classifiers),
        which read ``'inception_4a'`` and ``'inception_4d'``.
        """
        relu = F.relu
        lrn = _local_response_normalization
        return collections.OrderedDict(
            [
                ("conv1", [self.conv1, relu]),
                ("pool1", [_max_pooling_2d, lrn]),
                ("conv2_reduce", [self.conv2_reduce, relu]),
                ("conv2", [self.conv2, relu, lrn]),
                ("pool2", [_max_pooling_2d]),
                ("inception_3a", [self.inc3a]),
                ("inception_3b", [self.inc3b]),
                ("pool3", [_max_pooling_2d]),
                ("inception_4a", [self.inc4a]),
                ("inception_4b", [self.inc4b]),
                ("inception_4c", [self.inc4c]),
                ("inception_4d", [self.inc4d]),
                ("inception_4e", [self.inc4e]),
                ("pool4", [_max_pooling_2d]),
                ("inception_5a", [self.inc5a]),
                ("inception_5b", [self.inc5b]),
                ("pool5", [_average_pooling_2d_k7]),
                ("loss3_fc", [_dropout, self.loss3_fc]),
                ("prob", [F.softmax]),
                (
                    "loss1_fc2",
                    [
                        _average_pooling_2d_k5,
                        self.loss1_conv,
                        relu,
                        self.loss1_fc1,
                        relu,
                        self.loss1_fc2,
                    ],
                ),
                (
                    "loss2_fc2",
                    [
                        _average_pooling_2d_k5,
                        self.loss2_conv,
                        relu,
                        self.loss2_fc1,
                        relu,
                        self.loss2_fc2,
                    ],
                ),
            ]
        )

    def forward(self, x, layers=None, **kwargs):
        """Compute the outputs of the requested layers (the network runs only as far as needed).

        ``loss3_fc`` includes a dropout of ratio 0.4 (active only when
        ``config.train`` is True); ``prob`` is its softmax. The auxiliary
        classifiers ``loss1_fc2`` and ``loss2_fc2`` branch off
        ``inception_4a`` and ``inception_4d`` (average pooling 5x5 stride 3,
        1x1 convolution, ReLU, fully-connected, ReLU, fully-connected; no
        softmax).

        Args:
            x (~dbr.core.Variable or numpy.ndarray): a batch of shape
                ``(N, 3, 224, 224)`` made by :func:`prepare`.
            layers (list of str): the names of the outputs wanted (see
                ``available_layers``); default ``['prob']``.

        Returns:
            dict: each requested name to its output Variable.

        Raises:
            ValueError: an unknown layer name, or the ``train`` argument of
                Chainer v1 (use ``using_config('train', ...)``).
        """
        who = f"{type(self).__name__}.forward"
        _pretrained.reject_train(who, kwargs)
        table = self.functions
        targets = {"prob"} if layers is None else set(layers)
        unknown = targets.difference(table)
        if unknown:
            raise ValueError(
                f"{who}: unknown layer(s) {sorted(unknown)}; expected names among {list(table)}"
            )
        aux = [key for key in _AUX_INPUTS if key in targets]
        trunk_targets = targets.difference(_AUX_INPUTS).union(_AUX_INPUTS[key] for key in aux)
        trunk = collections.OrderedDict(
            (key, funcs) for key, funcs in table.items() if key not in _AUX_INPUTS
        )
        outputs = _pretrained.forward_layers(who, trunk, x, trunk_targets, kwargs)
        for key in aux:
            h = outputs[_AUX_INPUTS[key]]
            for func in table[key]:
                h = func(h)
            outputs[key] = h
        return {key: h for key, h in outputs.items() if key in targets}
