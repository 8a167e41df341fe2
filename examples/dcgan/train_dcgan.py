"""Train a deep convolutional GAN (DCGAN) on MNIST and write PNG grids of generated digits.

The generator maps a uniform noise vector through ``L.Linear`` and two
``L.Deconvolution2D`` layers (with ``L.BatchNormalization``) to a 28x28
image; the discriminator is a stack of ``L.Convolution2D`` layers with leaky
ReLUs ending in one score. ``DCGANUpdater`` updates the two networks in turn
with their own Adam optimizers ('gen' and 'dis') and the softplus losses of
Chainer's DCGAN example. Every ``--snapshot-interval`` iterations the trainer
is snapshotted and a grid of samples is written to ``<out>/preview/``.

Install: ``pip install dbr-links dbr-datasets dbr-training``,
or ``pip install "dbr-chainer[all]"`` for all of dbr.
Run: ``python examples/dcgan/train_dcgan.py [--epoch 20] [--out result/dcgan]``;
``--test`` trains a few iterations on a slice of the data (a smoke test);
``--resume <out>/snapshot_iter_N`` continues from a snapshot.
"""

import argparse
import os
import sys

import numpy

import dbr.functions as F
import dbr.links as L
from dbr.core import Chain, config, initializers, no_backprop_mode, report, using_config
from dbr.core.backend import get_array_module, to_cpu
from dbr.core.serializers import load_npz
from dbr.datasets import SerialIterator, call_converter, concat_examples, get_mnist
from dbr.training import (
    StandardUpdater,
    Trainer,
    extensions,
    make_extension,
    optimizer_hooks,
    optimizers,
)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from _png import tile_images, write_png  # noqa: E402  (the examples' shared helper)


class Generator(Chain):
    """Noise ``(n, n_hidden)`` -> images ``(n, 1, 28, 28)`` in [0, 1].

    A linear layer makes a ``ch x 7 x 7`` map, upsampled twice by stride-2
    deconvolutions (7 -> 14 -> 28) with batch normalization and ReLU, and a
    sigmoid on the last one.
    """

    def __init__(self, n_hidden, ch=128, bottom_width=7, wscale=0.02):
        super().__init__()
        self.n_hidden = n_hidden
        self.ch = ch
        self.bottom_width = bottom_width
        w = initializers.Normal(wscale)
        with self.init_scope():
            self.l0 = L.Linear(n_hidden, bottom_width * bottom_width * ch, initialW=w)
            self.dc1 = L.Deconvolution2D(ch, ch // 2, 4, 2, 1, initialW=w)
            self.dc2 = L.Deconvolution2D(ch // 2, 1, 4, 2, 1, initialW=w)
            self.bn0 = L.BatchNormalization(bottom_width * bottom_width * ch)
            self.bn1 = L.BatchNormalization(ch // 2)

    def make_hidden(self, batchsize, random=numpy.random):
        """A batch of generator inputs, uniform in [-1, 1], as a float32 NumPy array."""
        return random.uniform(-1, 1, (batchsize, self.n_hidden)).astype(numpy.float32)

    def forward(self, z):
        """Images of shape ``(len(z), 1, 28, 28)`` generated from the noise ``z``."""
        h = F.relu(self.bn0(self.l0(z)))
        h = F.reshape(h, (len(z), self.ch, self.bottom_width, self.bottom_width))
        h = F.relu(self.bn1(self.dc1(h)))
        return F.sigmoid(self.dc2(h))


def add_noise(h, sigma=0.2):
    """``h`` plus Gaussian noise of standard deviation ``sigma`` in training mode, else ``h``."""
    if not config.train:
        return h
    noise = get_array_module(h).random.standard_normal(h.shape).astype(h.dtype)
    return h + sigma * noise


class Discriminator(Chain):
    """Images ``(n, 1, 28, 28)`` -> one real-vs-generated score per image (a logit).

    Stride-2 convolutions halve the map twice (28 -> 14 -> 7); leaky ReLU
    throughout, batch normalization after the first layer, and Gaussian noise
    on the activations while training, as in Chainer's example.
    """

    def __init__(self, ch=128, wscale=0.02):
        super().__init__()
        w = initializers.Normal(wscale)
        with self.init_scope():
            self.c0 = L.Convolution2D(1, ch // 4, 4, 2, 1, initialW=w)
            self.c1 = L.Convolution2D(ch // 4, ch // 2, 4, 2, 1, initialW=w)
            self.c2 = L.Convolution2D(ch // 2, ch, 3, 1, 1, initialW=w)
            self.l3 = L.Linear(None, 1, initialW=w)
            self.bn1 = L.BatchNormalization(ch // 2, use_gamma=False)
            self.bn2 = L.BatchNormalization(ch, use_gamma=False)

    def forward(self, x):
        """Scores of shape ``(len(x), 1)``; large means 'real'."""
        h = add_noise(x)
        h = F.leaky_relu(add_noise(self.c0(h)))
        h = F.leaky_relu(add_noise(self.bn1(self.c1(h))))
        h = F.leaky_relu(add_noise(self.bn2(self.c2(h))))
        return self.l3(h)


class DCGANUpdater(StandardUpdater):
    """Updates the discriminator, then the generator, once per batch.

    The optimizers are given as ``{'gen': ..., 'dis': ...}``; their targets are
    the generator and the discriminator. With ``y_real`` and ``y_fake`` the
    discriminator's logits on a batch of real and of generated images, the
    losses are (summed over the batch, divided by its size)::

        dis/loss = softplus(-y_real) + softplus(y_fake)
        gen/loss = softplus(-y_fake)

    that is, the cross entropies of 'real' and 'generated' labels.
    """

    def __init__(self, iterator, optimizer, converter=concat_examples, device=None):
        if set(optimizer) != {"gen", "dis"}:
            raise ValueError(
                f"DCGANUpdater: expected the optimizers 'gen' and 'dis', got {sorted(optimizer)}"
            )
        super().__init__(iterator, optimizer, converter=converter, device=device)
        self.gen = optimizer["gen"].target
        self.dis = optimizer["dis"].target

    def loss_dis(self, dis, y_fake, y_real):
        """The discriminator's loss; reports it as ``dis/loss``."""
        batchsize = len(y_fake)
        loss = F.sum(F.softplus(-y_real)) / batchsize + F.sum(F.softplus(y_fake)) / batchsize
        report({"loss": loss}, dis)
        return loss

    def loss_gen(self, gen, y_fake):
        """The generator's loss; reports it as ``gen/loss``."""
        loss = F.sum(F.softplus(-y_fake)) / len(y_fake)
        report({"loss": loss}, gen)
        return loss

    def update_core(self):
        """One step of each network on the next batch of real images."""
        iterator = self.get_iterator("main")
        x_real = call_converter(self.converter, iterator.next(), self.input_device)
        batchsize = len(x_real)
        y_real = self.dis(x_real)
        z = self.gen.device.send(self.gen.make_hidden(batchsize))
        x_fake = self.gen(z)
        y_fake = self.dis(x_fake)
        self.get_optimizer("dis").update(self.loss_dis, self.dis, y_fake, y_real)
        self.get_optimizer("gen").update(self.loss_gen, self.gen, y_fake)
        if self.auto_new_epoch and iterator.is_new_epoch:
            for optimizer in self.get_all_optimizers().values():
                optimizer.new_epoch(auto=True)


def generated_image_writer(gen, rows, cols, seed, out):
    """A trainer extension writing a ``rows`` x ``cols`` grid of samples of ``gen``.

    The noise is drawn from ``seed`` each time, so successive images show how
    the same inputs evolve. Files: ``<out>/preview/image_iter_<iteration>.png``.
    """

    @make_extension(default_name="generated_image")
    def write_generated_image(trainer):
        z = gen.device.send(gen.make_hidden(rows * cols, numpy.random.RandomState(seed)))
        with using_config("train", False), no_backprop_mode():
            x = gen(z).array
        grid = tile_images(to_cpu(x), rows, cols)
        iteration = trainer.updater.iteration
        write_png(os.path.join(out, "preview", f"image_iter_{iteration:07d}.png"), grid)

    return write_generated_image


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batchsize", "-b", type=int, default=50, help="images per batch")
    parser.add_argument(
        "--epoch", "-e", type=int, default=None, help="sweeps over the data (20; 1 with --test)"
    )
    parser.add_argument("--device", "-d", default="@numpy", help="device specifier")
    parser.add_argument("--out", "-o", default="result/dcgan", help="output folder")
    parser.add_argument("--resume", "-r", default="", help="trainer snapshot to resume from")
    parser.add_argument("--n-hidden", "-n", type=int, default=100, help="size of the noise")
    parser.add_argument(
        "--ch", type=int, default=None, help="channels of the widest layer (64; 16 with --test)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument(
        "--snapshot-interval",
        type=int,
        default=None,
        help="iterations between snapshots and previews (1000; 5 with --test)",
    )
    parser.add_argument(
        "--display-interval",
        type=int,
        default=None,
        help="iterations between log lines (100; 5 with --test)",
    )
    parser.add_argument("--test", action="store_true", help="a few iterations on a small slice")
    args = parser.parse_args(argv)

    sizes = {
        "epoch": (20, 1),
        "ch": (64, 16),
        "snapshot_interval": (1000, 5),
        "display_interval": (100, 5),
    }
    for name, (full, small) in sizes.items():
        if getattr(args, name) is None:
            setattr(args, name, small if args.test else full)
    numpy.random.seed(args.seed)

    gen = Generator(args.n_hidden, ch=args.ch)
    dis = Discriminator(ch=args.ch)
    gen.to_device(args.device)
    dis.to_device(args.device)

    def make_optimizer(model, alpha=0.0002, beta1=0.5):
        optimizer = optimizers.Adam(alpha=alpha, beta1=beta1).setup(model)
        optimizer.add_hook(optimizer_hooks.WeightDecay(0.0001), "hook_dec")
        return optimizer

    train, _ = get_mnist(withlabel=False, ndim=3)
    if args.test:
        train = train[: 10 * args.batchsize]
    train_iter = SerialIterator(train, args.batchsize)
    updater = DCGANUpdater(
        train_iter, {"gen": make_optimizer(gen), "dis": make_optimizer(dis)}, device=args.device
    )
    trainer = Trainer(updater, (args.epoch, "epoch"), out=args.out)

    snapshot_interval = (args.snapshot_interval, "iteration")
    display_interval = (args.display_interval, "iteration")
    trainer.extend(extensions.snapshot(), trigger=snapshot_interval)
    trainer.extend(
        extensions.snapshot_object(gen, "gen_iter_{.updater.iteration}"), trigger=snapshot_interval
    )
    trainer.extend(
        extensions.snapshot_object(dis, "dis_iter_{.updater.iteration}"), trigger=snapshot_interval
    )
    trainer.extend(extensions.LogReport(trigger=display_interval))
    trainer.extend(
        extensions.PrintReport(["epoch", "iteration", "gen/loss", "dis/loss", "elapsed_time"]),
        trigger=display_interval,
    )
    trainer.extend(extensions.ProgressBar(update_interval=10))
    trainer.extend(
        generated_image_writer(gen, 10, 10, args.seed, args.out), trigger=snapshot_interval
    )
    if args.resume:
        load_npz(args.resume, trainer)
    trainer.run()

    losses = {key: float(trainer.observation[key].array) for key in ("gen/loss", "dis/loss")}
    print(f"final losses: gen {losses['gen/loss']:.4f}, dis {losses['dis/loss']:.4f}")
    return losses


if __name__ == "__main__":
    main()
