"""``chainer.distributions``: ``dbr.functions.distributions``'s names, the same objects.

``utils`` holds Chainer's helper ``_modified_xlogx``.
"""

import dbr.functions.distributions as _target
from dbr.chainer._forward import forward
from dbr.chainer.distributions import utils as utils

__getattr__, __dir__ = forward(globals(), _target)
