"""Importers of MaxPool, AveragePool, GlobalAveragePool and GlobalMaxPool."""

import math

import numpy

import dbr.functions as F
from dbr.core import Variable
from dbr.onnx.importers._util import array_of, importer
from dbr.onnx.importers.connection import pad_spatial, spatial_pads

IMPORTERS = {}


def _windows(params, x):
    """``(kernel, strides, begins, ends)``, the end pads grown to what ``ceil_mode`` covers."""
    kernel = params.get("kernel_shape")
    n = len(kernel)
    strides = params.get("strides") or [1] * n
    dilations = params.get("dilations") or [1] * n
    if any(d != 1 for d in dilations):
        raise params.error(f"dilations={dilations} are not supported (only 1)")
    begins, ends = spatial_pads(params, x.shape[2:], kernel, strides, dilations)
    if params.get("ceil_mode", 0):
        grown = []
        for size, k, s, b, e in zip(x.shape[2:], kernel, strides, begins, ends):
            out = math.ceil((size + b + e - k) / s) + 1
            if (out - 1) * s >= size + b:  # the last window would start in the end padding
                out -= 1
            grown.append(max(e, (out - 1) * s + k - size - b))
        ends = grown
    return list(kernel), list(strides), begins, ends


@importer(IMPORTERS, "MaxPool")
def _max_pool(params, x):
    kernel, strides, begins, ends = _windows(params, x)
    padded = pad_spatial(x, begins, ends, -numpy.inf) if begins != ends else x
    pad = (0,) * len(kernel) if begins != ends else tuple(begins)
    y = F.max_pooling_nd(padded, tuple(kernel), tuple(strides), pad, cover_all=False)
    if params.n_outputs == 1:
        return y
    # The Indices output, positions in the input: ONNX's reference computes it.
    return y, params.reference([array_of(x)])[1]


@importer(IMPORTERS, "AveragePool")
def _average_pool(params, x):
    kernel, strides, begins, ends = _windows(params, x)
    declared_begins, declared_ends = spatial_pads(
        params, x.shape[2:], kernel, strides, [1] * len(kernel)
    )
    include_pad = bool(params.get("count_include_pad", 0))
    if begins == ends and (begins == declared_ends or not include_pad):
        pad_value = 0 if include_pad else None
        return F.average_pooling_nd(x, tuple(kernel), tuple(strides), tuple(begins), pad_value)
    # The mean over what each window counts: the sum of the padded input over the sum of a
    # mask holding ones where a window counts (the input, and the declared pads if included).
    mask = numpy.zeros((1, 1, *x.shape[2:]), array_of(x).dtype)
    mask = numpy.pad(mask + 1, [(0, 0), (0, 0), *zip(declared_begins, declared_ends)],
                     constant_values=float(include_pad))  # fmt: skip
    grown = [e - d for e, d in zip(ends, declared_ends)]
    mask = numpy.pad(mask, [(0, 0), (0, 0), *((0, g) for g in grown)])
    padded = pad_spatial(x, begins, ends)
    windows = (tuple(kernel), tuple(strides), 0)
    counts = F.average_pooling_nd(Variable(mask, requires_grad=False), *windows).array
    if isinstance(x, Variable):
        counts = x.device.send(counts)
    return F.average_pooling_nd(padded, *windows) / counts


@importer(IMPORTERS, "GlobalAveragePool")
def _global_average_pool(params, x):
    return F.mean(x, axis=tuple(range(2, x.ndim)), keepdims=True)


@importer(IMPORTERS, "GlobalMaxPool")
def _global_max_pool(params, x):
    return F.max(x, axis=tuple(range(2, x.ndim)), keepdims=True)
