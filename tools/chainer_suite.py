"""Chainer v7.8.1's own unit tests, migrated as the README says, run against the installed dbr.

Run by ``nox -s chainer-suite`` inside an environment with every dbr wheel
installed. The suite lives beside the checkout (``../shared/chainer-v7.8.1``,
``DBR_CHAINER_SUITE`` or ``--suite-dir``) and is never copied into the
repository: this script copies it to a work folder, rewrites every Python file with the README's
migration (``python -m dbr.chainer.migrate --module-strings``: imports, and the
module paths ``mock.patch`` is given; or with ``--migration sed`` the README's
``sed`` line, its two collisions undone: the ``chainerx`` pytest mark and the
``'pfnet', 'chainer'`` dataset cache folder), runs the CPU selection of the
files the reference outcomes cover with pytest, records each test's outcome
and compares them with ``chainer-7.8.1-outcomes.tsv.gz``: what real Chainer
7.8.1 did with each test on this kind of machine.

``--suite chainermn`` does the same with ``tests/chainermn_tests`` and
``chainermn-7.8.1-outcomes.tsv.gz``, as that reference was taken: one file at
a time under ``mpiexec -n 2 python -m pytest`` (the ``mpiexec`` beside this
Python, as dbr-distributed's [mpich] extra installs it, else on PATH); a test
counts as its worst outcome on either rank, as failed when a rank did not
report it, and as a timeout when its file was killed (``--file-timeout``: a
collective that one rank never joins waits for ever). ``--suite onnx_chainer``
runs ``tests/onnx_chainer_tests`` like Chainer's suite. Its reference was taken
with a stand-in for ``onnx.mapping`` (gone since onnx 1.16) because
onnx_chainer's own modules import it; the tests do not, and dbr.onnx does not
need it, so none is provided here.

The files of tests that fail are run again (``--reruns``, twice by default;
not for ChainerMN): many tests draw random inputs, and a test that passes on a
rerun is counted and listed as "passed on rerun", never silently.

It prints how many of the reference-passing tests pass, fail, error, skip or
are not collected, the files that hold the differences, and exits 1 unless
each reference-passing test passes or matches a line of the suite's deviations
file (``tests-integration/<suite>_suite_deviations.tsv``: a node id or an
``fnmatch`` pattern, a tab, the reason).
"""

from __future__ import annotations

import argparse
import collections
import configparser
import contextlib
import fnmatch
import gzip
import importlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SUITE = ROOT.parent / "shared" / "chainer-v7.8.1"
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


class Suite(NamedTuple):
    """One of the suites (tests/<name>_tests): its title in reports, the MPI ranks per file."""

    name: str
    title: str
    ranks: int

    @property
    def outcomes(self) -> str:
        """The reference outcomes' file name in the suite folder."""
        return f"{self.name}-7.8.1-outcomes.tsv.gz"

    @property
    def deviations(self) -> Path:
        """The default deviations file."""
        return ROOT / "tests-integration" / f"{self.name}_suite_deviations.tsv"


SUITES = {
    suite.name: suite
    for suite in (
        Suite("chainer", "Chainer", 1),
        Suite("chainermn", "ChainerMN", 2),
        Suite("onnx_chainer", "onnx_chainer", 1),
    )
}
# A test's outcome over ranks is its worst; within one process a later report
# (a teardown error) replaces the earlier one.
# More failures than this are not unlucky random draws: they are not run again.
RERUN_LIMIT = 50
WORST = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}

RECORDER = '''"""Writes each test's outcome, and each file that fails to collect, to a TSV."""

import os

_OUT = os.path.join(
    os.environ.get("DBR_SUITE_OUTCOMES") or os.path.dirname(__file__),
    "dbr-outcomes-%d.tsv" % os.getpid(),
)


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


def read_reference(path: Path) -> dict[str, str]:
    """{node id: outcome under real Chainer 7.8.1} from an outcomes file."""
    outcomes = {}
    pending = ""  # a node id that holds a newline (an array's repr) spans lines
    with gzip.open(path, "rt", encoding="utf-8") as lines:
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


def pytest_command(work: Path, timeout: int) -> tuple[list[str], dict[str, str]]:
    """The pytest command line (CPU selection, ``timeout`` seconds a test) and its environment."""
    command = [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", CPU_SELECTION,
        "--rootdir", str(work), "-c", str(work / "pytest.ini"), f"--timeout={timeout}",
        "--no-header", "--tb=no", "-rN", "--continue-on-collection-errors",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": "", "CHAINER_TEST_PAIRWISE_PARAMETERIZATION": "never"}
    return command, env


def run_pytest(work: Path, files: list[str], jobs: int, timeout: int, outcomes=None) -> None:
    """pytest over files in work (CPU selection), in ``jobs`` processes of interleaved files.

    The processes share the files out, not the tests (pytest-xdist runs no test
    at all once a file fails to collect); each writes its outcomes to
    <outcomes or work>/dbr-outcomes-<pid>.tsv and its output to <outcomes or work>/pytest-<n>.log.
    """
    command, env = pytest_command(work, timeout)
    if outcomes is not None:
        outcomes.mkdir(parents=True, exist_ok=True)
        env["DBR_SUITE_OUTCOMES"] = str(outcomes)
    logs = outcomes or work
    shards = [files[i::jobs] for i in range(max(1, min(jobs, len(files))))]
    running = []
    for number, shard in enumerate(shards):
        log = (logs / f"pytest-{number}.log").open("w")
        running.append((subprocess.Popen([*command, *shard], cwd=work, env=env, stdout=log,
                                          stderr=subprocess.STDOUT), log))  # fmt: skip
    for process, log in running:
        process.wait()
        log.close()
    for number in range(len(shards)):
        tail = (logs / f"pytest-{number}.log").read_text().strip().splitlines()[-1:]
        print(f"pytest process {number}: {tail[0] if tail else 'no output'}")


def find_mpiexec() -> str | None:
    """The ``mpiexec`` beside this Python (a venv's [mpich] extra), else the one on PATH."""
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return shutil.which("mpiexec", path=path)


def _descendants(pid: int) -> list[int]:
    """The processes below pid (Linux's /proc; none elsewhere): MPICH's ranks have sessions
    of their own, so a signal to mpiexec's process group reaches them only through mpiexec."""
    children = collections.defaultdict(list)
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue
        children[int(fields[1])].append(int(stat.parent.name))
    found, stack = [], [pid]
    while stack:
        below = children[stack.pop()]
        found += below
        stack += below
    return found


def _kill(process: subprocess.Popen) -> None:
    """End mpiexec's process group, then, after a grace period, whatever it started."""
    below = _descendants(process.pid)
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    for pid in below:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


_SUMMARY = re.compile(r"(?:\d+ \w+, )*\d+ \w+ in [\d.]+s")


def run_mpiexec(work, files, ranks, timeout, file_timeout, mpiexec) -> dict[str, str]:
    """Each file in turn under ``mpiexec -n ranks python -m pytest``; {file killed: why}.

    Every rank's pytest writes its outcomes to work/dbr-outcomes-<pid>.tsv; the
    output of file n goes to work/mpiexec-<n>.log. A file still running after
    file_timeout seconds has its mpiexec process group and processes killed.
    """
    command, env = pytest_command(work, timeout)
    killed = {}
    for number, file in enumerate(files):
        with (work / f"mpiexec-{number}.log").open("w") as log:
            process = subprocess.Popen([mpiexec, "-n", str(ranks), *command, file], cwd=work,
                                       env=env, stdout=log, stderr=subprocess.STDOUT,
                                       start_new_session=True)  # fmt: skip
            try:
                process.wait(file_timeout)
            except subprocess.TimeoutExpired:
                _kill(process)
                killed[file] = f"killed after {file_timeout} s under mpiexec"
        # The ranks' output interleaves: pick out each one's closing summary.
        summaries = _SUMMARY.findall((work / f"mpiexec-{number}.log").read_text(errors="replace"))
        print(f"{file}: {killed.get(file) or ' | '.join(summaries[-ranks:]) or 'no summary'}")
    return killed


def read_dbr_outcomes(work: Path, ranks: int, killed: dict[str, str]):
    """({node id: (outcome, detail)}, {file: collection error}) from the recorder's files.

    Each file is one process; a test run by ``ranks`` processes gets its worst
    outcome; one that fewer processes reported failed, or timed out where its
    file was killed.
    """
    reports, broken = collections.defaultdict(list), {}
    for path in work.glob("dbr-outcomes-*.tsv"):
        tests = {}
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
        for nodeid, result in tests.items():
            reports[nodeid].append(result)
    tests = {}
    for nodeid, results in reports.items():
        outcome, detail = max(results, key=lambda result: WORST.get(result[0], len(WORST)))
        if len(results) < ranks:
            file = nodeid.split("::")[0]
            outcome = "timeout" if file in killed else "failed"
            detail = f"reported by {len(results)} of {ranks} ranks; {killed.get(file, detail)}"
        tests[nodeid] = (outcome, detail)
    return tests, broken


_ADDRESS = re.compile(r"0x[0-9a-fA-F]+")
_PARAMETERS = re.compile(r"(_param_\d+)_\{.*\}(?=::)", re.DOTALL)


def detail_of(tests, nodeid: str) -> str:
    """The recorded detail of a reference node id's test on dbr, matched canonically if need be."""
    if nodeid in tests:
        return tests[nodeid][1]
    key = canonical_id(nodeid)
    return next((d for n, (_, d) in tests.items() if canonical_id(n) == key), "")


def canonical_id(nodeid: str) -> str:
    """A node id without what differs between runs: memory addresses, and the repr of the
    parameters of a ``testing.parameterize`` class (random arrays), which its index names."""
    return _ADDRESS.sub("0x?", _PARAMETERS.sub(r"\1", nodeid))


def compare(reference, tests, broken, deviations, killed):
    """Each reference-passing test classified: {class: [node ids]}, and the deviations used."""
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
        elif file in killed:
            got = "timeout"
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


def report(reference, tests, broken, classes, used, out: Path | None, title, killed) -> None:
    """Print the figures, the files with differences and the collection errors; write the TSV."""
    passing = sum(1 for o in reference.values() if o == "passed")
    print(f"\n{title} 7.8.1 passes {passing} of the {len(reference)} tests run here; on dbr:")
    names = ["passed", "passed on rerun", "deviation", "failed", "error", "skipped"]
    names += (["timeout"] if killed else []) + ["not collected (file)", "not collected (id)"]
    for name in names:
        count = len(classes.get(name, []))
        print(f"  {name:22} {count:6d}  ({100 * count / max(passing, 1):.2f}%)")
    extra = sum(1 for n, (o, _) in tests.items() if o == "passed" and reference.get(n) != "passed")
    print(f"  (dbr also passes {extra} tests that did not pass on {title} or have other ids)")
    per_file = collections.Counter()
    for name, ids in classes.items():
        if name not in ("passed", "passed on rerun", "deviation"):
            per_file.update(nodeid.split("::")[0] for nodeid in ids)
    if per_file:
        print(f"\nFiles with {title}-passing tests that do not pass on dbr (most first):")
        for file, count in per_file.most_common():
            reason = f"  [cannot collect: {broken[file][:120]}]" if file in broken else ""
            reason = f"  [{killed[file]}]" if file in killed else reason
            print(f"  {count:6d}  {file}{reason}")
    failing = [n for name in ("failed", "error") for n in classes.get(name, [])]
    if failing:
        print(f"\n{title}-passing tests that fail on dbr (first 20, with the error's last line):")
        for nodeid in sorted(failing)[:20]:
            print(f"  {nodeid}\n      {detail_of(tests, nodeid)[:240]}")
    if used:
        print("\nDeviations used:", ", ".join(f"{p} ({n})" for p, n in used.most_common()))
    if out is not None:
        with out.open("w", encoding="utf-8") as table:
            table.write(f"# node id\t{title} 7.8.1\tdbr\tdetail\n")
            canonical = {canonical_id(nodeid): result for nodeid, result in tests.items()}
            for nodeid, outcome in sorted(reference.items()):
                file = nodeid.split("::")[0]
                missing = ("not collected", broken.get(file, ""))
                missing = ("timeout", killed[file]) if file in killed else missing
                got, detail = tests.get(nodeid) or canonical.get(canonical_id(nodeid), missing)
                table.write(f"{nodeid}\t{outcome}\t{got}\t{detail}\n")
        print(f"\nEvery test's outcome on both: {out}")


def rerun_failures(work: Path, classes, tests, timeout: int, attempts: int) -> list[str]:
    """Run again, up to ``attempts`` times, the files of the tests that failed or errored; move
    each test that then passes from its class to "passed on rerun" and return the reruns' summary.

    Many of Chainer's tests draw random inputs and compare within tolerances, so
    a rare draw fails a test that passes on the next (Chainer's reference is one
    run, too). A failure that repeats on every attempt stays a failure.
    """
    summary = []
    failing = {nodeid for name in ("failed", "error") for nodeid in classes.get(name, [])}
    if len(failing) > RERUN_LIMIT:
        return [f"none: {len(failing)} tests failed, more than chance draws ({RERUN_LIMIT})"]
    for attempt in range(1, attempts + 1):
        if not failing:
            break
        files = sorted({nodeid.split("::")[0] for nodeid in failing})
        outcomes = work / f"rerun-{attempt}"
        run_pytest(work, files, 1, timeout, outcomes)
        again, _ = read_dbr_outcomes(outcomes, 1, {})
        passed = {canonical_id(n) for n, (outcome, _) in again.items() if outcome == "passed"}
        recovered = {nodeid for nodeid in failing if canonical_id(nodeid) in passed}
        for name in ("failed", "error"):
            classes[name] = [n for n in classes.get(name, []) if n not in recovered]
        classes["passed on rerun"] = sorted(set(classes.get("passed on rerun", [])) | recovered)
        for nodeid in sorted(recovered):
            first = detail_of(tests, nodeid)
            summary.append(f"attempt {attempt}: {nodeid}  (first run: {first[:160]})")
        failing -= recovered
    return summary


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
    parser.add_argument("--suite", choices=SUITES, default="chainer", help="which tests to run")
    parser.add_argument("--suite-dir", type=Path, default=Path(os.environ.get(
        "DBR_CHAINER_SUITE", DEFAULT_SUITE)), help="the folder of Chainer's suite")  # fmt: skip
    parser.add_argument("--work", type=Path, required=True, help="a folder to run in (emptied)")
    parser.add_argument(
        "--deviations", type=Path, help="default: tests-integration/<suite>_suite_deviations.tsv"
    )
    parser.add_argument("--files", nargs="*", default=[], help="fnmatch patterns of test files")
    parser.add_argument("--sample", type=int, default=1, help="run every N-th file only")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="not for chainermn")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per test")
    parser.add_argument("--file-timeout", type=int, default=180, help="seconds per chainermn file")
    parser.add_argument("--out", type=Path, help="write every test's outcomes to this TSV")
    parser.add_argument(
        "--reruns", type=int, default=2,
        help="times to run again the files of failing tests (not for chainermn)",
    )  # fmt: skip
    parser.add_argument(
        "--migration", choices=("imports", "sed"), default="imports",
        help="python -m dbr.chainer.migrate --module-strings (default), or the README's sed line",
    )  # fmt: skip
    args = parser.parse_args(argv)
    suite = SUITES[args.suite]
    if not (args.suite_dir / suite.outcomes).is_file():
        print(f"chainer_suite: no {suite.outcomes} under {args.suite_dir}; nothing to run")
        return 2
    mpiexec = find_mpiexec() if suite.ranks > 1 else None
    if suite.ranks > 1 and mpiexec is None:
        print("chainer_suite: no mpiexec beside this Python or on PATH: install an MPI, e.g.")
        print("  pip install 'dbr-distributed[mpich]'")
        return 2
    reference = read_reference(args.suite_dir / suite.outcomes)
    deviations = read_deviations(args.deviations or suite.deviations)
    files = select_files(reference, args.files, args.sample)
    if not files:
        print(f"chainer_suite: no test file of the reference matches {args.files}")
        return 2
    reference = {n: o for n, o in reference.items() if n.split("::")[0] in set(files)}
    args.work = args.work.resolve()
    prepare(args.suite_dir, args.work, args.migration)
    dropped = pytest_config(args.suite_dir, args.work)
    for line in dropped:
        print(
            f"chainer_suite: filterwarnings entry dropped (its category does not import): {line}"
        )
    started = time.monotonic()
    killed = {}
    if mpiexec is None:
        run_pytest(args.work, files, args.jobs, args.timeout)
    else:
        killed = run_mpiexec(
            args.work, files, suite.ranks, args.timeout, args.file_timeout, mpiexec
        )
    print(f"\n{len(files)} files in {time.monotonic() - started:.0f} s")
    tests, broken = read_dbr_outcomes(args.work, suite.ranks, killed)
    classes, used = compare(reference, tests, broken, deviations, killed)
    reruns = rerun_failures(args.work, classes, tests, args.timeout, args.reruns) if (
        mpiexec is None) else []  # fmt: skip
    report(reference, tests, broken, classes, used, args.out, suite.title, killed)
    if reruns:
        print("\nRun again (random inputs):")
        print("\n".join(f"  {line}" for line in reruns))
    unresolved = sum(
        len(ids)
        for name, ids in classes.items()
        if name not in ("passed", "passed on rerun", "deviation")
    )
    return 1 if unresolved else 0


if __name__ == "__main__":
    sys.exit(main())
