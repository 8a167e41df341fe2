"""Tests of step_shift: the value sequence against its formula, resume, bad input."""

import functools
import math

import pytest

from dbr.training.extensions.step_shift import StepShift


def _expected(init, gamma, step, t, target=None):
    value = init * gamma ** math.floor(t / step)
    if target is not None:
        value = min(value, target) if gamma > 1 else max(value, target)
    return value


def test_defaults_of_the_extension(shift):
    ext = StepShift("lr", 0.1, 3)
    shift.check_defaults(ext)


@pytest.mark.parametrize(
    "init, gamma, step, target",
    [(1.0, 0.1, 3, None), (1.0, 0.5, 2, 0.2), (0.01, 2.0, 4, None), (0.01, 3.0, 1, 0.5)],
)
def test_sequence_follows_the_formula(init, gamma, step, target, shift):
    ext = StepShift("lr", gamma, step, init=init, target=target)
    shift.check_sequence(
        ext, functools.partial(_expected, init, gamma, step, target=target), init, 13
    )


def test_init_none_reads_the_optimizer_attribute(shift):
    ext = StepShift("lr", 0.5, 2)
    trainer, initial = shift.start(ext, lr=0.4)
    assert initial == 0.4
    assert shift.run(ext, trainer, 4) == pytest.approx([0.4, 0.2, 0.2, 0.1])


@pytest.mark.parametrize("to_file", [False, True])
def test_resume_continues_the_same_sequence(to_file, tmp_path, shift):
    def make():
        return StepShift("lr", 0.5, 3, target=0.05)

    formula = functools.partial(_expected, 0.5, 0.5, 3, target=0.05)
    shift.check_resumed(make, formula, 20, 7, tmp_path if to_file else None)


def test_bad_arguments():
    with pytest.raises(ValueError, match="StepShift: expected step >= 1, got 0"):
        StepShift("lr", 0.1, 0)
    with pytest.raises(TypeError, match="StepShift: expected step to be an int, got 2.5"):
        StepShift("lr", 0.1, 2.5)
    with pytest.raises(TypeError, match="StepShift: expected gamma to be a real number"):
        StepShift("lr", None, 2)
