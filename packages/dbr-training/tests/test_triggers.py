import numpy as np
import pytest

from dbr.core.serializers import DictionarySerializer, NpzDeserializer
from dbr.core.testing import bad_input_test
from dbr.training.triggers import (
    BestValueTrigger,
    EarlyStoppingTrigger,
    IntervalTrigger,
    ManualScheduleTrigger,
    MaxValueTrigger,
    MinValueTrigger,
    OnceTrigger,
    TimeTrigger,
    get_trigger,
)


class FakeUpdater:
    """Batches of ``batch_size`` from a dataset of ``n`` examples (no data)."""

    def __init__(self, batch_size=3, n=10):
        self.batch_size = batch_size
        self.n = n
        self.iteration = 0

    @property
    def epoch(self):
        return self.iteration * self.batch_size // self.n

    @property
    def epoch_detail(self):
        return self.iteration * self.batch_size / self.n

    @property
    def previous_epoch_detail(self):
        if self.iteration == 0:
            return None
        return (self.iteration - 1) * self.batch_size / self.n

    def update(self):
        self.iteration += 1


class FakeTrainer:
    def __init__(self, batch_size=3, n=10):
        self.updater = FakeUpdater(batch_size, n)
        self.observation = {}
        self.elapsed_time = 0.0


def firing(trigger, iterations, trainer=None, observations=None):
    """Iterations (1-based) at which ``trigger`` fires, called once per iteration."""
    trainer = FakeTrainer() if trainer is None else trainer
    fired = []
    for i in range(iterations):
        trainer.updater.update()
        if observations is not None:
            trainer.observation = observations[i]
        if trigger(trainer):
            fired.append(trainer.updater.iteration)
    return fired


def roundtrip(src, dst):
    target = {}
    src.serialize(DictionarySerializer(target))
    NpzDeserializer(target).load(dst)
    return target


def epoch_crossings(period_num, period_den, batch_size, n, iterations):
    """Reference: iterations i where floor(epoch_detail / period) changes, in integers.

    epoch_detail = i * batch_size / n and period = period_num / period_den, so
    epoch_detail / period = i * batch_size * period_den / (n * period_num).
    """

    def f(i):
        return i * batch_size * period_den // (n * period_num)

    return [i for i in range(1, iterations + 1) if f(i) != f(i - 1)]


# -- IntervalTrigger ------------------------------------------------------------


def test_interval_iteration():
    assert firing(IntervalTrigger(3, "iteration"), 10) == [3, 6, 9]
    assert firing(IntervalTrigger(1, "iteration"), 4) == [1, 2, 3, 4]


@pytest.mark.parametrize(
    "period, num, den, batch_size, n",
    [(1, 1, 1, 3, 10), (2, 2, 1, 3, 10), (1, 1, 1, 4, 10), (0.5, 1, 2, 3, 10), (1, 1, 1, 7, 5)],
)
def test_interval_epoch_uneven_batches(period, num, den, batch_size, n):
    trainer = FakeTrainer(batch_size, n)
    expected = epoch_crossings(num, den, batch_size, n, 30)
    assert firing(IntervalTrigger(period, "epoch"), 30, trainer) == expected
    assert expected  # the schedule is not empty


def test_interval_epoch_values():
    # 10 examples in batches of 3: epoch 1 is crossed at iteration 4 (1.2), 2 at 7 (2.1), 3 at 10.
    assert firing(IntervalTrigger(1, "epoch"), 10) == [4, 7, 10]


def test_interval_no_fire_before_training():
    trainer = FakeTrainer()
    assert not IntervalTrigger(1, "iteration")(trainer)
    assert not IntervalTrigger(1, "epoch")(trainer)


def test_interval_called_twice_per_iteration_fires_twice():
    trigger = IntervalTrigger(2, "iteration")
    trainer = FakeTrainer()
    calls = []
    for _ in range(4):
        trainer.updater.update()
        calls.append((trigger(trainer), trigger(trainer)))
    assert calls == [(False, False), (True, True), (False, False), (True, True)]


def test_interval_not_called_every_iteration_catches_crossing():
    trigger = IntervalTrigger(1, "epoch")
    trainer = FakeTrainer()
    fired = []
    for i in range(1, 11):
        trainer.updater.update()
        if i in (2, 5, 6, 9, 10) and trigger(trainer):
            fired.append(i)
    # crossings at 4, 7, 10 are seen at the next call: 5, 9, 10
    assert fired == [5, 9, 10]


@pytest.mark.parametrize("unit", ["iteration", "epoch"])
@pytest.mark.parametrize("cut", [1, 3, 4, 7, 11])
def test_interval_resume_fires_as_uninterrupted(unit, cut):
    uninterrupted = firing(IntervalTrigger(2, unit), 20)
    first = IntervalTrigger(2, unit)
    trainer = FakeTrainer()
    before = firing(first, cut, trainer)
    second = IntervalTrigger(2, unit)
    roundtrip(first, second)
    after = firing(second, 20 - cut, trainer)
    assert before + after == uninterrupted


def test_interval_serialize_keys():
    trigger = IntervalTrigger(2, "epoch")
    firing(trigger, 3)
    target = {}
    trigger.serialize(DictionarySerializer(target))
    assert int(target["previous_iteration"]) == 3
    assert float(target["previous_epoch_detail"]) == pytest.approx(0.9)


test_interval_bad_input = bad_input_test(
    [
        (
            (1, "epochs"),
            ValueError,
            "IntervalTrigger: unit must be 'epoch' or 'iteration', got 'epochs'",
        ),
        ((1.5, "iteration"), ValueError, "whole number of iterations, got 1.5"),
    ]
    + [
        ((period, "iteration"), ValueError, "IntervalTrigger: period must be a positive")
        for period in [0, -1, "1", None, True, float("nan")]
    ],
    function=IntervalTrigger,
)


def test_interval_training_length_and_str():
    trigger = IntervalTrigger(5, "epoch")
    assert trigger.get_training_length() == (5, "epoch")
    assert str(trigger) == "IntervalTrigger(5, 'epoch')"


@pytest.mark.parametrize(
    "make, first_call, expected",
    [
        (lambda: IntervalTrigger(2, "iteration"), 3, True),  # crossed at 2
        (lambda: IntervalTrigger(1, "epoch"), 5, True),  # crossed at 4 (1.2)
        (lambda: IntervalTrigger(4, "iteration"), 3, False),
        (lambda: ManualScheduleTrigger(2, "iteration"), 4, True),
        (lambda: ManualScheduleTrigger([1.0], "epoch"), 6, True),
    ],
)
def test_first_call_sees_everything_since_the_start(make, first_call, expected):
    # As in Chainer, the position before the first call is the start of
    # training, so a trigger first called late still reports an earlier crossing.
    trigger, trainer = make(), FakeTrainer()
    for _ in range(first_call):
        trainer.updater.update()
    assert trigger(trainer) is expected


def load_chainer_old_layout(trigger):
    """Load ``trigger`` from an archive with no trigger state (Chainer before v4 saved none)."""
    with pytest.warns(UserWarning, match="Chainer's older layout") as record:
        NpzDeserializer({}).load(trigger)
    return [str(w.message) for w in record]


@pytest.mark.parametrize("unit", ["iteration", "epoch"])
def test_interval_loads_chainer_old_layout(unit):
    trigger = IntervalTrigger(2, unit)
    messages = load_chainer_old_layout(trigger)
    assert any(
        "IntervalTrigger.serialize: the snapshot has no 'previous_iteration'" in m
        for m in messages
    )
    assert trigger._previous_iteration == -1 and trigger._previous_epoch_detail == -1.0
    # resumed at iteration 5 and called every iteration, it fires as an uninterrupted one
    trainer = FakeTrainer()
    trainer.updater.iteration = 5
    assert firing(trigger, 10, trainer) == [
        i for i in firing(IntervalTrigger(2, unit), 15) if i > 5
    ]


def test_a_refused_load_of_a_partial_layout_changes_nothing():
    from dbr.core.serializers import DeserializationError

    trigger = ManualScheduleTrigger([1, 5], "epoch")
    firing(trigger, 3)
    before = (trigger._previous_iteration, trigger._previous_epoch_detail, trigger.finished)
    with pytest.raises(DeserializationError, match="'previous_iteration'"):
        NpzDeserializer({"previous_iteration": np.zeros(2)}).load(trigger)
    assert (trigger._previous_iteration, trigger._previous_epoch_detail, trigger.finished) == (
        before
    )
    assert trigger._finished_unknown is False


def test_manual_loads_chainer_old_layout_and_decides_finished_at_next_call():
    trigger = ManualScheduleTrigger([2, 4], "iteration")
    load_chainer_old_layout(trigger)
    assert trigger.finished is False
    trainer = FakeTrainer()
    trainer.updater.iteration = 6  # past the last point: the next call sets finished
    trainer.updater.update()
    assert trigger(trainer) is False
    assert trigger.finished is True

    early = ManualScheduleTrigger([2, 4], "iteration")
    load_chainer_old_layout(early)
    assert firing(early, 4) == [2, 4]
    assert early.finished is True


def test_manual_old_layout_unknown_finished_not_carried_past_a_call():
    trigger = ManualScheduleTrigger([2, 10], "iteration")
    load_chainer_old_layout(trigger)
    trainer = FakeTrainer()
    firing(trigger, 3, trainer)
    assert trigger.finished is False


def test_once_trigger_loads_chainer_old_layout_as_already_fired():
    trigger = OnceTrigger()
    messages = load_chainer_old_layout(trigger)
    assert any("OnceTrigger.serialize: the snapshot has no '_flag_first'" in m for m in messages)
    assert trigger.finished
    assert firing(trigger, 3) == []
    resumed = OnceTrigger(call_on_resume=True)
    load_chainer_old_layout(resumed)
    assert firing(resumed, 3) == [1]


# -- get_trigger ----------------------------------------------------------------


def test_get_trigger():
    never = get_trigger(None)
    assert not any(firing(never, 5))

    def custom(trainer):
        return True

    assert get_trigger(custom) is custom
    interval = get_trigger((2, "iteration"))
    assert isinstance(interval, IntervalTrigger)
    assert interval.get_training_length() == (2, "iteration")
    with pytest.raises(TypeError, match="get_trigger: expected None, a callable"):
        get_trigger(3)
    with pytest.raises(ValueError, match="got 'minutes'"):
        get_trigger((1, "minutes"))


class UpdaterWithoutPreviousEpochDetail:
    """An updater over a user-written iterator: epoch_detail but no previous_epoch_detail."""

    def __init__(self, batch_size=3, n=10):
        self._positions = FakeUpdater(batch_size, n)

    iteration = property(lambda self: self._positions.iteration)
    epoch = property(lambda self: self._positions.epoch)
    epoch_detail = property(lambda self: self._positions.epoch_detail)

    @property
    def previous_epoch_detail(self):
        raise AttributeError("'UserIterator' object has no attribute 'previous_epoch_detail'")

    def update(self):
        self._positions.update()


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: IntervalTrigger(1, "epoch"), [4, 7, 10]),
        (lambda: IntervalTrigger(0.5, "epoch"), epoch_crossings(1, 2, 3, 10, 10)),
        (lambda: ManualScheduleTrigger([1, 1.5, 2.05], "epoch"), [4, 5, 7]),
    ],
)
def test_epoch_triggers_without_previous_epoch_detail_use_their_last_call(make, expected):
    # Chainer's triggers compare with the epoch_detail of their previous call
    # (0 before the first) and read previous_epoch_detail only after loading a
    # snapshot that lacks it; user-written iterators usually do not have it.
    trainer = FakeTrainer()
    trainer.updater = UpdaterWithoutPreviousEpochDetail()
    assert firing(make(), 10, trainer) == expected


class UpdaterWithNonNumberPreviousEpochDetail(UpdaterWithoutPreviousEpochDetail):
    """An updater stand-in (a mock, say) whose previous_epoch_detail is not a number."""

    previous_epoch_detail = property(lambda self: object())


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: IntervalTrigger(1, "epoch"), [4, 7, 10]),
        (lambda: ManualScheduleTrigger([1, 1.5, 2.05], "epoch"), [4, 5, 7]),
    ],
)
def test_epoch_triggers_ignore_a_previous_epoch_detail_that_is_not_a_number(make, expected):
    trainer = FakeTrainer()
    trainer.updater = UpdaterWithNonNumberPreviousEpochDetail()
    assert firing(make(), 10, trainer) == expected


# -- ManualScheduleTrigger ------------------------------------------------------


def test_manual_iteration_points():
    trigger = ManualScheduleTrigger([2, 5], "iteration")
    fired = []
    finished = []
    trainer = FakeTrainer()
    for _ in range(8):
        trainer.updater.update()
        if trigger(trainer):
            fired.append(trainer.updater.iteration)
        finished.append(trigger.finished)
    assert fired == [2, 5]
    assert finished == [False] * 4 + [True] * 4


def test_manual_single_point_and_epoch_points():
    assert firing(ManualScheduleTrigger(3, "iteration"), 6) == [3]
    # 10 examples, batches of 3: epoch_detail 0.3, 0.6, 0.9, 1.2, 1.5, 1.8, ...
    assert firing(ManualScheduleTrigger([1, 1.5, 2.05], "epoch"), 10) == [4, 5, 7]


@pytest.mark.parametrize("cut", [1, 2, 4, 5, 6])
def test_manual_resume(cut):
    make = lambda: ManualScheduleTrigger([1, 1.5, 2.05], "epoch")  # noqa: E731
    uninterrupted = firing(make(), 10)
    first, trainer = make(), FakeTrainer()
    before = firing(first, cut, trainer)
    second = make()
    roundtrip(first, second)
    assert second.finished == first.finished
    assert before + firing(second, 10 - cut, trainer) == uninterrupted


test_manual_bad_input = bad_input_test(
    [
        (
            ([1], "iter"),
            ValueError,
            "ManualScheduleTrigger: unit must be 'epoch' or 'iteration', got 'iter'",
        ),
        (([], "epoch"), ValueError, "points must be a number or a non-empty list"),
        ((["1"], "epoch"), ValueError, "points must be a number or a non-empty list"),
    ],
    function=ManualScheduleTrigger,
)


# -- Best/Max/MinValueTrigger ---------------------------------------------------

LOSSES = [5.0, 3.0, 4.0, 4.5, 2.0, 2.5, 1.0, 6.0, 0.5, 0.6, 7.0, 8.0]


def value_observations(values, key="main/loss"):
    return [{key: np.float32(v)} for v in values]


def best_reference(values, period, better):
    """Iterations where the mean over each period's window is the best so far."""
    fired, best = [], None
    for end in range(period, len(values) + 1, period):
        mean = sum(values[end - period : end]) / period
        if best is None or better(mean, best):
            best = mean
            fired.append(end)
    return fired


def test_min_value_trigger():
    obs = value_observations(LOSSES)
    trigger = MinValueTrigger("main/loss", trigger=(2, "iteration"))
    expected = best_reference(LOSSES, 2, lambda a, b: a < b)
    assert expected == [2, 6, 10]  # window means 4, 4.25, 2.25, 3.5, 0.55, 7.5
    assert firing(trigger, len(LOSSES), observations=obs) == expected


def test_max_value_trigger():
    obs = value_observations(LOSSES)
    trigger = MaxValueTrigger("main/loss", trigger=(3, "iteration"))
    assert firing(trigger, len(LOSSES), observations=obs) == best_reference(
        LOSSES, 3, lambda a, b: a > b
    )


def test_best_value_trigger_custom_compare():
    obs = value_observations(LOSSES, "acc")
    trigger = BestValueTrigger(
        "acc", lambda best, new: abs(new - 4) < abs(best - 4), (1, "iteration")
    )
    assert firing(trigger, len(LOSSES), observations=obs) == best_reference(
        LOSSES, 1, lambda a, b: abs(a - 4) < abs(b - 4)
    )


@pytest.mark.parametrize("cut", [1, 3, 4, 7])
def test_best_value_resume(cut):
    obs = value_observations(LOSSES)
    make = lambda: MinValueTrigger("main/loss", trigger=(2, "iteration"))  # noqa: E731
    uninterrupted = firing(make(), len(LOSSES), observations=obs)
    first, trainer = make(), FakeTrainer()
    before = firing(first, cut, trainer, obs)
    second = make()
    roundtrip(first, second)
    after = firing(second, len(LOSSES) - cut, trainer, obs[cut:])
    assert before + after == uninterrupted


def test_best_value_missing_key():
    trigger = MinValueTrigger("main/loss", trigger=(1, "iteration"))
    with pytest.raises(KeyError, match="'main/loss' was not reported since the last check"):
        firing(trigger, 1, observations=[{"other": 1.0}])


# -- EarlyStoppingTrigger -------------------------------------------------------


def test_early_stopping_min():
    # checks each iteration; best 5 -> 3 (count 0), 4 (1), 4.5 (2), 2 (0), 2.5 (1), 1 (0),
    # 6 (1), 0.5 (0), 0.6 (1), 7 (2), 8 (3): stops at iteration 12 with patience 3
    obs = value_observations(LOSSES)
    trigger = EarlyStoppingTrigger(check_trigger=(1, "iteration"), patience=3)
    assert firing(trigger, len(LOSSES), observations=obs) == [12]
    assert trigger.best == pytest.approx(0.5)


def test_early_stopping_patience_two_and_alias():
    obs = value_observations(LOSSES)
    trigger = EarlyStoppingTrigger(check_trigger=(1, "iteration"), patients=2)
    assert trigger.patience == 2
    assert firing(trigger, 5, observations=obs) == [4]


def test_early_stopping_auto_max_for_accuracy():
    accs = [0.1, 0.5, 0.4, 0.3, 0.2]
    obs = value_observations(accs, "main/accuracy")
    trigger = EarlyStoppingTrigger(
        check_trigger=(1, "iteration"), monitor="main/accuracy", patience=2
    )
    # best 0.5 at iteration 2; 0.4 (count 1), 0.3 (count 2: stop), 0.2 (count 3: stop)
    assert firing(trigger, 5, observations=obs) == [4, 5]


def test_early_stopping_check_period_uses_mean():
    # means over pairs: 4, 4.25, 2.25, 3.5, 0.55, 7.5 -> counts 0, 1, 0, 1, 0, 1
    obs = value_observations(LOSSES)
    trigger = EarlyStoppingTrigger(check_trigger=(2, "iteration"), patience=2)
    assert firing(trigger, len(LOSSES), observations=obs) == []
    assert trigger.best == pytest.approx(0.55)
    assert trigger.count == 1


def test_early_stopping_max_trigger():
    obs = value_observations([1.0] * 10)
    trigger = EarlyStoppingTrigger(check_trigger=(100, "iteration"), max_trigger=(4, "iteration"))
    assert firing(trigger, 4, observations=obs) == [4]
    assert trigger.get_training_length() == (4, "iteration")


def test_early_stopping_warns_when_monitor_missing():
    trigger = EarlyStoppingTrigger(check_trigger=(1, "iteration"))
    with pytest.warns(UserWarning, match="'main/loss' is not in the observation"):
        assert firing(trigger, 1, observations=[{}]) == []


def test_early_stopping_verbose(capsys):
    obs = value_observations([1.0, 2.0])
    trigger = EarlyStoppingTrigger(check_trigger=(1, "iteration"), patience=1, verbose=True)
    assert firing(trigger, 2, observations=obs) == [2]
    out = capsys.readouterr().out
    assert out == (
        "early stopping: operator is less\ncurrent count: 0\ncurrent count: 1\n"
        "Epoch 0: early stopping\n"
    )


@pytest.mark.parametrize("cut", [1, 2, 5, 9])
def test_early_stopping_resume(cut):
    obs = value_observations(LOSSES)
    make = lambda: EarlyStoppingTrigger(check_trigger=(2, "iteration"), patience=1)  # noqa: E731
    uninterrupted = firing(make(), len(LOSSES), observations=obs)
    assert uninterrupted == [4, 8, 12]
    first, trainer = make(), FakeTrainer()
    before = firing(first, cut, trainer, obs)
    second = make()
    roundtrip(first, second)
    assert (second.count, second.best) == (first.count, first.best)
    assert before + firing(second, len(LOSSES) - cut, trainer, obs[cut:]) == uninterrupted


test_early_stopping_bad_input = bad_input_test(
    [
        (
            (),
            {"mode": "maximum"},
            ValueError,
            "mode must be 'auto', 'max' or 'min', got 'maximum'",
        ),
        ((), {"patience": -1}, ValueError, "patience must be a non-negative int, got -1"),
        (
            (),
            {"patience": 5, "patients": 2},
            TypeError,
            "both patience=5 and its alias patients=2",
        ),
        ((), {"patient": 2}, TypeError, "unexpected keyword argument"),
        ((), {"check_trigger": (1, "epochs")}, ValueError, "got 'epochs'"),
    ],
    function=EarlyStoppingTrigger,
)


# -- OnceTrigger ----------------------------------------------------------------


def test_once_trigger():
    trigger = OnceTrigger()
    assert not trigger.finished
    assert firing(trigger, 4) == [1]
    assert trigger.finished


@pytest.mark.parametrize("call_on_resume, expected", [(False, []), (True, [3])])
def test_once_trigger_resume(call_on_resume, expected):
    first, trainer = OnceTrigger(), FakeTrainer()
    assert firing(first, 2, trainer) == [1]
    second = OnceTrigger(call_on_resume)
    roundtrip(first, second)
    assert second.finished is not call_on_resume
    assert firing(second, 3, trainer) == expected
    assert second.finished


# -- TimeTrigger ----------------------------------------------------------------


def time_firing(trigger, times, trainer=None):
    trainer = FakeTrainer() if trainer is None else trainer
    fired = []
    for t in times:
        trainer.elapsed_time = t
        if trigger(trainer):
            fired.append(t)
    return fired


def test_time_trigger():
    times = [0.5, 0.9, 1.1, 1.5, 2.0, 2.01, 5.0, 5.5, 6.5]
    # deadlines 1, 2, 3, 4, ...: one firing per call past the deadline
    assert time_firing(TimeTrigger(1.0), times) == [1.1, 2.01, 5.0, 5.5, 6.5]


def test_time_trigger_resume():
    times = [0.5, 1.1, 1.5, 2.2, 3.5, 3.7, 4.1]
    uninterrupted = time_firing(TimeTrigger(1.0), times)
    first = TimeTrigger(1.0)
    before = time_firing(first, times[:3])
    second = TimeTrigger(1.0)
    target = roundtrip(first, second)
    assert float(target["next_time"]) == 2.0
    assert before + time_firing(second, times[3:]) == uninterrupted


test_time_trigger_bad_input = bad_input_test(
    [((0,), ValueError, "TimeTrigger: period must be a positive number, got 0")],
    function=TimeTrigger,
)
