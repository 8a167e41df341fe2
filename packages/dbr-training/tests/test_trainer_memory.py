"""The Trainer keeps freed array memory in the process when a run starts (dbr.core.memory)."""

import pytest

from dbr.core import memory
from dbr.training.trainer import Trainer


class CountingUpdater:
    """An updater with no optimizer whose update only counts iterations."""

    iteration = 0

    def connect_trainer(self, trainer):
        pass

    def get_all_optimizers(self):
        return {}

    def update(self):
        self.iteration += 1

    def finalize(self):
        pass


def _two_iteration_trainer(tmp_path):
    return Trainer(CountingUpdater(), (2, "iteration"), out=str(tmp_path))


def test_a_run_keeps_freed_memory_before_its_first_iteration(monkeypatch, tmp_path):
    trainer = _two_iteration_trainer(tmp_path)
    calls = []
    monkeypatch.setattr(
        memory, "keep_freed_memory", lambda: calls.append(trainer.updater.iteration)
    )
    trainer.run()
    assert calls == [0] and trainer.updater.iteration == 2


def test_a_run_respects_the_variable_at_0(monkeypatch, tmp_path):
    monkeypatch.setenv(memory.ENVIRONMENT_VARIABLE, "0")
    results = []
    keep = memory.keep_freed_memory
    monkeypatch.setattr(memory, "keep_freed_memory", lambda: results.append(keep()))
    _two_iteration_trainer(tmp_path).run()
    assert results == [False]


def test_a_bad_setting_stops_the_run_before_any_iteration(monkeypatch, tmp_path):
    monkeypatch.setenv(memory.ENVIRONMENT_VARIABLE, "yes")
    trainer = _two_iteration_trainer(tmp_path)
    with pytest.raises(ValueError, match="DBR_KEEP_FREED_MEMORY"):
        trainer.run()
    assert trainer.updater.iteration == 0
