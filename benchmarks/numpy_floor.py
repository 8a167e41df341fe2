"""relu and sigmoid as bare NumPy passes, against dbr and PyTorch (issue 21's floor).

Each case is ``sum(f(x))`` forward and backward, on (256, 1024) float32 at 1
thread and on (2048, 2048) at 2 threads, as ``kernels.py`` times it. Three
sides, each in its own fresh processes:

- ``numpy``: the array work dbr does, with nothing around it: relu's forward
  (zeros, then ``maximum``), the sum (a matrix-vector product with ones), the
  gradient (``greater`` into float32, times the broadcast gradient of the
  sum); sigmoid's four passes forward (``tanh(x / 2) / 2 + 1 / 2``) and three
  backward (``(1 - y) * y * gy``). Arrays of 1M elements or more are split
  over the threads by rows, as dbr's ``blockwise`` does.
- ``dbr``: ``F.sum(F.relu(v)).backward()`` and the same for sigmoid.
- ``torch``: the same in PyTorch at the same thread count.

``numpy`` is what dbr would take with no framework at all, so ``numpy /
torch`` bounds what any change inside dbr can reach while each NumPy ufunc is
one pass over memory (issue 21 decided against other array libraries). The
``numpy`` and ``dbr`` sides keep the memory of freed arrays (dbr.core.memory, what
a Trainer run gets); PyTorch runs with glibc's defaults (see ``_timing.py``).

Run: ``python benchmarks/numpy_floor.py [--runs 3] [--repeat 40]``.
"""

import argparse
import json
import statistics
import sys
import time

from _timing import (
    json_of_process,
    keep_freed_memory_as_a_trainer_does,
    thread_environment,
    torch_installed,
)

CASES = {"small": (1, (256, 1024)), "large": (2, (2048, 2048))}
SIDES = ("numpy", "dbr", "torch")
PARALLEL_SIZE = 1 << 20


def numpy_side(x, threads):
    """name -> callable: the bare NumPy passes of each case."""
    from concurrent.futures import ThreadPoolExecutor

    import numpy

    keep_freed_memory_as_a_trainer_does()  # dbr's array work, with the setting dbr runs with
    shape, dtype = x.shape, x.dtype
    half, one = dtype.type(0.5), dtype.type(1)
    ones = numpy.ones(shape[1], dtype)
    gy = numpy.broadcast_to(numpy.ones((1, 1), dtype), shape)
    pool = ThreadPoolExecutor(threads - 1) if threads > 1 else None

    def split(body, out, *inputs):
        if pool is None or out.size < PARALLEL_SIZE:
            body(out, *inputs)
            return
        step = -(-shape[0] // threads)
        parts = [slice(lo, lo + step) for lo in range(0, shape[0], step)]
        futures = [pool.submit(body, out[r], *(a[r] for a in inputs)) for r in parts[1:]]
        body(out[parts[0]], *(a[parts[0]] for a in inputs))
        for future in futures:
            future.result()

    def relu_forward(y, a):
        numpy.maximum(a, y, out=y)

    def relu_grad(g, y, gy):
        numpy.greater(y, 0, out=g)
        g *= gy

    def sigmoid_forward(y, a):
        numpy.multiply(a, half, out=y)
        numpy.tanh(y, out=y)
        y *= half
        y += half

    def sigmoid_grad(g, y, gy):
        numpy.subtract(one, y, out=g)
        g *= y
        g *= gy

    def case(forward, grad, fresh):
        def run():
            y = fresh(shape, dtype)
            split(forward, y, x)
            (y @ ones).sum()
            g = numpy.empty(shape, dtype)
            split(grad, g, y, gy)

        return run

    return {
        "relu": case(relu_forward, relu_grad, numpy.zeros),
        "sigmoid": case(sigmoid_forward, sigmoid_grad, numpy.empty),
    }


def dbr_side(x, threads):
    """name -> callable: dbr's relu and sigmoid, forward and backward."""
    import dbr.functions as F
    from dbr.core import Variable

    keep_freed_memory_as_a_trainer_does()

    def case(f):
        def run():
            F.sum(f(Variable(x))).backward()

        return run

    return {"relu": case(F.relu), "sigmoid": case(F.sigmoid)}


def torch_side(x, threads):
    """name -> callable: PyTorch's relu and sigmoid, forward and backward."""
    import torch

    torch.set_num_threads(threads)
    tx = torch.from_numpy(x)

    def case(f):
        def run():
            f(tx.detach().requires_grad_()).sum().backward()

        return run

    return {"relu": case(torch.relu), "sigmoid": case(torch.sigmoid)}


def worker(case, side, repeat):
    """Time one side of one case in this process; print {name: median_us} as JSON."""
    import numpy

    threads, shape = CASES[case]
    x = numpy.random.default_rng(0).standard_normal(shape).astype(numpy.float32)
    runs = {"numpy": numpy_side, "dbr": dbr_side, "torch": torch_side}[side](x, threads)
    result = {}
    for name, run in runs.items():
        for _ in range(3):
            run()
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            run()
            times.append(time.perf_counter() - start)
        result[name] = statistics.median(times) * 1e6
    print(json.dumps(result))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per side")
    parser.add_argument("--repeat", type=int, default=40, help="timings per case and process")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker, args.repeat)
        return
    if not torch_installed():
        return
    import torch

    print(f"torch {torch.__version__}; median µs of {args.repeat} per process, {args.runs} runs")
    print(f"{'case':<9}{'thr':>4}{'shape':>11}" + "".join(f"{s:>10}" for s in SIDES) + "  ratios")
    for case, (threads, shape) in CASES.items():
        env = thread_environment(threads)
        medians = {}
        for side in SIDES:
            runs = []
            for _ in range(args.runs):
                command = [sys.executable, __file__, "--worker", case, side]
                runs.append(json_of_process(command + ["--repeat", str(args.repeat)], env))
            medians[side] = {name: statistics.median(r[name] for r in runs) for name in runs[0]}
        for name in medians["dbr"]:
            row = [medians[s][name] for s in SIDES]
            label = "x".join(map(str, shape))
            print(
                f"{name:<9}{threads:>4}{label:>11}"
                + "".join(f"{v:10.1f}" for v in row)
                + f"  numpy/torch {row[0] / row[2]:.2f}x, dbr/torch {row[1] / row[2]:.2f}x"
            )


if __name__ == "__main__":
    main()
