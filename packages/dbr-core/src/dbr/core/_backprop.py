"""The backprop engine: walks the graph in decreasing rank and calls each node's backward.

The engine knows no concrete function. Gradients live in a table keyed by
VariableNode; a node's gradient is dropped as soon as its creator has used it.
"""

import heapq
import traceback
import warnings

import numpy

# Gradients are summed (``old + gx``) and scaled with Variable's operators, which
# importing dbr.core.ops binds.
from dbr.core import ops  # noqa: F401
from dbr.core.configuration import config, using_config
from dbr.core.function_node import FunctionNode, _check_finite
from dbr.core.utils import force_array
from dbr.core.variable import Variable, VariableNode

_new_variable = Variable.from_array
_ndarray = numpy.ndarray
# Functions that keep FunctionNode's backward_accumulate need only their backward called.
_plain = FunctionNode.backward_accumulate


def backward_from_variable(y, retain_grad, enable_double_backprop, loss_scale):
    """Run backward from one Variable, seeding a single-element one with 1."""
    node = y._node
    if node is not None and type(node) is not VariableNode:
        node._check_old_style_gradient()
    gy = y._grad_var
    if gy is None:
        data = y._data
        if data.size != 1:
            raise ValueError(
                f"Variable.backward: the gradient of a Variable with shape {data.shape} "
                "must be set (y.grad = ...) before backward; only single-element "
                "Variables are seeded with 1"
            )
        if data.ndim != 0:
            warnings.warn(
                "Treating a variable with only one element as a scalar in Variable.backward "
                "is deprecated. A scalar variable must be a 0-dimensional array. Apply "
                "dbr.functions.squeeze to obtain a scalar variable. If the size of this "
                "variable accidentally becomes one, set zero to grad.",
                DeprecationWarning,
                stacklevel=3,
            )
        gy = _new_variable(y.xp.ones_like(data), False)
    if loss_scale is not None:
        data = gy._data
        gy = _new_variable(force_array(data * data.dtype.type(loss_scale)), False)
    if node is None or node.creator_node is None:
        y._grad_var = gy  # a leaf is its own input: it keeps the gradient
        return
    # As in Chainer, the output's gradient is consumed by backward: it stays only
    # with retain_grad (the propagation puts it back).
    y._grad_var = None
    _backward_to_leaves({node: gy}, retain_grad, enable_double_backprop, loss_scale)


def backward(outputs, grad_outputs=None, *, enable_double_backprop=False):
    """Run backward from several Variables at once.

    Args:
        outputs: Variables to start from.
        grad_outputs: their gradients (Variables or arrays); None uses each
            output's ``grad_var`` (no default of 1 is set, as in Chainer).
        enable_double_backprop: record the backward computation.
    """
    outputs = list(outputs)
    if grad_outputs is None:
        grad_outputs = []
        for y in outputs:
            if y._grad_var is None:
                warnings.warn(
                    "backward: an output has no gradient (or appears twice); "
                    "backward sets no default gradient",
                    RuntimeWarning,
                    stacklevel=2,
                )
            grad_outputs.append(y._grad_var)
    elif len(grad_outputs) != len(outputs):
        raise ValueError(
            f"backward: expected {len(outputs)} grad_outputs (one per output), "
            f"got {len(grad_outputs)}"
        )
    seeds = {}
    for y, gy in zip(outputs, grad_outputs):
        if gy is None or y.creator_node is None:
            continue
        gy = gy if isinstance(gy, Variable) else _new_variable(gy, False)
        _accumulate(seeds, y.node, gy)
    if seeds:
        _backward_to_leaves(seeds, False, enable_double_backprop, None)


def grad(
    outputs,
    inputs,
    grad_outputs=None,
    grad_inputs=None,
    set_grad=False,
    retain_grad=False,
    enable_double_backprop=False,
    loss_scale=None,
):
    """Return the gradients of ``outputs`` with respect to ``inputs``.

    Unlike ``backward``, leaf gradients are left untouched (unless
    ``set_grad``). An input that no output depends on gets None.

    Args:
        outputs: Variables to differentiate.
        inputs: Variables (leaves or intermediates) to differentiate by.
        grad_outputs: initial output gradients; None (or a None entry) means ones.
        grad_inputs: initial input gradients to add to the results.
        set_grad: also store the results in ``inputs[i].grad_var``.
        retain_grad: keep the gradients of intermediate Variables.
        enable_double_backprop: record the backward so the results are differentiable.
        loss_scale: scale the output gradients by this factor.
    """
    outputs = _as_variable_list(outputs, "outputs")
    for y in outputs:
        if type(y._node) is not VariableNode and y._node is not None:
            y._node._check_old_style_gradient()
    inputs = _as_variable_list(inputs, "inputs")
    _check_sequence(grad_outputs, "grad_outputs")
    _check_sequence(grad_inputs, "grad_inputs")
    if grad_outputs is not None and len(grad_outputs) != len(outputs):
        raise ValueError(
            f"grad: expected {len(outputs)} grad_outputs (one per output), got {len(grad_outputs)}"
        )
    if grad_inputs is not None and len(grad_inputs) != len(inputs):
        raise ValueError(
            f"grad: expected {len(inputs)} grad_inputs (one per input), got {len(grad_inputs)}"
        )
    targets = {}
    for i, x in enumerate(inputs):
        node = x.node
        targets[node] = None
        if grad_inputs is not None and grad_inputs[i] is not None:
            gx = grad_inputs[i]
            targets[node] = gx if isinstance(gx, Variable) else _new_variable(gx, False)
    seeds = {}
    for i, y in enumerate(outputs):
        gy = None if grad_outputs is None else grad_outputs[i]
        if gy is None:
            gy = _new_variable(y.xp.ones_like(y._data), False)
        elif not isinstance(gy, Variable):
            gy = _new_variable(gy, False)
        if loss_scale is not None:
            gy = gy * loss_scale
        _accumulate(seeds, y.node, gy)
    grads = _grad_to_targets(seeds, targets, retain_grad, enable_double_backprop)
    ret = [grads.get(x._node) for x in inputs]
    if set_grad:
        for x, gx in zip(inputs, ret):
            x._grad_var = gx
    return ret


def _check_sequence(xs, what):
    if xs is not None and not isinstance(xs, (list, tuple)):
        raise TypeError(
            f"grad: expected {what} to be a list or tuple (or None), got {type(xs).__name__}"
        )


def _as_variable_list(xs, what):
    if not isinstance(xs, (list, tuple)):
        raise TypeError(
            f"grad: expected {what} to be a list or tuple of Variables, got {type(xs).__name__}"
        )
    xs = list(xs)
    for x in xs:
        if not isinstance(x, Variable):
            raise TypeError(
                f"grad: expected every element of {what} to be a Variable, got {type(x).__name__}"
            )
    return xs


def _accumulate(grads, node, gx):
    old = grads.get(node)
    grads[node] = gx if old is None else old + gx


def _reaching_targets(seeds, targets):
    """Return the set of FunctionNodes lying on some path from the seeds to a target."""
    memo = {}
    for node in seeds:
        func = node.creator_node
        if func is None or func in memo:
            continue
        stack = [(func, False)]
        while stack:
            f, expanded = stack.pop()
            if expanded:
                memo[f] = any(
                    x in targets or (x.creator_node is not None and memo.get(x.creator_node))
                    for x in f.inputs
                )
                continue
            if f in memo:
                continue
            memo[f] = False
            stack.append((f, True))
            for x in f.inputs:
                if type(x) is not VariableNode:
                    x._check_old_style_gradient()
                c = x.creator_node
                if c is not None and c not in memo:
                    stack.append((c, False))
    return {f for f, reaches in memo.items() if reaches}


def _backward_to_leaves(seeds, retain_grad, enable_double_backprop, loss_scale):
    """Propagate ``seeds`` (node → gradient Variable) to every leaf that requires a gradient.

    Each such leaf's gradient is added to its ``grad_var``; it remembers ``loss_scale``.
    """
    grads = dict(seeds)
    _propagate(
        grads,
        [node.creator_node for node in seeds],
        grads.pop,
        _inputs_requiring_grad,
        retain_grad,
        enable_double_backprop,
    )
    assigned = set()
    for node, g in grads.items():
        if node.creator_node is not None or not node.requires_grad:
            continue
        if type(node) is not VariableNode:
            node._check_old_style_gradient()
        var = node._variable()
        if var is None:
            continue
        old = var._grad_var
        if old is None:
            if not enable_double_backprop:
                g = _owned(g, assigned)
            var._grad_var = g
        elif enable_double_backprop:
            var._grad_var = old + g
        else:
            var._grad_var = _new_variable(_add_arrays(old._data, g._data), False)
        if loss_scale is not None:
            var._loss_scale = loss_scale


def _grad_to_targets(seeds, targets, retain_grad, enable_double_backprop):
    """Propagate ``seeds`` only through the functions on paths to ``targets`` (node →
    initial gradient or None); return the gradient table, which holds the targets'."""
    grads = dict(seeds)
    for node, g in targets.items():
        if g is not None:
            _accumulate(grads, node, g)
    allowed = _reaching_targets(seeds, targets)

    def take_output_grad(node, default):
        # A target keeps its gradient: it is a result, even when its creator runs.
        return grads.get(node, default) if node in targets else grads.pop(node, default)

    def input_indexes(func):
        return tuple(
            [
                i
                for i, x in enumerate(func.inputs)
                if x.requires_grad and (x in targets or x.creator_node in allowed)
            ]
        )

    _propagate(
        grads,
        [node.creator_node for node in seeds if node.creator_node in allowed],
        take_output_grad,
        input_indexes,
        retain_grad,
        enable_double_backprop,
    )
    return grads


def _inputs_requiring_grad(func):
    inputs = func.inputs
    n = len(inputs)
    if n == 1:
        return _FIRST if inputs[0].requires_grad else ()
    if n == 2:
        # Most nodes are binary; spelled out, this is a third of the generic form's cost.
        if inputs[0].requires_grad:
            return _BOTH if inputs[1].requires_grad else _FIRST
        return _SECOND if inputs[1].requires_grad else ()
    return tuple([i for i, x in enumerate(inputs) if x.requires_grad])


_FIRST = (0,)
_SECOND = (1,)
_BOTH = (0, 1)


def _propagate(grads, funcs, take_output_grad, input_indexes, retain_grad, enable_double_backprop):
    """The propagation step shared by both drivers.

    Runs the backward of ``funcs`` and of every function they reach, in decreasing
    rank, and accumulates the input gradients into ``grads`` (node → gradient Variable).

    Args:
        grads: the gradient table, holding the seeds' gradients; updated in place.
        funcs: the creators of the seeds (None entries are skipped).
        take_output_grad: ``(node, default)`` → the gradient of an output node to
            hand to its creator; ``grads.pop`` drops it from the table once used.
        input_indexes: ``func`` → the sorted tuple of the input indexes to differentiate.
        retain_grad: also store each output's gradient in its Variable's ``grad_var``.
        enable_double_backprop: record the backward computation.
    """
    heap = []
    pushed = set()
    counter = 0
    for func in funcs:
        if func is not None and func not in pushed:
            pushed.add(func)
            heapq.heappush(heap, (-func.rank, counter, func))
            counter += 1
    # Gradient buffers that the engine allocated itself while summing the uses of a
    # node and that nothing else holds yet (node → Variable): later uses add in place.
    owned = {}
    hooks = config._function_hooks
    debug = config.debug
    heappop = heapq.heappop
    heappush = heapq.heappush
    with using_config("enable_backprop", enable_double_backprop):
        while heap:
            func = heappop(heap)[2]
            refs = func.outputs
            if len(refs) == 1:
                # Most nodes have one output: no list to build.
                node = refs[0]()
                gy = None if node is None else take_output_grad(node, None)
                if gy is None:
                    continue
                gys = (gy,)
                taken = ((node, gy),)
            else:
                nodes = [ref() for ref in refs]
                gys = tuple([None if n is None else take_output_grad(n, None) for n in nodes])
                taken = [(n, gy) for n, gy in zip(nodes, gys) if gy is not None]
                if not taken:
                    continue
            if owned or retain_grad:
                for node, gy in taken:
                    owned.pop(node, None)
                    if retain_grad:
                        var = node._variable()
                        if var is not None:
                            var._grad_var = gy
            indexes = input_indexes(func)
            if not indexes:
                continue

            if debug:
                gxs = _debug_backward(func, indexes, gys, grads, owned, hooks)
            elif hooks or func._local_hooks or type(func).backward_accumulate is not _plain:
                gxs = _call_backward(func, indexes, gys, grads, owned, hooks)
            else:
                gxs = func.backward(indexes, gys)
                if len(gxs) != len(indexes):
                    gxs = _requested(func, indexes, gxs)

            inputs = func.inputs
            for i, gx in zip(indexes, gxs):
                if gx is None:
                    continue
                if not isinstance(gx, Variable):
                    gx = _new_variable(gx, False)
                x = inputs[i]
                old = grads.get(x)
                if old is None:
                    grads[x] = gx
                elif enable_double_backprop:
                    grads[x] = old + gx
                else:
                    buffer = old._data
                    data = gx._data
                    if (
                        owned.get(x) is old
                        and data.dtype == buffer.dtype
                        and data.shape == buffer.shape
                    ):
                        buffer += data
                    else:
                        grads[x] = owned[x] = _new_variable(_add_arrays(buffer, data), False)
                creator = x.creator_node
                if creator is not None and creator not in pushed:
                    pushed.add(creator)
                    heappush(heap, (-creator.rank, counter, creator))
                    counter += 1
            del gys, gxs


def _owned(g, assigned):
    """Return ``g``, or a copy when its array is shared with another leaf or is a broadcast view.

    Leaf gradients are updated in place by optimizers and hooks, so each leaf
    must own a writable array of its own.
    """
    data = g._data
    key = id(data)
    if key in assigned or 0 in data.strides or not getattr(data.flags, "writeable", True):
        g = _new_variable(data.copy(), False)
        key = id(g._data)
    assigned.add(key)
    return g


def _add_arrays(a, b):
    s = a + b
    return s if type(s) is _ndarray or not isinstance(s, numpy.generic) else numpy.asarray(s)


def _requested(func, indexes, gxs):
    """The gradients at ``indexes`` of ``gxs``, which ``func.backward`` gave for every input."""
    n = len(gxs)
    n_inputs = len(func.inputs)
    if n != n_inputs:
        expected = n_inputs if n_inputs == len(indexes) else f"{n_inputs} or {len(indexes)}"
        raise ValueError(
            _error_message(
                func,
                f"number of gradients returned from backward is incorrect: {n} != expected "
                f"{expected} (one per input, or one per requested input)",
            )
        )
    return tuple([gxs[i] for i in indexes])


def _error_message(func, message):
    """``message`` followed by the function's class, label and input shapes (Chainer's form)."""
    lines = [message, f"  function={type(func).__name__} ({func.label})"]
    for i, x in enumerate(func.inputs or ()):
        lines.append(f"    input {i}: shape={x.shape} dtype={x.dtype}")
    return "\n".join(lines)


def _debug_backward(func, indexes, gys, grads, owned, hooks):
    """``_call_backward`` in debug mode: every gradient is checked, errors show the call site.

    A gradient must be a Variable (or None), of its input's shape, and of the
    dtype and shape of the gradient it is added to; NaN and Inf are errors.
    An exception raised by the backward names where the function was applied.
    """
    try:
        if hooks or func._local_hooks or type(func).backward_accumulate is not _plain:
            gxs = _call_backward(func, indexes, gys, grads, owned, hooks)
        else:
            gxs = func.backward(indexes, gys)
            for gx in gxs:
                if not (gx is None or isinstance(gx, Variable)):
                    raise ValueError(
                        _error_message(
                            func,
                            "type of gradients returned from backward is incorrect: "
                            f"{type(gx)} != expected {Variable}",
                        )
                    )
            if len(gxs) != len(indexes):
                gxs = _requested(func, indexes, gxs)
    except Exception as e:
        _add_call_site(e, func)
        raise
    inputs = func.inputs
    for i, gx in zip(indexes, gxs):
        if gx is None or gx._data is None:
            continue
        x = inputs[i]
        shape = x.shape
        if shape is not None and gx.shape != shape:
            raise ValueError(
                _error_message(
                    func,
                    "shape of gradients returned from backward is incorrect: "
                    f"input-index={i}, actual {gx.shape} != expected {shape}",
                )
            )
        old = grads.get(x)
        if old is None and x.creator_node is None:
            var = x._variable()
            old = None if var is None else var._grad_var
        if old is not None and old._data is not None:
            if gx.shape != old.shape:
                raise ValueError(
                    _error_message(
                        func,
                        "shape of gradients returned from backward is incorrect: "
                        f"input-index={i}, actual {gx.shape} != expected {old.shape}",
                    )
                )
            if gx.dtype != old.dtype:
                raise ValueError(
                    _error_message(
                        func,
                        "dtype of gradients returned from backward is incorrect: "
                        f"input-index={i}, actual {gx.dtype} != expected {old.dtype}",
                    )
                )
    _check_finite(func, [None if g is None else g._data for g in gxs], "backward")
    return gxs


def _add_call_site(error, func):
    # Chainer's form: the message gains the stack where the function was applied.
    stack = func.stack
    if not stack:
        return
    site = "".join(traceback.format_list(stack))
    extra = f"\n{'-' * 40}\nStacktrace of the function is below:\n{site}"
    error.args = (str(error.args[0]) + extra, *error.args[1:]) if error.args else (extra,)


def _call_backward(func, indexes, gys, grads, owned, hooks):
    """``func.backward`` (or its ``backward_accumulate``) between the hooks' calls."""
    if func._local_hooks:
        hooks = {**hooks, **func._local_hooks}
    if hooks:
        in_data = tuple([x.data for x in func.inputs])
        out_grad = tuple([None if g is None else g._data for g in gys])
        for hook in hooks.values():
            hook.backward_preprocess(func, in_data, out_grad)
    if type(func).backward_accumulate is _plain:
        gxs = func.backward(indexes, gys)
        if len(gxs) != len(indexes):
            gxs = _requested(func, indexes, gxs)
    else:
        inputs = func.inputs
        current = []
        was_owned = []
        for i in indexes:
            current.append(grads.pop(inputs[i], None))
            was_owned.append(owned.pop(inputs[i], None) is not None)
        if func._accumulates_in_place:
            # The node may add into the sums the engine owns, and hand back sums it owns; it
            # takes them out of the list, so that a sum it replaces is freed at once.
            gxs, now_owned = func._backward_accumulate_in_place(
                indexes, gys, current, tuple(was_owned)
            )
            for i, gx, own in zip(indexes, gxs, now_owned):
                if own:
                    owned[inputs[i]] = gx
        else:
            gxs = func.backward_accumulate(indexes, gys, tuple(current))
    if hooks:
        for hook in hooks.values():
            hook.backward_postprocess(func, in_data, out_grad)
    return gxs


def _variable_backward(self, retain_grad=False, enable_double_backprop=False, loss_scale=None):
    """Compute gradients of this Variable with respect to every leaf that requires them.

    A Variable with a single element and no gradient is seeded with 1.
    Leaf gradients accumulate into ``grad`` until ``cleargrad`` is called.

    Args:
        retain_grad: also keep the gradients of intermediate Variables.
        enable_double_backprop: record the backward computation so that the
            gradients can themselves be differentiated.
        loss_scale: multiply the seed gradient by this factor (mixed precision);
            leaves remember it in :attr:`loss_scale`.
    """
    backward_from_variable(self, retain_grad, enable_double_backprop, loss_scale)


# Variable.backward runs this engine: bound here, as dbr.core.ops binds Variable's
# operators, so that variable.py needs no import of the engine.
Variable.backward = _variable_backward
