"""Timing shared by the benchmarks, and the dbr-against-PyTorch table of three of them."""

import argparse
import functools
import gc
import statistics
import time


def best_ms(fn, repeat):
    """Best-of-``repeat`` milliseconds of ``fn()``, after one warm-up call."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def timing_parser(description, repeat):
    """An argument parser with ``--repeat`` (default ``repeat``) and ``--torch-threads``."""
    parser = argparse.ArgumentParser(description=description.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=repeat)
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=None,
        help="torch.set_num_threads (default: PyTorch's own choice)",
    )
    return parser


def compare_with_torch(
    args, title, label, dbr_cases, torch_cases, call_args=(), name_width=24, width=9, digits=3
):
    """Print a table of best-of-``args.repeat`` ms: each dbr case, its PyTorch twin, the ratio.

    ``dbr_cases`` maps a name to a callable; ``torch_cases(torch)`` gives the PyTorch
    callables by the same names (a name it lacks gets no comparison). Each is called
    with ``call_args``. Without PyTorch installed, only dbr's column is printed.
    """
    try:
        import torch
    except ImportError:
        torch = None
        print("torch not installed (pip install torch==2.13.0 to compare)")
    reference = {}
    if torch is not None:
        if args.torch_threads:
            torch.set_num_threads(args.torch_threads)
        reference = torch_cases(torch)
        print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)")
    print(title)
    print(f"{label:<{name_width}}{'dbr':>{width}}{'torch':>{width}}{'ratio':>8}")
    for name, run in dbr_cases.items():
        ours = best_ms(functools.partial(run, *call_args), args.repeat)
        line = f"{name:<{name_width}}{ours:{width}.{digits}f}"
        if name in reference:
            theirs = best_ms(functools.partial(reference[name], *call_args), args.repeat)
            line += f"{theirs:{width}.{digits}f}{ours / theirs:7.2f}x"
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
