"""The README's table of FunctionNodes stays in step with dbr.functions and the converters."""

import importlib
import inspect
import pathlib
import pkgutil
import re

import dbr.core.ops
import dbr.functions
from dbr.core import FunctionNode
from dbr.onnx.converters import converters

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
ROW = re.compile(r"^\| `([\w.]+)` \| (.+) \|$")


def _table():
    text = README.read_text(encoding="utf-8")
    begin = text.index("<!-- function-table: begin -->")
    end = text.index("<!-- function-table: end -->")
    rows = {}
    for line in text[begin:end].splitlines():
        match = ROW.match(line)
        if match:
            assert match.group(1) not in rows, f"{match.group(1)} is in the table twice"
            rows[match.group(1)] = match.group(2)
    return rows


def _function_nodes():
    """Every FunctionNode class defined in dbr.functions and dbr.core.ops, by dotted path."""
    found = {}
    for package in (dbr.functions, dbr.core.ops):
        names = [package.__name__] + [
            m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
        ]
        for name in names:
            module = importlib.import_module(name)
            for value in vars(module).values():
                if (
                    inspect.isclass(value)
                    and issubclass(value, FunctionNode)
                    and value.__module__ == module.__name__
                ):
                    path = f"{value.__module__}.{value.__qualname__}"
                    found[path.removeprefix("dbr.")] = value
    return found


def test_every_function_node_is_in_the_table():
    rows = _table()
    missing = sorted(set(_function_nodes()) - set(rows))
    assert not missing, f"FunctionNodes missing from dbr-onnx's README table: {missing}"


def test_every_row_names_a_function_node():
    stale = sorted(set(_table()) - set(_function_nodes()))
    assert not stale, f"rows of dbr-onnx's README table that name no FunctionNode: {stale}"


def test_the_status_of_each_row_agrees_with_the_converters():
    nodes = _function_nodes()
    wrong = []
    for path, status in _table().items():
        cls = nodes.get(path)
        if cls is None:
            continue
        names = {cls.__name__, *re.findall(r"`(\w+)`", status)}
        converted = bool(names & set(converters))
        if converted != status.startswith("exported"):
            wrong.append(f"{path}: {status!r}")
    assert not wrong, "README rows whose status disagrees with the converters:\n" + "\n".join(
        wrong
    )


def test_the_table_counts_the_issue_functions_as_exported():
    rows = _table()
    for path in (
        "functions.normalization.layer_normalization.LayerNormalization",
        "functions.math.tensordot.TensorDot",
        "functions.math.einsum.EinSum",
        "functions.loss.mean_squared_error.MeanSquaredError",
        "functions.pooling.upsampling_2d.Upsampling2D",
        "functions.array.spatial_transformer_sampler.SpatialTransformerSampler",
    ):
        assert rows[path].startswith("exported"), path
