"""Seconds to export ResNet-50 (``L.ResNet50Layers``, random weights) to ONNX with dbr.onnx.

Builds the network with random weights and randomized batch statistics,
runs one forward to initialize it, then times ``--repeat`` (3) calls of
``dbr.onnx.export`` on one 224x224 image and prints each time and their
median. The target is a median under 10 s on this project's 2-core CPU
machine, where an idle run takes a few seconds.

Run: ``python benchmarks/onnx_export.py [--repeat 3] [--opset N]``.
"""

import argparse
import statistics
import time

import numpy

import dbr.links as L
import dbr.onnx
from dbr.core import Chain, using_config


class Probabilities(Chain):
    """ResNet-50's class probabilities as the one output."""

    def __init__(self, net):
        super().__init__()
        with self.init_scope():
            self.net = net

    def forward(self, x):
        return self.net(x, layers=["prob"])["prob"]


def build_model():
    """ResNet-50 with random weights and batch statistics away from 0 and 1."""
    rng = numpy.random.default_rng(0)
    net = L.ResNet50Layers(pretrained_model=None)
    for link in net.links():
        if isinstance(link, L.BatchNormalization):
            link.avg_mean[...] = rng.uniform(-0.1, 0.1, link.avg_mean.shape)
            link.avg_var[...] = rng.uniform(0.5, 1.5, link.avg_var.shape)
    return Probabilities(net)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--opset", type=int, default=None)
    args = parser.parse_args()
    model = build_model()
    x = numpy.random.default_rng(1).uniform(0, 255, (1, 3, 224, 224)).astype(numpy.float32)
    with using_config("train", False):
        model(x)
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        dbr.onnx.export(model, x, opset_version=args.opset)
        times.append(time.perf_counter() - start)
        print(f"export: {times[-1]:.2f} s")
    print(f"ResNet-50 export, median of {args.repeat}: {statistics.median(times):.2f} s")


if __name__ == "__main__":
    main()
