"""Converters of max and average pooling."""

from dbr.onnx.converters._util import Chain


def _end_pads(p, windows):
    x_shape = p.input_arrays[0].shape
    out = p.output_shapes[0][2:]
    ends = []
    for n, o, k, s, b in zip(x_shape[2:], out, windows.ksize, windows.stride, windows.pad):
        ends.append(int(max(b, (o - 1) * s + k - n - b)))
    return [int(b) for b in windows.pad] + ends


def _max_pooling(p):
    c = Chain(p)
    w = p.func.windows
    c.op(
        "MaxPool", p.input_names[:1], p.output_names[:1], kernel_shape=list(w.ksize),
        strides=list(w.stride), pads=_end_pads(p, w),
    )  # fmt: skip
    return c.nodes


def _average_pooling(p):
    c = Chain(p)
    w = p.func.windows
    c.op(
        "AveragePool", p.input_names, p.output_names, kernel_shape=list(w.ksize),
        strides=list(w.stride), pads=_end_pads(p, w),
        count_include_pad=int(p.func.pad_value is not None),
    )  # fmt: skip
    return c.nodes


CONVERTERS = {
    "MaxPoolingND": _max_pooling,
    "AveragePoolingND": _average_pooling,
}
