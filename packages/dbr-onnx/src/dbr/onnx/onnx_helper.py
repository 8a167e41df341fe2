"""Helpers for writing converters: nodes named after the function converted, node chains.

While :func:`dbr.onnx.export` runs a converter, :func:`get_func_name` is the
name of the function being converted (``ReLU_3``); :func:`make_node` and
:class:`GraphBuilder` name their nodes (and the builder its outputs) after it,
so that a converter written for onnx_chainer works unchanged.
"""

import contextlib
import contextvars

import onnx
from onnx import helper, numpy_helper

_func_name = contextvars.ContextVar("dbr.onnx.onnx_helper.func_name", default=None)


def set_func_name(func_name):
    """Set the name of the function being converted (the exporter does this for each node).

    Args:
        func_name (str): the name.
    """
    _func_name.set(func_name)


def get_func_name():
    """The name of the function being converted.

    Raises:
        RuntimeError: no converter is running (outside :func:`dbr.onnx.export`).
    """
    name = _func_name.get()
    if name is None:
        raise RuntimeError(
            "onnx_helper.get_func_name: no function is being converted; call it from a "
            "converter that dbr.onnx.export runs"
        )
    return name


@contextlib.contextmanager
def converting(func_name):
    """In the block, :func:`get_func_name` is ``func_name``."""
    token = _func_name.set(func_name)
    try:
        yield
    finally:
        _func_name.reset(token)


def make_node(*args, **kwargs):
    """``onnx.helper.make_node`` with the node named after the function being converted.

    Args:
        *args: the op type, input names and output names.
        **kwargs: the node's attributes (and ``domain``).

    Returns:
        onnx.NodeProto
    """
    return helper.make_node(*args, name=get_func_name(), **kwargs)


class GraphBuilder:
    """Builds a chain of ONNX nodes for one converter, naming each after the function.

    >>> gb = GraphBuilder()                                     # doctest: +SKIP
    >>> shape = gb.op('Shape', params.input_names)              # doctest: +SKIP
    >>> gb.op_output_named('Reshape', [x, shape], params.output_names)  # doctest: +SKIP
    >>> return gb.nodes()                                       # doctest: +SKIP
    """

    def __init__(self):
        self._nodes = []
        self._func_name = get_func_name()

    def node_name(self):
        """The name of the next node (and of its output): ``<function>_tmp_<n>``."""
        return f"{self._func_name}_tmp_{len(self._nodes)}"

    def op(self, op_name, input_names, num_outputs=1, **kwargs):
        """Add a node whose outputs are named after it; return the output name(s).

        Args:
            op_name (str): the ONNX operator.
            input_names (list of str): its inputs.
            num_outputs (int): how many outputs it has.
            **kwargs: its attributes.

        Returns:
            str when ``num_outputs`` is 1, else a tuple of str.
        """
        name = self.node_name()
        if num_outputs == 1:
            output_names = [name]
        else:
            output_names = [f"{name}_{i}" for i in range(num_outputs)]
        return self.op_output_named(op_name, input_names, output_names, **kwargs)

    def op_output_named(self, op_name, input_names, output_names, **kwargs):
        """Add a node with the given output names; return the output name(s).

        Args:
            op_name (str): the ONNX operator.
            input_names (list of str): its inputs (a list, not one string).
            output_names (list of str): its outputs.
            **kwargs: its attributes.

        Returns:
            str when there is one output, else a tuple of str.
        """
        if isinstance(input_names, str):
            raise TypeError(
                f"GraphBuilder.op: input_names must be a list of names, got the string "
                f"{input_names!r}"
            )
        name = self.node_name()
        node = helper.make_node(op_name, input_names, output_names, name=name, **kwargs)
        self._nodes.append(node)
        if len(output_names) == 1:
            return node.output[0]
        return tuple(node.output)

    def nodes(self, output_names=None):
        """The nodes added so far; ``output_names`` renames the last node's outputs.

        Returns:
            tuple of onnx.NodeProto, as a converter returns it.
        """
        if output_names is not None:
            last = self._nodes[-1]
            if len(last.output) != len(output_names):
                raise ValueError(
                    f"GraphBuilder.nodes: the last node has {len(last.output)} output(s), "
                    f"got {len(output_names)} names"
                )
            last.output[:] = output_names
        return tuple(self._nodes)


def write_tensor_pb(filename, name, value):
    """Write ``value`` to ``filename`` as one serialized TensorProto named ``name``."""
    with open(filename, "wb") as f:
        f.write(numpy_helper.from_array(value, name).SerializeToString())


def cleanse_param_name(name):
    """A parameter path as an identifier: ``/l/W`` becomes ``param_l_W``."""
    return "param" + name.replace("/", "_")


def is_support_non_standard_domain():
    """Whether onnx's checker skips the schema check of other domains (onnx 1.5 and later)."""
    major, _, rest = onnx.__version__.partition(".")
    minor = rest.split(".")[0]
    if not (major.isdecimal() and minor.isdecimal()):
        raise RuntimeError(
            f"onnx_helper: cannot read the major and minor version of onnx {onnx.__version__!r}"
        )
    return int(major) > 1 or int(minor) >= 5
