"""The built-in importers: ONNX operator -> :class:`~dbr.onnx.importers._util.Importer`.

One module per family, as the converters are grouped. Operators in :data:`ARRAY_ONLY`
make no differentiable value (comparisons, shapes, indices, rounding): they run on arrays
through ONNX's reference implementation, whatever their inputs.
"""

from dbr.onnx.importers import (
    activation,
    array,
    connection,
    math,
    noise,
    normalization,
    pooling,
    rnn,
)

importers = {}
for _module in (activation, array, connection, math, noise, normalization, pooling, rnn):
    importers.update(_module.IMPORTERS)

ARRAY_ONLY = frozenset(
    {
        "And", "ArgMax", "ArgMin", "BitShift", "Ceil", "ConstantOfShape", "Equal", "EyeLike",
        "Floor", "Greater", "GreaterOrEqual", "IsInf", "IsNaN", "Less", "LessOrEqual",
        "NonZero", "Not", "OneHot", "Or", "Range", "Round", "Shape", "Sign", "Size", "Xor",
    }
)  # fmt: skip
