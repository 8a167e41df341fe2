"""Tests of multistep_shift: the value sequence against its formula, resume, bad input."""

import functools

import pytest

from dbr.core.serializers import DictionarySerializer
from dbr.training.extensions.multistep_shift import MultistepShift


def _expected(init, gamma, steps, t):
    passed = len([s for s in steps if t >= s])
    return init * gamma**passed


def test_defaults_of_the_extension(shift):
    ext = MultistepShift("lr", 0.1, (3, 6), 1.0)
    shift.check_defaults(ext)


@pytest.mark.parametrize(
    "init, gamma, steps", [(1.0, 0.1, (3, 6, 9)), (0.2, 0.5, [1, 2]), (0.1, 2.0, ())]
)
def test_sequence_follows_the_formula(init, gamma, steps, shift):
    ext = MultistepShift("lr", gamma, steps, init)
    shift.check_sequence(ext, functools.partial(_expected, init, gamma, steps), init, 12)


def test_chainer_documented_example(shift):
    # iterations 0..s1-1: x; s1..s2-1: x*y; s2..s3-1: x*y*y; after s3: x*y*y*y.
    ext = MultistepShift("lr", 0.5, (2, 4, 5), 8.0)
    trainer, initial = shift.start(ext)
    assert [initial] + shift.run(ext, trainer, 6) == [8.0, 8.0, 4.0, 4.0, 2.0, 1.0, 1.0]


def test_init_none_reads_the_optimizer_attribute(shift):
    ext = MultistepShift("lr", 0.1, (2,), None)
    trainer, initial = shift.start(ext, lr=0.3)
    assert initial == 0.3
    assert shift.run(ext, trainer, 3) == pytest.approx([0.3, 0.03, 0.03])


@pytest.mark.parametrize("to_file", [False, True])
def test_resume_continues_the_same_sequence(to_file, tmp_path, shift):
    def make():
        return MultistepShift("lr", 0.1, (3, 8, 12), None)

    formula = functools.partial(_expected, 0.5, 0.1, (3, 8, 12))
    shift.check_resumed(make, formula, 15, 5, tmp_path if to_file else None)


def test_serialize_keys_match_chainer(shift):
    ext = MultistepShift("lr", 0.1, (1, 2), 1.0)
    trainer, _ = shift.start(ext)
    shift.run(ext, trainer, 3)
    target = {}
    ext.serialize(DictionarySerializer(target))
    assert set(target) == {"_t", "_current_step", "_last_value"}
    assert int(target["_current_step"]) == 2


def test_bad_arguments():
    with pytest.raises(
        ValueError, match=r"MultistepShift: expected step_value in increasing order, got \(5, 2\)"
    ):
        MultistepShift("lr", 0.1, (5, 2), 1.0)
    with pytest.raises(
        TypeError, match="MultistepShift: expected step_value to be a sequence of ints"
    ):
        MultistepShift("lr", 0.1, 5, 1.0)
    with pytest.raises(
        TypeError, match="MultistepShift: expected init to be a real number or None"
    ):
        MultistepShift("lr", 0.1, (5,), "x")
