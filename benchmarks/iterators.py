"""Batches per second of dbr's iterators over MNIST with a costly per-example transform.

The 60,000 MNIST training images are read from the original gzip IDX file
(``--mnist``, by default ``../shared/datasets/mnist/train-images-idx3-ubyte.gz``
beside the repository) into a (60000, 784) float32 array and wrapped in a
TransformDataset whose transform is a small NumPy computation calibrated at
start-up to cost about ``--transform-ms`` (0.2 ms) per example. For
SerialIterator, MultithreadIterator (``--workers`` threads) and
MultiprocessIterator (``--workers`` processes) it draws one warm-up batch,
then times ``--batches`` shuffled batches of ``--batch-size`` (128), best of
``--repeat`` runs, and prints batches per second and the ratio to
SerialIterator. The target is
MultiprocessIterator with 2 workers at 1.6x SerialIterator or more on a
2-core machine.

Run: ``python benchmarks/iterators.py [--batches 150] [--workers 2]``.
"""

import argparse
import gzip
import os
import time
from pathlib import Path

import numpy

from dbr.datasets.multiprocess_iterator import MultiprocessIterator
from dbr.datasets.multithread_iterator import MultithreadIterator
from dbr.datasets.serial_iterator import SerialIterator
from dbr.datasets.transform_dataset import TransformDataset

DEFAULT_MNIST = (
    Path(__file__).resolve().parents[1] / ".." / "shared" / "datasets" / "mnist"
).resolve() / "train-images-idx3-ubyte.gz"


def read_mnist_images(path):
    """The images of an MNIST IDX3 gzip file as an (n, 784) float32 array in [0, 1]."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    magic, n, rows, cols = numpy.frombuffer(raw, ">u4", count=4)
    if magic != 2051:
        raise ValueError(f"{path}: not an IDX3 image file (magic number {magic}, expected 2051)")
    pixels = numpy.frombuffer(raw, numpy.uint8, offset=16)
    if pixels.size != n * rows * cols:
        raise ValueError(f"{path}: {pixels.size} pixels for {n} images of {rows}x{cols}")
    return pixels.reshape(n, rows * cols).astype(numpy.float32) / 255


class Augment:
    """A per-example transform: ``rounds`` smoothing passes over the 28x28 image.

    A class at module level rather than a closure, so that it pickles under
    every multiprocessing start method.
    """

    def __init__(self, rounds):
        self.rounds = rounds

    def __call__(self, image):
        x = image.reshape(28, 28)
        for _ in range(self.rounds):
            x = numpy.tanh(0.5 * x + 0.25 * (numpy.roll(x, 1, 0) + numpy.roll(x, 1, 1)))
        return x.reshape(1, 28, 28)


def calibrate(images, target_s):
    """Rounds of Augment that cost about ``target_s`` seconds per example here."""
    probe = Augment(50)
    sample = images[:200]
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for image in sample:
            probe(image)
        best = min(best, (time.perf_counter() - start) / (len(sample) * probe.rounds))
    return max(1, round(target_s / best))


def batches_per_second(make, n_batches, repeat):
    """Best of ``repeat`` runs: a fresh iterator, one warm-up batch (workers start,
    shared memory is sized), then ``n_batches`` timed."""
    best = 0.0
    for _ in range(repeat):
        iterator = make()
        try:
            next(iterator)
            start = time.perf_counter()
            for _ in range(n_batches):
                next(iterator)
            best = max(best, n_batches / (time.perf_counter() - start))
        finally:
            iterator.finalize()
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mnist", type=Path, default=DEFAULT_MNIST)
    parser.add_argument("--batches", type=int, default=150)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--transform-ms", type=float, default=0.2)
    parser.add_argument("--repeat", type=int, default=3, help="runs per iterator; best counts")
    args = parser.parse_args()

    if not args.mnist.is_file():
        parser.exit(
            1,
            f"iterators.py: MNIST not found at {args.mnist}; pass --mnist PATH to "
            "train-images-idx3-ubyte.gz\n",
        )
    images = read_mnist_images(args.mnist)
    augment = Augment(calibrate(images, args.transform_ms / 1e3))
    dataset = TransformDataset(images, augment)
    start = time.perf_counter()
    for i in range(500):
        dataset[i]
    per_example_ms = (time.perf_counter() - start) / 500 * 1e3

    print(
        f"MNIST train: {len(images)} images; transform {per_example_ms:.3f} ms/example "
        f"({augment.rounds} rounds); batch {args.batch_size}; {args.batches} batches, "
        f"best of {args.repeat}; {os.cpu_count()} CPUs"
    )
    cases = [
        ("SerialIterator", lambda: SerialIterator(dataset, args.batch_size)),
        (
            f"MultithreadIterator ({args.workers} threads)",
            lambda: MultithreadIterator(dataset, args.batch_size, n_threads=args.workers),
        ),
        (
            f"MultiprocessIterator ({args.workers} processes)",
            lambda: MultiprocessIterator(dataset, args.batch_size, n_processes=args.workers),
        ),
    ]
    results = [(name, batches_per_second(make, args.batches, args.repeat)) for name, make in cases]
    serial = results[0][1]
    print(f"{'iterator':<36} {'batches/s':>10} {'examples/s':>11} {'vs serial':>10}")
    for name, rate in results:
        print(f"{name:<36} {rate:>10.2f} {rate * args.batch_size:>11.0f} {rate / serial:>9.2f}x")
    ratio = results[2][1] / serial
    verdict = "meets" if ratio >= 1.6 else "misses"
    print(f"MultiprocessIterator / SerialIterator: {ratio:.2f}x ({verdict} the 1.6x target)")


if __name__ == "__main__":
    main()
