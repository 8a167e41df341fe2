"""``@static_graph`` and ``@static_code``: Chainer's decorators, with their options checked."""

import functools

from dbr.core.configuration import config
from dbr.core.graph_optimizations._manager import ScheduleManager
from dbr.core.graph_optimizations._recording import current_recorder
from dbr.core.utils import docstring_tail

_STATIC_GRAPH_OPTIONS = {
    "force_test_define_by_run": False,
    "minimize_cache_size": True,
    "verbosity_level": 0,
    "enable_double_backprop": False,
}
_STATIC_CODE_OPTIONS = {"func_name": None}


def _decorator(who, args, kwargs, options, wrap):
    unknown = sorted(set(kwargs) - set(options))
    if unknown:
        raise TypeError(
            f"{who}: unexpected keyword argument(s) {', '.join(map(repr, unknown))}; "
            f"expected {', '.join(sorted(options))}"
        )
    chosen = {**options, **kwargs}
    if not args:
        return lambda func: wrap(_checked(who, func), **chosen)
    if len(args) == 1 and not kwargs:
        return wrap(_checked(who, args[0]), **chosen)
    raise TypeError(
        f"{who}: expected to decorate one function (@{who}) or keyword arguments only "
        f"(@{who}(...)), got {len(args)} positional argument(s) and keywords {sorted(kwargs)}"
    )


def _checked(who, func):
    if not callable(func):
        raise TypeError(f"{who}: expected a function to decorate, got {type(func).__name__}")
    return func


def _define_by_run_now(force_test_define_by_run):
    cfg = config
    return (
        not cfg.use_static_graph
        or cfg.debug
        or bool(cfg._function_hooks)
        or bool(cfg._link_hooks)
        or cfg.in_recomputing
        or cfg._will_recompute
        or (force_test_define_by_run and not cfg.train)
    )


def _static_chain(
    forward, force_test_define_by_run, minimize_cache_size, verbosity_level, enable_double_backprop
):
    if enable_double_backprop:
        return forward  # a backward that can itself be differentiated is define-by-run's

    @functools.wraps(forward)
    def static_forward(chain, *args, **kwargs):
        if _define_by_run_now(force_test_define_by_run):
            return forward(chain, *args, **kwargs)
        manager = vars(chain).get("schedule_manager")
        if manager is None or not manager.owned_by(chain):
            manager = ScheduleManager(minimize_cache_size, verbosity_level)
            chain.schedule_manager = chain.static_schedule = manager
        return manager.call(forward, chain, args, kwargs)

    return static_forward


def _static_code(func, func_name):
    @functools.wraps(func)
    def static_code_function(*args, **kwargs):
        recorder = current_recorder()
        if recorder is None:
            return func(*args, **kwargs)
        return recorder.call_code(func, args, kwargs)

    return static_code_function


_DECORATOR_DOC = """
    Returns:
        The decorated function, or a decorator.

    Raises:
        TypeError: an unknown keyword, more than one positional argument,
            or something other than a callable to decorate.
"""


@docstring_tail(_DECORATOR_DOC)
def static_graph(*args, **kwargs):
    """Trace a chain's forward once per input signature and replay it afterwards.

    Use it as ``@static_graph`` or ``@static_graph(**options)`` on a Chain's
    ``forward`` (or ``__call__``). The first two calls with a given
    signature (the arguments' array types, shapes, dtypes, devices and
    whether they require grad, the other arguments' values,
    ``config.train`` and ``config.enable_backprop``) run define-by-run and
    are recorded; later calls replay the recorded functions on arrays, with
    no Variables, graph building or type checks, and one node,
    ``StaticSchedule``, stands for the whole call in the graph. Outputs,
    gradients and random draws are those define-by-run gives. See the guide
    "Static graphs" for what a replay cannot do, and how each case is
    refused.

    The chain gets a ``schedule_manager`` (:class:`ScheduleManager`). The
    decorated code runs define-by-run when ``config.use_static_graph`` is
    False, in debug mode, under function or link hooks, and while
    :func:`dbr.functions.forget` recomputes.

    Args:
        *args: the method to decorate (``@static_graph``), or nothing
            (``@static_graph(...)``).
        **kwargs: ``force_test_define_by_run`` (bool: run define-by-run when
            ``config.train`` is False), ``minimize_cache_size`` (bool,
            default True: drop the schedules when ``config.train`` changes),
            ``verbosity_level`` (int: 1 or more prints each recording) and
            ``enable_double_backprop`` (bool: True runs the method
            define-by-run always, so that its backward can be
            differentiated).
    """
    return _decorator("static_graph", args, kwargs, _STATIC_GRAPH_OPTIONS, _static_chain)


@docstring_tail(_DECORATOR_DOC)
def static_code(*args, **kwargs):
    """Mark a function that a static chain's replays call again (side effects, data loading).

    Use it as ``@static_code`` or ``@static_code(func_name=...)``. Called
    while a static chain is recorded, the call is recorded too: every replay
    calls the function again, with the arrays of that replay in place of
    the arrays it got (a Variable argument is given as a Variable on the
    new array). It may return None, an array or a tuple of arrays, which the
    rest of the replay reads. Functions it applies are not recorded; no
    gradient flows through it. Outside a static chain it is a plain call.
    ``func_name`` (str, a label in Chainer's schedule debugging) is
    accepted and unused.

    Args:
        *args: the function to decorate (``@static_code``), or nothing
            (``@static_code(func_name=...)``).
        **kwargs: ``func_name``.
    """
    return _decorator("static_code", args, kwargs, _STATIC_CODE_OPTIONS, _static_code)
