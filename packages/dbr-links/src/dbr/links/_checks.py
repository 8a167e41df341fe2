"""Checks of constructor arguments shared by the links (private)."""


def check_size(who, name, value, allow_none=False):
    """Raise ValueError unless ``value`` is a positive int (or None when ``allow_none``).

    ``bool`` is refused; the message reads ``'{who}: {name} must be a
    positive int, got ...'``.
    """
    if value is None and allow_none:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        expected = "a positive int or None" if allow_none else "a positive int"
        raise ValueError(f"{who}: {name} must be {expected}, got {value!r}")
