"""``L.Classifier`` over an MLP of ``L.Linear`` links, trained by a hand-written loop on MNIST.

No Trainer: the loop draws minibatches, calls the classifier, backpropagates
and lets an optimizer update, as Chainer's custom-loop tutorial does. The
test accuracy after 800 steps of batch 100 must reach 95%.
"""

import numpy

import dbr.functions as F
import dbr.links as L
from dbr.core import Chain, Reporter, no_backprop_mode, using_config
from dbr.datasets import concat_examples
from dbr.training import optimizers


class MLP(Chain):
    """Two hidden ReLU layers whose input size is inferred at the first call."""

    def __init__(self, n_units, n_out):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(None, n_units)
            self.l2 = L.Linear(n_units)
            self.l3 = L.Linear(n_out)

    def forward(self, x):
        h = F.relu(self.l1(x))
        h = F.relu(self.l2(h))
        return self.l3(h)


def test_classifier_mlp_reaches_95_percent_on_mnist(mnist, report_figure):
    train, test = mnist
    train_x, train_t = concat_examples(train[:])
    test_x, test_t = concat_examples(test[:])
    rng = numpy.random.default_rng(0)
    numpy.random.seed(0)

    model = L.Classifier(MLP(300, 10))
    optimizer = optimizers.Adam().setup(model)
    reporter = Reporter()
    reporter.add_observer("main", model)
    losses = []
    steps, batch = 800, 100
    per_epoch = len(train_x) // batch
    for step in range(steps):
        if step % per_epoch == 0:
            order = rng.permutation(len(train_x))
        index = order[step % per_epoch * batch : (step % per_epoch + 1) * batch]
        observation = {}
        with reporter.scope(observation):
            optimizer.update(model, train_x[index], train_t[index])
        losses.append(float(observation["main/loss"].array))
        assert 0.0 <= float(observation["main/accuracy"].array) <= 1.0

    assert numpy.mean(losses[-50:]) < 0.5 * numpy.mean(losses[:50])
    correct = 0
    with using_config("train", False), no_backprop_mode():
        for start in range(0, len(test_x), 1000):
            y = model.predictor(test_x[start : start + 1000])
            correct += int((y.array.argmax(axis=1) == test_t[start : start + 1000]).sum())
    accuracy = correct / len(test_x)
    report_figure(f"MNIST test accuracy of L.Classifier(MLP), {steps} steps", accuracy)
    assert accuracy >= 0.95
