"""Tests of linear_shift: the value sequence against its formula, resume, bad input."""

import pytest

from dbr.training.extensions.linear_shift import LinearShift


def _expected(v1, v2, t1, t2, t):
    if t <= t1:
        return v1
    if t >= t2:
        return v2
    return v1 + (v2 - v1) * (t - t1) / (t2 - t1)


def test_defaults_of_the_extension(shift):
    ext = LinearShift("lr", (0.0, 1.0), (0, 10))
    shift.check_defaults(ext)


@pytest.mark.parametrize(
    "values, times", [((0.0, 1.0), (2, 8)), ((0.9, 0.1), (0, 5)), ((1.0, 3.0), (3, 3))]
)
def test_sequence_follows_the_formula(values, times, shift):
    ext = LinearShift("lr", values, times)
    got = shift.sequence(ext, values[0], 12, lr=123.0)
    expected = [_expected(*values, *times, t) for t in range(1, 13)]
    assert got == pytest.approx(expected, rel=1e-12)
    assert got[-1] == values[1]


def test_momentum_warm_up_on_an_explicit_optimizer(shift):
    opt = shift.Optimizer()
    opt.momentum = 0.0
    ext = LinearShift("momentum", (0.5, 0.9), (0, 4), optimizer=opt)
    trainer = shift.Trainer(shift.Optimizer())
    ext.initialize(trainer)
    assert opt.momentum == 0.5
    assert shift.run(ext, trainer, 5, attr="lr") == [0.5] * 5
    assert opt.momentum == pytest.approx(0.9)


@pytest.mark.parametrize("to_file", [False, True])
def test_resume_continues_the_same_sequence(to_file, tmp_path, shift):
    def make():
        return LinearShift("lr", (0.1, 0.7), (2, 10))

    head, restored, tail = shift.resumed(make, 14, 5, tmp_path=tmp_path if to_file else None)
    expected = [_expected(0.1, 0.7, 2, 10, t) for t in range(15)]
    assert head == pytest.approx(expected[:6], rel=1e-12)
    assert restored == pytest.approx(expected[5], rel=1e-12)
    assert tail == pytest.approx(expected[6:], rel=1e-12)


def test_bad_arguments():
    with pytest.raises(TypeError, match="LinearShift: expected value_range to be a pair"):
        LinearShift("lr", (1.0,), (0, 1))
    with pytest.raises(TypeError, match="LinearShift: expected time_range to be a pair"):
        LinearShift("lr", (1.0, 2.0), 5)
    with pytest.raises(
        ValueError, match=r"LinearShift: expected time_range .* t1 <= t2, got \(5, 2\)"
    ):
        LinearShift("lr", (1.0, 2.0), (5, 2))
