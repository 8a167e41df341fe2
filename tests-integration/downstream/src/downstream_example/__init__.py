"""A two-layer classifier on dbr-core, dbr-functions and dbr-links, trained by plain SGD."""

import numpy

import dbr.functions as F
import dbr.links as L
from dbr.core import Chain

__all__ = ["Classifier", "sgd_step"]


class Classifier(Chain):
    """Linear, ReLU, Linear: logits for ``n_classes`` classes."""

    def __init__(self, n_in, n_hidden, n_classes):
        super().__init__()
        with self.init_scope():
            self.hidden = L.Linear(n_in, n_hidden)
            self.out = L.Linear(n_hidden, n_classes)

    def forward(self, x):
        """Logits of the batch ``x`` (float32, shape ``(batch, n_in)``)."""
        return self.out(F.relu(self.hidden(x)))


def sgd_step(model, x, t, lr=0.1):
    """One step of gradient descent on the softmax cross entropy; returns the loss before it."""
    loss = F.softmax_cross_entropy(model(x), t)
    model.cleargrads()
    loss.backward()
    for param in model.params():
        param.array -= numpy.asarray(lr, param.dtype) * param.grad
    return float(loss.array)
