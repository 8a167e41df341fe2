"""dbr.onnx: export dbr models to ONNX with onnx_chainer's API.

:func:`export` runs a model's forward once while a function hook records the
graph, converts each FunctionNode to ONNX operators and returns the
``onnx.ModelProto``; :func:`export_testcase` also writes the inputs and
outputs in ONNX's backend-test layout; :mod:`dbr.onnx.replace_func` turns a
user function into one custom node; :func:`load` imports an ONNX model as a
trainable :class:`ImportedChain` whose forward runs dbr functions.
``MINIMUM_OPSET_VERSION`` and ``MAXIMUM_OPSET_VERSION`` bound the opsets an export
may target (the latter is :func:`maximum_opset_version`, read when first asked
for); :mod:`dbr.onnx.testing`
holds onnx_chainer's test helpers and :mod:`dbr.onnx.onnx_helper` its
converter-writing helpers.
"""

from dbr.onnx import onnx_helper, replace_func
from dbr.onnx._graph import Context, FunctionConverterParams
from dbr.onnx._opset import MINIMUM_OPSET_VERSION, maximum_opset_version
from dbr.onnx.export import (
    DataDependentConstantError,
    RetainInputHook,
    UnsupportedFunctionError,
    export,
)
from dbr.onnx.export_testcase import export_testcase
from dbr.onnx.load import ImportedChain, UnsupportedOperatorError, load

__all__ = [
    "MAXIMUM_OPSET_VERSION",
    "MINIMUM_OPSET_VERSION",
    "Context",
    "DataDependentConstantError",
    "FunctionConverterParams",
    "ImportedChain",
    "RetainInputHook",
    "UnsupportedFunctionError",
    "UnsupportedOperatorError",
    "export",
    "export_testcase",
    "load",
    "maximum_opset_version",
    "onnx_helper",
    "replace_func",
]


def __getattr__(name):
    # The newest opset asks ONNX Runtime which opsets it loads: done when first read.
    if name == "MAXIMUM_OPSET_VERSION":
        return maximum_opset_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
