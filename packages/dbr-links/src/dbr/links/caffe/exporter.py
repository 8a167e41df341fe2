"""export: write a model's forward as a Caffe network (``.prototxt`` and ``.caffemodel``)."""

import collections
import itertools
import os

import numpy

from dbr.core import Variable, force_backprop_mode, using_config
from dbr.core.function_hook import FunctionHook
from dbr.links.caffe import _proto
from dbr.links.caffe._text import to_text
from dbr.links.caffe._wire import encode

PROTOTXT_NAME = "chainer_model.prototxt"
"""The file name of the network definition that :func:`export` writes (Chainer's)."""
CAFFEMODEL_NAME = "chainer_model.caffemodel"
"""The file name of the network with its parameters that :func:`export` writes (Chainer's)."""

_TEST = 1


class _Recorder(FunctionHook):
    """Keeps each applied function with its input arrays, in the order applied."""

    name = "dbr.links.caffe.export"

    def __init__(self):
        self.records = []

    def forward_preprocess(self, function, in_data):
        self.records.append((function, in_data))


def _blob(array):
    array = numpy.asarray(array)
    return {"shape": {"dim": list(array.shape)}, "data": array.ravel()}


def _pairs(**options):
    out = {}
    for name, (h, w) in options.items():
        out[f"{name}_h"], out[f"{name}_w"] = int(h), int(w)
    return out


class _Layer:
    """One function being converted: its name, bottoms, input arrays and how to report it."""

    def __init__(self, func, in_data, name, bottoms):
        self.func = func
        self.in_data = in_data
        self.name = name
        self.bottoms = bottoms

    def refuse(self, what):
        """Raise ValueError: this function cannot be written as a Caffe layer."""
        raise ValueError(
            f"dbr.links.caffe.export: cannot write {self.func.label} ({self.name}, inputs "
            f"{self.bottoms}) as a Caffe layer: {what}"
        )

    def bottom(self, count=1):
        """The first ``count`` bottom names, refusing an input that no layer computes."""
        for i, name in enumerate(self.bottoms[:count]):
            if name is None:
                self.refuse(f"its input {i} is neither the model's input nor a layer's output")
        return self.bottoms[:count]

    def layer(self, type_name, bottom, blobs=(), **params):
        """The dict of a LayerParameter named after this function."""
        layer = {"name": self.name, "type": type_name, "bottom": bottom, "top": [self.name]}
        layer["phase"] = _TEST
        if blobs:
            layer["blobs"] = [_blob(b) for b in blobs]
        layer.update(params)
        return [layer]


def _linear(c):
    f = c.func
    if getattr(f, "n_batch_axes", 1) != 1:
        c.refuse(f"n_batch_axes={f.n_batch_axes} (an InnerProduct flattens from axis 1)")
    weight, *bias = c.in_data[1:]
    param = {"num_output": weight.shape[0], "bias_term": bool(bias)}
    return c.layer("InnerProduct", c.bottom(), [weight, *bias], inner_product_param=param)


def _convolution(c, transposed):
    f = c.func
    if any(getattr(f, "cover_all", None) or ()):
        c.refuse("cover_all=True, which Caffe's convolution does not have")
    x, weight, *bias = c.in_data
    if transposed:
        out = weight.shape[1] * f.groups
        for n, k, s, p, d, o in zip(x.shape[2:], weight.shape[2:], f.stride, f.pad, f.dilate,
                                    f.outsize or (None, None)):  # fmt: skip
            if o is not None and o != s * (n - 1) + d * (k - 1) + 1 - 2 * p:
                c.refuse(f"outsize={f.outsize}, which differs from Caffe's output size")
    else:
        out = weight.shape[0]
    param = {"num_output": out, "bias_term": bool(bias), "group": int(f.groups)}
    param.update(_pairs(pad=f.pad, kernel=weight.shape[2:], stride=f.stride))
    if tuple(f.dilate) != (1, 1):
        param["dilation"] = [int(d) for d in f.dilate]
    kind = "Deconvolution" if transposed else "Convolution"
    return c.layer(kind, c.bottom(), [weight, *bias], convolution_param=param)


def _caffe_pooled_size(n, pad, k, stride):
    """Caffe's pooled length: windows rounded up, less one that would start in the padding."""
    size = -(-(n + 2 * pad - k) // stride) + 1
    return size - 1 if pad and (size - 1) * stride >= n + pad else size


def _pooling(c, pool):
    w = c.func.windows
    if len(w.ksize) != 2:
        c.refuse(f"a {len(w.ksize)}-d pooling (Caffe's pooling is 2-d)")
    if pool == "MAX" and not w.cover_all:
        sizes = list(zip(c.in_data[0].shape[2:], w.pad, w.ksize, w.stride))
        floor = tuple((n + 2 * p - k) // s + 1 for n, p, k, s in sizes)
        if floor != tuple(_caffe_pooled_size(*size) for size in sizes):
            c.refuse(f"cover_all=False gives {floor} windows where Caffe's pooling gives more")
    if pool == "AVE" and c.func.pad_value is None and any(w.pad):
        c.refuse("pad_value=None (Caffe's average counts the padding)")
    param = {"pool": 0 if pool == "MAX" else 1}
    param.update(_pairs(pad=w.pad, kernel=w.ksize, stride=w.stride))
    return c.layer("Pooling", c.bottom(), pooling_param=param)


def _lrn(c):
    f = c.func
    size = 2 * f.half + 1
    param = {"local_size": size, "alpha": f.alpha * size, "beta": f.beta, "k": f.k}
    return c.layer("LRN", c.bottom(), lrn_param=param)


def _batch_normalization(c):
    f = c.func
    x, gamma, beta, mean, var = c.in_data
    if f.axis not in (None, (0,), (0, 2, 3)[: x.ndim - 1]):
        c.refuse(f"axis={f.axis} (Caffe normalizes each channel of axis 1)")
    norm_name = f"{c.name}_bn"
    norm = c.layer(
        "BatchNorm", c.bottom(), [mean, var, numpy.ones(1, numpy.float32)],
        batch_norm_param={"use_global_stats": True, "eps": float(f.eps)},
    )  # fmt: skip
    norm[0].update(name=norm_name, top=[norm_name])
    scale = c.layer(
        "Scale", [norm_name], [gamma, beta], scale_param={"axis": 1, "bias_term": True}
    )
    return norm + scale


def _elementwise(type_name, **params):
    return lambda c: c.layer(type_name, c.bottom(len(c.bottoms)), **params)


_CONVERTERS = {
    "LinearFunction": _linear,
    "Convolution2D": lambda c: _convolution(c, transposed=False),
    "Deconvolution2D": lambda c: _convolution(c, transposed=True),
    "MaxPooling2D": lambda c: _pooling(c, "MAX"),
    "AveragePooling2D": lambda c: _pooling(c, "AVE"),
    "LocalResponseNormalization": _lrn,
    "FixedBatchNormalization": _batch_normalization,
    "ReLU": _elementwise("ReLU"),
    "LeakyReLU": lambda c: c.layer(
        "ReLU", c.bottom(), relu_param={"negative_slope": float(c.func.slope)}
    ),
    "Sigmoid": _elementwise("Sigmoid"),
    "Tanh": _elementwise("TanH"),
    "Softmax": lambda c: c.layer("Softmax", c.bottom(), softmax_param={"axis": int(c.func.axis)}),
    "Concat": lambda c: c.layer(
        "Concat", c.bottom(len(c.bottoms)), concat_param={"axis": int(c.func.axis)}
    ),
    "Reshape": lambda c: c.layer(
        "Reshape", c.bottom(), reshape_param={"shape": {"dim": [int(d) for d in c.func.shape]}}
    ),
    "_ + _": _elementwise("Eltwise"),
}

SUPPORTED_LABELS = tuple(_CONVERTERS)
"""The function labels :func:`export` writes (``Convolution2D`` is ``F.convolution_2d``'s, ...)."""


def _reaching(outputs, records):
    """The recorded functions that the outputs depend on, in the order they were applied."""
    needed = set()
    stack = [v.creator for v in outputs if v.creator is not None]
    while stack:
        func = stack.pop()
        if id(func) in needed:
            continue
        needed.add(id(func))
        stack.extend(node.creator for node in func.inputs if node.creator is not None)
    return [(f, in_data) for f, in_data in records if id(f) in needed]


def convert(model, args, graph_name="Graph"):
    """The Caffe network of ``model``'s forward on ``args``, as dicts of NetParameter's fields.

    Returns:
        tuple: ``(net, input_shape)``; ``net`` holds ``name`` and ``layer``
        (each layer's dict, with its blobs), as :func:`~dbr.links.caffe._wire.encode` takes.
    """
    if not isinstance(args, (tuple, list)) or len(args) != 1:
        raise ValueError(
            "dbr.links.caffe.export: expected args to be a list holding one input (Caffe's "
            f"'data' blob), got {type(args).__name__}"
            + (f" of length {len(args)}" if isinstance(args, (tuple, list)) else "")
        )
    x = args[0] if isinstance(args[0], Variable) else Variable(numpy.asarray(args[0]))
    recorder = _Recorder()
    with force_backprop_mode(), using_config("train", False), recorder:
        outputs = model(x)
    if isinstance(outputs, Variable):
        outputs = [outputs]
    if not isinstance(outputs, (tuple, list)) or not all(isinstance(v, Variable) for v in outputs):
        raise TypeError(
            "dbr.links.caffe.export: expected the model to return a Variable or a list or "
            f"tuple of Variables, got {type(outputs).__name__}"
        )
    counts = collections.defaultdict(dict)
    names = {}
    for func, _ in recorder.records:
        label = f"{func.label}-{func.rank}"
        counts[label].setdefault(id(func), len(counts[label]) + 1)
        names[id(func)] = f"{label}-{counts[label][id(func)]}"
    layers = []
    for func, in_data in _reaching(outputs, recorder.records):
        bottoms = [
            "data" if node is x.node else names.get(id(node.creator)) if node.creator else None
            for node in func.inputs
        ]
        converter = _CONVERTERS.get(func.label)
        c = _Layer(func, [numpy.asarray(a) for a in in_data], names[id(func)], bottoms)
        if converter is None:
            c.refuse(f"no Caffe layer is written for it; supported: {', '.join(SUPPORTED_LABELS)}")
        layers += converter(c)
    return {"name": graph_name, "layer": layers}, tuple(x.shape)


def _write(path, parts, mode):
    partial = f"{path}.partial"
    with open(partial, mode) as f:
        for part in parts:
            f.write(part)
    os.replace(partial, path)


def export(model, args, directory=None, export_params=True, graph_name="Graph"):
    """Write the network that ``model`` computes on ``args`` in Caffe's formats.

    The model runs once on ``args`` in test mode (``config.train`` False)
    with backprop recorded; the functions its outputs depend on are written
    as Caffe layers, in the order they ran, each named
    ``<label>-<rank>-<n>`` as Chainer names them, the input blob ``data``.
    The written functions are those of Chainer's exporter:
    :func:`~dbr.functions.linear`, :func:`~dbr.functions.convolution_2d`,
    :func:`~dbr.functions.deconvolution_2d` (with groups and dilation),
    :func:`~dbr.functions.max_pooling_2d`,
    :func:`~dbr.functions.average_pooling_2d`,
    :func:`~dbr.functions.fixed_batch_normalization` (a BatchNorm and a
    Scale layer: what :class:`~dbr.links.BatchNormalization` runs in test
    mode), :func:`~dbr.functions.local_response_normalization`,
    :func:`~dbr.functions.relu`, :func:`~dbr.functions.leaky_relu`,
    :func:`~dbr.functions.sigmoid`, :func:`~dbr.functions.tanh`,
    :func:`~dbr.functions.concat`, :func:`~dbr.functions.softmax`,
    :func:`~dbr.functions.reshape` and the sum of two Variables (``+``).

    Args:
        model (callable): a Chain (or any callable) returning a Variable
            or a list or tuple of Variables.
        args (list): one input (a Variable or an array).
        directory (str or os.PathLike or None): the existing folder to write
            ``chainer_model.prototxt`` and ``chainer_model.caffemodel`` in
            (Chainer's names); None writes nothing (the conversion is
            still checked).
        export_params (bool): whether to write the ``.caffemodel`` (the
            network with its parameters) besides the ``.prototxt``.
        graph_name (str): the network's ``name``.

    Raises:
        ValueError: a function that has no Caffe layer, or an option Caffe's
            layer does not have (the message names the function, its layer
            name and its inputs); ``args`` not a list of one input.
        FileNotFoundError: ``directory`` is not an existing folder.

    >>> import numpy, dbr.links as L
    >>> from dbr.links.caffe import export
    >>> export(L.Linear(3, 2), [numpy.zeros((1, 3), numpy.float32)], None)
    """
    net, input_shape = convert(model, args, graph_name)
    if directory is None:
        return
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            f"dbr.links.caffe.export: expected directory to be an existing folder, got "
            f"{directory!r}"
        )
    data_layer = {
        "name": "data", "type": "Input", "top": ["data"],
        "input_param": {"shape": [{"dim": list(input_shape)}]},
    }  # fmt: skip
    definition = {
        "name": graph_name,
        "layer": [data_layer]
        + [{k: v for k, v in l.items() if k != "blobs"} for l in net["layer"]],
    }
    text = "\n".join(to_text(_proto.NET, definition)) + "\n"
    _write(os.path.join(directory, PROTOTXT_NAME), [text], "w")
    if export_params:
        # Repeated fields concatenate: writing the layers one at a time keeps one in memory.
        parts = itertools.chain(
            [encode(_proto.NET, {"name": graph_name})],
            (encode(_proto.NET, {"layer": [layer]}) for layer in net["layer"]),
        )
        _write(os.path.join(directory, CAFFEMODEL_NAME), parts, "wb")


__all__ = ["export"]
