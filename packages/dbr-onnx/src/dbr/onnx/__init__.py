"""dbr.onnx: export dbr models to ONNX with onnx_chainer's API.

:func:`export` runs a model's forward once while a function hook records the
graph, converts each FunctionNode to ONNX operators and returns the
``onnx.ModelProto``; :func:`export_testcase` also writes the inputs and
outputs in ONNX's backend-test layout; :mod:`dbr.onnx.replace_func` turns a
user function into one custom node.
"""

from dbr.onnx import replace_func
from dbr.onnx._graph import Context, FunctionConverterParams
from dbr.onnx._opset import MINIMUM_OPSET_VERSION, maximum_opset_version
from dbr.onnx.export import DataDependentConstantError, UnsupportedFunctionError, export
from dbr.onnx.export_testcase import export_testcase

__all__ = [
    "MINIMUM_OPSET_VERSION",
    "Context",
    "DataDependentConstantError",
    "FunctionConverterParams",
    "UnsupportedFunctionError",
    "export",
    "export_testcase",
    "maximum_opset_version",
    "replace_func",
]
