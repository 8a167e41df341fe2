"""Docstring passages that a family of functions shares word for word, written once.

A docstring names a passage by a line holding only ``{name}``; :func:`fill`
replaces that line with the passage, each of its lines indented as the
placeholder was. What users read (``__doc__``, ``help()``, the built docs,
the doctests) is the filled text.
"""


def fill(**passages):
    """Decorator: fill the ``{name}`` lines of a function's docstring with ``passages[name]``.

    Args:
        passages (str): the passages by name, dedented, lines joined by ``\\n``.

    Returns:
        callable: a decorator returning its argument with ``__doc__`` filled
        (left None when docstrings are stripped, as under ``python -OO``).

    Raises:
        KeyError: a placeholder names no passage.
    """

    def decorate(obj):
        if obj.__doc__ is not None:
            obj.__doc__ = fill_text(obj.__doc__, passages)
        return obj

    return decorate


def fill_text(doc, passages):
    """``doc`` with every line ``{name}`` replaced by ``passages[name]``, indented as the line."""
    lines = []
    for line in doc.split("\n"):
        key = line.strip()
        if not (key.startswith("{") and key.endswith("}") and key[1:-1].isidentifier()):
            lines.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        lines.extend(indent + part if part else part for part in passages[key[1:-1]].split("\n"))
    return "\n".join(lines)
