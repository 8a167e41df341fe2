"""The downstream project's own tests: it learns, with only the dbr components it pinned."""

import importlib.metadata

import numpy
from downstream_example import Classifier, sgd_step


def _blobs(n=256, seed=0):
    rng = numpy.random.default_rng(seed)
    centres = numpy.array([[2.0, 2.0], [-2.0, -2.0], [2.0, -2.0]])
    t = rng.integers(0, 3, n).astype(numpy.int32)
    x = (centres[t] + rng.normal(0.0, 0.5, (n, 2))).astype(numpy.float32)
    return x, t


def test_training_separates_three_blobs():
    x, t = _blobs()
    model = Classifier(2, 16, 3)
    first = sgd_step(model, x, t)
    for _ in range(100):
        last = sgd_step(model, x, t)
    accuracy = float((model(x).array.argmax(axis=1) == t).mean())
    assert last < first / 4, (first, last)
    assert accuracy > 0.95


def test_only_the_declared_components_are_installed():
    installed = {
        d.metadata["Name"] for d in importlib.metadata.distributions()
        if d.metadata["Name"].startswith("dbr-")
    }  # fmt: skip
    assert installed == {"dbr-core", "dbr-functions", "dbr-links"}
