"""Tables of calls that must be refused: one row per call, the error and its message.

A row is ``(args, error, fragment)``, ``(args, kwargs, error, fragment)`` or
``(function, args, kwargs, error, fragment)``: calling ``function(*args,
**kwargs)`` (the table's function unless the row names its own) must raise
``error`` (an exception type) with ``fragment`` (a string, or a tuple of
strings) in its message. :class:`~dbr.core.testing.FunctionTestCase` checks
such a table from its ``bad_inputs()``; :func:`bad_input_test` turns one into
a pytest test of its own, one case per row.
"""

from dbr.core.testing._pytest import require_pytest

pytest = require_pytest()

__all__ = ["bad_input_test", "check_bad_input"]


def _unpack(row, function, where):
    if isinstance(row, tuple):
        if len(row) == 5:
            return row
        if len(row) == 4:
            return (function, *row)
        if len(row) == 3:
            return (function, row[0], {}, *row[1:])
    raise TypeError(
        f"{where}: expected a row (args, error, fragment), (args, kwargs, error, fragment) "
        f"or (function, args, kwargs, error, fragment), got {row!r}"
    )


def check_bad_input(row, function=None, where="bad input"):
    """Check that one row's call raises its error with every fragment in the message.

    Args:
        row (tuple): ``(args[, kwargs], error, fragment)``, or ``(function,
            args, kwargs, error, fragment)`` to call a function of its own.
        function (callable): what a row without a function calls.
        where (str): names the table and row in the assertion messages.

    Raises:
        AssertionError: the call returned, or raised ``error`` without a
            fragment in its message (another exception type propagates).
        TypeError: the row is malformed or names no callable.
    """
    function, args, kwargs, error, fragments = _unpack(row, function, where)
    if not callable(function):
        raise TypeError(f"{where}: needs function (the callable under test), got {function!r}")
    if isinstance(fragments, str):
        fragments = (fragments,)
    try:
        function(*args, **kwargs)
    except error as e:
        message = str(e)
        missing = [f for f in fragments if f not in message]
        if missing:
            raise AssertionError(
                f"{where} raised {type(e).__name__} without {missing!r} in its message: "
                f"{message!r}"
            ) from None
    else:
        raise AssertionError(f"{where} did not raise {error.__name__}")


def bad_input_test(rows, function=None):
    """Return a pytest test, one case per row of ``rows``, that each call is refused.

    Assign it to a module-level name starting with ``test_`` (the table is
    built at import time)::

        test_bad_input = bad_input_test(
            [
                ((numpy.zeros((2, 3), numpy.float32), 2), InvalidType, "x.ndim > 2"),
                (fliplr, (numpy.zeros(3, numpy.float32),), {}, InvalidType, "a.ndim >= 2"),
            ],
            function=flip,
        )

    Args:
        rows (list of tuple): rows as :func:`check_bad_input` takes them.
        function (callable): what rows without a function of their own call.
    """
    rows = list(rows)
    if not rows:
        raise TypeError("bad_input_test: expected at least one row, got none")

    @pytest.mark.parametrize("row_index", range(len(rows)))
    def test_bad_input(row_index):
        check_bad_input(rows[row_index], function, where=f"bad input row {row_index}")

    return test_bad_input
