"""dbr.core's modules import one another without cycles (at module level)."""

import ast
import pathlib

import dbr.core

SOURCE = pathlib.Path(dbr.core.__file__).parent


def _module_name(path):
    parts = ("dbr", "core", *path.relative_to(SOURCE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _top_level_imports(tree):
    """Import statements run when the module is imported (not inside a def or class)."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.If, ast.Try)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(getattr(node, field, []))
        elif isinstance(node, ast.ExceptHandler):
            stack.extend(node.body)


def import_graph():
    """module name -> the dbr.core modules it imports at module level."""
    modules = {_module_name(p): p for p in SOURCE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        edges = set()
        for node in _top_level_imports(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
                    for _ in range(node.level - 1):
                        package = package.rsplit(".", 1)[0]
                    base = f"{package}.{base}" if base else package
                targets = [
                    f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                    for alias in node.names
                ]
            edges.update(t for t in targets if t in modules and t != name)
        graph[name] = edges
    return graph


def find_cycle(graph):
    """A list of modules forming a cycle, or None."""
    state = {}
    path = []

    def visit(node):
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == "open":
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_import_graph_is_a_dag():
    graph = import_graph()
    assert "dbr.core.variable" in graph and "dbr.core._backprop" in graph
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_variable_does_not_import_ops():
    assert not any(m.startswith("dbr.core.ops") for m in import_graph()["dbr.core.variable"])


def test_find_cycle_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
