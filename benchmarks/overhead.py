"""Per-operation overhead and peak memory of dbr's define-by-run engine.

1. Overhead: a chain of small ops on (1, 16) float32 arrays -- ``h = h * a + b``
   then a core op (``** 2`` or ``/ c``) -- summed and backpropagated. Prints
   microseconds per op (forward + backward) for dbr and, when installed,
   PyTorch on the CPU with the same chain.
2. Recurrent overhead: two (1, 16) float32 Parameters ``a``, ``b`` used at every
   one of ``--steps`` steps, ``h = tanh(h * a + b)``, then ``sum``, ``cleargrad``
   on both and ``backward``, as a recurrent model does. The gradients of ``a``
   and ``b`` accumulate over every use. Prints microseconds per op and direction
   ((forward + backward) / 2 / ops).
3. Memory: 1,000 additions of a constant to a (1000, 1000) float32 Variable,
   then backward; prints the peak traced memory (tracemalloc) of forward and
   backward. Backward needs none of the intermediates, so the peak stays at a
   few arrays (4 MB each).

Each side runs in its own ``--runs`` fresh processes (see ``_timing.py``); a
figure is the median over them of each process's median of ``--repeat`` runs,
with their spread (lowest-highest) in brackets. PyTorch runs with one thread
(``torch.set_num_threads(1)``); run with ``OMP_NUM_THREADS=1`` so that NumPy's
BLAS uses one thread as well.

Run: ``OMP_NUM_THREADS=1 python benchmarks/overhead.py [--steps 100] [--repeat 20]
[--runs 1] [--cpu-time]``.
"""

import argparse
import functools
import gc
import json
import statistics
import time
import tracemalloc

import numpy
from _timing import (
    add_side_arguments,
    keep_freed_memory_as_a_trainer_does,
    median_and_best_us,
    results_per_side,
    spread,
)

import dbr.functions as F
from dbr.core import Parameter, Variable
from dbr.core.ops import sum as sum_

# The ranges of x0, a, b and c, drawn uniformly as (1, 16) float32 arrays.
BOUNDS = ((0.5, 1.0), (0.4, 0.5), (0.4, 0.5), (1.0, 1.5))
FIGURES = {
    "chain": "chain h * a + b, ** 2 or / c: median us per op (forward + backward)",
    "recurrent": "recurrent h = tanh(h * a + b) on shared Parameters: median us per op "
    "and direction",
}


def _chain(steps, h, a, b, c):
    """``steps`` rounds of ``h * a + b``, then ``** 2`` (even rounds) or ``/ c``: any framework."""
    for i in range(steps):
        h = h * a + b
        h = h**2 if i % 2 == 0 else h / c
    return h


def chain_dbr(steps, x0, a, b, c):
    """Build the op chain in dbr; return the number of FunctionNodes applied."""
    h = _chain(steps, Variable(x0), Variable(a), Variable(b), Variable(c))
    sum_(h).backward()
    return 3 * steps + 1


def chain_torch(torch, steps, x0, a, b, c):
    """The same chain in PyTorch."""
    h = _chain(steps, *(torch.from_numpy(v).requires_grad_() for v in (x0, a, b, c)))
    h.sum().backward()
    return 3 * steps + 1


def recurrent_dbr(steps, x0, a, b):
    """The recurrent chain in dbr on Parameters ``a`` and ``b``; return the op count."""
    h = x0
    for _ in range(steps):
        h = F.tanh(h * a + b)
    loss = F.sum(h)
    a.cleargrad()
    b.cleargrad()
    loss.backward()
    return 3 * steps + 1


def recurrent_torch(torch, steps, x0, a, b):
    """The recurrent chain in PyTorch on parameters ``a`` and ``b``."""
    h = x0
    for _ in range(steps):
        h = torch.tanh(h * a + b)
    loss = h.sum()
    a.grad = None
    b.grad = None
    loss.backward()
    return 3 * steps + 1


def peak_memory_mb(n_adds=1000, size=1000):
    """Peak traced memory (MB): ``n_adds`` additions of 1 to a (size, size) Variable, backward."""
    gc.collect()
    tracemalloc.start()
    x = Variable(numpy.zeros((size, size), numpy.float32))
    h = x
    for _ in range(n_adds):
        h = h + 1.0
    _, forward_peak = tracemalloc.get_traced_memory()
    loss = sum_(h)
    del h
    loss.backward()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert x.grad is not None and float(x.grad[0, 0]) == 1.0
    return forward_peak / 2**20, peak / 2**20


def side_figures(side, steps, repeat, clock):
    """{"header", "chain", "recurrent"[, "peak_mb"]}: the median µs per op of ``side``'s
    chains in this process (per op and direction for the recurrent one); dbr's peak memory."""
    rng = numpy.random.default_rng(0)
    x0, a, b, c = (rng.uniform(*bounds, (1, 16)).astype(numpy.float32) for bounds in BOUNDS)
    figures = {"header": None}
    if side == "dbr":
        keep_freed_memory_as_a_trainer_does()
        pa, pb = Parameter(a.copy()), Parameter(b.copy())
        chain = functools.partial(chain_dbr, steps, x0, a, b, c)
        recurrent = functools.partial(recurrent_dbr, steps, x0, pa, pb)
        figures["peak_mb"] = peak_memory_mb()
    else:
        import torch

        torch.set_num_threads(1)
        figures["header"] = f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)"
        ta = torch.nn.Parameter(torch.from_numpy(a.copy()))
        tb = torch.nn.Parameter(torch.from_numpy(b.copy()))
        chain = functools.partial(chain_torch, torch, steps, x0, a, b, c)
        recurrent = functools.partial(recurrent_torch, torch, steps, torch.from_numpy(x0), ta, tb)
    figures["chain"] = median_and_best_us(chain, repeat, clock)[0]
    figures["recurrent"] = median_and_best_us(recurrent, repeat, clock)[0] / 2
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--steps",
        type=int,
        default=100,
        help="repetitions of the 3-op block (default 100: 300 ops)",
    )
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time with the thread's CPU clock (time.thread_time) instead of the wall "
        "clock: steadier on a shared machine; both sides run in one thread",
    )
    add_side_arguments(parser)
    args = parser.parse_args()
    if args.side:
        clock = time.thread_time if args.cpu_time else time.perf_counter
        print(json.dumps(side_figures(args.side, args.steps, args.repeat, clock)))
        return
    results = results_per_side(args.runs)
    if "torch" in results:
        print(results["torch"][0]["header"])
    print(f"each side in its own processes, medians of {args.runs}")
    for figure, title in FIGURES.items():
        print(title)
        ours = [run[figure] for run in results["dbr"]]
        print(f"  dbr   {statistics.median(ours):7.2f} us  ({spread(ours)})")
        if "torch" in results:
            theirs = [run[figure] for run in results["torch"]]
            ratios = [a / b for a, b in zip(ours, theirs)]
            print(f"  torch {statistics.median(theirs):7.2f} us  ({spread(theirs)})")
            ratio = statistics.median(ours) / statistics.median(theirs)
            print(f"  ratio dbr / torch: {ratio:.2f}x  ({spread(ratios)})")
    forward_mb, total_mb = results["dbr"][0]["peak_mb"]
    print(
        f"peak memory, 1000 additions on a (1000, 1000) float32 Variable: "
        f"forward {forward_mb:.1f} MB, forward + backward {total_mb:.1f} MB"
    )


if __name__ == "__main__":
    main()
