"""Converters of the losses."""

import numpy

from dbr.onnx.converters._util import Chain, pick_per_row, reduce


def _softmax_cross_entropy(p):
    c = Chain(p)
    f = p.func
    x_arr, t_arr = p.input_arrays
    if f.class_weight is not None or t_arr.dtype.kind not in "iu" or x_arr.ndim != 2:
        raise ValueError(
            "dbr.onnx: SoftmaxCrossEntropy converts integer labels of 2-D scores without "
            f"class_weight, got scores of shape {x_arr.shape}, labels of dtype {t_arr.dtype}"
            f"{' and class_weight' if f.class_weight is not None else ''}"
        )
    x, t = p.input_names
    dtype = x_arr.dtype
    log_p = c.op("LogSoftmax", [x], axis=1)
    ignore = c.const(f.ignore_label, t_arr.dtype)
    valid = c.op("Not", [c.op("Equal", [t, ignore])])
    safe_t = c.op("Where", [valid, t, c.const(0, t_arr.dtype)])
    picked = pick_per_row(c, log_p, c.op("Cast", [safe_t], to=7), x_arr.shape)
    weight = c.op("Cast", [valid], to=_onnx_type(dtype))
    loss = c.op("Neg", [c.op("Mul", [picked, weight])])
    if f.reduce == "no":
        c.op("Identity", [loss], p.output_names)
        return c.nodes
    total = reduce(c, "ReduceSum", loss, None, False)
    if f.normalize:
        count = reduce(c, "ReduceSum", weight, None, False)
        count = c.op("Max", [count, c.const(1, dtype)])
    else:
        count = c.const(x_arr.shape[0], dtype)
    c.op("Div", [total, count], p.output_names)
    return c.nodes


def _onnx_type(dtype):
    from onnx import helper

    return helper.np_dtype_to_tensor_dtype(numpy.dtype(dtype))


CONVERTERS = {
    "SoftmaxCrossEntropy": _softmax_cross_entropy,
}
