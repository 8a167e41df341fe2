"""A Chainer v7 script: an MLP classifier trained with Trainer, in Chainer style.

The data are ten Gaussian clusters in 64 dimensions, one per class (a
stand-in for MNIST that needs no download). It trains, evaluates on held-out
points each epoch, saves the model, reloads it into a fresh network and
prints the reloaded model's test accuracy as ``final accuracy: <float>``.
"""

import argparse
import os

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
from chainer import training
from chainer.training import extensions


class MLP(chainer.Chain):
    def __init__(self, n_units, n_out):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(None, n_units)
            self.l2 = L.Linear(None, n_units)
            self.l3 = L.Linear(None, n_out)

    def forward(self, x):
        h1 = F.relu(self.l1(x))
        h2 = F.relu(self.l2(h1))
        return self.l3(h2)


def make_clusters(n, rng, centers):
    labels = rng.randint(0, len(centers), size=n).astype(np.int32)
    x = centers[labels] + 0.5 * rng.standard_normal((n, centers.shape[1]))
    return chainer.datasets.TupleDataset(x.astype(np.float32), labels)


def main():
    parser = argparse.ArgumentParser(description="Chainer example: clusters MLP")
    parser.add_argument("--batchsize", "-b", type=int, default=50)
    parser.add_argument("--epoch", "-e", type=int, default=3)
    parser.add_argument("--device", "-d", type=str, default="-1",
                        help="GPU id, or a negative value for the CPU")  # fmt: skip
    parser.add_argument("--out", "-o", default="result")
    parser.add_argument("--unit", "-u", type=int, default=64)
    args = parser.parse_args()

    device = chainer.get_device(args.device)
    print(f"Device: {device}")
    device.use()

    rng = np.random.RandomState(0)
    centers = 3 * rng.standard_normal((10, 64))
    train = make_clusters(1000, rng, centers)
    test = make_clusters(200, rng, centers)

    model = L.Classifier(MLP(args.unit, 10))
    model.to_device(device)
    optimizer = chainer.optimizers.Adam()
    optimizer.setup(model)
    optimizer.add_hook(chainer.optimizer_hooks.WeightDecay(1e-5))

    train_iter = chainer.iterators.SerialIterator(train, args.batchsize)
    test_iter = chainer.iterators.SerialIterator(test, args.batchsize, repeat=False, shuffle=False)

    updater = training.updaters.StandardUpdater(train_iter, optimizer, device=device)
    trainer = training.Trainer(updater, (args.epoch, "epoch"), out=args.out)
    trainer.extend(extensions.Evaluator(test_iter, model, device=device))
    trainer.extend(extensions.snapshot(), trigger=(args.epoch, "epoch"))
    trainer.extend(extensions.LogReport())
    trainer.extend(
        extensions.PrintReport(
            ["epoch", "main/loss", "validation/main/loss", "main/accuracy",
             "validation/main/accuracy", "elapsed_time"]
        )
    )  # fmt: skip
    trainer.run()

    path = os.path.join(args.out, "mlp.npz")
    chainer.serializers.save_npz(path, model)
    restored = L.Classifier(MLP(args.unit, 10))
    chainer.serializers.load_npz(path, restored)
    x, t = chainer.dataset.concat_examples(test)
    with chainer.using_config("train", False), chainer.no_backprop_mode():
        y = restored.predictor(x)
    accuracy = float(F.accuracy(y, t).array)
    print(f"final accuracy: {accuracy:.4f}")


if __name__ == "__main__":
    main()
