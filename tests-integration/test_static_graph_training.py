"""Training with @static_graph gives define-by-run's bits: 100 optimizer updates of three models.

An MLP with dropout, LeNet-5 and an LSTM language model trained by truncated
backprop through time (the static chain is one time step, called once per
step), each under SGD, MomentumSGD and Adam: after every update the loss and
every parameter equal define-by-run's to the last bit. Snapshots move
between a static and a define-by-run model.
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy
import pytest

import dbr.functions as F
import dbr.links as L
from dbr.core import Chain, serializers, static_graph, using_config
from dbr.core.testing import get_test_device
from dbr.datasets import SerialIterator, TupleDataset
from dbr.training import Trainer, extensions, optimizers, updaters


class MLP(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(None, 32)
            self.l2 = L.Linear(None, 32)
            self.l3 = L.Linear(None, 10)

    def forward(self, x):
        h = F.dropout(F.relu(self.l1(x)), 0.2)
        return self.l3(F.relu(self.l2(h)))


class LeNet5(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.c1 = L.Convolution2D(1, 6, 5, pad=2)
            self.c2 = L.Convolution2D(6, 16, 5)
            self.f1 = L.Linear(None, 120)
            self.f2 = L.Linear(120, 84)
            self.f3 = L.Linear(84, 10)

    def forward(self, x):
        h = F.max_pooling_2d(F.relu(self.c1(x)), 2)
        h = F.max_pooling_2d(F.relu(self.c2(h)), 2)
        return self.f3(F.relu(self.f2(F.relu(self.f1(h)))))


class LSTMStep(Chain):
    """One time step of a 1-layer LSTM language model: (word, c, h) -> (c, h, logits)."""

    def __init__(self, vocab=30, units=16):
        super().__init__()
        with self.init_scope():
            self.embed = L.EmbedID(vocab, units)
            self.upward = L.Linear(units, 4 * units)
            self.lateral = L.Linear(units, 4 * units, nobias=True)
            self.out = L.Linear(units, vocab)

    def forward(self, word, c, h):
        c, h = F.lstm(c, self.upward(F.dropout(self.embed(word), 0.1)) + self.lateral(h))
        return c, h, self.out(h)


def static(model_class):
    """The same model with its forward decorated with @static_graph."""
    return type(f"Static{model_class.__name__}", (model_class,), {
        "forward": static_graph(model_class.forward)
    })  # fmt: skip


OPTIMIZERS = {
    "SGD": lambda: optimizers.SGD(lr=0.05),
    "MomentumSGD": lambda: optimizers.MomentumSGD(lr=0.05),
    "Adam": lambda: optimizers.Adam(alpha=0.002),
}


def classifier_steps(model, optimizer, shape, updates=100):
    """Train on fixed random batches; yield the loss and parameters after each update."""
    rng = numpy.random.default_rng(0)
    xs = rng.standard_normal((4, 8, *shape)).astype(numpy.float32)
    ts = rng.integers(0, 10, (4, 8)).astype(numpy.int32)
    numpy.random.seed(7)
    optimizer.setup(model)
    for i in range(updates):
        loss = F.softmax_cross_entropy(model(xs[i % 4]), ts[i % 4])
        model.cleargrads()
        loss.backward()
        optimizer.update()
        yield loss.array, [p.array.copy() for _, p in sorted(model.namedparams())]


def language_model_steps(model, optimizer, updates=100, steps=5, batch=4):
    """Truncated BPTT over a fixed random corpus; yield the loss and parameters per update."""
    rng = numpy.random.default_rng(1)
    corpus = rng.integers(0, 30, (batch, updates * steps + 1)).astype(numpy.int32)
    numpy.random.seed(8)
    optimizer.setup(model)
    c = h = numpy.zeros((batch, 16), numpy.float32)
    for i in range(updates):
        loss = 0
        for t in range(i * steps, (i + 1) * steps):
            c, h, y = model(corpus[:, t], c, h)
            loss += F.softmax_cross_entropy(y, corpus[:, t + 1])
        model.cleargrads()
        loss.backward()
        loss.unchain_backward()
        optimizer.update()
        yield loss.array, [p.array.copy() for _, p in sorted(model.namedparams())]


def assert_same_training(static_steps, plain_steps):
    # Run each to the end first: both draw from NumPy's global generator.
    static_steps, plain_steps = list(static_steps), list(plain_steps)
    for (loss_s, params_s), (loss_p, params_p) in zip(static_steps, plain_steps, strict=True):
        numpy.testing.assert_array_equal(loss_s, loss_p, strict=True)
        for a, b in zip(params_s, params_p, strict=True):
            numpy.testing.assert_array_equal(a, b, strict=True)


def twins(model_class, *args):
    numpy.random.seed(0)
    plain = model_class(*args)
    numpy.random.seed(0)
    return static(model_class)(*args), plain


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
@pytest.mark.parametrize("model_class, shape", [(MLP, (20,)), (LeNet5, (1, 28, 28))])
def test_classifiers_train_to_define_by_runs_bits(model_class, shape, optimizer):
    updates = 100 if model_class is MLP else 30
    static_model, plain = twins(model_class)
    assert_same_training(
        classifier_steps(static_model, OPTIMIZERS[optimizer](), shape, updates),
        classifier_steps(plain, OPTIMIZERS[optimizer](), shape, updates),
    )
    assert static_model.schedule_manager.schedules


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
def test_an_lstm_language_model_trains_to_define_by_runs_bits(optimizer):
    static_model, plain = twins(LSTMStep)
    assert_same_training(
        language_model_steps(static_model, OPTIMIZERS[optimizer]()),
        language_model_steps(plain, OPTIMIZERS[optimizer]()),
    )
    # One schedule per time step of an update, and the first step's recorded twice.
    assert sum(len(s) for s in static_model.schedule_manager.schedules.values()) == 6


def trainer_result(predictor, tmp_path):
    rng = numpy.random.default_rng(3)
    data = TupleDataset(
        rng.standard_normal((64, 20)).astype(numpy.float32),
        rng.integers(0, 10, 64).astype(numpy.int32),
    )
    model = L.Classifier(predictor)
    updater = updaters.StandardUpdater(
        SerialIterator(data, 16, shuffle=False), optimizers.MomentumSGD(lr=0.05).setup(model)
    )
    trainer = Trainer(updater, (3, "epoch"), out=str(tmp_path))
    trainer.extend(
        extensions.Evaluator(SerialIterator(data, 16, repeat=False, shuffle=False), model)
    )
    trainer.extend(extensions.LogReport(trigger=(1, "epoch")))
    numpy.random.seed(11)
    trainer.run()
    log = trainer.get_extension("LogReport").log
    return log, [p.array for _, p in sorted(model.namedparams())]


def test_a_trainer_with_an_evaluator_trains_to_define_by_runs_bits(tmp_path):
    static_model, plain = twins(MLP)
    log_s, params_s = trainer_result(static_model, tmp_path / "static")
    log_p, params_p = trainer_result(plain, tmp_path / "plain")
    for a, b in zip(params_s, params_p, strict=True):
        numpy.testing.assert_array_equal(a, b, strict=True)
    keys = ("main/loss", "main/accuracy", "validation/main/loss", "validation/main/accuracy")
    assert [[e[k] for k in keys] for e in log_s] == [[e[k] for k in keys] for e in log_p]
    assert len(log_s) == 3


def test_snapshots_move_between_static_and_define_by_run_models(tmp_path):
    static_model, plain = twins(MLP)
    x = numpy.random.default_rng(2).standard_normal((3, 20)).astype(numpy.float32)
    with using_config("train", False):
        for model in (static_model, plain):
            numpy.random.seed(3)  # the same lazily initialized weights
            model(x)
        for _ in range(3):
            static_model(x)
        numpy.testing.assert_array_equal(static_model(x).array, plain(x).array)
    for p in plain.params():
        p.array *= 1.5
    serializers.save_npz(tmp_path / "plain.npz", plain)
    serializers.load_npz(tmp_path / "plain.npz", static_model)
    with using_config("train", False):
        numpy.testing.assert_array_equal(static_model(x).array, plain(x).array)
    serializers.save_npz(tmp_path / "static.npz", static_model)
    restored = MLP()
    serializers.load_npz(tmp_path / "static.npz", restored)
    with using_config("train", False):
        numpy.testing.assert_array_equal(restored(x).array, plain(x).array)


class StatefulLM(Chain):
    """The PTB example's shape: stateful L.LSTM links, the whole BPTT window in one call."""

    def __init__(self, vocab=30, units=16):
        super().__init__()
        with self.init_scope():
            self.embed = L.EmbedID(vocab, units)
            self.l1 = L.LSTM(units, units)
            self.l2 = L.LSTM(units, units)
            self.out = L.Linear(units, vocab)

    def reset_state(self):
        self.l1.reset_state()
        self.l2.reset_state()

    def forward(self, words):
        return [self.out(self.l2(self.l1(F.dropout(self.embed(w), 0.1)))) for w in words]


def stateful_lm_steps(model, updates=30, steps=4, batch=4):
    rng = numpy.random.default_rng(4)
    corpus = rng.integers(0, 30, (updates * steps + 1, batch)).astype(numpy.int32)
    numpy.random.seed(9)
    optimizer = optimizers.SGD(lr=0.5).setup(model)
    for i in range(updates):
        if i % 10 == 0:
            model.reset_state()
        ys = model([corpus[t] for t in range(i * steps, (i + 1) * steps)])
        loss = sum(F.softmax_cross_entropy(y, corpus[i * steps + k + 1]) for k, y in enumerate(ys))
        model.cleargrads()
        loss.backward()
        loss.unchain_backward()
        optimizer.update()
        yield loss.array, [p.array.copy() for _, p in sorted(model.namedparams())]


def test_stateful_lstm_links_in_a_static_chain_train_to_define_by_runs_bits():
    static_model, plain = twins(StatefulLM)
    assert_same_training(stateful_lm_steps(static_model), stateful_lm_steps(plain))
    # The state of the LSTM links: absent after reset_state, then carried between calls.
    assert len(static_model.schedule_manager.schedules) == 2


def test_the_static_graph_benchmark_runs_its_dbr_side():
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "static_graph.py"
    out = subprocess.run(
        [sys.executable, str(script), "--side", "dbr", "--repeat", "1", "--cases", "recurrent",
         "mlp-b32", "lstm-lm-outside"],
        capture_output=True, text=True, check=True, cwd=script.parent,
    )  # fmt: skip
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert set(result) == {"recurrent", "mlp-b32", "lstm-lm-outside"}
    for case in result.values():
        assert case["define-by-run"] > 0 and case["static"] > 0
        assert set(case["peak"]) == {"define-by-run", "static"}


class ClassifierWithLoss(Chain):
    """A linear classifier whose loss (labels may be ignored) is inside the static chain."""

    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = L.Linear(6, 5)

    def forward(self, x, t):
        return F.softmax_cross_entropy(self.l1(x), t)


def test_ignored_labels_appearing_after_recording_train_to_define_by_runs_bits():
    # The replay's backward runs on arrays after two agreeing recordings; the loss's
    # normalizer (1 / the labels not ignored) comes from the data, and the first batches
    # ignore none: a backward that baked it in would diverge from the fourth update on.
    rng = numpy.random.default_rng(2)
    xs = rng.standard_normal((10, 4, 6)).astype(numpy.float32)
    ts = rng.integers(0, 5, (10, 4)).astype(numpy.int32)
    ts[3:, 0] = -1
    ts[6:, 1] = -1

    def steps(model):
        optimizer = optimizers.SGD(lr=0.1).setup(model)
        for x, t in zip(xs, ts):
            optimizer.update(model, x, t)
            yield model.l1.W.array.copy(), model.l1.b.array.copy()

    static_model, plain_model = twins(ClassifierWithLoss)
    for static_params, plain_params in zip(steps(static_model), steps(plain_model), strict=True):
        for a, b in zip(static_params, plain_params, strict=True):
            numpy.testing.assert_array_equal(a, b, strict=True)


class LSTMStepOutside(LSTMStep):
    """LSTMStep with the embedding and the upward layer outside the static part (the
    static graph guide's advice for a smaller peak)."""

    def forward(self, word, c, h):
        return self.step(self.upward(F.dropout(self.embed(word), 0.1)), c, h)

    @static_graph
    def step(self, x, c, h):
        c, h = F.lstm(c, x + self.lateral(h))
        return c, h, self.out(h)


def test_an_lstm_language_model_with_its_embedding_outside_trains_to_define_by_runs_bits():
    numpy.random.seed(0)
    static_model = LSTMStepOutside()
    numpy.random.seed(0)
    plain = LSTMStep()
    assert_same_training(
        language_model_steps(static_model, OPTIMIZERS["SGD"]()),
        language_model_steps(plain, OPTIMIZERS["SGD"]()),
    )
    assert static_model.schedule_manager.schedules


@pytest.mark.gpu
@pytest.mark.parametrize("model_class, shape", [(MLP, (20,)), (LeNet5, (1, 28, 28))])
def test_classifiers_on_a_gpu_train_to_define_by_runs_bits(model_class, shape):
    # The replay, the backward on arrays and its write checks are xp-generic; on a GPU too
    # (deterministic cuDNN, so that define-by-run repeats its own bits).
    device = get_test_device("@cupy:0")
    cupy = device.xp

    def steps(model):
        model.to_device(device)
        rng = numpy.random.default_rng(0)
        xs = cupy.asarray(rng.standard_normal((4, 8, *shape)).astype(numpy.float32))
        ts = cupy.asarray(rng.integers(0, 10, (4, 8)).astype(numpy.int32))
        cupy.random.seed(7)
        optimizer = optimizers.MomentumSGD(lr=0.05).setup(model)
        with using_config("cudnn_deterministic", True):
            for i in range(20):
                loss = F.softmax_cross_entropy(model(xs[i % 4]), ts[i % 4])
                model.cleargrads()
                loss.backward()
                optimizer.update()
                params = sorted(model.namedparams())
                yield cupy.asnumpy(loss.array), [cupy.asnumpy(p.array) for _, p in params]

    static_model, plain = twins(model_class)
    assert_same_training(steps(static_model), steps(plain))
