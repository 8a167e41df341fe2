"""Print the import graph between dbr packages and check it against what each declares.

Run by ``nox -s deps`` with every ``packages/*/src`` on PYTHONPATH and a JSON
file naming, for each package, its module, source folder, the siblings it
requires, the siblings it reaches only through an extra, and the third-party
modules that only an extra provides. Fails when a package imports a dbr portion
it does not declare, or imports at module level what only an extra provides
(such an import belongs inside the function that needs it, or in a
``try``/``except ImportError`` guard).
"""

import ast
import json
import sys
from pathlib import Path

import grimp


def portion_of(module: str) -> str | None:
    """'dbr.core.variable' -> 'dbr.core'; None for a module outside the dbr namespace."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "dbr" and len(parts) > 1 else None


def module_file(src: Path, module: str) -> Path:
    """The source file of module under src."""
    base = src.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def eager_import_lines(path: Path) -> set[int]:
    """Line numbers of the imports that run when the module is imported.

    Imports inside a function, under ``if TYPE_CHECKING:``, or in a ``try`` body
    that handles ImportError are lazy or guarded and are left out.
    """
    eager: set[int] = set()

    def visit(nodes):
        for node in nodes:
            if isinstance(node, ast.Import | ast.ImportFrom):
                eager.add(node.lineno)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                continue
            elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
            elif isinstance(node, ast.Try) and any(
                handler.type is None
                or any(
                    name in ast.unparse(handler.type)
                    for name in ("ImportError", "ModuleNotFoundError")
                )
                for handler in node.handlers
            ):
                for handler in node.handlers:
                    visit(handler.body)
                visit(node.orelse)
                visit(node.finalbody)
            else:
                visit(ast.iter_child_nodes(node))

    visit(ast.parse(path.read_text(), filename=str(path)).body)
    return eager


def main(config_path: str) -> int:
    """Print the graph; return 1 if any import breaks a package's declarations."""
    packages = json.loads(Path(config_path).read_text())["packages"]
    graph = grimp.build_graph(*(p["module"] for p in packages), include_external_packages=True)
    problems = []
    print("Import graph (direct imports; 'lazy' = inside a function or guarded):")
    for package in packages:
        own = package["module"]
        src = Path(package["src"])
        allowed = set(package["requires"]) | set(package["lazy"])
        siblings: dict[str, set[str]] = {}
        third_party: dict[str, set[str]] = {}
        for importer in sorted(graph.find_descendants(own) | {own}):
            eager = eager_import_lines(module_file(src, importer))
            for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                portion = portion_of(imported)
                if portion == own:
                    continue
                details = graph.get_import_details(importer=importer, imported=imported)
                lines = [d["line_number"] for d in details]
                is_eager = any(line in eager for line in lines)
                where = f"{importer}:{','.join(map(str, lines))}"
                kind = "eager" if is_eager else "lazy"
                if portion is not None:
                    siblings.setdefault(portion, set()).add(kind)
                    if portion not in allowed:
                        problems.append(
                            f"{where} imports {imported}, but {package['dist']} does not declare"
                            f" it (declared: {', '.join(sorted(allowed)) or 'no sibling'})"
                        )
                    elif portion in package["lazy"] and is_eager:
                        problems.append(
                            f"{where} imports {imported} at module level; {package['dist']}"
                            " reaches it only through an extra, so import it lazily"
                        )
                elif (top := imported.split(".")[0]) not in sys.stdlib_module_names:
                    third_party.setdefault(top, set()).add(kind)
                    if top in package["extras_only_modules"] and is_eager:
                        problems.append(
                            f"{where} imports {top} at module level, but only an extra of"
                            f" {package['dist']} provides it; import it lazily"
                        )

        def show(found: dict[str, set[str]]) -> str:
            return ", ".join(
                name + ("" if "eager" in kinds else " (lazy)")
                for name, kinds in sorted(found.items())
            )

        print(f"  {own}")
        print(f"    dbr:         {show(siblings) or '-'}")
        print(f"    third-party: {show(third_party) or '-'}")
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
