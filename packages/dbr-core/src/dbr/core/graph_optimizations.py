"""Chainer's static-graph decorators, accepted so that ported code runs define-by-run.

Chainer 7 could trace a chain's ``__call__`` marked ``@static_graph`` once
and replay the recorded schedule afterwards (an experimental speed-up).
dbr always runs define-by-run: the decorators here return the function
itself, so the decorated code runs, and backpropagates, exactly as without
them. Their keyword arguments, which only tuned that tracing, are accepted
and ignored.
"""

_STATIC_GRAPH_OPTIONS = frozenset(
    (
        "force_test_define_by_run",
        "minimize_cache_size",
        "verbosity_level",
        "enable_double_backprop",
    )
)
_STATIC_CODE_OPTIONS = frozenset(("func_name",))


def _decorator(who, args, kwargs, options):
    unknown = sorted(set(kwargs) - options)
    if unknown:
        raise TypeError(
            f"{who}: unexpected keyword argument(s) {', '.join(map(repr, unknown))}; "
            f"expected {', '.join(sorted(options))}"
        )
    if not args:
        return lambda func: _checked(who, func)
    if len(args) == 1 and not kwargs:
        return _checked(who, args[0])
    raise TypeError(
        f"{who}: expected to decorate one function (@{who}) or keyword arguments only "
        f"(@{who}(...)), got {len(args)} positional argument(s) and keywords {sorted(kwargs)}"
    )


def _checked(who, func):
    if not callable(func):
        raise TypeError(f"{who}: expected a function to decorate, got {type(func).__name__}")
    return func


def static_graph(*args, **kwargs):
    """Mark a chain's ``__call__``/``forward`` as a static graph (Chainer's API); a no-op here.

    Use it as ``@static_graph`` or ``@static_graph(**options)``. dbr runs the
    decorated method define-by-run on every call, as if it were not
    decorated: the same function object is returned, with no tracing, no
    cached schedule and no ``schedule_manager`` on the chain. Chainer's
    options configure only its static-graph optimizations and are accepted
    and ignored: ``force_test_define_by_run`` (bool), ``minimize_cache_size``
    (bool), ``verbosity_level`` (int) and ``enable_double_backprop`` (bool;
    every dbr function supports double backprop anyway).

    Args:
        *args: the function to decorate (``@static_graph``), or nothing
            (``@static_graph(...)``).
        **kwargs: the options above.

    Returns:
        The function itself, or a decorator that returns its argument.

    Raises:
        TypeError: an unknown keyword, more than one positional argument,
            or something other than a callable to decorate.
    """
    return _decorator("static_graph", args, kwargs, _STATIC_GRAPH_OPTIONS)


def static_code(*args, **kwargs):
    """Mark a function for a static schedule (Chainer's API); a no-op here.

    Use it as ``@static_code`` or ``@static_code(func_name=...)``. In
    Chainer, a function so marked runs on every iteration of a static chain
    (other side effects ran only while the schedule was traced). dbr has no
    static schedule and runs everything on every call, so the same function
    object is returned; ``func_name`` (str, a label for Chainer's schedule
    debugging) is accepted and ignored. The decorated function is called
    with its own arguments unchanged, including Chainer's optional
    ``inputs``/``outputs`` keywords if it takes them.

    Args:
        *args: the function to decorate (``@static_code``), or nothing
            (``@static_code(func_name=...)``).
        **kwargs: ``func_name``.

    Returns:
        The function itself, or a decorator that returns its argument.

    Raises:
        TypeError: an unknown keyword, more than one positional argument,
            or something other than a callable to decorate.
    """
    return _decorator("static_code", args, kwargs, _STATIC_CODE_OPTIONS)
