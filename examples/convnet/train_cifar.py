"""Train a VGG-style or a ResNet-style convolutional network on CIFAR-10 or CIFAR-100.

``--arch vgg`` (the default) is the network of Chainer's CIFAR example: five stages
of 3x3 convolutions, each followed by batch normalization and ReLU, with dropout
between the convolutions of a stage and 2x2 max pooling after it, then a
dropout-BN classifier. ``--arch resnet`` is the CIFAR ResNet of He et al.
(2016): three stages of basic residual blocks, global average pooling and a
linear classifier. Training uses momentum SGD with weight decay, random crops
and horizontal flips, and halves the learning rate every 25 epochs.

The data come from dbr-datasets' ``get_cifar10`` / ``get_cifar100`` (the binary
tarballs; downloaded on first use or read from ``DBR_DATASET_MIRROR`` /
``DBR_DATASET_ROOT``), or from a local binary tarball given with ``--data``,
read without a checksum.

Install: ``pip install dbr-links dbr-datasets dbr-training``,
or ``pip install "dbr-chainer[all]"`` for all of dbr.
Run: ``python examples/convnet/train_cifar.py [--arch vgg|resnet] [--epoch 300]
[--out result/cifar]``; ``--test`` trains narrow networks on a tiny slice for one epoch,
as a smoke test.
"""

import argparse
import os
import sys
import tarfile

import numpy

import dbr.functions as F
import dbr.links as L
from dbr.core import Chain, ChainList, no_backprop_mode, using_config
from dbr.core.serializers import load_npz
from dbr.datasets import (
    SerialIterator,
    TransformDataset,
    TupleDataset,
    concat_examples,
    get_cifar10,
    get_cifar100,
)
from dbr.training import StandardUpdater, Trainer, extensions, optimizer_hooks, optimizers

# The examples' shared helpers are one folder up.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from _report import CLASSIFIER_ENTRIES, extend_report  # noqa: E402

# The members of each binary tarball, and the label bytes before each 3x32x32 image
# (CIFAR-100 records hold the coarse label, then the fine label used here).
_BINARY_LAYOUT = {
    "cifar10": {
        "train": [f"cifar-10-batches-bin/data_batch_{i}.bin" for i in range(1, 6)],
        "test": ["cifar-10-batches-bin/test_batch.bin"],
        "label_bytes": 1,
    },
    "cifar100": {
        "train": ["cifar-100-binary/train.bin"],
        "test": ["cifar-100-binary/test.bin"],
        "label_bytes": 2,
    },
}
_N_CLASSES = {"cifar10": 10, "cifar100": 100}


def load_cifar_binary(path, dataset="cifar10"):
    """``(train, test)`` datasets of (float32 image (3, 32, 32) in [0, 1], int32 label) read
    from the binary tarball at ``path`` (``cifar-10-binary.tar.gz`` or
    ``cifar-100-binary.tar.gz``), without checking its checksum."""
    layout = _BINARY_LAYOUT[dataset]
    record_size = layout["label_bytes"] + 3 * 32 * 32
    splits = []
    with tarfile.open(path, "r:gz") as archive:
        for split in ("train", "test"):
            records = []
            for name in layout[split]:
                with archive.extractfile(name) as file:
                    data = file.read()
                if not data or len(data) % record_size:
                    raise ValueError(
                        f"{path}: {name} holds {len(data)} bytes, not a multiple of the "
                        f"{record_size}-byte record"
                    )
                records.append(numpy.frombuffer(data, numpy.uint8).reshape(-1, record_size))
            records = numpy.concatenate(records)
            images = records[:, layout["label_bytes"] :].reshape(-1, 3, 32, 32)
            labels = records[:, layout["label_bytes"] - 1].astype(numpy.int32)
            splits.append(TupleDataset(images.astype(numpy.float32) / 255, labels))
    return tuple(splits)


def random_crop_and_flip(example, pad=4, rng=numpy.random):
    """The image cropped at a random offset from its zero-padded copy, flipped at random."""
    image, label = example
    _, height, width = image.shape
    padded = numpy.pad(image, ((0, 0), (pad, pad), (pad, pad)))
    top, left = rng.randint(0, 2 * pad + 1, size=2)
    image = padded[:, top : top + height, left : left + width]
    if rng.randint(2):
        image = image[:, :, ::-1]
    return numpy.ascontiguousarray(image), label


class ConvBN(Chain):
    """A 3x3 convolution (stride ``stride``, no bias) followed by batch normalization."""

    def __init__(self, in_channels, out_channels, stride=1, ksize=3):
        super().__init__()
        with self.init_scope():
            self.conv = L.Convolution2D(
                in_channels, out_channels, ksize, stride=stride, pad=ksize // 2, nobias=True
            )
            self.bn = L.BatchNormalization(out_channels)

    def forward(self, x):
        """The normalized feature maps (not yet passed through an activation)."""
        return self.bn(self.conv(x))


class VGG(Chain):
    """The VGG-style network of Chainer's CIFAR example, ``width`` channels in its first stage.

    Stages of (channels, convolutions, dropout ratios between them): (w, 2), (2w, 2),
    (4w, 3), (8w, 3), (8w, 3), each convolution followed by BN and ReLU, each stage by
    2x2 max pooling; then dropout, a linear layer of 8w units with BN and ReLU, dropout
    and the linear classifier.
    """

    STAGES = ((1, 2, 0.3), (2, 2, 0.4), (4, 3, 0.4), (8, 3, 0.4), (8, 3, 0.4))

    def __init__(self, n_classes=10, width=64):
        super().__init__()
        self.dropouts = []
        with self.init_scope():
            self.blocks = ChainList()
            in_channels = 3
            for factor, n_convs, ratio in self.STAGES:
                for i in range(n_convs):
                    self.blocks.append(ConvBN(in_channels, factor * width))
                    in_channels = factor * width
                    # No dropout after a stage's last convolution: pooling follows it.
                    self.dropouts.append(ratio if i < n_convs - 1 else None)
            self.fc1 = L.Linear(in_channels, 8 * width, nobias=True)
            self.bn1 = L.BatchNormalization(8 * width)
            self.fc2 = L.Linear(8 * width, n_classes)

    def forward(self, x):
        """Class scores of shape (batch, n_classes) for images of shape (batch, 3, 32, 32)."""
        h = x
        for block, ratio in zip(self.blocks, self.dropouts):
            h = F.relu(block(h))
            h = F.max_pooling_2d(h, 2, 2) if ratio is None else F.dropout(h, ratio)
        h = F.dropout(h, 0.5)
        h = F.relu(self.bn1(self.fc1(h)))
        h = F.dropout(h, 0.5)
        return self.fc2(h)


class BasicBlock(Chain):
    """Two 3x3 ConvBN with a shortcut: identity, or a strided 1x1 ConvBN when shapes change."""

    def __init__(self, in_channels, out_channels, stride=1):
        super().__init__()
        with self.init_scope():
            self.conv1 = ConvBN(in_channels, out_channels, stride)
            self.conv2 = ConvBN(out_channels, out_channels)
            if stride != 1 or in_channels != out_channels:
                self.shortcut = ConvBN(in_channels, out_channels, stride, ksize=1)
            else:
                self.shortcut = None

    def forward(self, x):
        """ReLU of the residual branch plus the shortcut."""
        h = self.conv2(F.relu(self.conv1(x)))
        return F.relu(h + (x if self.shortcut is None else self.shortcut(x)))


class ResNet(Chain):
    """The CIFAR ResNet of He et al.: a ConvBN stem of ``width`` channels, three stages of
    ``n_blocks`` basic blocks (width, 2 width, 4 width; the last two start with stride
    2), global average pooling and a linear classifier (ResNet-20 for ``n_blocks=3``)."""

    def __init__(self, n_classes=10, width=16, n_blocks=3):
        super().__init__()
        with self.init_scope():
            self.stem = ConvBN(3, width)
            self.blocks = ChainList()
            in_channels = width
            for stage, factor in enumerate((1, 2, 4)):
                for i in range(n_blocks):
                    stride = 2 if stage > 0 and i == 0 else 1
                    self.blocks.append(BasicBlock(in_channels, factor * width, stride))
                    in_channels = factor * width
            self.fc = L.Linear(in_channels, n_classes)

    def forward(self, x):
        """Class scores of shape (batch, n_classes) for images of shape (batch, 3, 32, 32)."""
        h = F.relu(self.stem(x))
        for block in self.blocks:
            h = block(h)
        h = F.average_pooling_2d(h, h.shape[2:])
        return self.fc(h)


def test_accuracy(predictor, dataset, device, batchsize=500):
    """Accuracy of ``predictor`` on ``dataset``, in test mode and without recording a graph."""
    correct = 0
    with using_config("train", False), no_backprop_mode():
        for start in range(0, len(dataset), batchsize):
            x, t = concat_examples(dataset[start : start + batchsize], device)
            correct += int((predictor(x).array.argmax(axis=1) == t).sum())
    return correct / len(dataset)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", choices=("vgg", "resnet"), default="vgg")
    parser.add_argument("--dataset", choices=("cifar10", "cifar100"), default="cifar10")
    parser.add_argument(
        "--data", help="a local binary tarball of --dataset to read instead of the loader's"
    )
    parser.add_argument(
        "--width", type=int, help="channels of the first stage (vgg: 64, resnet: 16)"
    )
    parser.add_argument("--epoch", type=int, default=300, help="number of sweeps over the data")
    parser.add_argument("--batchsize", type=int, default=64)
    parser.add_argument("--learnrate", type=float, default=0.05, help="initial learning rate")
    parser.add_argument("--device", default="@numpy", help="device specifier, such as @numpy")
    parser.add_argument("--out", default="result/cifar", help="output folder")
    parser.add_argument("--resume", help="trainer snapshot to resume from")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--test",
        action="store_true",
        help="smoke test: 128 training and 64 test images, width 8, one epoch",
    )
    args = parser.parse_args(argv)

    numpy.random.seed(args.seed)
    if args.data:
        train, test = load_cifar_binary(args.data, args.dataset)
    else:
        train, test = (get_cifar10 if args.dataset == "cifar10" else get_cifar100)()
    width = args.width or {"vgg": 64, "resnet": 16}[args.arch]
    epochs = args.epoch
    if args.test:
        train, test = train[:128], test[:64]
        width, epochs = args.width or 8, 1
    n_classes = _N_CLASSES[args.dataset]
    net = VGG(n_classes, width) if args.arch == "vgg" else ResNet(n_classes, width)
    model = L.Classifier(net)
    model.to_device(args.device)
    optimizer = optimizers.MomentumSGD(args.learnrate).setup(model)
    optimizer.add_hook(optimizer_hooks.WeightDecay(5e-4))

    train_iter = SerialIterator(TransformDataset(train, random_crop_and_flip), args.batchsize)
    test_iter = SerialIterator(test, args.batchsize, repeat=False, shuffle=False)
    updater = StandardUpdater(train_iter, optimizer, device=args.device)
    trainer = Trainer(updater, (epochs, "epoch"), out=args.out)
    trainer.extend(extensions.Evaluator(test_iter, model, device=args.device))
    trainer.extend(extensions.ExponentialShift("lr", 0.5), trigger=(25, "epoch"))
    trainer.extend(extensions.LogReport())
    trainer.extend(extensions.observe_lr())
    trainer.extend(extensions.snapshot(), trigger=(10, "epoch"))
    trainer.extend(extensions.snapshot_object(net, "model_final"), trigger=(epochs, "epoch"))
    extend_report(trainer, ("epoch", "lr", *CLASSIFIER_ENTRIES[1:]))
    if args.resume:
        load_npz(args.resume, trainer)
    trainer.run()

    accuracy = test_accuracy(net, test, args.device)
    print(f"test accuracy ({args.arch}): {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
