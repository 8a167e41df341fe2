"""Chainer v7.8.1's own unit tests, migrated as the README says, run against the installed dbr.

Run by ``nox -s chainer-suite`` inside an environment with every dbr wheel
installed. The suite lives beside the checkout (``../shared/chainer-v7.8.1``,
or ``DBR_CHAINER_SUITE``) and is never copied into the repository: this script
copies it to a work folder, rewrites every Python file with the README's
migration (``python -m dbr.chainer.migrate --module-strings``: imports, and the
module paths ``mock.patch`` is given; or with ``--migration sed`` the README's
``sed`` line, its two collisions undone: the ``chainerx`` pytest mark and the
``'pfnet', 'chainer'`` dataset cache folder), runs the CPU selection of the
files the reference outcomes cover with pytest, records each test's outcome
and compares them with ``chainer-7.8.1-outcomes.tsv.gz``: what real Chainer
7.8.1 did with each test on this kind of machine.

It prints how many of the Chainer-passing tests pass, fail, error, skip or
are not collected, the files that hold the differences, and exits 1 unless
each Chainer-passing test passes or matches a line of the deviations file
(``tests-integration/chainer_suite_deviations.tsv``: a node id or an
``fnmatch`` pattern, a tab, the reason).
"""

from __future__ import annotations

import argparse
import collections
import configparser
import fnmatch
import gzip
import importlib
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SUITE = ROOT.parent / "shared" / "chainer-v7.8.1"
DEFAULT_DEVIATIONS = ROOT / "tests-integration" / "chainer_suite_deviations.tsv"
OUTCOMES = "chainer-7.8.1-outcomes.tsv.gz"
CPU_SELECTION = "not gpu and not cudnn and not multi_gpu and not ideep and not slow and not theano"

# The README's migration, in the order sed applies it, then its two collisions undone.
MIGRATION = [
    (re.compile(r"\bchainer\b"), "dbr.chainer"),
    (re.compile(r"\b(chainerx|chainermn|onnx_chainer)\b"), r"dbr.chainer.\1"),
]
COLLISIONS = [
    (re.compile(r"\b(attr|mark)\.dbr\.chainer\.chainerx\b"), r"\1.chainerx"),
    (re.compile(r"'pfnet', 'dbr\.chainer'"), "'pfnet', 'chainer'"),
]

RECORDER = '''"""Writes each test's outcome, and each file that fails to collect, to a TSV."""

import os

_OUT = os.path.join(os.path.dirname(__file__), "dbr-outcomes-%d.tsv" % os.getpid())


def _write(nodeid, outcome, detail=""):
    detail = " ".join(str(detail).split())[:300]
    with open(_OUT, "a", encoding="utf-8") as out:
        out.write(f"{nodeid}\\t{outcome}\\t{detail}\\n")


def pytest_runtest_logreport(report):
    if report.when == "call":
        detail = "" if report.passed else report.longreprtext.strip().splitlines()[-1:] or ""
        _write(report.nodeid, report.outcome, detail[0] if detail else "")
    elif report.when == "setup" and not report.passed:
        outcome = "skipped" if report.skipped else "error"
        lines = report.longreprtext.strip().splitlines()
        _write(report.nodeid, outcome, lines[-1] if lines else "")
    elif report.when == "teardown" and report.failed:
        _write(report.nodeid, "error", "teardown failed")


def pytest_collectreport(report):
    if report.failed:
        lines = report.longreprtext.strip().splitlines()
        _write(report.nodeid, "collection-error", lines[-1] if lines else "")
'''


def migrate(text: str) -> str:
    """The README's one-line sed migration of a Chainer program, its two collisions undone."""
    for pattern, replacement in MIGRATION + COLLISIONS:
        text = pattern.sub(replacement, text)
    return text


def migrate_imports(text: str) -> str:
    """``python -m dbr.chainer.migrate --module-strings``'s rewrite of a Chainer program."""
    from dbr.chainer.migrate import migrate_source

    return migrate_source(text, module_strings=True).text


def read_reference(suite: Path) -> dict[str, str]:
    """{node id: outcome under real Chainer 7.8.1}."""
    outcomes = {}
    pending = ""  # a node id that holds a newline (an array's repr) spans lines
    with gzip.open(suite / OUTCOMES, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.startswith("#") and not pending:
                continue
            if "\t" not in line:
                pending += line
                continue
            nodeid, outcome = (pending + line).rstrip("\n").split("\t")[:2]
            outcomes[nodeid] = outcome
            pending = ""
    return outcomes


def read_deviations(path: Path) -> list[tuple[str, str]]:
    """(pattern, reason) for each line of the deviations file that is not a comment."""
    if not path.is_file():
        return []
    rows = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        pattern, sep, reason = line.partition("\t")
        if not sep or not reason.strip():
            raise SystemExit(f"{path}:{number}: expected 'node id or pattern<TAB>reason'")
        rows.append((pattern, reason.strip()))
    return rows


def _resolvable(category: str) -> bool:
    module, _, name = category.rpartition(".")
    if not module:
        return True
    try:
        return hasattr(importlib.import_module(module), name)
    except ImportError:
        return False


def pytest_config(suite: Path, work: Path) -> list[str]:
    """Chainer's [tool:pytest] settings, migrated, as an ini file; returns the filters dropped."""
    parser = configparser.ConfigParser(interpolation=None)
    original = (suite / "setup.cfg").read_text()
    parser.read_string(migrate(original))
    section = parser["tool:pytest"]
    # Mark names are not module paths: they keep Chainer's spelling (chainerx).
    markers = configparser.ConfigParser(interpolation=None)
    markers.read_string(original)
    kept, dropped = [], []
    # Chainer's blanket "error" entry is left out, as in the reference run: its
    # tests that call numpy.product (deprecated by NumPy 1.25) pass there, and
    # could not under that filter.
    entries = section["filterwarnings"].strip().splitlines()
    for line in [entry for entry in entries if entry.strip() != "error"]:
        fields = line.strip().split(":")
        category = fields[2] if len(fields) > 2 else ""
        (kept if not category or _resolvable(category) else dropped).append(line.strip())
    ini = configparser.ConfigParser(interpolation=None)
    ini["pytest"] = {
        "filterwarnings": "\n" + "\n".join(kept),
        "python_files": section["python_files"],
        "python_classes": section["python_classes"],
        "python_functions": section["python_functions"],
        "markers": markers["tool:pytest"]["markers"],
    }
    with (work / "pytest.ini").open("w") as out:
        ini.write(out)
    return dropped


def prepare(suite: Path, work: Path, migration: str) -> None:
    """A migrated copy of the suite's tests in work, with the outcome recorder beside them."""
    rewrite = migrate_imports if migration == "imports" else migrate
    if work.exists():
        shutil.rmtree(work)
    shutil.copytree(suite / "tests", work / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    for path in (work / "tests").rglob("*.py"):
        path.write_text(rewrite(path.read_text(encoding="utf-8")), encoding="utf-8")
    (work / "conftest.py").write_text(RECORDER)


def run_pytest(work: Path, files: list[str], jobs: int, timeout: int) -> None:
    """pytest over files in work (CPU selection), in ``jobs`` processes of interleaved files.

    The processes share the files out, not the tests (pytest-xdist runs no test
    at all once a file fails to collect); each writes its outcomes to
    work/dbr-outcomes-<pid>.tsv and its output to work/pytest-<n>.log.
    """
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", CPU_SELECTION,
        "--rootdir", str(work), "-c", str(work / "pytest.ini"), f"--timeout={timeout}",
        "--no-header", "--tb=no", "-rN", "--continue-on-collection-errors",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": "", "CHAINER_TEST_PAIRWISE_PARAMETERIZATION": "never"}
    shards = [files[i::jobs] for i in range(max(1, min(jobs, len(files))))]
    running = []
    for number, shard in enumerate(shards):
        log = (work / f"pytest-{number}.log").open("w")
        running.append((subprocess.Popen([*command, *shard], cwd=work, env=env, stdout=log,
                                          stderr=subprocess.STDOUT), log))  # fmt: skip
    for process, log in running:
        process.wait()
        log.close()
    for number in range(len(shards)):
        tail = (work / f"pytest-{number}.log").read_text().strip().splitlines()[-1:]
        print(f"pytest process {number}: {tail[0] if tail else 'no output'}")


def read_dbr_outcomes(work: Path) -> tuple[dict[str, tuple[str, str]], dict[str, str]]:
    """({node id: (outcome, detail)}, {file: collection error}) from the recorder's files."""
    tests, broken = {}, {}
    for path in work.glob("dbr-outcomes-*.tsv"):
        pending = ""  # a node id that holds a newline (an array's repr) spans lines
        for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
            if "\t" not in line:
                pending += line
                continue
            nodeid, outcome, detail = ((pending + line).rstrip("\n").split("\t") + ["", ""])[:3]
            pending = ""
            if outcome == "collection-error":
                broken[nodeid.split("::")[0]] = detail
            else:
                tests[nodeid] = (outcome, detail)
    return tests, broken


_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_PARAMETERS = re.compile(r"(_param_\d+)_\{.*\}(?=::)", re.DOTALL)


def canonical_id(nodeid: str) -> str:
    """A node id without what differs between runs: memory addresses, and the repr of the
    parameters of a ``testing.parameterize`` class (random arrays), which its index names."""
    return _ADDRESS.sub("0x?", _PARAMETERS.sub(r"\1", nodeid))


def compare(reference, tests, broken, deviations):
    """Each Chainer-passing test classified: {class: [node ids]}, and the deviations used."""
    classes = collections.defaultdict(list)
    used = collections.Counter()
    canonical = {canonical_id(nodeid): result for nodeid, result in tests.items()}
    for nodeid, outcome in reference.items():
        if outcome != "passed":
            continue
        file = nodeid.split("::")[0]
        if nodeid in tests:
            got = tests[nodeid][0]
        elif canonical_id(nodeid) in canonical:
            got = canonical[canonical_id(nodeid)][0]
        elif file in broken:
            got = "not collected (file)"
        else:
            got = "not collected (id)"
        if got != "passed":
            match = next((p for p, _ in deviations if fnmatch.fnmatchcase(nodeid, p)), None)
            if match is not None:
                used[match] += 1
                got = "deviation"
        classes[got].append(nodeid)
    return classes, used


def report(reference, tests, broken, classes, used, out: Path | None) -> None:
    """Print the figures, the files with differences and the collection errors; write the TSV."""
    passing = sum(1 for o in reference.values() if o == "passed")
    print(f"\nChainer 7.8.1 passes {passing} of the {len(reference)} tests run here; on dbr:")
    for name in ("passed", "deviation", "failed", "error", "skipped"):
        count = len(classes.get(name, []))
        print(f"  {name:22} {count:6d}  ({100 * count / max(passing, 1):.2f}%)")
    for name in ("not collected (file)", "not collected (id)"):
        count = len(classes.get(name, []))
        print(f"  {name:22} {count:6d}  ({100 * count / max(passing, 1):.2f}%)")
    extra = sum(1 for n, (o, _) in tests.items() if o == "passed" and reference.get(n) != "passed")
    print(f"  (dbr also passes {extra} tests that did not pass on Chainer or have other ids)")
    per_file = collections.Counter()
    for name, ids in classes.items():
        if name != "passed" and name != "deviation":
            per_file.update(nodeid.split("::")[0] for nodeid in ids)
    if per_file:
        print("\nFiles with Chainer-passing tests that do not pass on dbr (most first):")
        for file, count in per_file.most_common():
            reason = f"  [cannot collect: {broken[file][:120]}]" if file in broken else ""
            print(f"  {count:6d}  {file}{reason}")
    if used:
        print("\nDeviations used:", ", ".join(f"{p} ({n})" for p, n in used.most_common()))
    if out is not None:
        with out.open("w", encoding="utf-8") as table:
            table.write("# node id\tChainer 7.8.1\tdbr\tdetail\n")
            canonical = {canonical_id(nodeid): result for nodeid, result in tests.items()}
            for nodeid, outcome in sorted(reference.items()):
                missing = ("not collected", broken.get(nodeid.split("::")[0], ""))
                got, detail = tests.get(nodeid) or canonical.get(canonical_id(nodeid), missing)
                table.write(f"{nodeid}\t{outcome}\t{got}\t{detail}\n")
        print(f"\nEvery test's outcome on both: {out}")


def select_files(reference, patterns: list[str], sample: int) -> list[str]:
    """The files the reference covers, those matching a pattern, every sample-th if sample > 1."""
    files = sorted({nodeid.split("::")[0] for nodeid in reference})
    if patterns:
        files = [f for f in files if any(fnmatch.fnmatchcase(f, p) for p in patterns)]
    if sample > 1:
        files = files[::sample]
    return files


def main(argv=None) -> int:
    """Command line; see the module's docstring."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--suite", type=Path, default=Path(os.environ.get(
        "DBR_CHAINER_SUITE", DEFAULT_SUITE)), help="the folder of Chainer's suite")  # fmt: skip
    parser.add_argument("--work", type=Path, required=True, help="a folder to run in (emptied)")
    parser.add_argument("--deviations", type=Path, default=DEFAULT_DEVIATIONS)
    parser.add_argument("--files", nargs="*", default=[], help="fnmatch patterns of test files")
    parser.add_argument("--sample", type=int, default=1, help="run every N-th file only")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=int, default=300, help="seconds per test")
    parser.add_argument("--out", type=Path, help="write every test's outcomes to this TSV")
    parser.add_argument(
        "--migration", choices=("imports", "sed"), default="imports",
        help="python -m dbr.chainer.migrate --module-strings (default), or the README's sed line",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if not (args.suite / OUTCOMES).is_file():
        print(f"chainer_suite: no {OUTCOMES} under {args.suite}; nothing to run")
        return 2
    reference = read_reference(args.suite)
    deviations = read_deviations(args.deviations)
    files = select_files(reference, args.files, args.sample)
    if not files:
        print(f"chainer_suite: no test file of the reference matches {args.files}")
        return 2
    reference = {n: o for n, o in reference.items() if n.split("::")[0] in set(files)}
    args.work = args.work.resolve()
    prepare(args.suite, args.work, args.migration)
    dropped = pytest_config(args.suite, args.work)
    for line in dropped:
        print(
            f"chainer_suite: filterwarnings entry dropped (its category does not import): {line}"
        )
    started = time.monotonic()
    run_pytest(args.work, files, args.jobs, args.timeout)
    print(f"\n{len(files)} files in {time.monotonic() - started:.0f} s")
    tests, broken = read_dbr_outcomes(args.work)
    classes, used = compare(reference, tests, broken, deviations)
    report(reference, tests, broken, classes, used, args.out)
    unresolved = sum(
        len(ids) for name, ids in classes.items() if name not in ("passed", "deviation")
    )
    return 1 if unresolved else 0


if __name__ == "__main__":
    sys.exit(main())
