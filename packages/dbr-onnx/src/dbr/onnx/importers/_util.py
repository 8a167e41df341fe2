"""What an importer is given, and the registry that maps ONNX operators to importers."""

import numpy

import onnx
from dbr.core import Variable
from onnx import helper


class NodeParams:
    """One ONNX node as its importer sees it.

    Attributes:
        node (onnx.NodeProto): the node.
        op_type (str): its operator.
        name (str): its name (or its first output's, when it has none).
        opset_version (int): the version of the default domain the model imports.
        attributes (dict): its attributes as Python values (``onnx.helper.get_attribute_value``).
        n_outputs (int): how many outputs the graph reads from it.
    """

    __slots__ = (
        "node", "op_type", "name", "opset_version", "attributes", "n_outputs", "opsets",
        "_evaluator",
    )  # fmt: skip

    def __init__(self, node, opset_version, attributes, n_outputs, opsets=None):
        self.node = node
        self.op_type = node.op_type
        self.name = node.name or node.output[0]
        self.opset_version = opset_version
        self.attributes = attributes
        self.n_outputs = n_outputs
        self.opsets = {"": opset_version} if opsets is None else opsets
        self._evaluator = None

    def get(self, name, default=None):
        """The attribute ``name`` (bytes decoded to str), or ``default`` when absent."""
        value = self.attributes.get(name, default)
        return value.decode() if isinstance(value, bytes) else value

    def reference(self, arrays):
        """The node's outputs computed by ONNX's reference implementation on NumPy arrays.

        ``arrays`` are its inputs in order (None for a missing optional one); an output
        that the graph does not read is None.
        """
        node = self.node
        if self._evaluator is None:
            from onnx.reference import ReferenceEvaluator

            # A node alone would run at the newest opset: a one-node model keeps the graph's.
            names = list(dict.fromkeys(n for n in node.input if n))
            undefined = onnx.TensorProto.UNDEFINED
            graph = helper.make_graph(
                [node], "node",
                [helper.make_tensor_value_info(n, undefined, None) for n in names],
                [helper.make_tensor_value_info(n, undefined, None) for n in node.output if n],
            )  # fmt: skip
            opset_imports = [helper.make_opsetid(d, v) for d, v in self.opsets.items()]
            self._evaluator = ReferenceEvaluator(
                helper.make_model(graph, opset_imports=opset_imports)
            )
        if node.op_type == "OneHot" and arrays[1] is not None:
            # onnx's reference takes int() of the depth, which NumPy 2.4 refuses for a
            # 1-element 1-d array (ONNX allows either form): give it the scalar.
            arrays = [arrays[0], numpy.asarray(arrays[1]).reshape(()), *arrays[2:]]
        feeds = {n: a for n, a in zip(node.input, arrays) if n}
        outputs = iter(self._evaluator.run(None, feeds))
        return [next(outputs) if n else None for n in node.output]

    def error(self, message):
        """A ValueError naming this node, for a form of the operator that dbr cannot run."""
        return ValueError(f"dbr.onnx.load: {self.op_type} node {self.name!r}: {message}")


class Importer:
    """An importer: ``function(params, *inputs)`` returning the node's output (or a tuple).

    ``static`` are the indexes of inputs that must be known arrays (shapes, axes,
    pads): an initializer that only such inputs read stays a constant, not a Parameter,
    and they are given to ``function`` as NumPy arrays. Missing optional inputs are None.
    """

    __slots__ = ("function", "static")

    def __init__(self, function, static=()):
        self.function = function
        self.static = frozenset(static)


def importer(table, *op_types, static=()):
    """A decorator registering ``function`` in ``table`` as the importer of ``op_types``."""

    def register(function):
        for op_type in op_types:
            table[op_type] = Importer(function, static)
        return function

    return register


def array_of(value):
    """The array behind ``value`` (a Variable or an array), or None."""
    if value is None:
        return None
    return value.array if isinstance(value, Variable) else value


def ints(value):
    """A static input (an array) as a list of Python ints."""
    return [int(v) for v in numpy.asarray(value).reshape(-1)]


def axes_of(params, inputs_axes, ndim, attribute="axes"):
    """The axes an operator reads from an input (newer opsets) or an attribute (older).

    Returns a list of non-negative axes, or None when neither gives any.
    """
    axes = params.get(attribute) if inputs_axes is None else ints(inputs_axes)
    if axes is None:
        return None
    return [int(a) % ndim for a in axes]


def shape_of(value):
    """The shape of a Variable or an array."""
    return tuple(value.shape)
