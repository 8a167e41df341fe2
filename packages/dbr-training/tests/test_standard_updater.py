import pathlib
import runpy

import numpy as np
import pytest

from dbr.core import backend, ops
from dbr.core.serializers import load_npz, save_npz
from dbr.datasets import (
    DictDataset,
    Iterator,
    SerialIterator,
    TupleDataset,
    concat_examples,
    converter,
)
from dbr.training.extensions import LogReport
from dbr.training.optimizers.sgd import SGD
from dbr.training.trainer import Trainer
from dbr.training.updaters.standard_updater import StandardUpdater

# The tests' minimal optimizer, run by path: no test folder is on sys.path (importlib mode).
_FIXTURES = pathlib.Path(__file__).parent / "fixtures"
PlainSGD = runpy.run_path(str(_FIXTURES / "plain_sgd.py"))["PlainSGD"]
_LinearModel = runpy.run_path(str(_FIXTURES / "linear_model.py"))["Linear"]


class Linear(_LinearModel):
    """The float32 regression, recording the devices it is moved to."""

    dtype = np.float32

    def __init__(self):
        super().__init__()
        self.moved_to = []

    def to_device(self, device):
        self.moved_to.append(device)
        return super().to_device(device)


class RecordingOptimizer(PlainSGD):
    """Records the arguments of every update; a plain SGD step when given a loss function."""

    def __init__(self, lr=0.1):
        super().__init__(lr)
        self.calls = []
        self.new_epoch_calls = []
        self.loss_scales = []

    def update(self, lossfun=None, *args, **kwds):
        self.calls.append((lossfun, args, kwds))
        super().update(lossfun, *args, **kwds)

    def new_epoch(self, auto=False):
        self.new_epoch_calls.append(auto)
        super().new_epoch(auto)

    def set_loss_scale(self, loss_scale):
        self.loss_scales.append(loss_scale)


def data(n=10, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3)).astype(np.float32)
    t = rng.standard_normal((n, 1)).astype(np.float32)
    return x, t


def test_tuple_batch_passed_as_positional_args():
    x, t = data()
    model = Linear()
    opt = RecordingOptimizer().setup(model)
    updater = StandardUpdater(SerialIterator(TupleDataset(x, t), 4, shuffle=False), opt)
    W0 = model.W.array.copy()
    updater.update()
    lossfun, args, kwds = opt.calls[0]
    assert lossfun is model and kwds == {}
    np.testing.assert_array_equal(args[0], x[:4])
    np.testing.assert_array_equal(args[1], t[:4])
    # one SGD step on the mean squared error, computed here
    grad = 2 * x[:4].T @ (x[:4] @ W0 - t[:4]) / 4
    np.testing.assert_allclose(model.W.array, W0 - 0.1 * grad, rtol=1e-5)
    assert updater.iteration == 1


def test_dict_batch_passed_as_keyword_args():
    x, t = data()
    model = Linear()
    opt = RecordingOptimizer().setup(model)
    it = SerialIterator(DictDataset(x=x, t=t), 3, shuffle=False)
    StandardUpdater(it, opt).update()
    _, args, kwds = opt.calls[0]
    assert args == () and sorted(kwds) == ["t", "x"]
    np.testing.assert_array_equal(kwds["x"], x[:3])
    np.testing.assert_array_equal(kwds["t"], t[:3])


def test_array_batch_passed_as_one_arg():
    x, _ = data()
    model = Linear()
    opt = RecordingOptimizer().setup(model)
    seen = []

    def loss_func(batch):
        seen.append(batch)
        return ops.sum(ops.matmul(batch, model.W))

    updater = StandardUpdater(SerialIterator(x, 5, shuffle=False), opt, loss_func=loss_func)
    updater.update()
    assert opt.calls[0][0] is loss_func
    np.testing.assert_array_equal(seen[0], x[:5])
    np.testing.assert_allclose(
        model.W.array, np.array([[0.5], [-1.0], [2.0]]) - 0.1 * x[:5].sum(0)[:, None], rtol=1e-5
    )


def test_converter_receives_input_device():
    x, t = data()
    received = []

    @converter()
    def new_style(batch, device):
        received.append(device)
        return concat_examples(batch, device)

    model = Linear()
    updater = StandardUpdater(
        SerialIterator(TupleDataset(x, t), 2),
        RecordingOptimizer().setup(model),
        converter=new_style,
        device="@numpy",
    )
    updater.update()
    assert received == [backend.cpu]
    assert model.moved_to == [backend.cpu]
    assert updater.device == backend.cpu
    assert updater.input_device == backend.cpu


def test_old_style_converter_and_default_device():
    x, t = data()
    received = []

    def old_style(batch, device=None):
        received.append(device)
        return concat_examples(batch)

    model = Linear()
    updater = StandardUpdater(
        SerialIterator(TupleDataset(x, t), 2), RecordingOptimizer().setup(model), old_style
    )
    updater.update()
    assert model.moved_to == []
    assert updater.device is None and updater.input_device is None
    assert received == [None]
    updater = StandardUpdater(
        SerialIterator(TupleDataset(x, t), 2),
        RecordingOptimizer().setup(Linear()),
        old_style,
        input_device="@numpy",
    )
    updater.update()
    assert received == [None, -1]
    assert updater.device is None


def test_device_moves_every_optimizer_target():
    x, t = data()
    a, b = Linear(), Linear()
    StandardUpdater(
        SerialIterator(TupleDataset(x, t), 2),
        {"main": RecordingOptimizer().setup(a), "other": RecordingOptimizer().setup(b)},
        device="@numpy",
    )
    assert a.moved_to == [backend.cpu] and b.moved_to == [backend.cpu]


def test_auto_new_epoch():
    x, t = data()
    opt = RecordingOptimizer().setup(Linear())
    updater = StandardUpdater(SerialIterator(TupleDataset(x, t), 4), opt)
    assert opt.use_auto_new_epoch is True
    epochs = []
    for _ in range(8):
        updater.update()
        epochs.append(opt.epoch)
    # 10 examples, batches of 4: epochs end at iterations 3 (12), 5 (20), 8 (32)
    assert epochs == [0, 0, 1, 1, 2, 2, 2, 3]
    assert set(opt.new_epoch_calls) == {True}
    assert updater.epoch == 3 and updater.is_new_epoch


def test_auto_new_epoch_off():
    x, t = data()
    opt = RecordingOptimizer().setup(Linear())
    updater = StandardUpdater(SerialIterator(TupleDataset(x, t), 5), opt, auto_new_epoch=False)
    for _ in range(4):
        updater.update()
    assert opt.use_auto_new_epoch is False
    assert opt.new_epoch_calls == []


def test_loss_scale_given_to_every_optimizer():
    x, t = data()
    a, b = RecordingOptimizer().setup(Linear()), RecordingOptimizer().setup(Linear())
    StandardUpdater(SerialIterator(TupleDataset(x, t), 2), {"main": a, "b": b}, loss_scale=128.0)
    assert a.loss_scales == [128.0] and b.loss_scales == [128.0]


def test_loss_scale_with_sgd_gives_unscaled_update():
    x, t = data()
    scaled, plain = Linear(), Linear()
    for model, scale in ((scaled, 1024.0), (plain, None)):
        opt = SGD(lr=0.1).setup(model)
        it = SerialIterator(TupleDataset(x, t), 4, shuffle=False)
        updater = StandardUpdater(it, opt, loss_scale=scale)
        updater.update()
        updater.update()
    np.testing.assert_allclose(scaled.W.array, plain.W.array, rtol=1e-6)
    assert not np.array_equal(plain.W.array, Linear().W.array)


def test_epoch_properties_follow_main_iterator():
    x, t = data()
    main = SerialIterator(TupleDataset(x, t), 3)
    other = SerialIterator(TupleDataset(x, t), 7)
    updater = StandardUpdater({"main": main, "aux": other}, RecordingOptimizer().setup(Linear()))
    assert updater.previous_epoch_detail is None
    for _ in range(4):
        updater.update()
    assert updater.epoch == 1
    assert updater.epoch_detail == pytest.approx(1.2)
    assert updater.previous_epoch_detail == pytest.approx(0.9)
    assert updater.get_iterator("aux") is other
    assert updater.get_iterator("main") is main


def test_getters_and_finalize():
    x, t = data()
    finalized = []

    class It(SerialIterator):
        def finalize(self):
            finalized.append(self)

    main, aux = It(TupleDataset(x, t), 2), It(TupleDataset(x, t), 2)
    a, b = RecordingOptimizer().setup(Linear()), RecordingOptimizer().setup(Linear())
    updater = StandardUpdater({"main": main, "aux": aux}, {"main": a, "b": b})
    assert updater.get_optimizer("main") is a and updater.get_optimizer("b") is b
    all_optimizers = updater.get_all_optimizers()
    assert all_optimizers == {"main": a, "b": b}
    all_optimizers.clear()
    assert updater.get_all_optimizers() == {"main": a, "b": b}
    updater.finalize()
    assert finalized == [main, aux]


def test_optimizers_need_no_main_entry_unless_update_core_uses_it():
    x, t = data()
    it = SerialIterator(TupleDataset(x, t), 2)
    opt = RecordingOptimizer().setup(Linear())
    updater = StandardUpdater(it, {"gen": opt})
    assert updater.get_optimizer("gen") is opt
    assert updater.get_all_optimizers() == {"gen": opt}
    with pytest.raises(
        KeyError, match=r"optimizer named 'main', but the optimizers are named \['gen'\]"
    ):
        updater.update()
    assert updater.iteration == 0


def test_bad_arguments():
    x, t = data()
    it = SerialIterator(TupleDataset(x, t), 2)
    opt = RecordingOptimizer().setup(Linear())
    with pytest.raises(ValueError, match="a dict of iterators must have a 'main' entry"):
        StandardUpdater({"train": it}, opt)
    with pytest.raises(TypeError, match="iterator 'main' must be an iterator object, got list"):
        StandardUpdater([1, 2], opt)
    with pytest.raises(TypeError, match="optimizer 'main' must be an optimizer object"):
        StandardUpdater(it, object())
    with pytest.raises(ValueError, match="optimizer 'main' has no target; call optimizer.setup"):
        StandardUpdater(it, RecordingOptimizer())
    with pytest.raises(TypeError, match="converter must be callable"):
        StandardUpdater(it, opt, converter=3)
    with pytest.raises(TypeError, match="loss_func must be callable or None"):
        StandardUpdater(it, opt, loss_func="loss")
    with pytest.raises(ValueError, match="loss_scale must be a positive number, got -1"):
        StandardUpdater(it, opt, loss_scale=-1)
    with pytest.raises(ValueError, match="get_device: unknown device specifier '@tpu'"):
        StandardUpdater(it, opt, device="@tpu")
    assert opt.use_auto_new_epoch is False  # nothing was changed by the failed constructions


def test_serialize_ignores_what_a_saving_serializer_returns():
    # Chainer's Serializer contract lets a saving serializer return anything
    # (None here); the updater keeps its iteration.
    from dbr.core.serializers import Serializer

    class RecordingSerializer(Serializer):
        def __init__(self, calls, path=""):
            self.calls, self.path = calls, path

        def __getitem__(self, key):
            return RecordingSerializer(self.calls, self.path + key + "/")

        def __call__(self, key, value):
            self.calls.append(self.path + key)

    x, t = data()
    updater = StandardUpdater(
        SerialIterator(TupleDataset(x, t), 3), RecordingOptimizer().setup(Linear())
    )
    updater.update()
    calls = []
    updater.serialize(RecordingSerializer(calls))
    assert updater.iteration == 1
    assert "iteration" in calls and "model:main/W" in calls


def test_serialize_round_trip(tmp_path):
    x, t = data()
    model = Linear()
    opt = RecordingOptimizer().setup(model)
    it = SerialIterator(TupleDataset(x, t), 3)
    updater = StandardUpdater(it, opt)
    for _ in range(5):
        updater.update()
    path = str(tmp_path / "updater.npz")
    save_npz(path, updater)
    with np.load(path) as npz:
        keys = set(npz.files)
    assert {
        "iteration",
        "iterator:main/current_position",
        "iterator:main/epoch",
        "optimizer:main/t",
        "model:main/W",
    } <= keys

    model2 = Linear()
    opt2 = RecordingOptimizer().setup(model2)
    it2 = SerialIterator(TupleDataset(x, t), 3)
    updater2 = StandardUpdater(it2, opt2)
    load_npz(path, updater2)
    assert updater2.iteration == 5
    assert updater2.epoch == updater.epoch == 1
    assert updater2.epoch_detail == pytest.approx(1.5)
    assert it2.current_position == it.current_position == 5
    assert opt2.t == 5 and opt2.epoch == 1
    np.testing.assert_array_equal(model2.W.array, model.W.array)
    # both continue identically within the saved epoch order
    updater.update()
    updater2.update()
    np.testing.assert_array_equal(model2.W.array, model.W.array)


class UserIterator(Iterator):
    """A user-written iterator: next, epoch, epoch_detail, is_new_epoch, nothing else."""

    def __init__(self, dataset, batch_size, with_epoch_detail=True):
        self.dataset = dataset
        self.batch_size = batch_size
        self.position = 0
        self.epoch = 0
        self.is_new_epoch = False
        self.with_epoch_detail = with_epoch_detail

    def __next__(self):
        batch = self.dataset[self.position : self.position + self.batch_size]
        self.position += self.batch_size
        self.is_new_epoch = self.position >= len(self.dataset)
        if self.is_new_epoch:
            self.position = 0
            self.epoch += 1
        return batch

    def __getattr__(self, name):
        if name == "epoch_detail" and self.with_epoch_detail:
            return self.epoch + self.position / len(self.dataset)
        raise AttributeError(f"'UserIterator' object has no attribute {name!r}")


def train_with_user_iterator(tmp_path, with_epoch_detail, stop, log_trigger):
    model = Linear()
    updater = StandardUpdater(
        UserIterator(TupleDataset(*data(12)), 4, with_epoch_detail), SGD(lr=0.1).setup(model)
    )
    trainer = Trainer(updater, stop, out=str(tmp_path))
    log_report = LogReport(trigger=log_trigger)
    trainer.extend(log_report)
    trainer.run(show_loop_exception_msg=False)
    return [(entry["epoch"], entry["iteration"]) for entry in log_report.log]


@pytest.mark.parametrize("stop", [(2, "epoch"), (6, "iteration")])
def test_an_iterator_without_previous_epoch_detail_trains_with_epoch_triggers(tmp_path, stop):
    # Chainer 7.8.1 with the same iterator logs [(1, 3), (2, 6)].
    log = train_with_user_iterator(tmp_path, True, stop, (1, "epoch"))
    assert log == [(1, 3), (2, 6)]


def test_an_iterator_without_epoch_detail_trains_with_iteration_triggers(tmp_path):
    log = train_with_user_iterator(tmp_path, False, (6, "iteration"), (2, "iteration"))
    assert log == [(0, 2), (1, 4), (2, 6)]


def test_an_epoch_trigger_needs_epoch_detail(tmp_path):
    with pytest.raises(AttributeError, match="IntervalTrigger: an 'epoch' trigger needs"):
        train_with_user_iterator(tmp_path, False, (2, "epoch"), (1, "iteration"))
