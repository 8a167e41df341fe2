"""Which ONNX opsets an export may target: 7 up to what onnx and ONNX Runtime both know."""

import functools

import onnx
from onnx import helper

MINIMUM_OPSET_VERSION = 7


@functools.cache
def _runtime_max_opset():
    """The newest default-domain opset ONNX Runtime loads, or None without onnxruntime."""
    try:
        import onnxruntime
    except ImportError:
        return None
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "probe", [x], [y])
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4
    for version in range(onnx.defs.onnx_opset_version(), MINIMUM_OPSET_VERSION - 1, -1):
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", version)])
        model.ir_version = min(onnx.IR_VERSION, _ir_version_for(version))
        try:
            onnxruntime.InferenceSession(
                model.SerializeToString(), options, providers=["CPUExecutionProvider"]
            )
        except Exception:  # any refusal means: not this opset
            continue
        return version
    return None


def _ir_version_for(opset_version):
    """The IR version that onnx pairs with ``opset_version`` (the newest one it knows)."""
    for ir_version, table in _version_table():
        if table >= opset_version:
            return ir_version
    return onnx.IR_VERSION


@functools.cache
def _version_table():
    rows = {}
    for _release, ir_version, default_opset, *_ in helper.VERSION_TABLE:
        if ir_version not in rows or rows[ir_version] < default_opset:
            rows[ir_version] = default_opset
    return sorted(rows.items())


def maximum_opset_version():
    """The newest opset that the installed onnx and (if installed) ONNX Runtime both support."""
    newest = onnx.defs.onnx_opset_version()
    runtime = _runtime_max_opset()
    return newest if runtime is None else min(newest, runtime)


def resolve_opset_version(opset_version):
    """``opset_version`` checked against the supported range, or the newest one if None."""
    newest = maximum_opset_version()
    if opset_version is None:
        return newest
    if isinstance(opset_version, bool) or not isinstance(opset_version, int):
        raise TypeError(
            f"export: opset_version must be an int or None, got {type(opset_version).__name__}"
        )
    if not MINIMUM_OPSET_VERSION <= opset_version <= newest:
        raise ValueError(
            f"export: opset_version must be between {MINIMUM_OPSET_VERSION} and {newest} "
            f"(the newest that onnx {onnx.__version__} and the installed ONNX Runtime both "
            f"support), got {opset_version}"
        )
    return opset_version


def ir_version_for(opset_version):
    """The IR version to write with ``opset_version``, no newer than the runtime reads."""
    return min(onnx.IR_VERSION, _ir_version_for(opset_version))
