"""``chainerx``: dbr has no ChainerX; this stand-in only answers that it is not available.

Chainer code guards its ChainerX paths with ``chainerx.is_available()``, so
they are skipped here. ``ndarray`` is the placeholder class that Chainer
itself defines when ChainerX is not built, so that type tests such as
``isinstance(x, chainerx.ndarray)`` are simply False.
"""

__all__ = ["is_available", "ndarray"]


def is_available():
    """Return False: dbr has no ChainerX backend (Chainer without ChainerX says the same)."""
    return False


class ndarray:  # noqa: N801  (Chainer's name)
    """ChainerX's array type, absent: no array is an instance, and none can be made."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("chainerx.ndarray: ChainerX is not available in dbr")
