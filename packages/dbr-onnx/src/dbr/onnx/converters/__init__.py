"""The built-in converters: FunctionNode name -> converter(params) returning ONNX nodes."""

import importlib

# One module per function family, each with its CONVERTERS table.
_FAMILIES = (
    "activation", "array", "connection", "evaluation", "loss", "math", "noise",
    "normalization", "pooling", "rnn",
)  # fmt: skip

converters = {}
for _family in _FAMILIES:
    converters.update(importlib.import_module(f"dbr.onnx.converters.{_family}").CONVERTERS)
