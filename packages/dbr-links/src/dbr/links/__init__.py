"""dbr.links: the parameterised layers of dbr, with Chainer v7's names and semantics.

Conventionally imported as ``import dbr.links as L``. A link owns its
Parameters (and persistent values such as running statistics) and computes
with :mod:`dbr.functions`; input sizes given as None are inferred at the
first call, and parameter names match Chainer's so that saved files do too.
"""

from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

from dbr.core.utils import missing_attribute as _missing_attribute
from dbr.links import activation, connection, loss, model, normalization, rnn
from dbr.links.activation import Maxout, PReLU, Swish
from dbr.links.connection import (
    Bias,
    Bilinear,
    Convolution1D,
    Convolution2D,
    Convolution3D,
    ConvolutionND,
    Deconvolution1D,
    Deconvolution2D,
    Deconvolution3D,
    DeconvolutionND,
    DeformableConvolution2D,
    DepthwiseConvolution2D,
    DilatedConvolution2D,
    EmbedID,
    Highway,
    Inception,
    InceptionBN,
    Linear,
    LocalConvolution2D,
    MLPConvolution2D,
    Parameter,
    Scale,
    SimplifiedDropconnect,
)
from dbr.links.loss import (
    BinaryHierarchicalSoftmax,
    BlackOut,
    CRF1d,
    NegativeSampling,
    WalkerAlias,
)
from dbr.links.model import (
    Classifier,
    GoogLeNet,
    ResNet50Layers,
    ResNet101Layers,
    ResNet152Layers,
    VGG16Layers,
    VGG19Layers,
)
from dbr.links.normalization import (
    BatchNormalization,
    BatchRenormalization,
    DecorrelatedBatchNormalization,
    GroupNormalization,
    LayerNormalization,
)
from dbr.links.rnn import (
    GRU,
    LSTM,
    ChildSumTreeLSTM,
    NaryTreeLSTM,
    NStepBiGRU,
    NStepBiLSTM,
    NStepBiRNNReLU,
    NStepBiRNNTanh,
    NStepGRU,
    NStepLSTM,
    NStepRNNReLU,
    NStepRNNTanh,
    StatefulGRU,
    StatefulMGU,
    StatefulPeepholeLSTM,
    StatefulZoneoutLSTM,
    StatelessGRU,
    StatelessLSTM,
    StatelessMGU,
)

try:
    __version__ = _version("dbr-links")
except _PackageNotFoundError:
    __version__ = "0.0.0+source"

__all__ = [
    "GRU",
    "LSTM",
    "Bias",
    "Bilinear",
    "BatchNormalization",
    "BatchRenormalization",
    "BinaryHierarchicalSoftmax",
    "BlackOut",
    "CRF1d",
    "ChildSumTreeLSTM",
    "Classifier",
    "Convolution1D",
    "Convolution2D",
    "Convolution3D",
    "ConvolutionND",
    "Deconvolution1D",
    "Deconvolution2D",
    "Deconvolution3D",
    "DeconvolutionND",
    "DecorrelatedBatchNormalization",
    "DeformableConvolution2D",
    "DepthwiseConvolution2D",
    "DilatedConvolution2D",
    "EmbedID",
    "GoogLeNet",
    "GroupNormalization",
    "Highway",
    "Inception",
    "InceptionBN",
    "LayerNormalization",
    "Linear",
    "LocalConvolution2D",
    "MLPConvolution2D",
    "Maxout",
    "NStepBiGRU",
    "NStepBiLSTM",
    "NStepBiRNNReLU",
    "NStepBiRNNTanh",
    "NStepGRU",
    "NStepLSTM",
    "NStepRNNReLU",
    "NStepRNNTanh",
    "NaryTreeLSTM",
    "NegativeSampling",
    "PReLU",
    "ResNet101Layers",
    "ResNet152Layers",
    "ResNet50Layers",
    "Parameter",
    "Scale",
    "SimplifiedDropconnect",
    "StatefulGRU",
    "StatefulMGU",
    "StatefulPeepholeLSTM",
    "StatefulZoneoutLSTM",
    "StatelessGRU",
    "StatelessLSTM",
    "StatelessMGU",
    "Swish",
    "VGG16Layers",
    "VGG19Layers",
    "WalkerAlias",
    "activation",
    "connection",
    "loss",
    "model",
    "normalization",
    "rnn",
]


def __getattr__(name):
    raise _missing_attribute(__name__, name, __all__)
