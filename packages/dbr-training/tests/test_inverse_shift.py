"""Tests of inverse_shift: the value sequence against its formula, resume, bad input."""

import functools

import pytest

from dbr.training.extensions.inverse_shift import InverseShift


def _expected(init, gamma, power, t, target=None):
    value = init / (1.0 + gamma * t) ** power
    if target is not None:
        value = min(value, target) if power < 0 else max(value, target)
    return value


def test_defaults_of_the_extension(shift):
    ext = InverseShift("lr", 0.1, 0.75)
    shift.check_defaults(ext)


@pytest.mark.parametrize(
    "init, gamma, power, target",
    [
        (0.01, 1e-4, 0.75, None),
        (1.0, 0.5, 1.0, 0.3),
        (0.1, 0.2, -1.0, None),
        (0.1, 0.2, -2.0, 0.5),
    ],
)
def test_sequence_follows_the_formula(init, gamma, power, target, shift):
    ext = InverseShift("lr", gamma, power, init=init, target=target)
    shift.check_sequence(
        ext, functools.partial(_expected, init, gamma, power, target=target), init, 12
    )


@pytest.mark.parametrize("to_file", [False, True])
def test_resume_continues_the_same_sequence(to_file, tmp_path, shift):
    def make():
        return InverseShift("lr", 0.3, 0.5, target=0.25)

    formula = functools.partial(_expected, 0.5, 0.3, 0.5, target=0.25)
    tail = shift.check_resumed(make, formula, 16, 9, tmp_path if to_file else None)
    assert tail[-1] == 0.25


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"InverseShift: expected gamma >= 0, got -0\.1"):
        InverseShift("lr", -0.1, 0.75)
    with pytest.raises(TypeError, match="InverseShift: expected power to be a real number"):
        InverseShift("lr", 0.1, None)
