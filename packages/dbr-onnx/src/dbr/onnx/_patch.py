"""Make the functions that build no graph node (sign, floor, ceil, fix) record one during export.

``F.sign`` and the rounding functions return a new Variable with no creator,
as in Chainer, so a forward that uses them leaves no trace of them in the
graph, and export would fold their result on the example input into a
constant. While :func:`dbr.onnx.export` runs the forward, the names in
``dbr.functions`` are bound to wrappers that apply a
:class:`NonDifferentiableFunction` node instead, which the converters map to
ONNX's Sign, Floor and Ceil. The originals are restored when the forward
returns (the module is shared by every thread of the process).
"""

import contextlib

import dbr.functions
from dbr.core import FunctionNode, Variable

# name in dbr.functions -> the label of the node recorded in its place
PATCHED_FUNCTIONS = {"sign": "Sign", "floor": "Floor", "ceil": "Ceil", "fix": "Fix"}


class NonDifferentiableFunction(FunctionNode):
    """One call of a function without a gradient, recorded as a graph node labelled ``name``.

    Args:
        function (callable): the original function, taking an array and
            returning a Variable of the same shape and dtype.
        name (str): the node's label (the key of its converter).
    """

    def __init__(self, function, name):
        self.function = function
        self.name = name

    @property
    def label(self):
        """The name of the ONNX operator family: ``Sign``, ``Floor``, ``Ceil`` or ``Fix``."""
        return self.name

    def forward(self, inputs):
        return (self.function(inputs[0]).array,)

    def backward(self, target_input_indexes, grad_outputs):
        return (None,) * len(target_input_indexes)


def _recording(function, name):
    def wrapper(x):
        if not isinstance(x, Variable):
            return function(x)
        return NonDifferentiableFunction(function, name).apply((x,))[0]

    wrapper.__name__ = function.__name__
    wrapper.__doc__ = function.__doc__
    return wrapper


@contextlib.contextmanager
def recording_functions():
    """In the block, ``dbr.functions.sign`` (floor, ceil, fix) record a node on a Variable."""
    originals = {name: getattr(dbr.functions, name) for name in PATCHED_FUNCTIONS}
    try:
        for name, label in PATCHED_FUNCTIONS.items():
            setattr(dbr.functions, name, _recording(originals[name], label))
        yield
    finally:
        for name, function in originals.items():
            setattr(dbr.functions, name, function)
