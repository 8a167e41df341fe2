"""``chainer.distribution``: ``dbr.functions.distributions.distribution``'s names.

``Distribution``, ``kl_divergence``, ``cross_entropy`` and ``register_kl``, the same objects.
"""

import dbr.functions.distributions.distribution as _target
from dbr.chainer._forward import forward

__getattr__, __dir__ = forward(globals(), _target)
