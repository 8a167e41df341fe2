"""Tests of warmup_shift: the value sequence against its formula, resume, bad input."""

import pytest

from dbr.core.serializers import DictionarySerializer
from dbr.training.extensions.warmup_shift import WarmupShift


def _expected(start, end, n, t):
    if t >= n:
        return end
    return start + (end - start) * t / n


def test_defaults_of_the_extension(shift):
    ext = WarmupShift("lr", 0.0, 5, 0.1)
    shift.check_defaults(ext)


@pytest.mark.parametrize("start, n, end", [(0.0, 5, 0.1), (0.01, 4, 1.0), (1.0, 3, 0.5)])
def test_sequence_follows_the_formula(start, n, end, shift):
    ext = WarmupShift("lr", start, n, end)
    got = shift.sequence(ext, start, n + 3, lr=7.0)
    expected = [_expected(start, end, n, t) for t in range(1, n + 4)]
    assert got == pytest.approx(expected, rel=1e-12)
    assert got[n - 1] == end


def test_leaves_the_attribute_alone_after_the_warm_up(shift):
    ext = WarmupShift("lr", 0.0, 2, 0.4)
    trainer, _ = shift.start(ext)
    shift.run(ext, trainer, 2)
    trainer.updater.optimizer.lr = 0.123  # another schedule took over
    shift.run(ext, trainer, 3)
    assert trainer.updater.optimizer.lr == 0.123


def test_init_none_reads_the_optimizer_attribute(shift):
    ext = WarmupShift("lr", 0.0, 4)
    trainer, initial = shift.start(ext, lr=0.8)
    assert initial == 0.0
    assert shift.run(ext, trainer, 5) == pytest.approx([0.2, 0.4, 0.6, 0.8, 0.8])


def test_warmup_start_none_reads_the_optimizer_attribute(shift):
    ext = WarmupShift("lr", None, 2, 1.0)
    trainer, initial = shift.start(ext, lr=0.2)
    assert initial == 0.2
    assert shift.run(ext, trainer, 2) == pytest.approx([0.6, 1.0])


@pytest.mark.parametrize("to_file", [False, True])
def test_resume_continues_the_same_sequence(to_file, tmp_path, shift):
    def make():
        return WarmupShift("lr", 0.05, 10, 0.5)

    head, restored, tail = shift.resumed(
        make, 13, 4, lr=9.0, tmp_path=tmp_path if to_file else None
    )
    expected = [0.05] + [_expected(0.05, 0.5, 10, t) for t in range(1, 14)]
    assert head == pytest.approx(expected[:5], rel=1e-12)
    assert restored == pytest.approx(expected[4], rel=1e-12)
    assert tail == pytest.approx(expected[5:], rel=1e-12)


def test_serialize_keys_match_chainer(shift):
    ext = WarmupShift("lr", 0.0, 3, 1.0)
    trainer, _ = shift.start(ext)
    shift.run(ext, trainer, 2)
    target = {}
    ext.serialize(DictionarySerializer(target))
    assert set(target) == {"_t"}
    assert int(target["_t"]) == 2


def test_bad_arguments():
    with pytest.raises(ValueError, match="WarmupShift: expected warmup_iter >= 0, got -1"):
        WarmupShift("lr", 0.0, -1, 0.1)
    with pytest.raises(TypeError, match="WarmupShift: expected warmup_iter to be an int"):
        WarmupShift("lr", 0.0, 2.0, 0.1)
