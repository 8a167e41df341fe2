"""Tests of polynomial_shift: the value sequence against its formula, resume, bad input."""

import functools

import pytest

from dbr.training.extensions.polynomial_shift import PolynomialShift


def _expected(init, rate, max_count, t, target=None):
    value = init * max(1.0 - t / max_count, 0.0) ** rate
    if target is not None:
        value = max(value, target) if rate > 0 else min(value, target)
    return value


def test_defaults_of_the_extension(shift):
    ext = PolynomialShift("lr", 0.9, 10)
    shift.check_defaults(ext)


@pytest.mark.parametrize(
    "init, rate, max_count, target",
    [(1.0, 0.9, 10, None), (0.5, 2.0, 8, 0.05), (0.1, 1.0, 5, None), (0.2, 0.5, 6, 0.01)],
)
def test_sequence_follows_the_formula(init, rate, max_count, target, shift):
    ext = PolynomialShift("lr", rate, max_count, init=init, target=target)
    formula = functools.partial(_expected, init, rate, max_count, target=target)
    got = shift.check_sequence(ext, formula, init, 12, abs=1e-15)
    assert got[-1] == (0.0 if target is None else target)


def test_init_none_reads_the_optimizer_attribute(shift):
    ext = PolynomialShift("lr", 1.0, 4)
    trainer, initial = shift.start(ext, lr=0.8)
    assert initial == 0.8
    assert shift.run(ext, trainer, 4) == pytest.approx([0.6, 0.4, 0.2, 0.0])


def test_negative_rate_grows_to_the_target(shift):
    ext = PolynomialShift("lr", -1.0, 4, init=0.1, target=0.3)
    trainer, _ = shift.start(ext)
    # 0.1 / (1 - t/4): 0.1333, 0.2, 0.4 -> 0.3, then infinite -> 0.3
    assert shift.run(ext, trainer, 5) == pytest.approx([0.1 / 0.75, 0.2, 0.3, 0.3, 0.3])


@pytest.mark.parametrize("to_file", [False, True])
def test_resume_continues_the_same_sequence(to_file, tmp_path, shift):
    def make():
        return PolynomialShift("lr", 0.9, 12)

    formula = functools.partial(_expected, 0.5, 0.9, 12)
    shift.check_resumed(make, formula, 14, 4, tmp_path if to_file else None, abs=1e-15)


def test_bad_arguments():
    with pytest.raises(ValueError, match="PolynomialShift: expected max_count >= 1, got 0"):
        PolynomialShift("lr", 0.9, 0)
    with pytest.raises(TypeError, match="PolynomialShift: expected max_count to be an int"):
        PolynomialShift("lr", 0.9, 1.5)
    with pytest.raises(TypeError, match="PolynomialShift: expected rate to be a real number"):
        PolynomialShift("lr", "0.9", 10)
