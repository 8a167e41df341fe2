"""The wheels nox sessions install: each package's, built once per nox run, layout checked.

Each nox run builds into its own folder under ``.nox/_wheels`` (named after
its process), so that two nox commands in one checkout (``nox`` and ``nox -s
build`` side by side) never remove each other's wheels; folders left by runs
that died are removed, and the run's own when it ends.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from pathlib import Path

from monorepo import Package, wheel_layout_errors

_built: dict[Path, Path] = {}


@functools.cache
def own_folder(base: Path) -> Path:
    """This run's folder under ``base``, after removing those of runs that are gone."""
    base.mkdir(parents=True, exist_ok=True)
    for stale in base.iterdir():
        run = stale.name.split("-")
        if run[0] != "run" or not run[1].isdigit() or not _process_alive(int(run[1])):
            shutil.rmtree(stale, ignore_errors=True)
    own = Path(tempfile.mkdtemp(prefix=f"run-{os.getpid()}-", dir=base))
    atexit.register(shutil.rmtree, own, ignore_errors=True)
    return own


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def build_wheel(session, package: Package, base: Path, out_dir: Path | None = None) -> Path:
    """package's wheel, built once per run under ``base`` (copied to out_dir if given).

    A wheel holding anything but its namespace portion, or declaring a sibling
    by path instead of a range, fails the session.
    """
    wheel = _built.get(package.directory)
    if wheel is None:
        build_dir = Path(tempfile.mkdtemp(prefix=f"{package.dist}-", dir=own_folder(base)))
        if shutil.which("uv"):
            session.run(
                "uv", "build", "--wheel", "--out-dir", str(build_dir), str(package.directory),
                external=True, silent=True,
            )  # fmt: skip
        else:
            session.install("build")
            session.run(
                "python", "-m", "build", "--wheel", "--outdir", str(build_dir),
                str(package.directory), silent=True,
            )  # fmt: skip
        (wheel,) = build_dir.glob("*.whl")
        errors = wheel_layout_errors(package, wheel)
        if errors:
            session.error("; ".join(errors))
        _built[package.directory] = wheel
    if out_dir is None:
        return wheel
    out_dir.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy2(wheel, out_dir))


def wheel_requirements(session, packages: list[Package], base: Path, extras=None) -> list[str]:
    """PEP 508 direct references to the packages' wheels (``extras``: {dist: [extra]})."""
    extras = extras or {}
    requirements = []
    for package in packages:
        wheel = build_wheel(session, package, base)
        chosen = extras.get(package.dist, [])
        suffix = f"[{','.join(chosen)}]" if chosen else ""
        requirements.append(f"{package.dist}{suffix} @ {wheel.as_uri()}")
    return requirements
