"""dbr.core's Link and serializers with dbr.functions: a small model trains and round-trips."""

import numpy
import pytest

import dbr.functions as F
from dbr.core import Chain, Parameter, initializers, serializers


class Affine(Chain):
    """y = x W^T + b with a lazily initialised W, built from core Parameters."""

    def __init__(self, n_out):
        super().__init__()
        with self.init_scope():
            self.W = Parameter(initializers.LeCunNormal())
            self.b = Parameter(initializers.Zero(), (n_out,))
        self.n_out = n_out

    def forward(self, x):
        if self.W.array is None:
            self.W.initialize((self.n_out, x.shape[1]))
        return F.matmul(x, self.W, transb=True) + self.b


class MLP(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = Affine(16)
            self.l2 = Affine(3)

    def forward(self, x):
        return self.l2(F.relu(self.l1(x)))


def make_data(rng, n=240):
    """Three Gaussian blobs in 4-D, one per class."""
    centres = rng.standard_normal((3, 4)).astype(numpy.float32) * 3
    t = rng.integers(0, 3, n).astype(numpy.int32)
    x = centres[t] + rng.standard_normal((n, 4)).astype(numpy.float32) * 0.5
    return x, t


def train(model, x, t, steps=60, lr=0.1):
    losses = []
    for _ in range(steps):
        model.cleargrads()
        loss = F.softmax_cross_entropy(model(x), t)
        loss.backward()
        for param in model.params():
            param.array -= lr * param.grad
        losses.append(float(loss.array))
    return losses


def test_a_model_of_core_links_and_functions_learns():
    numpy.random.seed(0)
    x, t = make_data(numpy.random.default_rng(0))
    model = MLP()
    losses = train(model, x, t)
    assert losses[-1] < 0.25 * losses[0]
    accuracy = float(F.accuracy(model(x), t).array)
    assert accuracy > 0.95
    assert [path for path, _ in model.namedparams()] == ["/l1/W", "/l1/b", "/l2/W", "/l2/b"]


@pytest.mark.parametrize("fmt", ["npz", "hdf5"])
def test_a_trained_model_round_trips_through_a_file(tmp_path, fmt):
    numpy.random.seed(1)
    x, t = make_data(numpy.random.default_rng(1))
    model = MLP()
    train(model, x, t, steps=10)
    save, load = {
        "npz": (serializers.save_npz, serializers.load_npz),
        "hdf5": (serializers.save_hdf5, serializers.load_hdf5),
    }[fmt]
    path = tmp_path / f"model.{fmt}"
    save(str(path), model)

    fresh = MLP()  # lazy W: initialised from the file's shapes
    load(str(path), fresh)
    numpy.testing.assert_array_equal(fresh(x).array, model(x).array)
