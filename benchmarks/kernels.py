"""Array work against PyTorch on the CPU at the same thread count (issue 21's targets).

Groups (each run times dbr and PyTorch in two separate fresh processes):

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
``--repeat`` times after a warm-up and keeps the median; the table shows the
median over ``--runs`` processes per side and the spread (lowest-highest) of the
ratio.

Each side has its processes to itself, as when it trains alone (see
``_timing.py``): the dbr side keeps the memory of freed arrays
(dbr.core.memory, what a Trainer run gets), PyTorch runs with glibc's defaults
and without dbr's code loaded. In one process they would share the C heap: glibc
returns the memory freed at the end of one library's iteration to the system and
the other's next allocations fault it in again, so each side's time would depend
on the other's memory use (n_step_lstm: dbr using 6 MiB less at its peak made
PyTorch's iterations 7 ms faster in the same process), and PyTorch would run
under dbr's allocator setting. ``DBR_KEEP_FREED_MEMORY=0`` times dbr without it.

To compare two trees of dbr, run it twice with ``PYTHONPATH`` naming each one's
``packages/*/src``. On a machine shared with other work, ``--clock thread`` times
the CPU time of the calling thread instead of the wall clock: it ignores the time
other processes take the core away, but also any work of other threads, so it is
meaningful for the 1-thread groups only.

Run: ``python benchmarks/kernels.py [--runs 3] [--repeat 20] [--groups small large lenet1 lenet2]
[--clock wall|thread]``.
"""

import argparse
import json
import statistics
import time

from _timing import (
    add_side_arguments,
    keep_freed_memory_as_a_trainer_does,
    results_per_side,
    spread,
    thread_environment,
    torch_installed,
)

SMALL = (256, 1024)
LARGE = (2048, 2048)
GROUPS = {"small": (1, SMALL), "large": (2, LARGE), "lenet1": (1, None), "lenet2": (2, None)}
LSTM_LAYERS, LSTM_UNITS, LSTM_BATCH, LSTM_STEPS = 2, 256, 20, 35
LENET_BATCH = 64


def elementwise_cases(torch, shape):
    """name -> run: forward + backward of the elementwise functions on ``shape``, in
    PyTorch when ``torch`` is given, else in dbr."""
    import numpy

    rng = numpy.random.default_rng(0)
    x = rng.standard_normal(shape).astype(numpy.float32)
    t = rng.integers(0, shape[1], shape[0]).astype(numpy.int32)
    if torch is not None:
        return _torch_elementwise_cases(torch, x, t)

    import dbr.functions as F
    from dbr.core import Variable

    def unary(f):
        def run():
            F.sum(f(Variable(x))).backward()

        return run

    def total():
        F.sum(Variable(x)).backward()

    def sce():
        F.softmax_cross_entropy(Variable(x), t).backward()

    return {
        "relu": unary(F.relu),
        "sigmoid": unary(F.sigmoid),
        "tanh": unary(F.tanh),
        "sum": total,
        "softmax_cross_entropy": sce,
    }


def _torch_elementwise_cases(torch, x, t):
    """elementwise_cases' PyTorch side on the array ``x`` and the labels ``t``."""
    tx, tt = torch.from_numpy(x), torch.from_numpy(t).long()

    def unary(g):
        def run():
            g(tx.detach().requires_grad_()).sum().backward()

        return run

    def total():
        tx.detach().requires_grad_().sum().backward()

    def sce():
        torch.nn.functional.cross_entropy(tx.detach().requires_grad_(), tt).backward()

    return {
        "relu": unary(torch.relu),
        "sigmoid": unary(torch.sigmoid),
        "tanh": unary(torch.tanh),
        "sum": total,
        "softmax_cross_entropy": sce,
    }


def lstm_case(torch):
    """n_step_lstm forward + backward, summed outputs: in PyTorch (``torch.nn.LSTM``)
    when ``torch`` is given, else in dbr."""
    import numpy

    rng = numpy.random.default_rng(0)
    n, h = LSTM_LAYERS, LSTM_UNITS

    def f32(*shape, scale=1.0):
        return (rng.standard_normal(shape) * scale).astype(numpy.float32)

    steps = [f32(LSTM_BATCH, h) for _ in range(LSTM_STEPS)]
    if torch is not None:
        module = torch.nn.LSTM(h, h, n)
        packed = torch.from_numpy(numpy.stack(steps))

        def theirs():
            y, _ = module(packed.detach().requires_grad_())
            y.sum().backward()

        return theirs

    import dbr.functions as F
    from dbr.core import Variable

    ws = [[f32(h, h, scale=0.05) for _ in range(8)] for _ in range(n)]
    bs = [[numpy.zeros(h, numpy.float32) for _ in range(8)] for _ in range(n)]
    zeros = numpy.zeros((n, LSTM_BATCH, h), numpy.float32)

    def ours():
        xs = [Variable(a) for a in steps]
        vws = [[Variable(w) for w in layer] for layer in ws]
        vbs = [[Variable(b) for b in layer] for layer in bs]
        _, _, ys = F.n_step_lstm(n, 0.0, Variable(zeros), Variable(zeros), vws, vbs, xs)
        F.sum(F.stack(ys)).backward()

    return ours


def lenet5_class():
    """dbr's LeNet-5 of the ``lenet`` groups, its forward giving class scores (imports dbr)."""
    import dbr.functions as F
    import dbr.links as L
    from dbr.core import Chain

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

    return LeNet5


def lenet_case(torch):
    """A MomentumSGD training step of LeNet-5: in PyTorch when ``torch`` is given (with
    the initial weights of dbr's network), else in dbr."""
    import numpy

    import dbr.functions as F
    from dbr.training import optimizers

    LeNet5 = lenet5_class()
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

    if torch is None:
        return ours
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

    return theirs


def worker(group, side, repeat, clock):
    """Time ``side``'s cases of one group in this process; print {case: median_ms} as JSON."""
    threads, shape = GROUPS[group]
    clock = time.thread_time if clock == "thread" else time.perf_counter
    torch = None
    if side == "dbr":
        keep_freed_memory_as_a_trainer_does()
    else:
        import torch

        torch.set_num_threads(threads)
    if group == "small":
        cases = elementwise_cases(torch, shape)
        cases["n_step_lstm"] = lstm_case(torch)
    elif group == "large":
        cases = elementwise_cases(torch, shape)
    else:
        cases = {f"lenet5 step, {threads} thread(s)": lenet_case(torch)}
    result = {}
    for name, run in cases.items():
        run()
        run()
        times = []
        for _ in range(repeat):
            start = clock()
            run()
            times.append(clock() - start)
        result[name] = statistics.median(times) * 1e3
    print(json.dumps(result))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="timings per case and process")
    parser.add_argument("--groups", nargs="+", choices=tuple(GROUPS), default=list(GROUPS))
    parser.add_argument(
        "--clock",
        choices=("wall", "thread"),
        default="wall",
        help="wall clock, or CPU time of the calling thread (1-thread groups only)",
    )
    parser.add_argument("--worker", choices=tuple(GROUPS), help=argparse.SUPPRESS)
    add_side_arguments(parser, runs=3)
    args = parser.parse_args()
    if args.side:
        worker(args.worker, args.side, args.repeat, args.clock)
        return
    if not torch_installed():
        return
    import torch

    print(
        f"torch {torch.__version__}; median ms ({args.clock} clock) of {args.repeat} "
        f"per process, {args.runs} runs, dbr and PyTorch in separate processes"
    )
    print(f"{'case':<28}{'thr':>4}{'shape':>12}{'dbr':>10}{'torch':>10}{'ratio':>8}  spread")
    for group in args.groups:
        threads, shape = GROUPS[group]
        env = thread_environment(threads)
        runs = results_per_side(args.runs, extra_args=["--worker", group], env=env)
        for name in runs["dbr"][0]:
            ours = statistics.median(r[name] for r in runs["dbr"])
            theirs = statistics.median(r[name] for r in runs["torch"])
            ratios = [a[name] / b[name] for a, b in zip(runs["dbr"], runs["torch"])]
            label = "x".join(map(str, shape)) if shape and name != "n_step_lstm" else "-"
            print(
                f"{name:<28}{threads:>4}{label:>12}{ours:10.3f}{theirs:10.3f}"
                f"{ours / theirs:7.2f}x  {spread(ratios)}"
            )


if __name__ == "__main__":
    main()
