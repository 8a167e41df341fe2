"""Variable, Parameter and the graph node that stands in for a Variable.

A :class:`Variable` holds an array and its gradient. When it takes part in a
recorded computation it gets a :class:`VariableNode`: the small object the
graph keeps. The node refers to its Variable weakly and holds the array only
when a function retained it for backward, so intermediate arrays are freed as
soon as user code drops their Variables, while the graph lives on.
"""

import copy
import warnings
import weakref

import numpy

from dbr.core import backend
from dbr.core.configuration import config

_ndarray = numpy.ndarray


class VariableNode:
    """The node of a Variable in the computational graph.

    Attributes:
        creator_node: the FunctionNode that produced the Variable, or None for a leaf.
        rank: 0 for a leaf, else ``creator_node.rank + 1``; backward runs in
            decreasing rank order.
        requires_grad: whether gradients flow to this node.
        data: the array, kept only when a function retained it for backward.
    """

    __slots__ = ("_variable", "creator_node", "rank", "requires_grad", "data", "__weakref__")

    def __init__(self, variable, requires_grad=True, creator_node=None, **kwargs):
        if kwargs:
            _reject_kwargs("VariableNode", kwargs)
        self._variable = weakref.ref(variable)
        self.creator_node = creator_node
        self.rank = 0 if creator_node is None else creator_node.rank + 1
        self.requires_grad = requires_grad
        self.data = None

    # Chainer's private names for the rank and the flag, which its own code and tests set.
    @property
    def _rank(self):
        return self.rank

    @_rank.setter
    def _rank(self, rank):
        self.rank = rank

    @property
    def _requires_grad(self):
        return self.requires_grad

    @_requires_grad.setter
    def _requires_grad(self, flag):
        self.requires_grad = flag

    @property
    def creator(self):
        """The function that produced this node (old-style Functions unwrapped)."""
        node = self.creator_node
        return None if node is None else node._user_function()

    @creator.setter
    def creator(self, func):
        self.set_creator_node(func)

    def set_creator(self, func):
        """Set the creator (a FunctionNode or an old-style Function)."""
        self.set_creator_node(func)

    def set_creator_node(self, func):
        """Set the creator FunctionNode (an old-style Function stands for its node).

        The rank becomes the creator's plus one; with None the node keeps its
        rank, as in Chainer.
        """
        func = _as_function_node(func)
        self.creator_node = func
        if func is not None:
            self.rank = func.rank + 1

    def get_variable_or_none(self):
        """Return the Variable of this node if it is still alive, else None."""
        return self._variable()

    def get_variable(self):
        """Return the Variable of this node, recreating one from retained data if needed."""
        var = self._variable()
        if var is not None:
            return var
        var = Variable.from_array(self.data, self.requires_grad)
        var._node = self
        self._variable = weakref.ref(var)
        return var

    def retain_data(self):
        """Keep the Variable's array in this node so that backward can read it."""
        var = self._variable()
        if var is None:
            raise RuntimeError("cannot retain the data of a node whose Variable is gone")
        self.data = var._data

    @property
    def name(self):
        """The name of the Variable, if it is alive and has one."""
        var = self._variable()
        return None if var is None else var.name

    @property
    def shape(self):
        """The shape of the array, if the Variable is alive or its data retained."""
        data = self._array()
        return None if data is None else data.shape

    @property
    def dtype(self):
        """The dtype of the array, if the Variable is alive or its data retained."""
        data = self._array()
        return None if data is None else data.dtype

    def _array(self):
        var = self._variable()
        return self.data if var is None else var._data

    @property
    def label(self):
        """A short text naming the shape and dtype, for graph drawings."""
        shape, dtype = self.shape, self.dtype
        if shape is None:
            return "(unknown)"
        if shape == ():
            return str(dtype)
        return f"({', '.join(map(str, shape))}), {dtype}"

    def unchain(self):
        """Cut the link to the creator (the node keeps its rank, as in Chainer)."""
        self.creator_node = None

    def _check_old_style_gradient(self):
        """Raise if this node is a gradient made by an old-style Function (see below)."""


class _OldStyleGradNode(VariableNode):
    """The node of a gradient computed by an old-style Function's array backward.

    Such a gradient has no creator to differentiate through, so backprop that
    reaches it raises instead of silently treating it as a constant.
    """

    __slots__ = ("generator",)

    def __init__(self, variable, generator):
        super().__init__(variable, True)
        self.generator = generator

    def _check_old_style_gradient(self):
        raise RuntimeError(
            f"cannot twice-differentiate an old style Function {self.generator!r}: its "
            "backward works on arrays and records no graph"
        )


def _as_function_node(func):
    # An old-style Function stands in the graph for its FunctionAdapter node.
    if func is None:
        return None
    node = getattr(func, "node", None)
    return func if node is None or isinstance(func, _function_node_type()) else node


def _function_node_type():
    from dbr.core.function_node import FunctionNode

    return FunctionNode


def _reject_kwargs(who, kwargs):
    if "grad" in kwargs:
        raise ValueError(
            f"{who}: unexpected keyword argument 'grad': pass the gradient to the Variable instead"
        )
    raise TypeError(f"{who}: unexpected keyword arguments {sorted(kwargs)}")


_ARRAY_KINDS = frozenset("biufc")


def _check_array(data, who):
    if data is None:
        return
    if type(data) is not _ndarray and (
        not isinstance(data, backend.get_array_types()) and backend.get_array_module(data) is numpy
    ):
        raise TypeError(
            f"{who}: expected data to be numpy.ndarray or cupy.ndarray (or None), "
            f"got {type(data).__module__}.{type(data).__qualname__}"
        )
    if data.dtype.kind not in _ARRAY_KINDS:
        raise TypeError(
            f"{who}: expected an array of a bool or numeric dtype, got an array of dtype "
            f"{data.dtype}"
        )


class Variable:
    """An array with a gradient, recorded in the graph when functions apply to it.

    Args:
        data: a NumPy or CuPy array (or None, to be set later).
        name: an optional name, shown in graph drawings and summaries.
        grad: an optional initial gradient array of the same shape and dtype.
        requires_grad: whether backward computes a gradient for this Variable.

    Operators ``+ - * / ** @``, unary ``-``, ``abs()`` and ``[...]``, and ``T``,
    ``reshape`` and ``transpose``, apply the corresponding differentiable
    functions of :mod:`dbr.core.ops` (which installs them) and broadcast like NumPy;
    ``//`` gives a Variable that is not differentiable, as in Chainer.
    ``backward`` is bound by the backprop engine, ``dbr.core._backprop``.

    As in Chainer, a Variable is not hashable and ``== != < <= > >=`` and
    ``bool()`` raise TypeError (compare ``v.array``); ``backward`` uses up the
    output's gradient unless ``retain_grad``.
    """

    __slots__ = (
        "_data",
        "_grad_var",
        "_node",
        "_requires_grad",
        "name",
        "_loss_scale",
        "__weakref__",
    )

    __array_priority__ = 200

    # dbr has no ChainerX: no Variable holds a ChainerX array (Chainer's flag, always False).
    _has_chainerx_array = False

    def __init__(self, data=None, *, name=None, grad=None, requires_grad=True):
        _check_array(data, "Variable")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Variable: expected name to be a str or None, got {type(name)}")
        self._data = data
        self._requires_grad = requires_grad
        # A Variable that user code makes gets its node at once, as in Chainer (functions'
        # outputs and gradients are made by from_array, which leaves it to first use).
        self._node = VariableNode(self, requires_grad)
        self.name = name
        self._loss_scale = None
        self._grad_var = None
        if grad is not None:
            self.grad = grad

    @classmethod
    def from_array(cls, data, requires_grad=True):
        """Wrap ``data`` in a new Variable without checking it (the hot path of functions).

        For code that already holds a valid NumPy or CuPy array (or None), such
        as a ``backward`` wrapping a gradient it computed; use the constructor
        for anything else.

        Args:
            data: a NumPy or CuPy array of a bool or numeric dtype, or None.
            requires_grad: whether backward computes a gradient for it.

        Returns:
            Variable: a leaf with no name and no gradient, sharing ``data``.
        """
        var = object.__new__(cls)
        var._data = data
        var._grad_var = None
        var._node = None
        var._requires_grad = requires_grad
        var.name = None
        var._loss_scale = None
        return var

    @staticmethod
    def _init_unchecked(
        data=None,
        device=None,
        name=None,
        grad=None,
        grad_valid=True,
        requires_grad=True,
        is_chainerx_array=None,
        node=None,
        layout=None,
    ):
        """Chainer's unchecked constructor: a Variable of ``data`` with no validation.

        ``device``, ``grad_valid``, ``is_chainerx_array`` and ``layout`` are
        accepted for Chainer's callers and ignored (dbr has neither ChainerX nor
        memory layouts). ``node``, if given, becomes the Variable's node.
        """
        var = Variable.from_array(data, requires_grad)
        var.name = name
        if grad is not None:
            var._grad_var = Variable.from_array(grad, False)
        if node is not None:
            var._node = node
            if node._variable() is None:
                node._variable = weakref.ref(var)
        return var

    # -- array and gradient -------------------------------------------------
    @property
    def array(self):
        """The underlying array (``data`` is an alias)."""
        return self._data

    @array.setter
    def array(self, data):
        _check_array(data, "Variable.array")
        self._data = data
        node = self._node
        if node is not None and node.data is not None:
            node.data = data

    data = array

    @property
    def grad_var(self):
        """The gradient as a Variable (None until backward sets it)."""
        return self._grad_var

    @grad_var.setter
    def grad_var(self, g):
        if g is not None and not isinstance(g, Variable):
            raise TypeError(f"Variable.grad_var: expected a Variable or None, got {type(g)}")
        self._grad_var = g

    @property
    def grad(self):
        """The gradient array (None until backward sets it).

        Setting an array makes ``grad_var`` a new Variable that requires grad,
        as in Chainer, so that a double backprop reaches it.
        """
        g = self._grad_var
        return None if g is None else g._data

    @grad.setter
    def grad(self, g):
        if g is None:
            self._grad_var = None
            return
        _check_array(g, "Variable.grad")
        data = self._data
        if data is not None:
            if g.dtype != data.dtype:
                raise TypeError(
                    f"Variable.grad: expected an array of dtype {data.dtype} (the data's), "
                    f"got dtype {g.dtype}"
                )
            if g.shape != data.shape:
                raise ValueError(
                    f"Variable.grad: expected an array of shape {data.shape} (the data's), "
                    f"got shape {g.shape}"
                )
        self._grad_var = Variable.from_array(g)

    @property
    def _grad(self):
        # Chainer's private name of the gradient array.
        g = self._grad_var
        return None if g is None else g._data

    def cleargrad(self):
        """Set the gradient to None (gradients otherwise accumulate over backward calls)."""
        self._grad_var = None

    @property
    def loss_scale(self):
        """The ``loss_scale`` of the last backward that gave this leaf a gradient, or None.

        An optimizer divides the gradient by it before updating (mixed precision).
        """
        return self._loss_scale

    def zerograd(self):
        """Set the gradient to an array of zeros (deprecated, as in Chainer: use cleargrad).

        An existing gradient array is filled with zeros in place and its
        Variable is cut from the graph that produced it.
        """
        warnings.warn(
            "Variable.zerograd is deprecated. Use Variable.cleargrad instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        self._zerograd()

    def _zerograd(self):
        data = self._data
        if data is None:
            return
        g = self._grad_var
        if g is None or g._data is None:
            self._grad_var = Variable.from_array(self.xp.zeros_like(data), False)
            return
        if not getattr(g._data.flags, "writeable", True):
            self._grad_var = Variable.from_array(self.xp.zeros_like(data), False)
            return
        g.unchain()
        g._data.fill(0)

    def addgrad(self, var):
        """Add ``var``'s gradient to this Variable's gradient (copying across devices)."""
        src = var.grad
        if src is None:
            return
        if self._data is None and isinstance(self, Parameter):
            self.initialize(var.shape)
        dst_device = self.device
        src = dst_device.send(src)
        if self._grad_var is None:
            self._grad_var = Variable.from_array(src.copy(), False)
        else:
            self._grad_var = Variable.from_array(self._grad_var._data + src, False)

    def copydata(self, var):
        """Copy ``var``'s array into this Variable's array in place (across devices).

        If either side is an uninitialized Parameter it is first initialized
        with the other's shape.
        """
        src = var._data if isinstance(var, Variable) else var
        if src is None:
            if self._data is None:
                return
            var.initialize(self._data.shape)
            src = var._data
        if self._data is None:
            if isinstance(self, Parameter):
                self.initialize(src.shape)
            else:
                self._data = self.device.send(src).copy()
                return
        backend.copyto(self._data, src)

    # -- graph ----------------------------------------------------------------
    @property
    def node(self):
        """The VariableNode representing this Variable in the graph (created on demand)."""
        node = self._node
        if node is None:
            node = self._node = VariableNode(self, self._requires_grad)
        return node

    @property
    def creator_node(self):
        """The FunctionNode that created this Variable, or None."""
        node = self._node
        return None if node is None else node.creator_node

    @creator_node.setter
    def creator_node(self, func):
        self.node.set_creator_node(func)

    @property
    def creator(self):
        """The function that created this Variable (old-style Functions unwrapped), or None."""
        node = self._node
        return None if node is None else node.creator

    @creator.setter
    def creator(self, func):
        self.node.set_creator_node(func)

    def set_creator(self, func):
        """Set the creator function (old-style name)."""
        self.creator = func

    def set_creator_node(self, func):
        """Set the creator FunctionNode."""
        self.creator_node = func

    @property
    def rank(self):
        """The topological rank of this Variable in the graph."""
        node = self._node
        return 0 if node is None else node.rank

    @property
    def requires_grad(self):
        """Whether backward computes a gradient for this Variable."""
        return self._requires_grad

    def retain_data(self):
        """Keep the array in the graph node even after this Variable is gone."""
        self.node.data = self._data

    def unchain(self):
        """Cut the link to the creator: this Variable becomes a leaf of its own graph."""
        node = self._node
        if node is not None:
            node.unchain()

    def unchain_backward(self):
        """Cut every link behind this Variable, so the graph above it can be freed."""
        node = self._node
        if node is None:
            return
        stack = [node.creator_node]
        seen = set()
        while stack:
            func = stack.pop()
            if func is None or id(func) in seen:
                continue
            seen.add(id(func))
            for x in func.inputs:
                stack.append(x.creator_node)
                x.unchain()
            # A node standing for a recorded subgraph (a static_graph replay) cuts it too.
            cut = getattr(func, "cut_inner_graph", None)
            if cut is not None:
                cut()
        node.unchain()

    # -- device ---------------------------------------------------------------
    @property
    def xp(self):
        """The array module (numpy or cupy) of the array."""
        data = self._data
        return numpy if data is None or type(data) is _ndarray else backend.get_array_module(data)

    @property
    def device(self):
        """The Device on which the array lives."""
        return backend.get_device_from_array(self._data)

    def to_device(self, device):
        """Move the array and the gradient to ``device`` (e.g. '@numpy', '@cupy:0')."""
        device = backend.get_device(device)
        if self._data is not None:
            self._data = device.send(self._data)
            node = self._node
            if node is not None and node.data is not None:
                node.data = self._data
        if self._grad_var is not None:
            self._grad_var._data = device.send(self._grad_var._data)
        return self

    def to_cpu(self):
        """Move the array and the gradient to the CPU."""
        return self.to_device(backend.cpu)

    def to_gpu(self, device=None):
        """Move the array and the gradient to GPU ``device`` (current GPU if None)."""
        return self.to_device(f"@cupy:{0 if device is None else int(device)}")

    # -- array-like attributes -----------------------------------------------
    @property
    def shape(self):
        """The shape of the array."""
        return self._data.shape

    @property
    def ndim(self):
        """The number of dimensions of the array."""
        return self._data.ndim

    @property
    def size(self):
        """The number of elements of the array."""
        return self._data.size

    @property
    def dtype(self):
        """The dtype of the array."""
        return self._data.dtype

    def __len__(self):
        return len(self._data)

    def __pos__(self):
        """``+v`` is ``v`` itself, as in Chainer (no node is recorded)."""
        return self

    def item(self):
        """The single element of the array as a Python scalar."""
        return self._data.item()

    @property
    def label(self):
        """A short text naming the shape and dtype."""
        return self.node.label

    def summary(self):
        """A short description: ``<variable NAME>`` or ``<variable at 0x...>``."""
        if self.name:
            return f"<variable {self.name}>"
        return f"<variable at 0x{id(self):x}>"

    @property
    def _debug_device(self):
        # What debug_print names as the device: Chainer's text, ``CPU`` for a NumPy array.
        data = self._data
        return "CPU" if isinstance(data, _ndarray) else getattr(data, "device", "CPU")

    def debug_print(self):
        """A multi-line description: device, backend, shape, dtype, statistics of data and grad."""
        data = self._data
        stats = "mean={:.8f}, std={:.8f}"
        if data is None:
            device = backend_name = stats_text = None
        else:
            xp = self.xp
            device = self._debug_device
            backend_name = type(data)
            stats_text = stats.format(float(xp.mean(data)), float(xp.std(data)))
        g = self.grad
        if g is None:
            grad_text = None
        elif not bool((g == 0).all()):
            xp = self.xp
            grad_text = stats.format(float(xp.mean(g)), float(xp.std(g)))
        else:
            grad_text = 0
        return (
            f"{self.summary()}\n- device: {device}\n- backend: {backend_name}\n"
            f"- shape: {getattr(data, 'shape', None)}\n- dtype: {getattr(data, 'dtype', None)}\n"
            f"- statistics: {stats_text}\n- grad: {grad_text}"
        )

    def _format(self, separator):
        prefix = f"variable {self.name}" if self.name else "variable"
        data = self._data
        if data is None:
            body = "None"
        else:
            data = backend.to_cpu(data)
            # repr names the shape of an empty array other than (0,); str does not.
            if data.size > 0 or data.shape == (0,) or separator == " ":
                body = numpy.array2string(data, separator=separator, prefix=prefix + "(")
            else:
                body = f"[], shape={data.shape!r}"
        return f"{prefix}({body})"

    def __repr__(self):
        return self._format(", ")

    def __str__(self):
        return self._format(" ")

    def __bool__(self):
        raise TypeError(
            "Variables cannot be evaluated as Python bool (the truth value of a Variable is "
            "ambiguous); use bool(v.array.all()) or v.array.any()"
        )

    def __eq__(self, other):
        _error_comparison("==")

    def __ne__(self, other):
        _error_comparison("!=")

    def __lt__(self, other):
        _error_comparison("<")

    def __le__(self, other):
        _error_comparison("<=")

    def __gt__(self, other):
        _error_comparison(">")

    def __ge__(self, other):
        _error_comparison(">=")

    # Unhashable, as in Chainer (``==`` is not an equality): key dicts by id(v) or v.node.
    __hash__ = None

    def __copy__(self):
        return _copy_slots(self, None)

    def __deepcopy__(self, memo):
        return _copy_slots(self, memo)

    def __getstate__(self):
        # The graph node is left out (it refers to its Variable weakly, and a
        # pickle carries no graph): an unpickled Variable is a leaf, as a copy is.
        slots = {}
        for cls in type(self).__mro__:
            for slot in cls.__dict__.get("__slots__", ()):
                if slot not in ("__weakref__", "_node") and hasattr(self, slot):
                    slots[slot] = getattr(self, slot)
        return getattr(self, "__dict__", None), slots

    def __setstate__(self, state):
        attrs, slots = state
        self._node = None
        for slot, value in slots.items():
            setattr(self, slot, value)
        if attrs:
            self.__dict__.update(attrs)


def _error_comparison(op):
    raise TypeError(
        f"Variables do not support the {op} operator; compare their arrays (v.array) instead"
    )


def _copy_slots(var, memo):
    """Copy a Variable as a new leaf (shallow: sharing arrays; deep: copying them)."""
    new = object.__new__(type(var))
    for cls in type(var).__mro__:
        for slot in cls.__dict__.get("__slots__", ()):
            if slot == "__weakref__" or not hasattr(var, slot):
                continue
            value = getattr(var, slot)
            if slot == "_node":
                continue
            if memo is not None:
                value = copy.deepcopy(value, memo)
            setattr(new, slot, value)
    new._node = VariableNode(new, new._requires_grad)
    return new


class Parameter(Variable):
    """A Variable owned by a Link and updated by an optimizer.

    Args:
        initializer: an initializer (callable filling an array), a scalar, an
            array (used as the data), or None (NaN-filled, Chainer's default).
        shape: the shape; if None the Parameter stays uninitialized until
            :meth:`initialize` is called with the shape (lazy initialisation).
        name: an optional name.

    Until initialised, ``array`` is None and ``dtype`` is the initializer's
    (a RuntimeError if it names none). Reading ``grad`` of a Parameter created
    uninitialized raises a RuntimeError until ``cleargrad``, ``zerograd``,
    setting ``grad`` or ``initialize``, as in Chainer: the gradient of a
    parameter that was never cleared is not a valid zero. ``update_rule`` is
    set by an optimizer.
    """

    __slots__ = (
        "initializer",
        "update_rule",
        "_grad_initializer",
        "_initial_device",
        "_grad_valid",
    )

    def __init__(self, initializer=None, shape=None, name=None):
        from dbr.core import initializers

        self._initial_device = None
        self._grad_valid = True
        if initializer is None:
            initializer = initializers.NaN()
        elif numpy.isscalar(initializer):
            initializer = initializers.Constant(initializer)
        self.update_rule = None
        if shape is None:
            if isinstance(initializer, backend.get_array_types()):
                super().__init__(initializer, name=name)
                self.initializer = initializers.Constant(initializer)
                self._grad_initializer = None
                self._grad_var = None
                return
            super().__init__(name=name)
            self.initializer = initializer
            self._grad_initializer = initializers.NaN(getattr(initializer, "dtype", None))
            self._grad_valid = False
            return
        if isinstance(initializer, backend.get_array_types()):
            xp = backend.get_array_module(initializer)
            initializer = initializers.Constant(initializer)
        else:
            xp = numpy
        data = initializers.generate_array(initializer, shape, xp)
        super().__init__(data, name=name)
        self.initializer = initializer
        self._grad_initializer = None
        self._grad_var = Variable.from_array(xp.full_like(data, numpy.nan), False)

    @property
    def is_initialized(self):
        """Whether the array has been created."""
        return self._data is not None

    @property
    def dtype(self):
        """The dtype of the array, or, uninitialized, the one it will have.

        That is the initializer's ``dtype``, or ``config.dtype`` where the
        initializer's ``dtype`` is None (dbr's initializers without one).

        Raises:
            RuntimeError: uninitialized, with an initializer that has no ``dtype``
                attribute at all (a plain callable), as in Chainer.
        """
        if self._data is not None:
            return self._data.dtype
        initializer = self.initializer
        if not hasattr(initializer, "dtype"):
            raise RuntimeError(
                "Parameter.dtype: the dtype of an uninitialized parameter is not determined "
                f"yet: its initializer {type(initializer).__name__} has no dtype attribute"
            )
        dtype = initializer.dtype
        return numpy.dtype(dtype if dtype is not None else config.dtype)

    @property
    def grad(self):
        """The gradient array (None until backward sets it; see the class docstring)."""
        if not self._grad_valid:
            raise RuntimeError(
                "Parameter.grad: cannot read the gradient of a parameter created "
                "uninitialized: set it, or call cleargrad() or zerograd(), first"
            )
        g = self._grad_var
        return None if g is None else g._data

    @grad.setter
    def grad(self, g):
        Variable.grad.fset(self, g)
        self._grad_valid = True

    def initialize(self, shape, device=None):
        """Create the array of ``shape`` with the initializer (lazy initialisation).

        The array is made on ``device``, else on the device the Parameter was
        moved to while uninitialized, else on the CPU.
        """
        from dbr.core import initializers

        if device is None:
            device = self._initial_device
        xp = numpy if device is None else backend.get_device(device).xp
        self._initialize_with(
            initializers.generate_array(self.initializer, shape, xp, device=device), device
        )

    def _initialize_with(self, data, device=None):
        # initialize() after its initializer has filled ``data``: loading a lazy
        # parameter fills and checks the array before it changes anything.
        from dbr.core import initializers

        if device is None:
            device = self._initial_device
        ginit = self._grad_initializer
        grad = (
            None
            if ginit is None
            else initializers.generate_array(
                ginit, data.shape, backend.get_array_module(data), dtype=data.dtype, device=device
            )
        )
        self._data = data
        self._grad_var = None if grad is None else Variable.from_array(grad, False)
        self._grad_valid = True

    def to_device(self, device):
        """Move the array and gradient to ``device``; an uninitialized one remembers it."""
        if self._data is None:
            self._initial_device = backend.get_device(device)
            return self
        return super().to_device(device)

    @property
    def device(self):
        """The Device of the array (or, uninitialized, the one it will be created on)."""
        if self._data is None and self._initial_device is not None:
            return self._initial_device
        return backend.get_device_from_array(self._data)

    def cleargrad(self):
        """Set the gradient to None (also for an uninitialized Parameter)."""
        super().cleargrad()
        self._grad_valid = True
        if self._data is None:
            self._grad_initializer = None

    def _zerograd(self):
        from dbr.core import initializers

        super()._zerograd()
        self._grad_valid = True
        if self._data is None:
            self._grad_initializer = initializers.Zero(getattr(self.initializer, "dtype", None))

    def update(self):
        """Update the array with its update rule (set by an optimizer)."""
        if self.update_rule is not None:
            self.update_rule.update(self)


def as_variable(obj):
    """Return ``obj`` if it is a Variable, else a Variable wrapping it with requires_grad=False."""
    if isinstance(obj, Variable):
        return obj
    return Variable(obj, requires_grad=False)


def as_array(obj):
    """Return the array of a Variable, or ``obj`` itself if it is an array."""
    if isinstance(obj, Variable):
        return obj._data
    return obj
