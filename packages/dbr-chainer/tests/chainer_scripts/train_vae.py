"""A Chainer v7 script: a small variational autoencoder on binary patterns.

Written as Chainer's VAE example (v5 style) is: an encoder giving the mean
and log-variance of q(z|x), ``F.gaussian`` for the reparameterised sample,
``F.bernoulli_nll`` and ``F.gaussian_kl_divergence`` for the loss, a custom
training loop with ``chainer.using_config('train', False)`` for evaluation.
It prints the test loss before and after training as
``loss before: <float>`` and ``loss after: <float>``.
"""

import argparse

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
from chainer.dataset import convert


class VAE(chainer.Chain):
    def __init__(self, n_in, n_latent, n_h):
        super().__init__()
        with self.init_scope():
            self.le1 = L.Linear(n_in, n_h)
            self.le2_mu = L.Linear(n_h, n_latent)
            self.le2_ln_var = L.Linear(n_h, n_latent)
            self.ld1 = L.Linear(n_latent, n_h)
            self.ld2 = L.Linear(n_h, n_in)

    def encode(self, x):
        h1 = F.tanh(self.le1(x))
        return self.le2_mu(h1), self.le2_ln_var(h1)

    def decode(self, z, sigmoid=True):
        h1 = F.tanh(self.ld1(z))
        h2 = self.ld2(h1)
        return F.sigmoid(h2) if sigmoid else h2

    def get_loss_func(self, beta=1.0, k=1):
        def lf(x):
            mu, ln_var = self.encode(x)
            batchsize = len(mu)
            rec_loss = 0
            for _ in range(k):
                z = F.gaussian(mu, ln_var)
                rec_loss += F.bernoulli_nll(x, self.decode(z, sigmoid=False)) / (k * batchsize)
            self.rec_loss = rec_loss
            self.loss = rec_loss + beta * F.gaussian_kl_divergence(mu, ln_var) / batchsize
            chainer.report({"rec_loss": rec_loss, "loss": self.loss}, observer=self)
            return self.loss

        return lf


def make_patterns(n, rng, prototypes):
    picks = rng.randint(0, 4, size=n)
    flips = rng.uniform(size=(n, 16)) < 0.05
    return np.abs(prototypes[picks] - flips).astype(np.float32)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", "-d", type=str, default="-1")
    parser.add_argument("--epoch", "-e", type=int, default=30)
    parser.add_argument("--dimz", "-z", type=int, default=2)
    parser.add_argument("--batchsize", "-b", type=int, default=32)
    args = parser.parse_args()

    device = chainer.get_device(args.device)
    device.use()
    rng = np.random.RandomState(1)
    prototypes = (rng.uniform(size=(4, 16)) < 0.5).astype(np.float32)
    train = make_patterns(512, rng, prototypes)
    test = make_patterns(128, rng, prototypes)

    model = VAE(16, args.dimz, 32)
    model.to_device(device)
    optimizer = chainer.optimizers.Adam(alpha=0.01)
    optimizer.setup(model)
    loss_func = model.get_loss_func()

    def test_loss():
        with chainer.using_config("train", False), chainer.no_backprop_mode():
            x = device.send(test)
            return float(loss_func(x).array)

    print(f"loss before: {test_loss():.4f}")
    train_iter = chainer.iterators.SerialIterator(train, args.batchsize)
    while train_iter.epoch < args.epoch:
        x = convert.concat_examples(train_iter.next(), device)
        optimizer.update(loss_func, x)
    print(f"loss after: {test_loss():.4f}")
    chainer.serializers.save_npz("vae.npz", model)


if __name__ == "__main__":
    main()
