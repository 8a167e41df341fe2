"""dbr.onnx.load on models that PyTorch exports: outputs against PyTorch and ONNX Runtime,
then a few fine-tuning steps of the imported ResNet on MNIST.

Run by ``nox -s onnx-torch`` (which installs PyTorch's CPU build), or by hand in an
environment with torch, onnx, onnxruntime and dbr: ``python tools/onnx_torch_check.py
[--datasets DIR] [--steps N]``. Each model (a ResNet-18-shaped CNN, an MLP, a Transformer
encoder layer, a 2-layer LSTM) gets random weights and is exported by ``torch.onnx.export``
at opsets 13 and 17; the Transformer also with dynamic batch and sequence axes (its
``Shape`` nodes then run at each call rather than folded at load; PyTorch's tracing still
fixes some of its reshapes to the example's shape, so it runs on that shape), and PyTorch's own
``nn.TransformerEncoderLayer`` through the dynamo exporter (opset 18) when onnxscript is
installed. Exit status 1 when a check fails.
"""

import argparse
import gzip
import io
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy
import onnx
import onnxruntime
import torch
from torch import nn

import dbr.functions as F
import dbr.onnx
from dbr.core import serializers, using_config
from dbr.training import optimizers

RTOL, ATOL = 1e-4, 1e-5  # float32, outputs of order 1
OPSETS = (13, 17)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(
                nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)
            )

    def forward(self, x):
        y = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
        return torch.relu(y + (x if self.down is None else self.down(x)))


class ResNet18(nn.Module):
    """torchvision's ResNet-18 layout (7x7 stem, max pooling, 2-2-2-2 basic blocks), narrow."""

    def __init__(self, in_channels=1, classes=10, width=16):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(in_channels, width, 7, 2, 3, bias=False), nn.BatchNorm2d(width),
            nn.ReLU(), nn.MaxPool2d(3, 2, 1),
        )  # fmt: skip
        blocks, cin = [], width
        for i, cout in enumerate([width, 2 * width, 4 * width, 8 * width]):
            blocks += [BasicBlock(cin, cout, 1 if i == 0 else 2), BasicBlock(cout, cout, 1)]
            cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))


class EncoderLayer(nn.Module):
    """A post-norm Transformer encoder layer: multi-head self-attention, GELU feed-forward.

    nn.MultiheadAttention is called with ``need_weights=True``: its other path calls
    scaled_dot_product_attention, which the TorchScript exporter of torch 2.13 fails on.
    """

    def __init__(self, d=32, heads=4, ff=64):
        super().__init__()
        self.attention = nn.MultiheadAttention(d, heads, dropout=0.1, batch_first=True)
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.GELU(), nn.Dropout(0.1), nn.Linear(ff, d))

    def forward(self, x):
        x = self.norm1(x + self.attention(x, x, x, need_weights=True)[0])
        return self.norm2(x + self.ff(x))


class TwoLayerLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(12, 16, num_layers=2, batch_first=True)

    def forward(self, x):
        y, (h, c) = self.lstm(x)
        return y, h, c


def randomize(module, seed):
    """Random weights, and running statistics that make BatchNormalization no identity."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=generator) * 0.3)
        for m in module.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=generator) * 0.2)
                m.running_var.copy_(torch.rand(m.running_var.shape, generator=generator) + 0.5)
    return module.eval()


def cases():
    """(name, module, example input, dynamic axes or None)."""
    rng = numpy.random.default_rng(0)

    def x(*shape):
        return rng.standard_normal(shape).astype(numpy.float32)

    mlp = nn.Sequential(
        nn.Linear(20, 32), nn.GELU(), nn.Dropout(0.2), nn.Linear(32, 32), nn.Tanh(),
        nn.Linear(32, 16), nn.LeakyReLU(0.1), nn.Linear(16, 5), nn.Softmax(dim=-1),
    )  # fmt: skip
    dynamic = {"x": {0: "batch", 1: "time"}, "y0": {0: "batch", 1: "time"}}
    return [
        ("resnet18", randomize(ResNet18(), 1), x(2, 1, 28, 28), {"x": {0: "batch"}}),
        ("mlp", randomize(mlp, 2), x(3, 20), None),
        ("transformer_encoder", randomize(EncoderLayer(), 3), x(2, 7, 32), None),
        ("transformer_encoder_dynamic", randomize(EncoderLayer(), 4), x(2, 7, 32), dynamic),
        ("lstm_2_layers", randomize(TwoLayerLSTM(), 5), x(3, 6, 12), None),
    ]


def export(module, example, opset, dynamic=None):
    """``module`` exported by torch.onnx.export (TorchScript exporter) at ``opset``: bytes."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        n_outputs = (
            len(module(torch.from_numpy(example))) if isinstance(module, TwoLayerLSTM) else 1
        )
        torch.onnx.export(
            module, (torch.from_numpy(example),), buffer, opset_version=opset, dynamo=False,
            input_names=["x"], output_names=[f"y{i}" for i in range(n_outputs)],
            dynamic_axes=dynamic,
        )  # fmt: skip
    return buffer.getvalue()


def outputs_of(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def compare(name, proto, module, inputs, failures):
    """dbr.onnx.load's outputs against PyTorch's and ONNX Runtime's; the largest difference."""
    model = dbr.onnx.load(proto)
    with using_config("train", False), using_config("enable_backprop", False):
        ours = [y.array for y in outputs_of(model(*inputs))]
    with torch.no_grad():
        theirs = [t.numpy() for t in outputs_of(module(*[torch.from_numpy(a) for a in inputs]))]
    session = onnxruntime.InferenceSession(proto, providers=["CPUExecutionProvider"])
    runtime = session.run(None, dict(zip(model.input_names, inputs)))
    largest = 0.0
    for reference, against in ((theirs, "PyTorch"), (runtime, "ONNX Runtime")):
        for a, b in zip(ours, reference):
            if a.shape != b.shape or a.dtype != b.dtype:
                failures.append(f"{name}: {a.shape} {a.dtype} vs {against}'s {b.shape} {b.dtype}")
                continue
            largest = max(largest, float(numpy.max(numpy.abs(a - b))))
            if not numpy.allclose(a, b, rtol=RTOL, atol=ATOL):
                failures.append(f"{name}: differs from {against} by {numpy.max(numpy.abs(a - b))}")
    return largest


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i : 8 + 4 * i], "big") for i in range(dims)]
    return numpy.frombuffer(data, numpy.uint8, offset=4 + 4 * dims).reshape(shape)


def fine_tune(proto, datasets, steps, failures):
    """Train the imported ResNet on MNIST a few steps; check the loss falls and a snapshot
    round-trips (save_npz, load_npz into a fresh import: equal outputs, equal statistics)."""
    folder = Path(datasets) / "mnist"
    images = folder / "train-images-idx3-ubyte.gz"
    if not images.exists():
        print(f"fine-tuning skipped: no MNIST at {folder} (give --datasets DIR)")
        return
    x = read_idx(images)[:2048].astype(numpy.float32)[:, None] / 255.0
    t = read_idx(folder / "train-labels-idx1-ubyte.gz")[:2048].astype(numpy.int32)
    model = dbr.onnx.load(proto)
    optimizer = optimizers.Adam(alpha=1e-3).setup(model)
    rng = numpy.random.default_rng(0)
    losses = []
    with using_config("train", True):
        for _ in range(steps):
            batch = rng.choice(len(x), 64, replace=False)
            loss = F.softmax_cross_entropy(model(x[batch]), t[batch])
            model.cleargrads()
            loss.backward()
            optimizer.update()
            losses.append(float(loss.array))
    k = max(1, steps // 5)
    first, last = numpy.mean(losses[:k]), numpy.mean(losses[-k:])
    print(f"fine-tuning: {steps} steps of 64 MNIST images, loss {first:.3f} -> {last:.3f}")
    if not last < first:
        failures.append(f"fine-tuning: the loss did not fall ({first:.3f} -> {last:.3f})")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "snapshot.npz"
        serializers.save_npz(str(path), model)
        again = dbr.onnx.load(proto)
        serializers.load_npz(str(path), again)
    with using_config("train", False):
        a, b = model(x[:16]).array, again(x[:16]).array
    if not numpy.array_equal(a, b):
        failures.append("fine-tuning: the reloaded snapshot computes other outputs")
    print(f"snapshot round trip: {len(list(model.namedparams()))} parameters, outputs equal")
    exported = dbr.onnx.export(model, x[:16], opset_version=17)
    session = onnxruntime.InferenceSession(
        exported.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    runtime = session.run(None, {exported.graph.input[0].name: x[:16]})[0]
    if not numpy.allclose(runtime, a, rtol=RTOL, atol=ATOL):
        failures.append("export again: ONNX Runtime differs from the fine-tuned model")
    print(f"exported again: ONNX Runtime within {numpy.max(numpy.abs(runtime - a)):.2e}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--datasets", default=str(Path(__file__).resolve().parents[2] / "shared" / "datasets")
    )
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args(argv)
    torch.manual_seed(0)
    failures, largest, checked, op_types = [], 0.0, 0, set()
    resnet_proto = None
    for name, module, example, dynamic in cases():
        for opset in OPSETS:
            start = time.perf_counter()
            proto = export(module, example, opset, dynamic)
            op_types.update(n.op_type for n in onnx.load_from_string(proto).graph.node)
            difference = compare(f"{name} opset {opset}", proto, module, [example], failures)
            largest = max(largest, difference)
            checked += 1
            print(f"{name} opset {opset}: largest difference {difference:.2e} "
                  f"({time.perf_counter() - start:.1f} s)")  # fmt: skip
            if name == "resnet18" and opset == 17:
                resnet_proto = proto
    checked += dynamo_encoder(failures)
    print(f"{checked} exports checked; largest output difference {largest:.2e}")
    print(f"operators in PyTorch's exports: {', '.join(sorted(op_types))}")
    fine_tune(resnet_proto, args.datasets, args.steps, failures)
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


def dynamo_encoder(failures):
    """PyTorch's nn.TransformerEncoderLayer through the dynamo exporter (opset 18), if it can."""
    try:
        import onnxscript  # noqa: F401
    except ImportError:
        print("nn.TransformerEncoderLayer (dynamo exporter): skipped, onnxscript is not installed")
        return 0
    layer = randomize(nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True), 6)
    example = numpy.random.default_rng(6).standard_normal((2, 7, 32)).astype(numpy.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        program = torch.onnx.export(layer, (torch.from_numpy(example),), dynamo=True,
                                    opset_version=18, verbose=False)  # fmt: skip
    proto = program.model_proto.SerializeToString()
    difference = compare("nn.TransformerEncoderLayer (dynamo, opset 18)", proto, layer,
                            [example], failures)  # fmt: skip
    print(f"nn.TransformerEncoderLayer (dynamo, opset 18): largest difference {difference:.2e}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
