"""Training-step time of dbr's optimizers and updater loop, against PyTorch on the CPU.

- mlp-sgd / mlp-adam: one iteration (forward, backward, update) of the MNIST
  MLP 784-1000-1000-10 with ReLU and softmax cross entropy, batch 100.
- update-adam-200: the Adam update alone, for a model of 200 small
  parameters (100 weights of (16, 16) and 100 biases of (16,)), gradients set.

PyTorch uses ``torch.optim`` with ``foreach=True``. Both sides start from the
same arrays; the best of ``--repeat`` runs is printed with the ratio.

Run: ``python benchmarks/training.py [--repeat 50] [--torch-threads N]``.
"""

import numpy
from _timing import compare_with_torch, timing_parser

import dbr.functions as F
from dbr.core import Chain, Parameter
from dbr.training import optimizers

RNG = numpy.random.default_rng(0)
BATCH = 100
SIZES = (784, 1000, 1000, 10)
N_SMALL = 100


def _f32(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(numpy.float32)


WEIGHTS = [_f32(n_out, n_in, scale=n_in**-0.5) for n_in, n_out in zip(SIZES, SIZES[1:])]
BIASES = [numpy.zeros(n_out, numpy.float32) for n_out in SIZES[1:]]
X = _f32(BATCH, SIZES[0])
T = RNG.integers(0, SIZES[-1], BATCH).astype(numpy.int32)
SMALL = [_f32(16, 16) for _ in range(N_SMALL)] + [_f32(16) for _ in range(N_SMALL)]
SMALL_GRADS = [_f32(*p.shape) for p in SMALL]


class MLP(Chain):
    """784-1000-1000-10 with ReLU, written with F.linear on the chain's own Parameters."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            for i, (w, b) in enumerate(zip(WEIGHTS, BIASES)):
                setattr(self, f"W{i}", Parameter(w.copy()))
                setattr(self, f"b{i}", Parameter(b.copy()))

    def forward(self, x, t):
        h = x
        for i in range(len(WEIGHTS)):
            h = F.linear(h, getattr(self, f"W{i}"), getattr(self, f"b{i}"))
            if i < len(WEIGHTS) - 1:
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

    def mlp_step(make_optimizer):
        model = MLP()
        optimizer = make_optimizer().setup(model)
        return lambda: optimizer.update(model, X, T)

    model = Many()
    adam = optimizers.Adam().setup(model)
    for i, g in enumerate(SMALL_GRADS):
        getattr(model, f"p{i}").grad = g.copy()
    return {
        "mlp-sgd": mlp_step(optimizers.SGD),
        "mlp-adam": mlp_step(optimizers.Adam),
        "update-adam-200": adam.update,
    }


def torch_cases(torch):
    """The same cases in PyTorch."""

    def mlp_step(make_optimizer):
        layers = []
        for w, b in zip(WEIGHTS, BIASES):
            linear = torch.nn.Linear(w.shape[1], w.shape[0])
            with torch.no_grad():
                linear.weight.copy_(torch.from_numpy(w))
                linear.bias.copy_(torch.from_numpy(b))
            layers += [linear, torch.nn.ReLU()]
        model = torch.nn.Sequential(*layers[:-1])
        optimizer = make_optimizer(model.parameters())
        x, t = torch.from_numpy(X), torch.from_numpy(T).long()
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
        "update-adam-200": adam.step,
    }


def main():
    args = timing_parser(__doc__, 50).parse_args()
    title = f"best of {args.repeat} (ms)"
    compare_with_torch(args, title, "case", dbr_cases(), torch_cases, name_width=20)


if __name__ == "__main__":
    main()
