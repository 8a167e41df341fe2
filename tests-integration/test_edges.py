"""tools/edges.py: README.md's table of packages is the one list of allowed dependency edges."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import edges  # noqa: E402
from monorepo import discover_packages  # noqa: E402

PACKAGES = discover_packages(ROOT / "packages", [])


def test_the_readme_table_matches_every_pyproject():
    table = edges.read_table(ROOT / "README.md")
    assert set(table) == set(PACKAGES)
    assert edges.declared_edge_errors(PACKAGES, table) == []
    assert table["dbr-links"].siblings == {"dbr-core", "dbr-functions"}
    assert table["dbr-functions"].lazy == {"dbr-gpu"}
    assert table["dbr-chainer"].requires >= {"dbr-distributed", "dbr-onnx"}


def _table_with(tmp_path, old, new):
    readme = (ROOT / "README.md").read_text()
    assert old in readme
    (tmp_path / "README.md").write_text(readme.replace(old, new))
    return edges.read_table(tmp_path / "README.md")


def test_a_remark_in_parentheses_is_for_the_reader(tmp_path):
    table = _table_with(
        tmp_path, "| dbr-core, dbr-functions |", "| dbr-core, dbr-functions (both) |"
    )
    assert table["dbr-links"].requires == {"dbr-core", "dbr-functions"}


def test_an_edge_the_table_does_not_allow_is_named(tmp_path):
    table = _table_with(tmp_path, "| dbr-core, dbr-functions |", "| dbr-core |")
    errors = edges.declared_edge_errors(PACKAGES, table)
    assert "dbr-links requires dbr-functions; README.md's table allows no such edge" in errors


def test_a_sibling_the_table_allows_only_in_an_extra_is_named(tmp_path):
    table = _table_with(
        tmp_path, "| dbr-core, dbr-functions |", "| dbr-core; [fn] dbr-functions |"
    )
    errors = edges.declared_edge_errors(PACKAGES, table)
    assert "dbr-links requires dbr-functions; README.md's table allows only in an extra" in errors


def test_a_third_party_requirement_the_table_leaves_out_is_named(tmp_path):
    table = _table_with(tmp_path, "dbr-core, dbr-datasets, tqdm;", "dbr-core, dbr-datasets;")
    (error,) = edges.declared_edge_errors(PACKAGES, table)
    assert error.startswith("README.md's table says dbr-training depends on")
    assert "'tqdm'" in error
