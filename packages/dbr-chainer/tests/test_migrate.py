"""python -m dbr.chainer.migrate: Chainer imports become dbr.chainer's; nothing else changes."""

import subprocess
import sys

import pytest

from dbr.chainer.migrate import main, migrate_source

CASES = [
    ("import chainer\n", "import dbr.chainer as chainer\n"),
    ("import chainer as ch\n", "import dbr.chainer as ch\n"),
    ("import chainer.functions as F\n", "import dbr.chainer.functions as F\n"),
    ("import chainer.links\n", "import dbr.chainer.links, dbr.chainer as chainer\n"),
    ("import os, chainerx\n", "import os, dbr.chainer.chainerx as chainerx\n"),
    ("import chainermn\n", "import dbr.chainer.chainermn as chainermn\n"),
    ("import onnx_chainer.testing\n",
     "import dbr.chainer.onnx_chainer.testing, dbr.chainer.onnx_chainer as onnx_chainer\n"),
    ("from chainer import training\n", "from dbr.chainer import training\n"),
    ("from chainer.training import extensions as E\n",
     "from dbr.chainer.training import extensions as E\n"),
    ("from  chainer . training  import (\n    triggers)\n",
     "from  dbr.chainer.training  import (\n    triggers)\n"),
    ("if x: import chainer; y = 'é'; import chainer.links\n",
     "if x: import dbr.chainer as chainer; y = 'é'; "
     "import dbr.chainer.links, dbr.chainer as chainer\n"),
]  # fmt: skip

UNTOUCHED = [
    "parser.add_argument('--chainerx', action='store_true')\n",
    "if args.chainerx:\n    device = 'native'\n",
    "# uses chainer and chainermn\n",
    "from . import chainer\n",
    "from .chainer import x\n",
    "import chainer_utils\n",
    "import dbr.chainer as chainer\n",
    "path = os.path.join('pfnet', 'chainer')\n",
]


@pytest.mark.parametrize("source, expected", CASES)
def test_imports_are_rewritten(source, expected):
    migration = migrate_source(source)
    assert migration.text == expected
    assert migration.changed
    compile(migration.text, "<migrated>", "exec")


@pytest.mark.parametrize("source", UNTOUCHED)
def test_names_attributes_comments_and_strings_are_left_alone(source):
    migration = migrate_source(source)
    assert migration.text == source
    assert not migration.changed
    assert migration.changes == []


@pytest.mark.parametrize("source, expected", CASES)
def test_a_migrated_text_migrates_to_itself(source, expected):
    assert migrate_source(expected).text == expected


def test_each_change_is_listed_with_its_line():
    migration = migrate_source("x = 1\nimport chainer\nfrom chainermn import links\n")
    assert migration.changes == [
        (2, "chainer", "dbr.chainer as chainer"),
        (3, "chainermn", "dbr.chainer.chainermn"),
    ]


def test_module_path_strings_are_noted_and_rewritten_only_when_asked():
    source = "import mock\nwith mock.patch('chainer.functions.relu'):\n    pass\n"
    noted = migrate_source(source)
    assert noted.text == source
    assert noted.notes == [
        (2, "string 'chainer.functions.relu' names a Chainer module path; left as it is")
    ]
    rewritten = migrate_source(source, module_strings=True)
    assert "mock.patch('dbr.chainer.functions.relu')" in rewritten.text
    assert rewritten.notes == []


def test_a_bare_top_level_name_in_a_string_is_not_a_module_path():
    source = "root = ('pfnet', 'chainer')\n"
    assert migrate_source(source, module_strings=True).text == source


def test_the_migrated_program_runs_on_dbr():
    source = (
        "import numpy\nimport chainer\nimport chainer.functions as F\n"
        "from chainer import Variable\n"
        "x = Variable(numpy.array([-1.0, 2.0], dtype=numpy.float32))\n"
        "F.sum(F.relu(x)).backward()\nresult = (chainer.__name__, x.grad.tolist())\n"
    )
    namespace = {}
    exec(migrate_source(source).text, namespace)
    assert namespace["result"] == ("dbr.chainer", [0.0, 1.0])


def test_syntax_errors_are_raised_before_anything_changes():
    with pytest.raises(SyntaxError):
        migrate_source("import chainer\nprint 'python 2'\n")


def test_the_command_rewrites_files_in_place_and_says_what_it_changed(tmp_path, capsys):
    (tmp_path / "pkg").mkdir()
    script = tmp_path / "pkg" / "train.py"
    script.write_text("import chainer\nimport numpy\n")
    script.chmod(0o754)
    other = tmp_path / "other.py"
    other.write_text("import numpy\n")
    assert main([str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"{script}:1: chainer -> dbr.chainer as chainer" in out
    assert "changed 1 of 2 files" in out
    assert script.read_text() == "import dbr.chainer as chainer\nimport numpy\n"
    assert script.stat().st_mode & 0o777 == 0o754
    assert other.read_text() == "import numpy\n"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["other.py", "pkg", "train.py"]


def test_check_and_diff_change_nothing(tmp_path, capsys):
    script = tmp_path / "train.py"
    script.write_text("import chainer\n")
    assert main(["--check", str(script)]) == 1
    assert main(["--diff", str(script)]) == 0
    out = capsys.readouterr().out
    assert "-import chainer\n+import dbr.chainer as chainer\n" in out
    assert script.read_text() == "import chainer\n"
    script.write_text("import dbr.chainer as chainer\n")
    assert main(["--check", str(script)]) == 0


def test_a_file_that_is_not_python_is_named_and_left_unchanged(tmp_path, capsys):
    bad = tmp_path / "old.py"
    bad.write_text("import chainer\nprint 'python 2'\n")
    good = tmp_path / "new.py"
    good.write_text("import chainer\n")
    assert main([str(tmp_path)]) == 2
    assert f"{bad}: not migrated" in capsys.readouterr().err
    assert bad.read_text() == "import chainer\nprint 'python 2'\n"
    assert good.read_text() == "import dbr.chainer as chainer\n"


def test_a_missing_path_is_refused_by_name(tmp_path):
    missing = tmp_path / "nowhere.py"
    result = subprocess.run(
        [sys.executable, "-m", "dbr.chainer.migrate", str(missing)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 2
    assert f"no such file or folder: {missing}" in result.stderr
