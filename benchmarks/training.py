"""Training-step time of dbr's optimizers and updater loop, against PyTorch on the CPU.

- mlp-sgd / mlp-adam: one iteration (forward, backward, update) of the MNIST
  MLP 784-1000-1000-10 with ReLU and softmax cross entropy, batch 100.
- mlp-small-sgd: the same with a 784-100-100-10 MLP, batch 32, and SGD, where the
  per-op overhead of forward, backward and the update is most of the time.
- update-adam-200: the Adam update alone, for a model of 200 small
  parameters (100 weights of (16, 16) and 100 biases of (16,)), gradients set.

PyTorch uses ``torch.optim`` with ``foreach=True``. Both sides start from the
same arrays; the best of ``--repeat`` runs is printed with the ratio, each side
in its own ``--runs`` fresh processes (see ``_timing.py``).

Run: ``python benchmarks/training.py [--repeat 50] [--runs 1] [--torch-threads N]
[--cases ...]``;
for one thread on both sides, ``OMP_NUM_THREADS=1 python benchmarks/training.py
--torch-threads 1`` (NumPy's BLAS reads ``OMP_NUM_THREADS`` when it loads).
"""

import numpy
from _timing import compare_with_torch, timing_parser

import dbr.functions as F
from dbr.core import Chain, Parameter
from dbr.training import optimizers

RNG = numpy.random.default_rng(0)
BATCH = 100
SIZES = (784, 1000, 1000, 10)
SMALL_BATCH = 32
SMALL_SIZES = (784, 100, 100, 10)
N_SMALL = 100


def _f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(numpy.float32)


def _mlp_arrays(sizes, batch):
    weights = [_f32(n_out, n_in, scale=n_in**-0.5) for n_in, n_out in zip(sizes, sizes[1:])]
    biases = [numpy.zeros(n_out, numpy.float32) for n_out in sizes[1:]]
    x = _f32(batch, sizes[0])
    t = RNG.integers(0, sizes[-1], batch).astype(numpy.int32)
    return weights, biases, x, t


BIG = _mlp_arrays(SIZES, BATCH)
SMALL_MLP = _mlp_arrays(SMALL_SIZES, SMALL_BATCH)
SMALL = [_f32(16, 16) for _ in range(N_SMALL)] + [_f32(16) for _ in range(N_SMALL)]
SMALL_GRADS = [_f32(*p.shape) for p in SMALL]


class MLP(Chain):
    """An MLP with ReLU, written with F.linear on the chain's own Parameters, initialised
    with ``weights`` and ``biases``."""

    def __init__(self, weights, biases):
        super().__init__()
        self.n_layers = len(weights)
        with self.init_scope():
            for i, (w, b) in enumerate(zip(weights, biases)):
                setattr(self, f"W{i}", Parameter(w.copy()))
                setattr(self, f"b{i}", Parameter(b.copy()))

    def forward(self, x, t):
        h = x
        for i in range(self.n_layers):
            h = F.linear(h, getattr(self, f"W{i}"), getattr(self, f"b{i}"))
            if i < self.n_layers - 1:
                h = F.relu(h)
        return F.softmax_cross_entropy(h, t)


class Many(Chain):
    """A chain holding the 200 small parameters."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            for i, p in enumerate(SMALL):
                setattr(self, f"p{i}", Parameter(p.copy()))


def dbr_cases():
    """name -> callable running the case once in dbr."""

    def mlp_step(make_optimizer, arrays=BIG):
        weights, biases, x, t = arrays
        model = MLP(weights, biases)
        optimizer = make_optimizer().setup(model)
        return lambda: optimizer.update(model, x, t)

    model = Many()
    adam = optimizers.Adam().setup(model)
    for i, g in enumerate(SMALL_GRADS):
        getattr(model, f"p{i}").grad = g.copy()
    return {
        "mlp-sgd": mlp_step(optimizers.SGD),
        "mlp-adam": mlp_step(optimizers.Adam),
        "mlp-small-sgd": mlp_step(lambda: optimizers.SGD(lr=0.01), SMALL_MLP),
        "update-adam-200": adam.update,
    }


def torch_cases(torch):
    """The same cases in PyTorch."""

    def mlp_step(make_optimizer, arrays=BIG):
        weights, biases, x_array, t_array = arrays
        layers = []
        for w, b in zip(weights, biases):
            linear = torch.nn.Linear(w.shape[1], w.shape[0])
            with torch.no_grad():
                linear.weight.copy_(torch.from_numpy(w))
                linear.bias.copy_(torch.from_numpy(b))
            layers += [linear, torch.nn.ReLU()]
        model = torch.nn.Sequential(*layers[:-1])
        optimizer = make_optimizer(model.parameters())
        x, t = torch.from_numpy(x_array), torch.from_numpy(t_array).long()
        loss_fn = torch.nn.CrossEntropyLoss()

        def step():
            optimizer.zero_grad(set_to_none=True)
            loss_fn(model(x), t).backward()
            optimizer.step()

        return step

    params = [torch.nn.Parameter(torch.from_numpy(p.copy())) for p in SMALL]
    for param, g in zip(params, SMALL_GRADS):
        param.grad = torch.from_numpy(g.copy())
    adam = torch.optim.Adam(params, foreach=True)
    return {
        "mlp-sgd": mlp_step(lambda p: torch.optim.SGD(p, lr=0.01, foreach=True)),
        "mlp-adam": mlp_step(lambda p: torch.optim.Adam(p, foreach=True)),
        "mlp-small-sgd": mlp_step(lambda p: torch.optim.SGD(p, lr=0.01, foreach=True), SMALL_MLP),
        "update-adam-200": adam.step,
    }


def main():
    parser = timing_parser(__doc__, 50)
    parser.add_argument("--cases", nargs="+", default=None, help="the cases to run (default: all)")
    args = parser.parse_args()

    def chosen(cases):
        return {n: run for n, run in cases.items() if not args.cases or n in args.cases}

    title = f"best of {args.repeat} (ms)"
    compare_with_torch(
        args,
        title,
        "case",
        lambda: chosen(dbr_cases()),
        lambda torch: chosen(torch_cases(torch)),
        name_width=20,
    )


if __name__ == "__main__":
    main()
