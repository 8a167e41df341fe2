"""Helpers shared by the converters."""

import numpy

from dbr.onnx.converters import _legacy


def const(p, values, dtype=numpy.int64, name="const"):
    """Add a constant of ``values`` to the graph and return its name."""
    return p.context.add_const(numpy.asarray(values, dtype=dtype), name)


def node(p, op_type, inputs, outputs=None, n_outputs=1, **attributes):
    """One ONNX node, ``outputs`` defaulting to ``n_outputs`` fresh names: (node, outputs)."""
    if outputs is None:
        outputs = [p.context.tmp(op_type) for _ in range(n_outputs)]
    return p.context.make_node(op_type, inputs, outputs, **attributes), outputs


class Chain:
    """Builds a list of nodes, each fed by the previous one's output by default."""

    def __init__(self, p):
        self.p = p
        self.nodes = []

    def op(self, op_type, inputs, outputs=None, n_outputs=1, **attributes):
        """Append a node; return its single output's name, or the list when n_outputs > 1.

        The node is given in opset 13's form; it is written in the form of the
        opset being exported (see :mod:`dbr.onnx.converters._legacy`).
        """
        opset = self.p.opset_version
        if op_type == "Gemm" and opset < 11 and len(inputs) == 2:
            # Gemm's C is optional from opset 11 only.
            inputs = [*inputs, self.scalar(0)]
        inputs, attributes = _legacy.lower(self.p.context, op_type, inputs, attributes, opset)
        n, outs = node(self.p, op_type, inputs, outputs, n_outputs, **attributes)
        self.nodes.append(n)
        return outs[0] if len(outs) == 1 and n_outputs == 1 else outs

    def const(self, values, dtype=numpy.int64, name="const"):
        """A constant's name."""
        return const(self.p, values, dtype, name)

    def scalar(self, value, like=0):
        """A scalar constant of the dtype of input ``like``."""
        return const(self.p, value, self.p.input_arrays[like].dtype, "scalar")


def reduce(chain, op_type, x, axes, keepdims, output=None):
    """A Reduce* node over ``axes`` (None: all), in the form the opset asks for."""
    p = chain.p
    outputs = None if output is None else [output]
    if axes is None:
        return chain.op(op_type, [x], outputs, keepdims=int(keepdims))
    axes = [int(a) for a in axes]
    if (op_type == "ReduceSum" and p.opset_version >= 13) or p.opset_version >= 18:
        return chain.op(op_type, [x, chain.const(axes)], outputs, keepdims=int(keepdims))
    return chain.op(op_type, [x], outputs, axes=axes, keepdims=int(keepdims))


def normalize_axes(axis, ndim):
    """``axis`` (None, int or tuple) as a sorted list of non-negative axes (None: all)."""
    if axis is None:
        return None
    if not isinstance(axis, (tuple, list)):
        axis = (axis,)
    return sorted(a % ndim for a in axis)


def pick_per_row(chain, x, index, shape, output=None):
    """``x[i, index[i]]`` for each row ``i`` of a 2-D ``x`` of static ``shape`` (an int64
    ``index`` of shape ``(N,)``): GatherElements from opset 11, a Gather on the flattened
    ``x`` before it."""
    outputs = None if output is None else [output]
    if chain.p.opset_version >= 11:
        column = chain.op("Unsqueeze", [index, chain.const([1])])
        picked = chain.op("GatherElements", [x, column], axis=1)
        return chain.op("Squeeze", [picked, chain.const([1])], outputs)
    rows, columns = shape
    flat = chain.op("Reshape", [x, chain.const([-1])])
    offsets = chain.const(numpy.arange(rows) * columns)
    return chain.op("Gather", [flat, chain.op("Add", [index, offsets])], outputs, axis=0)


def require_opset(p, opset, reason):
    """Raise :class:`~dbr.onnx.converters._legacy.OpsetError` when the opset exported is older
    than ``opset``; ``reason`` says what the converter needs from it."""
    if p.opset_version < opset:
        raise _legacy.OpsetError(
            f"{p.context.node_name}: {p.func.label} exports from opset {opset} on ({reason}); "
            f"export this model at opset {opset} or later (got opset {p.opset_version})"
        )
