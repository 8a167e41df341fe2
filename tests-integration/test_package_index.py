"""Releases to a real package index, and what downstream projects get when they pin components.

A local pypiserver (on 127.0.0.1, a free port, uploads behind a password)
stands for the public index. A copy of this tree, committed to a git
repository of its own so that release tags land there, is released to it with
``nox -s release -- --all``. Then, each in a fresh virtual environment that
installs the dbr distributions from that index only (third-party packages from
pip's configured index), as a user would:

- tests-integration/downstream, which pins ``dbr-core==X.Y.Z``,
  ``dbr-links~=A.B`` and ``dbr-functions~=C.D.E``, gets exactly those, and its
  own tests pass;
- a patch release of dbr-functions moves the ``~=`` pin and nothing else;
- an old dbr-core pinned beside the current dbr-links fails to resolve, and
  pip's message names the conflict;
- ``pip install dbr-chainer`` is all of dbr for the CPU, and ``pip install
  dbr-core`` alone brings NumPy and nothing else.

The tests run in file order and share the index: later ones see the releases
the earlier ones made. Run by ``nox -s package-index``.
"""

import base64
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
DOWNSTREAM = Path(__file__).resolve().parent / "downstream"
sys.path.insert(0, str(ROOT / "tools"))
from monorepo import discover_packages  # noqa: E402
from release import index_versions  # noqa: E402

USER, PASSWORD = "dbr-release", "a-password-for-the-test-index-only"
COMMAND_TIMEOUT_S = 600
CPU_PACKAGES = {dist for dist in discover_packages(ROOT / "packages", []) if dist != "dbr-gpu"}


def _run(*command, cwd=None, env=None, check=True):
    result = subprocess.run(
        [str(c) for c in command], cwd=cwd, env={**os.environ, **(env or {})},
        capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False,
    )  # fmt: skip
    if check and result.returncode != 0:
        pytest.fail(
            f"{' '.join(map(str, command))} exited {result.returncode}\n"
            f"stdout:\n{result.stdout[-6000:]}\nstderr:\n{result.stderr[-6000:]}"
        )
    return result


def _git(tree, *args):
    identity = ["-c", "user.name=dbr test", "-c", "user.email=test@localhost"]
    return _run("git", "-C", tree, *identity, *args).stdout


def _free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Index:
    """The local index: its upload URL, its simple API and its package folder."""

    def __init__(self, url, folder):
        self.url = url
        self.simple = url + "simple/"
        self.folder = folder

    def versions(self, dist):
        """The versions of dist on the index, as strings."""
        return {str(v) for v in index_versions(self.simple, dist)}

    def release(self, tree, *args, password=PASSWORD, check=True):
        """``nox -s release -- ARGS`` in tree, against this index."""
        env = {"DBR_INDEX_URL": self.url, "TWINE_USERNAME": USER, "TWINE_PASSWORD": password}
        noxfile = tree / "noxfile.py"
        return _run(
            sys.executable, "-m", "nox", "-f", noxfile, "-s", "release", "--", *args,
            cwd=tree, env=env, check=check,
        )  # fmt: skip


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    """A pypiserver on 127.0.0.1 that asks for a password to upload, stopped at the end."""
    home = tmp_path_factory.mktemp("index")
    # Apache's {SHA} form, one of those pypiserver[passlib] reads.
    digest = base64.b64encode(hashlib.sha1(PASSWORD.encode()).digest()).decode()
    (home / "htpasswd").write_text(f"{USER}:{{SHA}}{digest}\n")
    folder = home / "packages"
    folder.mkdir()
    port = _free_port()
    log = (home / "server.log").open("w")
    server = subprocess.Popen(
        [
            sys.executable, "-m", "pypiserver", "run", "-i", "127.0.0.1", "-p", str(port),
            "-a", "update", "-P", str(home / "htpasswd"), "--disable-fallback", str(folder),
        ],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "simple/", timeout=5):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"pypiserver did not start: {(home / 'server.log').read_text()}")
                time.sleep(0.2)
        yield Index(url, folder)
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """This tree's packages, tools, noxfile and README (whose table of packages the noxfile
    reads), committed to a repository of their own."""
    tree = tmp_path_factory.mktemp("tree")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", "dist", "build")
    for name in ("packages", "tools"):
        shutil.copytree(ROOT / name, tree / name, ignore=ignore)
    for name in ("noxfile.py", "README.md"):
        shutil.copy2(ROOT / name, tree / name)
    (tree / ".gitignore").write_text(".nox/\n__pycache__/\n")
    _git(tree, "init", "-q")
    _git(tree, "add", "-A")
    _git(tree, "commit", "-q", "-m", "the tree under test")
    return tree


@pytest.fixture(scope="module")
def released(index, tree):
    """Every package released with ``nox -s release -- --all``: {dist: version}."""
    index.release(tree, "--all")
    return {dist: p.version for dist, p in discover_packages(tree / "packages", []).items()}


def _bump(tree, dist, version, note):
    """Give dist a new version with a CHANGELOG section, committed, as a release needs."""
    folder = tree / "packages" / dist
    pyproject = folder / "pyproject.toml"
    text = re.sub(
        r'(?m)^version = "[^"]+"', f'version = "{version}"', pyproject.read_text(), count=1
    )
    pyproject.write_text(text)
    changelog = folder / "CHANGELOG.md"
    head, sep, rest = changelog.read_text().partition("\n## ")
    changelog.write_text(f"{head}\n## {version}\n\n### Changed\n\n- {note}\n{sep}{rest}")
    _git(tree, "commit", "-q", "-am", f"{dist} {version}")


def _venv(tmp_path, name):
    """A fresh virtual environment; returns its python."""
    folder = tmp_path / name
    _run(sys.executable, "-m", "venv", folder)
    return folder / "bin" / "python"


def _pip_install(python, index, *args, check=True):
    """pip install with the local index beside the configured one (dbr-* exist only locally)."""
    return _run(
        python, "-m", "pip", "install", "--disable-pip-version-check",
        "--extra-index-url", index.simple, *args, check=check,
    )  # fmt: skip


def _installed_line(result):
    """pip's closing 'Successfully installed ...' line, for the report."""
    lines = result.stdout.splitlines()
    return next((line for line in lines if line.startswith("Successfully installed")), "")


def _installed(python):
    """{name: version} of what pip lists in that environment."""
    listing = _run(python, "-m", "pip", "list", "--format", "json").stdout
    return {entry["name"]: entry["version"] for entry in json.loads(listing)}


def _dbr(installed):
    return {name: v for name, v in installed.items() if name.startswith("dbr-")}


def _pinned_downstream(tmp_path, versions):
    """tests-integration/downstream with its pins set to the tree's versions."""
    project = tmp_path / "downstream"
    shutil.copytree(DOWNSTREAM, project)
    pyproject = project / "pyproject.toml"
    links_minor = ".".join(versions["dbr-links"].split(".")[:2])
    pins = {
        r'"dbr-core==[^"]+"': f'"dbr-core=={versions["dbr-core"]}"',
        r'"dbr-links~=[^"]+"': f'"dbr-links~={links_minor}"',
        r'"dbr-functions~=[^"]+"': f'"dbr-functions~={versions["dbr-functions"]}"',
    }
    text = pyproject.read_text()
    for pattern, pin in pins.items():
        text, count = re.subn(pattern, pin, text)
        assert count == 1, f"{pyproject} has no single pin matching {pattern}"
    pyproject.write_text(text)
    return project


def test_release_all_uploads_every_package_and_tags_it(index, tree, released, report_figure):
    for dist, version in released.items():
        assert index.versions(dist) == {version}, dist
        report_figure(f"released {dist}", version)
    tags = set(_git(tree, "tag", "--list").split())
    assert tags == {f"{dist}-v{version}" for dist, version in released.items()}
    again = index.release(tree, "--all")
    assert "release: nothing to release" in again.stdout
    refused = index.release(tree, "dbr-core", check=False)
    assert refused.returncode != 0
    said = refused.stdout + refused.stderr
    assert f"dbr-core {released['dbr-core']} is already on the index" in said, said


def test_downstream_pins_install_exactly_those(index, released, tmp_path_factory, report_figure):
    home = tmp_path_factory.mktemp("downstream")
    project = _pinned_downstream(home, released)
    python = _venv(home, "venv")
    result = _pip_install(python, index, f"{project}[test]")
    report_figure("downstream pins: pip", _installed_line(result))
    assert _dbr(_installed(python)) == {
        d: released[d] for d in ("dbr-core", "dbr-functions", "dbr-links")
    }
    _run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", project / "tests", cwd=home)


def test_patch_release_moves_only_the_compatible_pin(
    index, tree, released, tmp_path_factory, report_figure
):
    home = tmp_path_factory.mktemp("patch")
    project = _pinned_downstream(home, released)
    python = _venv(home, "venv")
    _pip_install(python, index, f"{project}[test]")
    before = _dbr(_installed(python))

    major, minor, patch = released["dbr-functions"].split(".")
    patched = f"{major}.{minor}.{int(patch) + 1}"
    _bump(tree, "dbr-functions", patched, "A patch release for the index test.")
    wrong = index.release(tree, "dbr-functions", password="not-the-password", check=False)
    assert wrong.returncode != 0, "the index took an upload with a wrong password"
    assert index.versions("dbr-functions") == {released["dbr-functions"]}
    assert not _git(tree, "tag", "--list", f"dbr-functions-v{patched}").strip()
    index.release(tree, "dbr-functions")
    assert index.versions("dbr-functions") == {released["dbr-functions"], patched}

    upgrade = ("--upgrade", "--upgrade-strategy", "eager", f"{project}[test]")
    result = _pip_install(python, index, *upgrade)
    report_figure(f"after dbr-functions {patched}: pip install -U", _installed_line(result))
    after = _dbr(_installed(python))
    assert after == {**before, "dbr-functions": patched}, (before, after)
    _run(python, "-m", "pytest", "-q", "-p", "no:cacheprovider", project / "tests", cwd=home)


def test_an_old_core_beside_a_new_links_fails_naming_the_conflict(
    index, tree, released, tmp_path_factory, report_figure
):
    # The tree's dbr-core under an old version number stands for an old release:
    # what matters to the resolver is the number, which dbr-links' range excludes.
    old = "0.1.0"
    _bump(tree, "dbr-core", old, "An old release for the index test.")
    index.release(tree, "dbr-core")
    assert old in index.versions("dbr-core")
    python = _venv(tmp_path_factory.mktemp("conflict"), "venv")
    links = released["dbr-links"]
    result = _pip_install(python, index, f"dbr-core=={old}", f"dbr-links=={links}", check=False)
    assert result.returncode != 0
    message = " ".join(result.stdout.split() + result.stderr.split())
    assert f"Cannot install dbr-core=={old} and dbr-links=={links}" in message, message
    assert f"dbr-links {links} depends on dbr-core" in message, message
    assert not _dbr(_installed(python))
    lines = [line.strip() for line in (result.stdout + result.stderr).splitlines()]
    shown = [line for line in lines if line.startswith(("ERROR: Cannot", "The ", "dbr-"))]
    report_figure(f"resolver on dbr-core=={old} dbr-links=={links}", " | ".join(shown))


def test_dbr_chainer_from_the_index_is_all_of_dbr(index, tmp_path_factory):
    python = _venv(tmp_path_factory.mktemp("chainer"), "venv")
    _pip_install(python, index, "dbr-chainer")
    newest = {dist: str(max(map(Version, index.versions(dist)))) for dist in CPU_PACKAGES}
    assert _dbr(_installed(python)) == newest
    check = (
        "import numpy, dbr.chainer as chainer, dbr.chainer.functions as F; "
        "x = chainer.Variable(numpy.array([-1.0, 2.0], numpy.float32)); "
        "F.sum(F.relu(x)).backward(); assert x.grad.tolist() == [0.0, 1.0]; "
        "import dbr.distributed, dbr.onnx, dbr.training, dbr.datasets"
    )
    _run(python, "-c", check)


def test_dbr_core_alone_brings_numpy_only(index, released, tmp_path_factory):
    python = _venv(tmp_path_factory.mktemp("core"), "venv")
    baseline = set(_installed(python))
    _pip_install(python, index, f"dbr-core=={released['dbr-core']}")
    added = set(_installed(python)) - baseline
    assert added == {"dbr-core", "numpy"}, added
    check = (
        "import numpy; from dbr.core import Variable; "
        "x = Variable(numpy.array(3.0, numpy.float32)); (x ** 2).backward(); assert x.grad == 6"
    )
    _run(python, "-c", check)
