"""The forms that opsets older than 13 take for operators whose inputs were attributes before.

Converters build nodes in the form of opset 13 (axes, splits, pads, bounds
as constant inputs); :func:`lower` rewrites such a node for the opset being
written, moving each constant input into the attribute the older operator
reads. It is a table: operator -> (the opset from which the input form
holds, the inputs that were attributes before it).
"""

import functools

import numpy

import onnx

# op_type: (first opset with the input form, [(input index, attribute name, kind)])
_INPUTS_WERE_ATTRIBUTES = {
    "Squeeze": (13, [(1, "axes", "ints")]),
    "Unsqueeze": (13, [(1, "axes", "ints")]),
    "Split": (13, [(1, "split", "ints")]),
    "ReduceSum": (13, [(1, "axes", "ints")]),
    "Slice": (10, [(1, "starts", "ints"), (2, "ends", "ints"), (3, "axes", "ints")]),
    "Pad": (11, [(1, "pads", "ints"), (2, "value", "float")]),
    "Clip": (11, [(1, "min", "float"), (2, "max", "float")]),
    "Dropout": (12, [(1, "ratio", "float")]),
}


class OpsetError(ValueError):
    """A node cannot be written in the requested opset."""


def lower(context, op_type, inputs, attributes, opset_version):
    """``(inputs, attributes)`` of the node in the form ``opset_version`` reads.

    Args:
        context (dbr.onnx.Context): knows the values of the constants added.
        op_type (str): the ONNX operator.
        inputs (list of str): its inputs in opset 13's form.
        attributes (dict): its attributes.
        opset_version (int): the opset written.

    Raises:
        OpsetError: an input that was an attribute is not a constant, or the
            older operator cannot express the node (Slice's steps before 10).
    """
    rule = _INPUTS_WERE_ATTRIBUTES.get(op_type)
    _check_exists(context, op_type, opset_version)
    if rule is None or opset_version >= rule[0]:
        return inputs, attributes
    inputs = list(inputs)
    attributes = dict(attributes)
    last = len(inputs)
    for index, name, kind in rule[1]:
        if index >= len(inputs) or not inputs[index]:
            continue
        value = context.const_value(inputs[index])
        if value is None:
            raise OpsetError(
                f"{context.node_name}: {op_type} takes '{name}' as an attribute before opset "
                f"{rule[0]}, so it must be a constant; got the computed value {inputs[index]!r} "
                f"at opset {opset_version}"
            )
        if kind == "ints":
            attributes[name] = [int(v) for v in numpy.ravel(value)]
        else:
            attributes[name] = float(numpy.ravel(value)[0])
        last = min(last, index)
    if op_type == "Slice" and len(inputs) > 4 and inputs[4]:
        steps = context.const_value(inputs[4])
        if steps is None or numpy.any(numpy.asarray(steps) != 1):
            raise OpsetError(
                f"{context.node_name}: Slice takes steps other than 1 from opset 10 only; "
                f"export at opset 10 or later (got opset {opset_version})"
            )
    if op_type == "Dropout":
        inputs = inputs[:1]
    else:
        inputs = inputs[:last]
    return inputs, attributes


@functools.cache
def first_opset(op_type):
    """The first default-domain opset that has ``op_type`` (None: ONNX has no such operator)."""
    versions = [
        schema.since_version
        for schema in onnx.defs.get_all_schemas_with_history()
        if schema.name == op_type and schema.domain == ""
    ]
    return min(versions) if versions else None


def _check_exists(context, op_type, opset_version):
    first = first_opset(op_type)
    if first is not None and opset_version < first:
        raise OpsetError(
            f"{context.node_name}: ONNX has {op_type} from opset {first} on; export this "
            f"model at opset {first} or later (got opset {opset_version})"
        )
