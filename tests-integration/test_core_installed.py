"""The installed dbr distributions, seen together through the `dbr` namespace."""

import importlib
import importlib.metadata
import pathlib
import pkgutil
import sysconfig

import pytest

import dbr

PORTIONS = sorted(info.name for info in pkgutil.iter_modules(dbr.__path__))
SITE_PACKAGES = pathlib.Path(sysconfig.get_paths()["purelib"]).resolve()
PACKAGES_DIR = pathlib.Path(__file__).resolve().parents[1] / "packages"


def test_dbr_is_a_namespace_package_holding_core():
    assert getattr(dbr, "__file__", None) is None
    assert "core" in PORTIONS


@pytest.mark.parametrize("portion", PORTIONS)
def test_portion_imports_from_site_packages(portion):
    module = importlib.import_module(f"dbr.{portion}")
    assert SITE_PACKAGES in pathlib.Path(module.__file__).resolve().parents


@pytest.mark.parametrize("portion", PORTIONS)
def test_installed_version_is_the_source_version(portion):
    tomllib = pytest.importorskip("tomllib")
    dist = f"dbr-{portion}"
    pyproject = tomllib.loads((PACKAGES_DIR / dist / "pyproject.toml").read_text())
    assert importlib.metadata.version(dist) == pyproject["project"]["version"]


@pytest.mark.parametrize("portion", [p for p in PORTIONS if p != "chainer"])
def test_every_public_name_of_a_package_is_in_its_all_or_a_submodule(portion):
    """No stray names (such as importlib's PackageNotFoundError) in a package's namespace."""
    module = importlib.import_module(f"dbr.{portion}")
    stray = [
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and name not in module.__all__
        and not isinstance(value, type(importlib))
    ]  # fmt: skip
    assert stray == []
