import numpy
import pytest

import dbr.functions as F
from dbr.core import InvalidType, Link, Parameter, Reporter, Variable
from dbr.core.testing import bad_input_test
from dbr.core.testing.link_checks import check_copy_modes, check_round_trip, param_names
from dbr.links.connection.linear import Linear
from dbr.links.model.classifier import Classifier


def _softmax_cross_entropy(y, t):
    z = y - y.max(axis=1, keepdims=True)
    log_p = z - numpy.log(numpy.exp(z).sum(axis=1, keepdims=True))
    return -log_p[numpy.arange(len(t)), t].mean()


class _Sum(Link):
    """A predictor of two inputs: ``(a + b) * w``."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.w = Parameter(numpy.array([1.0, -1.0, 0.5], numpy.float32))

    def forward(self, a, b):
        return (a + b) * self.w


@pytest.fixture
def data():
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal((5, 4)).astype(numpy.float32)
    t = numpy.array([0, 2, 1, 2, 0], numpy.int32)
    return x, t


def _observe(model, *args, **kwargs):
    reporter = Reporter()
    reporter.add_observer("main", model)
    observation = {}
    with reporter.scope(observation):
        loss = model(*args, **kwargs)
    return loss, observation


def test_defaults_and_attributes():
    predictor = Linear(4, 3)
    model = Classifier(predictor)
    assert model.predictor is predictor
    assert model.lossfun is F.softmax_cross_entropy
    assert model.accfun is F.accuracy
    assert model.label_key == -1
    assert model.compute_accuracy is True
    assert model.y is None and model.loss is None and model.accuracy is None


def test_positional_and_keyword_construction():
    def lossfun(y, t):
        return F.mean_squared_error(y, t)

    def accfun(y, t):
        return F.sum(y)

    predictor = Linear(4, 3)
    by_position = Classifier(predictor, lossfun, accfun, "t")
    by_keyword = Classifier(predictor, lossfun=lossfun, accfun=accfun, label_key="t")
    for model in (by_position, by_keyword):
        assert (model.lossfun, model.accfun, model.label_key) == (lossfun, accfun, "t")


def test_reports_loss_and_accuracy(data):
    x, t = data
    model = Classifier(Linear(4, 3))
    loss, observation = _observe(model, x, t)
    W, b = model.predictor.W.array, model.predictor.b.array
    y = x @ W.T + b
    assert sorted(observation) == ["main/accuracy", "main/loss"]
    numpy.testing.assert_allclose(loss.array, _softmax_cross_entropy(y, t), rtol=1e-5)
    numpy.testing.assert_allclose(observation["main/loss"].array, loss.array)
    expected_accuracy = (y.argmax(axis=1) == t).mean()
    numpy.testing.assert_allclose(observation["main/accuracy"].array, expected_accuracy)
    numpy.testing.assert_allclose(model.y.array, y, rtol=1e-5, atol=1e-6)
    assert model.loss is loss
    numpy.testing.assert_allclose(model.accuracy.array, expected_accuracy)


def test_loss_gradient_reaches_predictor(data):
    x, t = data
    model = Classifier(Linear(4, 3))
    model.cleargrads()
    model(x, t).backward()
    W, b = model.predictor.W.array, model.predictor.b.array
    y = x @ W.T + b
    p = numpy.exp(y - y.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    p[numpy.arange(len(t)), t] -= 1
    gy = p / len(t)
    numpy.testing.assert_allclose(model.predictor.W.grad, gy.T @ x, rtol=1e-4, atol=1e-6)
    numpy.testing.assert_allclose(model.predictor.b.grad, gy.sum(axis=0), rtol=1e-4, atol=1e-6)


def test_compute_accuracy_false(data):
    x, t = data
    model = Classifier(Linear(4, 3))
    model.compute_accuracy = False
    _, observation = _observe(model, x, t)
    assert sorted(observation) == ["main/loss"]
    assert model.accuracy is None
    assert Classifier.compute_accuracy is True


def test_without_reporter_nothing_is_reported(data):
    x, t = data
    loss = Classifier(Linear(4, 3))(x, t)
    assert isinstance(loss, Variable) and loss.shape == ()


@pytest.mark.parametrize(
    "label_key, args, kwargs",
    [
        (0, ("t", "a", "b"), {}),
        (1, ("a", "t", "b"), {}),
        (-1, ("a", "b", "t"), {}),
        (2, ("a", "b", "t"), {}),
        (-3, ("t", "a", "b"), {}),
        ("t", ("a", "b"), {"t": "t"}),
        ("t", ("a",), {"b": "b", "t": "t"}),
    ],
)
def test_label_key_selects_the_label(label_key, args, kwargs):
    a = numpy.array([[1.0, 2.0, 3.0]], numpy.float32)
    b = numpy.array([[0.5, -1.0, 2.0]], numpy.float32)
    t = numpy.array([1], numpy.int32)
    values = {"a": a, "b": b, "t": t}
    seen = []

    def lossfun(y, label):
        seen.append(label)
        return F.sum(y)

    model = Classifier(_Sum(), lossfun=lossfun, label_key=label_key)
    model.compute_accuracy = False
    loss = model(*(values[k] for k in args), **{k: values[v] for k, v in kwargs.items()})
    assert seen[0] is t
    numpy.testing.assert_allclose(loss.array, ((a + b) * [1.0, -1.0, 0.5]).sum())


def test_results_are_reset_on_each_call(data):
    x, t = data
    model = Classifier(Linear(4, 3))
    model(x, t)
    assert model.y is not None
    bad = numpy.zeros((5, 7), numpy.float32)
    with pytest.raises(InvalidType, match=r"LinearFunction[\s\S]*Actual: 7 != 4"):
        model(bad, t)
    assert model.y is None and model.loss is None and model.accuracy is None


_X = numpy.zeros((2, 4), numpy.float32)
_T = numpy.array([0, 2], numpy.int32)

test_bad_input = bad_input_test(
    [
        (
            (Linear(4, 3),),
            {"label_key": label_key},
            TypeError,
            "Classifier: label_key must be int or str, got ",
        )
        for label_key in [1.5, None, (0,)]
    ]
    + [
        (
            Classifier(Linear(4, 3), label_key=label_key),
            (_X, _T),
            {},
            ValueError,
            f"Classifier: Label key {label_key} is out of bounds for the 2 ",
        )
        for label_key in [2, -3]
    ]
    + [
        (
            Classifier(Linear(4, 3), label_key="label"),
            (_X,),
            {"t": _T},
            ValueError,
            ('Classifier: Label key "label" is not found ', "(t)"),
        ),
    ],
    function=Classifier,
)


def test_lazy_predictor_and_param_names(data):
    x, t = data
    model = Classifier(Linear(3))
    assert param_names(model) == ["/predictor/W", "/predictor/b"]
    assert model.predictor.W.array is None
    model(x, t)
    assert model.predictor.W.shape == (3, 4)


def test_save_load_and_copy(data):
    x, t = data
    model = Classifier(Linear(4, 3))
    fresh = Classifier(Linear(3))
    check_round_trip(model, fresh)
    numpy.testing.assert_array_equal(fresh(x, t).array, model(x, t).array)
    check_copy_modes(model)
