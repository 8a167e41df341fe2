"""Importers of BatchNormalization, LayerNormalization, InstanceNormalization and LRN.

BatchNormalization reads its running mean and variance from the chain's persistent values:
with ``config.train`` (or ``training_mode=1`` in the graph) it normalizes by the batch's
statistics and updates them (ONNX's ``momentum`` is dbr's ``decay``), otherwise by them.
"""

import math

import numpy

import dbr.functions as F
from dbr.core import config
from dbr.onnx.importers._util import array_of, importer

IMPORTERS = {}


@importer(IMPORTERS, "BatchNormalization")
def _batch_normalization(params, x, scale, bias, mean, var):
    eps = params.get("epsilon", 1e-5)
    if not (config.train or params.get("training_mode", 0)):
        return F.fixed_batch_normalization(x, scale, bias, mean, var, eps)
    running_mean, running_var = array_of(mean), array_of(var)
    y = F.batch_normalization(
        x, scale, bias, eps=eps, running_mean=running_mean, running_var=running_var,
        decay=params.get("momentum", 0.9),
    )  # fmt: skip
    if params.n_outputs > 1:
        return (y, running_mean, running_var)[: params.n_outputs]
    return y


@importer(IMPORTERS, "LayerNormalization")
def _layer_normalization(params, x, scale, bias=None):
    if params.n_outputs > 1:
        raise params.error("the Mean and InvStdDev outputs are not supported")
    axis = params.get("axis", -1) % x.ndim
    inner = x.shape[axis:]
    flat = F.reshape(x, (math.prod(x.shape[:axis]), math.prod(inner)))
    gamma = F.reshape(F.broadcast_to(scale, inner), (-1,))
    if bias is None:
        beta = numpy.zeros(gamma.shape, array_of(x).dtype)
    else:
        beta = F.reshape(F.broadcast_to(bias, inner), (-1,))
    y = F.layer_normalization(flat, gamma, beta, params.get("epsilon", 1e-5))
    return F.reshape(y, x.shape)


@importer(IMPORTERS, "InstanceNormalization")
def _instance_normalization(params, x, scale, bias):
    return F.group_normalization(x, x.shape[1], scale, bias, params.get("epsilon", 1e-5))


@importer(IMPORTERS, "LRN")
def _lrn(params, x):
    size = params.get("size")
    if size % 2 == 0:
        raise params.error(f"size={size} is not supported (dbr's windows are odd)")
    alpha = params.get("alpha", 1e-4)
    return F.local_response_normalization(
        x, n=size, k=params.get("bias", 1.0), alpha=alpha / size, beta=params.get("beta", 0.75)
    )
