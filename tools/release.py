"""Release packages of this repository to a package index: check, build, upload, tag.

Run by ``nox -s release -- DIST [DIST ...]`` or ``nox -s release -- --all``
(which installs twine, build and packaging), or directly with those installed::

    DBR_INDEX_URL=https://upload.example.org/legacy/ \\
    DBR_INDEX_SIMPLE_URL=https://example.org/simple/ \\
    TWINE_USERNAME=__token__ TWINE_PASSWORD=... python tools/release.py dbr-core

For each package, before anything is uploaded:

- its version is not on the index yet (``--all`` skips those that are);
- CHANGELOG.md has a ``## <version>`` section;
- each sibling it requires is required by a range with a lower and an upper
  bound, and some version on the index (or released in this run) is in it;
- nothing under its folder differs from the commit, and the tag
  ``<dist>-v<version>`` does not exist yet;
- its sdist and wheel build, the wheel holds only its namespace portion and no
  requirement by path, and ``twine check --strict`` passes (the README renders).

Then, siblings first, each package's files are uploaded with ``twine upload``
to ``DBR_INDEX_URL`` (credentials from twine's environment variables, never
from the repository) and the commit is tagged ``<dist>-v<version>``. The
index's simple API (PEP 503) is read at ``DBR_INDEX_SIMPLE_URL``, by default
``DBR_INDEX_URL`` with ``simple/`` appended (as on pypiserver).
"""

from __future__ import annotations

import argparse
import html.parser
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

sys.path.insert(0, str(Path(__file__).resolve().parent))
from monorepo import Package, discover_packages, siblings_first, wheel_layout_errors  # noqa: E402

UPLOAD_URL_VARIABLE = "DBR_INDEX_URL"
SIMPLE_URL_VARIABLE = "DBR_INDEX_SIMPLE_URL"
LOWER_BOUNDS = {">=", ">", "~="}
UPPER_BOUNDS = {"<", "<=", "~="}


class ReleaseError(Exception):
    """A package cannot be released; the message says which and why."""


class _Links(html.parser.HTMLParser):
    """The file names of a PEP 503 project page (the text of its anchors)."""

    def __init__(self):
        super().__init__()
        self.names: list[str] = []
        self._in_anchor = False

    def handle_starttag(self, tag, attrs):
        self._in_anchor = tag == "a"

    def handle_endtag(self, tag):
        self._in_anchor = False

    def handle_data(self, data):
        if self._in_anchor and data.strip():
            self.names.append(data.strip())


def _version_of(filename: str) -> Version | None:
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[1]
        return parse_sdist_filename(filename)[1]
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None


def index_versions(simple_url: str, dist: str) -> set[Version]:
    """The versions of dist on the index whose simple API is at simple_url (none if unknown)."""
    url = f"{simple_url.rstrip('/')}/{canonicalize_name(dist)}/"
    request = urllib.request.Request(url, headers={"Accept": "text/html"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            page = response.read().decode()
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return set()
        raise ReleaseError(f"release: reading {url} failed: HTTP {error.code}") from error
    except urllib.error.URLError as error:
        raise ReleaseError(f"release: cannot reach the index at {url}: {error.reason}") from error
    parser = _Links()
    parser.feed(page)
    return {v for v in map(_version_of, parser.names) if v is not None}


def range_errors(package: Package, available: dict[str, set[Version]]) -> list[str]:
    """Each sibling requirement that is not a bounded range including an available version."""
    errors = []
    for requirement in package.sibling_requirements:
        name = canonicalize_name(requirement.name)
        operators = {spec.operator for spec in requirement.specifier}
        where = f"{package.dist} {package.version} requires {requirement}"
        if requirement.url or not operators & LOWER_BOUNDS or not operators & UPPER_BOUNDS:
            errors.append(f"{where}: expected a range with a lower and an upper bound")
            continue
        versions = available.get(name, set())
        if not any(requirement.specifier.contains(v, prereleases=True) for v in versions):
            found = ", ".join(str(v) for v in sorted(versions)) or "none"
            errors.append(f"{where}, but the index has no version in that range (it has {found})")
    return errors


def _git(root: Path, *args: str) -> str:
    result = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise ReleaseError(f"release: git {' '.join(args)} failed: {result.stderr.strip()}")
    return result.stdout


def tag_name(package: Package) -> str:
    """The tag a release of package gets: ``<dist>-v<version>``."""
    return f"{package.dist}-v{package.version}"


def preflight_errors(
    package: Package,
    root: Path,
    on_index: set[Version],
    available: dict[str, set[Version]],
    *,
    tag: bool,
) -> list[str]:
    """Everything that stops package from being released, checked before any build."""
    errors = []
    if Version(package.version) in on_index:
        errors.append(f"{package.dist} {package.version} is already on the index")
    if package.version not in package.changelog_versions:
        errors.append(
            f"{package.dist}'s CHANGELOG.md has no '## {package.version}' section "
            f"(its newest is {next(iter(package.changelog_versions), 'none')})"
        )
    errors += range_errors(package, available)
    changed = _git(root, "status", "--porcelain", "--", str(package.directory)).strip()
    if changed:
        errors.append(
            f"{package.dist} has changes that are not committed:\n{changed}\n"
            "release from a commit, so that its tag names what was built"
        )
    if tag and _git(root, "tag", "--list", tag_name(package)).strip():
        errors.append(f"the tag {tag_name(package)} exists already")
    return errors


def build(package: Package, out_dir: Path) -> list[Path]:
    """package's sdist and wheel in out_dir, the wheel's layout checked."""
    if shutil.which("uv"):
        command = ["uv", "build", "--sdist", "--wheel", "--out-dir", str(out_dir)]
    else:
        command = [sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out_dir)]
    subprocess.run([*command, str(package.directory)], check=True, capture_output=True)
    wheels = list(out_dir.glob("*.whl"))
    sdists = list(out_dir.glob("*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        raise ReleaseError(f"release: building {package.dist} gave {sorted(out_dir.iterdir())}")
    for built in (*wheels, *sdists):
        if _version_of(built.name) != Version(package.version):
            raise ReleaseError(f"release: {built.name} is not version {package.version}")
    errors = wheel_layout_errors(package, wheels[0])
    if errors:
        raise ReleaseError("release: " + "; ".join(errors))
    return [*sdists, *wheels]


def twine(*args: str) -> None:
    """Run twine with the current interpreter; its failure is a ReleaseError."""
    result = subprocess.run([sys.executable, "-m", "twine", *args], check=False)
    if result.returncode != 0:
        raise ReleaseError(f"release: twine {args[0]} failed (exit {result.returncode})")


def _index_urls() -> tuple[str, str]:
    upload_url = os.environ.get(UPLOAD_URL_VARIABLE)
    if not upload_url:
        raise ReleaseError(
            f"release: set {UPLOAD_URL_VARIABLE} to the index's upload URL "
            "(and TWINE_USERNAME/TWINE_PASSWORD, or a token, for its credentials)"
        )
    simple_url = os.environ.get(SIMPLE_URL_VARIABLE) or upload_url.rstrip("/") + "/simple/"
    return upload_url, simple_url


def plan(
    packages: dict[str, Package], requested: list[str], *, every: bool, simple_url: str
) -> tuple[list[str], dict[str, set[Version]]]:
    """The packages to release, siblings first, and the versions available to each."""
    unknown = sorted(set(requested) - packages.keys())
    if unknown:
        raise ReleaseError(f"release: no package {unknown} under packages/; have {list(packages)}")
    available = {dist: index_versions(simple_url, dist) for dist in packages}
    if every:
        chosen = [d for d in packages if Version(packages[d].version) not in available[d]]
        for dist in sorted(packages.keys() - chosen):
            print(f"release: {dist} {packages[dist].version} is on the index; skipped")
    else:
        chosen = requested
    return siblings_first(packages, chosen), available


def release(root: Path, requested: list[str], *, every: bool, tag: bool, upload: bool) -> None:
    """Check every chosen package, build and check their files, then upload and tag them."""
    upload_url, simple_url = _index_urls()
    packages = discover_packages(root / "packages", [])
    order, available = plan(packages, requested, every=every, simple_url=simple_url)
    if not order:
        print("release: nothing to release")
        return
    after_release = {d: set(v) for d, v in available.items()}
    for dist in order:
        after_release[dist].add(Version(packages[dist].version))
    errors = []
    for dist in order:
        errors += preflight_errors(packages[dist], root, available[dist], after_release, tag=tag)
    if errors:
        raise ReleaseError("release: nothing uploaded:\n- " + "\n- ".join(errors))
    with tempfile.TemporaryDirectory(prefix="dbr-release-") as tmp:
        files = {dist: build(packages[dist], Path(tmp) / dist) for dist in order}
        twine("check", "--strict", *(str(f) for fs in files.values() for f in fs))
        if not upload:
            print(f"release: checked, not uploaded: {', '.join(order)}")
            return
        for dist in order:
            twine(
                "upload", "--non-interactive", "--disable-progress-bar",
                "--repository-url", upload_url, *(str(f) for f in files[dist]),
            )  # fmt: skip
            if tag:
                _git(root, "tag", tag_name(packages[dist]))
            print(f"release: {dist} {packages[dist].version} uploaded to {upload_url}")


def main(argv: list[str] | None = None) -> int:
    """Command line: distributions (or --all), --root, --no-tag, --dry-run."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dists", nargs="*", help="distributions to release, e.g. dbr-core")
    parser.add_argument("--all", action="store_true", help="every package not yet on the index")
    parser.add_argument(
        "--root", type=Path, default=Path(__file__).resolve().parent.parent,
        help="the repository (default: this one)",
    )  # fmt: skip
    parser.add_argument("--no-tag", action="store_true", help="upload without tagging")
    parser.add_argument(
        "--dry-run", action="store_true", help="check and build only: no upload, no tag"
    )
    args = parser.parse_args(argv)
    if bool(args.dists) == args.all:
        parser.error("name the distributions to release, or give --all (not both)")
    requested = [canonicalize_name(d) for d in args.dists]
    try:
        release(
            args.root.resolve(), requested, every=args.all,
            tag=not args.no_tag and not args.dry_run, upload=not args.dry_run,
        )  # fmt: skip
    except ReleaseError as error:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
