"""dbr.training: optimizers, optimizer hooks, updaters, Trainer, triggers and extensions.

Chainer v7's ``chainer.optimizer``, ``chainer.optimizers``,
``chainer.optimizer_hooks`` and ``chainer.training`` under one namespace::

    from dbr.training import Trainer, StandardUpdater, optimizers, extensions
"""

from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

from dbr.core.utils import missing_attribute as _missing_attribute
from dbr.training import extensions, optimizer_hooks, optimizers, triggers, updaters
from dbr.training.extension import (
    PRIORITY_EDITOR,
    PRIORITY_READER,
    PRIORITY_WRITER,
    Extension,
    make_extension,
)
from dbr.training.optimizer import (
    GradientMethod,
    Hyperparameter,
    HyperparameterProxy,
    Optimizer,
    UpdateRule,
)
from dbr.training.trainer import Trainer
from dbr.training.triggers import get_trigger
from dbr.training.updaters import (
    MultiprocessParallelUpdater,
    ParallelUpdater,
    StandardUpdater,
    Updater,
)

try:
    __version__ = _version("dbr-training")
except _PackageNotFoundError:
    __version__ = "0.0.0+source"

__all__ = [
    "PRIORITY_EDITOR",
    "PRIORITY_READER",
    "PRIORITY_WRITER",
    "Extension",
    "GradientMethod",
    "Hyperparameter",
    "HyperparameterProxy",
    "MultiprocessParallelUpdater",
    "Optimizer",
    "ParallelUpdater",
    "StandardUpdater",
    "Trainer",
    "UpdateRule",
    "Updater",
    "extensions",
    "get_trigger",
    "make_extension",
    "optimizer_hooks",
    "optimizers",
    "triggers",
    "updaters",
]


def __getattr__(name):
    raise _missing_attribute(__name__, name, __all__)
