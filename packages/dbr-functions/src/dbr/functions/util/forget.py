"""forget: call a function without keeping its intermediate results; recompute them in backward."""

from dbr.core import (
    FunctionNode,
    Variable,
    backward,
    config,
    force_backprop_mode,
    no_backprop_mode,
    using_config,
)

_ORDINAL_SUFFIX = {1: "st", 2: "nd", 3: "rd"}


def _ordinal(n):
    suffix = "th" if 10 <= n % 100 <= 20 else _ORDINAL_SUFFIX.get(n % 10, "th")
    return f"{n}{suffix}"


def _call(func, xs):
    """Call ``func(*xs)`` and return its outputs as a tuple of Variables."""
    outs = func(*xs)
    if isinstance(outs, Variable):
        return (outs,)
    if not isinstance(outs, tuple):
        raise RuntimeError(
            "forget: expected func to return a Variable or a tuple of Variables, "
            f"got {type(outs).__name__}"
        )
    for i, out in enumerate(outs):
        if not isinstance(out, Variable):
            raise RuntimeError(
                f"forget: expected func to return a Variable or a tuple of Variables, "
                f"but the {_ordinal(i + 1)} element of the returned tuple is "
                f"{type(out).__name__}"
            )
    return outs


class Forget(FunctionNode):
    """Runs ``func`` without recording a graph, and again with one in backward; see :func:`forget`.

    Args:
        func (callable): takes Variables and returns a Variable or a tuple of
            Variables.
    """

    def __init__(self, func):
        if not callable(func):
            raise TypeError(f"forget: expected func to be callable, got {type(func).__name__}")
        self.func = func

    def forward(self, inputs):
        self.retain_inputs(tuple(range(len(inputs))))
        with no_backprop_mode(), using_config("_will_recompute", True):
            outs = _call(self.func, [Variable.from_array(x, True) for x in inputs])
        return tuple([y.array for y in outs])

    def backward(self, indexes, grad_outputs):
        if config.enable_backprop:
            raise RuntimeError(
                "forget: double backpropagation through forget is not supported, as in "
                "Chainer; call the function without forget to differentiate twice"
            )
        inputs = self.get_retained_inputs()
        xs = tuple([Variable.from_array(x.array, x.requires_grad) for x in inputs])
        with using_config("in_recomputing", True), force_backprop_mode():
            outs = _call(self.func, xs)
        if len(outs) != len(grad_outputs):
            raise RuntimeError(
                f"forget: func returned {len(grad_outputs)} outputs in forward but "
                f"{len(outs)} when recomputed in backward"
            )
        pairs = [(y, gy) for y, gy in zip(outs, grad_outputs) if gy is not None]
        for y, gy in pairs:
            if y.creator_node is None:  # func returned an input: the gradient is gy itself
                y.grad_var = gy if y.grad_var is None else y.grad_var + gy
        # A full backward, not grad(): parameters that func uses (a Link's) get
        # their gradients too, as they would without forget.
        backward([y for y, _ in pairs], [gy for _, gy in pairs])
        return tuple([xs[i].grad_var for i in indexes])


def forget(func, *xs):
    """Call ``func(*xs)`` without keeping its intermediate results.

    Normally every intermediate result of a computation is kept in the graph
    for backprop. ``forget`` runs ``func`` with backprop disabled, so only
    the inputs and outputs stay in memory, and runs it again in the backward
    pass to rebuild the graph it needs, with ``config.in_recomputing`` set
    so that functions with side effects (such as updating running
    statistics) can skip them the second time. It trades computation for
    memory. Parameters that ``func`` uses (``forget(link, x)``) get their
    gradients as they would without ``forget``. As in Chainer, backward
    through ``forget`` cannot itself be differentiated: with
    ``enable_double_backprop`` it raises RuntimeError.

    ``func`` must compute the same thing each time it is called: random
    functions such as :func:`~dbr.functions.dropout` would draw new noise
    in the recomputation.

    Args:
        func (callable): takes one Variable per element of ``xs`` and returns
            a Variable or a tuple of Variables.
        *xs (Variable or array): the arguments; arrays become Variables
            that require a gradient when they are floating, so that
            ``forget`` is part of the graph.

    Returns:
        Variable, or a tuple of Variables if ``func`` returns a tuple.

    >>> import numpy as np
    >>> from dbr.core import Variable
    >>> x = Variable(np.array([1.0, 2.0], np.float32))
    >>> y = forget(lambda a: a * a + a, x)
    >>> y.array
    array([2., 6.], dtype=float32)
    >>> y.grad = np.ones(2, np.float32)
    >>> y.backward()
    >>> x.grad
    array([3., 5.], dtype=float32)
    """
    xs = tuple(
        [
            x if isinstance(x, Variable) else Variable(x, requires_grad=x.dtype.kind == "f")
            for x in xs
        ]
    )
    ys = Forget(func).apply(xs)
    return ys[0] if len(ys) == 1 else ys
