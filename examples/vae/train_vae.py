"""Train a variational autoencoder (VAE) on MNIST and write PNG grids of its images.

An MLP encoder maps a 784-pixel digit to the mean and log-variance of a
Gaussian over a small latent code; an MLP decoder maps a code back to the
logits of 784 Bernoulli pixels. The loss is the negative evidence lower bound
averaged over the batch: ``F.bernoulli_nll`` of the image under the decoder,
averaged over ``--k`` codes drawn with ``F.gaussian``, plus ``--beta`` times
``F.gaussian_kl_divergence`` of the code's distribution from the standard
normal prior. The Trainer reports the loss and its two terms on the training
and (through the Evaluator) test sets; at the end the script writes
``reconstructed_train.png`` and ``reconstructed_test.png`` (originals above
their reconstructions) and ``sampled.png`` (decoded codes drawn from the prior)
into ``--out``.

Install: ``pip install dbr-links dbr-datasets dbr-training``,
or ``pip install "dbr-chainer[all]"`` for all of dbr.
Run: ``python examples/vae/train_vae.py [--epoch 20] [--out result/vae]``;
``--test`` trains on a small slice of the data (a smoke test).
"""

import argparse
import os
import sys

import numpy

import dbr.functions as F
import dbr.links as L
from dbr.core import Chain, no_backprop_mode, report, using_config
from dbr.core.backend import to_cpu
from dbr.core.serializers import load_npz
from dbr.datasets import SerialIterator, concat_examples, get_mnist
from dbr.training import StandardUpdater, Trainer, extensions, optimizers

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from _png import tile_images, write_png  # noqa: E402  (the examples' shared helper)
from _report import extend_report  # noqa: E402


class VAE(Chain):
    """Encoder ``n_in -> n_h -> (mean, ln_var)`` of ``n_latent`` and decoder
    ``n_latent -> n_h -> n_in`` logits, with tanh hidden layers."""

    def __init__(self, n_in, n_latent, n_h):
        super().__init__()
        self.n_latent = n_latent
        with self.init_scope():
            self.le1 = L.Linear(n_in, n_h)
            self.le2_mu = L.Linear(n_h, n_latent)
            self.le2_ln_var = L.Linear(n_h, n_latent)
            self.ld1 = L.Linear(n_latent, n_h)
            self.ld2 = L.Linear(n_h, n_in)

    def encode(self, x):
        """The mean and log-variance, each ``(n, n_latent)``, of the codes of ``x``."""
        h = F.tanh(self.le1(x))
        return self.le2_mu(h), self.le2_ln_var(h)

    def decode(self, z, sigmoid=True):
        """Pixel probabilities ``(n, n_in)`` for codes ``z`` (logits if not ``sigmoid``)."""
        y = self.ld2(F.tanh(self.ld1(z)))
        return F.sigmoid(y) if sigmoid else y

    def forward(self, x, sigmoid=True):
        """Reconstruction of ``x`` from the mean of its code."""
        return self.decode(self.encode(x)[0], sigmoid)


class AvgELBOLoss(Chain):
    """The negative ELBO of a :class:`VAE`, averaged over the batch.

    ``loss = reconstr + beta * kl_penalty``, where ``reconstr`` is the
    Bernoulli negative log-likelihood of ``x`` averaged over ``k`` codes drawn
    from the encoder, and ``kl_penalty`` the KL divergence of the encoder's
    Gaussian from the standard normal prior. All three are reported.
    """

    def __init__(self, vae, beta=1.0, k=1):
        super().__init__()
        self.beta = beta
        self.k = k
        with self.init_scope():
            self.vae = vae

    def forward(self, x):
        """The loss (a 0-d Variable) for the batch ``x`` of shape ``(n, n_in)``."""
        mean, ln_var = self.vae.encode(x)
        batchsize = len(x)
        reconstr = 0
        for _ in range(self.k):
            z = F.gaussian(mean, ln_var)
            reconstr += F.bernoulli_nll(x, self.vae.decode(z, sigmoid=False))
        reconstr /= self.k * batchsize
        kl_penalty = F.gaussian_kl_divergence(mean, ln_var) / batchsize
        loss = reconstr + self.beta * kl_penalty
        report({"loss": loss, "reconstr": reconstr, "kl_penalty": kl_penalty}, self)
        return loss


def average_loss(loss_fn, dataset, batchsize=1000, device=None):
    """The mean of ``loss_fn`` over ``dataset``, in test mode and without a graph."""
    total = 0.0
    with using_config("train", False), no_backprop_mode():
        for start in range(0, len(dataset), batchsize):
            x = concat_examples(dataset[start : start + batchsize], device)
            total += float(to_cpu(loss_fn(x).array)) * len(x)
    return total / len(dataset)


def write_images(vae, train, test, out, seed, device=None):
    """Write the reconstructions of 10 train and 10 test digits and 100 samples as PNGs."""
    rng = numpy.random.RandomState(seed)
    with using_config("train", False), no_backprop_mode():
        for name, dataset in (("train", train), ("test", test)):
            x = concat_examples(dataset[:10], device)
            y = to_cpu(vae(x).array)
            images = numpy.concatenate([to_cpu(x), y]).reshape(-1, 28, 28)
            write_png(os.path.join(out, f"reconstructed_{name}.png"), tile_images(images, 2, 10))
        z = rng.standard_normal((100, vae.n_latent)).astype(numpy.float32)
        samples = to_cpu(vae.decode(vae.device.send(z)).array).reshape(-1, 28, 28)
        write_png(os.path.join(out, "sampled.png"), tile_images(samples, 10, 10))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", "-d", default="@numpy", help="device specifier")
    parser.add_argument("--out", "-o", default="result/vae", help="output folder")
    parser.add_argument(
        "--epoch", "-e", type=int, default=None, help="sweeps over the data (20; 1 with --test)"
    )
    parser.add_argument("--batchsize", "-b", type=int, default=100, help="images per batch")
    parser.add_argument("--dim-z", "-z", type=int, default=20, help="size of the latent code")
    parser.add_argument("--dim-h", type=int, default=500, help="units of the hidden layers")
    parser.add_argument("--beta", type=float, default=1.0, help="weight of the KL penalty")
    parser.add_argument("--k", "-k", type=int, default=1, help="codes sampled per image")
    parser.add_argument("--resume", "-r", default="", help="trainer snapshot to resume from")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument(
        "--train-size", type=int, default=None, help="train on the first N images only"
    )
    parser.add_argument(
        "--test", action="store_true", help="a small slice of the data (500 train, 100 test)"
    )
    args = parser.parse_args(argv)
    if args.epoch is None:
        args.epoch = 1 if args.test else 20

    numpy.random.seed(args.seed)
    vae = VAE(784, args.dim_z, args.dim_h)
    loss_fn = AvgELBOLoss(vae, beta=args.beta, k=args.k)
    loss_fn.to_device(args.device)
    optimizer = optimizers.Adam().setup(loss_fn)

    train, test = get_mnist(withlabel=False)
    if args.test:
        train, test = train[:500], test[:100]
    if args.train_size is not None:
        train = train[: args.train_size]
    initial_loss = average_loss(loss_fn, test, device=args.device)
    print(f"test loss at initialisation: {initial_loss:.2f}")

    train_iter = SerialIterator(train, args.batchsize)
    test_iter = SerialIterator(test, args.batchsize, repeat=False, shuffle=False)
    updater = StandardUpdater(train_iter, optimizer, device=args.device)
    trainer = Trainer(updater, (args.epoch, "epoch"), out=args.out)
    trainer.extend(extensions.Evaluator(test_iter, loss_fn, device=args.device))
    trainer.extend(extensions.snapshot(), trigger=(args.epoch, "epoch"))
    trainer.extend(extensions.LogReport())
    extend_report(
        trainer,
        (
            "epoch",
            "main/loss",
            "validation/main/loss",
            "main/reconstr",
            "main/kl_penalty",
            "elapsed_time",
        ),
    )
    if args.resume:
        load_npz(args.resume, trainer)
    trainer.run()

    loss = average_loss(loss_fn, test, device=args.device)
    print(f"test loss after {args.epoch} epochs: {loss:.2f}")
    write_images(vae, train, test, args.out, args.seed, device=args.device)
    return {"initial_test_loss": initial_loss, "test_loss": loss}


if __name__ == "__main__":
    main()
