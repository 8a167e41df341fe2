"""Forward + backward time of common functions on a (256, 1024) float32 batch.

For each of relu, sigmoid, tanh, softmax_cross_entropy, logsumexp and sum,
times ``y = f(x); sum(y).backward()`` (the loss functions are already
scalars) in dbr and, when installed, in PyTorch on the CPU, and prints a
table with the ratio. Both sides get the same arrays; the best of
``--repeat`` runs in a process is reported, each side in its own ``--runs``
fresh processes (see ``_timing.py``).

Run: ``python benchmarks/functions.py [--repeat 50] [--runs 1] [--torch-threads N]``.
"""

import numpy
from _timing import compare_with_torch, timing_parser

import dbr.functions as F
from dbr.core import Variable

SHAPE = (256, 1024)


def dbr_cases():
    """name -> callable(x_array, t_array) running forward and backward in dbr."""

    def unary(f):
        def run(x, t):
            v = Variable(x)
            F.sum(f(v)).backward()
            return v.grad

        return run

    def sce(x, t):
        v = Variable(x)
        F.softmax_cross_entropy(v, t).backward()
        return v.grad

    def lse(x, t):
        v = Variable(x)
        F.sum(F.logsumexp(v, axis=1)).backward()
        return v.grad

    def total(x, t):
        v = Variable(x)
        F.sum(v).backward()
        return v.grad

    return {
        "relu": unary(F.relu),
        "sigmoid": unary(F.sigmoid),
        "tanh": unary(F.tanh),
        "softmax_cross_entropy": sce,
        "logsumexp": lse,
        "sum": total,
    }


def torch_cases(torch):
    """The same computations in PyTorch."""

    def unary(f):
        def run(x, t):
            v = torch.from_numpy(x).requires_grad_()
            f(v).sum().backward()
            return v.grad

        return run

    def sce(x, t):
        v = torch.from_numpy(x).requires_grad_()
        torch.nn.functional.cross_entropy(v, torch.from_numpy(t).long()).backward()
        return v.grad

    def lse(x, t):
        v = torch.from_numpy(x).requires_grad_()
        torch.logsumexp(v, dim=1).sum().backward()
        return v.grad

    def total(x, t):
        v = torch.from_numpy(x).requires_grad_()
        v.sum().backward()
        return v.grad

    return {
        "relu": unary(torch.relu),
        "sigmoid": unary(torch.sigmoid),
        "tanh": unary(torch.tanh),
        "softmax_cross_entropy": sce,
        "logsumexp": lse,
        "sum": total,
    }


def main():
    args = timing_parser(__doc__, 50).parse_args()
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal(SHAPE).astype(numpy.float32)
    t = rng.integers(0, SHAPE[1], SHAPE[0]).astype(numpy.int32)
    title = f"forward + backward on {SHAPE} float32, best of {args.repeat} (ms)"
    compare_with_torch(args, title, "function", dbr_cases, torch_cases, call_args=(x, t))


if __name__ == "__main__":
    main()
