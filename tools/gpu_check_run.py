"""The whole GPU check of tools/gpu-check: facts, benchmarks, every suite at once, the main job.

``python tools/gpu_check_run.py OUT_DIR [options]`` (tools/ and every
``packages/*/src`` on ``PYTHONPATH``; tools/gpu-check sets both) runs, in order:

1. the machine's facts (tools/gpu_check.py facts); without a usable GPU it
   stops with exit status 2 unless ``--allow-no-gpu``;
2. ``benchmarks/gpu.py`` alone on the GPU (``--bench-timeout``), its table in
   ``OUT_DIR/benchmarks.md`` and its log in ``OUT_DIR/benchmarks.log``;
3. every package's ``-m gpu`` tests and tests-integration's, all suites at
   once, each with its share of ``--jobs`` pytest-xdist workers, one CuPy
   kernel cache for all, a per-test timeout (pytest-timeout), and a common
   ``--deadline`` after which the suites still running are interrupted;
   alongside them the main job, ``examples/digits/train_digits_cnn.py
   --device @cupy:0`` (``OUT_DIR/demo.log``);
4. the summary, ``OUT_DIR/summary.txt``: per suite the tests collected,
   passed, failed, errored, skipped and not run, the skip reasons with their
   counts, the benchmark table and the main job's accuracy.

Every outcome is appended to ``OUT_DIR/outcomes.tsv`` and every failure to
``OUT_DIR/failures.txt`` as it happens (tools/gpu_check_plugin.py), and the
progress to ``OUT_DIR/progress.log``, so that a run stopped from outside still
leaves what it learnt. The junit files and full pytest logs go to ``--work``
and are packed into ``OUT_DIR/reports.tar.gz`` at the end: OUT_DIR holds at
most eight files.

``--rerun PREVIOUS_OUTCOMES_TSV`` runs only the tests that did not pass or
skip in that earlier run (failed, errored or never reached), and only the
suites that have such tests.

Exit status: 0 when every test that ran passed, the benchmarks and the main
job succeeded and nothing was left unrun; 1 otherwise; 2 without a GPU.
"""

import argparse
import collections
import contextlib
import os
import pathlib
import re
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools"

# Measured numbers of gpu-marked tests per suite (collected on the CPU, November 2026);
# they only share the workers out, so a stale figure costs balance, not correctness.
SUITE_WEIGHTS = {
    "dbr-functions": 14576,
    "dbr-core": 1876,
    "dbr-gpu": 47,
    "dbr-training": 114,
    "dbr-links": 69,
    "dbr-datasets": 8,
    "tests-integration": 1,
}
DEFAULT_WEIGHT = 50
ACCURACY = re.compile(r"test accuracy[^0-9]*([0-9.]+)", re.IGNORECASE)


class Progress:
    """Prints lines and appends them to ``OUT_DIR/progress.log``."""

    def __init__(self, path):
        self.path = path
        self.start = time.monotonic()

    def __call__(self, text):
        line = f"[{time.monotonic() - self.start:6.1f}s] {text}"
        print(line, flush=True)
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def parse_args(argv):
    """The command line (see the module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="gpu-report", help="the report folder")
    parser.add_argument("--work", help="junit files and logs (default: a temporary folder)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count(), help="xdist workers in all")
    parser.add_argument("--deadline", type=float, default=300, help="seconds for the suites")
    parser.add_argument("--test-timeout", type=float, default=120, help="seconds per test")
    parser.add_argument("--bench-timeout", type=float, default=150)
    parser.add_argument("--demo-timeout", type=float, default=240)
    parser.add_argument(
        "--bench-profile",
        type=int,
        default=0,
        metavar="N",
        help="benchmarks/gpu.py --profile N: the top functions of dbr's step per case",
    )
    parser.add_argument("--no-bench", action="store_true")
    parser.add_argument("--no-demo", action="store_true")
    parser.add_argument("--suites", nargs="+", help="suite names (default: all)")
    parser.add_argument("--rerun", help="an earlier outcomes.tsv: run what did not pass there")
    parser.add_argument(
        "--rerun-skipped", action="store_true", help="with --rerun, rerun its skipped tests too"
    )
    parser.add_argument("--allow-no-gpu", action="store_true")
    return parser.parse_args(argv)


def discover_suites():
    """{suite name: (folder to run in, test path)} for every package and the integration tests."""
    suites = {}
    for tests in sorted((ROOT / "packages").glob("*/tests")):
        suites[tests.parent.name] = (tests.parent, "tests")
    if (ROOT / "tests-integration").is_dir():
        suites["tests-integration"] = (ROOT, "tests-integration")
    return suites


def read_outcomes(path):
    """{suite: {nodeid: outcome}} (the worst outcome of a test's phases) and
    {suite: tests collected} from an outcomes.tsv."""
    rank = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
    outcomes = collections.defaultdict(dict)
    collected = {}
    reasons = collections.defaultdict(collections.Counter)
    if not pathlib.Path(path).exists():
        return outcomes, collected, reasons
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 4:
                continue  # a line cut short by a kill
            suite, outcome, _, nodeid = fields[:4]
            if outcome == "collected":
                collected[suite] = int(nodeid)
                continue
            if outcome not in rank:
                continue
            previous = outcomes[suite].get(nodeid)
            if previous is None or rank[outcome] > rank[previous]:
                outcomes[suite][nodeid] = outcome
            if outcome == "skipped" and len(fields) > 4:
                reasons[suite][fields[4]] += 1
    return outcomes, collected, reasons


def share_workers(names, jobs, weights):
    """{suite: workers}: ``jobs`` shared in proportion to ``weights``, at least one each."""
    total = sum(weights[n] for n in names) or 1
    return {n: max(1, round(jobs * weights[n] / total)) for n in names}


def have(module):
    """Whether ``module`` can be imported by the Python that runs the suites."""
    import importlib.util

    return importlib.util.find_spec(module) is not None


def start_suite(name, folder, tests, workers, args, env, work):
    """Start one suite's pytest in its own process group; returns the Popen."""
    command = [sys.executable, "-m", "pytest", tests, "-m", "gpu", "-q", "-rfEs"]
    command += ["-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "gpu_check_plugin"]
    command += ["--junitxml", str(work / f"{name}.xml")]
    if have("pytest_timeout"):
        command += ["--timeout", str(args.test_timeout)]
    if workers > 1 and have("xdist"):
        command += ["-n", str(workers)]
    suite_env = dict(env, GPU_CHECK_SUITE=name)
    log = open(work / f"{name}.log", "w", encoding="utf-8")  # noqa: SIM115 (closed by wait)
    process = start_in_own_group(command, folder, suite_env, log)
    process.log = log
    return process


def start_in_own_group(command, cwd, env, log):
    """Popen of ``command`` writing stdout and stderr to ``log``, in a new process group
    (so that :func:`interrupt` can kill it with all its children)."""
    return subprocess.Popen(
        command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )


def interrupt(process, grace=20.0):
    """SIGINT to pytest (it writes its junit file), then SIGKILL to its whole group."""
    if process.poll() is not None:
        return
    try:
        process.send_signal(signal.SIGINT)
        process.wait(grace)
    except subprocess.TimeoutExpired:
        pass
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def counts_line(outcomes, collected, name):
    """'N/M: P passed, F failed, E errors, S skipped' of one suite so far."""
    c = collections.Counter(outcomes.get(name, {}).values())
    total = collected.get(name, "?")
    done = sum(c.values())
    return (
        f"{name}: {done}/{total} done, {c['passed']} passed, {c['failed']} failed, "
        f"{c['error']} errors, {c['skipped']} skipped"
    )


def run_program(command, log_path, timeout, env, progress, label):
    """Run ``command`` with its output in ``log_path``; returns its exit status (or 'timeout')."""
    progress(f"{label}: {' '.join(map(str, command))}")
    with open(log_path, "w", encoding="utf-8") as log:
        process = start_in_own_group(command, ROOT, env, log)
        try:
            rc = process.wait(timeout)
        except subprocess.TimeoutExpired:
            interrupt(process, grace=5)
            rc = "timeout"
    progress(f"{label}: exit {rc}")
    return rc


def summarise(out, outcomes_path, suites_run, rcs, notes, info):
    """Write and return the summary text, and whether everything passed (``notes`` are
    failures outside the tests, ``info`` lines that report without failing)."""
    outcomes, collected, reasons = read_outcomes(outcomes_path)
    header = f"{'suite':<20}{'collected':>10}{'passed':>8}{'failed':>8}{'errors':>8}"
    header += f"{'skipped':>9}{'not run':>9}  pytest exit"
    lines = [header]
    ok = True
    grand = collections.Counter()
    for name in suites_run:
        c = collections.Counter(outcomes.get(name, {}).values())
        total = collected.get(name)
        not_run = (total - sum(c.values())) if total is not None else "?"
        row = [total if total is not None else "?", c["passed"], c["failed"], c["error"]]
        row += [c["skipped"], not_run]
        lines.append(
            f"{name:<20}"
            + "".join(f"{v:>{w}}" for v, w in zip(row, (10, 8, 8, 8, 9, 9)))
            + f"  {rcs.get(name)}"
        )
        grand.update(c)
        grand["collected"] += total or 0
        ok &= not (c["failed"] or c["error"]) and not_run == 0 and rcs.get(name) in (0, 5)
    lines.append(
        f"{'TOTAL':<20}{grand['collected']:>10}{grand['passed']:>8}{grand['failed']:>8}"
        f"{grand['error']:>8}{grand['skipped']:>9}"
    )
    for name in suites_run:
        for reason, n in reasons.get(name, collections.Counter()).most_common():
            lines.append(f"skipped in {name} ({n}): {reason}")
    ok &= not notes
    lines += info + notes
    lines.append("RESULT: " + ("ok" if ok else "FAILED"))
    text = "\n".join(lines) + "\n"
    (out / "summary.txt").write_text(text, encoding="utf-8")
    return text, ok


def main(argv=None):
    """Run the check; returns the exit status."""
    args = parse_args(argv)
    out = pathlib.Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("progress.log", "outcomes.tsv", "failures.txt", "summary.txt", "demo.log"):
        (out / stale).unlink(missing_ok=True)
    work = pathlib.Path(args.work or tempfile.mkdtemp(prefix="gpu-check-work-")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    progress = Progress(out / "progress.log")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(TOOLS), env.get("PYTHONPATH")]))
    env.setdefault("CUPY_CACHE_DIR", str(work / "cupy-kernel-cache"))
    env["PYTHONUNBUFFERED"] = "1"
    notes, info = [], []

    facts = subprocess.run(
        [sys.executable, str(TOOLS / "gpu_check.py"), "facts"],
        env=env,
        capture_output=True,
        text=True,
    )
    for line in (facts.stdout + facts.stderr).splitlines():
        progress(f"facts: {line}")
    if facts.returncode != 0:
        notes.append(f"NO GPU (facts exit {facts.returncode})")
        if not args.allow_no_gpu:
            progress("no usable GPU: stopping (--allow-no-gpu runs the suites anyway)")
            (out / "summary.txt").write_text("RESULT: FAILED (no GPU)\n", encoding="utf-8")
            return 2

    if not args.no_bench:
        rc = run_program(
            [sys.executable, "benchmarks/gpu.py", "--out", str(out / "benchmarks.md")]
            + (["--profile", str(args.bench_profile)] if args.bench_profile else []),
            out / "benchmarks.log",
            args.bench_timeout,
            env,
            progress,
            "benchmarks",
        )
        if rc != 0:
            notes.append(f"benchmarks: exit {rc} (see benchmarks.log)")

    suites = discover_suites()
    names = args.suites or list(suites)
    unknown = sorted(set(names) - set(suites))
    if unknown:
        progress(f"unknown suites {unknown}; known: {sorted(suites)}")
        return 1
    test_env = dict(env, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    test_env["GPU_CHECK_OUTCOMES"] = str(out / "outcomes.tsv")
    test_env["GPU_CHECK_FAILURES"] = str(out / "failures.txt")
    weights = {n: SUITE_WEIGHTS.get(n, DEFAULT_WEIGHT) for n in names}
    if args.rerun:
        previous, previous_collected, _ = read_outcomes(args.rerun)
        test_env["GPU_CHECK_RERUN"] = str(pathlib.Path(args.rerun).resolve())
        settled = ("passed",) if args.rerun_skipped else ("passed", "skipped")
        if args.rerun_skipped:
            test_env["GPU_CHECK_RERUN_SKIPPED"] = "1"
        for name in list(names):
            good = sum(o in settled for o in previous.get(name, {}).values())
            left = previous_collected.get(name, weights[name]) - good
            if name in previous_collected and left <= 0:
                names.remove(name)
                progress(f"{name}: everything passed or skipped before; not rerun")
            else:
                weights[name] = max(left, 1)
    workers = share_workers(names, args.jobs, weights)

    processes = {}
    for name in names:
        folder, tests = suites[name]
        processes[name] = start_suite(name, folder, tests, workers[name], args, test_env, work)
        progress(f"{name}: started with {workers[name]} worker(s)")
    demo = None
    if not args.no_demo:
        demo_log = open(out / "demo.log", "w", encoding="utf-8")  # noqa: SIM115
        demo = subprocess.Popen(
            [
                sys.executable,
                "examples/digits/train_digits_cnn.py",
                "--device",
                "@cupy:0",
                "--out",
                str(work / "demo"),
            ],
            cwd=ROOT,
            env=test_env,
            stdout=demo_log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        demo_started = time.monotonic()
        progress("main job: examples/digits/train_digits_cnn.py --device @cupy:0 started")

    started = time.monotonic()
    last_report = started
    rcs = {}
    while True:
        for name, process in processes.items():
            if name not in rcs and process.poll() is not None:
                rcs[name] = process.returncode
                process.log.close()
                progress(f"{name}: pytest exit {process.returncode}")
        demo_late = demo is not None and time.monotonic() - demo_started > args.demo_timeout
        if demo_late and demo.poll() is None:
            interrupt(demo, grace=5)
            notes.append(f"main job: stopped after {args.demo_timeout:.0f} s")
        demo_done = demo is None or demo.poll() is not None
        if len(rcs) == len(processes) and demo_done:
            break
        now = time.monotonic()
        if now - started > args.deadline:
            progress(f"deadline of {args.deadline:.0f} s reached: interrupting what still runs")
            for name, process in processes.items():
                if name not in rcs:
                    interrupt(process)
                    rcs[name] = f"interrupted ({process.returncode})"
                    process.log.close()
            if demo is not None and demo.poll() is None:
                interrupt(demo, grace=5)
                notes.append("main job: interrupted at the deadline")
            break
        if now - last_report >= 30:
            last_report = now
            outcomes, collected, _ = read_outcomes(out / "outcomes.tsv")
            for name in processes:
                if name not in rcs:
                    progress(counts_line(outcomes, collected, name))
        time.sleep(1)

    if demo is not None:
        demo_log.close()
        text = (out / "demo.log").read_text(encoding="utf-8", errors="replace")
        found = ACCURACY.findall(text)
        if demo.returncode == 0 and found:
            info.append(f"main job on @cupy:0: exit 0, test accuracy {found[-1]}")
        else:
            notes.append(f"main job on @cupy:0: exit {demo.returncode} (see demo.log)")

    text, ok = summarise(out, out / "outcomes.tsv", names, rcs, notes, info)
    if (out / "benchmarks.md").exists():
        text += "\n" + (out / "benchmarks.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        progress(line)
    with tarfile.open(out / "reports.tar.gz", "w:gz") as tar:
        for path in sorted(work.glob("*.xml")) + sorted(work.glob("*.log")):
            tar.add(path, arcname=path.name)
    progress(f"junit files and logs packed into {out / 'reports.tar.gz'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
