"""The InvalidType of a check that a function makes outside its ``check_type_forward``."""

from dbr.core import type_check


def invalid_type(who, expect, actual, forward=True):
    """An InvalidType worded as the engine words a failed type check of ``who``.

    Args:
        who (str): the function's name, as the message names it.
        expect (str): the condition that was expected to hold.
        actual (str): the values that were found.
        forward (bool): name the forward pass in the message, as the type
            check of a FunctionNode's inputs does.

    Returns:
        dbr.core.type_check.InvalidType: for the caller to raise.

    >>> print(invalid_type("f", "x.ndim == 2", "x.ndim == 1"))
    Invalid operation is performed in: f (Forward)
    <BLANKLINE>
    Expect: x.ndim == 2
    Actual: x.ndim == 1
    """
    where = f"{who} (Forward)" if forward else who
    plain = type_check.InvalidType(expect, actual)  # words "Expect: ...\nActual: ..."
    return type_check.InvalidType(
        expect, actual, msg=f"Invalid operation is performed in: {where}\n\n{plain}"
    )
