"""Protocol Buffers' text format (a ``.prototxt``), written from a schema and a dict of values."""

from dbr.links.caffe._wire import Schema


def _scalar(field, value):
    if field.kind == "string":
        escaped = value.replace("\\", "\\\\").replace('"', '\\"')
        return f'"{escaped}"'
    if field.kind == "bool":
        return "true" if value else "false"
    if field.names is not None:
        return field.names.get(int(value), str(int(value)))
    if field.kind in ("float", "double"):
        return repr(float(value))
    return str(int(value))


def to_text(schema, values, indent=0):
    """The text-format lines of a ``schema`` message holding ``values`` (see ``_wire.encode``)."""
    pad = " " * indent
    lines = []
    for field in schema.fields.values():
        if field.name not in values:
            continue
        value = values[field.name]
        for item in value if field.repeated else [value]:
            if isinstance(field.kind, Schema):
                lines.append(f"{pad}{field.name} {{")
                lines += to_text(field.kind, item, indent + 2)
                lines.append(f"{pad}}}")
            else:
                lines.append(f"{pad}{field.name}: {_scalar(field, item)}")
    return lines
