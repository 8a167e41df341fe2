"""``chainer.training.updater``: Chainer's old module of the updaters (dbr.training.updaters)."""

import dbr.training.updaters as _target
from dbr.chainer._forward import forward
from dbr.training.updaters import ParallelUpdater, StandardUpdater, Updater

__getattr__, __dir__ = forward(globals(), _target)
__all__ = ["ParallelUpdater", "StandardUpdater", "Updater"]
