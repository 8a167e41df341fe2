"""The built-in converters: FunctionNode name -> converter(params) returning ONNX nodes."""

from dbr.onnx.converters import (
    activation,
    array,
    connection,
    loss,
    math,
    noise,
    normalization,
    pooling,
    rnn,
)

converters = {}
for _module in (activation, array, connection, loss, math, noise, normalization, pooling, rnn):
    converters.update(_module.CONVERTERS)
