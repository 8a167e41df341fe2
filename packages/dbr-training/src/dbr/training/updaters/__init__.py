"""Updaters: the objects that advance training by one iteration."""

from dbr.training.updaters.multiprocess_parallel_updater import MultiprocessParallelUpdater
from dbr.training.updaters.parallel_updater import ParallelUpdater
from dbr.training.updaters.standard_updater import StandardUpdater
from dbr.training.updaters.updater import Updater

__all__ = ["MultiprocessParallelUpdater", "ParallelUpdater", "StandardUpdater", "Updater"]
