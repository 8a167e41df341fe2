"""@static_graph against define-by-run and PyTorch eager on the CPU, one thread (issue 37).

Each case is one training iteration, timed three ways: dbr define-by-run, the same
dbr model with its forward under ``@static_graph`` (replays after the first calls),
and PyTorch eager with the same initial weights.

- ``recurrent``: 100 steps of ``h = tanh(h * a + b)`` on two (1, 16) Parameters, then
  ``sum`` and backward (the recurrent overhead chain of ``overhead.py``).
- ``mlp-b32``: the MLP 784-100-100-10 with ReLU, softmax cross entropy, SGD, batch 32.
- ``lenet5-b64``: LeNet-5 of ``kernels.py`` (conv 1->20 5x5, pooling, conv 20->50 5x5,
  pooling, 800-500 ReLU, 500-10), MomentumSGD, batch 64.
- ``lstm-lm``: two layers of 200 LSTM units over 10,000 words, batch 20, 35 steps of
  truncated BPTT with dropout 0.5, SGD with gradient clipping left out; the static
  chain is one time step, ``(word, c1, h1, c2, h2) -> (c1, h1, c2, h2, scores)``.
- ``lstm-lm-outside``: the same model and iteration with the embedding, its dropout and
  the first upward layer left outside the static chain (define-by-run), which is then
  ``(x, c1, h1, c2, h2) -> (c1, h1, c2, h2, scores)``: define-by-run runs the backward of
  those leading functions after everything above them, so the embedding's gradient sum
  is made late; inside a replay it is made with each time step's backward.

The dbr processes also give each dbr variant's peak traced memory (tracemalloc) over
three iterations after warm-up. Each side runs in its own ``--runs`` fresh processes
(see ``_timing.py``); a figure is the median over them of each process's median of
``--repeat`` iterations.

Run: ``OMP_NUM_THREADS=1 python benchmarks/static_graph.py [--repeat 20] [--runs 3]
[--cases recurrent mlp-b32 lenet5-b64 lstm-lm lstm-lm-outside]``.
"""

import argparse
import gc
import json
import statistics
import time
import tracemalloc

import kernels
import numpy
from _timing import add_side_arguments, keep_freed_memory_as_a_trainer_does, results_per_side

CASES = ("recurrent", "mlp-b32", "lenet5-b64", "lstm-lm", "lstm-lm-outside")
VOCAB, UNITS, BATCH, BPTT = 10000, 200, 20, 35


def _rng():
    return numpy.random.default_rng(0)


def _f32(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(numpy.float32)


# -- dbr -------------------------------------------------------------------------------


def dbr_models():
    """{case: (model class, make the iteration for a model)} for dbr, both variants."""
    import dbr.functions as F
    import dbr.links as L
    from dbr.core import Chain, Parameter
    from dbr.training import optimizers

    class Recurrent(Chain):
        def __init__(self):
            super().__init__()
            rng = _rng()
            with self.init_scope():
                self.a = Parameter(rng.uniform(0.4, 0.5, (1, 16)).astype(numpy.float32))
                self.b = Parameter(rng.uniform(0.4, 0.5, (1, 16)).astype(numpy.float32))

        def forward(self, x):
            h = x
            for _ in range(100):
                h = F.tanh(h * self.a + self.b)
            return F.sum(h)

    class MLP(Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.l1, self.l2, self.l3 = (
                    L.Linear(784, 100),
                    L.Linear(100, 100),
                    L.Linear(100, 10),
                )

        def forward(self, x, t):
            h = F.relu(self.l2(F.relu(self.l1(x))))
            return F.softmax_cross_entropy(self.l3(h), t)

    class LeNet5(kernels.lenet5_class()):
        def forward(self, x, t):
            return F.softmax_cross_entropy(super().forward(x), t)

    class LMStep(Chain):
        def __init__(self):
            super().__init__()
            with self.init_scope():
                self.embed = L.EmbedID(VOCAB, UNITS)
                self.up1, self.up2 = L.Linear(UNITS, 4 * UNITS), L.Linear(UNITS, 4 * UNITS)
                self.lat1 = L.Linear(UNITS, 4 * UNITS, nobias=True)
                self.lat2 = L.Linear(UNITS, 4 * UNITS, nobias=True)
                self.out = L.Linear(UNITS, VOCAB)
            for param in self.params():
                param.array[...] = numpy.random.uniform(-0.1, 0.1, param.shape)

        def forward(self, word, c1, h1, c2, h2):
            return self.step(self.up1(F.dropout(self.embed(word), 0.5)), c1, h1, c2, h2)

        def step(self, x, c1, h1, c2, h2):
            c1, h1 = F.lstm(c1, x + self.lat1(h1))
            c2, h2 = F.lstm(c2, self.up2(F.dropout(h1, 0.5)) + self.lat2(h2))
            return c1, h1, c2, h2, self.out(F.dropout(h2, 0.5))

    def recurrent_iteration(model):
        x = _rng().uniform(0.5, 1.0, (1, 16)).astype(numpy.float32)

        def run():
            loss = model(x)
            model.cleargrads()
            loss.backward()

        return run

    def classifier_iteration(model, optimizer, x, t):
        optimizer.setup(model)
        return lambda: optimizer.update(model, x, t)

    def mlp_iteration(model):
        rng = _rng()
        x, t = _f32(rng, 32, 784), rng.integers(0, 10, 32).astype(numpy.int32)
        return classifier_iteration(model, optimizers.SGD(lr=0.01), x, t)

    def lenet_iteration(model):
        rng = _rng()
        x = rng.random((64, 1, 28, 28), dtype=numpy.float32)
        t = rng.integers(0, 10, 64).astype(numpy.int32)
        return classifier_iteration(model, optimizers.MomentumSGD(lr=0.01, momentum=0.9), x, t)

    def lm_iteration(model):
        words = _rng().integers(0, VOCAB, (BPTT + 1, BATCH)).astype(numpy.int32)
        optimizer = optimizers.SGD(lr=0.1).setup(model)
        zeros = numpy.zeros((BATCH, UNITS), numpy.float32)

        def run():
            state = (zeros,) * 4
            loss = 0
            for i in range(BPTT):
                *state, y = model(words[i], *state)
                loss += F.softmax_cross_entropy(y, words[i + 1])
            model.cleargrads()
            loss.backward()
            loss.unchain_backward()
            optimizer.update()

        return run

    return {
        "recurrent": (Recurrent, recurrent_iteration),
        "mlp-b32": (MLP, mlp_iteration),
        "lenet5-b64": (LeNet5, lenet_iteration),
        "lstm-lm": (LMStep, lm_iteration),
        "lstm-lm-outside": (LMStep, lm_iteration),
    }


def static_variant(case, model_class):
    """``model_class`` with its forward under ``@static_graph``; for ``lstm-lm-outside``,
    only the part after the embedding and the first upward layer (see the module)."""
    from dbr.core import static_graph

    name = f"Static{model_class.__name__}"
    if case == "lstm-lm-outside":
        return type(name, (model_class,), {"step": static_graph(model_class.step)})
    return type(name, (model_class,), {"forward": static_graph(model_class.forward)})


def dbr_side(cases, repeat):
    """{case: {"define-by-run": ms, "static": ms, "peak": {variant: MiB}}} in this process."""
    keep_freed_memory_as_a_trainer_does()
    models = dbr_models()
    results = {}
    for case in cases:
        model_class, make_iteration = models[case]
        static_class = static_variant(case, model_class)
        runs = {}
        for variant, cls in (("define-by-run", model_class), ("static", static_class)):
            numpy.random.seed(0)
            runs[variant] = make_iteration(cls())
        results[case] = {
            variant: median_ms(run, repeat) for variant, run in _alternating(runs, repeat)
        }
        results[case]["peak"] = {variant: peak_mib(run) for variant, run in runs.items()}
    return results


def _alternating(runs, repeat):
    # Warm both, then time them in turn, so that a slow spell of the machine hits both.
    for run in runs.values():
        for _ in range(3):
            run()
    return list(runs.items())


def median_ms(run, repeat):
    """Median milliseconds of ``run()`` over ``repeat`` calls (a collection before each)."""
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def peak_mib(run):
    """Peak traced memory (MiB) over three calls of ``run()``, from a collected heap."""
    gc.collect()
    tracemalloc.start()
    for _ in range(3):
        run()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


# -- PyTorch ---------------------------------------------------------------------------


def torch_side(cases, repeat):
    """{case: {"torch": ms}}: the same iterations in PyTorch eager, one thread."""
    import torch

    torch.set_num_threads(1)
    nn = torch.nn
    rng = _rng()
    results = {}
    for case in cases:
        if case == "recurrent":
            a = torch.from_numpy(rng.uniform(0.4, 0.5, (1, 16)).astype(numpy.float32))
            b = torch.from_numpy(rng.uniform(0.4, 0.5, (1, 16)).astype(numpy.float32))
            a.requires_grad_(), b.requires_grad_()
            x = torch.from_numpy(_rng().uniform(0.5, 1.0, (1, 16)).astype(numpy.float32))

            def run(a=a, b=b, x=x):
                h = x
                for _ in range(100):
                    h = torch.tanh(h * a + b)
                a.grad = b.grad = None
                h.sum().backward()

        elif case in ("mlp-b32", "lenet5-b64"):
            run = _torch_classifier(torch, nn, case)
        else:  # both LSTM LM cases: PyTorch has one way
            run = _torch_lm(torch, nn)
        for _ in range(3):
            run()
        results[case] = {"torch": median_ms(run, repeat)}
    return results


def _torch_classifier(torch, nn, case):
    rng = _rng()
    if case == "mlp-b32":
        net = nn.Sequential(
            nn.Linear(784, 100), nn.ReLU(), nn.Linear(100, 100), nn.ReLU(), nn.Linear(100, 10)
        )
        x, t = _f32(rng, 32, 784), rng.integers(0, 10, 32)
        opt = torch.optim.SGD(net.parameters(), lr=0.01)
    else:
        net = nn.Sequential(
            nn.Conv2d(1, 20, 5), nn.MaxPool2d(2), nn.Conv2d(20, 50, 5), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10),
        )  # fmt: skip
        x = rng.random((64, 1, 28, 28), dtype=numpy.float32)
        t = rng.integers(0, 10, 64)
        opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    tx, tt = torch.from_numpy(x), torch.from_numpy(t).long()
    loss_fn = nn.CrossEntropyLoss()

    def run():
        opt.zero_grad(set_to_none=True)
        loss_fn(net(tx), tt).backward()
        opt.step()

    return run


def _torch_lm(torch, nn):
    embed = nn.Embedding(VOCAB, UNITS)
    cells = nn.ModuleList([nn.LSTMCell(UNITS, UNITS) for _ in range(2)])
    out = nn.Linear(UNITS, VOCAB)
    params = [*embed.parameters(), *cells.parameters(), *out.parameters()]
    with torch.no_grad():
        for p in params:
            p.uniform_(-0.1, 0.1)
    opt = torch.optim.SGD(params, lr=0.1)
    words = torch.from_numpy(_rng().integers(0, VOCAB, (BPTT + 1, BATCH))).long()
    drop = nn.Dropout(0.5)
    loss_fn = nn.CrossEntropyLoss()

    def run():
        state = [(torch.zeros(BATCH, UNITS), torch.zeros(BATCH, UNITS)) for _ in cells]
        loss = 0
        for i in range(BPTT):
            h = drop(embed(words[i]))
            for k, cell in enumerate(cells):
                state[k] = cell(h, state[k])
                h = drop(state[k][0])
            loss = loss + loss_fn(out(h), words[i + 1])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return run


# -- the table -------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    add_side_arguments(parser, runs=3)
    args = parser.parse_args()
    if args.side == "dbr":
        print(json.dumps(dbr_side(args.cases, args.repeat)))
        return
    if args.side == "torch":
        print(json.dumps(torch_side(args.cases, args.repeat)))
        return
    results = results_per_side(args.runs)
    print(f"ms per training iteration, 1 thread; median of {args.runs} process(es) per side")
    header = f"{'case':<12}{'dbr':>10}{'static':>10}{'torch':>10}{'dbr/static':>12}"
    print(header + f"{'static/torch':>14}   peak MiB dbr / static")
    for case in args.cases:
        dbr = statistics.median(r[case]["define-by-run"] for r in results["dbr"])
        static = statistics.median(r[case]["static"] for r in results["dbr"])
        peak = results["dbr"][0][case]["peak"]
        line = f"{case:<12}{dbr:10.3f}{static:10.3f}"
        if "torch" in results:
            torch_ms = statistics.median(r[case]["torch"] for r in results["torch"])
            line += f"{torch_ms:10.3f}{dbr / static:11.2f}x{static / torch_ms:13.2f}x"
        else:
            line += f"{'-':>10}{dbr / static:11.2f}x{'-':>14}"
        print(line + f"   {peak['define-by-run']:.2f} / {peak['static']:.2f}")


if __name__ == "__main__":
    main()
