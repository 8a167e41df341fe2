"""Sessions for the dbr monorepo: each package's tests against its built wheel, alone.

Every package under ``packages/`` is tested as a user gets it: its wheel, the
wheels of the siblings it declares and their third-party dependencies from the
registry, installed into a fresh environment, with tests run from a folder
where the source tree is not importable. ``nox`` runs the default sessions;
``nox -l`` lists them all.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import nox
from nox.command import CommandFailed
from packaging.utils import canonicalize_name

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
import monorepo  # noqa: E402  (tools/ is no package; the path above finds it)
from monorepo import (  # noqa: E402
    Package,
    discover_packages,
    is_sibling,
    portion,
    wheel_layout_errors,
)

nox.needs_version = ">=2024.4.15"
nox.options.default_venv_backend = "uv|virtualenv"

ROOT = Path(__file__).resolve().parent
PACKAGES_DIR = ROOT / "packages"
WHEELS_DIR = ROOT / ".nox" / "_wheels"
TOOLS = ROOT / "tools"

# DESIGN.md's table of allowed edges between distributions, and nothing else:
# "requires" may be main dependencies; "lazy" only extras, imported inside the
# code path that needs them. A new edge changes DESIGN.md and this dict together.
ALLOWED_EDGES: dict[str, dict[str, frozenset[str]]] = {
    "dbr-core": {"requires": frozenset(), "lazy": frozenset()},
    "dbr-gpu": {"requires": frozenset({"dbr-core"}), "lazy": frozenset()},
    "dbr-functions": {"requires": frozenset({"dbr-core"}), "lazy": frozenset({"dbr-gpu"})},
    "dbr-links": {"requires": frozenset({"dbr-core", "dbr-functions"}), "lazy": frozenset()},
    "dbr-datasets": {"requires": frozenset({"dbr-core"}), "lazy": frozenset({"dbr-gpu"})},
    "dbr-training": {
        "requires": frozenset({"dbr-core", "dbr-datasets"}),
        "lazy": frozenset({"dbr-gpu"}),
    },
    "dbr-distributed": {
        "requires": frozenset(
            {"dbr-core", "dbr-functions", "dbr-links", "dbr-datasets", "dbr-training"}
        ),
        "lazy": frozenset({"dbr-gpu"}),
    },
    "dbr-onnx": {"requires": frozenset({"dbr-core", "dbr-functions"}), "lazy": frozenset()},
    "dbr-chainer": {
        "requires": frozenset(
            {
                "dbr-core",
                "dbr-functions",
                "dbr-links",
                "dbr-datasets",
                "dbr-training",
                "dbr-distributed",
                "dbr-onnx",
            }
        ),
        "lazy": frozenset({"dbr-gpu"}),
    },
}

# Third-party distributions whose import name is not their normalised name.
MODULE_NAMES = {
    "pillow": "PIL",
    "scikit-learn": "sklearn",
    "tensorboardx": "tensorboardX",
    "cupy-cuda12x": "cupy",
    "cupy-cuda13x": "cupy",
    "nvidia-cudnn-frontend": "cudnn",
}

LINT_TOOLS = ["ruff==0.17.6"]
RELEASE_TOOLS = ["twine>=6.1", "build>=1.2", "packaging>=24.2"]
DEPS_TOOLS = ["grimp>=3.19", "deptry>=0.25"]
# pytest 8.2: the doctest runs need consider_namespace_packages to import the
# installed dbr.<name> modules under their own names (new in 8.1, whose importlib
# mode still fails on dbr.onnx's modules).
TEST_TOOLS = ["pytest>=8.2", "pytest-timeout>=2.3.1"]
# tools/gpu_check_run.py shares the suites' workers out with pytest-xdist.
GPU_TOOLS = ["pytest-xdist>=3.6"]
# What Chainer's own tests import besides Chainer's dependencies, and the NumPy
# and SciPy its reference outcomes were taken with: some of its tests call what
# NumPy 2 removed (numpy.product) or overflow under NumPy 2's scalar promotion.
SUITE_TOOLS = ["mock>=5", "six>=1.16", "numpy==1.26.4", "scipy>=1.15,<1.16"]
# pytest-timeout's limit on each test (setup and teardown included), so that a
# hang fails its session in minutes instead of stalling CI until the job's own
# limit. Honest package tests take seconds (their slowest subprocesses are
# bounded at 120 s, one GPU test's at 300 s); integration tests train examples
# end to end, with subprocesses bounded at 600 s, so they get more. The default
# 'signal' method fails just the hung test; the 'thread' method would add a
# thread to every test, and forking with a thread alive is deprecated (3.12+).
TEST_TIMEOUT_S = 300
INTEGRATION_TIMEOUT_S = 900
# Packages whose tests launch ``mpiexec``: their session installs an MPI (the
# package's [mpich] extra) from the start.
MPI_PACKAGES = {"dbr-distributed": ["mpich"]}
# Declared distributions that provide a library or a program, never an import.
RUNTIME_ONLY = ["mpich"]
# Sphinx 8.1 is the last that runs on Python 3.10, which the packages support.
DOCS_TOOLS = ["sphinx==8.1.3", "furo==2025.12.19", "sphinx-mathjax-offline==0.0.2"]
DOCS = ROOT / "docs"


def _module_name(dist: str) -> str:
    dist = canonicalize_name(dist)
    return MODULE_NAMES.get(dist, dist.replace("-", "_"))


PACKAGES = discover_packages(PACKAGES_DIR, list(ALLOWED_EDGES))


def sibling_closure(dist: str) -> list[str]:
    """dist and every sibling it declares, transitively, in a stable order."""
    return monorepo.sibling_closure(PACKAGES, dist)


@functools.cache
def wheels_dir() -> Path:
    """This nox run's own folder under .nox/_wheels, removed when the run ends.

    Each run builds into a folder named after its process, so that two nox
    commands in one checkout (``nox`` and ``nox -s build`` side by side) never
    remove each other's wheels; folders left by runs that died are removed.
    """
    WHEELS_DIR.mkdir(parents=True, exist_ok=True)
    for stale in WHEELS_DIR.iterdir():
        run = stale.name.split("-")
        if run[0] != "run" or not run[1].isdigit() or not _process_alive(int(run[1])):
            shutil.rmtree(stale, ignore_errors=True)
    own = Path(tempfile.mkdtemp(prefix=f"run-{os.getpid()}-", dir=WHEELS_DIR))
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


_built_wheels: dict[Path, Path] = {}


def build_wheel(session: nox.Session, package: Package, out_dir: Path | None = None) -> Path:
    """package's wheel, built once per nox run (copied to out_dir if given), layout checked."""
    wheel = _built_wheels.get(package.directory)
    if wheel is None:
        build_dir = Path(tempfile.mkdtemp(prefix=f"{package.dist}-", dir=wheels_dir()))
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
        check_wheel(session, package, wheel)
        _built_wheels[package.directory] = wheel
    if out_dir is None:
        return wheel
    out_dir.mkdir(parents=True, exist_ok=True)
    return Path(shutil.copy2(wheel, out_dir))


def check_wheel(session: nox.Session, package: Package, wheel: Path) -> None:
    """A wheel holds only its namespace portion and declares ranges, never paths."""
    errors = wheel_layout_errors(package, wheel)
    if errors:
        session.error("; ".join(errors))


def wheel_requirements(
    session: nox.Session, dists: list[str], extras: dict[str, list[str]] | None = None
) -> list[str]:
    """PEP 508 direct references to the local wheels, so no dbr-* comes from a registry."""
    extras = extras or {}
    requirements = []
    for dist in dists:
        wheel = build_wheel(session, PACKAGES[dist])
        chosen = extras.get(dist, [])
        suffix = f"[{','.join(chosen)}]" if chosen else ""
        requirements.append(f"{dist}{suffix} @ {wheel.as_uri()}")
    return requirements


def check_installed(session: nox.Session, dists: list[str]) -> None:
    """Import each package from the venv's site-packages, installed from a local wheel."""
    modules = json.dumps({dist: PACKAGES[dist].module for dist in dists})
    with session.chdir(session.create_tmp()):
        session.run("python", str(TOOLS / "check_installed.py"), modules, env={"PYTHONPATH": None})


def run_pytest(
    session: nox.Session, package: Package, *args: str, tests: bool = True, **kwargs
) -> None:
    """pytest on package's tests, from outside the source tree, with its pytest config."""
    with session.chdir(session.create_tmp()):
        session.run(
            "pytest", *([str(package.tests)] if tests else []),
            "-c", str(package.directory / "pyproject.toml"),
            "--rootdir", str(package.directory),
            f"--timeout={TEST_TIMEOUT_S}",
            *args, *session.posargs,
            env={"PYTHONPATH": None}, **kwargs,
        )  # fmt: skip


def installed_path(session: nox.Session, package: Package) -> str:
    """The folder the venv imports package's namespace portion from (site-packages)."""
    code = f"import {package.module} as m; print(m.__path__[0])"
    with session.chdir(session.create_tmp()):
        out = session.run("python", "-c", code, env={"PYTHONPATH": None}, silent=True)
    return out.strip().splitlines()[-1]


def run_doctests(session: nox.Session, package: Package, *args: str) -> None:
    """Every docstring example in package's installed modules, with its pytest config.

    The package's pyproject.toml sets the flags (ELLIPSIS, NORMALIZE_WHITESPACE)
    and consider_namespace_packages, so each module is imported once, under its
    own name, from site-packages rather than from the source tree. A package
    without examples yet collects nothing (pytest's exit status 5).
    """
    run_pytest(
        session, package, "--doctest-modules", installed_path(session, package),
        *args, tests=False, success_codes=[0, 5],
    )  # fmt: skip


def test_package(session: nox.Session, package: Package) -> None:
    """Install package's wheel alone (plus declared siblings), import it, then run its tests.

    The first run has no extra installed: it proves the package works with
    exactly its main dependencies (tests of extras skip, naming the extra).
    Then the extras that need neither a GPU nor a sibling are installed and the
    tests run again, so the tests of those extras run in this session too.
    Last, the docstring examples of the installed modules run (with the extras).
    """
    dists = sibling_closure(package.dist)
    mpi_extras = MPI_PACKAGES.get(package.dist)
    if mpi_extras is not None:
        # Without an MPI launcher there is nothing to test, so the first run
        # already has the [mpich] extra (mpiexec); every test has a timeout.
        extras = {package.dist: mpi_extras}
        session.install(*wheel_requirements(session, dists, extras), *TEST_TOOLS)
        check_installed(session, dists)
        run_pytest(session, package)
        run_doctests(session, package)
        return
    session.install(*wheel_requirements(session, dists), *TEST_TOOLS)
    check_installed(session, dists)
    run_pytest(session, package)
    extras = package.cpu_extras(siblings=False)
    if extras:
        session.install(*wheel_requirements(session, [package.dist], {package.dist: extras}))
        session.log(f"again with the extras {extras}")
        run_pytest(session, package)
    run_doctests(session, package)


def _make_tests_session(package: Package):
    def tests(session: nox.Session) -> None:
        test_package(session, package)

    tests.__doc__ = f"Tests of {package.dist} against its wheel, with only what it declares."
    return nox.session(tests, name=f"tests-{package.dist}", tags=["tests"])


for _package in PACKAGES.values():
    _make_tests_session(_package)


@nox.session(venv_backend="uv")
@nox.parametrize("dist", [nox.param(dist, id=dist) for dist in PACKAGES])
def lowest(session: nox.Session, dist: str) -> None:
    """A package's tests with its third-party dependencies at the lowest versions allowed."""
    package = PACKAGES[dist]
    extras = package.cpu_extras(siblings=False)
    declared = package.third_party + package.extra_requirements(extras)
    session.install(
        "--resolution", "lowest-direct",
        *wheel_requirements(session, sibling_closure(dist), {dist: extras}),
        *(str(r) for r in declared), *TEST_TOOLS,
    )  # fmt: skip
    report = json.dumps([[r.name, str(r.specifier)] for r in declared])
    session.run("python", str(TOOLS / "check_lowest.py"), report)
    run_pytest(session, package)
    run_doctests(session, package)


@nox.session
def integration(session: nox.Session) -> None:
    """Every package's wheel with all its extras that need no GPU, then tests-integration."""
    extras = {dist: package.cpu_extras(siblings=True) for dist, package in PACKAGES.items()}
    session.install(*wheel_requirements(session, list(PACKAGES), extras), *TEST_TOOLS)
    check_installed(session, list(PACKAGES))
    with session.chdir(session.create_tmp()):
        session.run(
            "pytest", str(ROOT / "tests-integration"),
            "--rootdir", str(ROOT / "tests-integration"),
            # nox -s package-index runs it, with the index server and release tools.
            "--ignore", str(ROOT / "tests-integration" / "test_package_index.py"),
            f"--timeout={INTEGRATION_TIMEOUT_S}",
            *session.posargs, env={"PYTHONPATH": None},
        )  # fmt: skip


@nox.session(name="package-index")
def package_index(session: nox.Session) -> None:
    """tests-integration/test_package_index.py: releases to a local index, pinned installs from it.

    A pypiserver on 127.0.0.1 takes every package from ``nox -s release`` (run
    inside the test, on a committed copy of the tree); fresh virtual
    environments then install from it as downstream projects do.
    """
    session.install("pypiserver[passlib]>=2.4", "nox>=2024.4.15", *RELEASE_TOOLS, *TEST_TOOLS)
    tests = ROOT / "tests-integration"
    with session.chdir(session.create_tmp()):
        session.run(
            "pytest", str(tests / "test_package_index.py"), "--rootdir", str(tests),
            f"--timeout={INTEGRATION_TIMEOUT_S}", *session.posargs, env={"PYTHONPATH": None},
        )  # fmt: skip


@nox.session(name="chainer-suite")
def chainer_suite(session: nox.Session) -> None:
    """Chainer v7.8.1's own tests, migrated, against the wheels: tools/chainer_suite.py.

    Runs Chainer's suite, then ChainerMN's (each file under the [mpich]
    extra's ``mpiexec -n 2``), then onnx_chainer's, and compares every outcome
    with real Chainer's, ChainerMN's and onnx_chainer's (../shared/chainer-v7.8.1,
    or DBR_CHAINER_SUITE); fails
    unless each test that passes there passes or is a listed deviation
    (tests-integration/<suite>_suite_deviations.tsv); skips, saying where it
    looked, when the suite is absent. About four minutes on two cores.
    Arguments after ``--`` go to the script instead and run one suite
    (``--suite chainer|chainermn|onnx_chainer``, default chainer; ``--files``,
    ``--sample N``, ``--out``, ``--migration sed``).
    """
    suite = Path(os.environ.get("DBR_CHAINER_SUITE", ROOT.parent / "shared" / "chainer-v7.8.1"))
    if not (suite / "chainer-7.8.1-outcomes.tsv.gz").is_file():
        session.skip(f"Chainer's own suite is absent: no outcomes file under {suite}")
    extras = {dist: package.cpu_extras(siblings=True) for dist, package in PACKAGES.items()}
    session.install(
        *wheel_requirements(session, list(PACKAGES), extras), *TEST_TOOLS, *SUITE_TOOLS
    )
    work = Path(session.create_tmp()) / "chainer-suite"
    script = str(TOOLS / "chainer_suite.py")
    if session.posargs:
        session.run("python", script, "--work", str(work), *session.posargs)
        return
    for name in ("chainer", "chainermn", "onnx_chainer"):
        session.run("python", script, "--suite", name, "--work", str(work / name))


@nox.session
def docs(session: nox.Session) -> None:
    """The site into docs/_build/html from the installed wheels, then the guides' examples.

    Both builds treat every warning as an error: a docstring that is not valid
    reStructuredText, a public name on no reference page (docs/_ext/apiref.py),
    a broken internal reference, or a guide's example that fails or prints
    something else. Nothing is fetched from the network.
    """
    extras = {dist: package.cpu_extras(siblings=True) for dist, package in PACKAGES.items()}
    session.install(*wheel_requirements(session, list(PACKAGES), extras), *DOCS_TOOLS)
    build = DOCS / "_build"
    for builder in ("html", "doctest"):
        session.run(
            "sphinx-build", "-b", builder, "-W", "--keep-going", "-q",
            "-d", str(build / "doctrees"), str(DOCS), str(build / builder),
            env={"PYTHONPATH": None},
        )  # fmt: skip


@nox.session(name="docs-browser", venv_backend="none")
def docs_browser(session: nox.Session) -> None:
    """The site that ``nox -s docs`` built, opened in headless Chromium (installed separately).

    tools/check_docs_browser.py serves docs/_build/html on a local port and,
    through the DevTools protocol, checks that the index, a guide, a reference
    page and a search render (title, navigation, highlighted code, results)
    without console errors, saving a screenshot of each into
    docs/_build/screenshots. It needs Debian's ``chromium`` (``.ci/run``
    installs it) and nothing from PyPI.
    """
    site = DOCS / "_build" / "html"
    if not (site / "index.html").is_file():
        session.error(f"no built site at {site}: run nox -s docs first")
    session.run(
        sys.executable, str(TOOLS / "check_docs_browser.py"),
        "--site", str(site), "--out", str(DOCS / "_build" / "screenshots"),
        *session.posargs, external=True,
    )  # fmt: skip


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check over the whole repository."""
    session.install(*LINT_TOOLS)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def deps(session: nox.Session) -> None:
    """The import graph, one check per concern; prints the graph.

    - declared siblings (main, extras, dev group) against DESIGN.md's table:
      :func:`declared_edge_errors`, from the pyproject files alone;
    - imported siblings against the declared ones, and module-level imports of
      what only an extra provides: tools/check_imports.py. With the first check
      this also keeps every import inside DESIGN.md's table, which import-linter
      contracts generated from the same table used to check a second time;
    - imported third-party modules against the declared requirements: deptry.
    """
    errors = declared_edge_errors()
    for error in errors:
        session.warn(error)
    if errors:
        session.error("declared dependencies break DESIGN.md's table (see above)")
    session.install(*DEPS_TOOLS)
    sources = os.pathsep.join(str(p.src) for p in PACKAGES.values())
    tmp = Path(session.create_tmp())
    failed = []

    def check(name: str, *args: str, env: dict[str, str] | None = None) -> None:
        try:
            session.run(*args, env=env)
        except CommandFailed:
            failed.append(name)

    graph_input = tmp / "packages.json"
    graph_input.write_text(json.dumps(import_graph_input(), indent=2))
    check(
        "imports against declared siblings and extras",
        "python", str(TOOLS / "check_imports.py"), str(graph_input),
        env={"PYTHONPATH": sources},
    )  # fmt: skip

    module_map = ",".join(f"{dist}={module}" for dist, module in MODULE_NAMES.items())
    for package in PACKAGES.values():
        with session.chdir(package.directory):
            check(
                f"deptry on {package.dist}",
                "deptry", "src",
                "--known-first-party", "dbr",
                # CuPy reaches a package only through dbr-gpu (its [gpu] extra), so a
                # lazy cupy/cupyx/cupy_backends import on a GPU code path is declared
                # there; ``nvidia`` is the namespace of NVIDIA's library wheels (libcudnn)
                # that dbr-gpu looks into when present, never a requirement. ``mpich``
                # (dbr-distributed's [mpich] extra) brings the MPI library and ``mpiexec``
                # that mpi4py loads at run time: nothing imports it.
                "--per-rule-ignores",
                "DEP001=cupy|cupyx|cupy_backends|nvidia,"
                f"DEP002={'|'.join([*ALLOWED_EDGES, *RUNTIME_ONLY])}",
                "--package-module-name-map", module_map,
            )  # fmt: skip
    if failed:
        session.error(f"failed: {'; '.join(failed)}")


def declared_edge_errors() -> list[str]:
    """Each package's declared siblings (main, extras, dev group) checked against the table."""
    errors = []
    for dist, package in PACKAGES.items():
        if dist not in ALLOWED_EDGES:
            errors.append(f"{dist} is not in DESIGN.md's table (ALLOWED_EDGES in noxfile.py)")
            continue
        allowed = ALLOWED_EDGES[dist]
        for name in sorted(package.sibling_requires - allowed["requires"]):
            if name in allowed["lazy"]:
                errors.append(f"{dist} requires {name}; DESIGN.md allows it only in an extra")
            else:
                errors.append(f"{dist} requires {name}; DESIGN.md does not allow that edge")
        for name in sorted(package.sibling_extras - allowed["requires"] - allowed["lazy"]):
            errors.append(f"{dist} has an extra with {name}; DESIGN.md does not allow it")
        for name in sorted(package.sibling_dev - allowed["requires"] - allowed["lazy"]):
            errors.append(f"{dist}'s dev group has {name}; DESIGN.md does not allow it")
        for name in sorted((package.sibling_requires | package.sibling_extras) - PACKAGES.keys()):
            errors.append(f"{dist} declares {name}, which is not under packages/")
        for requirement in package.requirements:
            if requirement.url:
                errors.append(f"{dist} requires {requirement} by path or URL; use a range")
        unknown = {
            canonicalize_name(r.name) for r in package.requirements if is_sibling(r)
        } - ALLOWED_EDGES.keys()
        for name in sorted(unknown):
            errors.append(f"{dist} requires {name}, which DESIGN.md's table does not know")
    return errors


def import_graph_input() -> dict:
    """What tools/check_imports.py needs: each package's modules and declared edges."""
    result = []
    for package in PACKAGES.values():
        extras_only = {
            _module_name(r.name)
            for reqs in package.extras.values()
            for r in reqs
            if not is_sibling(r)
        } - {_module_name(r.name) for r in package.third_party}
        result.append(
            {
                "dist": package.dist,
                "module": package.module,
                "src": str(package.src),
                "requires": sorted(map(portion, package.sibling_requires)),
                "lazy": sorted(map(portion, package.sibling_extras)),
                "extras_only_modules": sorted(extras_only),
            }
        )
    return {"packages": result}


@nox.session(default=False)
def gpu(session: nox.Session) -> None:
    """tools/gpu-check's run (tools/gpu_check_run.py) against the installed wheels, with CuPy.

    DBR_CUDA=cuda12|cuda13 (default cuda12) picks CuPy's extra. The report goes
    to .nox/gpu-report unless the arguments after ``--`` name a folder first;
    the other arguments are gpu_check_run.py's (``--no-bench``, ``--suites``, ...).
    """
    cuda = os.environ.get("DBR_CUDA", "cuda12")
    extras = {
        dist: [e for e in package.extras if not e.startswith("cuda") or e == cuda]
        for dist, package in PACKAGES.items()
    }
    session.install(*wheel_requirements(session, list(PACKAGES), extras), *TEST_TOOLS, *GPU_TOOLS)
    args = list(session.posargs)
    if not args or args[0].startswith("-"):
        args.insert(0, str(ROOT / ".nox" / "gpu-report"))
    with session.chdir(ROOT):
        session.run("python", str(TOOLS / "gpu_check_run.py"), *args, env={"PYTHONPATH": None})


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """python benchmarks/overhead.py against the installed wheels."""
    script = ROOT / "benchmarks" / "overhead.py"
    extras = {dist: package.cpu_extras(siblings=True) for dist, package in PACKAGES.items()}
    session.install(*wheel_requirements(session, list(PACKAGES), extras))
    session.run("python", str(script), *session.posargs, env={"PYTHONPATH": None})


@nox.session(default=False)
def demo(session: nox.Session) -> None:
    """The README's main job: train a CNN on scikit-learn's digits with the installed wheels.

    Installs what the job imports and nothing more: dbr-links, dbr-training
    with its ``plot`` extra (matplotlib, for PlotReport), dbr-datasets with its
    ``sklearn`` extra (the digits), and the siblings they require.
    """
    extras = {"dbr-training": ["plot"], "dbr-datasets": ["sklearn"]}
    dists = sorted({d for top in ("dbr-links", *extras) for d in sibling_closure(top)})
    session.install(*wheel_requirements(session, dists, extras))
    script = ROOT / "examples" / "digits" / "train_digits_cnn.py"
    with session.chdir(ROOT):
        session.run("python", str(script), *session.posargs, env={"PYTHONPATH": None})


@nox.session(default=False)
def build(session: nox.Session) -> None:
    """Every package's wheel into dist/."""
    out_dir = ROOT / "dist"
    for package in PACKAGES.values():
        wheel = build_wheel(session, package, out_dir=out_dir)
        session.log(f"built {wheel.relative_to(ROOT)}")


@nox.session(default=False)
def release(session: nox.Session) -> None:
    """Release packages to the index at DBR_INDEX_URL: ``-- DIST ...`` or ``-- --all``.

    tools/release.py checks each package (a new version on the index, a
    CHANGELOG entry, sibling ranges the index can satisfy, a committed tree, a
    README that renders), builds its sdist and wheel, uploads them with twine
    (credentials from TWINE_USERNAME/TWINE_PASSWORD) and tags the commit
    ``<dist>-v<version>``, siblings first. ``--dry-run`` checks and builds only.
    """
    session.install(*RELEASE_TOOLS)
    session.run("python", str(TOOLS / "release.py"), "--root", str(ROOT), *session.posargs)


@nox.session(name="install-from-dist", default=False, venv_backend="virtualenv")
def install_from_dist(session: nox.Session) -> None:
    """The README's install from this repository: wheels into dist/, then pip from there.

    Builds every wheel into dist/ (as ``nox -s build``), runs ``pip install
    --find-links dist dbr-chainer`` in a fresh virtualenv, and checks that it
    brought every CPU package of this tree at this tree's version (not some
    other index's) and that ``import dbr.chainer as chainer`` works.
    """
    out_dir = ROOT / "dist"
    for package in PACKAGES.values():
        build_wheel(session, package, out_dir=out_dir)
    session.run("python", "-m", "pip", "install", "--find-links", str(out_dir), "dbr-chainer")
    expected = {dist: PACKAGES[dist].version for dist in sibling_closure("dbr-chainer")}
    check = f"""
import importlib.metadata as metadata
import numpy
import dbr.chainer as chainer
import dbr.chainer.functions as F
installed = {{
    d.metadata["Name"]: d.version for d in metadata.distributions()
    if d.metadata["Name"].startswith("dbr-")
}}
assert installed == {expected!r}, installed
x = chainer.Variable(numpy.array([-1.0, 2.0], dtype=numpy.float32))
F.sum(F.relu(x)).backward()
assert x.grad.tolist() == [0.0, 1.0], x.grad
print("installed from dist/:", ", ".join(f"{{k}} {{v}}" for k, v in sorted(installed.items())))
"""
    with session.chdir(session.create_tmp()):
        session.run("python", "-c", check, env={"PYTHONPATH": None})


nox.options.sessions = [
    "lint",
    "deps",
    *(f"tests-{dist}" for dist in PACKAGES),
    "lowest",
    "integration",
    "chainer-suite",
    "package-index",
    "docs",
]
