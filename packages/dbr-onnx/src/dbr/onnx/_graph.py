"""Record the define-by-run graph of one forward, and turn it into an ONNX GraphProto."""

import numpy

from dbr.core import backend
from dbr.core.function_hook import FunctionHook
from onnx import helper, numpy_helper

_EXACT_IN_DOUBLE = 2**53  # integers up to this magnitude survive a round trip through float64


class _Recorder(FunctionHook):
    """Keeps every applied FunctionNode with its input arrays, in the order applied.

    Holding the arrays (and the nodes) keeps them alive, so that a value that
    the forward made and dropped (a constant, a temporary) can still be read
    and folded into the exported graph.
    """

    name = "dbr.onnx.export"

    def __init__(self):
        self.records = {}

    def forward_preprocess(self, function, in_data):
        self.records[id(function)] = (len(self.records), function, in_data)


class FunctionConverterParams:
    """What a converter is given: the function, the opset and the names of its values.

    Attributes:
        func (FunctionNode): the function to convert (its attributes hold its options).
        opset_version (int): the opset being written.
        input_names (list of str): the ONNX names of the function's inputs.
        output_names (list of str): the ONNX names of the function's outputs.
        context (Context): adds constants and names temporaries.
        input_arrays (tuple of arrays): the inputs the forward saw (NumPy arrays).
        output_shapes (list of tuples): the shapes of the function's outputs.
        output_dtypes (list of dtypes): the dtypes of the function's outputs.
    """

    def __init__(
        self, func, opset_version, input_names, output_names, context, input_arrays,
        output_shapes, output_dtypes,
    ):  # fmt: skip
        self.func = func
        self.opset_version = opset_version
        self.input_names = input_names
        self.output_names = output_names
        self.context = context
        self.input_arrays = input_arrays
        self.output_shapes = output_shapes
        self.output_dtypes = output_dtypes


class Context:
    """Names of the graph being built, and the constants and parameters converters add to it.

    A converter calls :meth:`add_const` for a constant tensor (an attribute
    that later opsets take as an input, a scale, an index list), written as a
    ``Constant`` node before the converter's own nodes; :meth:`add_param` for
    an array that belongs in the model's initializers (a running mean the
    operator needs); and :meth:`tmp` for the name of an intermediate value.
    Names follow onnx_chainer's: a function is ``<Label>_<n>`` (the n-th of
    its label), its constants ``<Label>_<n>_const_<name>`` and its parameters
    ``<Label>_<n>_param_<name>``. ``shared`` holds what one converter leaves
    for a later one of the same export (a max pooling, for the upsampling that
    uses its indexes).
    """

    def __init__(self, opset_version=None):
        self.opset_version = opset_version
        self.initializers = []
        self.constants = []
        self.const_values = {}
        self._taken = 0
        self._names = set()
        self._counter = 0
        self.node_name = "node"
        self.shared = {}

    def unique(self, base):
        """A name not used before in this graph, derived from ``base``."""
        name = base
        while name in self._names:
            self._counter += 1
            name = f"{base}_{self._counter}"
        self._names.add(name)
        return name

    def tmp(self, hint="tmp"):
        """A fresh name for an intermediate value of the current node."""
        return self.unique(f"{self.node_name}/{hint}")

    def add_const(self, array, name="const"):
        """Add ``array`` as a ``Constant`` node and return its output's ONNX name."""
        onnx_name = self.unique(f"{self.node_name}_const_{name}")
        array = numpy.asarray(array)
        tensor = numpy_helper.from_array(array, onnx_name)
        self.const_values[onnx_name] = array
        if array.dtype.kind == "f" or (self.opset_version or 9) >= 9:
            self.constants.append(
                helper.make_node("Constant", [], [onnx_name], name=onnx_name, value=tensor)
            )
        elif array.size == 0 or numpy.abs(array.astype(numpy.float64)).max() <= _EXACT_IN_DOUBLE:
            # Constant holds floating-point tensors only before opset 9: a double
            # constant cast to the array's type keeps the graph free of initializers.
            stored = self.unique(f"{onnx_name}_double")
            double = numpy_helper.from_array(array.astype(numpy.float64), stored)
            to = helper.np_dtype_to_tensor_dtype(array.dtype)
            self.constants.append(
                helper.make_node("Constant", [], [stored], name=stored, value=double)
            )
            self.constants.append(
                helper.make_node("Cast", [stored], [onnx_name], name=onnx_name, to=to)
            )
        else:
            self.initializers.append(tensor)
        return onnx_name

    def const_value(self, name):
        """The array of the constant ``name`` added by :meth:`add_const`, or None."""
        return self.const_values.get(name)

    def add_param(self, array, name="param"):
        """Add ``array`` as an initializer of the model and return its ONNX name."""
        onnx_name = self.unique(f"{self.node_name}_param_{name.strip('/').replace('/', '_')}")
        self.initializers.append(numpy_helper.from_array(numpy.asarray(array), onnx_name))
        return onnx_name

    def take_constants(self, nodes):
        """The Constant nodes added since the last call that ``nodes`` read.

        A constant that a converter added but that became an attribute (the
        form of an older opset) is dropped, from the initializers too.
        """
        used = {name for n in nodes for name in n.input}
        for node in reversed(self.constants):  # a Cast's Constant comes before it
            if node.output[0] in used:
                used.update(node.input)
        constants = [n for n in self.constants if n.output[0] in used]
        self.constants = []
        self.initializers[self._taken :] = [
            t for t in self.initializers[self._taken :]
            if t.name in used or t.name not in self.const_values
        ]  # fmt: skip
        self._taken = len(self.initializers)
        return constants

    def make_node(self, op_type, inputs, outputs, **attributes):
        """An ONNX node named after the function being converted."""
        return helper.make_node(
            op_type, inputs, outputs, name=self.unique(self.node_name), **attributes
        )


def to_numpy(array):
    """``array`` as a NumPy array (copied from the GPU when needed)."""
    if isinstance(array, numpy.ndarray):
        return array
    return numpy.asarray(backend.to_cpu(array))
