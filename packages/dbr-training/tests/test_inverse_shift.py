"""Tests of inverse_shift: the value sequence against its formula, resume, bad input."""

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
    got = shift.sequence(ext, init, 12)
    expected = [_expected(init, gamma, power, t, target) for t in range(1, 13)]
    assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("to_file", [False, True])
def test_resume_continues_the_same_sequence(to_file, tmp_path, shift):
    def make():
        return InverseShift("lr", 0.3, 0.5, target=0.25)

    head, restored, tail = shift.resumed(make, 16, 9, tmp_path=tmp_path if to_file else None)
    expected = [_expected(0.5, 0.3, 0.5, t, 0.25) for t in range(17)]
    assert head == pytest.approx(expected[:10], rel=1e-12)
    assert restored == pytest.approx(expected[9], rel=1e-12)
    assert tail == pytest.approx(expected[10:], rel=1e-12)
    assert tail[-1] == 0.25


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"InverseShift: expected gamma >= 0, got -0\.1"):
        InverseShift("lr", -0.1, 0.75)
    with pytest.raises(TypeError, match="InverseShift: expected power to be a real number"):
        InverseShift("lr", 0.1, None)
