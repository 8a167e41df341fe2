"""The dependency edges between the distributions: README.md's table is the one source.

README.md's "Packages" table says, for each distribution, what it depends on:
main requirements first, then, after a ``;``, each extra as ``[name] dist``
(``dbr-core, filelock; [image] pillow, [gpu] dbr-gpu``). A sibling among the
main requirements is an allowed "requires" edge, one in an extra a "lazy"
edge, imported only on the code path that needs it. ``nox -s deps`` checks
every pyproject.toml against the table (:func:`declared_edge_errors`, which
also reports a row that no longer says what its pyproject.toml declares) and
every import against the pyproject files (tools/check_imports.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from monorepo import Package, is_sibling, portion
from packaging.utils import canonicalize_name

# Third-party distributions whose import name is not their normalised name.
MODULE_NAMES = {
    "pillow": "PIL",
    "scikit-learn": "sklearn",
    "tensorboardx": "tensorboardX",
    "cupy-cuda12x": "cupy",
    "cupy-cuda13x": "cupy",
    "nvidia-cudnn-frontend": "cudnn",
}
_ROW = re.compile(r"^\| (dbr-[a-z]+) \|.*\| ([^|]+) \|\s*$")
_EXTRA = re.compile(r"^\[([a-z0-9_-]+)\] (\S+)$")


class Row(NamedTuple):
    """A distribution's row of the table: its main requirements and its extras' ones."""

    requires: frozenset[str]
    extras: dict[str, frozenset[str]]

    @property
    def siblings(self) -> frozenset[str]:
        """The siblings it may require."""
        return frozenset(d for d in self.requires if d.startswith("dbr-"))

    @property
    def lazy(self) -> frozenset[str]:
        """The siblings it may reach through an extra only."""
        return frozenset(d for ds in self.extras.values() for d in ds if d.startswith("dbr-"))


def read_table(readme: Path) -> dict[str, Row]:
    """{distribution: Row} from README.md's table, in its order."""
    rows = {}
    for line in readme.read_text().splitlines():
        match = _ROW.match(line)
        if match is None:
            continue
        # A remark in parentheses ("(every CPU package above)") is for the reader.
        main, *extra_parts = re.sub(r"\s*\([^)]*\)", "", match.group(2)).split(";")
        requires = frozenset(canonicalize_name(d.strip()) for d in main.split(",") if d.strip())
        extras: dict[str, set[str]] = {}
        for entry in filter(None, map(str.strip, ",".join(extra_parts).split(","))):
            found = _EXTRA.match(entry)
            if found is None:
                raise ValueError(f"{readme}: {match.group(1)}'s extra {entry!r} is not "
                                 "'[name] distribution'")  # fmt: skip
            extras.setdefault(found.group(1), set()).add(canonicalize_name(found.group(2)))
        rows[match.group(1)] = Row(requires, {k: frozenset(v) for k, v in extras.items()})
    return rows


def declared_edge_errors(packages: dict[str, Package], table: dict[str, Row]) -> list[str]:
    """Each package's declared requirements checked against its row of the table."""
    errors = []
    core = packages["dbr-core"].requirements if "dbr-core" in packages else []
    shared = frozenset(canonicalize_name(r.name) for r in core)
    for dist, package in packages.items():
        row = table.get(dist)
        if row is None:
            errors.append(f"{dist} has no row in README.md's table of packages")
            continue
        for name in sorted(package.sibling_requires - row.siblings):
            allowed_as = "only in an extra" if name in row.lazy else "no such edge"
            errors.append(f"{dist} requires {name}; README.md's table allows {allowed_as}")
        for name in sorted(package.sibling_extras - row.siblings - row.lazy):
            errors.append(f"{dist} has an extra with {name}; README.md's table does not allow it")
        for name in sorted(package.sibling_dev - row.siblings - row.lazy):
            errors.append(f"{dist}'s dev group has {name}; README.md's table does not allow it")
        for name in sorted((package.sibling_requires | package.sibling_extras) - packages.keys()):
            errors.append(f"{dist} declares {name}, which is not under packages/")
        for requirement in package.requirements:
            if requirement.url:
                errors.append(f"{dist} requires {requirement} by path or URL; use a range")
        # What dbr-core requires (NumPy) every package has; its row says it once.
        declared = frozenset(canonicalize_name(r.name) for r in package.requirements)
        if declared - shared != row.requires - shared:
            errors.append(f"README.md's table says {dist} depends on {sorted(row.requires)}; "
                          f"its pyproject.toml declares {sorted(declared)}")  # fmt: skip
        for extra, reqs in package.extras.items():
            names = frozenset(canonicalize_name(r.name) for r in reqs)
            listed = row.extras.get(extra)
            if listed is not None and listed != names:
                errors.append(f"README.md's table gives {dist}[{extra}] {sorted(listed)}; its "
                              f"pyproject.toml {sorted(names)}")  # fmt: skip
    return errors


def module_name(dist: str) -> str:
    """The module a third-party distribution installs (``scikit-learn``: ``sklearn``)."""
    dist = canonicalize_name(dist)
    return MODULE_NAMES.get(dist, dist.replace("-", "_"))


def import_graph_input(packages: dict[str, Package]) -> dict:
    """What tools/check_imports.py needs: each package's modules and declared edges."""
    result = []
    for package in packages.values():
        extras_only = {
            module_name(r.name) for reqs in package.extras.values() for r in reqs
            if not is_sibling(r)
        } - {module_name(r.name) for r in package.third_party}  # fmt: skip
        result.append({
            "dist": package.dist,
            "module": package.module,
            "src": str(package.src),
            "requires": sorted(map(portion, package.sibling_requires)),
            "lazy": sorted(map(portion, package.sibling_extras)),
            "extras_only_modules": sorted(extras_only),
        })  # fmt: skip
    return {"packages": result}
