"""Converters of the activation functions."""

import numpy

from dbr.onnx._graph import to_numpy
from dbr.onnx.converters._util import Chain


def _simple(op_type, **fixed):
    def convert(p):
        c = Chain(p)
        c.op(op_type, p.input_names, p.output_names, **fixed)
        return c.nodes

    return convert


def _clipped_relu(p):
    c = Chain(p)
    c.op("Clip", [p.input_names[0], c.scalar(0.0), c.scalar(p.func.cap)], p.output_names)
    return c.nodes


def _leaky_relu(p):
    c = Chain(p)
    c.op("LeakyRelu", p.input_names, p.output_names, alpha=float(p.func.slope))
    return c.nodes


def _elu(p):
    c = Chain(p)
    c.op("Elu", p.input_names, p.output_names, alpha=float(p.func.alpha))
    return c.nodes


def _softmax(op_type):
    def convert(p):
        c = Chain(p)
        ndim = p.input_arrays[0].ndim
        axis = int(p.func.axis) % ndim
        if p.opset_version >= 13 or axis == ndim - 1:
            c.op(op_type, p.input_names, p.output_names, axis=axis)
            return c.nodes
        # Before opset 13 the operator flattens the axes from ``axis`` on into one:
        # move the axis last, where that flattening changes nothing.
        order = [i for i in range(ndim) if i != axis] + [axis]
        back = [order.index(i) for i in range(ndim)]
        moved = c.op("Transpose", p.input_names, perm=order)
        y = c.op(op_type, [moved], axis=ndim - 1)
        c.op("Transpose", [y], p.output_names, perm=back)
        return c.nodes

    return convert


def _softplus(p):
    c = Chain(p)
    beta = float(p.func.beta)
    if beta == 1.0:
        c.op("Softplus", p.input_names, p.output_names)
        return c.nodes
    scaled = c.op("Mul", [p.input_names[0], c.scalar(beta)])
    y = c.op("Softplus", [scaled])
    c.op("Div", [y, c.scalar(beta)], p.output_names)
    return c.nodes


def _from_axis_1(c, p):
    """The name of the second input reshaped so that ONNX broadcasts it from ``x``'s axis 1.

    dbr's parameter (PReLU's ``W``, Swish's ``beta``) spans axes ``1..ndim`` of
    ``x``; ONNX broadcasts from the right, so trailing axes of length one are added.
    """
    w = p.input_names[1]
    shape = p.input_arrays[1].shape
    trailing = p.input_arrays[0].ndim - 1 - len(shape)
    if trailing:
        w = c.op("Reshape", [w, c.const(list(shape) + [1] * trailing)])
    return w


def _prelu(p):
    c = Chain(p)
    x = p.input_names[0]
    w = _from_axis_1(c, p)
    c.op("PRelu", [x, w], p.output_names)
    return c.nodes


def _swish(p):
    c = Chain(p)
    x = p.input_names[0]
    beta = _from_axis_1(c, p)
    s = c.op("Sigmoid", [c.op("Mul", [x, beta])])
    c.op("Mul", [x, s], p.output_names)
    return c.nodes


def _hard_sigmoid(p):
    c = Chain(p)
    c.op("HardSigmoid", p.input_names, p.output_names, alpha=0.2, beta=0.5)
    return c.nodes


CONVERTERS = {
    "ReLU": _simple("Relu"),
    "Sigmoid": _simple("Sigmoid"),
    "Tanh": _simple("Tanh"),
    "ClippedReLU": _clipped_relu,
    "LeakyReLU": _leaky_relu,
    "ELU": _elu,
    "Softmax": _softmax("Softmax"),
    "LogSoftmax": _softmax("LogSoftmax"),
    "Softplus": _softplus,
    "PReLU": _prelu,
    "PReLUFunction": _prelu,
    "Swish": _swish,
    "HardSigmoid": _hard_sigmoid,
}


def _crelu(p):
    c = Chain(p)
    x = p.input_names[0]
    axis = p.func.axis % p.input_arrays[0].ndim
    positive = c.op("Relu", [x])
    negative = c.op("Relu", [c.op("Neg", [x])])
    c.op("Concat", [positive, negative], p.output_names, axis=axis)
    return c.nodes


CONVERTERS["CReLU"] = _crelu


def _rrelu(p):
    """RReLU in test mode, where every slope is ``(lower + upper) / 2``: a LeakyRelu."""
    c = Chain(p)
    f = p.func
    r = numpy.asarray(to_numpy(f.r))
    if r.size and not numpy.all(r == r.flat[0]):
        raise ValueError(
            "dbr.onnx: RReLU exports in test mode (one slope, (l + u) / 2 = "
            f"{(f.lower + f.upper) / 2}), got slopes from {r.min()} to {r.max()} (train mode "
            "draws them at random); export with train=False"
        )
    slope = float(r.flat[0]) if r.size else (f.lower + f.upper) / 2
    c.op("LeakyRelu", p.input_names, p.output_names, alpha=slope)
    return c.nodes


CONVERTERS["RReLU"] = _rrelu
