"""Connection links: affine, convolutional, embedding and composite layers."""

from dbr.links.connection.bias import Bias
from dbr.links.connection.bilinear import Bilinear
from dbr.links.connection.convolution_2d import Convolution2D
from dbr.links.connection.convolution_nd import Convolution1D, Convolution3D, ConvolutionND
from dbr.links.connection.deconvolution_2d import Deconvolution2D
from dbr.links.connection.deconvolution_nd import (
    Deconvolution1D,
    Deconvolution3D,
    DeconvolutionND,
)
from dbr.links.connection.deformable_convolution_2d import (
    DeformableConvolution2D,
    DeformableConvolution2DSampler,
)
from dbr.links.connection.depthwise_convolution_2d import DepthwiseConvolution2D
from dbr.links.connection.dilated_convolution_2d import DilatedConvolution2D
from dbr.links.connection.embed_id import EmbedID
from dbr.links.connection.highway import Highway
from dbr.links.connection.inception import Inception
from dbr.links.connection.inceptionbn import InceptionBN
from dbr.links.connection.linear import Linear
from dbr.links.connection.local_convolution_2d import LocalConvolution2D
from dbr.links.connection.mlp_convolution_2d import MLPConvolution2D
from dbr.links.connection.parameter import Parameter
from dbr.links.connection.scale import Scale
from dbr.links.connection.simplified_dropconnect import SimplifiedDropconnect

__all__ = [
    "Bias",
    "Bilinear",
    "Convolution1D",
    "Convolution2D",
    "Convolution3D",
    "ConvolutionND",
    "Deconvolution1D",
    "Deconvolution2D",
    "Deconvolution3D",
    "DeconvolutionND",
    "DeformableConvolution2D",
    "DeformableConvolution2DSampler",
    "DepthwiseConvolution2D",
    "DilatedConvolution2D",
    "EmbedID",
    "Highway",
    "Inception",
    "InceptionBN",
    "Linear",
    "LocalConvolution2D",
    "MLPConvolution2D",
    "Parameter",
    "Scale",
    "SimplifiedDropconnect",
]
