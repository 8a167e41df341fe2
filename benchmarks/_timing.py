"""Timing shared by the benchmarks: each framework in its own fresh processes.

A benchmark that compares dbr with PyTorch runs itself again once per side and
run (``--side dbr`` or ``--side torch``, the sides alternating), as users run
them: each framework alone in its process, the dbr side with the memory of
freed arrays kept (:func:`dbr.core.memory.keep_freed_memory`, what a Trainer
run gets), PyTorch with glibc's defaults. Sharing one process would give
PyTorch dbr's allocator setting and couple each side's page faults to the
other's memory use.
"""

import argparse
import functools
import gc
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time

SIDES = ("dbr", "torch")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
NO_TORCH = "torch not installed (pip install torch==2.13.0 to compare)"


def best_ms(fn, repeat):
    """Best-of-``repeat`` milliseconds of ``fn()``, after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def keep_freed_memory_as_a_trainer_does():
    """Opt this (dbr side's) process into :func:`dbr.core.memory.keep_freed_memory`."""
    from dbr.core import memory

    memory.keep_freed_memory()


@functools.cache
def torch_installed():
    """Whether PyTorch can be imported (without importing it); prints why not, once."""
    if importlib.util.find_spec("torch") is None:
        print(NO_TORCH)
        return False
    return True


def thread_environment(threads):
    """This process's environment with OpenMP's and the BLAS libraries' thread counts at
    ``threads``, for a child process that has not loaded them yet."""
    env = dict(os.environ)
    for name in THREAD_VARIABLES:
        env[name] = str(threads)
    return env


def json_of_process(command, env=None):
    """Run ``command`` and return the JSON value printed on its last line of output (its
    errors go to this process's stderr)."""
    out = subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def results_per_side(runs, extra_args=(), env=None):
    """{side: [what each run printed]}: this script run again with ``--side SIDE`` (and
    ``extra_args``) in ``runs`` fresh processes per side, the sides alternating; dbr's
    side alone where PyTorch is not installed."""
    sides = SIDES if torch_installed() else SIDES[:1]
    results = {side: [] for side in sides}
    for _ in range(runs):
        for side in sides:
            command = [sys.executable, sys.argv[0], *sys.argv[1:], *extra_args, "--side", side]
            results[side].append(json_of_process(command, env))
    return results


def add_side_arguments(parser, runs=1):
    """Add ``--runs`` (fresh processes per side) and the hidden ``--side`` of the workers."""
    parser.add_argument("--runs", type=int, default=runs, help="fresh processes per side")
    parser.add_argument("--side", choices=SIDES, help=argparse.SUPPRESS)


def spread(values, digits=2):
    """``low-high`` of ``values``, or an empty string for a single value."""
    return f"{min(values):.{digits}f}-{max(values):.{digits}f}" if len(values) > 1 else ""


def timing_parser(description, repeat):
    """An argument parser with ``--repeat`` (default ``repeat``), ``--torch-threads``,
    ``--runs`` and the workers' ``--side``."""
    parser = argparse.ArgumentParser(description=description.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=repeat)
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=None,
        help="torch.set_num_threads (default: PyTorch's own choice)",
    )
    add_side_arguments(parser)
    return parser


def _side_times(args, dbr_cases, torch_cases, call_args):
    """{"header": a line or None, "times": {name: best ms}} of ``args.side`` in this process."""
    header = None
    if args.side == "dbr":
        keep_freed_memory_as_a_trainer_does()
        cases = dbr_cases()
    else:
        import torch

        if args.torch_threads:
            torch.set_num_threads(args.torch_threads)
        cases = torch_cases(torch)
        header = f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)"
    times = {
        name: best_ms(functools.partial(run, *call_args), args.repeat)
        for name, run in cases.items()
    }
    return {"header": header, "times": times}


def compare_with_torch(
    args, title, label, dbr_cases, torch_cases, call_args=(), name_width=24, width=9, digits=3
):
    """Print a table of best-of-``args.repeat`` ms: each dbr case, its PyTorch twin, the ratio.

    ``dbr_cases()`` maps a name to a callable; ``torch_cases(torch)`` gives the PyTorch
    callables by the same names (a name it lacks gets no comparison). Each is called
    with ``call_args``. Each side runs in its own ``args.runs`` fresh processes (see the
    module docstring); the table gives the median over them and the spread of the ratio.
    Without PyTorch installed, only dbr's column is printed. In a worker (``args.side``)
    it prints that side's times as JSON instead.
    """
    if args.side:
        print(json.dumps(_side_times(args, dbr_cases, torch_cases, call_args)))
        return
    results = results_per_side(args.runs)
    if "torch" in results:
        print(results["torch"][0]["header"])
    print(f"{title}; each side in its own processes, median of {args.runs}")
    print(f"{label:<{name_width}}{'dbr':>{width}}{'torch':>{width}}{'ratio':>8}  spread")
    theirs_runs = [run["times"] for run in results.get("torch", ())]
    for name in results["dbr"][0]["times"]:
        ours = [run["times"][name] for run in results["dbr"]]
        line = f"{name:<{name_width}}{statistics.median(ours):{width}.{digits}f}"
        if theirs_runs and name in theirs_runs[0]:
            theirs = [times[name] for times in theirs_runs]
            ratio = statistics.median(ours) / statistics.median(theirs)
            ratios = [a / b for a, b in zip(ours, theirs)]
            line += f"{statistics.median(theirs):{width}.{digits}f}{ratio:7.2f}x  {spread(ratios)}"
        print(line)


def median_and_best_us(fn, repeat, clock=time.perf_counter):
    """Median and best microseconds per op over ``repeat`` calls of ``fn()``, which returns
    its op count; after one warm-up call, with a garbage collection before each call.

    ``clock`` is the wall clock by default; ``time.thread_time`` counts only the CPU
    time of the calling thread, which a machine shared with other jobs disturbs less.
    """
    fn()
    per_op = []
    for _ in range(repeat):
        gc.collect()
        start = clock()
        n_ops = fn()
        per_op.append((clock() - start) / n_ops * 1e6)
    return statistics.median(per_op), min(per_op)
