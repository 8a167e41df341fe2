"""Highway: the gated layer of Highway Networks."""

import dbr.functions as F
from dbr.core import Chain
from dbr.links.connection.linear import Linear


class Highway(Chain):
    """Highway layer: ``y = h(x W_H^T + b_H) * t + x * (1 - t)``, ``t = sigmoid(x W_T^T + b_T)``.

    The plain path ``h(...)`` and the transform gate ``t`` are two
    :class:`Linear` links from ``in_out_size`` to ``in_out_size``.

    Args:
        in_out_size (int): the size of each input and output sample.
        nobias (bool): if True, neither child link has a bias.
        activate (callable): the activation ``h`` of the plain path
            (default :func:`dbr.functions.relu`).
        init_Wh, init_bh: initializers of the plain path's ``W`` and ``b``
            (None: LeCunNormal and zeros).
        init_Wt, init_bt: initializers of the transform gate's ``W`` and
            ``b`` (None and -1 by default, so the gate starts mostly closed
            and the layer mostly carries ``x`` through).

    Attributes:
        activate (callable): as given.
        plain (Linear): the plain path.
        transform (Linear): the transform gate.

    >>> import numpy
    >>> Highway(3)(numpy.ones((2, 3), numpy.float32)).shape
    (2, 3)
    """

    def __init__(
        self,
        in_out_size,
        nobias=False,
        activate=F.relu,
        init_Wh=None,
        init_Wt=None,
        init_bh=None,
        init_bt=-1,
    ):
        super().__init__()
        self.activate = activate
        with self.init_scope():
            self.plain = Linear(
                in_out_size, in_out_size, nobias=nobias, initialW=init_Wh, initial_bias=init_bh
            )
            self.transform = Linear(
                in_out_size, in_out_size, nobias=nobias, initialW=init_Wt, initial_bias=init_bt
            )

    def forward(self, x):
        """Apply the layer to ``x`` of shape ``(n, in_out_size)``; the output has ``x``'s shape."""
        plain = self.activate(self.plain(x))
        gate = F.sigmoid(self.transform(x))
        return plain * gate + x * (1 - gate)
