"""Protocol Buffers' wire format, read against a schema and written field by field.

Only what Caffe's files need: varints (signed, unsigned, bool, enum),
32- and 64-bit floats, strings and nested messages, repeated fields packed
or not. Every length is checked against what remains of its enclosing
message before it is read, so a damaged or truncated file is refused with
the field's path, never read past its end.
"""

import struct

import numpy

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5
_WIRE_NAMES = {VARINT: "varint", FIXED64: "64-bit", LENGTH: "length-delimited", FIXED32: "32-bit"}


class CaffeFormatError(ValueError):
    """A Caffe file that is not a well-formed message of the schema read.

    The message names the file, the field's path in the message (e.g.
    ``layer[3] 'conv1' > blobs[0] > data``) and what was expected and found.
    """


class Field:
    """One field of a message schema.

    Args:
        name (str): the attribute it is read into.
        kind (str or Schema): ``'int'`` (int32/int64), ``'uint'``, ``'bool'``,
            ``'enum'``, ``'float'``, ``'double'``, ``'string'``, or the
            :class:`Schema` of a nested message.
        repeated (bool): whether it is a list (numeric lists read into an array).
        default: the value of an absent scalar (proto2's ``[default = ...]``).
        names (dict): an enum's value names, for the text format.
    """

    __slots__ = ("name", "kind", "repeated", "default", "names")

    def __init__(self, name, kind, repeated=False, default=None, names=None):
        self.name = name
        self.names = names
        self.kind = kind
        self.repeated = repeated
        if default is None and not repeated and not isinstance(kind, Schema):
            default = {"string": "", "bool": False, "float": 0.0, "double": 0.0}.get(kind, 0)
        self.default = default


class Schema:
    """A message type: its name and ``{field number: Field}``."""

    __slots__ = ("name", "fields")

    def __init__(self, name, fields):
        self.name = name
        self.fields = fields


class Message:
    """A decoded message: one attribute per schema field; ``present`` holds the names read."""

    def __init__(self, schema):
        self.present = set()
        for field in schema.fields.values():
            if field.repeated:
                value = []
            elif isinstance(field.kind, Schema):
                value = Message(field.kind)
            else:
                value = field.default
            setattr(self, field.name, value)

    def has(self, name):
        """Whether the field ``name`` was in the file (proto2's ``HasField``)."""
        return name in self.present


_FIXED = {"float": ("<f4", 4, FIXED32), "double": ("<f8", 8, FIXED64)}
_VARINT_KINDS = ("int", "uint", "bool", "enum")


class Reader:
    """Decodes messages of ``buffer`` (bytes), naming ``source`` (the file) in errors."""

    def __init__(self, buffer, source):
        self.buffer = buffer
        self.source = source

    def fail(self, where, text):
        """Raise :class:`CaffeFormatError` for the field at ``where``."""
        raise CaffeFormatError(f"{self.source}: {where}: {text}")

    def varint(self, pos, end, where):
        """The varint at ``pos`` (which must end before ``end``) and the position after it."""
        buffer = self.buffer
        value = 0
        shift = 0
        while True:
            if pos >= end:
                self.fail(where, f"a varint runs past the end of its message (byte {end})")
            byte = buffer[pos]
            pos += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value, pos
            shift += 7
            if shift >= 70:
                self.fail(where, f"a varint longer than 10 bytes at byte {pos - 10}")

    def message(self, schema, start, end, where, into=None):
        """Decode bytes ``start:end`` as a ``schema`` message (merged into ``into`` if given)."""
        message = Message(schema) if into is None else into
        chunks = {}
        pos = start
        fields = schema.fields
        while pos < end:
            key, pos = self.varint(pos, end, where)
            number, wire = key >> 3, key & 7
            field = fields.get(number)
            if field is None:
                pos = self.skip(number, wire, pos, end, where)
                continue
            here = f"{where} > {field.name}"
            if wire == LENGTH:
                size, pos = self.varint(pos, end, here)
                if size > end - pos:
                    self.fail(
                        here,
                        f"declares {size} bytes at byte {pos}, but only {end - pos} remain "
                        f"in {schema.name} (the file is truncated or damaged)",
                    )
                value_end = pos + size
                self.length_field(message, field, pos, value_end, here, chunks)
                pos = value_end
            else:
                pos = self.scalar_field(message, field, wire, pos, end, here, chunks)
            message.present.add(field.name)
        for name, parts in chunks.items():
            arrays = [numpy.asarray(p) if isinstance(p, list) else p for p in parts]
            setattr(message, name, arrays[0] if len(arrays) == 1 else numpy.concatenate(arrays))
        return message

    def skip(self, number, wire, pos, end, where):
        """The position after an unknown field's value."""
        if wire == VARINT:
            return self.varint(pos, end, where)[1]
        if wire in (FIXED32, FIXED64):
            width = 4 if wire == FIXED32 else 8
        elif wire == LENGTH:
            width, pos = self.varint(pos, end, where)
        else:
            self.fail(where, f"field {number} has wire type {wire}, which is none of 0, 1, 2, 5")
        if width > end - pos:
            self.fail(
                where,
                f"field {number} declares {width} bytes at byte {pos}, "
                f"but only {end - pos} remain",
            )
        return pos + width

    def length_field(self, message, field, pos, end, where, chunks):
        kind = field.kind
        if isinstance(kind, Schema):
            if field.repeated:
                index = len(getattr(message, field.name))
                item = self.message(kind, pos, end, f"{where}[{index}]")
                getattr(message, field.name).append(item)
            else:
                self.message(kind, pos, end, where, getattr(message, field.name))
        elif kind == "string":
            text = bytes(self.buffer[pos:end]).decode("utf-8", errors="replace")
            if field.repeated:
                getattr(message, field.name).append(text)
            else:
                setattr(message, field.name, text)
        elif field.repeated and kind in _FIXED:
            dtype, width, _ = _FIXED[kind]
            if (end - pos) % width:
                self.fail(
                    where, f"packed {kind} data of {end - pos} bytes, not a multiple of {width}"
                )
            part = numpy.frombuffer(self.buffer, dtype, (end - pos) // width, pos)
            chunks.setdefault(field.name, []).append(part)
        elif field.repeated and kind in _VARINT_KINDS:
            values = []
            while pos < end:
                value, pos = self.varint(pos, end, where)
                values.append(_signed(value) if kind == "int" else value)
            chunks.setdefault(field.name, []).append(values)
        else:
            self.fail(where, f"expected a {kind} ({_wire_of(kind)}), got a length-delimited value")

    def scalar_field(self, message, field, wire, pos, end, where, chunks):
        kind = field.kind
        if kind in _VARINT_KINDS and wire == VARINT:
            value, pos = self.varint(pos, end, where)
            value = bool(value) if kind == "bool" else _signed(value) if kind == "int" else value
        elif kind in _FIXED and wire == _FIXED[kind][2]:
            dtype, width, _ = _FIXED[kind]
            if width > end - pos:
                self.fail(where, f"a {kind} at byte {pos} runs past the end of its message")
            value = float(numpy.frombuffer(self.buffer, dtype, 1, pos)[0])
            pos += width
        else:
            self.fail(
                where,
                f"expected a {kind if isinstance(kind, str) else kind.name} "
                f"({_wire_of(kind)}), got a {_WIRE_NAMES.get(wire, wire)} value",
            )
        if field.repeated:
            chunks.setdefault(field.name, []).append([value])
        else:
            setattr(message, field.name, value)
        return pos


def _signed(value):
    return value - (1 << 64) if value >= 1 << 63 else value


def _wire_of(kind):
    if kind in _VARINT_KINDS:
        return "varint"
    if kind in _FIXED:
        return _WIRE_NAMES[_FIXED[kind][2]]
    return "length-delimited"


def decode(schema, buffer, source):
    """Decode ``buffer`` (bytes) as one ``schema`` message; ``source`` names it in errors."""
    return Reader(buffer, source).message(schema, 0, len(buffer), schema.name)


def _varint_bytes(value):
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _length_delimited(number, data):
    return [_varint_bytes(number << 3 | LENGTH), _varint_bytes(len(data)), data]


def encode(schema, values):
    """The bytes of a ``schema`` message holding ``values``, fields in schema order.

    Args:
        schema (Schema): the message type.
        values (dict): field names to values: scalars, lists (numeric
            lists are written packed; arrays of floats as float32), or dicts
            (a nested message; a list of dicts for a repeated one).
    """
    parts = []
    for number, field in schema.fields.items():
        if field.name not in values:
            continue
        value = values[field.name]
        kind = field.kind
        items = value if field.repeated else [value]
        if isinstance(kind, Schema):
            for item in items:
                parts += _length_delimited(number, encode(kind, item))
        elif kind == "string":
            for item in items:
                parts += _length_delimited(number, item.encode("utf-8"))
        elif field.repeated and kind in _FIXED:
            data = numpy.ascontiguousarray(value, dtype=_FIXED[kind][0]).tobytes()
            parts += _length_delimited(number, data)
        elif field.repeated:
            parts += _length_delimited(number, b"".join(_varint_bytes(int(v)) for v in value))
        elif kind in _FIXED:
            parts += [_varint_bytes(number << 3 | _FIXED[kind][2]),
                      struct.pack("<f" if kind == "float" else "<d", value)]  # fmt: skip
        else:
            parts += [_varint_bytes(number << 3 | VARINT), _varint_bytes(int(value))]
    return b"".join(parts)
