"""Seconds per training epoch on real MNIST, dbr against equivalent PyTorch CPU code.

- mlp: Chainer's train_mnist network, 784-1000-1000-10 with ReLU, batch 100, Adam.
- lenet5: LeNet-5 with ReLU (conv 1->6 5x5 padded, 2x2 max pooling, conv 6->16 5x5,
  2x2 max pooling, linear 120-84-10), batch 64, Adam.

Both sides run the same Trainer-free loop: each iteration indexes a shuffled batch out
of the training arrays, runs forward, softmax cross entropy, backward and the Adam
update; both start from the same initial weights. Iterations are timed after a few
warm-up ones. ``--iterations N`` times N iterations per case and extrapolates to the
epoch (60,000 images), as the table says; by default the whole epoch is timed.
Each case runs with one thread and with as many as the machine has cores, the
thread counts of OpenMP and the BLAS set before NumPy and PyTorch load
(``torch.set_num_threads`` as well). Each side runs in its own ``--runs`` fresh
processes (see ``_timing.py``); the table gives the median and the spread of the
ratio.

MNIST is read with dbr-datasets: from ``DBR_DATASET_MIRROR`` / ``DBR_DATASET_ROOT``
when set, else from ``../shared/datasets`` beside the checkout (into a temporary
dataset root); without the files the benchmark says so and exits.

Run: ``python benchmarks/end_to_end.py [--iterations 200] [--runs 1] [--cases mlp lenet5]``.
"""

import argparse
import json
import os
import pathlib
import statistics
import tempfile
import time

import numpy
from _timing import (
    add_side_arguments,
    keep_freed_memory_as_a_trainer_does,
    results_per_side,
    spread,
    thread_environment,
)

import dbr.functions as F
import dbr.links as L
from dbr.core import Chain
from dbr.training import optimizers

SHARED_DATASETS = pathlib.Path(__file__).resolve().parents[2] / "shared" / "datasets"
MNIST_FILES = (
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
)
WARMUP = 5


class MLP(Chain):
    """784-1000-1000-10 with ReLU."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(784, 1000)
            self.l2 = L.Linear(1000, 1000)
            self.l3 = L.Linear(1000, 10)

    def forward(self, x):
        """Class scores for flat images of shape (batch, 784)."""
        return self.l3(F.relu(self.l2(F.relu(self.l1(x)))))


class LeNet5(Chain):
    """LeNet-5 with ReLU, as in ``examples/convnet/train_lenet.py``."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.conv1 = L.Convolution2D(1, 6, 5, pad=2)
            self.conv2 = L.Convolution2D(6, 16, 5)
            self.fc3 = L.Linear(400, 120)
            self.fc4 = L.Linear(120, 84)
            self.fc5 = L.Linear(84, 10)

    def forward(self, x):
        """Class scores for images of shape (batch, 1, 28, 28)."""
        h = F.max_pooling_2d(F.relu(self.conv1(x)), 2, 2)
        h = F.max_pooling_2d(F.relu(self.conv2(h)), 2, 2)
        return self.fc5(F.relu(self.fc4(F.relu(self.fc3(h)))))


def torch_twin(torch, name, model):
    """The PyTorch network of case ``name``, with the weights of the dbr ``model``."""
    nn = torch.nn
    if name == "mlp":
        layers = [nn.Linear(784, 1000), nn.ReLU(), nn.Linear(1000, 1000), nn.ReLU()]
        layers.append(nn.Linear(1000, 10))
        sources = [model.l1, model.l2, model.l3]
    else:
        layers = [nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2)]
        layers += [nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten()]
        layers += [nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU()]
        layers.append(nn.Linear(84, 10))
        sources = [model.conv1, model.conv2, model.fc3, model.fc4, model.fc5]
    targets = [layer for layer in layers if isinstance(layer, (nn.Linear, nn.Conv2d))]
    with torch.no_grad():
        for target, source in zip(targets, sources):
            target.weight.copy_(torch.from_numpy(source.W.array))
            target.bias.copy_(torch.from_numpy(source.b.array))
    return nn.Sequential(*layers)


def dbr_step(model):
    """One training iteration of ``model`` with Adam: ``step(x, t)``."""
    optimizer = optimizers.Adam().setup(model)

    def step(x, t):
        loss = F.softmax_cross_entropy(model(x), t)
        model.cleargrads()
        loss.backward()
        optimizer.update()

    return step


def torch_step(torch, net):
    """The same iteration in PyTorch."""
    optimizer = torch.optim.Adam(net.parameters())
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(x, t):
        optimizer.zero_grad(set_to_none=True)
        loss_fn(net(torch.from_numpy(x)), torch.from_numpy(t).long()).backward()
        optimizer.step()

    return step


def seconds_per_epoch(step, images, labels, batchsize, iterations):
    """Seconds of ``iterations`` iterations over a shuffled order, scaled to one epoch."""
    order = numpy.random.default_rng(0).permutation(len(images))
    per_epoch = len(images) // batchsize

    def batch(i):
        index = order[(i % per_epoch) * batchsize : (i % per_epoch + 1) * batchsize]
        return images[index], labels[index]

    for i in range(WARMUP):
        step(*batch(i))
    start = time.perf_counter()
    for i in range(iterations):
        step(*batch(i))
    return (time.perf_counter() - start) * per_epoch / iterations


def load_mnist():
    """Flat training images (N, 784) float32 and int32 labels, or None when absent."""
    if "DBR_DATASET_MIRROR" not in os.environ and "DBR_DATASET_ROOT" not in os.environ:
        missing = [n for n in MNIST_FILES if not (SHARED_DATASETS / "mnist" / n).is_file()]
        if missing:
            print(f"MNIST is absent ({', '.join(missing)} not under {SHARED_DATASETS}/mnist)")
            print("set DBR_DATASET_MIRROR or DBR_DATASET_ROOT to where it is")
            return None
        os.environ["DBR_DATASET_MIRROR"] = SHARED_DATASETS.as_uri()
        os.environ["DBR_DATASET_ROOT"] = tempfile.mkdtemp(prefix="dbr-bench-")
    from dbr.datasets import concat_examples, get_mnist

    train, _ = get_mnist()
    return concat_examples(train)


CASES = {"mlp": (MLP, 100, (-1, 784)), "lenet5": (LeNet5, 64, (-1, 1, 28, 28))}


def side_seconds(side, name, images, labels, iterations):
    """Seconds per epoch of case ``name`` on ``side`` in this process, its threads set."""
    make_model, batchsize, shape = CASES[name]
    numpy.random.seed(0)
    model = make_model()
    if side == "dbr":
        keep_freed_memory_as_a_trainer_does()
        step = dbr_step(model)
    else:
        import torch

        torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
        step = torch_step(torch, torch_twin(torch, name, model))
    return seconds_per_epoch(step, images.reshape(shape), labels, batchsize, iterations)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--iterations", type=int, help="iterations timed per case (default: a whole epoch)"
    )
    parser.add_argument("--cases", nargs="+", choices=tuple(CASES), default=list(CASES))
    parser.add_argument("--worker", choices=tuple(CASES), help=argparse.SUPPRESS)
    add_side_arguments(parser)
    args = parser.parse_args()
    data = load_mnist()
    if data is None:
        return
    images, labels = data
    if args.side:
        per_epoch = len(images) // CASES[args.worker][1]
        iterations = min(args.iterations or per_epoch, per_epoch)
        print(json.dumps(side_seconds(args.side, args.worker, images, labels, iterations)))
        return
    thread_counts = sorted({1, os.cpu_count()})

    print(
        f"seconds per epoch of 60,000 images (ratio: dbr / torch at the same thread count); "
        f"each side in its own processes, median of {args.runs}"
    )
    header = f"{'case':<8}{'batch':>6}{'timed':>7}{'threads':>8}{'dbr':>9}{'torch':>9}{'ratio':>8}"
    print(header + "  spread")
    for name in args.cases:
        batchsize = CASES[name][1]
        per_epoch = len(images) // batchsize
        iterations = min(args.iterations or per_epoch, per_epoch)
        timed = f"{iterations}" + ("" if iterations == per_epoch else "*")
        for n in thread_counts:
            env = thread_environment(n)
            results = results_per_side(args.runs, ["--worker", name], env)
            ours = statistics.median(results["dbr"])
            line = f"{name:<8}{batchsize:>6}{timed:>7}{n:>8}{ours:9.2f}"
            if "torch" in results:
                theirs = statistics.median(results["torch"])
                ratios = [a / b for a, b in zip(results["dbr"], results["torch"])]
                line += f"{theirs:9.2f}{ours / theirs:7.2f}x  {spread(ratios)}"
            print(line)
    if args.iterations:
        print("* iterations timed, extrapolated to the whole epoch")


if __name__ == "__main__":
    main()
