"""dbr.functions: the differentiable functions of dbr, conventionally imported as ``F``.

Each function is a FunctionNode plus the lowercase wrapper users call; the
wrappers accept Variables or arrays (NumPy or CuPy). The primitives that
dbr.core already has (the ones behind Variable's operators) are re-exported
from it, not rewritten.
"""

import importlib
from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

from dbr.core.ops import (
    absolute,
    add,
    broadcast_to,
    cast,
    copy,
    get_item,
    identity,
    log,
    matmul,
    reshape,
    sum,
    sum_to,
    transpose,
)
from dbr.core.utils import missing_attribute as _missing_attribute
from dbr.functions.activation.clipped_relu import clipped_relu
from dbr.functions.activation.crelu import crelu
from dbr.functions.activation.elu import elu
from dbr.functions.activation.hard_sigmoid import hard_sigmoid
from dbr.functions.activation.leaky_relu import leaky_relu
from dbr.functions.activation.log_softmax import log_softmax
from dbr.functions.activation.maxout import maxout
from dbr.functions.activation.prelu import prelu
from dbr.functions.activation.relu import relu
from dbr.functions.activation.relu6 import relu6
from dbr.functions.activation.rrelu import rrelu
from dbr.functions.activation.selu import selu
from dbr.functions.activation.sigmoid import sigmoid
from dbr.functions.activation.softmax import softmax
from dbr.functions.activation.softplus import softplus
from dbr.functions.activation.swish import swish
from dbr.functions.activation.tanh import tanh
from dbr.functions.array.as_strided import as_strided
from dbr.functions.array.broadcast import broadcast
from dbr.functions.array.concat import concat
from dbr.functions.array.depth2space import depth2space
from dbr.functions.array.diagonal import diagonal
from dbr.functions.array.expand_dims import expand_dims
from dbr.functions.array.flatten import flatten
from dbr.functions.array.flip import flip, fliplr, flipud
from dbr.functions.array.im2col import im2col
from dbr.functions.array.moveaxis import moveaxis
from dbr.functions.array.pad import pad
from dbr.functions.array.pad_sequence import pad_sequence
from dbr.functions.array.permutate import permutate
from dbr.functions.array.repeat import repeat
from dbr.functions.array.resize_images import resize_images
from dbr.functions.array.rollaxis import rollaxis
from dbr.functions.array.scatter_add import scatter_add
from dbr.functions.array.select_item import select_item
from dbr.functions.array.separate import separate
from dbr.functions.array.space2depth import space2depth
from dbr.functions.array.spatial_transformer_grid import spatial_transformer_grid
from dbr.functions.array.spatial_transformer_sampler import spatial_transformer_sampler
from dbr.functions.array.split_axis import split_axis
from dbr.functions.array.squeeze import squeeze
from dbr.functions.array.stack import dstack, hstack, stack, vstack
from dbr.functions.array.swapaxes import swapaxes
from dbr.functions.array.tile import tile
from dbr.functions.array.transpose_sequence import transpose_sequence
from dbr.functions.array.where import where
from dbr.functions.connection.bilinear import bilinear
from dbr.functions.connection.convolution_2d import convolution_2d
from dbr.functions.connection.convolution_nd import convolution_1d, convolution_3d, convolution_nd
from dbr.functions.connection.deconvolution_2d import deconvolution_2d
from dbr.functions.connection.deconvolution_nd import (
    deconvolution_1d,
    deconvolution_3d,
    deconvolution_nd,
)
from dbr.functions.connection.deformable_convolution_2d_sampler import (
    deformable_convolution_2d_sampler,
)
from dbr.functions.connection.depthwise_convolution_2d import depthwise_convolution_2d
from dbr.functions.connection.dilated_convolution_2d import dilated_convolution_2d
from dbr.functions.connection.embed_id import embed_id
from dbr.functions.connection.linear import linear
from dbr.functions.connection.local_convolution_2d import local_convolution_2d
from dbr.functions.connection.shift import shift
from dbr.functions.evaluation.accuracy import accuracy
from dbr.functions.evaluation.binary_accuracy import binary_accuracy
from dbr.functions.evaluation.classification_summary import (
    classification_summary,
    f1_score,
    precision,
    recall,
)
from dbr.functions.evaluation.r2_score import r2_score
from dbr.functions.loss.absolute_error import absolute_error
from dbr.functions.loss.black_out import black_out
from dbr.functions.loss.contrastive import contrastive
from dbr.functions.loss.crf1d import argmax_crf1d, crf1d
from dbr.functions.loss.cross_covariance import cross_covariance
from dbr.functions.loss.ctc import connectionist_temporal_classification
from dbr.functions.loss.decov import decov
from dbr.functions.loss.discriminative_loss import discriminative_margin_based_clustering_loss
from dbr.functions.loss.hinge import hinge
from dbr.functions.loss.huber_loss import huber_loss
from dbr.functions.loss.mean_absolute_error import mean_absolute_error
from dbr.functions.loss.mean_squared_error import mean_squared_error
from dbr.functions.loss.negative_sampling import negative_sampling
from dbr.functions.loss.sigmoid_cross_entropy import sigmoid_cross_entropy
from dbr.functions.loss.softmax_cross_entropy import softmax_cross_entropy
from dbr.functions.loss.squared_error import squared_difference, squared_error
from dbr.functions.loss.triplet import triplet
from dbr.functions.loss.vae import bernoulli_nll, gaussian_kl_divergence, gaussian_nll
from dbr.functions.math.average import average, mean
from dbr.functions.math.batch_l2_norm_squared import batch_l2_norm_squared
from dbr.functions.math.batch_matmul import batch_matmul
from dbr.functions.math.bias import bias
from dbr.functions.math.cholesky import cholesky
from dbr.functions.math.clip import clip
from dbr.functions.math.cumprod import cumprod
from dbr.functions.math.cumsum import cumsum
from dbr.functions.math.det import batch_det, det
from dbr.functions.math.einsum import einsum
from dbr.functions.math.erf import erf, erfc, erfcinv, erfcx, erfinv
from dbr.functions.math.expm1 import expm1
from dbr.functions.math.exponential import exp, log2, log10
from dbr.functions.math.fft import fft, ifft
from dbr.functions.math.fmod import fmod
from dbr.functions.math.gamma import digamma, lgamma, polygamma, zeta
from dbr.functions.math.hyperbolic import arctanh, cosh, sinh
from dbr.functions.math.inv import batch_inv, inv
from dbr.functions.math.linear_interpolate import linear_interpolate
from dbr.functions.math.log1p import log1p
from dbr.functions.math.logsumexp import logsumexp
from dbr.functions.math.maximum import maximum, minimum
from dbr.functions.math.minmax import argmax, argmin, max, min
from dbr.functions.math.ndtr import log_ndtr, ndtr, ndtri
from dbr.functions.math.prod import prod
from dbr.functions.math.rounding import ceil, fix, floor
from dbr.functions.math.scale import scale
from dbr.functions.math.sign import sign
from dbr.functions.math.sparse_matmul import CooMatrix, sparse_matmul, to_coo
from dbr.functions.math.sqrt import rsqrt, sqrt
from dbr.functions.math.square import square
from dbr.functions.math.tensordot import tensordot
from dbr.functions.math.trigonometric import arccos, arcsin, arctan, arctan2, cos, sin, tan
from dbr.functions.noise.dropout import dropout
from dbr.functions.noise.gaussian import gaussian
from dbr.functions.noise.gumbel_softmax import gumbel_softmax
from dbr.functions.noise.simplified_dropconnect import simplified_dropconnect
from dbr.functions.noise.zoneout import zoneout
from dbr.functions.normalization.batch_normalization import (
    batch_normalization,
    fixed_batch_normalization,
)
from dbr.functions.normalization.batch_renormalization import (
    batch_renormalization,
    fixed_batch_renormalization,
)
from dbr.functions.normalization.decorrelated_batch_normalization import (
    decorrelated_batch_normalization,
    fixed_decorrelated_batch_normalization,
)
from dbr.functions.normalization.group_normalization import group_normalization
from dbr.functions.normalization.l2_normalization import normalize
from dbr.functions.normalization.layer_normalization import layer_normalization
from dbr.functions.normalization.local_response_normalization import (
    local_response_normalization,
)
from dbr.functions.pooling.average_pooling_2d import average_pooling_2d
from dbr.functions.pooling.average_pooling_nd import (
    average_pooling_1d,
    average_pooling_3d,
    average_pooling_nd,
)
from dbr.functions.pooling.max_pooling_2d import max_pooling_2d
from dbr.functions.pooling.max_pooling_nd import max_pooling_1d, max_pooling_3d, max_pooling_nd
from dbr.functions.pooling.roi_average_align_2d import roi_average_align_2d
from dbr.functions.pooling.roi_average_pooling_2d import roi_average_pooling_2d
from dbr.functions.pooling.roi_max_align_2d import roi_max_align_2d
from dbr.functions.pooling.roi_max_pooling_2d import roi_max_pooling_2d
from dbr.functions.pooling.roi_pooling_2d import roi_pooling_2d
from dbr.functions.pooling.spatial_pyramid_pooling_2d import spatial_pyramid_pooling_2d
from dbr.functions.pooling.unpooling_2d import unpooling_2d
from dbr.functions.pooling.unpooling_nd import unpooling_1d, unpooling_3d, unpooling_nd
from dbr.functions.pooling.upsampling_2d import upsampling_2d
from dbr.functions.rnn.lstm import lstm
from dbr.functions.rnn.n_step_gru import n_step_bigru, n_step_gru
from dbr.functions.rnn.n_step_lstm import n_step_bilstm, n_step_lstm
from dbr.functions.rnn.n_step_rnn import n_step_birnn, n_step_rnn
from dbr.functions.rnn.slstm import slstm
from dbr.functions.rnn.tree_lstm import tree_lstm
from dbr.functions.util.forget import forget


def __getattr__(name):
    # The distributions are imported on first use, so that importing F stays fast.
    if name == "distributions":
        return importlib.import_module("dbr.functions.distributions")
    raise _missing_attribute(__name__, name, __all__)


try:
    __version__ = _version("dbr-functions")
except _PackageNotFoundError:
    __version__ = "0.0.0+source"

__all__ = [
    # math
    "absolute", "add", "arccos", "arcsin", "arctan", "arctan2", "arctanh", "argmax", "argmin",
    "average", "batch_det", "batch_inv", "batch_l2_norm_squared", "batch_matmul", "bias",
    "ceil", "cholesky", "clip", "cos", "cosh", "cumprod", "cumsum", "det", "digamma", "einsum",
    "erf", "erfc", "erfcinv", "erfcx", "erfinv", "exp", "expm1", "fft", "fix", "floor", "fmod",
    "identity", "ifft", "inv", "lgamma", "linear_interpolate", "log", "log10", "log1p", "log2",
    "log_ndtr", "logsumexp", "matmul", "max", "maximum", "mean", "min", "minimum", "ndtr",
    "ndtri", "polygamma", "prod", "rsqrt", "scale", "sign", "sin", "sinh", "sparse_matmul",
    "sqrt", "square", "sum", "sum_to", "tan", "tensordot", "zeta", "CooMatrix", "to_coo",
    # activation
    "clipped_relu", "crelu", "elu", "hard_sigmoid", "leaky_relu", "log_softmax", "maxout",
    "prelu", "relu", "relu6", "rrelu", "selu", "sigmoid", "softmax", "softplus", "swish",
    "tanh",
    # loss
    "absolute_error", "argmax_crf1d", "bernoulli_nll", "black_out",
    "connectionist_temporal_classification", "contrastive", "crf1d", "cross_covariance",
    "decov", "discriminative_margin_based_clustering_loss", "gaussian_kl_divergence",
    "gaussian_nll", "hinge", "huber_loss", "mean_absolute_error", "mean_squared_error",
    "negative_sampling", "sigmoid_cross_entropy", "softmax_cross_entropy",
    "squared_difference", "squared_error", "triplet",
    # evaluation
    "accuracy", "binary_accuracy", "classification_summary", "f1_score", "precision",
    "r2_score", "recall",
    # noise
    "dropout", "gaussian", "gumbel_softmax", "simplified_dropconnect", "zoneout",
    # util
    "forget",
    # array
    "as_strided", "broadcast", "broadcast_to", "cast", "concat", "copy", "depth2space",
    "diagonal", "dstack", "expand_dims", "flatten", "flip", "fliplr", "flipud", "get_item",
    "hstack", "im2col", "moveaxis", "pad", "pad_sequence", "permutate", "repeat", "reshape",
    "resize_images", "rollaxis", "scatter_add", "select_item", "separate", "space2depth",
    "spatial_transformer_grid", "spatial_transformer_sampler", "split_axis", "squeeze",
    "stack", "swapaxes", "tile", "transpose", "transpose_sequence", "vstack", "where",
    # connection
    "bilinear", "convolution_1d", "convolution_2d", "convolution_3d", "convolution_nd",
    "deconvolution_1d", "deconvolution_2d", "deconvolution_3d", "deconvolution_nd",
    "deformable_convolution_2d_sampler", "depthwise_convolution_2d", "dilated_convolution_2d",
    "embed_id", "linear", "local_convolution_2d", "shift",
    # normalization
    "batch_normalization", "batch_renormalization", "decorrelated_batch_normalization",
    "fixed_batch_normalization", "fixed_batch_renormalization",
    "fixed_decorrelated_batch_normalization", "group_normalization", "layer_normalization",
    "local_response_normalization", "normalize",
    # pooling
    "average_pooling_1d", "average_pooling_2d", "average_pooling_3d", "average_pooling_nd",
    "max_pooling_1d", "max_pooling_2d", "max_pooling_3d", "max_pooling_nd",
    "roi_average_align_2d", "roi_average_pooling_2d", "roi_max_align_2d", "roi_max_pooling_2d",
    "roi_pooling_2d", "spatial_pyramid_pooling_2d", "unpooling_1d", "unpooling_2d",
    "unpooling_3d", "unpooling_nd", "upsampling_2d",
    # rnn
    "lstm", "n_step_bigru", "n_step_bilstm", "n_step_birnn", "n_step_gru", "n_step_lstm",
    "n_step_rnn", "slstm", "tree_lstm",
]  # fmt: skip
