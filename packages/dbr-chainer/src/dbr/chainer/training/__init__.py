"""``chainer.training``: dbr.training's Trainer, updaters, triggers and extensions.

``chainer.training.extensions``, ``.triggers``, ``.updaters``, ``.extension``,
``.trainer``, ``.updater`` (Chainer's old name of ``.updaters``) and ``.util``
are modules here too, so ``import dbr.chainer.training.extensions`` works.
"""

import dbr.training as _target
import dbr.training.triggers as _triggers
from dbr.chainer._forward import forward
from dbr.chainer.training import extension as extension
from dbr.chainer.training import extensions as extensions
from dbr.chainer.training import trainer as trainer
from dbr.chainer.training import trigger as trigger
from dbr.chainer.training import triggers as triggers
from dbr.chainer.training import updater as updater
from dbr.chainer.training import updaters as updaters
from dbr.chainer.training import util as util

__getattr__, __dir__ = forward(globals(), _target, {"IntervalTrigger": _triggers})
__all__ = [
    *_target.__all__, "IntervalTrigger", "extension", "trainer", "trigger", "updater", "util",
]  # fmt: skip
