"""Type-check failures about class labels say what labels are, and what was given."""

import contextlib

from dbr.core import type_check


@contextlib.contextmanager
def explaining_labels(t_type, expected):
    """Re-raise an InvalidType raised inside with a hint on the labels ``t``.

    ``expected`` says what ``t`` must be (e.g. "int32 class indices of shape
    x.shape[:1] + x.shape[2:]"); the hint adds the dtype and shape given, so
    that float labels or one-hot targets are recognised at once.
    """
    try:
        yield
    except type_check.InvalidType as error:
        dtype, shape = type_check.eval(t_type.dtype), type_check.eval(t_type.shape)
        hint = f"Hint: t must hold {expected}; got t of dtype {dtype} and shape {shape}"
        raise type_check.InvalidType(error.expect, f"{error.actual}\n{hint}") from None
