"""Import an ONNX model as a dbr Chain whose forward runs dbr functions.

:func:`load` reads the graph once: every floating-point initializer that a node reads as
a weight becomes a :class:`~dbr.core.Parameter` of the chain (BatchNormalization's running
mean and variance become persistent values), what depends on constants alone is computed
then (a ``Shape`` too, when the graph gives its input's shape), and each remaining node is
looked up among the importers (:mod:`dbr.onnx.importers`); operators that have none are
named, with their counts, before anything runs.
"""

import collections
import keyword
import os
import re

import numpy

import onnx
from dbr.core import Chain, Parameter, Variable, backend
from dbr.onnx.importers import ARRAY_ONLY, importers
from dbr.onnx.importers._util import NodeParams
from onnx import helper, numpy_helper

_RANDOM = frozenset(
    {"Bernoulli", "Dropout", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform",
     "RandomUniformLike"}
)  # fmt: skip
_RUNNING_STATISTICS = {"BatchNormalization": (3, 4)}


class UnsupportedOperatorError(ValueError):
    """Raised by :func:`load` when the graph uses operators that dbr cannot import.

    Attributes:
        operators (dict): each such operator (``domain::op_type`` outside the default
            domain) and how many nodes use it.
    """

    def __init__(self, operators):
        self.operators = dict(operators)
        listed = ", ".join(
            f"{op} ({n} node{'s' if n > 1 else ''})" for op, n in self.operators.items()
        )
        super().__init__(
            f"dbr.onnx.load: the graph uses {len(self.operators)} operator"
            f"{'s' if len(self.operators) > 1 else ''} that dbr cannot import: {listed}"
        )


def load(path_or_model):
    """Build a :class:`ImportedChain` that computes an ONNX model with dbr functions.

    Args:
        path_or_model (str, os.PathLike, bytes or onnx.ModelProto): an ONNX file, its
            serialized bytes, or the model.

    Returns:
        ImportedChain: a chain called with the graph's inputs (positionally, or by name
        as keywords) that returns its output (a tuple when the graph has several).

    Raises:
        UnsupportedOperatorError: the graph uses operators without an importer (all of
            them are named, with counts).

    >>> import numpy, onnx
    >>> from onnx import helper, numpy_helper, TensorProto
    >>> import dbr.onnx
    >>> graph = helper.make_graph(
    ...     [helper.make_node("Gemm", ["x", "W", "b"], ["h"], transB=1),
    ...      helper.make_node("Relu", ["h"], ["y"])],
    ...     "mlp",
    ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
    ...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2])],
    ...     [numpy_helper.from_array(numpy.ones((2, 3), numpy.float32), "W"),
    ...      numpy_helper.from_array(numpy.array([-4.0, 1.0], numpy.float32), "b")])
    >>> model = dbr.onnx.load(helper.make_model(graph))
    >>> model(numpy.ones((1, 3), numpy.float32)).array
    array([[0., 4.]], dtype=float32)
    >>> sorted(name for name, _ in model.namedparams())
    ['/W', '/b']
    """
    if isinstance(path_or_model, onnx.ModelProto):
        model = path_or_model
    elif isinstance(path_or_model, (bytes, bytearray)):
        model = onnx.load_from_string(bytes(path_or_model))
    elif isinstance(path_or_model, (str, os.PathLike)):
        model = onnx.load(os.fspath(path_or_model))
    else:
        raise TypeError(
            "dbr.onnx.load: path_or_model must be a path, bytes or an onnx.ModelProto, "
            f"got {type(path_or_model).__name__}"
        )
    return ImportedChain(model)


def _attribute_name(name, taken):
    """``name`` as an attribute name: a Python identifier not among ``taken``."""
    base = re.sub(r"\W", "_", name) or "value"
    if base[0].isdigit() or keyword.iskeyword(base):
        base = f"p_{base}"
    candidate, n = base, 0
    while candidate in taken:
        n += 1
        candidate = f"{base}_{n}"
    return candidate


def _static_shapes(model):
    """Each value's shape when ONNX's shape inference knows every dimension."""
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - a graph that inference rejects is just not folded
        inferred = model
    shapes = {}
    graph = inferred.graph
    for info in [*graph.input, *graph.value_info, *graph.output]:
        if not info.type.HasField("tensor_type") or not info.type.tensor_type.HasField("shape"):
            continue
        dims = info.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            shapes[info.name] = tuple(d.dim_value for d in dims)
    return shapes


class _Step:
    """One node to run at each forward: by its importer, or on arrays by ONNX's reference."""

    __slots__ = ("params", "importer", "inputs", "outputs")

    def __init__(self, params, importer):
        self.params = params
        self.importer = importer
        self.inputs = list(params.node.input)
        self.outputs = list(params.node.output)


def _to_numpy(value):
    if isinstance(value, Variable):
        value = value.array
    return value if isinstance(value, numpy.ndarray) else numpy.asarray(backend.to_cpu(value))


class ImportedChain(Chain):
    """A Chain computing an ONNX graph with dbr functions (made by :func:`load`).

    Its parameters are the graph's weight initializers, named after them (made Python
    identifiers: ``conv1.weight`` is ``conv1_weight``); they train, serialize
    (``save_npz``/``load_npz``) and move between devices as any chain's do.
    ``config.train`` switches Dropout and BatchNormalization to their training forms.

    Attributes:
        input_names (list of str): the graph's inputs, in the order ``forward`` takes them.
        output_names (list of str): the graph's outputs, in the order it returns them.
        parameter_names (dict): each initializer's ONNX name -> its attribute name.
        opset_version (int): the default-domain opset of the model.
    """

    def __init__(self, model):
        super().__init__()
        graph = model.graph
        self.opset_version = next(
            (o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1
        )
        opsets = {o.domain: o.version for o in model.opset_import}
        initializers = {t.name: numpy_helper.to_array(t).copy() for t in graph.initializer}
        self.input_names = [i.name for i in graph.input if i.name not in initializers]
        self.output_names = [o.name for o in graph.output]
        self._input_types = {
            i.name: helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type)
            for i in graph.input
            if i.name not in initializers and i.type.tensor_type.elem_type
        }
        nodes = self._needed(graph.node, set(self.output_names))
        weights, statistics = self._weights(nodes, initializers)
        shapes = _static_shapes(model)
        constants = {k: v for k, v in initializers.items() if k not in weights | statistics}
        self._constants, self._plan, self._folded_shapes = self._fold(
            nodes, constants, shapes, opsets
        )
        self._check_supported(weights | statistics)
        self.parameter_names = {}
        taken = set(dir(self))
        with self.init_scope():
            for name in sorted(weights | statistics):
                if not any(name in s.inputs for s in self._plan):
                    continue
                attribute = _attribute_name(name, taken)
                taken.add(attribute)
                self.parameter_names[name] = attribute
                if name in weights:
                    setattr(self, attribute, Parameter(initializers[name]))
                else:
                    self.add_persistent(attribute, initializers[name])
        self._static_input_shapes = {
            n: shapes[n] for n in self.input_names if n in shapes and self._folded_shapes
        }

    @staticmethod
    def _needed(nodes, wanted):
        """The nodes that the outputs depend on, in the graph's (topological) order."""
        kept = []
        for node in reversed(nodes):
            if any(o in wanted for o in node.output):
                kept.append(node)
                wanted.update(node.input)
        return kept[::-1]

    @staticmethod
    def _weights(nodes, initializers):
        """The floating-point initializers read as weights, and those read as statistics."""
        weights, statistics = set(), set()
        for node in nodes:
            entry = importers.get(node.op_type) if node.domain in ("", "ai.onnx") else None
            if entry is None or node.op_type in ARRAY_ONLY:
                continue
            for index, name in enumerate(node.input):
                if name not in initializers or initializers[name].dtype.kind != "f":
                    continue
                if index in _RUNNING_STATISTICS.get(node.op_type, ()):
                    statistics.add(name)
                elif index not in entry.static:
                    weights.add(name)
        return weights, statistics - weights

    def _fold(self, nodes, constants, shapes, opsets):
        """Compute what depends on constants alone; return (constants, plan, shapes folded)."""
        plan = []
        folded_shapes = False
        for node in nodes:
            params = NodeParams(
                node, self.opset_version,
                {a.name: helper.get_attribute_value(a) for a in node.attribute},
                len(node.output), opsets,
            )  # fmt: skip
            step = _Step(params, importers.get(node.op_type))
            present = [n for n in node.input if n]
            if node.op_type in ("Shape", "Size") and present[0] in shapes:
                dummy = numpy.empty(shapes[present[0]], numpy.uint8)
                outputs = step.params.reference([dummy])
                folded_shapes = True
            elif node.op_type not in _RANDOM and all(n in constants for n in present):
                outputs = step.params.reference([constants.get(n) for n in node.input])
            else:
                plan.append(step)
                continue
            constants.update(zip(node.output, outputs))
        return constants, plan, folded_shapes

    def _check_supported(self, trained):
        """Raise UnsupportedOperatorError naming every operator that no importer runs."""
        variables = set(self.input_names) | trained
        missing = collections.Counter()
        for step in self._plan:
            node = step.params.node
            if node.op_type in ARRAY_ONLY or not any(n in variables for n in node.input):
                continue
            variables.update(node.output)
            if node.domain not in ("", "ai.onnx"):
                missing[f"{node.domain}::{node.op_type}"] += 1
            elif step.importer is None:
                missing[node.op_type] += 1
        if missing:
            raise UnsupportedOperatorError(sorted(missing.items()))

    def _bind(self, args, kwargs):
        """The inputs by name: floating-point arrays as Variables, the others as arrays."""
        if len(args) > len(self.input_names):
            raise TypeError(
                f"ImportedChain.forward: the graph has {len(self.input_names)} inputs "
                f"{self.input_names}, got {len(args)} positional arguments"
            )
        given = dict(zip(self.input_names, args))
        for name, value in kwargs.items():
            if name not in self.input_names or name in given:
                raise TypeError(
                    f"ImportedChain.forward: unexpected or repeated input {name!r}; "
                    f"the graph's inputs are {self.input_names}"
                )
            given[name] = value
        missing = [n for n in self.input_names if n not in given]
        if missing:
            raise TypeError(f"ImportedChain.forward: missing inputs {missing}")
        values = {}
        for name, value in given.items():
            array = value.array if isinstance(value, Variable) else value
            expected = self._input_types.get(name)
            if expected is not None and array.dtype != expected:
                raise TypeError(
                    f"ImportedChain.forward: input {name!r} must be {expected}, got {array.dtype}"
                )
            shape = self._static_input_shapes.get(name)
            if shape is not None and tuple(array.shape) != shape:
                raise ValueError(
                    f"ImportedChain.forward: input {name!r} must have shape {shape} (the graph "
                    f"computes shapes from it, folded at load), got {tuple(array.shape)}"
                )
            if array.dtype.kind == "f" and not isinstance(value, Variable):
                value = Variable(array)
            values[name] = value
        return values

    def forward(self, *args, **kwargs):
        """Run the graph on its inputs (positional, or by name); return its outputs."""
        values = dict(self._constants)
        d = self.__dict__
        for name, attribute in self.parameter_names.items():
            values[name] = d[attribute]
        values.update(self._bind(args, kwargs))
        for step in self._plan:
            inputs = [values[n] if n else None for n in step.inputs]
            outputs = self._run(step, inputs)
            values.update((n, v) for n, v in zip(step.outputs, outputs) if n)
        results = []
        for name in self.output_names:
            value = values[name]
            if not isinstance(value, Variable):
                value = Variable(value, requires_grad=False)
            results.append(value)
        return results[0] if len(results) == 1 else tuple(results)

    @staticmethod
    def _run(step, inputs):
        entry = step.importer
        variables = [v for v in inputs if isinstance(v, Variable)]
        if entry is None or step.params.op_type in ARRAY_ONLY or not variables:
            arrays = [None if v is None else _to_numpy(v) for v in inputs]
            outputs = step.params.reference(arrays)
            device = variables[0].device if variables else None
            if device is not None and variables[0].xp is not numpy:
                outputs = [device.send(o) for o in outputs]
            return outputs
        device = variables[0].device if variables[0].xp is not numpy else None
        for i, v in enumerate(inputs):
            if v is None:
                continue
            if i in entry.static:
                inputs[i] = _to_numpy(v)
            elif device is not None and not isinstance(v, Variable):
                inputs[i] = device.send(v)
        while inputs and inputs[-1] is None:
            inputs.pop()
        outputs = entry.function(step.params, *inputs)
        return outputs if isinstance(outputs, tuple) else (outputs,)
