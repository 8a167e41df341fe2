"""Turn a user function into one FunctionNode, so that it exports as a single custom ONNX node.

A model may call a function that has no ONNX equivalent as a composition
(or whose composition should be replaced by an operator of a custom domain).
Wrapped with :func:`as_funcnode`, each call appears in the recorded graph as
one node whose ``label`` is the given name; an ``external_converters`` entry
under that name turns it into ONNX nodes. Non-Variable arguments become
attributes of the node, so the converter can read them from ``params.func``.
"""

import inspect

from dbr.core import FunctionNode, Variable, grad


class WrappedFunctionNode(FunctionNode):
    """One call of a wrapped user function, standing in the graph as a single node.

    Args:
        name (str): the node's label (the key of its converter).
        func (callable): the user function.
        args, kwargs: the arguments of the call.
        arg_vars (list of Variable): the Variables among them, in order; they
            are the node's inputs.
        attributes (dict): the other arguments, set as attributes of the node.
    """

    def __init__(self, name, func, args, kwargs, arg_vars, attributes=None):
        self.custom_function_node_name = name
        self.func = func
        self.args = args
        self.kwargs = kwargs
        self.arg_vars = arg_vars
        self._results = None
        self._structure = None
        for key, value in (attributes or {}).items():
            setattr(self, key, value)

    @property
    def label(self):
        """The name given to :func:`as_funcnode`."""
        return self.custom_function_node_name

    def forward(self, inputs):
        results = self.func(*self.args, **self.kwargs)
        self._structure, flat = _flatten_results(results)
        arrays = []
        for r in flat:
            value = r.array if isinstance(r, Variable) else r
            if isinstance(value, (list, tuple, dict)) or not hasattr(value, "shape"):
                raise ValueError(
                    f"{self.label}: a function wrapped by as_funcnode must return arrays or "
                    f"Variables (possibly in tuples, lists or dicts), got {type(r).__name__}"
                )
            arrays.append(value)
        if all(isinstance(r, Variable) for r in flat):
            self._results = flat
        return tuple(arrays)

    def backward(self, target_input_indexes, grad_outputs):
        if self._results is None:
            raise ValueError(
                f"{self.label}: the wrapped function returned arrays, so it has no gradient"
            )
        pairs = [(y, g) for y, g in zip(self._results, grad_outputs) if g is not None]
        if not pairs:
            return (None,) * len(target_input_indexes)
        ys, gys = zip(*pairs)
        grads = grad(list(ys), self.arg_vars, grad_outputs=list(gys))
        return tuple(grads[i] for i in target_input_indexes)

    def rebuild(self, outputs):
        """The outputs arranged as the wrapped function returned them."""
        return _rebuild(self._structure, outputs)


def _flatten_results(results):
    flat = []

    def skeleton(r):
        if isinstance(r, (tuple, list)):
            return type(r)(skeleton(e) for e in r)
        if isinstance(r, dict):
            return {k: skeleton(v) for k, v in r.items()}
        flat.append(r)
        return len(flat) - 1

    return skeleton(results), flat


def _rebuild(structure, outputs):
    if isinstance(structure, (tuple, list)):
        return type(structure)(_rebuild(e, outputs) for e in structure)
    if isinstance(structure, dict):
        return {k: _rebuild(v, outputs) for k, v in structure.items()}
    return outputs[structure]


def _leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def fake_as_funcnode(alt_func, name, rename_attributes=None, experimental_warning=True):
    """Return a function that calls ``alt_func`` as one FunctionNode labelled ``name``.

    The Variables among the arguments (alone or in lists/tuples of Variables)
    become the node's inputs; every other argument, defaults included, becomes
    an attribute named after its keyword, or ``argN`` for the N-th positional
    argument, unless ``rename_attributes`` maps it: a sequence of
    ``(index_or_keyword, new_name)`` pairs. The wrapper returns Variables in
    the structure ``alt_func`` returned.

    Args:
        alt_func (callable): the function to wrap; it must take at least one
            Variable and return arrays or Variables.
        name (str): the node's label, and the key of its converter.
        rename_attributes (sequence of pairs): attribute renames.
        experimental_warning (bool): accepted for onnx_chainer compatibility;
            dbr emits no experimental warning.

    Returns:
        callable: the wrapped function.
    """
    renames = dict(rename_attributes or ())
    signature = inspect.signature(alt_func)

    def wrapper(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        inputs, attributes = [], {}
        call_kwargs = dict(kwargs)
        for index, (key, value) in enumerate(bound.arguments.items()):
            positional = index < len(args)
            if not positional:
                call_kwargs[key] = value
            leaves = _leaves(value)
            is_var = [isinstance(v, Variable) for v in leaves]
            if value is not None and leaves and all(is_var):
                inputs.extend(leaves)
            elif any(is_var):
                raise ValueError(
                    f"{name}: argument {key!r} mixes Variables and other values, which "
                    "as_funcnode cannot split into inputs and attributes"
                )
            else:
                default = f"arg{index}" if positional else key
                attributes[renames.get(index if positional else key, default)] = value
        if not inputs:
            raise ValueError(f"{name}: the wrapped function was called with no Variable")
        node = WrappedFunctionNode(name, alt_func, args, call_kwargs, inputs, attributes)
        return node.rebuild(node.apply(inputs))

    wrapper.__name__ = getattr(alt_func, "__name__", name)
    wrapper.__doc__ = alt_func.__doc__
    return wrapper


def as_funcnode(name, rename_attributes=None):
    """Decorator form of :func:`fake_as_funcnode`: ``@as_funcnode('CustomNode')``."""

    def decorate(func):
        return fake_as_funcnode(func, name, rename_attributes=rename_attributes)

    return decorate
