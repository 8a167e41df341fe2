"""FunctionNode: one differentiable operation, recorded in the graph when applied."""

import traceback
import weakref

import numpy

from dbr.core import type_check
from dbr.core.configuration import config
from dbr.core.variable import Variable, VariableNode

_ndarray = numpy.ndarray
_new_variable = Variable.from_array
_new_object = object.__new__
_weakref = weakref.ref
_light_types = type_check.light_types


def _output_variable(creator, y, requires_grad, rank):
    # VariableNode's slots are set here without its __init__, on the hot path of every op;
    # test_function_node checks that they match the ones __init__ sets.
    var = _new_variable(y, requires_grad)
    node = _new_object(VariableNode)
    node._variable = _weakref(var)
    node.creator_node = creator
    node.rank = rank
    node.requires_grad = requires_grad
    node.data = None
    var._node = node
    return var


def _unrecorded_outputs(outputs, requires_grad):
    # Output Variables that no graph links to their creator. One and two outputs (most
    # gradient nodes) spelled out: a list comprehension costs as much as a Variable.
    n = len(outputs)
    if n == 1:
        return (_new_variable(outputs[0], requires_grad),)
    if n == 2:
        return (_new_variable(outputs[0], requires_grad), _new_variable(outputs[1], requires_grad))
    return tuple([_new_variable(y, requires_grad) for y in outputs])


class FunctionNode:
    """Base class of differentiable functions.

    A subclass implements ``forward(inputs)`` on arrays (or ``forward_cpu`` and
    ``forward_gpu`` when the two must differ) returning a tuple of arrays, and
    ``backward(target_input_indexes, grad_outputs)`` on Variables, built from
    other FunctionNodes so that it is itself differentiable. Inside ``forward``
    it calls ``retain_inputs``/``retain_outputs`` to keep exactly what backward
    needs. ``check_type_forward(in_types)`` validates the inputs with
    :mod:`dbr.core.type_check` before anything is computed.

    Users call :meth:`apply` (through a lowercase wrapper function), which runs
    the forward and, when backprop is enabled, links the outputs to the inputs.
    """

    __slots__ = ("inputs", "outputs", "rank", "__dict__")

    _input_indexes_to_retain = None
    _output_indexes_to_retain = None
    _retained_output_data = None
    _local_hooks = None
    stack = None
    # dbr's engine protocol for a node standing for a recorded subgraph (static_graph):
    # _backward_accumulate_in_place(indexes, gys, sums (a list it empties), owned)
    # -> (sums, owned).
    _accumulates_in_place = False
    # True where forward returns arrays it allocated (or views of them) and keeps no
    # reference to: a static graph's backward may then add later gradients into them.
    _new_outputs = False
    # A FunctionNode used as it is (its methods set on the instance, as Chainer's tests
    # do) always runs check_type_forward; a subclass only if it overrides it.
    _checks_types = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._checks_types = cls.check_type_forward is not FunctionNode.check_type_forward

    def __getattr__(self, name):
        # Subclasses need not call __init__: the graph slots read as unset until apply.
        if name in ("inputs", "outputs"):
            return None
        if name == "rank":
            return 0
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # -- metadata -------------------------------------------------------------
    @property
    def label(self):
        """A short name of the function (its class name by default)."""
        return type(self).__name__

    def _user_function(self):
        return self

    @property
    def output_data(self):
        """The retained output arrays (None for the ones not retained)."""
        if self._retained_output_data is None:
            raise RuntimeError(f"{self.label}: retain_outputs was not called in forward")
        data = self._retained_output_data
        if len(data) == 1 == len(self.outputs):
            return data  # the one output, retained
        ret = [None] * len(self.outputs)
        for index, array in zip(self._output_indexes_to_retain, data):
            ret[index] = array
        return tuple(ret)

    # -- application ----------------------------------------------------------
    def apply(self, inputs):
        """Run the forward on ``inputs`` (Variables or arrays) and return output Variables.

        When backprop is enabled the outputs are linked to this node, so that
        ``backward`` can reach the inputs through it.
        """
        cfg = config
        record = cfg.enable_backprop
        in_data = []
        nodes = []
        requires_grad = False
        rank = 0
        # One pass gathers the arrays and, when the graph is recorded, the input nodes.
        for x in inputs:
            if isinstance(x, Variable):
                if x._requires_grad:
                    requires_grad = True
                in_data.append(x._data)
            else:
                in_data.append(x)
                if not record:
                    continue
                x = _new_variable(x, False)
            if record:
                node = x._node
                if node is None:
                    node = x._node = VariableNode(x, x._requires_grad)
                elif node.rank > rank:
                    rank = node.rank
                nodes.append(node)
        in_data = tuple(in_data)

        if self._checks_types and cfg.type_check:
            try:
                self.check_type_forward(_light_types(in_data))
            except Exception:
                # A light check evaluates conditions eagerly, so a failing one may raise
                # something other than InvalidType; the full check names the cause.
                self._check_data_type_forward(in_data)
        hooks = cfg._function_hooks
        if self._local_hooks:
            hooks = {**hooks, **self._local_hooks}
        if hooks:
            for hook in hooks.values():
                hook.forward_preprocess(self, in_data)

        outputs = self.forward(in_data)
        if type(outputs) is not tuple:
            raise TypeError(
                f"{self.label}.forward must return a tuple of arrays, got {type(outputs).__name__}"
            )
        for y in outputs:
            if type(y) is not _ndarray:
                _check_output_arrays(self, outputs)
                break

        if hooks:
            for hook in hooks.values():
                hook.forward_postprocess(self, in_data)
                # Chainer's hooks need not subclass FunctionHook; dbr's callback is optional.
                see_outputs = getattr(hook, "forward_outputs", None)
                if see_outputs is not None:
                    see_outputs(self, in_data, outputs)
        if cfg.debug:
            self.stack = traceback.extract_stack()[:-1]
            _check_finite(self, outputs, "forward")

        if not record:
            return _unrecorded_outputs(outputs, requires_grad)

        self.rank = rank
        self.inputs = tuple(nodes)

        retain = self._input_indexes_to_retain
        if retain is not None:
            for index in retain:
                nodes[index].data = in_data[index]
        retain = self._output_indexes_to_retain
        if retain is not None:
            self._retained_output_data = (
                outputs
                if len(outputs) == 1 == len(retain)
                else tuple([outputs[i] for i in retain])
            )

        out_rank = rank + 1
        if len(outputs) == 1:
            var = _output_variable(self, outputs[0], requires_grad, out_rank)
            self.outputs = (_weakref(var._node),)
            return (var,)
        ret = [_output_variable(self, y, requires_grad, out_rank) for y in outputs]
        self.outputs = tuple([_weakref(var._node) for var in ret])
        return tuple(ret)

    def apply_in_backward(self, inputs):
        """Apply this node inside a ``backward``: :meth:`apply`'s outputs, with less work.

        When :meth:`backward_on_arrays` (nothing records the backward, watches
        it with a hook or checks it in debug mode) no graph would keep this node,
        so its ``forward`` runs on the arrays directly, with no type check (the
        arrays are a checked function's and their gradients), and the outputs
        are plain Variables; they require grad when an input does, as
        :meth:`apply` makes them. Otherwise this is :meth:`apply`. A
        ``backward`` built from such calls has one formula for both cases, and
        the same bits in both.

        Args:
            inputs: Variables (a retained input or output, an output gradient).

        Returns:
            tuple of Variable: the outputs.
        """
        cfg = config
        if cfg.enable_backprop or cfg._function_hooks or cfg.debug:  # not backward_on_arrays()
            return self.apply(inputs)
        requires_grad = False
        in_data = []
        for x in inputs:
            if x._requires_grad:
                requires_grad = True
            in_data.append(x._data)
        return _unrecorded_outputs(self.forward(tuple(in_data)), requires_grad)

    def apply_gradient(self, grad_node, grad_outputs):
        """Apply ``grad_node`` in this node's ``backward`` to its retained values and gradients.

        The inputs of ``grad_node`` are this node's retained inputs, then its
        retained outputs (each in the order retained), then ``grad_outputs``:
        ``grad_node.apply_in_backward((*self.get_retained_inputs(),
        *self.get_retained_outputs(), *grad_outputs))``, the same outputs with
        the same bits. When nothing records the backward the retained arrays go
        to ``grad_node.forward`` as they are, with no Variables built for them.

        Args:
            grad_node: a FunctionNode that computes gradients from those inputs.
            grad_outputs: the Variables given to ``backward``.

        Returns:
            tuple of Variable: the outputs of ``grad_node``.
        """
        cfg = config
        if cfg.enable_backprop or cfg._function_hooks or cfg.debug:  # not backward_on_arrays()
            retained = (*self.get_retained_inputs(), *self.get_retained_outputs())
            return grad_node.apply((*retained, *grad_outputs))
        requires_grad = False
        in_data = []
        indexes = self._input_indexes_to_retain
        if indexes is not None:
            inputs = self.inputs
            for index in indexes:
                node = inputs[index]
                if node.requires_grad:
                    requires_grad = True
                in_data.append(node.data)
        indexes = self._output_indexes_to_retain
        if indexes is not None:
            outputs = self.outputs
            for index in indexes:
                # A dropped output comes back from get_retained_outputs requiring grad.
                node = outputs[index]()
                if node is None or node.requires_grad:
                    requires_grad = True
            in_data.extend(self._retained_output_data)
        for gy in grad_outputs:
            if gy._requires_grad:
                requires_grad = True
            in_data.append(gy._data)
        return _unrecorded_outputs(grad_node.forward(tuple(in_data)), requires_grad)

    def _check_data_type_forward(self, in_data):
        """Run ``check_type_forward`` on expressions and raise its message on failure.

        An input that is not an array (nor None) is a TypeError naming it.
        """
        from dbr.core import backend

        array_types = (*backend.get_array_types(), numpy.generic)
        for i, x in enumerate(in_data):
            if x is not None and not isinstance(x, array_types):
                raise TypeError(
                    f"{self.label}: expected input {i} to be a Variable or an array "
                    f"(numpy.ndarray or cupy.ndarray), got {type(x).__name__}"
                )
        in_types = type_check.get_types(in_data, "in_types", False)
        try:
            with type_check.get_function_check_context(self):
                self.check_type_forward(in_types)
        except type_check.InvalidType as e:
            msg = f"Invalid operation is performed in: {describe(self)} (Forward)\n\n{e}"
            raise type_check.InvalidType(e.expect, e.actual, msg=msg) from None

    def check_type_forward(self, in_types):
        """Check the types of the inputs with :func:`dbr.core.type_check.expect` (no-op here)."""

    def forward(self, inputs):
        """Compute the outputs from the input arrays; return a tuple of arrays.

        The default dispatches to ``forward_cpu`` for NumPy inputs and to
        ``forward_gpu`` otherwise.
        """
        if all(x is None or isinstance(x, (_ndarray, numpy.generic)) for x in inputs):
            return self.forward_cpu(inputs)
        return self.forward_gpu(inputs)

    def forward_cpu(self, inputs):
        """The forward on NumPy arrays."""
        raise NotImplementedError(f"{self.label} implements neither forward nor forward_cpu")

    def forward_gpu(self, inputs):
        """The forward on CuPy arrays."""
        raise NotImplementedError(f"{self.label} implements neither forward nor forward_gpu")

    def retain_inputs(self, indexes):
        """Keep the inputs at ``indexes`` for backward (call inside forward)."""
        self._input_indexes_to_retain = tuple(indexes)

    def retain_outputs(self, indexes):
        """Keep the outputs at ``indexes`` for backward (call inside forward)."""
        self._output_indexes_to_retain = tuple(indexes)

    def get_retained_inputs(self):
        """Return the retained inputs as Variables linked to the graph.

        An input given as None (a gradient that was None, say) is None here,
        as in Chainer.
        """
        indexes = self._input_indexes_to_retain
        if indexes is None:
            return ()
        inputs = self.inputs
        ret = []
        for index in indexes:
            node = inputs[index]
            var = node._variable()
            if var is None:
                ret.append(None if node.data is None else node.get_variable())
            else:
                ret.append(None if var._data is None else var)
        return tuple(ret)

    @staticmethod
    def backward_is_recorded():
        """Whether the backward now running is itself recorded (``enable_double_backprop``).

        A ``backward`` with two ways to the same gradients, a fused pass on
        arrays and a recomputation from differentiable functions, takes the
        second only then, so that the gradients can be differentiated again.
        """
        return config.enable_backprop

    @staticmethod
    def backward_on_arrays():
        """Whether a ``backward`` may compute its gradients on plain arrays.

        True when backward records no graph (no ``enable_double_backprop``),
        no function hook is registered and debug mode is off: the FunctionNodes
        a backward would apply then leave no trace, so a backward may skip them
        and compute the same arrays directly (for inputs those nodes' type
        checks accept).
        """
        cfg = config
        return not cfg.enable_backprop and not cfg._function_hooks and not cfg.debug

    def retained_input_array(self, index):
        """The array of retained input ``index`` (its Variable's, while that is alive)."""
        node = self.inputs[index]
        var = node._variable()
        return node.data if var is None else var._data

    def get_retained_outputs(self):
        """Return the retained outputs as Variables linked to the graph."""
        indexes = self._output_indexes_to_retain
        if indexes is None:
            return ()
        ret = []
        outputs = self.outputs
        new_refs = None
        for index, data in zip(indexes, self._retained_output_data):
            node = outputs[index]()
            if node is None:
                var = _new_variable(data, True)
                node = VariableNode(var, True, self)
                var._node = node
                if new_refs is None:
                    new_refs = list(outputs)
                new_refs[index] = weakref.ref(node)
            else:
                if node.data is None:
                    node.data = data
                var = node._variable()
                if var is None:
                    var = node.get_variable()
            ret.append(var)
        if new_refs is not None:
            self.outputs = tuple(new_refs)
        return tuple(ret)

    # -- backward -------------------------------------------------------------
    def backward(self, target_input_indexes, grad_outputs):
        """Return the gradients of the inputs at ``target_input_indexes``.

        Args:
            target_input_indexes: sorted indexes of the inputs that need gradients.
            grad_outputs: one Variable (or None, meaning zero) per output.

        Returns:
            A tuple of Variables (or None) either one per target index or one
            per input. Built from other FunctionNodes, so that it is itself
            differentiable.
        """
        raise NotImplementedError(f"{self.label} does not implement backward")

    def backward_accumulate(self, target_input_indexes, grad_outputs, grad_inputs):
        """Return gradients of the targets added to ``grad_inputs`` (their current values).

        Override for a fused accumulation; the default calls :meth:`backward`.
        """
        gxs = self.backward(target_input_indexes, grad_outputs)
        if len(gxs) == len(self.inputs) != len(target_input_indexes):
            gxs = tuple([gxs[i] for i in target_input_indexes])
        ret = []
        for gx, g_input in zip(gxs, grad_inputs):
            if gx is None:
                ret.append(g_input)
            elif g_input is None:
                ret.append(gx)
            else:
                ret.append(gx + g_input)
        return tuple(ret)

    def unchain(self):
        """Detach this node from its inputs and outputs (cutting the graph here)."""
        for ref in self.outputs or ():
            node = ref()
            if node is not None:
                node.unchain()
        self.inputs = None

    # -- hooks ----------------------------------------------------------------
    @property
    def local_function_hooks(self):
        """The hooks registered on this node only (name → FunctionHook)."""
        if self._local_hooks is None:
            self._local_hooks = {}
        return self._local_hooks

    def add_hook(self, hook, name=None):
        """Register a FunctionHook on this node only."""
        name = hook.name if name is None else name
        hooks = self.local_function_hooks
        if name in hooks:
            raise KeyError(f"{self.label}: a hook named {name!r} is already registered")
        hooks[name] = hook
        hook.added(self)

    def delete_hook(self, name):
        """Unregister the node-local hook called ``name``."""
        hooks = self.local_function_hooks
        if name not in hooks:
            raise KeyError(f"{self.label}: no hook named {name!r} is registered")
        hooks.pop(name).deleted(self)

    def __repr__(self):
        return f"<{self.label} rank={self.rank}>"


def describe(func):
    """The function as errors name it: its label, and its class where the label differs.

    Chainer's labels of the operators (``_ + _``) do not say which class ran.
    """
    label = func.label
    name = type(func._user_function()).__name__
    return label if label == name else f"{label} ({name})"


def _check_output_arrays(func, outputs):
    from dbr.core import backend

    accepted = (*backend.get_array_types(), numpy.generic)
    for i, y in enumerate(outputs):
        if not isinstance(y, accepted):
            raise TypeError(
                f"{describe(func)}: forward output must be a tuple of ndarrays (numpy.ndarray or "
                f"cupy.ndarray), got {type(y).__name__} as output {i}"
            )


def _check_finite(func, arrays, phase):
    for i, a in enumerate(arrays):
        if a is None or a.dtype.kind not in "fc":
            continue
        xp = numpy if type(a) is _ndarray else _xp(a)
        if not bool(xp.isfinite(a).all()):
            kind = "NaN" if bool(xp.isnan(a).any()) else "Inf"
            raise RuntimeError(
                f"{kind} is detected on {phase} computation of {describe(func)} (output {i}).\n"
                f"{func.label} was called at:\n{format_call_site(func)}"
            )


def _xp(a):
    from dbr.core import backend

    return backend.get_array_module(a)


def format_call_site(func):
    """Return the user-code lines where ``func`` was applied (recorded in debug mode)."""
    stack = func.stack
    if not stack:
        return "  (unknown: the function was applied outside debug mode)"
    user = [f for f in stack if "/dbr/core/" not in f.filename.replace("\\", "/")]
    frames = user[-3:] if user else stack[-3:]
    return "".join(traceback.format_list(frames))
