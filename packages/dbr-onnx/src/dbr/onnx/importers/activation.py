"""Importers of activations: Relu, LeakyRelu, Elu, Selu, Sigmoid, HardSigmoid, HardSwish,
Tanh, Softplus, Softsign, Gelu, Mish, PRelu, Softmax and LogSoftmax."""

import math

import numpy

import dbr.functions as F
from dbr.core import ops
from dbr.onnx.importers._util import array_of, importer

IMPORTERS = {}


def _unary(op_type, function):
    importer(IMPORTERS, op_type)(lambda params, x: function(x))


_unary("Relu", F.relu)
_unary("Sigmoid", F.sigmoid)
_unary("Tanh", F.tanh)


@importer(IMPORTERS, "LeakyRelu")
def _leaky_relu(params, x):
    return F.leaky_relu(x, params.get("alpha", 0.01))


@importer(IMPORTERS, "Elu")
def _elu(params, x):
    return F.elu(x, params.get("alpha", 1.0))


@importer(IMPORTERS, "Selu")
def _selu(params, x):
    return F.selu(
        x, params.get("alpha", 1.6732632423543772), params.get("gamma", 1.0507009873554805)
    )


@importer(IMPORTERS, "HardSigmoid")
def _hard_sigmoid(params, x):
    alpha, beta = params.get("alpha", 0.2), params.get("beta", 0.5)
    if numpy.float32(alpha) == numpy.float32(0.2) and numpy.float32(beta) == numpy.float32(0.5):
        return F.hard_sigmoid(x)
    return F.clip(x * alpha + beta, 0.0, 1.0)


@importer(IMPORTERS, "HardSwish")
def _hard_swish(params, x):
    return x * F.clip(x * (1 / 6) + 0.5, 0.0, 1.0)


@importer(IMPORTERS, "Softplus")
def _softplus(params, x):
    return F.softplus(x)


@importer(IMPORTERS, "Softsign")
def _softsign(params, x):
    return x / (abs(x) + 1)


@importer(IMPORTERS, "Gelu")
def _gelu(params, x):
    if params.get("approximate", "none") == "tanh":
        inner = (x + x * x * x * 0.044715) * math.sqrt(2 / math.pi)
        return x * (F.tanh(inner) + 1) * 0.5
    return x * (F.erf(x * (1 / math.sqrt(2))) + 1) * 0.5


@importer(IMPORTERS, "Mish")
def _mish(params, x):
    return x * F.tanh(F.softplus(x))


@importer(IMPORTERS, "PRelu")
def _prelu(params, x, slope):
    negative = ops.mul(x, slope)
    return F.where(array_of(x) >= 0, x, negative)


def _softmax_like(function):
    def run(params, x):
        ndim = x.ndim
        if params.opset_version >= 13:
            return function(x, axis=params.get("axis", -1) % ndim)
        # Before opset 13 the input is seen as 2-D: the axes before ``axis`` and the rest.
        axis = params.get("axis", 1) % ndim
        if axis == ndim - 1:
            return function(x, axis=axis)
        shape = x.shape
        flat = F.reshape(x, (math.prod(shape[:axis]), math.prod(shape[axis:])))
        return F.reshape(function(flat, axis=1), shape)

    return run


importer(IMPORTERS, "Softmax")(_softmax_like(F.softmax))
importer(IMPORTERS, "LogSoftmax")(_softmax_like(F.log_softmax))
