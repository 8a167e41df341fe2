"""Importer of Dropout: active under ``config.train`` (or a graph's ``training_mode`` true),
with the graph's ratio; otherwise the identity."""

import numpy

import dbr.functions as F
from dbr.core import config, using_config
from dbr.onnx.importers._util import array_of, importer

IMPORTERS = {}


@importer(IMPORTERS, "Dropout", static=(1, 2))
def _dropout(params, x, ratio=None, training_mode=None):
    if params.opset_version < 12:
        ratio = params.get("ratio", 0.5)
    ratio = 0.5 if ratio is None else float(ratio)
    active = config.train or (training_mode is not None and bool(training_mode))
    if not active or ratio == 0:
        mask = numpy.ones(x.shape, bool)
        return (x, mask)[: params.n_outputs] if params.n_outputs > 1 else x
    with using_config("train", True):
        y, mask = F.dropout(x, ratio, return_mask=True)
    if params.n_outputs > 1:
        return y, array_of(mask) != 0
    return y
