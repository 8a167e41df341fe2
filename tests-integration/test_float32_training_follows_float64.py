"""Training a deep batch-normalized convnet: dbr's float64 run is Chainer's; float32 follows it.

Chainer's cifar example (a VGG of 13 convolution, batch normalization and
ReLU blocks with max pooling, MomentumSGD at 0.05), run for 10 iterations on
stand-in data with seed 0, ends with a validation loss of 43.28 on dbr and
27.17 on Chainer in float32. The two are the same computation: in float64 they
agree to 13 digits. In float32, Chainer sums batch normalization's statistics
in float32 over the batch and spatial axes (errors near 1e-5; dbr sums in
float64, near 1e-7), max pooling then routes a few gradients to the other of
two nearly equal inputs, the first step's gradients differ by percents, and a
learning rate of 0.05 makes that grow. On the small VGG below, Chainer 7.8.1's
float32 losses leave its float64 ones by 1.3e-4 at the second step and 2% at
the fourth; dbr's stay within 4e-6 of them.
"""

import numpy

import dbr.functions as F
import dbr.links as L
from dbr.core import Chain, ChainList, using_config
from dbr.training import optimizer_hooks, optimizers

# (output channels, then max pooling?) of each convolution block.
PLAN = [(16, False), (16, True), (32, False), (32, True), (64, False), (64, False), (64, True),
        (64, False), (64, False), (64, True)]  # fmt: skip


class Block(Chain):
    """A 3x3 convolution without bias, batch normalization and ReLU."""

    def __init__(self, channels):
        super().__init__()
        with self.init_scope():
            self.conv = L.Convolution2D(None, channels, 3, pad=1, nobias=True)
            self.bn = L.BatchNormalization(channels)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class SmallVGG(Chain):
    """VGG's shape at a tenth of its width: the blocks of PLAN, then two fully connected layers."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.blocks = ChainList(*[Block(channels) for channels, _ in PLAN])
            self.fc1 = L.Linear(None, 64, nobias=True)
            self.bn_fc1 = L.BatchNormalization(64)
            self.fc2 = L.Linear(None, 10, nobias=True)

    def forward(self, x):
        h = x
        for block, (_, pool) in zip(self.blocks, PLAN):
            h = block(h)
            if pool:
                h = F.max_pooling_2d(h, 2, 2)
        return self.fc2(F.relu(self.bn_fc1(self.fc1(h))))


def training_losses(dtype, steps):
    """The loss of each step of MomentumSGD(0.05) with weight decay, seed 0, in dtype."""
    with using_config("dtype", numpy.dtype(dtype)):
        numpy.random.seed(0)
        model = L.Classifier(SmallVGG())
        optimizer = optimizers.MomentumSGD(0.05)
        optimizer.setup(model)
        optimizer.add_hook(optimizer_hooks.WeightDecay(5e-4))
        images = numpy.random.rand(steps, 16, 3, 32, 32).astype(dtype)
        labels = numpy.random.randint(0, 10, (steps, 16)).astype(numpy.int32)
        losses = []
        for x, t in zip(images, labels):
            loss = model(x, t)
            model.cleargrads()
            loss.backward()
            optimizer.update()
            losses.append(float(loss.array))
    return numpy.array(losses)


# Chainer 7.8.1's losses for training_losses(numpy.float64, steps=4), this file's net and data.
CHAINER_FLOAT64_LOSSES = [2.3984252960262165, 2.25891573851091, 2.595220286819665,
                          2.4614209260880564]  # fmt: skip


def test_float64_training_is_chainers():
    numpy.testing.assert_allclose(training_losses(numpy.float64, 4), CHAINER_FLOAT64_LOSSES,
                                  rtol=1e-10)  # fmt: skip


def test_float32_training_follows_float64():
    single = training_losses(numpy.float32, 4)
    numpy.testing.assert_allclose(single, CHAINER_FLOAT64_LOSSES, rtol=2e-5)
