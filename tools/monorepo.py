"""The packages under packages/ as data: metadata, declared sibling edges, wheel layout.

Shared by noxfile.py and tools/release.py, so that the sessions that test the
packages and the one that releases them read the same facts the same way.
Needs ``packaging`` (and ``tomli`` before Python 3.11).
"""

from __future__ import annotations

import email.parser
import re
import sys
import zipfile
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

# Requirements that only install usefully on a machine with a CUDA device.
CUDA_PREFIXES = ("cupy", "nvidia-")


class Package:
    """One distribution under packages/: its metadata, declared edges and paths."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.pyproject = tomllib.loads((directory / "pyproject.toml").read_text())
        project = self.pyproject["project"]
        self.dist = canonicalize_name(project["name"])
        self.version = project["version"]
        self.module = portion(self.dist)
        self.src = directory / "src"
        self.tests = directory / "tests"
        self.requirements = [Requirement(r) for r in project.get("dependencies", [])]
        self.extras = {
            extra: [Requirement(r) for r in reqs]
            for extra, reqs in project.get("optional-dependencies", {}).items()
        }

    @property
    def sibling_requirements(self) -> list[Requirement]:
        """The main dependencies that are siblings, as declared (with their ranges)."""
        return [r for r in self.requirements if is_sibling(r)]

    @property
    def sibling_requires(self) -> set[str]:
        """Sibling distributions among the main dependencies."""
        return {canonicalize_name(r.name) for r in self.sibling_requirements}

    @property
    def sibling_extras(self) -> set[str]:
        """Sibling distributions reached only through an extra."""
        names = {
            canonicalize_name(r.name)
            for reqs in self.extras.values()
            for r in reqs
            if is_sibling(r)
        }
        return names - self.sibling_requires

    @property
    def sibling_dev(self) -> set[str]:
        """Siblings in the Poetry dev group (path dependencies for development)."""
        group = self.pyproject.get("tool", {}).get("poetry", {}).get("group", {})
        dev = group.get("dev", {}).get("dependencies", {})
        return {canonicalize_name(name) for name in dev if name.startswith("dbr-")}

    @property
    def third_party(self) -> list[Requirement]:
        """Main third-party requirements."""
        return [r for r in self.requirements if not is_sibling(r)]

    @property
    def changelog_versions(self) -> list[str]:
        """The versions CHANGELOG.md has a ``## <version>`` section for, newest first."""
        text = (self.directory / "CHANGELOG.md").read_text()
        return re.findall(r"^## \[?v?([0-9][^\]\s]*)\]?", text, flags=re.MULTILINE)

    def cpu_extras(self, *, siblings: bool) -> list[str]:
        """Extras installable without a CUDA device; with siblings=False, none naming one."""
        return [
            extra
            for extra, reqs in self.extras.items()
            if not any(needs_cuda(r) for r in reqs)
            and (siblings or not any(is_sibling(r) for r in reqs))
        ]

    def extra_requirements(self, extras: list[str]) -> list[Requirement]:
        """Third-party requirements brought by the given extras."""
        return [r for e in extras for r in self.extras[e] if not is_sibling(r)]


def is_sibling(requirement: Requirement) -> bool:
    """Whether a requirement names one of this repository's distributions."""
    return canonicalize_name(requirement.name).startswith("dbr-")


def needs_cuda(requirement: Requirement) -> bool:
    """Whether a requirement only installs usefully with a CUDA device."""
    return canonicalize_name(requirement.name).startswith(CUDA_PREFIXES)


def portion(dist: str) -> str:
    """The namespace portion a distribution owns: dbr-core -> dbr.core."""
    return "dbr." + dist.removeprefix("dbr-")


def discover_packages(packages_dir: Path, order: list[str]) -> dict[str, Package]:
    """Every ``packages_dir/*/pyproject.toml``, by distribution name, those in ``order`` first."""
    found = [Package(p.parent) for p in packages_dir.glob("*/pyproject.toml")]
    found.sort(key=lambda p: (order.index(p.dist) if p.dist in order else len(order), p.dist))
    return {package.dist: package for package in found}


def sibling_closure(packages: dict[str, Package], dist: str) -> list[str]:
    """dist and every sibling it declares, transitively, in a stable order."""
    seen: list[str] = []
    pending = [dist]
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        if name not in packages:
            raise ValueError(f"{dist} needs {name}, which is not under packages/")
        seen.append(name)
        pending.extend(sorted(packages[name].sibling_requires))
    return seen


def siblings_first(packages: dict[str, Package], dists: list[str]) -> list[str]:
    """dists ordered so that each comes after every sibling it requires."""
    ordered: list[str] = []

    def visit(dist: str) -> None:
        if dist in ordered:
            return
        for sibling in sorted(packages[dist].sibling_requires):
            visit(sibling)
        ordered.append(dist)

    for dist in dists:
        visit(dist)
    return [dist for dist in ordered if dist in dists]


def wheel_layout_errors(package: Package, wheel: Path) -> list[str]:
    """What is wrong with a wheel: files outside the package's portion, requirements by path."""
    prefix = package.module.replace(".", "/") + "/"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        metadata_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(archive.read(metadata_name).decode())
    errors = []
    stray = [n for n in names if not n.startswith(prefix) and ".dist-info/" not in n]
    if stray:
        errors.append(f"{wheel.name} holds files outside {prefix}: {stray}")
    if not any(n.startswith(prefix) for n in names):
        errors.append(f"{wheel.name} holds no {prefix}")
    direct = [r for r in metadata.get_all("Requires-Dist") or [] if Requirement(r).url]
    if direct:
        errors.append(f"{wheel.name} requires by path or URL, not by range: {direct}")
    return errors
