"""Sessions for the dbr monorepo: each package's tests against its built wheel, alone.

Every package under ``packages/`` is tested as a user gets it: its wheel, the
wheels of the siblings it declares and their third-party dependencies from the
registry, installed into a fresh environment, with tests run from a folder
where the source tree is not importable. ``nox`` runs the default sessions;
``nox -l`` lists them all.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import nox
from nox.command import CommandFailed

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
import edges  # noqa: E402  (tools/ is no package; the path above finds it)
import monorepo  # noqa: E402
import wheels  # noqa: E402
from monorepo import Package, discover_packages  # noqa: E402

nox.needs_version = ">=2024.4.15"
nox.options.default_venv_backend = "uv|virtualenv"

ROOT = Path(__file__).resolve().parent
PACKAGES_DIR = ROOT / "packages"
WHEELS_DIR = ROOT / ".nox" / "_wheels"
TOOLS = ROOT / "tools"

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
# pytest-timeout's limit on each test, so that a hang fails its session in
# minutes: package tests' slowest subprocesses are bounded at 120 s (one GPU
# test's at 300 s), integration tests' at 600 s. The default 'signal' method
# fails just the hung test, and adds no thread to fork with (3.12+ warns).
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


# README.md's table of packages: the only dependency edges allowed (tools/edges.py).
EDGES = edges.read_table(ROOT / "README.md")
PACKAGES = discover_packages(PACKAGES_DIR, list(EDGES))


def sibling_closure(dist: str) -> list[str]:
    """dist and every sibling it declares, transitively, in a stable order."""
    return monorepo.sibling_closure(PACKAGES, dist)


def build_wheel(session: nox.Session, package: Package, out_dir: Path | None = None) -> Path:
    """package's wheel, built once per nox run into its own folder (tools/wheels.py)."""
    return wheels.build_wheel(session, package, WHEELS_DIR, out_dir)


def wheel_requirements(
    session: nox.Session, dists: list[str], extras: dict[str, list[str]] | None = None
) -> list[str]:
    """PEP 508 direct references to the local wheels, so no dbr-* comes from a registry."""
    return wheels.wheel_requirements(session, [PACKAGES[d] for d in dists], WHEELS_DIR, extras)


def install_everything(session: nox.Session, *tools: str, extras=None) -> None:
    """Every package's wheel, each with its extras that need no GPU (or ``extras``), and tools."""
    if extras is None:
        extras = {dist: package.cpu_extras(siblings=True) for dist, package in PACKAGES.items()}
    session.install(*wheel_requirements(session, list(PACKAGES), extras), *tools)


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
    # Without an MPI launcher there is nothing to test: such a package has its
    # [mpich] extra (mpiexec) from the first run; every test has a timeout.
    first = {package.dist: MPI_PACKAGES[package.dist]} if package.dist in MPI_PACKAGES else {}
    session.install(*wheel_requirements(session, dists, first), *TEST_TOOLS)
    check_installed(session, dists)
    run_pytest(session, package)
    extras = [] if first else package.cpu_extras(siblings=False)
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
    report = json.dumps([[r.name, str(r.specifier), str(r.marker or "")] for r in declared])
    session.run("python", str(TOOLS / "check_lowest.py"), report)
    run_pytest(session, package)
    run_doctests(session, package)


@nox.session
def integration(session: nox.Session) -> None:
    """Every package's wheel with all its extras that need no GPU, then tests-integration."""
    install_everything(session, *TEST_TOOLS)
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

    Runs Chainer's, ChainerMN's (under ``mpiexec -n 2``) and onnx_chainer's suites
    (../shared/chainer-v7.8.1 or DBR_CHAINER_SUITE; skipped if absent) and fails
    unless each test passing on Chainer passes or is a listed deviation
    (tests-integration/<suite>_suite_deviations.tsv). Arguments after ``--`` go to
    the script and run one suite (``--suite``, ``--files``, ``--out``, ...).
    """
    suite = Path(os.environ.get("DBR_CHAINER_SUITE", ROOT.parent / "shared" / "chainer-v7.8.1"))
    if not (suite / "chainer-7.8.1-outcomes.tsv.gz").is_file():
        session.skip(f"Chainer's own suite is absent: no outcomes file under {suite}")
    install_everything(session, *TEST_TOOLS, *SUITE_TOOLS)
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
    install_everything(session, *DOCS_TOOLS)
    build = DOCS / "_build"
    for builder in ("html", "doctest"):
        session.run(
            "sphinx-build", "-b", builder, "-W", "--keep-going", "-q",
            "-d", str(build / "doctrees"), str(DOCS), str(build / builder),
            env={"PYTHONPATH": None},
        )  # fmt: skip


@nox.session(name="docs-browser", venv_backend="none")
def docs_browser(session: nox.Session) -> None:
    """The site ``nox -s docs`` built, in headless Chromium: tools/check_docs_browser.py.

    Needs Debian's ``chromium`` (``.ci/run`` installs it), nothing from PyPI.
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

    - declared requirements (main, extras, dev group) against README.md's
      table of packages (DESIGN.md's): tools/edges.py, from the pyproject files;
    - imported siblings against the declared ones, and module-level imports of
      what only an extra provides: tools/check_imports.py. With the first check
      this also keeps every import inside the table;
    - imported third-party modules against the declared requirements: deptry.
    """
    errors = edges.declared_edge_errors(PACKAGES, EDGES)
    for error in errors:
        session.warn(error)
    if errors:
        session.error("declared dependencies break README.md's table of packages (see above)")
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
    graph_input.write_text(json.dumps(edges.import_graph_input(PACKAGES), indent=2))
    check(
        "imports against declared siblings and extras",
        "python", str(TOOLS / "check_imports.py"), str(graph_input),
        env={"PYTHONPATH": sources},
    )  # fmt: skip

    module_map = ",".join(f"{dist}={module}" for dist, module in edges.MODULE_NAMES.items())
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
                f"DEP002={'|'.join([*EDGES, *RUNTIME_ONLY])}",
                "--package-module-name-map", module_map,
            )  # fmt: skip
    if failed:
        session.error(f"failed: {'; '.join(failed)}")


@nox.session(default=False)
def gpu(session: nox.Session) -> None:
    """tools/gpu_check_run.py against the installed wheels, with CuPy (DBR_CUDA=cuda12|cuda13).

    The report goes to .nox/gpu-report unless the arguments after ``--`` name a
    folder first; the others are gpu_check_run.py's (``--no-bench``, ...).
    """
    cuda = os.environ.get("DBR_CUDA", "cuda12")
    extras = {
        dist: [e for e in package.extras if not e.startswith("cuda") or e == cuda]
        for dist, package in PACKAGES.items()
    }
    install_everything(session, *TEST_TOOLS, *GPU_TOOLS, extras=extras)
    args = list(session.posargs)
    if not args or args[0].startswith("-"):
        args.insert(0, str(ROOT / ".nox" / "gpu-report"))
    with session.chdir(ROOT):
        session.run("python", str(TOOLS / "gpu_check_run.py"), *args, env={"PYTHONPATH": None})


@nox.session(default=False)
def bench(session: nox.Session) -> None:
    """python benchmarks/overhead.py against the installed wheels."""
    install_everything(session)
    script = ROOT / "benchmarks" / "overhead.py"
    session.run("python", str(script), *session.posargs, env={"PYTHONPATH": None})


@nox.session(name="onnx-torch", default=False)
def onnx_torch(session: nox.Session) -> None:
    """tools/onnx_torch_check.py: PyTorch's ONNX exports imported by dbr.onnx.load, fine-tuned."""
    install_everything(session, "onnxscript>=0.5")
    session.install(*os.environ.get("DBR_TORCH_INSTALL", "torch").split())  # pip arguments
    session.run(
        "python", str(TOOLS / "onnx_torch_check.py"), *session.posargs, env={"PYTHONPATH": None}
    )


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
    """Release packages to the index at DBR_INDEX_URL (``-- DIST ...`` or ``-- --all``).

    tools/release.py checks, builds, uploads with twine and tags each package,
    siblings first; ``--dry-run`` checks and builds only.
    """
    session.install(*RELEASE_TOOLS)
    session.run("python", str(TOOLS / "release.py"), "--root", str(ROOT), *session.posargs)


@nox.session(name="install-from-dist", default=False, venv_backend="virtualenv")
def install_from_dist(session: nox.Session) -> None:
    """The README's install from this repository: wheels into dist/, then pip from there.

    ``pip install --find-links dist dbr-chainer`` in a fresh virtualenv must bring
    every CPU package of this tree at its version: tools/check_install_from_dist.py.
    """
    out_dir = ROOT / "dist"
    for package in PACKAGES.values():
        build_wheel(session, package, out_dir=out_dir)
    session.run("python", "-m", "pip", "install", "--find-links", str(out_dir), "dbr-chainer")
    expected = {dist: PACKAGES[dist].version for dist in sibling_closure("dbr-chainer")}
    with session.chdir(session.create_tmp()):
        session.run(
            "python", str(TOOLS / "check_install_from_dist.py"), json.dumps(expected),
            env={"PYTHONPATH": None},
        )  # fmt: skip


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
