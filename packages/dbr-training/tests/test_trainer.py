import pathlib
import runpy

import numpy as np
import pytest

from dbr.core import Chain, report
from dbr.core.serializers import DeserializationError, load_npz, save_npz
from dbr.core.testing import bad_input_test
from dbr.datasets import SerialIterator, TupleDataset
from dbr.training import optimizers
from dbr.training import trainer as trainer_module
from dbr.training.extension import PRIORITY_EDITOR, PRIORITY_WRITER, Extension, make_extension
from dbr.training.extensions import LogReport, snapshot
from dbr.training.trainer import Trainer
from dbr.training.updaters.standard_updater import StandardUpdater

# The tests' minimal optimizer, run by path: no test folder is on sys.path (importlib mode).
_FIXTURES = pathlib.Path(__file__).parent / "fixtures"
PlainSGD = runpy.run_path(str(_FIXTURES / "plain_sgd.py"))["PlainSGD"]
_LinearModel = runpy.run_path(str(_FIXTURES / "linear_model.py"))["Linear"]


class Linear(_LinearModel):
    """y = x @ W with a (3, 1) float32 weight; loss = mean squared error, reported as 'loss'."""

    dtype = np.float32

    def forward(self, x, t):
        loss = super().forward(x, t)
        report({"loss": loss}, self)
        return loss


class Net(Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.inner = Linear()

    def forward(self, x, t):
        return self.inner(x, t)


def make_data(n=10):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, 3)).astype(np.float32)
    t = rng.standard_normal((n, 1)).astype(np.float32)
    return TupleDataset(x, t)


def make_trainer(stop=(7, "iteration"), batch_size=3, out="result", model=None, shuffle=True):
    model = Net() if model is None else model
    it = SerialIterator(make_data(), batch_size, shuffle=shuffle)
    updater = StandardUpdater(it, PlainSGD().setup(model))
    return Trainer(updater, stop, out=out)


def recorder(log, label):
    def ext(trainer):
        log.append((label, trainer.updater.iteration))

    return ext


def test_run_stops_and_calls_extensions_each_iteration(tmp_path):
    trainer = make_trainer(out=str(tmp_path / "out"))
    log = []
    trainer.extend(recorder(log, "a"), name="a")
    trainer.run()
    assert log == [("a", i) for i in range(1, 8)]
    assert trainer.updater.iteration == 7
    assert (tmp_path / "out").is_dir()


def test_epoch_stop_trigger_with_uneven_batches(tmp_path):
    trainer = make_trainer(stop=(2, "epoch"), out=str(tmp_path))
    trainer.run()
    # 10 examples, batches of 3: epoch 2 is reached at iteration ceil(20 / 3) = 7.
    assert trainer.updater.iteration == 7
    assert trainer.updater.epoch == 2


def test_extension_order_by_priority_is_stable(tmp_path):
    trainer = make_trainer(stop=(2, "iteration"), out=str(tmp_path))
    log = []
    trainer.extend(recorder(log, "r1"), name="r1")
    trainer.extend(recorder(log, "w"), name="w", priority=PRIORITY_WRITER)
    trainer.extend(recorder(log, "r2"), name="r2")
    trainer.extend(recorder(log, "e"), name="e", priority=PRIORITY_EDITOR)
    trainer.extend(recorder(log, "w2"), name="w2", priority=PRIORITY_WRITER)
    trainer.run()
    order = ["w", "w2", "e", "r1", "r2"]
    assert log == [(n, 1) for n in order] + [(n, 2) for n in order]


def test_extension_defaults_read_from_attributes(tmp_path):
    trainer = make_trainer(stop=(9, "iteration"), out=str(tmp_path))
    log = []

    @make_extension(trigger=(4, "iteration"), priority=PRIORITY_WRITER)
    def every4(trainer):
        log.append(("every4", trainer.updater.iteration))

    trainer.extend(every4)
    trainer.extend(recorder(log, "every3"), name="every3", trigger=(3, "iteration"))
    trainer.run()
    assert log == [
        ("every3", 3), ("every4", 4), ("every3", 6), ("every4", 8), ("every3", 9),
    ]  # fmt: skip


def test_names_made_unique():
    trainer = make_trainer()

    class Ext(Extension):
        def __call__(self, trainer):
            pass

    exts = [Ext(), Ext(), Ext()]
    for ext in exts:
        trainer.extend(ext)

    def fn(trainer):
        pass

    trainer.extend(fn)
    trainer.extend(lambda t: None, name="custom")
    assert [e.name for e in exts] == ["Ext", "Ext_1", "Ext_2"]
    assert trainer.get_extension("Ext_1") is exts[1]
    assert trainer.get_extension("fn") is fn
    assert trainer.get_extension("custom").name == "custom"
    with pytest.raises(ValueError, match="extension 'nope' not found"):
        trainer.get_extension("nope")


def _extend_new_trainer(*args, **kwargs):
    """``Trainer.extend`` on a trainer made for the call (rows build nothing at import)."""
    return make_trainer().extend(*args, **kwargs)


def _noop(trainer):
    pass


test_extend_bad_input = bad_input_test(
    [
        ((_noop,), {"name": "training"}, ValueError, "'training' is reserved"),
        ((3,), {"name": "x"}, TypeError, "expected a callable extension"),
        (
            (_noop,),
            {"invoke_before_training": True},
            ValueError,
            "invoke_before_training was removed",
        ),
        ((_noop,), {"colour": 1}, TypeError, "unexpected keyword argument(s) colour"),
        (
            (_noop,),
            {"trigger": (1, "epochs")},
            ValueError,
            "unit must be 'epoch' or 'iteration', got 'epochs'",
        ),
    ],
    function=_extend_new_trainer,
)


def test_observation_contents(tmp_path):
    trainer = make_trainer(stop=(3, "iteration"), out=str(tmp_path), shuffle=False)
    model = trainer.updater.get_optimizer("main").target
    data = make_data()
    W = model.inner.W.array.copy()
    seen = []

    def ext(trainer):
        report({"extra": 1.5})
        seen.append(dict(trainer.observation))

    trainer.extend(ext)
    trainer.run()
    assert [sorted(obs) for obs in seen] == [["extra", "main/inner/loss"]] * 3
    # The first loss, computed here from the initial weight on the first batch.
    x = np.stack([data[i][0] for i in range(3)])
    t = np.stack([data[i][1] for i in range(3)])
    expected = np.sum((x @ W - t) ** 2) / 3
    np.testing.assert_allclose(float(seen[0]["main/inner/loss"].array), expected, rtol=1e-6)


def test_observers_named_after_optimizers():
    main, other = Net(), Linear()
    it = SerialIterator(make_data(), 2)
    updater = StandardUpdater(it, {"main": PlainSGD().setup(main), "gen": PlainSGD().setup(other)})
    trainer = Trainer(updater)
    observation = {}
    with trainer.reporter.scope(observation):
        report({"a": 1}, main)
        report({"b": 2}, main.inner)
        report({"c": 3}, other)
    assert observation == {"main/a": 1, "main/inner/b": 2, "gen/c": 3}


def test_call_before_training_and_initialize(tmp_path):
    trainer = make_trainer(stop=(2, "iteration"), out=str(tmp_path))
    log = []

    @make_extension(initializer=lambda tr: log.append(("init", tr.updater.iteration)))
    def ext(trainer):
        log.append(("call", trainer.updater.iteration))

    trainer.extend(ext, call_before_training=True)
    trainer.run()
    assert log == [("init", 0), ("call", 0), ("call", 1), ("call", 2)]


def test_initialize_skipped_for_finished_trigger(tmp_path):
    trainer = make_trainer(stop=(1, "iteration"), out=str(tmp_path))
    log = []

    class Done:
        finished = True

        def __call__(self, trainer):
            return False

    @make_extension(initializer=lambda tr: log.append("init"))
    def ext(trainer):
        pass

    trainer.extend(ext, trigger=Done())
    trainer.run()
    assert log == []


def test_run_twice_is_an_error(tmp_path):
    trainer = make_trainer(stop=(1, "iteration"), out=str(tmp_path))
    trainer.run()
    with pytest.raises(RuntimeError, match="cannot run its training loop twice"):
        trainer.run()


def test_elapsed_time(tmp_path, monkeypatch):
    clock = iter(float(i) for i in range(100, 200))
    monkeypatch.setattr(trainer_module, "_get_time", lambda: next(clock))
    trainer = make_trainer(stop=(3, "iteration"), out=str(tmp_path))
    with pytest.raises(RuntimeError, match="training has not been started"):
        _ = trainer.elapsed_time
    seen = []
    trainer.extend(lambda tr: seen.append(tr.elapsed_time), name="t")
    trainer.run()
    # start at 100; each extension call reads the clock once (101, 102, 103),
    # the final reading after the loop is 104.
    assert seen == [1.0, 2.0, 3.0]
    assert trainer.elapsed_time == 4.0
    assert trainer.elapsed_time == 4.0


class Boom(Exception):
    pass


def test_on_error_and_finalize_on_exception(tmp_path, capsys):
    trainer = make_trainer(stop=(5, "iteration"), out=str(tmp_path))
    log = []

    class Watcher(Extension):
        def __call__(self, trainer):
            log.append("call")

        def on_error(self, trainer, exc, tb):
            log.append(("on_error", type(exc).__name__, tb is not None))

        def finalize(self):
            log.append("finalize")

    class Failing(Extension):
        priority = PRIORITY_WRITER

        def __call__(self, trainer):
            if trainer.updater.iteration == 2:
                raise Boom("at iteration 2")

        def on_error(self, trainer, exc, tb):
            raise RuntimeError("handler fails too")

    finalized = []
    updater_finalize = trainer.updater.finalize

    def finalize_updater():
        finalized.append("updater")
        updater_finalize()

    trainer.updater.finalize = finalize_updater
    trainer.extend(Failing())
    trainer.extend(Watcher())
    with pytest.raises(Boom, match="at iteration 2"):
        trainer.run()
    assert log == ["call", ("on_error", "Boom", True), "finalize"]
    assert finalized == ["updater"]
    err = capsys.readouterr().err
    assert "Exception in main training loop: at iteration 2" in err
    assert "Traceback (most recent call last):" in err
    assert "in __call__" in err
    assert "Exception in error handler: handler fails too" in err


def test_no_message_when_disabled(tmp_path, capsys):
    trainer = make_trainer(stop=(5, "iteration"), out=str(tmp_path))

    def fail(trainer):
        raise Boom("quiet")

    trainer.extend(fail)
    with pytest.raises(Boom):
        trainer.run(show_loop_exception_msg=False)
    assert capsys.readouterr().err == ""


def test_finalize_errors_do_not_stop_other_finalizers(tmp_path):
    trainer = make_trainer(stop=(1, "iteration"), out=str(tmp_path))
    log = []
    trainer.extend(make_extension(finalizer=lambda: log.append("first"))(lambda t: None), name="a")

    def bad():
        raise Boom("finalizer failed")

    trainer.extend(make_extension(finalizer=bad)(lambda t: None), name="b")
    trainer.extend(make_extension(finalizer=lambda: log.append("third"))(lambda t: None), name="c")
    with pytest.raises(Boom, match="finalizer failed"):
        trainer.run()
    assert log == ["first", "third"]


class Counter(Extension):
    """Counts its calls and saves the count."""

    def __init__(self):
        self.count = 0

    def __call__(self, trainer):
        self.count += 1

    def serialize(self, serializer):
        self.count = serializer("count", self.count)


def test_serialize_round_trip(tmp_path, monkeypatch):
    clock = iter(float(i) for i in range(1000))
    monkeypatch.setattr(trainer_module, "_get_time", lambda: next(clock))

    trainer = make_trainer(stop=(5, "iteration"), out=str(tmp_path))
    trainer.extend(Counter(), trigger=(2, "iteration"))
    trainer.run()
    path = tmp_path / "snapshot.npz"
    save_npz(str(path), trainer)

    resumed = make_trainer(stop=(5, "iteration"), out=str(tmp_path))
    resumed.extend(Counter(), trigger=(2, "iteration"))
    load_npz(str(path), resumed)
    src, dst = trainer.updater, resumed.updater
    assert dst.iteration == 5
    assert dst.epoch == src.epoch == 1  # 15 examples drawn from 10
    assert dst.epoch_detail == pytest.approx(1.5)
    src_it, dst_it = src.get_iterator("main"), dst.get_iterator("main")
    assert dst_it.current_position == src_it.current_position == 5
    np.testing.assert_array_equal(
        dst.get_optimizer("main").target.inner.W.array,
        src.get_optimizer("main").target.inner.W.array,
    )
    assert dst.get_optimizer("main").t == 5
    assert resumed.get_extension("Counter").count == 2
    # the next batch (examples 5-7 of the saved epoch order) is the same
    expected, got = next(src_it), next(dst_it)
    got_x, expected_x = np.stack([e[0] for e in got]), np.stack([e[0] for e in expected])
    np.testing.assert_array_equal(got_x, expected_x)
    with np.load(path) as npz:
        # started at clock 0 (first call), ended at the reading after the loop
        assert float(npz["_snapshot_elapsed_time"]) == trainer.elapsed_time
        assert "updater/iteration" in npz and "updater/model:main/inner/W" in npz
        assert "extension_triggers/Counter/previous_iteration" in npz


def test_resumed_elapsed_time_continues(tmp_path, monkeypatch):
    clock = iter(float(i) for i in range(0, 1000, 10))
    monkeypatch.setattr(trainer_module, "_get_time", lambda: next(clock))
    trainer = make_trainer(stop=(2, "iteration"), out=str(tmp_path))
    trainer.run()
    first = trainer.elapsed_time
    path = tmp_path / "s.npz"
    save_npz(str(path), trainer)
    resumed = make_trainer(stop=(4, "iteration"), out=str(tmp_path))
    load_npz(str(path), resumed)
    seen = []
    resumed.extend(lambda tr: seen.append(tr.elapsed_time), name="t")
    resumed.run()
    assert first == 10.0
    assert seen == [first + 10.0, first + 20.0]
    assert resumed.updater.iteration == 4


def _trainer_for_new_updater(stop_trigger):
    """``Trainer`` around the updater of a trainer made for the call."""
    return Trainer(make_trainer().updater, stop_trigger)


test_trainer_bad_input = bad_input_test(
    [
        (Trainer, (object(),), {}, TypeError, "updater must be an Updater"),
        (
            ((1, "epochs"),),
            ValueError,
            "unit must be 'epoch' or 'iteration', got 'epochs'",
        ),
        ((5,), TypeError, "get_trigger: expected None"),
    ],
    function=_trainer_for_new_updater,
)


# -- resuming into a trainer with other extensions -------------------------------------


def make_adam_trainer(out, stop=(8, "iteration")):
    model = Net()
    it = SerialIterator(make_data(), 3, shuffle=True)
    updater = StandardUpdater(it, optimizers.Adam(alpha=0.05).setup(model))
    return Trainer(updater, stop, out=str(out))


def saved_with_snapshot_and_log_report(tmp_path):
    trainer = make_adam_trainer(tmp_path / "first", stop=(5, "iteration"))
    trainer.extend(LogReport(trigger=(2, "iteration")))
    trainer.extend(snapshot(filename="snap"), trigger=(5, "iteration"))
    trainer.run()
    return trainer, tmp_path / "first" / "snap"


def assert_resumed_state(resumed, trainer):
    src, dst = trainer.updater, resumed.updater
    assert dst.iteration == 5
    src_opt, dst_opt = src.get_optimizer("main"), dst.get_optimizer("main")
    assert dst_opt.t == src_opt.t == 5
    src_W, dst_W = src_opt.target.inner.W, dst_opt.target.inner.W
    np.testing.assert_array_equal(dst_W.array, src_W.array)
    for key in ("m", "v"):
        np.testing.assert_array_equal(dst_W.update_rule.state[key], src_W.update_rule.state[key])
    src_it, dst_it = src.get_iterator("main"), dst.get_iterator("main")
    assert (dst_it.epoch, dst_it.current_position) == (src_it.epoch, src_it.current_position)
    np.testing.assert_array_equal(dst_it._state.order, src_it._state.order)
    assert resumed.get_extension("LogReport").log == trainer.get_extension("LogReport").log


def test_resume_without_the_snapshot_extension_skips_its_state_with_one_warning(tmp_path):
    trainer, path = saved_with_snapshot_and_log_report(tmp_path)
    resumed = make_adam_trainer(tmp_path / "second")
    resumed.extend(LogReport(trigger=(2, "iteration")))
    with pytest.warns(UserWarning) as record:
        load_npz(str(path), resumed)
    assert len(record) == 1
    message = str(record[0].message)
    assert "'_Snapshot'" in message
    assert "'extension_triggers/_Snapshot/previous_iteration'" in message
    assert "'extension_triggers/_Snapshot/previous_epoch_detail'" in message
    assert "LogReport" not in message
    assert_resumed_state(resumed, trainer)
    resumed.run()
    assert resumed.updater.iteration == 8
    assert [line["iteration"] for line in resumed.get_extension("LogReport").log] == [2, 4, 6, 8]


def test_resume_with_an_extra_extension_starts_it_fresh(tmp_path):
    trainer, path = saved_with_snapshot_and_log_report(tmp_path)
    resumed = make_adam_trainer(tmp_path / "second")
    resumed.extend(LogReport(trigger=(2, "iteration")))
    resumed.extend(snapshot(filename="snap"), trigger=(5, "iteration"))
    counter = Counter()
    resumed.extend(counter, trigger=(2, "iteration"))
    load_npz(str(path), resumed)  # no warning: warnings are errors here
    assert_resumed_state(resumed, trainer)
    assert counter.count == 0
    resumed.run()
    # Its fresh trigger counts from the resumed iteration: it fires at 6 and 8.
    assert counter.count == 2


def rewrite_npz(path, drop=(), add=None):
    with np.load(path) as npz:
        arrays = {key: npz[key] for key in npz.files if key not in drop}
    arrays.update(add or {})
    with open(path, "wb") as f:  # a path without '.npz' would get the suffix appended
        np.savez(f, **arrays)


@pytest.mark.parametrize(
    ("drop", "add", "words"),
    [
        (("updater/model:main/inner/W",), None, ["missing", "updater/model:main/inner/W"]),
        (("updater/optimizer:main/inner/W/m",), None, ["missing", "optimizer:main/inner/W/m"]),
        ((), {"updater/model:main/inner/b": np.zeros(1)}, ["not expected", "inner/b"]),
        ((), {"updater/optimizer:main/extra": np.zeros(1)}, ["not expected", "main/extra"]),
        ((), {"updater/iterator:main/extra": np.zeros(1)}, ["not expected", "main/extra"]),
    ],
    ids=["missing-model", "missing-optimizer", "extra-model", "extra-optimizer", "extra-iterator"],
)
def test_resume_stays_strict_for_the_updater_keys(tmp_path, drop, add, words):
    trainer, path = saved_with_snapshot_and_log_report(tmp_path)
    rewrite_npz(path, drop, add)
    resumed = make_adam_trainer(tmp_path / "second")
    resumed.extend(LogReport(trigger=(2, "iteration")))
    resumed.extend(snapshot(filename="snap"), trigger=(5, "iteration"))
    W = resumed.updater.get_optimizer("main").target.inner.W.array.copy()
    with pytest.raises(DeserializationError) as info:
        load_npz(str(path), resumed)
    for word in words:
        assert word in str(info.value)
    assert resumed.updater.iteration == 0
    np.testing.assert_array_equal(resumed.updater.get_optimizer("main").target.inner.W.array, W)


def test_resume_with_a_mismatched_model_raises(tmp_path):
    _, path = saved_with_snapshot_and_log_report(tmp_path)
    resumed = make_adam_trainer(tmp_path / "second")
    resumed.updater.get_optimizer("main").target.inner.W.array = np.zeros((4, 1), np.float32)
    resumed.extend(LogReport(trigger=(2, "iteration")))
    resumed.extend(snapshot(filename="snap"), trigger=(5, "iteration"))
    with pytest.raises(DeserializationError, match="updater/model:main/inner/W"):
        load_npz(str(path), resumed)
