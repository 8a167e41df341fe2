"""The old-style ``Function`` (arrays in, arrays out), adapted onto FunctionNode.

Code written against Chainer's older API defines ``forward`` and ``backward``
on arrays (or their ``_cpu``/``_gpu`` variants). Such a function is first-order
only: its backward records no graph, so its gradients cannot be differentiated
again.
"""

import numpy

from dbr.core import backend
from dbr.core.function_node import FunctionNode
from dbr.core.variable import Variable, _OldStyleGradNode

_ndarray = numpy.ndarray


def _on_cpu(arrays):
    return all(a is None or isinstance(a, (_ndarray, numpy.generic)) for a in arrays)


class FunctionAdapter(FunctionNode):
    """The FunctionNode standing in the graph for an old-style :class:`Function`."""

    def __init__(self, function):
        self._function = function

    @property
    def function(self):
        """The adapted old-style Function."""
        return self._function

    @property
    def label(self):
        """The label of the adapted Function."""
        return self._function.label

    def _user_function(self):
        return self._function

    def check_type_forward(self, in_types):
        """Delegate to the Function's ``check_type_forward``."""
        self._function.check_type_forward(in_types)

    def forward(self, inputs):
        """Retain every input (old-style backward receives them all) and run the forward."""
        self.retain_inputs(range(len(inputs)))
        return self._function.forward(inputs)

    def backward(self, target_input_indexes, grad_outputs):
        """Call the Function's array backward and wrap the requested gradients."""
        in_data = tuple([x.data for x in self.inputs])
        gy_data = tuple([None if g is None else g._data for g in grad_outputs])
        gxs = self._function.backward(in_data, gy_data)
        if not isinstance(gxs, (tuple, list)) or len(gxs) != len(in_data):
            raise ValueError(
                f"{self.label}.backward must return a tuple of {len(in_data)} "
                f"gradients (one per input), got {gxs!r:.80}"
            )
        for i, (x, gx) in enumerate(zip(self.inputs, gxs)):
            if gx is not None:
                self._check_gradient(i, x, gx)
        return tuple([self._gradient(gxs[i]) for i in target_input_indexes])

    def _check_gradient(self, index, x, gx):
        # An array backward is user code with no type check of its own: check each
        # gradient against its input, as Chainer does, naming the function.
        who = f"{self.label}.backward (old-style Function {type(self._function).__name__})"
        if not isinstance(gx, backend.get_array_types()):
            raise TypeError(
                f"{who}: expected the gradient of input {index} to be an array "
                f"(numpy.ndarray or cupy.ndarray), got {type(gx).__name__}"
            )
        dtype, shape = x.dtype, x.shape
        if dtype is None:
            return
        if gx.dtype != dtype:
            raise TypeError(
                f"{who}: expected the gradient of input {index} to have the input's dtype "
                f"{dtype}, got {gx.dtype}"
            )
        if gx.shape != shape:
            raise ValueError(
                f"{who}: expected the gradient of input {index} to have the input's shape "
                f"{shape}, got {gx.shape}"
            )

    def _gradient(self, gx):
        # The gradient requires grad and its node says who made it, so that a
        # double backprop reaching it raises instead of taking it for a constant.
        if gx is None:
            return None
        var = Variable.from_array(gx, True)
        var._node = _OldStyleGradNode(var, self.label)
        return var


FunctionAdapter._checks_types = True


class Function:
    """Base class of old-style functions, defined by array ``forward`` and ``backward``.

    Override ``forward`` (or ``forward_cpu``/``forward_gpu``) returning a tuple of
    arrays, and ``backward(inputs, grad_outputs)`` (or its ``_cpu``/``_gpu``
    variants) returning one gradient array (or None) per input. Calling the
    function applies it: one output comes back as a Variable, several as a tuple.
    """

    _node = None
    _applied = False

    def __call__(self, *inputs):
        node = self._node
        if node is None or self._applied:
            node = self._node = FunctionAdapter(self)
        self._applied = True
        ret = node.apply(inputs)
        return ret[0] if len(ret) == 1 else ret

    @property
    def node(self):
        """The FunctionAdapter of the latest application (created on first access)."""
        if self._node is None:
            self._node = FunctionAdapter(self)
        return self._node

    @property
    def label(self):
        """A short name of the function (its class name by default)."""
        return type(self).__name__

    @property
    def inputs(self):
        """The input VariableNodes of the latest application."""
        return None if self._node is None else self._node.inputs

    @property
    def outputs(self):
        """Weak references to the output VariableNodes of the latest application."""
        return None if self._node is None else self._node.outputs

    @property
    def rank(self):
        """The topological rank of the latest application."""
        return 0 if self._node is None else self._node.rank

    @property
    def output_data(self):
        """The retained output arrays."""
        return self._node.output_data

    @property
    def local_function_hooks(self):
        """Hooks registered on this function only."""
        return self._node.local_function_hooks

    def add_hook(self, hook, name=None):
        """Register a hook on this function's node."""
        self._node.add_hook(hook, name)

    def delete_hook(self, name):
        """Unregister a hook from this function's node."""
        self._node.delete_hook(name)

    def check_type_forward(self, in_types):
        """Check input types with :mod:`dbr.core.type_check` (no-op by default)."""

    def forward(self, inputs):
        """Dispatch to ``forward_cpu`` or ``forward_gpu`` by the arrays' type."""
        if _on_cpu(inputs):
            return self.forward_cpu(inputs)
        return self.forward_gpu(inputs)

    def forward_cpu(self, inputs):
        """The forward on NumPy arrays."""
        raise NotImplementedError(f"{self.label} implements neither forward nor forward_cpu")

    def forward_gpu(self, inputs):
        """The forward on CuPy arrays."""
        raise NotImplementedError(f"{self.label} implements neither forward nor forward_gpu")

    def backward(self, inputs, grad_outputs):
        """Dispatch to ``backward_cpu`` or ``backward_gpu`` by the arrays' type."""
        if _on_cpu(inputs + grad_outputs):
            return self.backward_cpu(inputs, grad_outputs)
        return self.backward_gpu(inputs, grad_outputs)

    def backward_cpu(self, inputs, grad_outputs):
        """The backward on NumPy arrays (returns None gradients by default)."""
        return tuple(None for _ in inputs)

    def backward_gpu(self, inputs, grad_outputs):
        """The backward on CuPy arrays (returns None gradients by default)."""
        return tuple(None for _ in inputs)

    def retain_inputs(self, indexes):
        """Keep only the inputs at ``indexes`` for backward (call inside forward)."""
        self._node.retain_inputs(indexes)

    def retain_outputs(self, indexes, retain_after_backward=False):
        """Keep the outputs at ``indexes`` for backward, readable as ``output_data``."""
        self._node.retain_outputs(indexes)

    def unchain(self):
        """Detach the latest application from the graph."""
        if self._node is not None:
            self._node.unchain()
