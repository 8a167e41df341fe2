"""Converters of the recurrent cells."""

from dbr.onnx.converters._util import Chain


def _lstm(p):
    c = Chain(p)
    c_prev, x = p.input_names
    c_shape = p.input_arrays[0].shape
    x_shape = p.input_arrays[1].shape
    units = c_shape[1]
    # Unit j's gates a, i, f, o sit at columns 4j .. 4j+3 of x.
    gates = c.op("Reshape", [x, c.const([x_shape[0], units, 4, *x_shape[2:]])])
    a, i, f, o = c.op("Split", [gates, c.const([1, 1, 1, 1])], n_outputs=4, axis=2)
    a, i, f, o = (c.op("Squeeze", [g, c.const([2])]) for g in (a, i, f, o))
    rows = x_shape[0]
    c_head = c_prev
    if rows < c_shape[0]:
        c_head = c.op("Slice", [c_prev, c.const([0]), c.const([rows]), c.const([0])])
    new_c_name = p.output_names[0] if rows == c_shape[0] else None
    new_c = c.op(
        "Add",
        [
            c.op("Mul", [c.op("Tanh", [a]), c.op("Sigmoid", [i])]),
            c.op("Mul", [c_head, c.op("Sigmoid", [f])]),
        ],
        None if new_c_name is None else [new_c_name],
    )
    if rows < c_shape[0]:
        rest = c.op("Slice", [c_prev, c.const([rows]), c.const([c_shape[0]]), c.const([0])])
        c.op("Concat", [new_c, rest], [p.output_names[0]], axis=0)
    c.op("Mul", [c.op("Tanh", [new_c]), c.op("Sigmoid", [o])], [p.output_names[1]])
    return c.nodes


CONVERTERS = {
    "LSTM": _lstm,
}
