"""Every link takes NumPy integers wherever it takes an int size, as Chainer's do.

The convolutions also take them as ``ksize``/``stride``/``pad`` (Chainer's pair
helper would try to unpack a NumPy scalar).
"""

import numpy as np
import pytest

import dbr.links as L
from dbr.links.model.vision.resnet import BuildingBlock

LINKS = {
    "Linear": lambda i: L.Linear(i(3), i(4)),
    "EmbedID": lambda i: L.EmbedID(i(10), i(4)),
    "LSTM": lambda i: L.LSTM(i(3), i(4)),
    "StatelessLSTM": lambda i: L.StatelessLSTM(i(3), i(4)),
    "StatefulGRU": lambda i: L.StatefulGRU(i(3), i(4)),
    "Highway": lambda i: L.Highway(i(3)),
    "Bilinear": lambda i: L.Bilinear(i(2), i(3), i(4)),
    "Maxout": lambda i: L.Maxout(i(3), i(4), i(2)),
    "GroupNormalization": lambda i: L.GroupNormalization(i(2), i(4)),
    "DecorrelatedBatchNormalization": lambda i: L.DecorrelatedBatchNormalization(
        i(4), groups=i(2)
    ),
    "SimplifiedDropconnect": lambda i: L.SimplifiedDropconnect(i(3), i(4)),
    "Convolution2D": lambda i: L.Convolution2D(i(3), i(4), i(3), i(1), i(1)),
    "Deconvolution2D": lambda i: L.Deconvolution2D(i(3), i(4), i(3)),
    "ConvolutionND": lambda i: L.ConvolutionND(i(1), i(3), i(4), i(3)),
    "DepthwiseConvolution2D": lambda i: L.DepthwiseConvolution2D(i(3), i(2), i(3)),
    "LocalConvolution2D": lambda i: L.LocalConvolution2D(i(3), i(4), i(5), i(3)),
    "MLPConvolution2D": lambda i: L.MLPConvolution2D(i(3), (i(4), i(5)), i(3)),
    "NaryTreeLSTM": lambda i: L.NaryTreeLSTM(i(3), i(4), i(2)),
    "Inception": lambda i: L.Inception(i(3), i(2), i(2), i(2), i(2), i(2), i(2)),
    "InceptionBN": lambda i: L.InceptionBN(i(3), i(2), i(2), i(2), i(2), i(2), "max", i(2)),
    "BuildingBlock": lambda i: BuildingBlock(i(2), i(3), i(2), i(4), i(1)),
}


@pytest.mark.parametrize("name", sorted(LINKS))
@pytest.mark.parametrize("integer", [np.int32, np.int64, np.uint8])
def test_numpy_integer_sizes_build_the_same_link_as_ints(name, integer):
    with_numpy = LINKS[name](integer)
    with_int = LINKS[name](int)
    shapes = {path: p.shape for path, p in with_int.namedparams()}
    assert {path: p.shape for path, p in with_numpy.namedparams()} == shapes


def test_a_bool_is_still_no_size():
    with pytest.raises(ValueError, match="EmbedID: in_size must be a positive int, got True"):
        L.EmbedID(True, 3)
    with pytest.raises(
        # NumPy 2 writes the scalar np.int64(-1), NumPy 1 plain -1.
        ValueError,
        match=r"Linear: out_size must be a positive int, got (np\.int64\(-1\)|-1)$",
    ):
        L.Linear(3, np.int64(-1))
