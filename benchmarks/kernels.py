"""Array work against PyTorch on the CPU at the same thread count (issue 21's targets).

Groups (each one fresh process per run, dbr and PyTorch interleaved in it, or
each in its own with ``--isolate``):

- ``small``: forward + backward of relu, sigmoid, tanh, sum and softmax_cross_entropy
  on (256, 1024) float32 at 1 thread (target: at most 1.3x PyTorch), and
  n_step_lstm, 2 layers of 256 units, 20 sequences of 35 steps (at most 1.2x).
- ``large``: the same functions on (2048, 2048) float32 at 2 threads (at most 1.3x).
- ``lenet1`` / ``lenet2``: one MomentumSGD training step (lr 0.01, momentum 0.9) of
  LeNet-5 (conv 1->20 5x5, 2x2 max pooling, conv 20->50 5x5, 2x2 max pooling,
  linear 800-500, relu, linear 500-10, softmax cross entropy), batch 64 of
  28x28 images, at 1 and 2 threads (at most 1.5x).

The thread count is set before NumPy and PyTorch load: ``OMP_NUM_THREADS`` (which
sizes dbr's CPU thread pool), ``OPENBLAS_NUM_THREADS``/``MKL_NUM_THREADS`` for the
BLAS, ``torch.set_num_threads`` for PyTorch. Inside a process, each case runs
``--repeat`` times after a warm-up, alternating dbr and PyTorch, and keeps the
median of each; the table shows the median over ``--runs`` processes and the
spread (lowest-highest) of the ratio.

With ``--isolate``, each run times dbr and PyTorch in two separate fresh processes
(each case alone in its process) instead of interleaving them in one. They share
the C heap when interleaved: glibc returns the memory freed at the end of one
library's iteration to the system and the other's next allocations fault it in
again, so each side's time depends on the other's memory use (n_step_lstm:
dbr using 6 MiB less at its peak made PyTorch's iterations 7 ms faster in the
same process). Isolated, each side pays for its own page faults only, as when it
trains alone. Every worker imports dbr, whose import sets glibc's malloc to keep
freed memory (dbr.core.memory), so PyTorch runs with the same allocator settings
as dbr in both layouts; ``DBR_KEEP_FREED_MEMORY=0`` compares both without them.

To compare two trees of dbr, run it twice with ``PYTHONPATH`` naming each one's
``packages/*/src``. On a machine shared with other work, ``--clock thread`` times
the CPU time of the calling thread instead of the wall clock: it ignores the time
other processes take the core away, but also any work of other threads, so it is
meaningful for the 1-thread groups only.

Run: ``python benchmarks/kernels.py [--runs 3] [--repeat 20] [--groups small large lenet1 lenet2]
[--clock wall|thread] [--isolate]``.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

SMALL = (256, 1024)
LARGE = (2048, 2048)
GROUPS = {"small": (1, SMALL), "large": (2, LARGE), "lenet1": (1, None), "lenet2": (2, None)}
LSTM_LAYERS, LSTM_UNITS, LSTM_BATCH, LSTM_STEPS = 2, 256, 20, 35
LENET_BATCH = 64


def elementwise_cases(torch, shape):
    """name -> (dbr_run, torch_run) for the elementwise functions on ``shape``."""
    import numpy

    import dbr.functions as F
    from dbr.core import Variable

    rng = numpy.random.default_rng(0)
    x = rng.standard_normal(shape).astype(numpy.float32)
    t = rng.integers(0, shape[1], shape[0]).astype(numpy.int32)
    tx, tt = torch.from_numpy(x), torch.from_numpy(t).long()

    def unary(f, g):
        def ours():
            v = Variable(x)
            F.sum(f(v)).backward()

        def theirs():
            v = tx.detach().requires_grad_()
            g(v).sum().backward()

        return ours, theirs

    def total():
        v = Variable(x)
        F.sum(v).backward()

    def total_torch():
        v = tx.detach().requires_grad_()
        v.sum().backward()

    def sce():
        v = Variable(x)
        F.softmax_cross_entropy(v, t).backward()

    def sce_torch():
        v = tx.detach().requires_grad_()
        torch.nn.functional.cross_entropy(v, tt).backward()

    return {
        "relu": unary(F.relu, torch.relu),
        "sigmoid": unary(F.sigmoid, torch.sigmoid),
        "tanh": unary(F.tanh, torch.tanh),
        "sum": (total, total_torch),
        "softmax_cross_entropy": (sce, sce_torch),
    }


def lstm_case(torch):
    """(dbr_run, torch_run) of n_step_lstm forward + backward, summed outputs."""
    import numpy

    import dbr.functions as F
    from dbr.core import Variable

    rng = numpy.random.default_rng(0)
    n, h = LSTM_LAYERS, LSTM_UNITS

    def f32(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(numpy.float32)

    steps = [f32(LSTM_BATCH, h) for _ in range(LSTM_STEPS)]
    ws = [[f32(h, h, scale=0.05) for _ in range(8)] for _ in range(n)]
    bs = [[numpy.zeros(h, numpy.float32) for _ in range(8)] for _ in range(n)]
    zeros = numpy.zeros((n, LSTM_BATCH, h), numpy.float32)

    def ours():
        xs = [Variable(a) for a in steps]
        vws = [[Variable(w) for w in layer] for layer in ws]
        vbs = [[Variable(b) for b in layer] for layer in bs]
        _, _, ys = F.n_step_lstm(n, 0.0, Variable(zeros), Variable(zeros), vws, vbs, xs)
        F.sum(F.stack(ys)).backward()

    module = torch.nn.LSTM(h, h, n)
    packed = torch.from_numpy(numpy.stack(steps))

    def theirs():
        y, _ = module(packed.detach().requires_grad_())
        y.sum().backward()

    return ours, theirs


def lenet_case(torch):
    """(dbr_step, torch_step): a MomentumSGD training step of LeNet-5, same weights."""
    import numpy

    import dbr.functions as F
    import dbr.links as L
    from dbr.core import Chain
    from dbr.training import optimizers

    class LeNet5(Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.conv1 = L.Convolution2D(1, 20, 5)
                self.conv2 = L.Convolution2D(20, 50, 5)
                self.fc3 = L.Linear(800, 500)
                self.fc4 = L.Linear(500, 10)

        def forward(self, x):
            h = F.max_pooling_2d(self.conv1(x), 2, 2)
            h = F.max_pooling_2d(self.conv2(h), 2, 2)
            return self.fc4(F.relu(self.fc3(h)))

    numpy.random.seed(0)
    rng = numpy.random.default_rng(0)
    x = rng.random((LENET_BATCH, 1, 28, 28), dtype=numpy.float32)
    t = rng.integers(0, 10, LENET_BATCH).astype(numpy.int32)
    model = LeNet5()
    model(x)
    optimizer = optimizers.MomentumSGD(lr=0.01, momentum=0.9).setup(model)

    def ours():
        loss = F.softmax_cross_entropy(model(x), t)
        model.cleargrads()
        loss.backward()
        optimizer.update()

    nn = torch.nn
    net = nn.Sequential(
        nn.Conv2d(1, 20, 5),
        nn.MaxPool2d(2),
        nn.Conv2d(20, 50, 5),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(800, 500),
        nn.ReLU(),
        nn.Linear(500, 10),
    )
    targets = [m for m in net if isinstance(m, (nn.Conv2d, nn.Linear))]
    with torch.no_grad():
        for target, source in zip(targets, (model.conv1, model.conv2, model.fc3, model.fc4)):
            target.weight.copy_(torch.from_numpy(source.W.array))
            target.bias.copy_(torch.from_numpy(source.b.array))
    sgd = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    tx, tt = torch.from_numpy(x), torch.from_numpy(t).long()

    def theirs():
        sgd.zero_grad(set_to_none=True)
        loss_fn(net(tx), tt).backward()
        sgd.step()

    return ours, theirs


def worker(group, repeat, clock, side=None):
    """Time one group in this process; print {case: [dbr_ms, torch_ms]} as JSON.

    With ``side`` (0 for dbr, 1 for PyTorch) only that side runs; the other's
    time is printed as None.
    """
    import torch

    threads, shape = GROUPS[group]
    clock = time.thread_time if clock == "thread" else time.perf_counter
    torch.set_num_threads(threads)
    if group == "small":
        cases = elementwise_cases(torch, shape)
        cases["n_step_lstm"] = lstm_case(torch)
    elif group == "large":
        cases = elementwise_cases(torch, shape)
    else:
        cases = {f"lenet5 step, {threads} thread(s)": lenet_case(torch)}
    result = {}
    for name, pair in cases.items():
        sides = (0, 1) if side is None else (side,)
        runs = [pair[k] for k in sides]
        times = {k: [] for k in sides}
        for fn in runs + runs:
            fn()
        for _ in range(repeat):
            for k, fn in zip(sides, runs):
                start = clock()
                fn()
                times[k].append(clock() - start)
        result[name] = [statistics.median(times[k]) * 1e3 if k in times else None for k in (0, 1)]
    print(json.dumps(result))


def _run_worker(command, env):
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per group")
    parser.add_argument("--repeat", type=int, default=20, help="timings per case and process")
    parser.add_argument("--groups", nargs="+", choices=tuple(GROUPS), default=list(GROUPS))
    parser.add_argument(
        "--clock",
        choices=("wall", "thread"),
        default="wall",
        help="wall clock, or CPU time of the calling thread (1-thread groups only)",
    )
    parser.add_argument(
        "--isolate",
        action="store_true",
        help="time dbr and PyTorch in separate processes (see the module docstring)",
    )
    parser.add_argument("--worker", choices=tuple(GROUPS), help=argparse.SUPPRESS)
    parser.add_argument("--side", type=int, choices=(0, 1), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.repeat, args.clock, args.side)
        return
    try:
        import torch
    except ImportError:
        print("torch not installed (pip install torch==2.13.0 to compare)")
        return
    layout = "dbr and PyTorch in separate processes" if args.isolate else "interleaved"
    print(
        f"torch {torch.__version__}; median ms ({args.clock} clock) of {args.repeat} "
        f"per process, {args.runs} runs, {layout}"
    )
    print(f"{'case':<28}{'thr':>4}{'shape':>12}{'dbr':>10}{'torch':>10}{'ratio':>8}  spread")
    for group in args.groups:
        threads, shape = GROUPS[group]
        env = dict(os.environ)
        for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[name] = str(threads)
        runs = []
        for _ in range(args.runs):
            command = [sys.executable, __file__, "--worker", group, "--repeat", str(args.repeat)]
            command += ["--clock", args.clock]
            if not args.isolate:
                runs.append(_run_worker(command, env))
                continue
            ours, theirs = (_run_worker(command + ["--side", str(k)], env) for k in (0, 1))
            runs.append({name: [ours[name][0], theirs[name][1]] for name in ours})
        for name in runs[0]:
            ours = statistics.median(r[name][0] for r in runs)
            theirs = statistics.median(r[name][1] for r in runs)
            ratios = [r[name][0] / r[name][1] for r in runs]
            label = "x".join(map(str, shape)) if shape and name != "n_step_lstm" else "-"
            print(
                f"{name:<28}{threads:>4}{label:>12}{ours:10.3f}{theirs:10.3f}"
                f"{ours / theirs:7.2f}x  {min(ratios):.2f}-{max(ratios):.2f}"
            )


if __name__ == "__main__":
    main()
