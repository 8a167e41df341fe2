"""Port Chainer v7 programs to dbr by rewriting their import statements, and nothing else.

``python -m dbr.chainer.migrate PATH...`` rewrites every ``import`` of
``chainer``, ``chainerx``, ``chainermn`` and ``onnx_chainer`` (and of their
submodules) in the Python files given, or found under the folders given, so
that the names the program uses are bound to ``dbr.chainer``'s modules:

- ``import chainer`` becomes ``import dbr.chainer as chainer``;
- ``import chainer.functions as F``: ``import dbr.chainer.functions as F``;
- ``import chainer.links``: ``import dbr.chainer.links, dbr.chainer as chainer``;
- ``from chainer.training import extensions``: ``from dbr.chainer.training import extensions``;
- ``import chainermn``: ``import dbr.chainer.chainermn as chainermn``.

Names, attributes, comments and strings are left alone, unlike a textual
substitution: ``args.chainerx`` and ``'--chainerx'`` stay as they are. String
literals that spell a Chainer module path (``mock.patch('chainer.functions.relu')``,
``importlib.import_module('chainer.links')``) are reported, and rewritten only
with ``--module-strings``: whether each is a module path is the program's to say
(``'chainer'`` alone, often a folder name, is never taken for one).

Files are parsed first; a file that is not valid Python is reported and left
unchanged. Each rewritten file is replaced atomically.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import io
import os
import re
import sys
import tempfile
import tokenize
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "Migration", "PORTED_MODULES", "main", "migrate_source", "python_files", "write_atomically",
]  # fmt: skip

#: The top-level modules of Chainer v7 and where dbr puts each.
PORTED_MODULES = {
    "chainer": "dbr.chainer",
    "chainerx": "dbr.chainer.chainerx",
    "chainermn": "dbr.chainer.chainermn",
    "onnx_chainer": "dbr.chainer.onnx_chainer",
}

_ROOTS = "|".join(PORTED_MODULES)
_MODULE_PATH_STRING = re.compile(rf"""^[rRbBuU]?(['"])({_ROOTS})(\.[A-Za-z_][A-Za-z_0-9]*)+\1$""")


@dataclass
class Migration:
    """What migrating one source text gave: the new text, and what changed or was left."""

    source: str
    text: str
    changes: list[tuple[int, str, str]] = field(default_factory=list)
    notes: list[tuple[int, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        """Whether the text differs from the source."""
        return self.text != self.source


def _ported(name: str) -> str | None:
    root, dot, rest = name.partition(".")
    target = PORTED_MODULES.get(root)
    if target is None:
        return None
    return target + dot + rest


def _import_alias(alias: ast.alias) -> str | None:
    """The text replacing one name of an ``import`` statement, or None to keep it."""
    ported = _ported(alias.name)
    if ported is None:
        return None
    if alias.asname is not None:
        return f"{ported} as {alias.asname}"
    root = alias.name.partition(".")[0]
    if "." not in alias.name:
        return f"{ported} as {root}"
    # ``import chainer.links`` binds ``chainer``: bind it to dbr's, after loading the submodule.
    return f"{ported}, {PORTED_MODULES[root]} as {root}"


class _Lines:
    """Offsets into a text from (line, column); ast counts columns in UTF-8 bytes, tokenize not."""

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines(keepends=True)
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line))

    def at_byte(self, lineno: int, byte_col: int) -> int:
        line = self.lines[lineno - 1] if lineno <= len(self.lines) else ""
        return self.starts[lineno - 1] + len(line.encode("utf-8")[:byte_col].decode("utf-8"))

    def at_char(self, lineno: int, col: int) -> int:
        return self.starts[lineno - 1] + col


def _from_module_span(text: str, lines: _Lines, node: ast.ImportFrom) -> tuple[int, int]:
    """Offsets of the dotted module name between ``from`` and ``import`` in node's text."""
    start = lines.at_byte(node.lineno, node.col_offset)
    statement = text[start : lines.at_byte(node.end_lineno, node.end_col_offset)]
    local = _Lines(statement)
    name = []
    for token in tokenize.generate_tokens(io.StringIO(statement).readline):
        if token.type == tokenize.NAME and token.string == "import":
            break
        if token.type in (tokenize.NAME, tokenize.OP) and token.string != "from":
            name.append(token)
    return start + local.at_char(*name[0].start), start + local.at_char(*name[-1].end)


def migrate_source(source: str, module_strings: bool = False) -> Migration:
    """Rewrite the Chainer imports of one Python source; SyntaxError if it is not Python.

    With ``module_strings``, string literals that are exactly a Chainer module
    path (``'chainer.functions.relu'``, as ``mock.patch`` takes) are rewritten
    too; otherwise they are only noted.
    """
    tree = ast.parse(source)
    lines = _Lines(source)
    edits: list[tuple[int, int, str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                replacement = _import_alias(alias)
                if replacement is not None:
                    start = lines.at_byte(alias.lineno, alias.col_offset)
                    end = lines.at_byte(alias.end_lineno, alias.end_col_offset)
                    edits.append((start, end, replacement, alias.lineno))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            ported = _ported(node.module)
            if ported is not None:
                start, end = _from_module_span(source, lines, node)
                edits.append((start, end, ported, node.lineno))
    strings = _module_path_strings(source, lines)
    if module_strings:
        edits.extend(strings)
    migration = Migration(source, source)
    text = source
    for start, end, replacement, lineno in sorted(edits, reverse=True):
        migration.changes.append((lineno, text[start:end], replacement))
        text = text[:start] + replacement + text[end:]
    migration.text = text
    migration.changes.reverse()
    if not module_strings:
        migration.notes = [
            (lineno, f"string {source[start:end]} names a Chainer module path; left as it is")
            for start, end, _, lineno in strings
        ]
    return migration


def _module_path_strings(source: str, lines: _Lines) -> list[tuple[int, int, str, int]]:
    """Edits turning each string literal that is exactly a Chainer module path into dbr's."""
    edits = []
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        match = _MODULE_PATH_STRING.match(token.string) if token.type == tokenize.STRING else None
        if match:
            start = lines.at_char(*token.start)
            quote = match.start(2)
            new = token.string[:quote] + _ported(token.string[quote:-1]) + match.group(1)
            edits.append((start, lines.at_char(*token.end), new, token.start[0]))
    return edits


def python_files(paths: list[Path]) -> list[Path]:
    """The .py files named, and those under the folders named, in a stable order."""
    found = []
    for path in paths:
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*.py") if p.is_file()))
        elif path.is_file():
            found.append(path)
        else:
            raise FileNotFoundError(f"dbr.chainer.migrate: no such file or folder: {path}")
    return found


def write_atomically(path: Path, text: str) -> None:
    """Replace path's content with text in one step, keeping its permissions."""
    mode = path.stat().st_mode
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _read(path: Path) -> str:
    with open(path, encoding="utf-8", newline="") as source:
        return source.read()


def main(argv: list[str] | None = None) -> int:
    """The command line: rewrite (or with --check/--diff, only show) the imports of PATHs."""
    parser = argparse.ArgumentParser(
        prog="python -m dbr.chainer.migrate",
        description="Rewrite the Chainer imports of Python files to dbr.chainer's; nothing else.",
    )
    parser.add_argument("paths", nargs="+", type=Path, help="Python files, or folders to look in")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="change nothing; 1 if a file would")
    mode.add_argument("--diff", action="store_true", help="change nothing; print a unified diff")
    parser.add_argument(
        "--module-strings", action="store_true",
        help="also rewrite string literals that are a Chainer module path (mock.patch targets)",
    )  # fmt: skip
    parser.add_argument("-q", "--quiet", action="store_true", help="print only errors")
    args = parser.parse_args(argv)
    try:
        files = python_files(args.paths)
    except FileNotFoundError as error:
        parser.error(str(error))
    pending = failed = 0
    for path in files:
        try:
            migration = migrate_source(_read(path), args.module_strings)
        except (SyntaxError, UnicodeDecodeError, ValueError) as error:
            print(f"{path}: not migrated: {error}", file=sys.stderr)
            failed += 1
            continue
        if args.diff and migration.changed:
            before = migration.source.splitlines(keepends=True)
            after = migration.text.splitlines(keepends=True)
            sys.stdout.writelines(difflib.unified_diff(before, after, str(path), str(path)))
        elif not args.quiet:
            for lineno, old, new in migration.changes:
                print(f"{path}:{lineno}: {old} -> {new}")
            for lineno, note in migration.notes:
                print(f"{path}:{lineno}: {note}")
        if migration.changed:
            pending += 1
            if not (args.check or args.diff):
                write_atomically(path, migration.text)
    if not args.quiet:
        verb = "would change" if args.check or args.diff else "changed"
        failures = f"; {failed} not Python" if failed else ""
        print(f"{verb} {pending} of {len(files)} files{failures}")
    if failed:
        return 2
    return 1 if args.check and pending else 0


if __name__ == "__main__":
    sys.exit(main())
