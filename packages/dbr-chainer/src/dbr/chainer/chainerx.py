"""``chainerx``: dbr has no ChainerX; this stand-in only answers that it is not available.

Chainer code guards its ChainerX paths with ``chainerx.is_available()``, so
they are skipped here.
"""

__all__ = ["is_available"]


def is_available():
    """Return False: dbr has no ChainerX backend (Chainer without ChainerX says the same)."""
    return False
