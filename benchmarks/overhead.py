"""Per-operation overhead and peak memory of dbr's define-by-run engine.

1. Overhead: a chain of small ops on (1, 16) float32 arrays -- ``h = h * a + b``
   then a core op (``** 2`` or ``/ c``) -- summed and backpropagated. Prints
   microseconds per op (forward + backward, averaged over repeats) for dbr
   and, when installed, PyTorch on the CPU with the same chain.
2. Memory: 1,000 additions of a constant to a (1000, 1000) float32 Variable,
   then backward; prints the peak traced memory (tracemalloc) of forward and
   backward. Backward needs none of the intermediates, so the peak stays at a
   few arrays (4 MB each).

Run: ``python benchmarks/overhead.py [--steps 300] [--repeat 20]``.
"""

import argparse
import gc
import time
import tracemalloc

import numpy

from dbr.core import Variable
from dbr.core.ops import sum as sum_


def chain_dbr(steps, x0, a, b, c):
    """Build the op chain in dbr; return the number of FunctionNodes applied."""
    x = Variable(x0)
    va, vb, vc = Variable(a), Variable(b), Variable(c)
    h = x
    n_ops = 0
    for i in range(steps):
        h = h * va + vb
        h = h**2 if i % 2 == 0 else h / vc
        n_ops += 3
    sum_(h).backward()
    return n_ops + 1


def chain_torch(torch, steps, x0, a, b, c):
    """The same chain in PyTorch."""
    x = torch.from_numpy(x0).requires_grad_()
    ta = torch.from_numpy(a).requires_grad_()
    tb = torch.from_numpy(b).requires_grad_()
    tc = torch.from_numpy(c).requires_grad_()
    h = x
    n_ops = 0
    for i in range(steps):
        h = h * ta + tb
        h = h**2 if i % 2 == 0 else h / tc
        n_ops += 3
    h.sum().backward()
    return n_ops + 1


def time_per_op(fn, repeat):
    """Best-of-``repeat`` microseconds per op of ``fn()`` (which returns its op count)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        n_ops = fn()
        best = min(best, (time.perf_counter() - start) / n_ops)
    return best * 1e6


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


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--steps",
        type=int,
        default=100,
        help="repetitions of the 3-op block (default 100: 300 ops)",
    )
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()

    rng = numpy.random.default_rng(0)
    x0 = rng.uniform(0.5, 1.0, (1, 16)).astype(numpy.float32)
    a = rng.uniform(0.4, 0.5, (1, 16)).astype(numpy.float32)
    b = rng.uniform(0.4, 0.5, (1, 16)).astype(numpy.float32)
    c = rng.uniform(1.0, 1.5, (1, 16)).astype(numpy.float32)

    dbr_us = time_per_op(lambda: chain_dbr(args.steps, x0, a, b, c), args.repeat)
    print(f"dbr      per op (forward + backward): {dbr_us:7.2f} us")
    try:
        import torch
    except ImportError:
        print("torch    not installed (pip install torch==2.13.0 to compare)")
    else:
        torch.set_num_threads(1)
        torch_us = time_per_op(lambda: chain_torch(torch, args.steps, x0, a, b, c), args.repeat)
        print(f"torch {torch.__version__} per op (forward + backward): {torch_us:7.2f} us")
        print(f"ratio dbr / torch: {dbr_us / torch_us:.2f}x")

    forward_mb, total_mb = peak_memory_mb()
    print(
        f"peak memory, 1000 additions on a (1000, 1000) float32 Variable: "
        f"forward {forward_mb:.1f} MB, forward + backward {total_mb:.1f} MB"
    )


if __name__ == "__main__":
    main()
