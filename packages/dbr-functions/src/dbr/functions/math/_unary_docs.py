"""Passages that the docstrings of the elementwise functions of one floating input share.

Filled in by :func:`dbr.functions._docs.fill`; each function keeps its own
summary, formula and example.
"""

DOCS = {
    "args_float_any_dtype": """\
Args:
    x (Variable or array): input of a floating dtype (float16, float32
        or float64), any shape.

Returns:
    Variable: of ``x``'s shape and dtype.""",
    "args_float": """\
Args:
    x (Variable or array): input of a floating dtype, any shape.

Returns:
    Variable: of ``x``'s shape and dtype.""",
}
