"""``chainer.distributions``: ``dbr.functions.distributions``'s names, the same objects.

It is a package like Chainer's: ``dbr.chainer.distributions.normal`` is
``dbr.functions.distributions.normal`` (see :func:`dbr.chainer._forward.mirror_submodules`).
``utils`` holds Chainer's helper ``_modified_xlogx``.
"""

import dbr.functions.distributions as _target
from dbr.chainer._forward import forward, mirror_submodules

__getattr__, __dir__ = forward(globals(), _target)
_own_path = __path__
mirror_submodules(globals(), "dbr.functions.distributions")
# ``utils`` is this package's own file: the mirror finder answers first for dbr's
# modules and leaves the others to the path searched here.
__path__ = _own_path

from dbr.chainer.distributions import utils as utils  # noqa: E402
